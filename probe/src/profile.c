/* profile.c - see profile.h; the back ends are profile_perf.c (sample) and
 * profile_ftrace.c (function). */
#include "profile_int.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int osm_profile_parse_mode(const char *s, int *mode)
{
	if (!strcmp(s, "sample"))
		*mode = OSM_PROF_SAMPLE;
	else if (!strcmp(s, "function"))
		*mode = OSM_PROF_FUNCTION;
	else
		return -1;
	return 0;
}

int osm_profile_parse_event(const char *s, int *event)
{
	if (!strcmp(s, "auto"))
		*event = OSM_PROF_AUTO;
	else if (!strcmp(s, "cpu-clock"))
		*event = OSM_PROF_CPU_CLOCK;
	else if (!strcmp(s, "cycles"))
		*event = OSM_PROF_CYCLES;
	else
		return -1;
	return 0;
}

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

struct osm_profile *osm_profile_new(const struct osm_profile_spec *spec)
{
	struct osm_profile *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->spec = *spec;
	p->status = "ok";
	p->weight_unit = spec->mode == OSM_PROF_FUNCTION ? "ns" : "samples";
	p->event_name = spec->mode == OSM_PROF_FUNCTION ? "ftrace:function" : "cpu-clock";
	snprintf(p->sym_kernel, sizeof(p->sym_kernel), "unavailable");
	return p;
}

void osm_profile_open(struct osm_profile *p)
{
	if (p->spec.mode == OSM_PROF_FUNCTION)
		osm_prof_ftrace_open(p);
	else
		osm_prof_perf_open(p);
}

void osm_profile_enable(struct osm_profile *p)
{
	if (strcmp(p->status, "ok") || p->active)
		return;
	p->t_enable = (double)osm_prof_now_ns();
	if (!p->batches)
		p->start_ns = p->t_enable;
	p->active = 1;
	if (p->spec.mode == OSM_PROF_FUNCTION)
		osm_prof_ftrace_enable(p);
	else
		osm_prof_perf_enable(p);
}

void osm_profile_disable(struct osm_profile *p, uint64_t ops)
{
	if (!p->active)
		return;
	if (p->spec.mode == OSM_PROF_FUNCTION)
		osm_prof_ftrace_disable(p);
	else
		osm_prof_perf_disable(p);
	p->active = 0;
	p->end_ns = (double)osm_prof_now_ns();
	p->enabled_ns += p->end_ns - p->t_enable;
	p->batches++;
	p->ops += ops;
}

void osm_profile_finish(struct osm_profile *p)
{
	if (p->active)
		osm_profile_disable(p, 0);
	if (p->spec.mode == OSM_PROF_FUNCTION)
		osm_prof_ftrace_finish(p);
	else
		osm_prof_perf_finish(p);
	if (!strcmp(p->status, "ok") && !p->stacks.n) {
		p->status = "empty";
		snprintf(p->reason, sizeof(p->reason), "%s",
			 p->batches ? "no sample fell in the timed region (it is too short for the sampling rate: "
				      "give a longer --min-time or a higher --frequency)"
				    : "the timed region never ran");
	}
}

/* Indices of the filled slots of m, heaviest first (ties: by key). */
static const struct osm_strmap *sort_map;
static int cmp_slot(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	uint64_t vx = sort_map->vals[x], vy = sort_map->vals[y];
	if (vx != vy)
		return vx < vy ? 1 : -1;
	return strcmp(sort_map->keys[x], sort_map->keys[y]);
}

static size_t *sorted_slots(const struct osm_strmap *m)
{
	size_t *idx = malloc((m->n ? m->n : 1) * sizeof(*idx)), k = 0;
	if (!idx)
		return NULL;
	for (size_t i = 0; i < m->cap; i++)
		if (m->keys[i])
			idx[k++] = i;
	sort_map = m;
	qsort(idx, k, sizeof(*idx), cmp_slot);
	return idx;
}

void osm_profile_write(struct osm_json *j, const struct osm_profile *p)
{
	int ok = !strcmp(p->status, "ok");
	osm_json_str(j, "status", p->status);
	osm_json_str(j, "reason", ok ? NULL : p->reason);
	osm_json_str(j, "mode", p->spec.mode == OSM_PROF_FUNCTION ? "function" : "sample");
	osm_json_str(j, "event", p->event_name);
	if (p->spec.mode == OSM_PROF_SAMPLE)
		osm_json_int(j, "frequency_hz", p->spec.frequency);
	else
		osm_json_null(j, "frequency_hz");
	osm_json_str(j, "weight_unit", p->weight_unit);
	osm_json_int(j, "samples", (int64_t)p->samples);
	osm_json_int(j, "lost", (int64_t)p->lost);
	osm_json_bool(j, "kernel", p->kernel);
	osm_json_str(j, "kernel_reason", p->kernel ? NULL : p->kernel_reason);
	osm_json_obj_begin(j, "symbols");
	osm_json_str(j, "kernel", p->sym_kernel);
	osm_json_str(j, "kernel_reason", p->sym_reason[0] && strcmp(p->sym_kernel, "kallsyms") ? p->sym_reason : NULL);
	osm_json_obj_end(j);
	osm_json_obj_begin(j, "window");
	osm_json_num(j, "start_ns", p->start_ns);
	osm_json_num(j, "end_ns", p->end_ns);
	osm_json_num(j, "enabled_s", p->enabled_ns / 1e9);
	osm_json_int(j, "batches", (int64_t)p->batches);
	osm_json_int(j, "left_out", (int64_t)p->left_out);
	osm_json_obj_end(j);
	osm_json_int(j, "ops", (int64_t)p->ops);
	osm_json_arr_begin(j, "stacks");
	size_t *idx = sorted_slots(&p->stacks);
	for (size_t i = 0; idx && i < p->stacks.n; i++) {
		osm_json_arr_begin(j, NULL);
		osm_json_str(j, NULL, p->stacks.keys[idx[i]]);
		osm_json_int(j, NULL, (int64_t)p->stacks.vals[idx[i]]);
		osm_json_arr_end(j);
	}
	free(idx);
	osm_json_arr_end(j);
	if (p->have_calls) {
		osm_json_obj_begin(j, "calls");
		idx = sorted_slots(&p->calls);
		for (size_t i = 0; idx && i < p->calls.n; i++)
			osm_json_int(j, p->calls.keys[idx[i]], (int64_t)p->calls.vals[idx[i]]);
		free(idx);
		osm_json_obj_end(j);
	} else {
		osm_json_null(j, "calls");
	}
	osm_json_arr_begin(j, "notes");
	for (int i = 0; i < p->n_notes; i++)
		osm_json_str(j, NULL, p->notes[i]);
	osm_json_arr_end(j);
}

int osm_profile_write_folded(FILE *f, const struct osm_profile *p)
{
	size_t *idx = sorted_slots(&p->stacks);
	if (!idx)
		return -1;
	for (size_t i = 0; i < p->stacks.n; i++)
		fprintf(f, "%s %llu\n", p->stacks.keys[idx[i]], (unsigned long long)p->stacks.vals[idx[i]]);
	free(idx);
	return ferror(f) ? -1 : 0;
}

void osm_profile_free(struct osm_profile *p)
{
	if (!p)
		return;
	if (p->spec.mode == OSM_PROF_FUNCTION)
		osm_prof_ftrace_free(p);
	else
		osm_prof_perf_free(p);
	osm_strmap_free(&p->stacks);
	osm_strmap_free(&p->calls);
	free(p);
}
