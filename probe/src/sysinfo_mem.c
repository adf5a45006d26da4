/* sysinfo_mem.c - the memory fields of the machine description: size, type,
 * cgroup limits, huge pages, fault-around. See sysinfo_int.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* cpu_set_t, fmemopen, strnlen; CMake defines it too */
#endif
#include "sysinfo_int.h"

#include <string.h>
#include <sys/stat.h>

/* ------------------------------------------------------------------------ */
/* Memory                                                                   */

static bool meminfo_kb(const char *name, long long *kb)
{
	FILE *f = fopen("/proc/meminfo", "re");
	if (!f)
		return false;
	char line[SMALL];
	bool cut, found = false;
	size_t k = strlen(name);
	while (si_read_line(f, line, sizeof(line), &cut)) {
		if (strncmp(line, name, k) == 0 && line[k] == ':') {
			found = sscanf(line + k + 1, "%lld", kb) == 1;
			break;
		}
	}
	fclose(f);
	return found;
}

/* Trap: in a container MemTotal is the host's; see cgroup_memory_limit. */
void si_w_memory_bytes(struct osm_json *j, const char *key)
{
	long long kb = 0;
	bool ok = meminfo_kb("MemTotal", &kb);
	si_json_int_or_null(j, key, ok, kb * 1024);
}

void si_w_hugepage_size_bytes(struct osm_json *j, const char *key)
{
	long long kb = 0;
	bool ok = meminfo_kb("Hugepagesize", &kb);
	si_json_int_or_null(j, key, ok, kb * 1024);
}

static const char *smbios_memory_type(unsigned t)
{
	switch (t) {
	case 0x0f: return "SDRAM";
	case 0x12: return "DDR";
	case 0x13: return "DDR2";
	case 0x14: return "DDR2 FB-DIMM";
	case 0x18: return "DDR3";
	case 0x1a: return "DDR4";
	case 0x1b: return "LPDDR";
	case 0x1c: return "LPDDR2";
	case 0x1d: return "LPDDR3";
	case 0x1e: return "LPDDR4";
	case 0x20: return "HBM";
	case 0x21: return "HBM2";
	case 0x22: return "DDR5";
	case 0x23: return "LPDDR5";
	case 0x24: return "HBM3";
	default: return NULL;
	}
}

/* SMBIOS type 17 (Memory Device), first populated slot. The raw entries are
 * readable by root only; unprivileged, or without DMI (ARM boards, many
 * VMs), this is null. Offsets: 0x01 length of the formatted area, 0x0C size
 * (0 = empty slot), 0x12 memory type, 0x15 speed in MT/s (SMBIOS 2.3+). */
static bool memory_type(char *out, size_t len)
{
	for (int i = 0; i < 1024; i++) {
		char path[PATH_LEN];
		unsigned char raw[256];
		size_t n;
		if (!si_pathf(path, sizeof(path), "/sys/firmware/dmi/entries/17-%d/raw", i) ||
		    !si_read_file_raw(path, raw, sizeof(raw), &n))
			return false;
		unsigned flen = n >= 2 ? raw[1] : 0;
		if (n < 0x13 || raw[0] != 17 || flen < 0x13)
			continue;
		unsigned size = raw[0x0c] | (unsigned)raw[0x0d] << 8;
		const char *t = smbios_memory_type(raw[0x12]);
		if (size == 0 || !t)
			continue;
		unsigned speed = flen >= 0x17 && n >= 0x17 ? (raw[0x15] | (unsigned)raw[0x16] << 8) : 0;
		if (speed && speed != 0xffff)
			snprintf(out, len, "%s %u MT/s", t, speed);
		else
			si_copy_str(out, len, t);
		return true;
	}
	return false;
}

void si_w_memory_type(struct osm_json *j, const char *key)
{
	char buf[SMALL];
	osm_json_str(j, key, memory_type(buf, sizeof(buf)) ? buf : NULL);
}

/* cgroup limits.
 * Trap 1: a "hybrid" host has v1 controllers plus an empty v2 tree, so the
 *   "0::" line of /proc/self/cgroup exists but holds no limits: v1 is tried
 *   first for each controller.
 * Trap 2: /proc/self/cgroup may show the host's path while the container
 *   mounts its own cgroup as the root of /sys/fs/cgroup, and a parent's
 *   limit binds its children: walk from the process's cgroup up to the
 *   mount root, keep the smallest limit found. */
typedef bool (*cg_reader)(const char *dir, double *v);

static bool cgroup_path(const char *controller, char *out, size_t len)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	if (!f)
		return false;
	char line[MEDIUM];
	bool cut, found = false;
	while (!found && si_read_line(f, line, sizeof(line), &cut)) {
		char *c1 = strchr(line, ':');
		char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c2 = '\0';
		const char *ctrls = c1 + 1;
		if (!controller) {
			found = strncmp(line, "0:", 2) == 0 && !*ctrls;
		} else {
			char list[SMALL], *save = NULL;
			si_copy_str(list, sizeof(list), ctrls);
			for (char *w = strtok_r(list, ",", &save); w && !found;
			     w = strtok_r(NULL, ",", &save))
				found = strcmp(w, controller) == 0;
		}
		if (found)
			si_copy_str(out, len, c2 + 1);
	}
	fclose(f);
	return found;
}

static bool cgroup_walk(const char *mount, const char *cgpath, cg_reader rd, double *out)
{
	char rel[PATH_LEN];
	bool found = false;
	si_copy_str(rel, sizeof(rel), cgpath[0] == '/' ? cgpath : "/");
	for (;;) {
		char dir[PATH_LEN];
		double v;
		if (si_pathf(dir, sizeof(dir), "%s%s", mount, strcmp(rel, "/") == 0 ? "" : rel) &&
		    rd(dir, &v) && (!found || v < *out)) {
			*out = v;
			found = true;
		}
		char *slash = strrchr(rel, '/');
		if (!slash || strcmp(rel, "/") == 0)
			break;
		if (slash == rel)
			rel[1] = '\0';
		else
			*slash = '\0';
	}
	return found;
}

static bool cg_mem_v1(const char *dir, double *v)
{
	char path[PATH_LEN];
	long long x;
	/* "unlimited" is PAGE_COUNTER_MAX pages, about 2^63. */
	if (!si_pathf(path, sizeof(path), "%s/memory.limit_in_bytes", dir) || !si_read_int(path, &x) ||
	    x <= 0 || x >= (1LL << 62))
		return false;
	*v = (double)x;
	return true;
}

static bool cg_mem_v2(const char *dir, double *v)
{
	char path[PATH_LEN], buf[SMALL];
	long long x;
	if (!si_pathf(path, sizeof(path), "%s/memory.max", dir) ||
	    !si_read_file_trim(path, buf, sizeof(buf)) || !si_parse_ll(buf, &x) || x <= 0)
		return false; /* "max" = unlimited */
	*v = (double)x;
	return true;
}

static bool cg_cpu_v1(const char *dir, double *v)
{
	char path[PATH_LEN];
	long long quota, period;
	if (!si_pathf(path, sizeof(path), "%s/cpu.cfs_quota_us", dir) || !si_read_int(path, &quota) ||
	    quota <= 0 || /* -1 = unlimited */
	    !si_pathf(path, sizeof(path), "%s/cpu.cfs_period_us", dir) || !si_read_int(path, &period) ||
	    period <= 0)
		return false;
	*v = (double)quota / (double)period;
	return true;
}

static bool cg_cpu_v2(const char *dir, double *v)
{
	char path[PATH_LEN], buf[SMALL];
	long long quota, period;
	if (!si_pathf(path, sizeof(path), "%s/cpu.max", dir) || !si_read_file_trim(path, buf, sizeof(buf)) ||
	    sscanf(buf, "%lld %lld", &quota, &period) != 2 || quota <= 0 || period <= 0)
		return false; /* "max 100000" = unlimited */
	*v = (double)quota / (double)period;
	return true;
}

static bool cgroup_limit(const char *controller, const char *const v1_mounts[],
			 cg_reader v1, cg_reader v2, double *out)
{
	char cg[PATH_LEN];
	struct stat st;
	if (cgroup_path(controller, cg, sizeof(cg))) {
		for (size_t i = 0; v1_mounts[i]; i++)
			if (stat(v1_mounts[i], &st) == 0)
				return cgroup_walk(v1_mounts[i], cg, v1, out);
	}
	if (stat("/sys/fs/cgroup/cgroup.controllers", &st) == 0 && cgroup_path(NULL, cg, sizeof(cg)))
		return cgroup_walk("/sys/fs/cgroup", cg, v2, out);
	return false;
}

void si_w_cgroup_memory_limit(struct osm_json *j, const char *key)
{
	static const char *const mounts[] = {"/sys/fs/cgroup/memory", NULL};
	double v;
	bool ok = cgroup_limit("memory", mounts, cg_mem_v1, cg_mem_v2, &v);
	si_json_int_or_null(j, key, ok, ok ? (long long)v : 0);
}

void si_w_cgroup_cpu_limit(struct osm_json *j, const char *key)
{
	static const char *const mounts[] = {"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct", NULL};
	double v;
	if (cgroup_limit("cpu", mounts, cg_cpu_v1, cg_cpu_v2, &v))
		osm_json_num(j, key, v);
	else
		osm_json_null(j, key);
}

void si_w_thp_enabled(struct osm_json *j, const char *key)
{
	si_json_file_choice(j, key, "/sys/kernel/mm/transparent_hugepage/enabled");
}

void si_w_thp_defrag(struct osm_json *j, const char *key)
{
	si_json_file_choice(j, key, "/sys/kernel/mm/transparent_hugepage/defrag");
}

void si_w_fault_around_bytes(struct osm_json *j, const char *key)
{
	si_json_file_int(j, key, "/sys/kernel/debug/fault_around_bytes");
}
