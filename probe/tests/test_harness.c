/* test_harness.c - batch calibration and stopping rules.
 *
 * The pure pieces (osm_target_batch_ns, osm_next_batch, osm_robust_rse,
 * osm_median_tau, osm_stop_rule, osm_median) are checked against tables and
 * direct computations; osm_median_tau also against a value computed by the
 * front end's stats.median_tau, so the probe and the front end agree. osm_measure is then driven by self-timed fake benchmarks
 * that report a scripted duration per batch (a fake clock), so its stop
 * reasons and values are deterministic; only wall-clock budgets use time. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "clock.h"
#include "harness.h"
#include "samples.h"
#include "tap.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ---------------------------------------------------------------- pure */

static const struct {
	double res, ovh, min_time, want;
} target_cases[] = {
	{0, 0, 0, 10000},           /* the 10 us floor */
	{1, 20, 0.01, 10000},       /* floor wins: 1000, 2000, 10000, 5000 */
	{1, 20, 0.1, 50000},        /* min_time / 2000 wins */
	{100, 30, 0.01, 100000},    /* 1000 x resolution wins (a 100 ns clock) */
	{1, 500, 0.01, 50000},      /* 100 x overhead wins (a slow clock read) */
	{41.67, 25, 0, 41670},      /* 24 MHz counter */
	{1, 1, 1.0, 500000},
	{0.3, 18, 2.0, 1000000},
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double direct_median(const double *v, size_t n)
{
	double *c = malloc(n * sizeof(double));
	memcpy(c, v, n * sizeof(double));
	qsort(c, n, sizeof(double), cmp_double);
	double m = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
	free(c);
	return m;
}

/* Two passes, written out independently of harness.c: the median, then the
 * median of absolute deviations from it. */
static double direct_rse(const double *v, size_t n)
{
	double med = direct_median(v, n);
	double *dev = malloc(n * sizeof(double));
	for (size_t i = 0; i < n; i++)
		dev[i] = fabs(v[i] - med);
	double mad = direct_median(dev, n);
	free(dev);
	double sigma = 1.4826 * mad;
	double se = 1.2533 * sigma / sqrt((double)n);
	return se / fabs(med);
}

/* Deterministic pseudo-random numbers (xorshift64*), same on every arch. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static double rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (double)((rng_state * 0x2545f4914f6cdd1dull) >> 11) / 9007199254740992.0;
}

/* Standard normal (Box-Muller) from rnd(). */
static double gauss(void)
{
	double u = rnd(), w = rnd();
	return sqrt(-2.0 * log(1.0 - u)) * cos(6.283185307179586 * w);
}

static void test_target(void)
{
	for (size_t i = 0; i < N(target_cases); i++) {
		double got = osm_target_batch_ns(target_cases[i].res, target_cases[i].ovh,
						 target_cases[i].min_time);
		is_double_near(got, target_cases[i].want, 1e-6 * target_cases[i].want,
			       "target(res=%g, ovh=%g, min_time=%g) = %g", target_cases[i].res,
			       target_cases[i].ovh, target_cases[i].min_time, target_cases[i].want);
	}
}

static void test_next_batch(void)
{
	/* Table: b, t, T -> next */
	static const struct {
		uint64_t b;
		double t, T;
		uint64_t want;
		const char *why;
	} cases[] = {
		{1, 1, 10000, 100, "a very fast op grows at most x100"},
		{1, 5000, 10000, 3, "ceil(1.2 T / t) = 3 at b = 1"},
		{100, 1000, 10000, 1200, "1.2 T at the measured rate (10 ns/op)"},
		{1000, 9000, 10000, 2000, "close to T still at least doubles"},
		{1000, 20000, 10000, 2000, "longer than T still doubles (caller stops first)"},
		{7, 0, 10000, 700, "t = 0 (coarse clock) -> x100"},
		{7, -1, 10000, 700, "t < 0 -> x100"},
		{3, 100, 10000, 300, "capped at x100"},
		{50, 2000, 100000, 3000, "1.2 * 1e5 * 50 / 2000 = 3000"},
	};
	for (size_t i = 0; i < N(cases); i++)
		is_int((int64_t)osm_next_batch(cases[i].b, cases[i].t, cases[i].T), (int64_t)cases[i].want,
		       "next_batch(%llu, %g, %g): %s", (unsigned long long)cases[i].b, cases[i].t,
		       cases[i].T, cases[i].why);

	/* Properties over many random inputs. */
	int bounds = 1, aims = 1;
	for (int k = 0; k < 20000; k++) {
		uint64_t b = 1 + (uint64_t)(rnd() * 1e6);
		double rate = 0.1 + rnd() * 1e4;  /* ns per op */
		double T = 1e4 + rnd() * 1e7;
		double t = rate * (double)b;
		uint64_t nb = osm_next_batch(b, t, T);
		if (nb < 2 * b || nb > 100 * b) {
			bounds = 0;
			diag("b=%llu t=%g T=%g -> %llu", (unsigned long long)b, t, T, (unsigned long long)nb);
		}
		double want = 1.2 * T / rate;
		if (want > 2.0 * (double)b + 1 && want < 100.0 * (double)b - 1 &&
		    fabs((double)nb * rate - 1.2 * T) > rate + 1e-9 * T) {
			aims = 0;
			diag("b=%llu rate=%g T=%g -> %llu (%g ns, want %g)", (unsigned long long)b, rate, T,
			     (unsigned long long)nb, (double)nb * rate, 1.2 * T);
		}
	}
	ok(bounds, "next_batch is always in [2b, 100b]");
	ok(aims, "next_batch hits 1.2 T / rate (to one op) when that is in range");
}

static void test_rse(void)
{
	double scratch[4096], v[4096] = {0};
	is_int(isinf(osm_robust_rse(v, 0, scratch, 0)) != 0, 1, "rse of 0 samples is inf");
	v[0] = 5;
	is_int(isinf(osm_robust_rse(v, 1, scratch, 0)) != 0, 1, "rse of 1 sample is inf");
	v[0] = -1;
	v[1] = 1;
	is_int(isinf(osm_robust_rse(v, 2, scratch, 0)) != 0, 1, "rse with a zero median is inf");
	for (int i = 0; i < 100; i++)
		v[i] = 42.0;
	is_double_near(osm_robust_rse(v, 100, scratch, 0), 0, 0, "rse of constant samples is 0");
	/* A coarse clock: identical samples still leave one clock step of doubt. */
	is_double_near(osm_robust_rse(v, 100, scratch, 2.0), 1.2533 * 1.4826 * 2.0 / 10.0 / 42.0, 1e-15,
		       "the MAD floor (one clock step) keeps the rse of identical samples above 0");
	v[0] = 40.0;
	v[1] = 44.0;
	is_double_near(osm_robust_rse(v, 100, scratch, 0.5), 1.2533 * 1.4826 * 0.5 / 10.0 / 42.0, 1e-15,
		       "the floor applies when the MAD (0 here: 98 of 100 equal) is below it");

	static const size_t sizes[] = {2, 3, 10, 11, 100, 1001, 4096};
	for (size_t s = 0; s < N(sizes); s++) {
		size_t n = sizes[s];
		for (size_t i = 0; i < n; i++) /* skewed, with rare large outliers */
			v[i] = 100.0 + 10.0 * rnd() + (rnd() < 0.01 ? 1e4 : 0);
		double copy[4096];
		memcpy(copy, v, n * sizeof(double));
		double want = direct_rse(v, n);
		double got = osm_robust_rse(v, n, scratch, 0);
		is_double_near(got, want, 1e-12 * want, "robust rse of %zu samples = direct two-pass (%g)",
			       n, want);
		ok(!memcmp(copy, v, n * sizeof(double)), "robust rse leaves its %zu inputs alone", n);
	}
	/* A known case: 1..9 -> median 5, MAD 2. */
	for (int i = 0; i < 9; i++)
		v[i] = 9 - i;
	is_double_near(osm_robust_rse(v, 9, scratch, 0), 1.2533 * 1.4826 * 2 / 3.0 / 5, 1e-15,
		       "robust rse of 9..1 = 1.2533 * 1.4826 * 2 / sqrt(9) / 5");
	/* Negative values: |median| in the denominator. */
	for (int i = 0; i < 9; i++)
		v[i] = -(double)(i + 1);
	is_double_near(osm_robust_rse(v, 9, scratch, 0), 1.2533 * 1.4826 * 2 / 3.0 / 5, 1e-15,
		       "robust rse of -1..-9 is positive");
}

/* tau written out independently of harness.c, as docs/statistics.md states
 * it: autocovariances of the centred indicator in doubles, Geyer's initial
 * monotone sequence, the window's bias divisor, clamped to [1, n]. */
static double direct_tau(const double *v, size_t n)
{
	if (n < 2)
		return 1.0;
	double med = direct_median(v, n), mean = 0;
	double *y = malloc(n * sizeof(double));
	for (size_t t = 0; t < n; t++)
		mean += (y[t] = v[t] <= med);
	mean /= (double)n;
	for (size_t t = 0; t < n; t++)
		y[t] -= mean;
	size_t top = n - 1 < OSM_TAU_MAX_LAG ? n - 1 : OSM_TAU_MAX_LAG;
	double c[OSM_TAU_MAX_LAG + 1];
	for (size_t k = 0; k <= top; k++) {
		c[k] = 0;
		for (size_t t = 0; t + k < n; t++)
			c[k] += y[t] * y[t + k];
	}
	free(y);
	if (!(c[0] > 0))
		return 1.0;
	double sum = 0, prev = INFINITY;
	size_t j = 0;
	for (; 2 * j + 1 <= top; j++) {
		double g = (c[2 * j] + c[2 * j + 1]) / c[0];
		if (g <= 0)
			break;
		prev = g < prev ? g : prev;
		sum += prev;
	}
	if (j == 0)
		return 1.0;
	double keep = fmax(0.5, 1.0 - (double)(2 * (2 * j - 1) + 1) / (double)n);
	return fmin(fmax(1.0, (-1.0 + 2.0 * sum) / keep), (double)n);
}

/* An AR(1) series of unit variance, x_t = phi x_t-1 + sqrt(1 - phi^2) e_t. */
static void ar1(double *v, size_t n, double phi, double mean, double sd)
{
	double z = gauss();
	for (size_t t = 0; t < n; t++) {
		if (t)
			z = phi * z + sqrt(1 - phi * phi) * gauss();
		v[t] = mean + sd * z;
	}
}

static double tau_of(const double *v, size_t n)
{
	static unsigned char ind[60000];
	return osm_median_tau(v, n, direct_median(v, n), ind);
}

static void test_tau(void)
{
	/* The front end's stats.median_tau of this series is 8.311244377811096
	 * (tests/unit/test_stats.py, PINNED_SERIES / PINNED_TAU: computed in
	 * Python and written here). An AR(1) with phi = 0.8, rounded to 0.1:
	 * a tie at the median (101.7), one monotone correction, a clear stop. */
	static const double pinned[48] = {
		93.4,  95.9,  87.3,  96.8,  100.6, 99.0,  97.7,  99.7,  98.4,  97.6,  101.7, 103.9,
		102.8, 101.8, 102.3, 98.7,  97.0,  100.3, 99.6,  92.8,  91.9,  96.8,  96.3,  96.3,
		100.2, 109.3, 103.9, 109.8, 101.7, 102.3, 96.0,  103.5, 107.0, 111.3, 104.6, 107.1,
		103.1, 100.2, 102.7, 106.5, 106.2, 101.9, 97.4,  105.1, 107.1, 109.2, 118.3, 110.6,
	};
	is_double_near(tau_of(pinned, 48), 8.311244377811096, 1e-12 * 8.3,
		       "tau of the pinned series = stats.median_tau's 8.311244377811096");

	static double v[50000], scratch[50000];
	unsigned char *ind = (unsigned char *)scratch;
	is_double_near(osm_median_tau(v, 0, 0, ind), 1, 0, "tau of 0 samples is 1");
	v[0] = 3;
	is_double_near(osm_median_tau(v, 1, 3, ind), 1, 0, "tau of 1 sample is 1");
	for (int i = 0; i < 100; i++)
		v[i] = 42;
	is_double_near(tau_of(v, 100), 1, 0, "tau of constant samples is 1 (nothing varies)");
	for (int i = 0; i < 200; i++)
		v[i] = i % 2 ? 3 : 1;
	is_double_near(tau_of(v, 200), 1, 0, "tau of alternating samples is 1 (anti-correlation not credited)");
	for (int i = 0; i < 400; i++)
		v[i] = (i / 20) % 2 ? 3 : 1;
	ok(tau_of(v, 400) > 10, "tau of runs of 20 equal samples is large (%g)", tau_of(v, 400));

	static const struct {
		size_t n;
		double phi;
	} cases[] = {{2, 0}, {3, 0.5}, {10, 0.9}, {51, 0}, {400, 0.5}, {3000, 0.9}, {3000, 0}, {20000, 0.99}};
	for (size_t c = 0; c < N(cases); c++) {
		ar1(v, cases[c].n, cases[c].phi, 100, 5);
		double want = direct_tau(v, cases[c].n), got = tau_of(v, cases[c].n);
		is_double_near(got, want, 1e-9 * want, "tau of AR(1) phi=%g n=%zu = direct (%g)", cases[c].phi,
			       cases[c].n, want);
		for (size_t i = 0; i < cases[c].n; i++) /* ties: rounded to 1 */
			v[i] = round(v[i]);
		want = direct_tau(v, cases[c].n);
		is_double_near(tau_of(v, cases[c].n), want, 1e-9 * want,
			       "tau of rounded AR(1) phi=%g n=%zu = direct (%g)", cases[c].phi, cases[c].n, want);
	}
	/* Gaussian AR(1), phi = 0.9: theory 1 + 2 sum (2/pi) asin(0.9^k) = 13.28. */
	ar1(v, 50000, 0.9, 1000, 50);
	double tau = tau_of(v, 50000);
	ok(tau > 0.85 * 13.28 && tau < 1.15 * 13.28, "tau of AR(1) phi=0.9, n=50000: %g ~ 13.28", tau);
	/* The stopping rule's RSE is the iid robust RSE times sqrt(tau). */
	double tau_out = 0, iid = osm_robust_rse(v, 50000, scratch, 0);
	double dep = osm_dependent_rse(v, 50000, scratch, 0, &tau_out);
	is_double_near(tau_out, tau, 1e-12 * tau, "dependent_rse reports tau");
	is_double_near(dep, iid * sqrt(tau), 1e-12 * dep, "dependent rse = robust rse x sqrt(tau)");
	for (size_t i = 0; i < 50000; i++)
		v[i] = 1000 + 50 * gauss();
	tau = tau_of(v, 50000);
	ok(tau >= 1 && tau < 1.1, "tau of 50000 independent samples: %g ~ 1", tau);
	/* Bounded cost: a series correlated beyond the lag cap stops at it. */
	for (size_t i = 0; i < 50000; i++)
		v[i] = (i / 2000) % 2 ? 3 : 1;
	tau = tau_of(v, 50000);
	ok(tau > 400 && tau <= 2.0 * OSM_TAU_MAX_LAG + 1.5, "tau is capped by OSM_TAU_MAX_LAG (%g)", tau);
}

static void test_stop_rule(void)
{
	const struct osm_budget b = {
		.min_time_s = 0.1, .max_time_s = 1.0, .warmup_s = 0.01, .target_rse = 0.01,
		.min_samples = 10, .max_samples = 1000,
	};
	static const struct {
		int64_t n;
		double rse, sampling, total;
		const char *want;
		const char *why;
	} cases[] = {
		{1000, 1.0, 0.0, 0.0, "max_samples", "max_samples reached"},
		{1001, 1.0, 0.0, 0.0, "max_samples", "beyond max_samples"},
		{1000, 0.0, 5.0, 5.0, "max_samples", "max_samples checked first"},
		{5, 1.0, 0.5, 1.0, "max_time", "max_time counts the whole instance (total)"},
		{5, 1.0, 0.01, 1.5, "max_time", "max_time with little sampling time"},
		{5, 0.0, 0.99, 0.99, NULL, "not yet max_time"},
		{0, 1.0, 2.0, 2.0, NULL, "max_time never stops with 0 samples"},
		{1, 1.0, 2.0, 2.0, "max_time", "max_time with 1 sample"},
		{10, 0.005, 0.1, 0.2, "rse", "rse after min_samples and min_time"},
		{10, 0.01, 0.1, 0.2, "rse", "rse equal to the target"},
		{9, 0.005, 0.5, 0.6, NULL, "rse ignored before min_samples"},
		{500, 0.005, 0.099, 0.5, NULL, "rse ignored before min_time (sampling time)"},
		{500, 0.005, 0.05, 0.9, NULL, "min_time counts sampling only, not total"},
		{500, 0.0101, 0.5, 0.6, NULL, "rse above the target"},
		{500, INFINITY, 0.5, 0.6, NULL, "rse inf (not computed yet)"},
	};
	for (size_t i = 0; i < N(cases); i++)
		is_str(osm_stop_rule(&b, cases[i].n, cases[i].rse, cases[i].sampling, cases[i].total),
		       cases[i].want, "stop_rule: %s", cases[i].why);
}

/* OSM_PERIODIC (rt): the benchmark's own stop, then a fixed count, then the
 * budget; the RSE never stops it. */
static void test_periodic_stop_rule(void)
{
	const struct osm_budget b = {
		.min_time_s = 0.1, .max_time_s = 1.0, .warmup_s = 0.01, .target_rse = 0.01,
		.min_samples = 10, .max_samples = 1000,
	};
	static const struct {
		int64_t n;
		double sampling, total;
		uint64_t stop_after;
		int stop_now;
		const char *why_in, *want, *why;
	} cases[] = {
		{5, 0.0, 0.0, 0, 1, NULL, "break", "stop_now without a reason is a break"},
		{5, 0.0, 0.0, 100, 1, "threshold", "threshold", "stop_now first, with its reason"},
		{99, 5.0, 5.0, 100, 0, NULL, NULL, "loops: neither max_time nor max_samples stop it"},
		{100, 0.0, 0.0, 100, 0, NULL, "loops", "loops reached"},
		{5000, 0.0, 0.0, 100000, 0, NULL, NULL, "loops above max_samples"},
		{1000, 0.0, 0.0, 0, 0, NULL, "max_samples", "max_samples without loops"},
		{5, 0.5, 1.0, 0, 0, NULL, "max_time", "max_time counts the whole instance"},
		{0, 2.0, 2.0, 0, 0, NULL, NULL, "max_time never stops with 0 samples"},
		{10, 0.1, 0.2, 0, 0, NULL, "duration", "min_time and min_samples: duration"},
		{9, 0.5, 0.6, 0, 0, NULL, NULL, "duration waits for min_samples"},
		{500, 0.099, 0.5, 0, 0, NULL, NULL, "duration counts sampling time only"},
	};
	for (size_t i = 0; i < N(cases); i++)
		is_str(osm_periodic_stop_rule(&b, cases[i].n, cases[i].sampling, cases[i].total, cases[i].stop_after,
					      cases[i].stop_now, cases[i].why_in),
		       cases[i].want, "periodic_stop_rule: %s", cases[i].why);
}

static void test_median(void)
{
	static const struct {
		double v[8];
		size_t n;
		double want;
	} cases[] = {
		{{7}, 1, 7},
		{{3, 1, 2}, 3, 2},
		{{4, 1, 3, 2}, 4, 2.5},
		{{5, 5, 1, 5, 9}, 5, 5},
		{{-1, -3, -2, -4}, 4, -2.5},
		{{1e9, 1, 2, 1e-9, 3, 4, 5}, 7, 3},
		{{10, 9, 8, 7, 6, 5, 4, 3}, 8, 6.5},
	};
	for (size_t i = 0; i < N(cases); i++) {
		double copy[8];
		memcpy(copy, cases[i].v, sizeof(copy));
		is_double_near(osm_median(copy, cases[i].n), cases[i].want, 0, "median case %zu = %g", i,
			       cases[i].want);
		ok(!memcmp(copy, cases[i].v, sizeof(copy)), "median case %zu leaves its input in order", i);
	}
	ok(isnan(osm_median(NULL, 0)), "median of nothing is NaN");
}

/* ------------------------------------------------- osm_measure, fake clock */

/* The fake benchmark: run() reports ns_per_op[k % n_pattern] * batch as the
 * batch's time (OSM_SELF_TIMED), so the harness sees scripted durations. */
static struct {
	int setups, runs, teardowns;
	int setup_status;     /* what setup returns */
	int fail_at_run;      /* run number that fails (0 = never) */
	double pattern[4];
	int n_pattern;
	double bytes_per_op;  /* set in setup when > 0 */
	int noisy;            /* pattern[0] * (1 + uniform[0, 1)) instead */
	double ar_sd;         /* > 0: pattern[0] * (1 + ar_sd * z_t), z an AR(1) of unit variance */
	double ar_phi;        /* its lag-1 correlation (0: independent samples) */
	double ar_z;
} fk;

static int fake_setup(struct osm_ctx *ctx)
{
	fk.setups++;
	if (fk.bytes_per_op > 0)
		ctx->bytes_per_op = fk.bytes_per_op;
	if (fk.setup_status == OSM_SKIP)
		return osm_fail(ctx, OSM_SKIP, "no widget (%d)", 7);
	return fk.setup_status;
}

static int fake_run(struct osm_ctx *ctx, uint64_t batch)
{
	fk.runs++;
	if (fk.fail_at_run && fk.runs == fk.fail_at_run) {
		errno = ENOENT;
		return osm_fail_errno(ctx, "open widget");
	}
	double per_op = fk.noisy ? fk.pattern[0] * (1.0 + rnd()) : fk.pattern[fk.runs % fk.n_pattern];
	if (fk.ar_sd > 0) {
		fk.ar_z = fk.runs == 1 ? gauss() : fk.ar_phi * fk.ar_z + sqrt(1 - fk.ar_phi * fk.ar_phi) * gauss();
		per_op = fk.pattern[0] * (1.0 + fk.ar_sd * fk.ar_z);
	}
	ctx->self_ns = per_op * (double)batch;
	return OSM_OK;
}

static void fake_teardown(struct osm_ctx *ctx)
{
	(void)ctx;
	fk.teardowns++;
}

static struct osm_bench fake_bench = {
	.name = "fake",
	.desc = "scripted durations",
	.unit = OSM_UNIT_NS,
	.flags = OSM_SELF_TIMED | OSM_HIDDEN,
	.setup = fake_setup,
	.run = fake_run,
	.teardown = fake_teardown,
};

static void fake_reset(double p0, double p1)
{
	memset(&fk, 0, sizeof(fk));
	fk.pattern[0] = p0;
	fk.pattern[1] = p1;
	fk.n_pattern = 2;
}

static enum osm_status measure(const struct osm_budget *b, struct osm_measurement *m,
			       struct osm_ctx *ctx)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->bench = &fake_bench;
	return osm_measure(ctx, b, m);
}

static void test_measure(void)
{
	struct osm_ctx ctx;
	struct osm_measurement m;
	char err[256];
	if (!ok(osm_clock_init(NULL, 20, err, sizeof(err)) == 0, "clock init for osm_measure"))
		diag("%s", err);

	/* Constant 1000 ns/op: RSE 0, stops on "rse" once min_samples and
	 * min_time are both met. */
	{
		struct osm_budget b = {.min_time_s = 0.02, .max_time_s = 30, .warmup_s = 0,
				       .target_rse = 0.01, .min_samples = 25, .max_samples = 100000000};
		fake_reset(1000, 1000);
		enum osm_status st = measure(&b, &m, &ctx);
		is_int(st, OSM_OK, "constant: OK");
		is_str(m.stop_reason, "rse", "constant: stops on rse");
		ok(m.n >= 25, "constant: at least min_samples (%zu)", m.n);
		ok(m.batch >= 1, "constant: batch %llu >= 1", (unsigned long long)m.batch);
		ok(m.target_batch_ns >= 10000, "constant: target batch %g >= 10 us", m.target_batch_ns);
		int all = 1;
		for (size_t i = 0; i < m.n; i++)
			all &= m.values[i] == 1000.0;
		ok(all, "constant: every value is 1000 ns/op (batch time / batch)");
		is_int(fk.setups, 1, "constant: setup once");
		is_int(fk.teardowns, 1, "constant: teardown once");
		ok(m.elapsed_s >= 0.02, "constant: elapsed %g s covers min_time", m.elapsed_s);
		osm_measurement_free(&m);
		ok(m.values == NULL && m.n == 0, "measurement_free clears");
	}
	/* max_samples stops first. */
	{
		struct osm_budget b = {.min_time_s = 10, .max_time_s = 30, .warmup_s = 0,
				       .target_rse = 0.01, .min_samples = 5, .max_samples = 50};
		fake_reset(1000, 1000);
		is_int(measure(&b, &m, &ctx), OSM_OK, "max_samples: OK");
		is_str(m.stop_reason, "max_samples", "max_samples: stop reason");
		is_int((int64_t)m.n, 50, "max_samples: exactly max_samples values");
		osm_measurement_free(&m);
	}
	/* Noisy values never reach a tiny RSE target: max_time stops it.
	 * (Not a two-valued pattern: with a majority of identical values the
	 * MAD, and so the robust RSE, is exactly 0.) */
	{
		struct osm_budget b = {.min_time_s = 0.01, .max_time_s = 0.1, .warmup_s = 0,
				       .target_rse = 1e-9, .min_samples = 5, .max_samples = 100000000};
		fake_reset(1000, 1000);
		fk.noisy = 1;
		is_int(measure(&b, &m, &ctx), OSM_OK, "max_time: OK");
		is_str(m.stop_reason, "max_time", "max_time: stop reason");
		ok(m.elapsed_s >= 0.1 && m.elapsed_s < 10, "max_time: elapsed %g s", m.elapsed_s);
		ok(m.n >= 1, "max_time: has samples (%zu)", m.n);
		osm_measurement_free(&m);
	}
	/* Dependent samples need more of them: 1 ms +- 5 %, independent or an
	 * AR(1) with phi = 0.9 (tau ~ 13). Independent: n ~ (1.2533 * 0.05 /
	 * 0.002)^2 ~ 980; AR(1): about tau times that. */
	{
		struct osm_budget b = {.min_time_s = 0, .max_time_s = 60, .warmup_s = 0,
				       .target_rse = 0.002, .min_samples = 10, .max_samples = 1000000};
		size_t n_iid = 0, n_ar = 0;
		for (int dep = 0; dep < 2; dep++) {
			fake_reset(1e6, 1e6);
			fk.ar_sd = 0.05;
			fk.ar_phi = dep ? 0.9 : 0;
			is_int(measure(&b, &m, &ctx), OSM_OK, "%s: OK", dep ? "AR(1)" : "iid");
			is_str(m.stop_reason, "rse", "%s: stops on rse", dep ? "AR(1)" : "iid");
			ok(m.rse <= 0.002 && m.tau >= 1, "%s: n=%zu rse=%g tau=%g", dep ? "AR(1)" : "iid", m.n, m.rse,
			   m.tau);
			*(dep ? &n_ar : &n_iid) = m.n;
			osm_measurement_free(&m);
		}
		ok(n_iid > 500 && n_iid < 2000, "iid: about 980 samples (%zu)", n_iid);
		ok(n_ar > 5 * n_iid, "AR(1) phi=0.9 needs many more samples than iid (%zu vs %zu)", n_ar, n_iid);
	}
	/* Skip from setup: no values, no teardown, the reason kept. */
	{
		struct osm_budget b = {.min_time_s = 0.01, .max_time_s = 1, .target_rse = 0.01,
				       .min_samples = 5, .max_samples = 100};
		fake_reset(1000, 1000);
		fk.setup_status = OSM_SKIP;
		is_int(measure(&b, &m, &ctx), OSM_SKIP, "skip: status");
		is_str(ctx.msg, "no widget (7)", "skip: reason");
		ok(m.values == NULL && m.n == 0, "skip: no values");
		is_int(fk.teardowns, 0, "skip: no teardown without a successful setup");
		is_int(fk.runs, 0, "skip: run never called");
	}
	/* Error in run during sampling: teardown still runs, values freed. */
	{
		struct osm_budget b = {.min_time_s = 10, .max_time_s = 30, .target_rse = 0.01,
				       .min_samples = 5, .max_samples = 100000};
		fake_reset(1000, 1000);
		fk.fail_at_run = 40;
		is_int(measure(&b, &m, &ctx), OSM_ERROR, "error: status");
		ok(strstr(ctx.msg, "open widget: ") != NULL, "error: message '%s'", ctx.msg);
		ok(m.values == NULL && m.n == 0, "error: values freed");
		is_int(fk.teardowns, 1, "error: teardown called");
	}
	/* Error in the first run (calibration). */
	{
		struct osm_budget b = {.min_time_s = 0.01, .max_time_s = 1, .target_rse = 0.01,
				       .min_samples = 5, .max_samples = 100};
		fake_reset(1000, 1000);
		fk.fail_at_run = 1;
		is_int(measure(&b, &m, &ctx), OSM_ERROR, "error in calibration: status");
		is_int(fk.teardowns, 1, "error in calibration: teardown called");
		ok(m.values == NULL, "error in calibration: no values");
	}
	/* bytes_per_s: values are bytes_per_op * 1e9 / ns_per_op. */
	{
		struct osm_budget b = {.min_time_s = 0.01, .max_time_s = 30, .target_rse = 0.01,
				       .min_samples = 10, .max_samples = 100000000};
		fake_bench.unit = OSM_UNIT_BYTES_PER_S;
		fake_reset(1000, 1000);
		fk.bytes_per_op = 4096;
		is_int(measure(&b, &m, &ctx), OSM_OK, "bytes_per_s: OK");
		ok(m.n > 0 && m.values[0] == 4096e9 / 1000, "bytes_per_s: value %g = 4.096e9",
		   m.n ? m.values[0] : NAN);
		osm_measurement_free(&m);

		fake_reset(1000, 1000);
		is_int(measure(&b, &m, &ctx), OSM_ERROR, "bytes_per_s without bytes_per_op: error");
		ok(strstr(ctx.msg, "bytes_per_op") != NULL, "bytes_per_s: message '%s'", ctx.msg);
		is_int(fk.teardowns, 1, "bytes_per_s: teardown after a setup that succeeded");
		fake_bench.unit = OSM_UNIT_NS;
	}
	/* osm_add_extra: replaces an existing key (overflow: test_extra_limit). */
	{
		memset(&ctx, 0, sizeof(ctx));
		osm_add_extra(&ctx, "a", 1);
		osm_add_extra(&ctx, "b", 2);
		osm_add_extra(&ctx, "a", 3);
		is_int(ctx.n_extra, 2, "add_extra: same key replaces");
		is_double_near(ctx.extra[0].value, 3, 0, "add_extra: replaced value");
		for (int i = 0; i < 20; i++)
			osm_add_extra(&ctx, i % 2 ? "odd" : "even", i);
		is_int(ctx.n_extra, 4, "add_extra: 20 values under two keys are two extras");
	}
}

/* An extra beyond OSM_MAX_EXTRA is never dropped silently: the probe stops
 * with an internal error (issue 10). Eight distinct extras are kept. */
static void test_extra_limit(void)
{
	static const struct osm_bench b = {.name = "extras"};
	static const char *keys[OSM_MAX_EXTRA + 1] = {"a", "b", "c", "d", "e", "f", "g", "h", "i"};
	struct osm_ctx ctx;
	memset(&ctx, 0, sizeof(ctx));
	ctx.bench = &b;
	for (int i = 0; i < OSM_MAX_EXTRA; i++)
		osm_add_extra(&ctx, keys[i], i);
	osm_add_extra(&ctx, "a", 42);
	ok(ctx.n_extra == OSM_MAX_EXTRA && ctx.extra[0].value == 42, "%d extras kept, a key set twice updated",
	   OSM_MAX_EXTRA);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		if (!freopen("/dev/null", "w", stderr))
			_exit(2);
		osm_add_extra(&ctx, keys[OSM_MAX_EXTRA], 1);
		_exit(0);
	}
	int st = 0;
	int waited = pid > 0 && waitpid(pid, &st, 0) == pid;
	ok(waited && WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT,
	   "extra number %d stops the probe (status %#x)", OSM_MAX_EXTRA + 1, st);
}

int main(void)
{
	test_extra_limit();
	test_target();
	test_next_batch();
	test_rse();
	test_tau();
	test_stop_rule();
	test_periodic_stop_rule();
	test_median();
	test_measure();
	return done_testing();
}
