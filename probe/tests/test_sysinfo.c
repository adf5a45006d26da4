/* test_sysinfo.c - the machine description: valid JSON, every field present
 * with key/value/help, the three outputs agree, known fields filled on Linux.
 * TAP output; exits non-zero on any failure. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "emit.h"
#include "sysinfo.h"
#include "sysinfo_int.h"

static int n_tests, n_failed;

static void ok(bool cond, const char *what)
{
	n_tests++;
	if (!cond)
		n_failed++;
	printf("%sok %d - %s\n", cond ? "" : "not ", n_tests, what);
}

/* The documented fields (docs/schema.md). A field added to sysinfo.c's table
 * without being added here still passes; one removed or renamed fails. */
static const char *const keys[] = {
	"hostname", "machine_id", "os", "kernel_release", "kernel_version", "arch", "kernel_cmdline",
	"preemption", "preemption_source", "realtime", "kernel_hz", "cpu_model", "cpu_vendor", "board", "cpu_flags",
	"cpus_online", "cpus_allowed", "sockets", "cores_per_socket", "threads_per_core",
	"smt_control", "isolated_cpus", "nohz_full_cpus", "caches", "numa_nodes",
	"cpufreq_driver", "cpufreq_governor", "cpu_max_mhz", "cpu_min_mhz", "cpu_boost",
	"cpuidle_driver", "memory_bytes", "memory_type", "cgroup_memory_limit_bytes",
	"cgroup_cpu_limit", "hugepage_size_bytes", "thp_enabled", "thp_defrag",
	"fault_around_bytes", "disks", "nics", "mitigations", "clocksource",
	"available_clocksources", "virtualization", "emulation", "container",
	"perf_event_paranoid", "aslr", "libc", "build_compiler", "build_flags", "build_type",
	"build_static", "build_arch",
	/* issue 29: what changes kernel costs without a kernel change */
	"cgroup_pids_limit", "cgroup_cpuset_cpus", "thp_shmem_enabled", "ksm_run", "numa_balancing",
	"zswap_enabled", "audit_enabled", "audit_rules", "audit_ever_enabled", "audit_ever_enabled_source",
	"seccomp_mode", "seccomp_filters", "lockdown", "lsms", "bpf_programs", "bpf_program_types",
	"tracing", "null_reasons",
};

/* ---- a minimal strict JSON validator ---- */
static const char *ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

static const char *value(const char *p, int depth);

static const char *string(const char *p)
{
	if (*p++ != '"')
		return NULL;
	while (*p != '"') {
		if ((unsigned char)*p < 0x20)
			return NULL; /* includes the NUL at the end */
		if (*p == '\\') {
			p++;
			if (*p == 'u') {
				for (int i = 1; i <= 4; i++)
					if (!isxdigit((unsigned char)p[i]))
						return NULL;
				p += 4;
			} else if (!strchr("\"\\/bfnrt", *p) || !*p) {
				return NULL;
			}
		}
		p++;
	}
	return p + 1;
}

static const char *number(const char *p)
{
	const char *s = p;
	if (*p == '-')
		p++;
	if (!isdigit((unsigned char)*p))
		return NULL;
	while (isdigit((unsigned char)*p))
		p++;
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return NULL;
		while (isdigit((unsigned char)*p))
			p++;
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!isdigit((unsigned char)*p))
			return NULL;
		while (isdigit((unsigned char)*p))
			p++;
	}
	return p > s ? p : NULL;
}

static const char *container(const char *p, int depth, bool obj)
{
	char close = obj ? '}' : ']';
	p = ws(p + 1);
	if (*p == close)
		return p + 1;
	for (;;) {
		if (obj) {
			if (!(p = string(p)))
				return NULL;
			p = ws(p);
			if (*p++ != ':')
				return NULL;
		}
		if (!(p = value(ws(p), depth + 1)))
			return NULL;
		p = ws(p);
		if (*p == close)
			return p + 1;
		if (*p++ != ',')
			return NULL;
		p = ws(p);
	}
}

static const char *value(const char *p, int depth)
{
	if (depth > 32)
		return NULL;
	switch (*p) {
	case '{': return container(p, depth, true);
	case '[': return container(p, depth, false);
	case '"': return string(p);
	case 't': return strncmp(p, "true", 4) ? NULL : p + 4;
	case 'f': return strncmp(p, "false", 5) ? NULL : p + 5;
	case 'n': return strncmp(p, "null", 4) ? NULL : p + 4;
	default: return number(p);
	}
}

static bool valid_json(const char *s)
{
	const char *p = value(ws(s), 0);
	return p && *ws(p) == '\0';
}

static size_t count(const char *s, const char *needle)
{
	size_t n = 0;
	for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* ---- capture ---- */
enum what { FIELDS, MACHINE, TEXT };

static char *capture(enum what w)
{
	static char bufs[3][1 << 18];
	char *buf = bufs[w];
	memset(buf, 0, sizeof(bufs[w]));
	FILE *f = fmemopen(buf, sizeof(bufs[w]) - 1, "w");
	if (!f)
		return NULL;
	struct osm_json j;
	osm_json_init(&j, f);
	if (w == TEXT) {
		osm_sysinfo_print_text(f);
	} else {
		osm_json_doc_begin(&j);
		osm_json_int(&j, "schema", OSM_SCHEMA_VERSION);
		if (w == FIELDS)
			osm_sysinfo_write_fields(&j);
		else
			osm_sysinfo_write_machine(&j, "machine");
		osm_json_doc_end(&j);
	}
	fclose(f);
	return buf;
}

/* The text after "<key>":  in the fields output, for this field's value. */
static const char *field_value(const char *fields, const char *key)
{
	char pat[128];
	snprintf(pat, sizeof(pat), "{\"key\":\"%s\",\"value\":", key);
	const char *p = strstr(fields, pat);
	return p ? p + strlen(pat) : NULL;
}

/* ---- the readers behind realtime and kernel_hz, on files of known content ---- */

static bool write_file(const char *path, const char *content)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return false;
	bool ok = fputs(content, f) >= 0;
	return fclose(f) == 0 && ok;
}

static void test_readers(void)
{
	char dir[] = "/tmp/osm-test-sysinfo.XXXXXX";
	if (!mkdtemp(dir)) {
		ok(false, "temporary directory for the reader tests");
		return;
	}
	char path[256], missing[256];
	snprintf(path, sizeof(path), "%s/file", dir);
	snprintf(missing, sizeof(missing), "%s/absent", dir);

	static const struct {
		const char *content, *what;
		int want;
	} flags[] = {{"1\n", "1 and a newline", 1}, {"0\n", "0 and a newline", 0}, {"1", "1", 1},
		     {"2\n", "2", -1}, {"yes\n", "yes", -1}, {"", "nothing", -1}};
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		char msg[128];
		snprintf(msg, sizeof(msg), "si_flag_file of a file holding %s is %d", flags[i].what, flags[i].want);
		ok(write_file(path, flags[i].content) && si_flag_file(path) == flags[i].want, msg);
	}
	ok(si_flag_file(missing) == 0, "si_flag_file of a missing file is 0 (not a PREEMPT_RT kernel)");
	char below[300];
	snprintf(below, sizeof(below), "%s/realtime", path);
	ok(si_flag_file(below) == 0, "si_flag_file below a regular file (ENOTDIR) is 0");

	long long v = -1;
	ok(write_file(path, "#\n# Automatically generated file; DO NOT EDIT.\nCONFIG_NO_HZ_COMMON=y\n"
			    "CONFIG_HZ_250=y\nCONFIG_HZ_PERIODIC_X=1\nCONFIG_HZ=250\nCONFIG_HZ_1000=y\n") &&
	   si_config_int(path, "CONFIG_HZ", &v) && v == 250,
	   "si_config_int takes CONFIG_HZ=250, not CONFIG_HZ_250=y or CONFIG_NO_HZ_COMMON=y");
	ok(write_file(path, "CONFIG_HZ_1000=y\n# CONFIG_HZ is not set\n") && !si_config_int(path, "CONFIG_HZ", &v),
	   "si_config_int: a config without CONFIG_HZ= has none");
	/* HZ from /proc/timer_list: J = 2^32 - 300 HZ + HZ T (mod 2^32 on 32 bits). */
	static const struct {
		const char *content, *what;
		long long want; /* 0: cannot tell */
	} tl[] = {
		{"Timer List Version: v0.9\nHRTIMER_MAX_CLOCK_BASES: 8\nnow at 2660657323295 nsecs\n\ncpu: 0\n"
		 " clock 0:\njiffies: 4295557436\n", "HZ 250 at 44 min (read on a HZ=250 VM)", 250},
		{"now at 100000000000 nsecs\njiffies: 4294767296\n", "HZ 1000 before the wrap", 1000},
		{"now at 1000000000000 nsecs\njiffies: 70000\n", "HZ 100 on a 32-bit counter after the wrap", 100},
		{"now at 1000000000000 nsecs\njiffies: 4295037296\n", "HZ 100 on 64 bits", 100},
		{"now at 3600000000000 nsecs\njiffies: 4298267296\n", "HZ 1000 at an hour", 1000},
		{"now at 300000000000 nsecs\njiffies: 4294967296\n", "at 300 s every HZ fits", 0},
		{"now at 2606130507516 nsecs\n", "no jiffies line", 0},
		{"jiffies: 4295544397\n", "no now line", 0},
		{"now at 2606130507516 nsecs\njiffies: 123\n", "a jiffies no HZ explains", 0},
	};
	for (size_t i = 0; i < sizeof(tl) / sizeof(tl[0]); i++) {
		long long hz = 0;
		bool got = write_file(path, tl[i].content) && si_hz_from_timer_list(path, &hz);
		char msg[160];
		snprintf(msg, sizeof(msg), "si_hz_from_timer_list: %s -> %lld (got %s %lld)", tl[i].what, tl[i].want,
			 got ? "found" : "none", hz);
		ok(tl[i].want ? got && hz == tl[i].want : !got, msg);
	}
	ok(!si_hz_from_timer_list(missing, &v), "si_hz_from_timer_list of a missing file: none");
	ok(write_file(path, "CONFIG_HZ=y\n") && !si_config_int(path, "CONFIG_HZ", &v),
	   "si_config_int: a value that is not an integer is refused");
	ok(!si_config_int(missing, "CONFIG_HZ", &v), "si_config_int: a missing file has none");
	/* A line longer than the reader's buffer is skipped whole, and the key
	 * after it still found. */
	FILE *f = fopen(path, "w");
	bool wrote = f != NULL;
	if (f) {
		fputs("CONFIG_CMDLINE=\"", f);
		for (int i = 0; i < 10000; i++)
			fputc('x', f);
		fputs("CONFIG_HZ=1\"\nCONFIG_HZ=300\n", f);
		wrote = fclose(f) == 0;
	}
	ok(wrote && si_config_int(path, "CONFIG_HZ", &v) && v == 300, "si_config_int skips an over-long line whole");
	unlink(path);
	rmdir(dir);
}

/* machine_id: systemd's app-specific ID of the first file holding a machine
 * ID (the expected values are Python's hmac of the same bytes, and what
 * `systemd-id128 machine-id --app-specific=...` prints for that machine ID). */
static void test_machine_id(void)
{
	char dir[] = "/tmp/osm-test-machine-id.XXXXXX";
	if (!mkdtemp(dir)) {
		ok(false, "temporary directory for the machine-id tests");
		return;
	}
	char a[256], b[256], out[33] = "";
	snprintf(a, sizeof(a), "%s/machine-id", dir);
	snprintf(b, sizeof(b), "%s/dbus-machine-id", dir);
	const char *const files[] = {a, b};
	ok(write_file(a, "0123456789abcdef0123456789abcdef\n") && si_machine_app_id(files, 2, out) &&
	   strcmp(out, "03d70bf207ed4ae29a44e07edca97e51") == 0, "machine_id of /etc/machine-id, as systemd makes it");
	ok(write_file(a, "0123456789ABCDEF0123456789ABCDEF") && si_machine_app_id(files, 2, out) &&
	   strcmp(out, "03d70bf207ed4ae29a44e07edca97e51") == 0, "machine_id: upper-case digits, no newline: the same");
	static const struct {
		const char *content, *what;
	} bad[] = {{"", "nothing"}, {"uninitialized\n", "uninitialized (a first boot)"},
		   {"00000000000000000000000000000000\n", "zeros"}, {"0123456789abcdef0123456789abcde\n", "31 digits"},
		   {"0123456789abcdef0123456789abcdeg\n", "a g"}};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char msg[160];
		snprintf(msg, sizeof(msg), "machine_id: /etc/machine-id holding %s is passed over", bad[i].what);
		ok(write_file(a, bad[i].content) && !si_machine_app_id(files, 2, out), msg);
	}
	ok(write_file(b, "fedcba98765432100123456789abcdef\n") && si_machine_app_id(files, 2, out) &&
	   strcmp(out, "f04aa45e3a21485e94fab434460c6ce2") == 0, "machine_id: then /var/lib/dbus/machine-id");
	unlink(a);
	ok(si_machine_app_id(files, 2, out) && strcmp(out, "f04aa45e3a21485e94fab434460c6ce2") == 0,
	   "machine_id: /etc/machine-id missing, the dbus one");
	unlink(b);
	ok(!si_machine_app_id(files, 2, out), "machine_id: neither file: none (null)");
	rmdir(dir);
}

/* The readers behind the issue-29 fields: line counts, mount-table escapes,
 * the kernel log's audit records, and the reasons of null fields. */
static void test_state_readers(void)
{
	char dir[] = "/tmp/osm-test-sysinfo-state.XXXXXX";
	if (!mkdtemp(dir)) {
		ok(false, "temporary directory for the state reader tests");
		return;
	}
	char path[256];
	snprintf(path, sizeof(path), "%s/file", dir);
	static const struct {
		const char *content;
		long long want;
	} lines[] = {{"", 0}, {"a\n", 1}, {"a\nb\nc", 3}, {"p:kprobes/x do_sys_open\np:kprobes/y vfs_read\n", 2}};
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		long long n = -1;
		char msg[160];
		snprintf(msg, sizeof(msg), "si_count_lines: %lld line(s)", lines[i].want);
		ok(write_file(path, lines[i].content) && si_count_lines(path, 1 << 20, &n) && n == lines[i].want, msg);
	}
	long long n = -1;
	ok(write_file(path, "0123456789\n0123456789\n") && !si_count_lines(path, 12, &n),
	   "si_count_lines: a file longer than the cap is refused, not cut");
	unlink(path);
	ok(!si_count_lines(path, 1 << 20, &n), "si_count_lines: a missing file is refused");
	rmdir(dir);

	char m[] = "/mnt/a\\040b\\011c\\134d";
	si_unescape_mount(m);
	ok(strcmp(m, "/mnt/a b\tc\\d") == 0, "si_unescape_mount undoes \\040, \\011 and \\134");

	static const struct {
		const char *rec, *what;
		int want;
	} kmsg[] = {
		{"5,731,153087,-;audit: type=2000 audit(1795358888.717:1): state=initialized audit_enabled=0 res=1\n",
		 "audit's start, off", SI_KMSG_AUDIT_START},
		{"5,731,153087,-;audit: type=2000 audit(1.7:1): state=initialized audit_enabled=1 res=1\n",
		 "audit's start, on (audit=1)", SI_KMSG_AUDIT_START | SI_KMSG_AUDIT_ON},
		{"5,900,2000000,-;audit: type=1305 audit(1.7:45): op=set audit_enabled=0 old=1 auid=0 ses=1 res=1\n",
		 "auditctl -e 0 after -e 1 (CONFIG_CHANGE)", SI_KMSG_AUDIT_ON},
		{"5,901,2000001,-;audit: type=1305 audit(1.7:46): auid=0 ses=1 op=add_rule key=(null) list=4 res=1\n",
		 "a rule added while on", SI_KMSG_AUDIT_ON},
		{"5,902,2000002,-;audit: type=1300 audit(1.7:47): arch=c000003e syscall=39 success=yes\n",
		 "a SYSCALL record", SI_KMSG_AUDIT_ON},
		{"6,10,100,-;audit: initializing netlink subsys (disabled)\n", "the init line", 0},
		{"13,903,2000003,-;audit: type=1305 audit_enabled=1\n", "a user-space record (facility 1)", 0},
		{"5,904,2000004,-;kvm: audit_enabled=1\n", "not an audit record", 0},
		{"garbage", "no prefix", 0},
	};
	for (size_t i = 0; i < sizeof(kmsg) / sizeof(kmsg[0]); i++) {
		char msg[160];
		int got = si_audit_kmsg_record(kmsg[i].rec);
		snprintf(msg, sizeof(msg), "si_audit_kmsg_record: %s -> %d (got %d)", kmsg[i].what, kmsg[i].want, got);
		ok(got == kmsg[i].want, msg);
	}

	static char buf[4096];
	memset(buf, 0, sizeof(buf));
	FILE *f = fmemopen(buf, sizeof(buf) - 1, "w");
	if (!f) {
		ok(false, "fmemopen for the null reasons");
		return;
	}
	struct osm_json j;
	osm_json_init(&j, f);
	osm_json_doc_begin(&j);
	si_reasons_reset();
	si_reason_field("a");
	si_null(&j, "v1", "first");
	si_null(&j, "v2", "second");
	si_reason_field("b");
	si_null(&j, "v3", NULL);
	si_reason_field("c");
	si_null(&j, "v4", "third");
	si_w_null_reasons(&j, "r");
	osm_json_doc_end(&j);
	fclose(f);
	ok(strstr(buf, "\"v1\":null") && strstr(buf, "\"r\":{\"a\":\"first\",\"c\":\"third\"}"),
	   "null_reasons: one reason a field (the first), none for a null without one");
}

int main(void)
{
	char msg[256];
	const char *fields = capture(FIELDS);
	const char *machine = capture(MACHINE);
	const char *text = capture(TEXT);

	ok(fields && machine && text, "outputs captured");
	if (!fields || !machine || !text) {
		printf("1..%d\n", n_tests);
		return 1;
	}
	ok(strlen(fields) < (1 << 18) - 2, "fields output fits the capture buffer");
	ok(strncmp(fields, "{\"schema\":1,\"fields\":[", 22) == 0, "fields output starts with \"fields\":[");
	ok(valid_json(fields), "fields output is valid JSON");
	ok(valid_json(machine), "machine output is valid JSON");
	ok(strncmp(machine, "{\"schema\":1,\"machine\":{", 23) == 0, "machine output is an object member");

	size_t nk = count(fields, "{\"key\":");
	ok(nk >= sizeof(keys) / sizeof(keys[0]), "at least the documented number of fields");
	ok(count(fields, ",\"help\":\"") == nk, "every field has a help string");
	ok(count(fields, "\",\"value\":") == nk, "every field has a value");

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		char pat[128];
		snprintf(pat, sizeof(pat), "\"%s\":", keys[i]);
		bool in_machine = strstr(machine, pat) != NULL;
		snprintf(pat, sizeof(pat), "\n%s:", keys[i]);
		bool in_text = strstr(text, pat) != NULL || strncmp(text, pat + 1, strlen(pat + 1)) == 0;
		snprintf(msg, sizeof(msg), "field %s in all three outputs", keys[i]);
		ok(field_value(fields, keys[i]) && in_machine && in_text, msg);
	}

	static const char *const filled[] = {"hostname", "kernel_release", "kernel_version",
					     "arch", "cpus_online", "cpus_allowed", "libc",
					     "build_compiler"};
	for (size_t i = 0; i < sizeof(filled) / sizeof(filled[0]); i++) {
		const char *v = field_value(fields, filled[i]);
		snprintf(msg, sizeof(msg), "%s is not null", filled[i]);
#if !defined(__GLIBC__)
		if (strcmp(filled[i], "libc") == 0) {
			ok(v != NULL, "libc present (null allowed without glibc)");
			continue;
		}
#endif
		ok(v && strncmp(v, "null", 4) != 0, msg);
	}
	const char *v = field_value(fields, "cpus_online");
	ok(v && atoi(v) >= 1, "cpus_online >= 1");

	v = field_value(fields, "realtime");
	ok(v && (strncmp(v, "true,", 5) == 0 || strncmp(v, "false,", 6) == 0 || strncmp(v, "null,", 5) == 0),
	   "realtime is true, false or null");
	v = field_value(fields, "kernel_hz");
	ok(v && (strncmp(v, "null,", 5) == 0 || (atoi(v) >= 10 && atoi(v) <= 10000)),
	   "kernel_hz is null or a tick rate between 10 and 10000");
	test_readers();
	test_machine_id();
	test_state_readers();

	/* Same number of lines in the text as fields (multi-line values are
	 * indented, so top-level lines start with a key). */
	size_t top = 0;
	for (const char *p = text; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p))
		if (*p != ' ' && *p != '\n')
			top++;
	ok(top == nk, "text output has one top-level line per field");
	ok(strstr(fields, "{\"key\":\"null_reasons\",") && !strstr(strstr(fields, "{\"key\":\"null_reasons\","), "},{\"key\":"),
	   "null_reasons is the last field (it lists the reasons of the fields before it)");

	printf("1..%d\n", n_tests);
	return n_failed ? 1 : 0;
}
