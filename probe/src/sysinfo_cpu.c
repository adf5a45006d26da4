/* sysinfo_cpu.c - the CPU fields of the machine description: model,
 * vendor, board, flags, topology, caches, NUMA, frequency and idle. See
 * sysinfo_int.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* cpu_set_t, fmemopen, strnlen; CMake defines it too */
#endif
#include "sysinfo_int.h"

#include <ctype.h>
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Minimal decoding of the ARM MIDR fields (as lscpu does, much shorter). */
static const struct {
	unsigned id;
	const char *name;
} arm_implementers[] = {
	{0x41, "ARM"},      {0x42, "Broadcom"}, {0x43, "Cavium"},   {0x46, "Fujitsu"},
	{0x48, "HiSilicon"}, {0x4e, "NVIDIA"},  {0x50, "APM"},      {0x51, "Qualcomm"},
	{0x53, "Samsung"},  {0x56, "Marvell"},  {0x61, "Apple"},    {0x69, "Intel"},
	{0x6d, "Microsoft"}, {0xc0, "Ampere"},
};

static const struct {
	unsigned impl, part;
	const char *name;
} arm_parts[] = {
	{0x41, 0xb76, "ARM1176"},        {0x41, 0xc07, "Cortex-A7"},
	{0x41, 0xc08, "Cortex-A8"},      {0x41, 0xc09, "Cortex-A9"},
	{0x41, 0xc0f, "Cortex-A15"},     {0x41, 0xc0e, "Cortex-A17"},
	{0x41, 0xd03, "Cortex-A53"},     {0x41, 0xd04, "Cortex-A35"},
	{0x41, 0xd05, "Cortex-A55"},     {0x41, 0xd07, "Cortex-A57"},
	{0x41, 0xd08, "Cortex-A72"},     {0x41, 0xd09, "Cortex-A73"},
	{0x41, 0xd0a, "Cortex-A75"},     {0x41, 0xd0b, "Cortex-A76"},
	{0x41, 0xd0c, "Neoverse-N1"},    {0x41, 0xd0d, "Cortex-A77"},
	{0x41, 0xd40, "Neoverse-V1"},    {0x41, 0xd41, "Cortex-A78"},
	{0x41, 0xd44, "Cortex-X1"},      {0x41, 0xd46, "Cortex-A510"},
	{0x41, 0xd47, "Cortex-A710"},    {0x41, 0xd48, "Cortex-X2"},
	{0x41, 0xd49, "Neoverse-N2"},    {0x41, 0xd4d, "Cortex-A715"},
	{0x41, 0xd4e, "Cortex-X3"},      {0x41, 0xd4f, "Neoverse-V2"},
	{0x41, 0xd80, "Cortex-A520"},    {0x41, 0xd81, "Cortex-A720"},
	{0x41, 0xd82, "Cortex-X4"},      {0x41, 0xd84, "Neoverse-V3"},
	{0x41, 0xd8e, "Neoverse-N3"},    {0xc0, 0xac3, "Ampere-1"},
	{0xc0, 0xac4, "Ampere-1a"},
};

static const char *arm_implementer_name(unsigned id)
{
	for (size_t i = 0; i < ARRAY_SIZE(arm_implementers); i++)
		if (arm_implementers[i].id == id)
			return arm_implementers[i].name;
	return NULL;
}

static void arm_core_name(unsigned impl, unsigned part, char *out, size_t len)
{
	const char *in = arm_implementer_name(impl);
	char ibuf[16];
	if (!in) {
		snprintf(ibuf, sizeof(ibuf), "0x%02x", impl);
		in = ibuf;
	}
	for (size_t i = 0; i < ARRAY_SIZE(arm_parts); i++)
		if (arm_parts[i].impl == impl && arm_parts[i].part == part) {
			snprintf(out, len, "%s %s", in, arm_parts[i].name);
			return;
		}
	snprintf(out, len, "%s part 0x%03x", in, part);
}

/* The distinct core types, in order of first appearance: big.LITTLE boards
 * have two or three (cpu0 is often a LITTLE core, so cpu0 alone misleads). */
static size_t arm_cores(unsigned impl[], unsigned part[], size_t max)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	if (!f)
		return 0;
	char line[LINE];
	bool cut;
	size_t n = 0;
	long cur_impl = -1;
	while (si_read_line(f, line, sizeof(line), &cut)) {
		char *v;
		if ((v = si_cpuinfo_match(line, "CPU implementer"))) {
			cur_impl = strtol(v, NULL, 0);
		} else if ((v = si_cpuinfo_match(line, "CPU part")) && cur_impl >= 0) {
			unsigned p = (unsigned)strtoul(v, NULL, 0);
			size_t k;
			for (k = 0; k < n; k++)
				if (impl[k] == (unsigned)cur_impl && part[k] == p)
					break;
			if (k == n && n < max) {
				impl[n] = (unsigned)cur_impl;
				part[n] = p;
				n++;
			}
		}
	}
	fclose(f);
	return n;
}

static bool arm_model(char *out, size_t len)
{
	unsigned impl[MAX_ARM_CORES], part[MAX_ARM_CORES];
	size_t n = arm_cores(impl, part, MAX_ARM_CORES);
	if (n == 0)
		return false;
	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		char one[96];
		size_t used = strlen(out);
		arm_core_name(impl[i], part[i], one, sizeof(one));
		snprintf(out + used, len - used, "%s%s", i ? " + " : "", one);
	}
	return true;
}

/* ------------------------------------------------------------------------ */
/* CPU                                                                      */

void si_w_cpu_model(struct osm_json *j, const char *key)
{
	char buf[SMALL * 2];
	bool have_name = si_cpuinfo_value("model name", buf, sizeof(buf), NULL);
	/* arm32 "model name" is only "ARMv7 Processor rev 4 (v7l)": the decoded
	 * implementer/part says more. */
	if (!have_name || strncmp(buf, "ARMv", 4) == 0) {
		char arm[SMALL * 2];
		if (arm_model(arm, sizeof(arm))) {
			osm_json_str(j, key, arm);
			return;
		}
	}
	if (have_name || si_cpuinfo_value("Hardware", buf, sizeof(buf), NULL) ||
	    si_cpuinfo_value("cpu model", buf, sizeof(buf), NULL) ||
	    si_cpuinfo_value("uarch", buf, sizeof(buf), NULL) ||
	    si_cpuinfo_value("cpu", buf, sizeof(buf), NULL))
		osm_json_str(j, key, buf);
	else
		osm_json_null(j, key);
}

void si_w_cpu_vendor(struct osm_json *j, const char *key)
{
	char buf[SMALL];
	if (si_cpuinfo_value("vendor_id", buf, sizeof(buf), NULL) ||
	    si_cpuinfo_value("vendor", buf, sizeof(buf), NULL)) {
		osm_json_str(j, key, buf);
		return;
	}
	unsigned impl[1], part[1];
	if (arm_cores(impl, part, 1) == 1) {
		const char *n = arm_implementer_name(impl[0]);
		if (!n) {
			snprintf(buf, sizeof(buf), "0x%02x", impl[0]);
			n = buf;
		}
		osm_json_str(j, key, n);
		return;
	}
	osm_json_null(j, key);
}

void si_w_board(struct osm_json *j, const char *key)
{
	char buf[SMALL], vendor[SMALL];
	/* ARM boards: the device tree names the board ("Raspberry Pi 4 Model B"). */
	if (si_read_file_trim("/proc/device-tree/model", buf, sizeof(buf)) && buf[0]) {
		osm_json_str(j, key, buf);
		return;
	}
	if (si_read_file_trim("/sys/class/dmi/id/product_name", buf, sizeof(buf)) && buf[0]) {
		char both[2 * SMALL + 2];
		if (si_read_file_trim("/sys/class/dmi/id/sys_vendor", vendor, sizeof(vendor)) && vendor[0])
			snprintf(both, sizeof(both), "%s %s", vendor, buf);
		else
			si_copy_str(both, sizeof(both), buf);
		osm_json_str(j, key, both);
		return;
	}
	osm_json_null(j, key);
}

void si_w_cpu_flags(struct osm_json *j, const char *key)
{
	char buf[LINE];
	bool cut = false;
	if (si_cpuinfo_value("flags", buf, sizeof(buf), &cut) ||
	    si_cpuinfo_value("Features", buf, sizeof(buf), &cut))
		si_json_words(j, key, buf, cut); /* a cut line ends with half a word */
	else
		osm_json_null(j, key);
}

static bool online_cpus(char *buf, size_t len)
{
	return si_read_file_trim("/sys/devices/system/cpu/online", buf, len) && buf[0];
}

void si_w_cpus_online(struct osm_json *j, const char *key)
{
	char buf[MEDIUM];
	long n = online_cpus(buf, sizeof(buf)) ? si_cpulist_count(buf) : 0;
	if (n <= 0)
		n = sysconf(_SC_NPROCESSORS_ONLN);
	si_json_int_or_null(j, key, n > 0, n);
}

/* Trap: cpu_set_t holds 1024 CPUs; on a bigger machine sched_getaffinity
 * fails with EINVAL and the field is null. */
void si_w_cpus_allowed(struct osm_json *j, const char *key)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		osm_json_int(j, key, CPU_COUNT(&set));
	else
		osm_json_null(j, key);
}

/* Sockets, cores and threads from cpuN/topology of the online CPUs.
 * sockets: distinct physical_package_id. cores: CPUs that are the first of
 * their own thread-sibling list. threads_per_core: the largest sibling list
 * (hybrid CPUs mix 2-thread and 1-thread cores; as lscpu, the largest).
 * Trap: core_id is not unique across clusters on some arm64 systems, so
 * cores are not counted by core_id. */
struct topology {
	long sockets, cores, threads;
};

static bool topology(struct topology *t)
{
	char online[MEDIUM];
	if (!online_cpus(online, sizeof(online)))
		return false;
	long pkgs[MAX_PACKAGES];
	size_t npkg = 0;
	struct si_cpulist it;
	long cpu;
	t->sockets = t->cores = t->threads = 0;
	si_cpulist_init(&it, online);
	while (si_cpulist_next(&it, &cpu)) {
		char path[PATH_LEN], sib[MEDIUM];
		long long pkg;
		if (!si_pathf(path, sizeof(path),
			   "/sys/devices/system/cpu/cpu%ld/topology/physical_package_id", cpu) ||
		    !si_read_int(path, &pkg))
			return false;
		size_t k;
		for (k = 0; k < npkg; k++)
			if (pkgs[k] == pkg)
				break;
		if (k == npkg) {
			if (npkg == MAX_PACKAGES)
				return false;
			pkgs[npkg++] = (long)pkg;
		}
		/* core_cpus_list is the newer name of thread_siblings_list. */
		if (!(si_pathf(path, sizeof(path),
			    "/sys/devices/system/cpu/cpu%ld/topology/core_cpus_list", cpu) &&
		      si_read_file_trim(path, sib, sizeof(sib))) &&
		    !(si_pathf(path, sizeof(path),
			    "/sys/devices/system/cpu/cpu%ld/topology/thread_siblings_list", cpu) &&
		      si_read_file_trim(path, sib, sizeof(sib))))
			return false;
		struct si_cpulist si;
		long first;
		si_cpulist_init(&si, sib);
		if (!si_cpulist_next(&si, &first))
			return false;
		if (first == cpu)
			t->cores++;
		long n = si_cpulist_count(sib);
		if (n > t->threads)
			t->threads = n;
	}
	t->sockets = (long)npkg;
	return t->sockets > 0 && t->cores > 0;
}

void si_w_sockets(struct osm_json *j, const char *key)
{
	struct topology t = {0, 0, 0};
	bool ok = topology(&t);
	si_json_int_or_null(j, key, ok, t.sockets);
}

void si_w_cores_per_socket(struct osm_json *j, const char *key)
{
	struct topology t = {0, 0, 0};
	bool ok = topology(&t) && t.cores % t.sockets == 0;
	si_json_int_or_null(j, key, ok, ok ? t.cores / t.sockets : 0);
}

void si_w_threads_per_core(struct osm_json *j, const char *key)
{
	struct topology t = {0, 0, 0};
	bool ok = topology(&t);
	si_json_int_or_null(j, key, ok, t.threads);
}

void si_w_smt_control(struct osm_json *j, const char *key)
{
	si_json_file_str(j, key, "/sys/devices/system/cpu/smt/control");
}

void si_w_isolated_cpus(struct osm_json *j, const char *key)
{
	si_json_file_str(j, key, "/sys/devices/system/cpu/isolated");
}

/* Trap: without nohz_full= some kernels print "(null)" here (a %*pbl of an
 * unallocated mask); that means no CPU. */
void si_w_nohz_full_cpus(struct osm_json *j, const char *key)
{
	char buf[MEDIUM];
	if (!si_read_file_trim("/sys/devices/system/cpu/nohz_full", buf, sizeof(buf)))
		osm_json_null(j, key);
	else
		osm_json_str(j, key, strcmp(buf, "(null)") == 0 ? "" : buf);
}

/* "48K" -> 49152 */
static bool parse_size(const char *s, long long *v)
{
	char *end;
	errno = 0;
	long long x = strtoll(s, &end, 10);
	if (errno || end == s || x < 0)
		return false;
	switch (*end) {
	case 'K': x <<= 10; end++; break;
	case 'M': x <<= 20; end++; break;
	case 'G': x <<= 30; end++; break;
	default: break;
	}
	if (*end)
		return false;
	*v = x;
	return true;
}

/* Trap: some ARM systems expose cache/index* with only some attributes (no
 * ways, no size); each attribute is null on its own. */
void si_w_caches(struct osm_json *j, const char *key)
{
	static const char base[] = "/sys/devices/system/cpu/cpu0/cache";
	char path[PATH_LEN], buf[MEDIUM];
	struct stat st;
	if (!si_pathf(path, sizeof(path), "%s/index0", base) || stat(path, &st) != 0) {
		osm_json_null(j, key);
		return;
	}
	osm_json_arr_begin(j, key);
	for (int i = 0; i < 64; i++) {
		long long v = 0;
		if (!si_pathf(path, sizeof(path), "%s/index%d", base, i) || stat(path, &st) != 0)
			break;
		osm_json_obj_begin(j, NULL);
		si_pathf(path, sizeof(path), "%s/index%d/level", base, i);
		si_json_file_int(j, "level", path);
		si_pathf(path, sizeof(path), "%s/index%d/type", base, i);
		si_json_file_str(j, "type", path);
		si_pathf(path, sizeof(path), "%s/index%d/size", base, i);
		bool ok = si_read_file_trim(path, buf, sizeof(buf)) && parse_size(buf, &v);
		si_json_int_or_null(j, "size_bytes", ok, v);
		si_pathf(path, sizeof(path), "%s/index%d/coherency_line_size", base, i);
		si_json_file_int(j, "line_bytes", path);
		si_pathf(path, sizeof(path), "%s/index%d/ways_of_associativity", base, i);
		si_json_file_int(j, "ways", path);
		si_pathf(path, sizeof(path), "%s/index%d/shared_cpu_list", base, i);
		si_json_file_str(j, "shared_cpu_list", path);
		osm_json_obj_end(j);
	}
	osm_json_arr_end(j);
}

static bool keep_node(const char *dir, const char *name)
{
	(void)dir;
	if (strncmp(name, "node", 4) != 0 || !name[4])
		return false;
	for (const char *p = name + 4; *p; p++)
		if (!isdigit((unsigned char)*p))
			return false;
	return true;
}

void si_w_numa_nodes(struct osm_json *j, const char *key)
{
	struct si_names nodes;
	bool ok = si_list_dir("/sys/devices/system/node", &nodes, keep_node) && nodes.n > 0;
	si_json_int_or_null(j, key, ok, (long long)nodes.n);
}

/* cpufreq is absent in most VMs and on boards without a driver: null. */
void si_w_cpufreq_driver(struct osm_json *j, const char *key)
{
	si_json_file_str(j, key, "/sys/devices/system/cpu/cpu0/cpufreq/scaling_driver");
}

void si_w_cpufreq_governor(struct osm_json *j, const char *key)
{
	si_json_file_str(j, key, "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
}

static void json_khz_as_mhz(struct osm_json *j, const char *key, const char *path)
{
	long long khz;
	if (si_read_int(path, &khz) && khz > 0)
		osm_json_num(j, key, (double)khz / 1000.0);
	else
		osm_json_null(j, key);
}

void si_w_cpu_max_mhz(struct osm_json *j, const char *key)
{
	json_khz_as_mhz(j, key, "/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
}

void si_w_cpu_min_mhz(struct osm_json *j, const char *key)
{
	json_khz_as_mhz(j, key, "/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_min_freq");
}

/* Turbo/boost: intel_pstate says it the other way round (no_turbo). */
void si_w_cpu_boost(struct osm_json *j, const char *key)
{
	long long v;
	if (si_read_int("/sys/devices/system/cpu/intel_pstate/no_turbo", &v))
		osm_json_bool(j, key, v == 0);
	else if (si_read_int("/sys/devices/system/cpu/cpufreq/boost", &v) ||
		 si_read_int("/sys/devices/system/cpu/cpu0/cpufreq/boost", &v))
		osm_json_bool(j, key, v != 0);
	else
		osm_json_null(j, key);
}

void si_w_cpuidle_driver(struct osm_json *j, const char *key)
{
	si_json_file_str(j, key, "/sys/devices/system/cpu/cpuidle/current_driver");
}
