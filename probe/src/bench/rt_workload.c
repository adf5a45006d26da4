/* rt_workload.c - rt.workload: a periodic real-time job.
 * Method: docs/methods/rt.md, "rt.workload"; the kernels:
 * docs/methods/rt-kernels.md (rt_kernels.c).
 *
 * The RT study ran small workload kernels (TACLeBench's single-path set)
 * periodically on one core while the other cores hammered memory, and
 * reported each kernel's average, median, variance and maximum execution
 * time. Here: job k is released at t0 + k * period (CLOCK_MONOTONIC,
 * absolute clock_nanosleep); the measuring thread (SCHED_FIFO `priority`,
 * memory locked) wakes, runs one job of `kernel` (inputs initialised,
 * computed, checksummed) and records
 *   - the sample: the job's execution time, from just before the kernel
 *     starts to just after it returns, on the probe's clock;
 *   - its response time: CLOCK_MONOTONIC at the job's end minus its
 *     release (wake-up latency + execution), and a deadline miss when it
 *     exceeds deadline_us.
 * A job that ends after the next release is followed at once by the next
 * job (no release is dropped), as a periodic task under overload does.
 * period_us = 0: twice the kernel's median execution time measured in
 * setup, alone (before the stressors start and before SCHED_FIFO); its
 * value is in extra.unstressed_median_ns and extra.period_ns.
 *
 * Traps avoided: the checksum of every job is compared with the value the
 * kernel table holds (itself checked against an independent Python
 * computation in the tests): the compiler cannot drop the work, and a wrong
 * result is an error, never a figure; only sampled jobs count in the extras;
 * response times are kept in memory grown outside any job. */
#include "rt.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../clock.h"
#include "../compiler.h"
#include "../samples.h"
#include "rt_kernels.h"

const struct osm_param osm_rt_workload_params[] = {
	{.name = "kernel", .type = OSM_P_ENUM, .def = 0, .choices = osm_rt_kernel_names,
	 .help = "the workload kernel one job runs (docs/methods/rt-kernels.md)"},
	{.name = "period_us", .type = OSM_P_INT, .def = 0, .min = 0, .max = 10000000,
	 .help = "release period in us; 0 = twice the kernel's unstressed median execution time"},
	{.name = "deadline_us", .type = OSM_P_INT, .def = 0, .min = 0, .max = 10000000,
	 .help = "relative deadline in us (response time above it is a miss); 0 = the period"},
	{.name = "priority", .type = OSM_P_INT, .def = 80, .min = 0, .max = 99,
	 .help = "SCHED_FIFO priority of the job; 0 = SCHED_OTHER; needs root, else SCHED_OTHER, said in info"},
	OSM_STRESS_PARAMS,
	{0},
};

/* Jobs timed alone in setup for the default period. */
#define CALIBRATION_JOBS 31

struct workload {
	struct osm_rt_env env;
	const struct osm_rt_kernel *k;
	int64_t period_ns, deadline_ns, release_ns;
	double unstressed_median;
	struct osm_samples resp; /* response times (ns) */
	uint64_t misses, jobs;
	double resp_sum, resp_max;
};

static int bad_checksum(struct osm_ctx *ctx, const struct osm_rt_kernel *k, uint32_t got)
{
	return osm_fail(ctx, OSM_ERROR, "kernel %s returned checksum 0x%08" PRIx32 ", expected 0x%08" PRIx32
			": its result is wrong (a miscompiled probe or faulty hardware)", k->name, got, k->expected);
}

/* One job timed on the probe's clock; returns ns or -1 (checksum wrong). */
static double timed_job(const struct osm_rt_kernel *k, uint32_t *sum)
{
	uint64_t t0 = osm_clock_start();
	*sum = k->run();
	uint64_t t1 = osm_clock_stop();
	return osm_ticks_to_ns(t1 - t0);
}

int osm_rt_workload_setup(struct osm_ctx *ctx)
{
	struct workload *w = calloc(1, sizeof(*w));
	if (!w)
		return osm_fail(ctx, OSM_ERROR, "out of memory");
	ctx->priv = w;
	w->k = &osm_rt_kernels[osm_param_int(ctx, "kernel")];
	osm_add_info(ctx, "checksum", "0x%08" PRIx32, w->k->expected);

	double t[CALIBRATION_JOBS];
	for (int i = 0; i < CALIBRATION_JOBS; i++) {
		uint32_t sum;
		t[i] = timed_job(w->k, &sum);
		if (sum != w->k->expected) {
			int st = bad_checksum(ctx, w->k, sum);
			free(w);
			ctx->priv = NULL;
			return st;
		}
	}
	w->unstressed_median = osm_sort_median(t, CALIBRATION_JOBS);
	int64_t p = osm_param_int(ctx, "period_us") * 1000;
	w->period_ns = p ? p : (int64_t)ceil(2 * w->unstressed_median);
	if (w->period_ns < 1)
		w->period_ns = 1;
	int64_t d = osm_param_int(ctx, "deadline_us") * 1000;
	w->deadline_ns = d ? d : w->period_ns;

	int avoid[1] = {ctx->cpu};
	int st = osm_rt_begin(ctx, &w->env, (int)osm_param_int(ctx, "priority"), 1, avoid, 1);
	if (st != OSM_OK) {
		free(w);
		ctx->priv = NULL;
		return st;
	}
	w->release_ns = osm_mono_ns() + w->period_ns;
	return OSM_OK;
}

int osm_rt_workload_run(struct osm_ctx *ctx, uint64_t batch)
{
	struct workload *w = ctx->priv;
	(void)batch;
	/* Room for this job's response time, grown before the job runs. */
	if (ctx->counting && osm_samples_reserve(&w->resp, 1))
		return osm_fail(ctx, OSM_ERROR, "out of memory for response times");
	struct timespec rel = osm_ns_ts(w->release_ns);
	int e;
	while ((e = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &rel, NULL)) == EINTR)
		;
	if (e) {
		errno = e;
		return osm_fail_errno(ctx, "clock_nanosleep");
	}
	uint32_t sum;
	double exec = timed_job(w->k, &sum);
	int64_t end = osm_mono_ns();
	if (sum != w->k->expected)
		return bad_checksum(ctx, w->k, sum);
	ctx->self_ns = exec;
	double resp = (double)(end - w->release_ns);
	w->release_ns += w->period_ns;
	if (!ctx->counting)
		return OSM_OK;
	w->jobs++;
	w->resp.v[w->resp.n++] = resp; /* room reserved above */
	w->resp_sum += resp;
	if (resp > w->resp_max)
		w->resp_max = resp;
	if (resp > (double)w->deadline_ns)
		w->misses++;
	return OSM_OK;
}

void osm_rt_workload_teardown(struct osm_ctx *ctx)
{
	struct workload *w = ctx->priv;
	if (!w)
		return;
	osm_rt_end(ctx, &w->env);
	double med = osm_sort_median(w->resp.v, w->resp.n); /* NAN for none */
	osm_add_extra(ctx, "period_ns", (double)w->period_ns);
	osm_add_extra(ctx, "deadline_ns", (double)w->deadline_ns);
	osm_add_extra(ctx, "misses", (double)w->misses);
	osm_add_extra(ctx, "jobs", (double)w->jobs);
	osm_add_extra(ctx, "resp_mean_ns", w->jobs ? w->resp_sum / (double)w->jobs : NAN);
	osm_add_extra(ctx, "resp_median_ns", med);
	osm_add_extra(ctx, "resp_max_ns", w->jobs ? w->resp_max : NAN);
	osm_add_extra(ctx, "unstressed_median_ns", w->unstressed_median);
	osm_samples_free(&w->resp);
	free(w);
	ctx->priv = NULL;
}
