/* sysinfo.c - the machine description. See sysinfo.h and docs/schema.md.
 *
 * Every field is one entry of the table at the bottom: key, help and a writer
 * that emits the value (or null) through emit.h. The JSON outputs walk the
 * table; the text output renders each writer's JSON, so all three agree.
 *
 * Rules: fixed buffers only; a missing or unreadable file gives null and no
 * message (the probe runs unprivileged, on ARM boards, in containers and
 * under qemu-user); nothing is cached between calls. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* cpu_set_t, fmemopen, strnlen; CMake defines it too */
#endif
#include "sysinfo.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "compiler.h"

#if defined(__GLIBC__)
#include <gnu/libc-version.h>
#endif
#if defined(__x86_64__) || defined(__i386__)
#define OSM_X86 1
#include <cpuid.h>
#endif

#include "build_info.h"

#define SMALL 256          /* one sysfs value */
#define MEDIUM 4096        /* a longer file: /proc/cmdline, vulnerability text */
#define LINE 16384         /* one /proc/cpuinfo line: x86 "flags" is ~2 KB */
#define PATH_LEN 512
#define NAME_LEN 64
#define MAX_ENTRIES 256    /* disks, NICs, vulnerabilities listed at most */
#define MAX_PACKAGES 256
#define MAX_ARM_CORES 8    /* distinct core types (big.LITTLE) */
#define TEXT_BUF 65536     /* one field's JSON, for the text output */

typedef void (*field_writer)(struct osm_json *j, const char *key);

/* ------------------------------------------------------------------------ */
/* Small helpers                                                            */

static bool pathf(char *buf, size_t len, const char *fmt, ...) OSM_PRINTF(3, 4);
static bool pathf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n >= 0 && (size_t)n < len;
}

static void copy_str(char *out, size_t len, const char *s)
{
	if (len == 0)
		return;
	size_t n = strlen(s);
	if (n >= len)
		n = len - 1;
	memcpy(out, s, n);
	out[n] = '\0';
}

/* Strings from firmware and devices (disk models, DMI, device tree) may hold
 * bytes that are not UTF-8. emit.c passes bytes >= 0x80 through unchanged,
 * so one stray byte would make the whole document invalid JSON for a strict
 * reader (Python's json). Replace every byte that is not part of a valid
 * UTF-8 sequence (overlong forms and surrogates included) with '?'. */
static void sanitize_utf8(char *s)
{
	unsigned char *p = (unsigned char *)s;
	while (*p) {
		unsigned char c = *p;
		int n;
		unsigned char lo = 0x80, hi = 0xbf; /* allowed range of byte 2 */
		if (c < 0x80) {
			p++;
			continue;
		} else if (c >= 0xc2 && c <= 0xdf) {
			n = 1;
		} else if (c >= 0xe0 && c <= 0xef) {
			n = 2;
			if (c == 0xe0)
				lo = 0xa0; /* overlong */
			if (c == 0xed)
				hi = 0x9f; /* surrogates */
		} else if (c >= 0xf0 && c <= 0xf4) {
			n = 3;
			if (c == 0xf0)
				lo = 0x90;
			if (c == 0xf4)
				hi = 0x8f;
		} else {
			*p++ = '?';
			continue;
		}
		bool ok = p[1] >= lo && p[1] <= hi;
		for (int k = 2; ok && k <= n; k++)
			ok = (p[k] & 0xc0) == 0x80; /* stops at the NUL: 0 fails */
		if (!ok) {
			*p++ = '?';
			continue;
		}
		p += n + 1;
	}
}

static void trim_inplace(char *s)
{
	size_t n = strlen(s);
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	size_t k = 0;
	while (s[k] && isspace((unsigned char)s[k]))
		k++;
	if (k)
		memmove(s, s + k, n - k + 1);
}

/* Reads at most len bytes of a file. False when it cannot be opened or read
 * (sysfs answers some reads with an error, e.g. EINVAL for the speed of a
 * NIC that is down). */
static bool read_file_raw(const char *path, void *buf, size_t len, size_t *got)
{
	*got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return false;
	size_t n = 0;
	bool ok = true;
	while (n < len) {
		ssize_t r = read(fd, (char *)buf + n, len - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			ok = false;
			break;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	*got = n;
	return ok;
}

/* A text file, whitespace-trimmed, valid UTF-8, cut at len - 1 bytes (and at
 * the first NUL: device-tree strings end with one). */
static bool read_file_trim(const char *path, char *buf, size_t len)
{
	size_t n;
	if (len == 0)
		return false;
	buf[0] = '\0';
	if (!read_file_raw(path, buf, len - 1, &n)) {
		buf[0] = '\0';
		return false;
	}
	buf[n] = '\0';
	trim_inplace(buf);
	sanitize_utf8(buf);
	return true;
}

static bool parse_ll(const char *s, long long *v)
{
	char *end;
	errno = 0;
	long long x = strtoll(s, &end, 10);
	if (errno || end == s)
		return false;
	while (isspace((unsigned char)*end))
		end++;
	if (*end)
		return false;
	*v = x;
	return true;
}

static bool read_int(const char *path, long long *v)
{
	char buf[SMALL];
	return read_file_trim(path, buf, sizeof(buf)) && parse_ll(buf, v);
}

/* The active choice of a sysfs/debugfs selector, e.g. "always [madvise]
 * never" -> "madvise" (open '[') or "none voluntary (full)" -> "full". */
static bool read_marked_choice(const char *path, char open, char close,
			       char *out, size_t len)
{
	char buf[MEDIUM];
	if (!read_file_trim(path, buf, sizeof(buf)))
		return false;
	char *a = strchr(buf, open);
	char *b = a ? strchr(a + 1, close) : NULL;
	if (!b || b == a + 1)
		return false;
	*b = '\0';
	copy_str(out, len, a + 1);
	return true;
}

static bool read_bracketed_choice(const char *path, char *out, size_t len)
{
	return read_marked_choice(path, '[', ']', out, len);
}

static void json_int_or_null(struct osm_json *j, const char *key, bool ok, long long v)
{
	if (ok)
		osm_json_int(j, key, v);
	else
		osm_json_null(j, key);
}

static void json_file_str(struct osm_json *j, const char *key, const char *path)
{
	char buf[MEDIUM];
	osm_json_str(j, key, read_file_trim(path, buf, sizeof(buf)) ? buf : NULL);
}

static void json_file_int(struct osm_json *j, const char *key, const char *path)
{
	long long v = 0;
	bool ok = read_int(path, &v); /* before v is passed: argument order is unspecified */
	json_int_or_null(j, key, ok, v);
}

static void json_file_choice(struct osm_json *j, const char *key, const char *path)
{
	char buf[SMALL];
	osm_json_str(j, key, read_bracketed_choice(path, buf, sizeof(buf)) ? buf : NULL);
}

/* Writes the whitespace-separated words of s as a JSON array. */
static void json_words(struct osm_json *j, const char *key, char *s, bool drop_last)
{
	char *words[1024];
	size_t n = 0;
	char *save = NULL;
	for (char *w = strtok_r(s, " \t\n", &save); w && n < ARRAY_SIZE(words);
	     w = strtok_r(NULL, " \t\n", &save))
		words[n++] = w;
	if (drop_last && n > 0)
		n--;
	osm_json_arr_begin(j, key);
	for (size_t i = 0; i < n; i++)
		osm_json_str(j, NULL, words[i]);
	osm_json_arr_end(j);
}

/* Sorted names of a directory's entries that keep() accepts. */
struct names {
	size_t n;
	char name[MAX_ENTRIES][NAME_LEN];
};

static int cmp_name(const void *a, const void *b)
{
	return strcmp((const char *)a, (const char *)b);
}

static bool list_dir(const char *path, struct names *out,
		     bool (*keep)(const char *dir, const char *name))
{
	out->n = 0;
	DIR *d = opendir(path);
	if (!d)
		return false;
	struct dirent *e;
	while ((e = readdir(d)) != NULL && out->n < MAX_ENTRIES) {
		if (e->d_name[0] == '.' || strlen(e->d_name) >= NAME_LEN)
			continue;
		if (keep && !keep(path, e->d_name))
			continue;
		copy_str(out->name[out->n++], NAME_LEN, e->d_name);
	}
	closedir(d);
	qsort(out->name, out->n, NAME_LEN, cmp_name);
	return true;
}

/* A kernel cpu list, "0-3,8,10-11". */
struct cpulist_iter {
	const char *p;
	long cur, last;
};

static void cpulist_init(struct cpulist_iter *it, const char *s)
{
	it->p = s;
	it->cur = 1;
	it->last = 0;
}

static bool cpulist_next(struct cpulist_iter *it, long *cpu)
{
	if (it->cur <= it->last) {
		*cpu = it->cur++;
		return true;
	}
	while (*it->p == ',' || isspace((unsigned char)*it->p))
		it->p++;
	if (!isdigit((unsigned char)*it->p))
		return false;
	char *end;
	long a = strtol(it->p, &end, 10), b = a;
	if (*end == '-') {
		const char *q = end + 1;
		if (!isdigit((unsigned char)*q))
			return false;
		b = strtol(q, &end, 10);
	}
	if (b < a || b - a > (1L << 20))
		return false;
	it->p = end;
	it->cur = a + 1;
	it->last = b;
	*cpu = a;
	return true;
}

static long cpulist_count(const char *s)
{
	struct cpulist_iter it;
	long cpu, n = 0;
	cpulist_init(&it, s);
	while (cpulist_next(&it, &cpu))
		n++;
	return n;
}

/* ------------------------------------------------------------------------ */
/* /proc/cpuinfo                                                            */
/*
 * Trap: its format depends on the architecture, and under qemu-user it is
 * the HOST's file (qemu 7.2 passes it through), so an aarch64 probe may read
 * x86 "vendor_id"/"flags" lines. Nothing here assumes the build architecture:
 * every known key is tried in turn.
 *   x86:     "vendor_id", "model name", "flags" (first processor block)
 *   aarch64: "CPU implementer", "CPU part", "Features"; no "model name"
 *   arm32:   "model name" ("ARMv7 Processor rev 4 (v7l)"), "Features",
 *            "Hardware" (older kernels), implementer/part as aarch64
 *   power:   "cpu"; riscv: "uarch", "isa"; mips: "cpu model"
 */

/* Reads one whole line; a line longer than the buffer is cut, the rest
 * skipped, and *cut set. */
static bool read_line(FILE *f, char *buf, size_t len, bool *cut)
{
	if (!fgets(buf, (int)len, f))
		return false;
	size_t n = strlen(buf);
	*cut = false;
	if (n > 0 && buf[n - 1] == '\n') {
		buf[n - 1] = '\0';
	} else if (!feof(f)) {
		int c;
		*cut = true;
		while ((c = fgetc(f)) != EOF && c != '\n')
			;
	}
	return true;
}

/* "key<blanks>: value" -> value, else NULL. */
static char *cpuinfo_match(char *line, const char *key)
{
	size_t k = strlen(key);
	if (strncmp(line, key, k) != 0)
		return NULL;
	char *p = line + k;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p != ':')
		return NULL;
	p++;
	trim_inplace(p);
	return p;
}

/* The value of the first line with this key. *cut (optional) says the value
 * did not fit whole. */
static bool cpuinfo_value(const char *key, char *out, size_t len, bool *cut_out)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	if (!f)
		return false;
	char line[LINE];
	bool cut, found = false;
	while (read_line(f, line, sizeof(line), &cut)) {
		char *v = cpuinfo_match(line, key);
		if (!v)
			continue;
		if (cut_out)
			*cut_out = cut || strlen(v) >= len;
		copy_str(out, len, v);
		sanitize_utf8(out);
		found = true;
		break;
	}
	fclose(f);
	return found;
}

static bool cpuinfo_has(const char *key)
{
	char buf[8];
	return cpuinfo_value(key, buf, sizeof(buf), NULL);
}

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
	while (read_line(f, line, sizeof(line), &cut)) {
		char *v;
		if ((v = cpuinfo_match(line, "CPU implementer"))) {
			cur_impl = strtol(v, NULL, 0);
		} else if ((v = cpuinfo_match(line, "CPU part")) && cur_impl >= 0) {
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
/* Field writers: identity and kernel                                       */

static void w_hostname(struct osm_json *j, const char *key)
{
	struct utsname u;
	if (uname(&u) == 0) {
		sanitize_utf8(u.nodename);
		osm_json_str(j, key, u.nodename);
	} else {
		osm_json_null(j, key);
	}
}

static void w_os(struct osm_json *j, const char *key)
{
	static const char *const files[] = {"/etc/os-release", "/usr/lib/os-release"};
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		FILE *f = fopen(files[i], "re");
		if (!f)
			continue;
		char line[SMALL * 2];
		bool cut;
		while (read_line(f, line, sizeof(line), &cut)) {
			if (strncmp(line, "PRETTY_NAME=", 12) != 0)
				continue;
			char *v = line + 12;
			size_t n = strlen(v);
			if (n >= 2 && (v[0] == '"' || v[0] == '\'') && v[n - 1] == v[0]) {
				v[n - 1] = '\0';
				v++;
			}
			sanitize_utf8(v);
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
	sanitize_utf8(s);
	osm_json_str(j, key, s);
}

static void w_kernel_release(struct osm_json *j, const char *key) { w_uts(j, key, UTS_RELEASE); }
static void w_kernel_version(struct osm_json *j, const char *key) { w_uts(j, key, UTS_VERSION); }
static void w_arch(struct osm_json *j, const char *key) { w_uts(j, key, UTS_MACHINE); }

static void w_kernel_cmdline(struct osm_json *j, const char *key)
{
	json_file_str(j, key, "/proc/cmdline");
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
static bool cmdline_param(const char *name, char *out, size_t len)
{
	char buf[MEDIUM];
	if (!read_file_trim("/proc/cmdline", buf, sizeof(buf)))
		return false;
	size_t k = strlen(name);
	char *save = NULL;
	for (char *w = strtok_r(buf, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		if (strcmp(w, "--") == 0)
			break; /* the rest goes to init */
		if (strncmp(w, name, k) == 0 && w[k] == '=') {
			copy_str(out, len, w + k + 1);
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
	if (read_marked_choice("/sys/kernel/debug/sched/preempt", '(', ')', out, len))
		return "debugfs";
	struct utsname u;
	if (uname(&u) != 0)
		return NULL;
	if (uname_has_word("PREEMPT_RT")) {
		copy_str(out, len, "rt");
	} else if (uname_has_word("PREEMPT_DYNAMIC")) {
		if (cmdline_param("preempt", out, len) && out[0])
			return "cmdline";
		copy_str(out, len, "dynamic");
	} else if (uname_has_word("PREEMPT")) {
		copy_str(out, len, "full");
	} else {
		copy_str(out, len, "none_or_voluntary");
	}
	return "uname";
}

static void w_preemption(struct osm_json *j, const char *key)
{
	char buf[SMALL];
	osm_json_str(j, key, preemption(buf, sizeof(buf)) ? buf : NULL);
}

static void w_preemption_source(struct osm_json *j, const char *key)
{
	char buf[SMALL];
	osm_json_str(j, key, preemption(buf, sizeof(buf)));
}

/* ------------------------------------------------------------------------ */
/* CPU                                                                      */

static void w_cpu_model(struct osm_json *j, const char *key)
{
	char buf[SMALL * 2];
	bool have_name = cpuinfo_value("model name", buf, sizeof(buf), NULL);
	/* arm32 "model name" is only "ARMv7 Processor rev 4 (v7l)": the decoded
	 * implementer/part says more. */
	if (!have_name || strncmp(buf, "ARMv", 4) == 0) {
		char arm[SMALL * 2];
		if (arm_model(arm, sizeof(arm))) {
			osm_json_str(j, key, arm);
			return;
		}
	}
	if (have_name || cpuinfo_value("Hardware", buf, sizeof(buf), NULL) ||
	    cpuinfo_value("cpu model", buf, sizeof(buf), NULL) ||
	    cpuinfo_value("uarch", buf, sizeof(buf), NULL) ||
	    cpuinfo_value("cpu", buf, sizeof(buf), NULL))
		osm_json_str(j, key, buf);
	else
		osm_json_null(j, key);
}

static void w_cpu_vendor(struct osm_json *j, const char *key)
{
	char buf[SMALL];
	if (cpuinfo_value("vendor_id", buf, sizeof(buf), NULL) ||
	    cpuinfo_value("vendor", buf, sizeof(buf), NULL)) {
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

static void w_board(struct osm_json *j, const char *key)
{
	char buf[SMALL], vendor[SMALL];
	/* ARM boards: the device tree names the board ("Raspberry Pi 4 Model B"). */
	if (read_file_trim("/proc/device-tree/model", buf, sizeof(buf)) && buf[0]) {
		osm_json_str(j, key, buf);
		return;
	}
	if (read_file_trim("/sys/class/dmi/id/product_name", buf, sizeof(buf)) && buf[0]) {
		char both[2 * SMALL + 2];
		if (read_file_trim("/sys/class/dmi/id/sys_vendor", vendor, sizeof(vendor)) && vendor[0])
			snprintf(both, sizeof(both), "%s %s", vendor, buf);
		else
			copy_str(both, sizeof(both), buf);
		osm_json_str(j, key, both);
		return;
	}
	osm_json_null(j, key);
}

static void w_cpu_flags(struct osm_json *j, const char *key)
{
	char buf[LINE];
	bool cut = false;
	if (cpuinfo_value("flags", buf, sizeof(buf), &cut) ||
	    cpuinfo_value("Features", buf, sizeof(buf), &cut))
		json_words(j, key, buf, cut); /* a cut line ends with half a word */
	else
		osm_json_null(j, key);
}

static bool online_cpus(char *buf, size_t len)
{
	return read_file_trim("/sys/devices/system/cpu/online", buf, len) && buf[0];
}

static void w_cpus_online(struct osm_json *j, const char *key)
{
	char buf[MEDIUM];
	long n = online_cpus(buf, sizeof(buf)) ? cpulist_count(buf) : 0;
	if (n <= 0)
		n = sysconf(_SC_NPROCESSORS_ONLN);
	json_int_or_null(j, key, n > 0, n);
}

/* Trap: cpu_set_t holds 1024 CPUs; on a bigger machine sched_getaffinity
 * fails with EINVAL and the field is null. */
static void w_cpus_allowed(struct osm_json *j, const char *key)
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
	struct cpulist_iter it;
	long cpu;
	t->sockets = t->cores = t->threads = 0;
	cpulist_init(&it, online);
	while (cpulist_next(&it, &cpu)) {
		char path[PATH_LEN], sib[MEDIUM];
		long long pkg;
		if (!pathf(path, sizeof(path),
			   "/sys/devices/system/cpu/cpu%ld/topology/physical_package_id", cpu) ||
		    !read_int(path, &pkg))
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
		if (!(pathf(path, sizeof(path),
			    "/sys/devices/system/cpu/cpu%ld/topology/core_cpus_list", cpu) &&
		      read_file_trim(path, sib, sizeof(sib))) &&
		    !(pathf(path, sizeof(path),
			    "/sys/devices/system/cpu/cpu%ld/topology/thread_siblings_list", cpu) &&
		      read_file_trim(path, sib, sizeof(sib))))
			return false;
		struct cpulist_iter si;
		long first;
		cpulist_init(&si, sib);
		if (!cpulist_next(&si, &first))
			return false;
		if (first == cpu)
			t->cores++;
		long n = cpulist_count(sib);
		if (n > t->threads)
			t->threads = n;
	}
	t->sockets = (long)npkg;
	return t->sockets > 0 && t->cores > 0;
}

static void w_sockets(struct osm_json *j, const char *key)
{
	struct topology t = {0, 0, 0};
	bool ok = topology(&t);
	json_int_or_null(j, key, ok, t.sockets);
}

static void w_cores_per_socket(struct osm_json *j, const char *key)
{
	struct topology t = {0, 0, 0};
	bool ok = topology(&t) && t.cores % t.sockets == 0;
	json_int_or_null(j, key, ok, ok ? t.cores / t.sockets : 0);
}

static void w_threads_per_core(struct osm_json *j, const char *key)
{
	struct topology t = {0, 0, 0};
	bool ok = topology(&t);
	json_int_or_null(j, key, ok, t.threads);
}

static void w_smt_control(struct osm_json *j, const char *key)
{
	json_file_str(j, key, "/sys/devices/system/cpu/smt/control");
}

static void w_isolated_cpus(struct osm_json *j, const char *key)
{
	json_file_str(j, key, "/sys/devices/system/cpu/isolated");
}

/* Trap: without nohz_full= some kernels print "(null)" here (a %*pbl of an
 * unallocated mask); that means no CPU. */
static void w_nohz_full_cpus(struct osm_json *j, const char *key)
{
	char buf[MEDIUM];
	if (!read_file_trim("/sys/devices/system/cpu/nohz_full", buf, sizeof(buf)))
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
static void w_caches(struct osm_json *j, const char *key)
{
	static const char base[] = "/sys/devices/system/cpu/cpu0/cache";
	char path[PATH_LEN], buf[MEDIUM];
	struct stat st;
	if (!pathf(path, sizeof(path), "%s/index0", base) || stat(path, &st) != 0) {
		osm_json_null(j, key);
		return;
	}
	osm_json_arr_begin(j, key);
	for (int i = 0; i < 64; i++) {
		long long v = 0;
		if (!pathf(path, sizeof(path), "%s/index%d", base, i) || stat(path, &st) != 0)
			break;
		osm_json_obj_begin(j, NULL);
		pathf(path, sizeof(path), "%s/index%d/level", base, i);
		json_file_int(j, "level", path);
		pathf(path, sizeof(path), "%s/index%d/type", base, i);
		json_file_str(j, "type", path);
		pathf(path, sizeof(path), "%s/index%d/size", base, i);
		bool ok = read_file_trim(path, buf, sizeof(buf)) && parse_size(buf, &v);
		json_int_or_null(j, "size_bytes", ok, v);
		pathf(path, sizeof(path), "%s/index%d/coherency_line_size", base, i);
		json_file_int(j, "line_bytes", path);
		pathf(path, sizeof(path), "%s/index%d/ways_of_associativity", base, i);
		json_file_int(j, "ways", path);
		pathf(path, sizeof(path), "%s/index%d/shared_cpu_list", base, i);
		json_file_str(j, "shared_cpu_list", path);
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

static void w_numa_nodes(struct osm_json *j, const char *key)
{
	struct names nodes;
	bool ok = list_dir("/sys/devices/system/node", &nodes, keep_node) && nodes.n > 0;
	json_int_or_null(j, key, ok, (long long)nodes.n);
}

/* cpufreq is absent in most VMs and on boards without a driver: null. */
static void w_cpufreq_driver(struct osm_json *j, const char *key)
{
	json_file_str(j, key, "/sys/devices/system/cpu/cpu0/cpufreq/scaling_driver");
}

static void w_cpufreq_governor(struct osm_json *j, const char *key)
{
	json_file_str(j, key, "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
}

static void json_khz_as_mhz(struct osm_json *j, const char *key, const char *path)
{
	long long khz;
	if (read_int(path, &khz) && khz > 0)
		osm_json_num(j, key, (double)khz / 1000.0);
	else
		osm_json_null(j, key);
}

static void w_cpu_max_mhz(struct osm_json *j, const char *key)
{
	json_khz_as_mhz(j, key, "/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
}

static void w_cpu_min_mhz(struct osm_json *j, const char *key)
{
	json_khz_as_mhz(j, key, "/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_min_freq");
}

/* Turbo/boost: intel_pstate says it the other way round (no_turbo). */
static void w_cpu_boost(struct osm_json *j, const char *key)
{
	long long v;
	if (read_int("/sys/devices/system/cpu/intel_pstate/no_turbo", &v))
		osm_json_bool(j, key, v == 0);
	else if (read_int("/sys/devices/system/cpu/cpufreq/boost", &v) ||
		 read_int("/sys/devices/system/cpu/cpu0/cpufreq/boost", &v))
		osm_json_bool(j, key, v != 0);
	else
		osm_json_null(j, key);
}

static void w_cpuidle_driver(struct osm_json *j, const char *key)
{
	json_file_str(j, key, "/sys/devices/system/cpu/cpuidle/current_driver");
}

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
	while (read_line(f, line, sizeof(line), &cut)) {
		if (strncmp(line, name, k) == 0 && line[k] == ':') {
			found = sscanf(line + k + 1, "%lld", kb) == 1;
			break;
		}
	}
	fclose(f);
	return found;
}

/* Trap: in a container MemTotal is the host's; see cgroup_memory_limit. */
static void w_memory_bytes(struct osm_json *j, const char *key)
{
	long long kb = 0;
	bool ok = meminfo_kb("MemTotal", &kb);
	json_int_or_null(j, key, ok, kb * 1024);
}

static void w_hugepage_size_bytes(struct osm_json *j, const char *key)
{
	long long kb = 0;
	bool ok = meminfo_kb("Hugepagesize", &kb);
	json_int_or_null(j, key, ok, kb * 1024);
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
		if (!pathf(path, sizeof(path), "/sys/firmware/dmi/entries/17-%d/raw", i) ||
		    !read_file_raw(path, raw, sizeof(raw), &n))
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
			copy_str(out, len, t);
		return true;
	}
	return false;
}

static void w_memory_type(struct osm_json *j, const char *key)
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
	while (!found && read_line(f, line, sizeof(line), &cut)) {
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
			copy_str(list, sizeof(list), ctrls);
			for (char *w = strtok_r(list, ",", &save); w && !found;
			     w = strtok_r(NULL, ",", &save))
				found = strcmp(w, controller) == 0;
		}
		if (found)
			copy_str(out, len, c2 + 1);
	}
	fclose(f);
	return found;
}

static bool cgroup_walk(const char *mount, const char *cgpath, cg_reader rd, double *out)
{
	char rel[PATH_LEN];
	bool found = false;
	copy_str(rel, sizeof(rel), cgpath[0] == '/' ? cgpath : "/");
	for (;;) {
		char dir[PATH_LEN];
		double v;
		if (pathf(dir, sizeof(dir), "%s%s", mount, strcmp(rel, "/") == 0 ? "" : rel) &&
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
	if (!pathf(path, sizeof(path), "%s/memory.limit_in_bytes", dir) || !read_int(path, &x) ||
	    x <= 0 || x >= (1LL << 62))
		return false;
	*v = (double)x;
	return true;
}

static bool cg_mem_v2(const char *dir, double *v)
{
	char path[PATH_LEN], buf[SMALL];
	long long x;
	if (!pathf(path, sizeof(path), "%s/memory.max", dir) ||
	    !read_file_trim(path, buf, sizeof(buf)) || !parse_ll(buf, &x) || x <= 0)
		return false; /* "max" = unlimited */
	*v = (double)x;
	return true;
}

static bool cg_cpu_v1(const char *dir, double *v)
{
	char path[PATH_LEN];
	long long quota, period;
	if (!pathf(path, sizeof(path), "%s/cpu.cfs_quota_us", dir) || !read_int(path, &quota) ||
	    quota <= 0 || /* -1 = unlimited */
	    !pathf(path, sizeof(path), "%s/cpu.cfs_period_us", dir) || !read_int(path, &period) ||
	    period <= 0)
		return false;
	*v = (double)quota / (double)period;
	return true;
}

static bool cg_cpu_v2(const char *dir, double *v)
{
	char path[PATH_LEN], buf[SMALL];
	long long quota, period;
	if (!pathf(path, sizeof(path), "%s/cpu.max", dir) || !read_file_trim(path, buf, sizeof(buf)) ||
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

static void w_cgroup_memory_limit(struct osm_json *j, const char *key)
{
	static const char *const mounts[] = {"/sys/fs/cgroup/memory", NULL};
	double v;
	bool ok = cgroup_limit("memory", mounts, cg_mem_v1, cg_mem_v2, &v);
	json_int_or_null(j, key, ok, ok ? (long long)v : 0);
}

static void w_cgroup_cpu_limit(struct osm_json *j, const char *key)
{
	static const char *const mounts[] = {"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct", NULL};
	double v;
	if (cgroup_limit("cpu", mounts, cg_cpu_v1, cg_cpu_v2, &v))
		osm_json_num(j, key, v);
	else
		osm_json_null(j, key);
}

static void w_thp_enabled(struct osm_json *j, const char *key)
{
	json_file_choice(j, key, "/sys/kernel/mm/transparent_hugepage/enabled");
}

static void w_thp_defrag(struct osm_json *j, const char *key)
{
	json_file_choice(j, key, "/sys/kernel/mm/transparent_hugepage/defrag");
}

static void w_fault_around_bytes(struct osm_json *j, const char *key)
{
	json_file_int(j, key, "/sys/kernel/debug/fault_around_bytes");
}

/* ------------------------------------------------------------------------ */
/* Devices                                                                  */

static bool keep_disk(const char *dir, const char *name)
{
	char path[PATH_LEN];
	long long sectors;
	if (strncmp(name, "loop", 4) == 0 || strncmp(name, "ram", 3) == 0)
		return false;
	/* Devices without media (empty nbd*, an empty CD drive) are size 0. */
	return pathf(path, sizeof(path), "%s/%s/size", dir, name) && read_int(path, &sectors) &&
	       sectors > 0;
}

static void w_disks(struct osm_json *j, const char *key)
{
	struct names d;
	if (!list_dir("/sys/block", &d, keep_disk)) {
		osm_json_null(j, key);
		return;
	}
	osm_json_arr_begin(j, key);
	for (size_t i = 0; i < d.n; i++) {
		char path[PATH_LEN], buf[SMALL];
		long long v = 0;
		osm_json_obj_begin(j, NULL);
		osm_json_str(j, "name", d.name[i]);
		/* Trap: "size" counts 512-byte sectors whatever the block size. */
		bool ok = pathf(path, sizeof(path), "/sys/block/%s/size", d.name[i]) && read_int(path, &v);
		json_int_or_null(j, "size_bytes", ok, v * 512);
		ok = pathf(path, sizeof(path), "/sys/block/%s/queue/rotational", d.name[i]) &&
		     read_int(path, &v);
		if (ok)
			osm_json_bool(j, "rotational", v != 0);
		else
			osm_json_null(j, "rotational");
		/* virtio disks have no model; SCSI pads it with blanks (trimmed). */
		ok = pathf(path, sizeof(path), "/sys/block/%s/device/model", d.name[i]) &&
		     read_file_trim(path, buf, sizeof(buf)) && buf[0];
		osm_json_str(j, "model", ok ? buf : NULL);
		ok = pathf(path, sizeof(path), "/sys/block/%s/queue/scheduler", d.name[i]) &&
		     read_bracketed_choice(path, buf, sizeof(buf));
		osm_json_str(j, "scheduler", ok ? buf : NULL);
		osm_json_obj_end(j);
	}
	osm_json_arr_end(j);
}

/* Trap: /sys/class/net holds the regular file "bonding_masters" when the
 * bonding module is loaded; interfaces are (symlinks to) directories. */
static bool keep_nic(const char *dir, const char *name)
{
	char path[PATH_LEN];
	struct stat st;
	return pathf(path, sizeof(path), "%s/%s", dir, name) && stat(path, &st) == 0 &&
	       S_ISDIR(st.st_mode);
}

static void w_nics(struct osm_json *j, const char *key)
{
	struct names d;
	if (!list_dir("/sys/class/net", &d, keep_nic)) {
		osm_json_null(j, key);
		return;
	}
	osm_json_arr_begin(j, key);
	for (size_t i = 0; i < d.n; i++) {
		char path[PATH_LEN], buf[PATH_LEN];
		long long v = 0;
		osm_json_obj_begin(j, NULL);
		osm_json_str(j, "name", d.name[i]);
		bool ok = pathf(path, sizeof(path), "/sys/class/net/%s/operstate", d.name[i]) &&
			  read_file_trim(path, buf, sizeof(buf));
		osm_json_str(j, "operstate", ok ? buf : NULL);
		/* Reading speed fails (EINVAL) when the link is down, and is -1
		 * for virtual NICs: both null. */
		ok = pathf(path, sizeof(path), "/sys/class/net/%s/speed", d.name[i]) &&
		     read_int(path, &v) && v > 0;
		json_int_or_null(j, "speed_mbps", ok, v);
		ok = pathf(path, sizeof(path), "/sys/class/net/%s/mtu", d.name[i]) && read_int(path, &v);
		json_int_or_null(j, "mtu", ok, v);
		ssize_t n = -1;
		if (pathf(path, sizeof(path), "/sys/class/net/%s/device/driver", d.name[i]))
			n = readlink(path, buf, sizeof(buf) - 1);
		if (n > 0) {
			buf[n] = '\0';
			const char *base = strrchr(buf, '/');
			osm_json_str(j, "driver", base ? base + 1 : buf);
		} else {
			osm_json_null(j, "driver");
		}
		osm_json_obj_end(j);
	}
	osm_json_arr_end(j);
}

/* ------------------------------------------------------------------------ */
/* Kernel settings                                                          */

static void w_mitigations(struct osm_json *j, const char *key)
{
	static const char dir[] = "/sys/devices/system/cpu/vulnerabilities";
	struct names d;
	if (!list_dir(dir, &d, NULL) || d.n == 0) {
		osm_json_null(j, key);
		return;
	}
	osm_json_obj_begin(j, key);
	for (size_t i = 0; i < d.n; i++) {
		char path[PATH_LEN];
		if (pathf(path, sizeof(path), "%s/%s", dir, d.name[i]))
			json_file_str(j, d.name[i], path);
	}
	osm_json_obj_end(j);
}

static void w_clocksource(struct osm_json *j, const char *key)
{
	json_file_str(j, key, "/sys/devices/system/clocksource/clocksource0/current_clocksource");
}

/* Trap: the file ends with a blank ("tsc kvm-clock \n"). */
static void w_available_clocksources(struct osm_json *j, const char *key)
{
	char buf[MEDIUM];
	if (read_file_trim("/sys/devices/system/clocksource/clocksource0/available_clocksource",
			   buf, sizeof(buf)))
		json_words(j, key, buf, false);
	else
		osm_json_null(j, key);
}

#if defined(OSM_X86)
/* CPUID leaf 1 ECX bit 31 says a hypervisor is present; leaf 0x40000000
 * names it. KVM with Hyper-V enlightenments shows "Microsoft Hv" there and
 * its own signature at 0x40000100. */
static const char *x86_hypervisor(bool *present)
{
	static const struct {
		char sig[13];
		const char *name;
	} sigs[] = {
		{"KVMKVMKVM\0\0\0", "kvm"},    {"Microsoft Hv", "hyperv"}, {"VMwareVMware", "vmware"},
		{"XenVMMXenVMM", "xen"},       {"TCGTCGTCGTCG", "qemu"},   {" lrpepyh  vr", "parallels"},
		{"bhyve bhyve ", "bhyve"},     {"ACRNACRNACRN", "acrn"},   {"VBoxVBoxVBox", "virtualbox"},
		{"Jailhouse\0\0\0", "jailhouse"},
	};
	unsigned a, b, c, d;
	*present = false;
	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 31)))
		return NULL;
	*present = true;
	const char *found = NULL;
	for (unsigned leaf = 0x40000000; leaf <= 0x40000100; leaf += 0x100) {
		char sig[12];
		__cpuid(leaf, a, b, c, d);
		memcpy(sig, &b, 4);
		memcpy(sig + 4, &c, 4);
		memcpy(sig + 8, &d, 4);
		for (size_t i = 0; i < ARRAY_SIZE(sigs); i++)
			if (memcmp(sig, sigs[i].sig, 12) == 0) {
				if (leaf == 0x40000000)
					found = sigs[i].name;
				else if (strcmp(sigs[i].name, "kvm") == 0)
					found = "kvm";
			}
		if (!found || strcmp(found, "hyperv") != 0)
			break;
	}
	return found;
}
#endif

/* Finds needle in a buffer of NUL-separated strings (device-tree lists). */
static bool dt_list_has(const char *buf, size_t n, const char *needle)
{
	size_t k = strlen(needle);
	for (size_t i = 0; i < n;) {
		size_t len = strnlen(buf + i, n - i);
		if (len == k && memcmp(buf + i, needle, k) == 0)
			return true;
		i += len + 1;
	}
	return false;
}

static const char *dmi_hypervisor(const char *vendor, const char *product)
{
	if (strstr(product, "KVM"))
		return "kvm";
	if (strstr(vendor, "QEMU"))
		return "qemu"; /* KVM or TCG: DMI cannot tell */
	if (strstr(vendor, "Microsoft Corporation") && strstr(product, "Virtual Machine"))
		return "hyperv";
	if (strstr(vendor, "VMware"))
		return "vmware";
	if (strstr(vendor, "innotek") || strstr(product, "VirtualBox"))
		return "virtualbox";
	if (strstr(vendor, "Xen"))
		return "xen";
	if (strstr(vendor, "Parallels"))
		return "parallels";
	if (strstr(vendor, "Bochs"))
		return "bochs";
	/* Trap: EC2 bare-metal instances ("m5.metal") also say "Amazon EC2". */
	if (strstr(vendor, "Amazon EC2") && !strstr(product, ".metal"))
		return "amazon";
	if (strstr(product, "Google Compute Engine"))
		return "google";
	return NULL;
}

/* "kvm", "xen", ... when a hypervisor is seen; "none" when a source that
 * would show one (x86 CPUID, DMI, device tree) shows none; null when there is
 * no such source. */
static bool virtualization(char *out, size_t len)
{
	bool evidence = false;
	char buf[SMALL], product[SMALL];
	size_t n;
#if defined(OSM_X86)
	bool present;
	const char *h = x86_hypervisor(&present);
	if (present) {
		copy_str(out, len, h ? h : "other");
		return true;
	}
	evidence = true; /* still look at DMI: a hypervisor can hide the bit */
#endif
	if (read_file_trim("/sys/hypervisor/type", buf, sizeof(buf)) && buf[0]) {
		copy_str(out, len, buf);
		return true;
	}
	if (read_file_raw("/proc/device-tree/hypervisor/compatible", buf, sizeof(buf) - 1, &n) && n) {
		buf[n] = '\0';
		copy_str(out, len, strncmp(buf, "xen", 3) == 0 ? "xen" : "other");
		return true;
	}
	if (read_file_raw("/proc/device-tree/compatible", buf, sizeof(buf), &n) && n) {
		evidence = true;
		if (dt_list_has(buf, n, "linux,dummy-virt")) { /* qemu -M virt */
			copy_str(out, len, "qemu");
			return true;
		}
	}
	bool v_ok = read_file_trim("/sys/class/dmi/id/sys_vendor", buf, sizeof(buf));
	bool p_ok = read_file_trim("/sys/class/dmi/id/product_name", product, sizeof(product));
	if (v_ok || p_ok) {
		evidence = true;
		const char *d = dmi_hypervisor(v_ok ? buf : "", p_ok ? product : "");
		if (d) {
			copy_str(out, len, d);
			return true;
		}
	}
#if !defined(OSM_X86)
	/* An x86 flag on a non-x86 probe: the host's cpuinfo seen through
	 * qemu-user, and that host is a VM. */
	char flags[LINE];
	if (cpuinfo_value("flags", flags, sizeof(flags), NULL)) {
		char *save = NULL;
		for (char *w = strtok_r(flags, " ", &save); w; w = strtok_r(NULL, " ", &save))
			if (strcmp(w, "hypervisor") == 0) {
				copy_str(out, len, "other");
				return true;
			}
	}
#endif
	if (evidence)
		copy_str(out, len, "none");
	return evidence;
}

static void w_virtualization(struct osm_json *j, const char *key)
{
	char buf[SMALL];
	osm_json_str(j, key, virtualization(buf, sizeof(buf)) ? buf : NULL);
}

/* qemu-user runs the probe on another architecture's CPU and (qemu 7.2)
 * shows the host's /proc/cpuinfo: a cpuinfo of another family than the
 * probe's build is the sign. Newer qemu versions fake the guest's cpuinfo
 * for some targets; then this says "none". */
static void w_emulation(struct osm_json *j, const char *key)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	if (!f) {
		osm_json_null(j, key);
		return;
	}
	fclose(f);
	bool x86_info = cpuinfo_has("vendor_id") && cpuinfo_has("flags");
	bool arm_info = cpuinfo_has("CPU implementer");
	bool other;
#if defined(OSM_X86)
	other = arm_info && !x86_info;
#else
	other = x86_info && !arm_info;
#if !defined(__aarch64__) && !defined(__arm__)
	other = other || arm_info;
#endif
#endif
	osm_json_str(j, key, other ? "qemu-user" : "none");
}

static bool cgroup1_hint(char *out, size_t len)
{
	static const struct {
		const char *hint, *name;
	} hints[] = {
		{"kubepods", "kubernetes"}, {"libpod", "podman"}, {"docker", "docker"},
		{"lxc", "lxc"},             {"containerd", "containerd"},
	};
	FILE *f = fopen("/proc/1/cgroup", "re");
	if (!f)
		return false;
	char line[MEDIUM];
	bool cut, found = false;
	while (!found && read_line(f, line, sizeof(line), &cut))
		for (size_t i = 0; i < ARRAY_SIZE(hints) && !found; i++)
			if (strstr(line, hints[i].hint)) {
				copy_str(out, len, hints[i].name);
				found = true;
			}
	fclose(f);
	return found;
}

/* "none" means no sign was found: a cgroup-v2 container with its own cgroup
 * namespace and no marker file looks like a host. */
static void w_container(struct osm_json *j, const char *key)
{
	char buf[SMALL];
	if (read_file_trim("/run/systemd/container", buf, sizeof(buf)) && buf[0])
		osm_json_str(j, key, buf);
	else if (access("/run/.containerenv", F_OK) == 0)
		osm_json_str(j, key, "podman");
	else if (access("/.dockerenv", F_OK) == 0)
		osm_json_str(j, key, "docker");
	else if (cgroup1_hint(buf, sizeof(buf)))
		osm_json_str(j, key, buf);
	else
		osm_json_str(j, key, "none");
}

static void w_perf_event_paranoid(struct osm_json *j, const char *key)
{
	json_file_int(j, key, "/proc/sys/kernel/perf_event_paranoid");
}

static void w_aslr(struct osm_json *j, const char *key)
{
	json_file_int(j, key, "/proc/sys/kernel/randomize_va_space");
}

/* ------------------------------------------------------------------------ */
/* The probe itself                                                         */

static void w_libc(struct osm_json *j, const char *key)
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

static void w_build_compiler(struct osm_json *j, const char *key) { osm_json_str(j, key, OSM_BUILD_COMPILER); }
static void w_build_flags(struct osm_json *j, const char *key) { osm_json_str(j, key, OSM_BUILD_FLAGS); }
static void w_build_type(struct osm_json *j, const char *key) { osm_json_str(j, key, OSM_BUILD_TYPE); }
static void w_build_arch(struct osm_json *j, const char *key) { osm_json_str(j, key, OSM_BUILD_ARCH); }

static void w_build_static(struct osm_json *j, const char *key)
{
#if defined(OSM_BUILD_STATIC)
	osm_json_bool(j, key, OSM_BUILD_STATIC);
#else
	osm_json_null(j, key);
#endif
}

/* ------------------------------------------------------------------------ */
/* The table                                                                */

static const struct field {
	const char *key;
	const char *help;
	field_writer write;
} fields[] = {
	{"hostname", "Host name (uname nodename)", w_hostname},
	{"os", "Distribution (PRETTY_NAME of /etc/os-release)", w_os},
	{"kernel_release", "Kernel release (uname -r)", w_kernel_release},
	{"kernel_version", "Kernel build string (uname -v)", w_kernel_version},
	{"arch", "Machine architecture as the kernel reports it (uname -m; the emulated one under qemu-user)", w_arch},
	{"kernel_cmdline", "Kernel command line (/proc/cmdline)", w_kernel_cmdline},
	{"preemption", "Preemption model: none/voluntary/full/lazy (exact, from debugfs or preempt=), rt, full, dynamic (default not known) or none_or_voluntary (from uname -v)", w_preemption},
	{"preemption_source", "Where preemption was read: debugfs (/sys/kernel/debug/sched/preempt), cmdline (preempt=) or uname", w_preemption_source},
	{"cpu_model", "CPU model (/proc/cpuinfo model name; on ARM the decoded CPU implementer/part, core types joined by ' + '; else Hardware)", w_cpu_model},
	{"cpu_vendor", "CPU vendor (/proc/cpuinfo vendor_id, or the ARM implementer)", w_cpu_vendor},
	{"board", "Board or system model (device-tree model, or DMI vendor and product name)", w_board},
	{"cpu_flags", "CPU feature flags of the first CPU (/proc/cpuinfo flags on x86, Features on ARM)", w_cpu_flags},
	{"cpus_online", "Online logical CPUs (/sys/devices/system/cpu/online)", w_cpus_online},
	{"cpus_allowed", "Logical CPUs this process may run on (sched_getaffinity: taskset, cpusets)", w_cpus_allowed},
	{"sockets", "CPU packages: distinct physical_package_id of the online CPUs", w_sockets},
	{"cores_per_socket", "Physical cores per package (from sysfs topology; null if packages differ)", w_cores_per_socket},
	{"threads_per_core", "Hardware threads per core (largest thread-sibling list; 1 = no SMT)", w_threads_per_core},
	{"smt_control", "SMT state (/sys/devices/system/cpu/smt/control: on, off, forceoff, notsupported, notimplemented)", w_smt_control},
	{"isolated_cpus", "CPUs isolated from the scheduler (isolcpus=), as a cpu list; empty = none", w_isolated_cpus},
	{"nohz_full_cpus", "CPUs in adaptive-tick mode (nohz_full=), as a cpu list; empty = none; null if the kernel lacks NO_HZ_FULL", w_nohz_full_cpus},
	{"caches", "Caches seen by CPU 0 (/sys/devices/system/cpu/cpu0/cache/index*)", w_caches},
	{"numa_nodes", "NUMA nodes (/sys/devices/system/node/node*)", w_numa_nodes},
	{"cpufreq_driver", "CPU frequency driver of CPU 0 (null without cpufreq, as in most VMs)", w_cpufreq_driver},
	{"cpufreq_governor", "CPU frequency governor of CPU 0", w_cpufreq_governor},
	{"cpu_max_mhz", "Highest CPU 0 frequency in MHz (cpufreq cpuinfo_max_freq)", w_cpu_max_mhz},
	{"cpu_min_mhz", "Lowest CPU 0 frequency in MHz (cpufreq cpuinfo_min_freq)", w_cpu_min_mhz},
	{"cpu_boost", "Turbo/boost enabled (intel_pstate no_turbo inverted, or cpufreq boost)", w_cpu_boost},
	{"cpuidle_driver", "CPU idle driver (/sys/devices/system/cpu/cpuidle/current_driver)", w_cpuidle_driver},
	{"memory_bytes", "Physical memory seen by the kernel (MemTotal; the host's inside a container)", w_memory_bytes},
	{"memory_type", "Memory type and speed of the first populated slot (SMBIOS type 17; root only)", w_memory_type},
	{"cgroup_memory_limit_bytes", "Smallest cgroup memory limit over this process's cgroup and its parents; null if none", w_cgroup_memory_limit},
	{"cgroup_cpu_limit", "cgroup CPU bandwidth limit in CPUs (quota/period, smallest over parents); null if none", w_cgroup_cpu_limit},
	{"hugepage_size_bytes", "Default huge page size (Hugepagesize in /proc/meminfo)", w_hugepage_size_bytes},
	{"thp_enabled", "Transparent huge pages mode (/sys/kernel/mm/transparent_hugepage/enabled)", w_thp_enabled},
	{"thp_defrag", "Transparent huge pages defrag mode (/sys/kernel/mm/transparent_hugepage/defrag)", w_thp_defrag},
	{"fault_around_bytes", "Page fault-around size (/sys/kernel/debug/fault_around_bytes; root and debugfs only)", w_fault_around_bytes},
	{"disks", "Block devices (/sys/block, without loop*, ram* and empty devices); size_bytes, rotational, model, I/O scheduler", w_disks},
	{"nics", "Network interfaces (/sys/class/net): operstate, link speed (null if down or virtual), MTU, driver", w_nics},
	{"mitigations", "CPU vulnerability status per issue (/sys/devices/system/cpu/vulnerabilities)", w_mitigations},
	{"clocksource", "Current kernel clocksource", w_clocksource},
	{"available_clocksources", "Clocksources the kernel could use", w_available_clocksources},
	{"virtualization", "Hypervisor (x86 CPUID signature, /sys/hypervisor, device tree, DMI): e.g. kvm, xen, hyperv, vmware, qemu, other; none; null if unknowable", w_virtualization},
	{"emulation", "qemu-user when /proc/cpuinfo describes another architecture than the probe's build, else none", w_emulation},
	{"container", "Container runtime (/run/systemd/container, /run/.containerenv, /.dockerenv, /proc/1/cgroup); none = no sign found", w_container},
	{"perf_event_paranoid", "perf_event_paranoid (/proc/sys/kernel): what unprivileged perf counters may do", w_perf_event_paranoid},
	{"aslr", "Address space randomisation (/proc/sys/kernel/randomize_va_space: 0 off, 1 partial, 2 full)", w_aslr},
	{"libc", "C library the probe runs with (glibc version; null for others)", w_libc},
	{"build_compiler", "Compiler that built the probe", w_build_compiler},
	{"build_flags", "C flags the probe was built with", w_build_flags},
	{"build_type", "CMake build type of the probe", w_build_type},
	{"build_static", "Probe statically linked", w_build_static},
	{"build_arch", "Architecture the probe was built for", w_build_arch},
};

void osm_sysinfo_write_fields(struct osm_json *j)
{
	osm_json_arr_begin(j, "fields");
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
		osm_json_obj_begin(j, NULL);
		osm_json_str(j, "key", fields[i].key);
		fields[i].write(j, "value");
		osm_json_str(j, "help", fields[i].help);
		osm_json_obj_end(j);
	}
	osm_json_arr_end(j);
}

void osm_sysinfo_write_machine(struct osm_json *j, const char *key)
{
	osm_json_obj_begin(j, key);
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++)
		fields[i].write(j, fields[i].key);
	osm_json_obj_end(j);
}

/* ------------------------------------------------------------------------ */
/* Text output: each writer's JSON, rendered for people. Scalars as they are
 * (null as n/a), arrays of scalars as words, objects and arrays of objects
 * one entry a line. The input is our own JSON, but may be cut short if a
 * value outgrew TEXT_BUF: every loop stops at the NUL. */

static const char *skip_ws(const char *p)
{
	while (*p && isspace((unsigned char)*p))
		p++;
	return p;
}

static const char *text_string(FILE *f, const char *p)
{
	p++; /* the opening quote */
	while (*p && *p != '"') {
		if (*p == '\\' && p[1]) {
			p++;
			switch (*p) {
			case 'n': case 'r': case 't': case 'b': case 'f':
				fputc(' ', f); /* keep one value on one line */
				p++;
				break;
			case 'u':
				fputc('?', f); /* emit.c writes \u00XX for control bytes only */
				p++;
				for (int k = 0; k < 4 && isxdigit((unsigned char)*p); k++)
					p++;
				break;
			default:
				fputc(*p++, f);
			}
		} else {
			fputc(*p++, f);
		}
	}
	return *p == '"' ? p + 1 : p;
}

static const char *text_inline(FILE *f, const char *p, bool bare)
{
	p = skip_ws(p);
	if (*p == '"')
		return text_string(f, p);
	if (*p != '{' && *p != '[') {
		const char *s = p;
		while (*p && !strchr(",]}", *p) && !isspace((unsigned char)*p))
			p++;
		if (p - s == 4 && strncmp(s, "null", 4) == 0)
			fputs("n/a", f);
		else
			fwrite(s, 1, (size_t)(p - s), f);
		return p;
	}
	bool obj = *p == '{';
	char close = obj ? '}' : ']';
	if (!bare)
		fputc(*p, f);
	p++;
	for (bool first = true;; first = false) {
		p = skip_ws(p);
		if (*p == ',')
			p = skip_ws(p + 1);
		if (!*p || *p == close) {
			if (*p)
				p++;
			break;
		}
		if (!first)
			fputs(obj ? ", " : " ", f);
		if (obj) {
			if (*p != '"')
				break;
			p = skip_ws(text_string(f, p));
			if (*p != ':')
				break;
			p++;
			fputc('=', f);
		}
		const char *q = text_inline(f, p, false);
		if (q == p)
			break; /* malformed: no progress */
		p = q;
	}
	if (!bare)
		fputc(close, f);
	return p;
}

static void text_field(FILE *f, const char *key, const char *json)
{
	const char *p = skip_ws(json);
	bool obj = *p == '{';
	bool arr_of_obj = *p == '[' && *skip_ws(p + 1) == '{';
	bool empty = (*p == '[' || obj) && (*skip_ws(p + 1) == ']' || *skip_ws(p + 1) == '}');
	if (empty) {
		fprintf(f, "%s: (none)\n", key);
		return;
	}
	if (!obj && !arr_of_obj) {
		fprintf(f, "%s: ", key);
		text_inline(f, p, true);
		fputc('\n', f);
		return;
	}
	char close = obj ? '}' : ']';
	fprintf(f, "%s:\n", key);
	p++;
	for (;;) {
		p = skip_ws(p);
		if (*p == ',')
			p = skip_ws(p + 1);
		if (!*p || *p == close)
			break;
		fputs(obj ? "  " : "  - ", f);
		if (obj) {
			if (*p != '"')
				break;
			p = skip_ws(text_string(f, p));
			if (*p != ':')
				break;
			p++;
			fputs(": ", f);
		}
		const char *q = text_inline(f, p, true);
		fputc('\n', f);
		if (q == p)
			break;
		p = q;
	}
}

void osm_sysinfo_print_text(FILE *f)
{
	char buf[TEXT_BUF];
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
		memset(buf, 0, sizeof(buf));
		/* size - 1: the buffer always ends with a NUL, even when full. */
		FILE *m = fmemopen(buf, sizeof(buf) - 1, "w");
		if (!m) {
			fprintf(f, "%s: n/a\n", fields[i].key);
			continue;
		}
		struct osm_json j;
		osm_json_init(&j, m);
		osm_json_doc_begin(&j);
		fields[i].write(&j, "v");
		osm_json_doc_end(&j);
		fclose(m);
		/* buf is {"v":VALUE}\n */
		const char *colon = strchr(buf, ':');
		text_field(f, fields[i].key, colon ? colon + 1 : "");
	}
}
