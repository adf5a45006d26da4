/* profile_common.c - what profile.c and both back ends (profile_perf.c,
 * profile_ftrace.c) use: the string -> weight table of stacks and call
 * counts, notes and the "unsupported" verdict, frame names, the clock
 * (profile_int.h). It calls nothing of theirs. */
#include "profile_int.h"

#include "knob.h"
#include "symbols.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- string table -------------------------------------------------------- */

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

static int grow(struct osm_strmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 1024;
	char **keys = calloc(cap, sizeof(*keys));
	uint64_t *vals = calloc(cap, sizeof(*vals));
	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -1;
	}
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->keys[i])
			continue;
		size_t k = hash_str(m->keys[i]) & (cap - 1);
		while (keys[k])
			k = (k + 1) & (cap - 1);
		keys[k] = m->keys[i];
		vals[k] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = keys;
	m->vals = vals;
	m->cap = cap;
	return 0;
}

int osm_strmap_add(struct osm_strmap *m, const char *key, uint64_t w)
{
	if ((m->n + 1) * 2 > m->cap && grow(m))
		return -1;
	size_t k = hash_str(key) & (m->cap - 1);
	while (m->keys[k] && strcmp(m->keys[k], key))
		k = (k + 1) & (m->cap - 1);
	if (!m->keys[k]) {
		if (!(m->keys[k] = strdup(key)))
			return -1;
		m->n++;
	}
	m->vals[k] += w;
	return 0;
}

void osm_strmap_free(struct osm_strmap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->keys[i]);
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

/* ---- common -------------------------------------------------------------- */

void osm_prof_note(struct osm_profile *p, const char *fmt, ...)
{
	if (p->n_notes >= OSM_PROF_NOTES)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->notes[p->n_notes++], sizeof(p->notes[0]), fmt, ap);
	va_end(ap);
}

void osm_prof_unsupported(struct osm_profile *p, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->reason, sizeof(p->reason), fmt, ap);
	va_end(ap);
	p->status = "unsupported";
}

void osm_prof_frame(char *buf, size_t len, size_t *off, const char *name, int kernel)
{
	size_t o = *off;
	if (o && o + 1 < len)
		buf[o++] = ';';
	for (const char *s = name; *s && o + 1 < len; s++)
		buf[o++] = *s == ';' ? ':' : (*s == '\n' || *s == '\r' || *s == '\t') ? ' ' : *s;
	if (kernel)
		for (const char *s = "_[k]"; *s && o + 1 < len; s++)
			buf[o++] = *s;
	buf[o < len ? o : len - 1] = 0;
	*off = o;
}

uint64_t osm_prof_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- frames outside the kernel's text ----------------------------------- */

/* This process's seccomp filters (Seccomp_filters, Linux 5.9+), or -1. */
static int seccomp_filters(void)
{
	char st[8192];
	if (osm_knob_read_text("/proc/self/status", st, sizeof(st)) < 0)
		return -1;
	const char *f = strstr(st, "\nSeccomp_filters:");
	return f ? atoi(f + 17) : -1;
}

/* Says what the kernel frames no symbol holds are likely to be. */
void osm_prof_note_outside(struct osm_profile *p, uint64_t outside_text)
{
	if (!outside_text)
		return;
	int filters = seccomp_filters();
	char why[160] = "";
	if (filters > 0)
		snprintf(why, sizeof(why), ": this process runs %d seccomp filter%s (classic BPF, never in kallsyms)",
			 filters, filters == 1 ? "" : "s");
	else if (osm_knob_read_int("/proc/sys/net/core/bpf_jit_kallsyms", 1) == 0)
		snprintf(why, sizeof(why), ": net.core.bpf_jit_kallsyms is 0, so BPF programs are not listed");
	osm_prof_note(p, "%llu samples hold a kernel frame outside the kernel's text, modules and listed BPF "
		      "programs (" OSM_KSYM_OUTSIDE "): code compiled at run time%s",
		      (unsigned long long)outside_text, why);
}
