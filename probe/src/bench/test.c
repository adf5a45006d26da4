/* test.c - test.*: hidden benchmarks for the harness's own ground-truth
 * tests (not in any suite; `list --all` shows them).
 *
 * test.spin: a busy loop of known length. Its true length is established
 * independently of the harness, by CLOCK_MONOTONIC_RAW over long intervals:
 * the same loop (the same run() code path) runs in chunks for >= 0.3 s
 * before sampling (setup) and >= 0.3 s after it (teardown), each chunk timed
 * by two clock reads. A chunk is one spin for spins of 10 us or more (which the
 * harness times one by one) and >= 200 us of spins otherwise (the harness's
 * batches here are 100-500 us), so both aggregate alike.
 * extra.expected_ns is the median of all the chunk means; extra.drift is the
 * relative change between the before and after medians. A chunk is short
 * enough to fit in one scheduler time slice, so on a busy machine the
 * chunks that were preempted are outliers the median ignores, just as the
 * harness's median ignores preempted samples. (20 ms chunks, tried first,
 * each spanned several time slices and read 2x too long under load; 1 ms
 * chunks still read 5 % long when both CPUs were busy.)
 *
 * Trap: the loop's speed follows the core clock. On a KVM guest here it
 * swings +-12 % with a period of ~0.3 s, so a single short calibration does
 * not give the length at measuring time. Spanning the sampling window on both
 * sides and sampling for >= 0.5 s (the ground-truth test sets --min-time)
 * makes both figures medians over the same swings. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../bench.h"
#include "../clock.h"
#include "../compiler.h"
#include "../samples.h"

#define MAX_CHUNKS 8192      /* per side */
#define SIDE_NS 300e6        /* calibrate >= 0.3 s on each side of sampling */
#define RATE_RUNS 30         /* 1 ms runs for the spin's rate; the fastest counts */

struct spin_state {
	uint64_t iters;          /* chain steps per operation */
	double chunk_ns;         /* minimum length of one calibration chunk */
	double chunk[2][MAX_CHUNKS]; /* ns per operation of each chunk, before / after */
	int n[2];
};

/* A dependent multiply-add chain: each step needs the previous result, so
 * the loop runs at a fixed latency per step and cannot be vectorised. */
static inline uint64_t spin(uint64_t iters, uint64_t x)
{
	for (uint64_t i = 0; i < iters; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		OSM_KEEP(x);
	}
	return x;
}

static int spin_run(struct osm_ctx *ctx, uint64_t batch)
{
	struct spin_state *s = ctx->priv;
	uint64_t x = batch;
	for (uint64_t b = 0; b < batch; b++)
		x = spin(s->iters, x);
	OSM_KEEP(x);
	return OSM_OK;
}

/* ns per operation of run() over at least min_ns of CLOCK_MONOTONIC_RAW. */
static double long_interval_ns(struct osm_ctx *ctx, double min_ns)
{
	uint64_t reps = 1;
	for (;;) {
		int64_t t0 = osm_mono_raw_ns();
		spin_run(ctx, reps);
		int64_t t1 = osm_mono_raw_ns();
		double t = (double)(t1 - t0);
		if (t >= min_ns)
			return t / (double)reps;
		reps = t > 1000 ? (uint64_t)ceil((double)reps * 1.3 * min_ns / t) : reps * 16;
	}
}

/* Chunks for at least SIDE_NS (a few of this machine's ~0.3 s frequency
 * swings) and at least 200 of them. */
static void calibrate_side(struct osm_ctx *ctx, struct spin_state *st, int side)
{
	int64_t t0 = osm_mono_raw_ns();
	int n = 0;
	while (n < MAX_CHUNKS && (n < 200 || (double)(osm_mono_raw_ns() - t0) < SIDE_NS))
		st->chunk[side][n++] = long_interval_ns(ctx, st->chunk_ns);
	st->n[side] = n;
}

static int spin_setup(struct osm_ctx *ctx)
{
	double want = (double)osm_param_int(ctx, "ns");
	struct spin_state *st = calloc(1, sizeof(*st));
	if (!st)
		return osm_fail(ctx, OSM_ERROR, "out of memory");
	ctx->priv = st;
	/* Rate: steps per ns, the fastest of RATE_RUNS runs of >= 1 ms of a
	 * 100 000-step spin. One 50 ms run, used before, spanned many time
	 * slices: with a busy neighbour on the CPU it read 2x long and the spin
	 * came out half its nominal length (47752 ns for ns=100000). A 1 ms run
	 * fits in a slice, and the fastest of 30 is one that was not preempted. */
	st->iters = 100000;
	double per_op = INFINITY;
	for (int i = 0; i < RATE_RUNS; i++)
		per_op = fmin(per_op, long_interval_ns(ctx, 1e6));
	double steps_per_ns = 1e5 / per_op;
	st->iters = (uint64_t)llround(want * steps_per_ns);
	if (st->iters < 1)
		st->iters = 1;
	/* Chunks aggregate like the harness's samples: a spin of 10 us or more
	 * is timed alone there (one chunk = one spin, 30 ns of clock reads is
	 * under 0.3 %), a shorter one in batches of 100-500 us (200 us chunks). */
	st->chunk_ns = want >= 10000 ? 1 : 2e5;
	osm_add_extra(ctx, "steps", (double)st->iters);
	calibrate_side(ctx, st, 0);
	return OSM_OK;
}

static void spin_teardown(struct osm_ctx *ctx)
{
	struct spin_state *st = ctx->priv;
	calibrate_side(ctx, st, 1);
	int nb = st->n[0], na = st->n[1];
	double *all = malloc((size_t)(nb + na) * sizeof(double));
	if (all) {
		memcpy(all, st->chunk[0], (size_t)nb * sizeof(double));
		memcpy(all + nb, st->chunk[1], (size_t)na * sizeof(double));
		osm_add_extra(ctx, "expected_ns", osm_sort_median(all, (size_t)(nb + na)));
		free(all);
	}
	double before = osm_sort_median(st->chunk[0], (size_t)nb);
	double after = osm_sort_median(st->chunk[1], (size_t)na);
	osm_add_extra(ctx, "drift", (after - before) / before);
	free(st);
	ctx->priv = NULL;
}

static const struct osm_param spin_params[] = {
	{.name = "ns", .type = OSM_P_INT, .def = 1000, .min = 10, .max = 100000000,
	 .help = "nominal length of one spin in ns"},
	{0},
};

static const struct osm_bench test_benches[] = {
	{
		.name = "spin",
		.desc = "busy loop of a known length (harness ground truth)",
		.unit = OSM_UNIT_NS,
		.flags = OSM_HIDDEN,
		.params = spin_params,
		.setup = spin_setup,
		.run = spin_run,
		.teardown = spin_teardown,
	},
};

const struct osm_family osm_family_test = {
	"test", "harness self-tests (hidden)",
	test_benches, ARRAY_SIZE(test_benches),
};
