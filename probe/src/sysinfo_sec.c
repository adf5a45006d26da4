/* sysinfo_sec.c - what sits on the system call path without a kernel
 * change: the probe's own seccomp filters, lockdown, the LSMs, loaded BPF
 * programs and active tracers. See sysinfo_int.h and docs/schema.md.
 *
 * Nothing here mounts a file system or changes a setting: securityfs and
 * tracefs are read where /proc/self/mounts lists them, else the fields are
 * null with the reason (null_reasons). Every read is bounded (size, count,
 * time). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* cpu_set_t, fmemopen, strnlen; CMake defines it too */
#endif
#include "sysinfo_int.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define WHY_LEN (PATH_LEN * 2) /* a reason naming a path */

/* ------------------------------------------------------------------------ */
/* seccomp: the probe's own, as /proc/self/status shows it                  */

/* "Name:\tvalue" of /proc/self/status as an integer: 1 found, 0 no such
 * line, -1 unreadable. */
static int status_int(const char *name, long long *v)
{
	FILE *f = fopen("/proc/self/status", "re");
	if (!f)
		return -1;
	char line[SMALL];
	bool cut;
	int found = 0;
	size_t k = strlen(name);
	while (!found && si_read_line(f, line, sizeof(line), &cut))
		if (!cut && strncmp(line, name, k) == 0 && line[k] == ':')
			found = si_parse_ll(line + k + 1, v) ? 1 : -1;
	fclose(f);
	return found;
}

static void w_status_int(struct osm_json *j, const char *key, const char *name, const char *absent)
{
	long long v = 0;
	int r = status_int(name, &v);
	char why[WHY_LEN];
	if (r == 1) {
		osm_json_int(j, key, v);
		return;
	}
	if (r == 0)
		snprintf(why, sizeof(why), "no %s line in /proc/self/status (%s)", name, absent);
	else
		snprintf(why, sizeof(why), "cannot read %s in /proc/self/status", name);
	si_null(j, key, why);
}

void si_w_seccomp_mode(struct osm_json *j, const char *key)
{
	w_status_int(j, key, "Seccomp", "a kernel without CONFIG_SECCOMP");
}

void si_w_seccomp_filters(struct osm_json *j, const char *key)
{
	w_status_int(j, key, "Seccomp_filters", "kernels before 5.9, or without CONFIG_SECCOMP_FILTER");
}

/* ------------------------------------------------------------------------ */
/* securityfs: lockdown and the LSMs                                        */

static bool securityfs_file(const char *name, char *path, size_t len, char *why, size_t wlen)
{
	char dir[PATH_LEN];
	if (!si_mount_point("securityfs", dir, sizeof(dir))) {
		snprintf(why, wlen, "securityfs is not mounted (/proc/self/mounts); the probe does not mount it");
		return false;
	}
	if (!si_pathf(path, len, "%s/%s", dir, name)) {
		snprintf(why, wlen, "securityfs's path is too long");
		return false;
	}
	return true;
}

/* The active LSMs, "lockdown,capability,landlock,bpf"; false with why. */
static bool lsm_list(char *out, size_t len, char *why, size_t wlen)
{
	char path[PATH_LEN];
	if (!securityfs_file("lsm", path, sizeof(path), why, wlen))
		return false;
	if (si_read_file_trim(path, out, len))
		return true;
	snprintf(why, wlen, "cannot read %s: %s", path, strerror(errno));
	return false;
}

void si_w_lsms(struct osm_json *j, const char *key)
{
	char buf[MEDIUM], why[WHY_LEN];
	if (!lsm_list(buf, sizeof(buf), why, sizeof(why))) {
		si_null(j, key, why);
		return;
	}
	for (char *p = buf; *p; p++)
		if (*p == ',')
			*p = ' ';
	si_json_words(j, key, buf, false);
}

/* "none [integrity] confidentiality" -> integrity. Without the lockdown LSM
 * (absent from the LSM list, so no lockdown file) nothing is locked down:
 * "none". */
void si_w_lockdown(struct osm_json *j, const char *key)
{
	char path[PATH_LEN], buf[SMALL], list[MEDIUM], why[WHY_LEN];
	if (!securityfs_file("lockdown", path, sizeof(path), why, sizeof(why))) {
		si_null(j, key, why);
	} else if (si_read_bracketed_choice(path, buf, sizeof(buf))) {
		osm_json_str(j, key, buf);
	} else if (access(path, F_OK) != 0 && lsm_list(list, sizeof(list), why, sizeof(why))) {
		char padded[MEDIUM + 2];
		snprintf(padded, sizeof(padded), ",%s,", list);
		if (strstr(padded, ",lockdown,"))
			si_null(j, key, "the lockdown LSM is active but its securityfs file is absent");
		else
			osm_json_str(j, key, "none");
	} else {
		snprintf(why, sizeof(why), "cannot read %s", path);
		si_null(j, key, why);
	}
}

/* ------------------------------------------------------------------------ */
/* BPF programs                                                             */

#define OSM_BPF_PROG_GET_NEXT_ID 11
#define OSM_BPF_PROG_GET_FD_BY_ID 13
#define OSM_BPF_OBJ_GET_INFO_BY_FD 15
#define BPF_MAX_PROGS 100000
#define BPF_WAIT_MS 500
#define BPF_TYPES 64

/* The members of union bpf_attr (linux/bpf.h) these commands use. */
union osm_bpf_attr {
	struct {
		uint32_t start_id, next_id, open_flags;
	} id;
	struct {
		uint32_t bpf_fd, info_len;
		uint64_t info;
	} info;
};

/* enum bpf_prog_type (linux/bpf.h), a stable ABI. */
static const char *const bpf_type_names[] = {
	"unspec", "socket_filter", "kprobe", "sched_cls", "sched_act", "tracepoint", "xdp", "perf_event",
	"cgroup_skb", "cgroup_sock", "lwt_in", "lwt_out", "lwt_xmit", "sock_ops", "sk_skb", "cgroup_device",
	"sk_msg", "raw_tracepoint", "cgroup_sock_addr", "lwt_seg6local", "lirc_mode2", "sk_reuseport",
	"flow_dissector", "cgroup_sysctl", "raw_tracepoint_writable", "cgroup_sockopt", "tracing",
	"struct_ops", "ext", "lsm", "sk_lookup", "syscall", "netfilter",
};

static long sys_bpf(int cmd, union osm_bpf_attr *a)
{
#if defined(SYS_bpf)
	return syscall(SYS_bpf, cmd, a, sizeof(*a));
#else
	(void)cmd;
	(void)a;
	errno = ENOSYS;
	return -1;
#endif
}

struct bpf_count {
	long long n;
	long long by_type[BPF_TYPES + 1]; /* the last: types past the table */
	int type_err;                      /* errno of the first failed type lookup */
};

/* One program's type into c, by a short-lived descriptor of it; false when
 * it went away meanwhile. */
static bool bpf_type(uint32_t id, struct bpf_count *c)
{
	union osm_bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.id.start_id = id; /* prog_id */
	long fd = sys_bpf(OSM_BPF_PROG_GET_FD_BY_ID, &a);
	if (fd < 0) {
		if (errno == ENOENT)
			return false;
		c->type_err = c->type_err ? c->type_err : errno;
		return true;
	}
	uint32_t info[2] = {0, 0}; /* struct bpf_prog_info: type, id */
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = (uint32_t)fd;
	a.info.info_len = sizeof(info);
	a.info.info = (uint64_t)(uintptr_t)info;
	if (sys_bpf(OSM_BPF_OBJ_GET_INFO_BY_FD, &a) == 0)
		c->by_type[info[0] < BPF_TYPES ? info[0] : BPF_TYPES]++;
	else
		c->type_err = c->type_err ? c->type_err : errno;
	close((int)fd);
	return true;
}

/* The loaded BPF programs (with their types when `types`): 0 or -errno. */
static int bpf_count(struct bpf_count *c, bool types)
{
	memset(c, 0, sizeof(*c));
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	union osm_bpf_attr a;
	for (uint32_t id = 0;;) {
		memset(&a, 0, sizeof(a));
		a.id.start_id = id;
		if (sys_bpf(OSM_BPF_PROG_GET_NEXT_ID, &a) != 0)
			return errno == ENOENT ? 0 : -errno;
		id = a.id.next_id;
		if (!types || bpf_type(id, c))
			c->n++;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (c->n > BPF_MAX_PROGS ||
		    (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 > BPF_WAIT_MS)
			return -E2BIG;
	}
}

static void bpf_why(int err, char *why, size_t len)
{
	switch (-err) {
	case EPERM:
		snprintf(why, len, "BPF_PROG_GET_NEXT_ID refused (EPERM): it needs CAP_SYS_ADMIN (root)");
		break;
	case ENOSYS:
		snprintf(why, len, "no bpf() system call (CONFIG_BPF_SYSCALL off, or a seccomp filter refuses it)");
		break;
	case EINVAL:
		snprintf(why, len, "the kernel cannot list BPF programs (BPF_PROG_GET_NEXT_ID came in 4.13)");
		break;
	case E2BIG:
		snprintf(why, len, "more than %d programs, or longer than %d ms to list: not counted",
			 BPF_MAX_PROGS, BPF_WAIT_MS);
		break;
	default:
		snprintf(why, len, "BPF_PROG_GET_NEXT_ID failed: %s", strerror(-err));
	}
}

void si_w_bpf_programs(struct osm_json *j, const char *key)
{
	struct bpf_count c;
	char why[WHY_LEN];
	int rc = bpf_count(&c, false);
	if (rc == 0) {
		osm_json_int(j, key, c.n);
	} else {
		bpf_why(rc, why, sizeof(why));
		si_null(j, key, why);
	}
}

void si_w_bpf_program_types(struct osm_json *j, const char *key)
{
	struct bpf_count c;
	char why[WHY_LEN];
	int rc = bpf_count(&c, true);
	if (rc != 0 || c.type_err) {
		if (rc)
			bpf_why(rc, why, sizeof(why));
		else
			snprintf(why, sizeof(why), "a program's type could not be read: %s", strerror(c.type_err));
		si_null(j, key, why);
		return;
	}
	osm_json_obj_begin(j, key);
	for (size_t i = 0; i < BPF_TYPES; i++) {
		char name[NAME_LEN];
		if (!c.by_type[i])
			continue;
		if (i < ARRAY_SIZE(bpf_type_names))
			si_copy_str(name, sizeof(name), bpf_type_names[i]);
		else
			snprintf(name, sizeof(name), "type_%zu", i);
		osm_json_int(j, name, c.by_type[i]);
	}
	if (c.by_type[BPF_TYPES])
		osm_json_int(j, "other", c.by_type[BPF_TYPES]);
	osm_json_obj_end(j);
}

/* ------------------------------------------------------------------------ */
/* Tracers                                                                  */

#define TRACE_FILE_CAP (8u << 20) /* a listing read at most: 8 MiB */
#define MAX_INSTANCES 10000

static void trace_lines(struct osm_json *j, const char *key, const char *dir, const char *name)
{
	char path[PATH_LEN];
	long long n = 0;
	bool ok = si_pathf(path, sizeof(path), "%s/%s", dir, name) && si_count_lines(path, TRACE_FILE_CAP, &n);
	si_json_int_or_null(j, key, ok, n);
}

static void trace_instances(struct osm_json *j, const char *key, const char *dir)
{
	char path[PATH_LEN];
	DIR *d = si_pathf(path, sizeof(path), "%s/instances", dir) ? opendir(path) : NULL;
	if (!d) {
		osm_json_null(j, key);
		return;
	}
	long long n = 0;
	struct dirent *e;
	while (n <= MAX_INSTANCES && (e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	si_json_int_or_null(j, key, n <= MAX_INSTANCES, n);
}

void si_w_tracing(struct osm_json *j, const char *key)
{
	char dir[PATH_LEN], path[PATH_LEN], tracer[SMALL], why[WHY_LEN];
	long long on = 0;
	if (!si_mount_point("tracefs", dir, sizeof(dir))) {
		si_null(j, key, "tracefs is not mounted (/proc/self/mounts); the probe does not mount it");
		return;
	}
	bool have_tracer = si_pathf(path, sizeof(path), "%s/current_tracer", dir) &&
			   si_read_file_trim(path, tracer, sizeof(tracer));
	bool have_on = si_pathf(path, sizeof(path), "%s/tracing_on", dir) && si_read_int(path, &on);
	if (!have_tracer && !have_on) {
		snprintf(why, sizeof(why), "cannot read %s/current_tracer or tracing_on (tracefs is root's)", dir);
		si_null(j, key, why);
		return;
	}
	osm_json_obj_begin(j, key);
	osm_json_str(j, "path", dir);
	osm_json_str(j, "current_tracer", have_tracer ? tracer : NULL);
	if (have_on)
		osm_json_bool(j, "tracing_on", on != 0);
	else
		osm_json_null(j, "tracing_on");
	trace_lines(j, "kprobe_events", dir, "kprobe_events");
	trace_lines(j, "uprobe_events", dir, "uprobe_events");
	trace_lines(j, "enabled_events", dir, "set_event");
	trace_lines(j, "ftrace_functions", dir, "enabled_functions");
	trace_instances(j, "instances", dir);
	osm_json_obj_end(j);
}
