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

#include "emit.h"
#include "sysinfo.h"

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
	"hostname", "os", "kernel_release", "kernel_version", "arch", "kernel_cmdline",
	"preemption", "preemption_source", "cpu_model", "cpu_vendor", "board", "cpu_flags",
	"cpus_online", "cpus_allowed", "sockets", "cores_per_socket", "threads_per_core",
	"smt_control", "isolated_cpus", "nohz_full_cpus", "caches", "numa_nodes",
	"cpufreq_driver", "cpufreq_governor", "cpu_max_mhz", "cpu_min_mhz", "cpu_boost",
	"cpuidle_driver", "memory_bytes", "memory_type", "cgroup_memory_limit_bytes",
	"cgroup_cpu_limit", "hugepage_size_bytes", "thp_enabled", "thp_defrag",
	"fault_around_bytes", "disks", "nics", "mitigations", "clocksource",
	"available_clocksources", "virtualization", "emulation", "container",
	"perf_event_paranoid", "aslr", "libc", "build_compiler", "build_flags", "build_type",
	"build_static", "build_arch",
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

	/* Same number of lines in the text as fields (multi-line values are
	 * indented, so top-level lines start with a key). */
	size_t top = 0;
	for (const char *p = text; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p))
		if (*p != ' ' && *p != '\n')
			top++;
	ok(top == nk, "text output has one top-level line per field");

	printf("1..%d\n", n_tests);
	return n_failed ? 1 : 0;
}
