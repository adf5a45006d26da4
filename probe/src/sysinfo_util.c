/* sysinfo_util.c - the readers every part of the machine description uses:
 * files, sysfs values and selectors, directory listings, cpu lists and
 * /proc/cpuinfo. See sysinfo_int.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* cpu_set_t, fmemopen, strnlen; CMake defines it too */
#endif
#include "sysinfo_int.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* Small helpers                                                            */

bool si_pathf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n >= 0 && (size_t)n < len;
}

void si_copy_str(char *out, size_t len, const char *s)
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
void si_sanitize_utf8(char *s)
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
bool si_read_file_raw(const char *path, void *buf, size_t len, size_t *got)
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
bool si_read_file_trim(const char *path, char *buf, size_t len)
{
	size_t n;
	if (len == 0)
		return false;
	buf[0] = '\0';
	if (!si_read_file_raw(path, buf, len - 1, &n)) {
		buf[0] = '\0';
		return false;
	}
	buf[n] = '\0';
	trim_inplace(buf);
	si_sanitize_utf8(buf);
	return true;
}

bool si_parse_ll(const char *s, long long *v)
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

bool si_read_int(const char *path, long long *v)
{
	char buf[SMALL];
	return si_read_file_trim(path, buf, sizeof(buf)) && si_parse_ll(buf, v);
}

/* The active choice of a sysfs/debugfs selector, e.g. "always [madvise]
 * never" -> "madvise" (open '[') or "none voluntary (full)" -> "full". */
bool si_read_marked_choice(const char *path, char open, char close,
			       char *out, size_t len)
{
	char buf[MEDIUM];
	if (!si_read_file_trim(path, buf, sizeof(buf)))
		return false;
	char *a = strchr(buf, open);
	char *b = a ? strchr(a + 1, close) : NULL;
	if (!b || b == a + 1)
		return false;
	*b = '\0';
	si_copy_str(out, len, a + 1);
	return true;
}

bool si_read_bracketed_choice(const char *path, char *out, size_t len)
{
	return si_read_marked_choice(path, '[', ']', out, len);
}

void si_json_int_or_null(struct osm_json *j, const char *key, bool ok, long long v)
{
	if (ok)
		osm_json_int(j, key, v);
	else
		osm_json_null(j, key);
}

void si_json_file_str(struct osm_json *j, const char *key, const char *path)
{
	char buf[MEDIUM];
	osm_json_str(j, key, si_read_file_trim(path, buf, sizeof(buf)) ? buf : NULL);
}

void si_json_file_int(struct osm_json *j, const char *key, const char *path)
{
	long long v = 0;
	bool ok = si_read_int(path, &v); /* before v is passed: argument order is unspecified */
	si_json_int_or_null(j, key, ok, v);
}

void si_json_file_choice(struct osm_json *j, const char *key, const char *path)
{
	char buf[SMALL];
	osm_json_str(j, key, si_read_bracketed_choice(path, buf, sizeof(buf)) ? buf : NULL);
}

/* Writes the whitespace-separated words of s as a JSON array. */
void si_json_words(struct osm_json *j, const char *key, char *s, bool drop_last)
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

/* ------------------------------------------------------------------------ */
/* Why a field is null                                                      */
/*
 * A writer that knows why its value is null says so with si_null(); the
 * reasons of one walk over the table (sysinfo.c starts each field with
 * si_reason_field() and each walk with si_reasons_reset()) are written by
 * the last field, null_reasons. Only the current walk's reasons are kept. */

#define MAX_REASONS 32
#define REASON_LEN 512

static struct {
	char key[NAME_LEN];
	char why[REASON_LEN];
} reasons[MAX_REASONS];
static size_t n_reasons;
static char reason_key[NAME_LEN];

void si_reasons_reset(void)
{
	n_reasons = 0;
	reason_key[0] = '\0';
}

void si_reason_field(const char *key)
{
	si_copy_str(reason_key, sizeof(reason_key), key);
}

void si_null(struct osm_json *j, const char *key, const char *why)
{
	osm_json_null(j, key);
	if (!why || !reason_key[0] || n_reasons >= MAX_REASONS)
		return;
	for (size_t i = 0; i < n_reasons; i++)
		if (strcmp(reasons[i].key, reason_key) == 0)
			return; /* one reason a field */
	si_copy_str(reasons[n_reasons].key, NAME_LEN, reason_key);
	si_copy_str(reasons[n_reasons].why, REASON_LEN, why);
	si_sanitize_utf8(reasons[n_reasons].why);
	n_reasons++;
}

void si_w_null_reasons(struct osm_json *j, const char *key)
{
	osm_json_obj_begin(j, key);
	for (size_t i = 0; i < n_reasons; i++)
		osm_json_str(j, reasons[i].key, reasons[i].why);
	osm_json_obj_end(j);
}

/* ------------------------------------------------------------------------ */
/* Mounts and line counts                                                   */

/* Undoes the kernel's octal escapes of a mount table ("\040" for a blank). */
void si_unescape_mount(char *s)
{
	char *w = s;
	for (char *r = s; *r; r++) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
		    r[3] >= '0' && r[3] <= '7') {
			*w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
			r += 3;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
}

/* The mount point of the first mount of this file system type in
 * /proc/self/mounts; false when there is none (or the table is unreadable).
 * Bounded: 10000 lines at most. */
bool si_mount_point(const char *fstype, char *out, size_t len)
{
	FILE *f = fopen("/proc/self/mounts", "re");
	if (!f)
		return false;
	char line[MEDIUM];
	bool cut, found = false;
	for (int n = 0; !found && n < 10000 && si_read_line(f, line, sizeof(line), &cut); n++) {
		char *save = NULL;
		char *src = strtok_r(line, " ", &save);
		char *point = src ? strtok_r(NULL, " ", &save) : NULL;
		char *type = point ? strtok_r(NULL, " ", &save) : NULL;
		if (cut || !type || strcmp(type, fstype) != 0)
			continue;
		si_unescape_mount(point);
		si_copy_str(out, len, point);
		found = true;
	}
	fclose(f);
	return found;
}

/* The number of lines of a file (a last line without its newline counts),
 * reading at most cap bytes; false when it cannot be read or is longer. */
bool si_count_lines(const char *path, size_t cap, long long *lines)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return false;
	char buf[MEDIUM];
	size_t total = 0;
	long long n = 0;
	bool ok = true, partial = false;
	for (;;) {
		ssize_t r = read(fd, buf, sizeof(buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			ok = r == 0;
			break;
		}
		total += (size_t)r;
		if (total > cap) {
			ok = false;
			break;
		}
		for (ssize_t i = 0; i < r; i++)
			n += buf[i] == '\n';
		partial = buf[r - 1] != '\n';
	}
	close(fd);
	if (ok)
		*lines = n + partial;
	return ok;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp((const char *)a, (const char *)b);
}

bool si_list_dir(const char *path, struct si_names *out,
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
		si_copy_str(out->name[out->n++], NAME_LEN, e->d_name);
	}
	closedir(d);
	qsort(out->name, out->n, NAME_LEN, cmp_name);
	return true;
}

void si_cpulist_init(struct si_cpulist *it, const char *s)
{
	it->p = s;
	it->cur = 1;
	it->last = 0;
}

bool si_cpulist_next(struct si_cpulist *it, long *cpu)
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

long si_cpulist_count(const char *s)
{
	struct si_cpulist it;
	long cpu, n = 0;
	si_cpulist_init(&it, s);
	while (si_cpulist_next(&it, &cpu))
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
bool si_read_line(FILE *f, char *buf, size_t len, bool *cut)
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
char *si_cpuinfo_match(char *line, const char *key)
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
bool si_cpuinfo_value(const char *key, char *out, size_t len, bool *cut_out)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	if (!f)
		return false;
	char line[LINE];
	bool cut, found = false;
	while (si_read_line(f, line, sizeof(line), &cut)) {
		char *v = si_cpuinfo_match(line, key);
		if (!v)
			continue;
		if (cut_out)
			*cut_out = cut || strlen(v) >= len;
		si_copy_str(out, len, v);
		si_sanitize_utf8(out);
		found = true;
		break;
	}
	fclose(f);
	return found;
}

bool si_cpuinfo_has(const char *key)
{
	char buf[8];
	return si_cpuinfo_value(key, buf, sizeof(buf), NULL);
}
