/* sysinfo_mem.c - the memory fields of the machine description: size, type,
 * huge pages, KSM, NUMA balancing, zswap, fault-around (the cgroup limits
 * are in sysinfo_cgroup.c). See sysinfo_int.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* cpu_set_t, fmemopen, strnlen; CMake defines it too */
#endif
#include "sysinfo_int.h"

#include <string.h>
#include <unistd.h>

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

void si_w_thp_enabled(struct osm_json *j, const char *key)
{
	si_json_file_choice(j, key, "/sys/kernel/mm/transparent_hugepage/enabled");
}

void si_w_thp_defrag(struct osm_json *j, const char *key)
{
	si_json_file_choice(j, key, "/sys/kernel/mm/transparent_hugepage/defrag");
}

void si_w_thp_shmem_enabled(struct osm_json *j, const char *key)
{
	si_json_file_choice(j, key, "/sys/kernel/mm/transparent_hugepage/shmem_enabled");
}

/* A setting's file, as an integer; null with the reason when it cannot be. */
static void setting_int(struct osm_json *j, const char *key, const char *path, const char *absent)
{
	long long v;
	if (si_read_int(path, &v)) {
		osm_json_int(j, key, v);
		return;
	}
	char why[SMALL * 2];
	if (access(path, F_OK) != 0)
		snprintf(why, sizeof(why), "%s is absent (%s)", path, absent);
	else
		snprintf(why, sizeof(why), "%s is not readable as an integer", path);
	si_null(j, key, why);
}

void si_w_ksm_run(struct osm_json *j, const char *key)
{
	setting_int(j, key, "/sys/kernel/mm/ksm/run", "a kernel without KSM");
}

void si_w_numa_balancing(struct osm_json *j, const char *key)
{
	setting_int(j, key, "/proc/sys/kernel/numa_balancing", "a kernel without NUMA balancing");
}

/* zswap's "enabled" module parameter reads Y or N. */
void si_w_zswap_enabled(struct osm_json *j, const char *key)
{
	static const char path[] = "/sys/module/zswap/parameters/enabled";
	char buf[SMALL];
	if (si_read_file_trim(path, buf, sizeof(buf)) && (strcmp(buf, "Y") == 0 || strcmp(buf, "N") == 0))
		osm_json_bool(j, key, buf[0] == 'Y');
	else
		si_null(j, key, access(path, F_OK) != 0 ? "/sys/module/zswap/parameters/enabled is absent "
							  "(a kernel without zswap)"
							: "/sys/module/zswap/parameters/enabled is neither Y nor N");
}

void si_w_fault_around_bytes(struct osm_json *j, const char *key)
{
	si_json_file_int(j, key, "/sys/kernel/debug/fault_around_bytes");
}
