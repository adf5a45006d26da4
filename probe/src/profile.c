/* profile.c - see profile.h: the entry points, which pick the back end
 * once (profile_perf.c for "sample", profile_ftrace.c for "function") and
 * drive it through its operations (profile_int.h), and the `profile`
 * record. */
#include "profile_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	p->backend = spec->mode == OSM_PROF_FUNCTION ? &osm_prof_ftrace_ops : &osm_prof_perf_ops;
	return p;
}

void osm_profile_open(struct osm_profile *p)
{
	p->backend->open(p);
}

void osm_profile_enable(struct osm_profile *p)
{
	if (strcmp(p->status, "ok") || p->active)
		return;
	p->t_enable = (double)osm_prof_now_ns();
	if (!p->batches)
		p->start_ns = p->t_enable;
	p->active = 1;
	p->backend->enable(p);
}

void osm_profile_disable(struct osm_profile *p, uint64_t ops)
{
	if (!p->active)
		return;
	p->backend->disable(p);
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
	p->backend->finish(p);
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
	p->backend->free(p);
	osm_strmap_free(&p->stacks);
	osm_strmap_free(&p->calls);
	free(p);
}
