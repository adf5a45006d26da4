/* sysinfo_kernel.c - identity, kernel and kernel-settings fields of the
 * machine description, and the probe's own build. See sysinfo_int.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* cpu_set_t, fmemopen, strnlen; CMake defines it too */
#endif
#include "sysinfo_int.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#if defined(__GLIBC__)
#include <gnu/libc-version.h>
#endif

#include "build_info.h"

/* ------------------------------------------------------------------------ */
/* Field writers: identity and kernel                                       */

void si_w_hostname(struct osm_json *j, const char *key)
{
	struct utsname u;
	if (uname(&u) == 0) {
		si_sanitize_utf8(u.nodename);
		osm_json_str(j, key, u.nodename);
	} else {
		osm_json_null(j, key);
	}
}

void si_w_os(struct osm_json *j, const char *key)
{
	static const char *const files[] = {"/etc/os-release", "/usr/lib/os-release"};
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		FILE *f = fopen(files[i], "re");
		if (!f)
			continue;
		char line[SMALL * 2];
		bool cut;
		while (si_read_line(f, line, sizeof(line), &cut)) {
			if (strncmp(line, "PRETTY_NAME=", 12) != 0)
				continue;
			char *v = line + 12;
			size_t n = strlen(v);
			if (n >= 2 && (v[0] == '"' || v[0] == '\'') && v[n - 1] == v[0]) {
				v[n - 1] = '\0';
				v++;
			}
			si_sanitize_utf8(v);
			fclose(f);
			osm_json_str(j, key, v);
			return;
		}
		fclose(f);
	}
	osm_json_null(j, key);
}

enum uts_part { UTS_RELEASE, UTS_VERSION, UTS_MACHINE };

static void w_uts(struct osm_json *j, const char *key, enum uts_part part)
{
	struct utsname u;
	if (uname(&u) != 0) {
		osm_json_null(j, key);
		return;
	}
	char *s = part == UTS_RELEASE ? u.release : part == UTS_VERSION ? u.version : u.machine;
	si_sanitize_utf8(s);
	osm_json_str(j, key, s);
}

void si_w_kernel_release(struct osm_json *j, const char *key) { w_uts(j, key, UTS_RELEASE); }
void si_w_kernel_version(struct osm_json *j, const char *key) { w_uts(j, key, UTS_VERSION); }
void si_w_arch(struct osm_json *j, const char *key) { w_uts(j, key, UTS_MACHINE); }

void si_w_kernel_cmdline(struct osm_json *j, const char *key)
{
	si_json_file_str(j, key, "/proc/cmdline");
}

/* The preemption model and where it was learnt.
 * 1. debugfs sched/preempt (root, debugfs mounted, PREEMPT_DYNAMIC only):
 *    "none voluntary (full) lazy", the active one in parentheses. Exact.
 * 2. uname -v carries the build flag (init/Makefile): PREEMPT_RT, then
 *    PREEMPT_DYNAMIC, then PREEMPT (full, or lazy on 6.13+ kernels built
 *    with PREEMPT_LAZY); no flag means none or voluntary, which uname cannot
 *    tell apart.
 * 3. With PREEMPT_DYNAMIC the boot default can be overridden by preempt= on
 *    the kernel command line; that is used when present. */
bool si_cmdline_param(const char *name, char *out, size_t len)
{
	char buf[MEDIUM];
	if (!si_read_file_trim("/proc/cmdline", buf, sizeof(buf)))
		return false;
	size_t k = strlen(name);
	char *save = NULL;
	for (char *w = strtok_r(buf, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		if (strcmp(w, "--") == 0)
			break; /* the rest goes to init */
		if (strncmp(w, name, k) == 0 && w[k] == '=') {
			si_copy_str(out, len, w + k + 1);
			return true;
		}
	}
	return false;
}

static bool uname_has_word(const char *word)
{
	struct utsname u;
	if (uname(&u) != 0)
		return false;
	char *save = NULL;
	for (char *w = strtok_r(u.version, " ", &save); w; w = strtok_r(NULL, " ", &save))
		if (strcmp(w, word) == 0)
			return true;
	return false;
}

static const char *preemption(char *out, size_t len)
{
	if (si_read_marked_choice("/sys/kernel/debug/sched/preempt", '(', ')', out, len))
		return "debugfs";
	struct utsname u;
	if (uname(&u) != 0)
		return NULL;
	if (uname_has_word("PREEMPT_RT")) {
		si_copy_str(out, len, "rt");
	} else if (uname_has_word("PREEMPT_DYNAMIC")) {
		if (si_cmdline_param("preempt", out, len) && out[0])
			return "cmdline";
		si_copy_str(out, len, "dynamic");
	} else if (uname_has_word("PREEMPT")) {
		si_copy_str(out, len, "full");
	} else {
		si_copy_str(out, len, "none_or_voluntary");
	}
	return "uname";
}

void si_w_preemption(struct osm_json *j, const char *key)
{
	char buf[SMALL];
	osm_json_str(j, key, preemption(buf, sizeof(buf)) ? buf : NULL);
}

void si_w_preemption_source(struct osm_json *j, const char *key)
{
	char buf[SMALL];
	osm_json_str(j, key, preemption(buf, sizeof(buf)));
}

/* ------------------------------------------------------------------------ */
/* Kernel settings                                                          */

/* A kernel flag file such as /sys/kernel/realtime: 1 when it reads 1, 0 when
 * it reads 0 or does not exist (the kernel creates /sys/kernel/realtime only
 * when built with PREEMPT_RT, 6.12+ and the RT patch set before it), -1 when
 * it exists but cannot be read or holds anything else. */
int si_flag_file(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -1;
	long long v;
	if (!si_read_int(path, &v) || (v != 0 && v != 1))
		return -1;
	return (int)v;
}

void si_w_realtime(struct osm_json *j, const char *key)
{
	int v = si_flag_file("/sys/kernel/realtime");
	if (v < 0)
		osm_json_null(j, key);
	else
		osm_json_bool(j, key, v == 1);
}

/* The integer value of NAME in a kernel config file ("NAME=250"); false when
 * the file cannot be read, NAME is absent or not set ("# NAME is not set"), or
 * its value is not an integer. Only a line starting "NAME=" counts, so
 * CONFIG_HZ is not taken from CONFIG_HZ_250=y or CONFIG_NO_HZ=y. */
bool si_config_int(const char *path, const char *name, long long *v)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	char line[MEDIUM];
	size_t k = strlen(name);
	bool cut, found = false;
	while (si_read_line(f, line, sizeof(line), &cut)) {
		if (cut || strncmp(line, name, k) != 0 || line[k] != '=')
			continue;
		found = si_parse_ll(line + k + 1, v);
		break;
	}
	fclose(f);
	return found;
}

/* The tick rate HZ from one reading of /proc/timer_list (root): its "now at
 * T nsecs" (CLOCK_MONOTONIC, from boot) and "jiffies: J". The kernel starts
 * jiffies at INITIAL_JIFFIES = (unsigned int)(-300 * HZ), so that a 32-bit
 * counter wraps five minutes after boot, and adds HZ a second:
 *     J = 2^32 - 300 HZ + HZ T   (mod 2^32 where unsigned long is 32 bits)
 * Each usual HZ predicts J; the one whose prediction is within a second's
 * ticks of J, and alone in being so, is the answer. Near T = 300 s every HZ
 * predicts about 2^32: no answer then (false). */
bool si_hz_from_timer_list(const char *path, long long *hz)
{
	static const long long cands[] = {24, 32, 48, 64, 100, 128, 200, 250, 256, 300, 500, 512, 1000, 1024, 1200};
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	char line[MEDIUM];
	bool cut, have_now = false, have_j = false;
	unsigned long long now_ns = 0, jif = 0;
	for (int n = 0; n < 400 && !(have_now && have_j) && si_read_line(f, line, sizeof(line), &cut); n++) {
		if (!have_now && sscanf(line, "now at %llu nsecs", &now_ns) == 1)
			have_now = true;
		else if (!have_j && sscanf(line, "jiffies: %llu", &jif) == 1)
			have_j = true;
	}
	fclose(f);
	if (!have_now || !have_j)
		return false;
	bool wide = jif > 0xffffffffULL; /* a 64-bit jiffies that has passed 2^32 */
	double t = (double)now_ns * 1e-9;
	int found = 0;
	for (size_t i = 0; i < sizeof(cands) / sizeof(cands[0]); i++) {
		double c = (double)cands[i];
		double pred = 4294967296.0 + c * (t - 300.0);
		double d = (double)jif - pred;
		if (!wide)
			d = fmod(fmod(d, 4294967296.0) + 4294967296.0 * 1.5, 4294967296.0) - 4294967296.0 / 2;
		if (fabs(d) <= c) {
			*hz = cands[i];
			found++;
		}
	}
	return found == 1;
}

/* CONFIG_HZ, the scheduler tick rate, from the config the running kernel was
 * built with as distributions install it (/boot/config-$(uname -r)); else
 * worked out from /proc/timer_list (root; si_hz_from_timer_list). Not read
 * from /proc/config.gz: that needs an inflater, and the probe links nothing
 * beyond libc. */
void si_w_kernel_hz(struct osm_json *j, const char *key)
{
	struct utsname u;
	char path[PATH_LEN];
	long long hz = 0;
	bool ok = uname(&u) == 0 && si_pathf(path, sizeof(path), "/boot/config-%s", u.release) &&
		  si_config_int(path, "CONFIG_HZ", &hz) && hz > 0;
	if (!ok)
		ok = si_hz_from_timer_list("/proc/timer_list", &hz);
	si_json_int_or_null(j, key, ok, hz);
}

void si_w_mitigations(struct osm_json *j, const char *key)
{
	static const char dir[] = "/sys/devices/system/cpu/vulnerabilities";
	struct si_names d;
	if (!si_list_dir(dir, &d, NULL) || d.n == 0) {
		osm_json_null(j, key);
		return;
	}
	osm_json_obj_begin(j, key);
	for (size_t i = 0; i < d.n; i++) {
		char path[PATH_LEN];
		if (si_pathf(path, sizeof(path), "%s/%s", dir, d.name[i]))
			si_json_file_str(j, d.name[i], path);
	}
	osm_json_obj_end(j);
}

void si_w_clocksource(struct osm_json *j, const char *key)
{
	si_json_file_str(j, key, "/sys/devices/system/clocksource/clocksource0/current_clocksource");
}

/* Trap: the file ends with a blank ("tsc kvm-clock \n"). */
void si_w_available_clocksources(struct osm_json *j, const char *key)
{
	char buf[MEDIUM];
	if (si_read_file_trim("/sys/devices/system/clocksource/clocksource0/available_clocksource",
			   buf, sizeof(buf)))
		si_json_words(j, key, buf, false);
	else
		osm_json_null(j, key);
}

void si_w_perf_event_paranoid(struct osm_json *j, const char *key)
{
	si_json_file_int(j, key, "/proc/sys/kernel/perf_event_paranoid");
}

void si_w_aslr(struct osm_json *j, const char *key)
{
	si_json_file_int(j, key, "/proc/sys/kernel/randomize_va_space");
}

/* ------------------------------------------------------------------------ */
/* The probe itself                                                         */

void si_w_libc(struct osm_json *j, const char *key)
{
#if defined(__GLIBC__)
	char buf[SMALL];
	snprintf(buf, sizeof(buf), "glibc %s", gnu_get_libc_version());
	osm_json_str(j, key, buf);
#else
	/* musl deliberately has no version macro or function. */
	osm_json_null(j, key);
#endif
}

void si_w_build_compiler(struct osm_json *j, const char *key) { osm_json_str(j, key, OSM_BUILD_COMPILER); }
void si_w_build_flags(struct osm_json *j, const char *key) { osm_json_str(j, key, OSM_BUILD_FLAGS); }
void si_w_build_type(struct osm_json *j, const char *key) { osm_json_str(j, key, OSM_BUILD_TYPE); }
void si_w_build_arch(struct osm_json *j, const char *key) { osm_json_str(j, key, OSM_BUILD_ARCH); }

void si_w_build_static(struct osm_json *j, const char *key)
{
#if defined(OSM_BUILD_STATIC)
	osm_json_bool(j, key, OSM_BUILD_STATIC);
#else
	osm_json_null(j, key);
#endif
}
