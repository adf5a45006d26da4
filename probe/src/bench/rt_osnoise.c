/* rt_osnoise.c - rt.osnoise: OS noise by oslat's method.
 * Method: docs/methods/rt.md, "rt.osnoise"; source: rt-tests' oslat.
 *
 * The measuring thread (optionally SCHED_FIFO `priority`, memory locked)
 * spins reading the probe's clock (the TSC with rdtscp where it is usable,
 * cntvct_el0 on aarch64, else CLOCK_MONOTONIC_RAW). Two consecutive reads
 * normally differ by the loop's own cost (extra.loop_ns, the smallest
 * difference seen); a difference above threshold_ns is a gap: the CPU was
 * taken away (an interrupt, a tick, another thread, the hypervisor). Every
 * gap above the threshold counts whole (the loop's own few ns included).
 * One sample per window of window_ms: the window's largest difference,
 * whatever the threshold (osnoise's "max single noise" per period). Over
 * the sampled windows: noise_ns_per_s (the gaps' total per second of
 * loop), gaps_per_s, gaps, max_gap_ns, gap_median_ns (the median gap
 * length), and info.largest_gaps (the ten largest).
 *
 * Traps avoided: only sampled windows count (not warm-up); the gap list
 * is kept in memory allocated before sampling, so storing a gap never
 * allocates; a gap straddling two windows counts in the window where it
 * ends, once; stressors run on other CPUs only. */
#include "rt.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../clock.h"
#include "../compiler.h"
#include "../samples.h"

const struct osm_param osm_rt_osnoise_params[] = {
	{.name = "window_ms", .type = OSM_P_INT, .def = 10, .min = 1, .max = 10000,
	 .help = "length of one sample's window in ms; its largest gap is the sample"},
	{.name = "threshold_ns", .type = OSM_P_INT, .def = 5000, .min = 100, .max = 1000000000,
	 .help = "a gap between two clock reads above this is noise (ns)"},
	{.name = "priority", .type = OSM_P_INT, .def = 0, .min = 0, .max = 99,
	 .help = "SCHED_FIFO priority of the loop; 0 = SCHED_OTHER (oslat's default)"},
	OSM_STRESS_PARAMS,
	{0},
};

/* Gap lengths kept for the median; more gaps still count in the totals. */
#define MAX_GAPS (1u << 20)
#define TOP 10

struct osnoise {
	struct osm_rt_env env;
	uint64_t window_ticks, thr_ticks;
	double *gaps; /* ns */
	size_t n_gaps;
	uint64_t gaps_total;
	double noise_ns, loop_s, max_gap;
	uint64_t min_delta;
	double top[TOP];
};

static void add_top(double *top, double v)
{
	if (v <= top[TOP - 1])
		return;
	int i = TOP - 1;
	while (i > 0 && top[i - 1] < v) {
		top[i] = top[i - 1];
		i--;
	}
	top[i] = v;
}

int osm_rt_osnoise_setup(struct osm_ctx *ctx)
{
	struct osnoise *o = calloc(1, sizeof(*o));
	if (!o)
		return osm_fail(ctx, OSM_ERROR, "out of memory");
	ctx->priv = o;
	o->gaps = malloc(MAX_GAPS * sizeof(double));
	if (!o->gaps) {
		free(o);
		ctx->priv = NULL;
		return osm_fail(ctx, OSM_ERROR, "out of memory for the gap list");
	}
	memset(o->gaps, 0, MAX_GAPS * sizeof(double)); /* faulted in now, not while spinning */
	o->window_ticks = (uint64_t)((double)osm_param_int(ctx, "window_ms") * 1e6 / osm_clock_tick_ns);
	o->thr_ticks = (uint64_t)((double)osm_param_int(ctx, "threshold_ns") / osm_clock_tick_ns);
	o->min_delta = UINT64_MAX;
	int avoid[1] = {ctx->cpu};
	int st = osm_rt_begin(ctx, &o->env, (int)osm_param_int(ctx, "priority"), 1, avoid, 1);
	if (st != OSM_OK) {
		free(o->gaps);
		free(o);
		ctx->priv = NULL;
	}
	return st;
}

int osm_rt_osnoise_run(struct osm_ctx *ctx, uint64_t batch)
{
	struct osnoise *o = ctx->priv;
	(void)batch;
	const uint64_t thr = o->thr_ticks;
	uint64_t t0 = osm_clock_stop(), prev = t0, end = t0 + o->window_ticks;
	uint64_t wmax = 0, min_delta = UINT64_MAX;
	int counting = ctx->counting;
	for (;;) {
		uint64_t t = osm_clock_stop();
		uint64_t d = t - prev;
		prev = t;
		if (d < min_delta)
			min_delta = d;
		if (d > wmax)
			wmax = d;
		if (unlikely(d > thr) && counting) {
			double ns = osm_ticks_to_ns(d);
			if (o->n_gaps < MAX_GAPS)
				o->gaps[o->n_gaps++] = ns;
			o->gaps_total++;
			o->noise_ns += ns;
			add_top(o->top, ns);
		}
		if (t >= end)
			break;
	}
	ctx->self_ns = osm_ticks_to_ns(wmax);
	if (counting) {
		o->loop_s += osm_ticks_to_ns(prev - t0) * 1e-9;
		if (min_delta < o->min_delta)
			o->min_delta = min_delta;
		if (ctx->self_ns > o->max_gap)
			o->max_gap = ctx->self_ns;
	}
	return OSM_OK;
}

void osm_rt_osnoise_teardown(struct osm_ctx *ctx)
{
	struct osnoise *o = ctx->priv;
	if (!o)
		return;
	osm_rt_end(ctx, &o->env);
	double med = osm_sort_median(o->gaps, o->n_gaps); /* NAN for none */
	double secs = o->loop_s;
	osm_add_extra(ctx, "noise_ns_per_s", secs > 0 ? o->noise_ns / secs : NAN);
	osm_add_extra(ctx, "gaps_per_s", secs > 0 ? (double)o->gaps_total / secs : NAN);
	osm_add_extra(ctx, "gaps", (double)o->gaps_total);
	osm_add_extra(ctx, "max_gap_ns", o->max_gap);
	osm_add_extra(ctx, "gap_median_ns", med);
	osm_add_extra(ctx, "duration_s", secs);
	osm_add_extra(ctx, "loop_ns", o->min_delta == UINT64_MAX ? NAN : osm_ticks_to_ns(o->min_delta));
	char buf[512] = "";
	size_t w = 0;
	for (int i = 0; i < TOP && o->top[i] > 0 && w < sizeof(buf) - 32; i++)
		w += (size_t)snprintf(buf + w, sizeof(buf) - w, "%s%.1f us", i ? ", " : "", o->top[i] / 1000.0);
	osm_add_info(ctx, "largest_gaps", "%s", w ? buf : "none above the threshold");
	if (o->n_gaps < o->gaps_total)
		osm_add_info(ctx, "gap_median", "of the first %zu gaps", o->n_gaps);
	free(o->gaps);
	free(o);
	ctx->priv = NULL;
}
