/* harness.c - see harness.h. */
#include "harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "counters.h"
#include "profile.h"
#include "samples.h"

/* Operations at least this long are timed one by one (DESIGN 4.2) ... */
#define ONE_BY_ONE_NS 1000.0
/* ... and at least this many times the clock's overhead, so an empty timed
 * region (start + stop read) is under 1 % of every sample. */
#define ONE_BY_ONE_OVERHEADS 100.0
/* ... and at least this many clock steps, so the clock's granularity (about
 * 1 us for cntvct under qemu, 19-54 ns on ARM boards) is under 1 % too. */
#define ONE_BY_ONE_STEPS 100.0

double osm_target_batch_ns(double resolution_ns, double overhead_ns, double min_time_s)
{
	double t = 10000.0;
	if (1000.0 * resolution_ns > t)
		t = 1000.0 * resolution_ns;
	if (100.0 * overhead_ns > t)
		t = 100.0 * overhead_ns;
	if (min_time_s * 1e9 / 2000.0 > t)
		t = min_time_s * 1e9 / 2000.0;
	return t;
}

/* Calibration rule: if a batch of b took t < T, the next size is what would
 * take 1.2 T at the measured rate, at least doubled (so a noisy fast
 * measurement still makes progress) and at most x100 (so one slow outlier at
 * b = 1, e.g. a cold cache, cannot blow the batch up). */
uint64_t osm_next_batch(uint64_t b, double t_ns, double target_ns)
{
	uint64_t lo = b * 2, hi = b * 100;
	if (t_ns <= 0)
		return hi;
	double want = ceil(1.2 * target_ns * (double)b / t_ns);
	if (want < (double)lo)
		return lo;
	if (want > (double)hi)
		return hi;
	return (uint64_t)want;
}

/* Robust relative standard error of the median:
 *   sigma  = 1.4826 * MAD            (MAD: median absolute deviation)
 *   se     = 1.2533 * sigma / sqrt(n) (asymptotic SE of a normal median)
 *   rse    = se / |median|
 * Unlike the mean's RSE it is not wrecked by one timer interrupt among
 * thousands of microsecond samples. scratch holds n doubles.
 *
 * The MAD is floored at `mad_floor` (one clock step per operation, in the
 * unit of v): with a coarse clock most samples can be identical, the MAD 0,
 * and sampling would stop at once on a figure quantised to the clock. */
static double robust_rse_median(const double *v, size_t n, double *scratch, double mad_floor,
				double *med_out)
{
	if (n < 2)
		return INFINITY;
	memcpy(scratch, v, n * sizeof(double));
	double med = osm_sort_median(scratch, n);
	*med_out = med;
	if (med == 0)
		return INFINITY;
	double mad = osm_mad(v, n, med, scratch);
	if (mad < mad_floor)
		mad = mad_floor;
	return 1.2533 * 1.4826 * mad / sqrt((double)n) / fabs(med);
}

double osm_robust_rse(const double *v, size_t n, double *scratch, double mad_floor)
{
	double med;
	return robust_rse_median(v, n, scratch, mad_floor, &med);
}

/* s_k of osm_median_tau; head and tail are the sums of ind[0 .. k-1] and
 * ind[n-k .. n-1], so A_k + B_k = 2 S - head - tail. */
static double tau_lag_sum(const unsigned char *ind, size_t n, size_t k, size_t total, size_t head,
			  size_t tail, double p)
{
	size_t both = 0;
	for (size_t t = 0; t + k < n; t++)
		both += ind[t] & ind[t + k];
	return (double)both - p * (double)(2 * total - head - tail) + (double)(n - k) * p * p;
}

/* Integrated autocorrelation time of the median's indicator series, the
 * definition of docs/statistics.md ("Confidence interval of the median:
 * dependent samples"), computed exactly as stats.median_tau() in the front
 * end (test_harness.c pins the two to one value):
 *
 *   I_t = 1[v_t <= median],  S = sum I_t,  p = S / n    (tau = 1 if S is 0 or n)
 *   s_k = C_k - p (A_k + B_k) + (n - k) p^2,  k = 0 .. L,  L = min(n - 1, OSM_TAU_MAX_LAG)
 *         C_k = sum_{t<n-k} I_t I_{t+k},  A_k = sum_{t<n-k} I_t,  B_k = sum_{t>=k} I_t
 *         (integer counts; s_k / n is the autocovariance of I_t - p at lag k)
 *   rho_k = s_k / s_0
 *   G_j = rho_2j + rho_2j+1 for j = 0, 1, ... while G_j > 0 and 2j + 1 <= L,
 *         each G_j lowered to G_j-1 if above it (Geyer's initial monotone
 *         sequence); J pairs summed, M = 2J - 1 the last lag used
 *   tau = (-1 + 2 sum G_j) / max(0.5, 1 - (2M + 1) / n), clamped to [1, n]
 *
 * The median of n dependent samples varies as that of n / tau independent
 * ones (Bahadur: the median moves with the mean of I_t), so the RSE of
 * osm_robust_rse() grows by sqrt(tau). The divisor undoes the bias of
 * autocovariances taken around an estimated centre (about (2M + 1) tau / n).
 *
 * Cost: one pass to fill ind (n bytes), then one pass of at most n byte-ANDs
 * per lag used: lag 0 twice and at most OSM_TAU_MAX_LAG more, so at most
 * 259 n simple operations whatever the data; on independent samples about
 * 5 n (the sequence stops at lag 1 to 5). */
double osm_median_tau(const double *v, size_t n, double median, unsigned char *ind)
{
	if (n < 2)
		return 1.0;
	size_t total = 0;
	for (size_t t = 0; t < n; t++) {
		ind[t] = v[t] <= median;
		total += ind[t];
	}
	if (total == 0 || total == n)
		return 1.0;
	double p = (double)total / (double)n;
	size_t top = n - 1 < OSM_TAU_MAX_LAG ? n - 1 : OSM_TAU_MAX_LAG;
	double s0 = tau_lag_sum(ind, n, 0, total, 0, 0, p);
	if (!(s0 > 0))
		return 1.0;
	size_t head = 0, tail = 0, pairs = 0;
	double sum_g = 0, prev_g = INFINITY;
	while (2 * pairs + 1 <= top) {
		double rho[2];
		for (size_t e = 0; e < 2; e++) {
			size_t k = 2 * pairs + e;
			if (k > 0) {
				head += ind[k - 1];
				tail += ind[n - k];
			}
			rho[e] = tau_lag_sum(ind, n, k, total, head, tail, p) / s0;
		}
		double g = rho[0] + rho[1];
		if (!(g > 0))
			break;
		if (g > prev_g)
			g = prev_g;
		sum_g += g;
		prev_g = g;
		pairs++;
	}
	if (pairs == 0)
		return 1.0;
	double keep = 1.0 - (double)(2 * (2 * pairs - 1) + 1) / (double)n;
	if (keep < 0.5)
		keep = 0.5;
	double tau = (-1.0 + 2.0 * sum_g) / keep;
	if (tau < 1.0)
		tau = 1.0;
	if (tau > (double)n)
		tau = (double)n;
	return tau;
}

double osm_dependent_rse(const double *v, size_t n, double *scratch, double mad_floor, double *tau_out)
{
	double med = 0;
	double rse = robust_rse_median(v, n, scratch, mad_floor, &med);
	/* scratch (n doubles) is free again: it holds the n indicator bytes. */
	double tau = n >= 2 ? osm_median_tau(v, n, med, (unsigned char *)scratch) : 1.0;
	if (tau_out)
		*tau_out = tau;
	return rse * sqrt(tau);
}

const char *osm_stop_rule(const struct osm_budget *b, int64_t n, double rse,
			  double sampling_s, double total_s)
{
	if (n >= b->max_samples)
		return "max_samples";
	if (total_s >= b->max_time_s && n >= 1)
		return "max_time";
	if (n >= b->min_samples && sampling_s >= b->min_time_s && rse <= b->target_rse)
		return "rse";
	return NULL;
}

/* Time one call of run(ctx, batch); returns ns for the whole batch or < 0
 * on failure (ctx->msg set). */
static double time_batch(struct osm_ctx *ctx, uint64_t batch, int *st)
{
	const struct osm_bench *bn = ctx->bench;
	ctx->self_ns = -1;
	uint64_t t0 = osm_clock_start();
	*st = bn->run(ctx, batch);
	if (ctx->inject_ns > 0) {
		/* --inject-ns: real time added to the timed region, batch x ns. */
		uint64_t until = osm_clock_stop() + (uint64_t)((double)batch * ctx->inject_ns / osm_clock_tick_ns);
		while (osm_clock_stop() < until)
			;
	}
	uint64_t t1 = osm_clock_stop();
	if (*st != OSM_OK)
		return -1;
	if (bn->flags & OSM_SELF_TIMED) {
		if (ctx->self_ns < 0) {
			*st = osm_fail(ctx, OSM_ERROR, "internal: self-timed benchmark set no time");
			return -1;
		}
		return ctx->self_ns;
	}
	return osm_ticks_to_ns(t1 - t0);
}

static double now_s(void)
{
	return (double)osm_mono_raw_ns() * 1e-9;
}

static double to_unit(const struct osm_ctx *ctx, double ns_per_op)
{
	if (ctx->bench->unit == OSM_UNIT_BYTES_PER_S)
		return ns_per_op > 0 ? ctx->bytes_per_op * 1e9 / ns_per_op : NAN;
	return ns_per_op;
}

/* Calibrate the batch size while warming up: keep running until the batch
 * is calibrated and the warm-up time has passed. */
static enum osm_status calibrate(struct osm_ctx *ctx, const struct osm_budget *b,
				 double t_start, uint64_t *batch_out, double *target_out, int *done_out)
{
	const struct osm_clock_info *ci = osm_clock_get_info();
	double T = osm_target_batch_ns(ci->resolution_ns, ci->overhead_ns, b->min_time_s);
	double one_by_one_ns = fmax(fmax(ONE_BY_ONE_NS, ONE_BY_ONE_OVERHEADS * ci->overhead_ns),
				    ONE_BY_ONE_STEPS * ci->resolution_ns);
	uint64_t unit = !ctx->fixed_batch && ctx->min_batch > 1 ? ctx->min_batch : 1; /* whole groups */
	uint64_t batch = ctx->fixed_batch ? ctx->fixed_batch : unit;
	int fixed = (ctx->bench->flags & OSM_ONE_BY_ONE) != 0 || ctx->fixed_batch > 0;
	int st;
	*target_out = T;
	for (;;) {
		/* Three timings at this size; the smallest is the least disturbed. */
		double best = INFINITY;
		for (int k = 0; k < 3; k++) {
			double t = time_batch(ctx, batch, &st);
			if (t < 0)
				return st;
			if (t < best)
				best = t;
			if (now_s() - t_start > b->max_time_s)
				break;
		}
		if (!fixed) {
			if (batch == unit && best >= one_by_one_ns)
				fixed = 1; /* a microsecond or more: time one by one (one group) */
			else if (best >= T)
				fixed = 1;
			else if (batch >= (UINT64_C(1) << 40))
				fixed = 1;
			else
				batch = (osm_next_batch(batch, best, T) + unit - 1) / unit * unit;
		}
		if (fixed && now_s() - t_start >= b->warmup_s)
			break;
		if (now_s() - t_start > b->max_time_s) /* cannot calibrate in budget */
			break;
	}
	*done_out = fixed;
	*batch_out = batch;
	return OSM_OK;
}

/* One clock step per operation, in the benchmark's unit: the finest
 * difference two samples can show. For a rate v = B / t, a step dt moves v
 * by v * dt / t = v^2 * dt / (B * 1e9) at the current median v. */
static double step_floor(const struct osm_ctx *ctx, const struct osm_measurement *m, uint64_t batch)
{
	double step_ns = osm_clock_get_info()->resolution_ns / (double)batch;
	if (ctx->bench->unit != OSM_UNIT_BYTES_PER_S)
		return step_ns;
	double v = m->n ? m->values[m->n - 1] : 0;
	return v * v * step_ns / (ctx->bytes_per_op * 1e9);
}

/* --counters around the batches the harness times: one window over
 * consecutive sampled batches until their time adds up to WINDOW_NS, so a
 * window's own cost (about 1 us of task-clock on the development guest,
 * taken off but known only to a tenth or so) is spread over many short
 * operations: a window per 3 us stat() read a fifth high. The harness's
 * bookkeeping between the batches (a push, a clock read, the stopping rule:
 * tens of ns) falls inside; the RSE's sorting does not (the window is
 * closed before it), and with a profile on a window holds one batch. */
#define WINDOW_NS 100000.0

struct window {
	int open;
	uint64_t ops;
	double ns;
};

static void window_close(struct osm_ctx *ctx, struct window *w)
{
	if (w->open)
		osm_counters_end(ctx->counters, w->ops);
	w->open = 0;
	w->ops = 0;
	w->ns = 0;
}

/* One sampled batch: time_batch() inside a counting window (not warm-up or
 * calibration), outside its clock reads; an OSM_SELF_COUNTED benchmark
 * opens its windows itself, around what it times. The profile, when on, is
 * enabled outside the window, so its switching is not counted. */
static double counted_batch(struct osm_ctx *ctx, uint64_t batch, struct window *w, int *st)
{
	int whole = !(ctx->bench->flags & OSM_SELF_COUNTED);
	if (whole && ctx->profile)
		osm_profile_enable(ctx->profile);
	if (whole && ctx->counters && !w->open) {
		osm_counters_begin(ctx->counters);
		w->open = 1;
	}
	ctx->counting = 1;
	double t = time_batch(ctx, batch, st);
	ctx->counting = 0;
	uint64_t ops = t < 0 ? 0 : batch * (ctx->ops_per_unit ? ctx->ops_per_unit : 1);
	if (w->open) {
		w->ops += ops;
		w->ns += t;
		if (t < 0 || w->ns >= WINDOW_NS || ctx->profile)
			window_close(ctx, w);
	}
	if (whole && ctx->profile)
		osm_profile_disable(ctx->profile, ops);
	return t;
}

const char *osm_periodic_stop_rule(const struct osm_budget *b, int64_t n, double sampling_s, double total_s,
				   uint64_t stop_after, int stop_now, const char *stop_why)
{
	if (stop_now)
		return stop_why ? stop_why : "break";
	if (stop_after)
		return (uint64_t)n >= stop_after ? "loops" : NULL;
	if (n >= b->max_samples)
		return "max_samples";
	if (total_s >= b->max_time_s && n >= 1)
		return "max_time";
	if (n >= b->min_samples && sampling_s >= b->min_time_s)
		return "duration";
	return NULL;
}

/* Room for more samples, made outside any counting window and touched, so
 * neither the allocation nor a first touch's page fault is counted. */
static int grow(struct osm_ctx *ctx, struct osm_samples *vals, struct window *w)
{
	window_close(ctx, w);
	if (osm_samples_reserve(vals, vals->cap ? vals->cap : OSM_SAMPLES_FIRST_CAP))
		return -1;
	memset(vals->v + vals->n, 0, (vals->cap - vals->n) * sizeof(double));
	return 0;
}

/* The sampling phase: batches of m->batch operations until the stopping
 * rule says stop (m->stop_reason) or something fails (the status). *rse
 * is the rule's last RSE; *scratch is the caller's to free. */
static int sample_loop(struct osm_ctx *ctx, const struct osm_budget *b, struct osm_measurement *m,
		       double t_start, double **scratch, double *rse, struct window *w)
{
	uint64_t batch = m->batch;
	struct osm_samples vals = {0}; /* m->values and m->n are its v and n */
	size_t next_check = 2;
	double t_sampling = now_s();
	int st = OSM_OK;
	int periodic = (ctx->bench->flags & OSM_PERIODIC) != 0;
	for (;;) {
		if (vals.n == vals.cap && grow(ctx, &vals, w))
			return osm_fail(ctx, OSM_ERROR, "out of memory for samples");
		m->values = vals.v;
		double t = counted_batch(ctx, batch, w, &st);
		if (t < 0)
			return st;
		double v = to_unit(ctx, t / (double)batch);
		if (!isfinite(v))
			return osm_fail(ctx, OSM_ERROR, "measured a zero duration: the clock is too coarse for this benchmark");
		osm_samples_push(&vals, v); /* room made above: it cannot fail */
		m->n = vals.n;
		if (periodic) {
			double tn = now_s();
			m->stop_reason = osm_periodic_stop_rule(b, (int64_t)m->n, tn - t_sampling, tn - t_start,
								ctx->stop_after, ctx->stop_now, ctx->stop_why);
			if (m->stop_reason)
				return OSM_OK;
			continue;
		}
		/* The robust RSE sorts, and its tau costs up to 259 n (see
		 * osm_median_tau), so it is recomputed only when the sample count
		 * has grown by 5 % (and at min_samples): the checks of a whole
		 * instance sum to about 21 final-n's worth of work, O(n log n). */
		if (m->n >= next_check || m->n == (size_t)b->min_samples) {
			window_close(ctx, w);
			double *ns = realloc(*scratch, vals.cap * sizeof(double));
			if (!ns)
				return osm_fail(ctx, OSM_ERROR, "out of memory for samples");
			*scratch = ns;
			*rse = osm_dependent_rse(m->values, m->n, *scratch, step_floor(ctx, m, batch), &m->tau);
			next_check = m->n + m->n / 20 + 1;
		}
		double tn = now_s();
		m->stop_reason = osm_stop_rule(b, (int64_t)m->n, *rse, tn - t_sampling, tn - t_start);
		if (m->stop_reason)
			return OSM_OK;
	}
}

static int sample(struct osm_ctx *ctx, const struct osm_budget *b, struct osm_measurement *m,
		  double t_start, double **scratch, double *rse)
{
	struct window w = {0};
	int st = sample_loop(ctx, b, m, t_start, scratch, rse, &w);
	window_close(ctx, &w);
	return st;
}

enum osm_status osm_measure(struct osm_ctx *ctx, const struct osm_budget *b,
			    struct osm_measurement *m)
{
	const struct osm_bench *bn = ctx->bench;
	memset(m, 0, sizeof(*m));
	double t_start = now_s();
	int st = bn->setup ? bn->setup(ctx) : OSM_OK;
	if (st != OSM_OK)
		return (enum osm_status)st;
	if (bn->unit == OSM_UNIT_BYTES_PER_S && !(ctx->bytes_per_op > 0)) {
		if (bn->teardown)
			bn->teardown(ctx);
		return (enum osm_status)osm_fail(ctx, OSM_ERROR, "internal: bytes_per_op not set");
	}

	/* --counters: opened after setup(), so what setup() starts (ring
	 * members, workers) is not counted; see counters.h. */
	if (ctx->counters && bn->unit == OSM_UNIT_BYTES_PER_S)
		osm_counters_describe(ctx->counters, ctx->bytes_per_op, NULL);
	if (ctx->counters)
		osm_counters_open(ctx->counters);
	if (ctx->profile) { /* its set-up (kallsyms, the ring buffer) is not the benchmark's budget */
		double t_open = now_s();
		osm_profile_open(ctx->profile);
		t_start += now_s() - t_open;
	}

	uint64_t batch = 1;
	st = calibrate(ctx, b, t_start, &batch, &m->target_batch_ns, &m->calibrated);
	m->batch = batch;
	double *scratch = NULL;
	double rse = INFINITY;
	if (st == OSM_OK)
		st = sample(ctx, b, m, t_start, &scratch, &rse);
	/* The precision reached, from every sample (the loop recomputes it
	 * only every 5 %). */
	if (st == OSM_OK && m->n >= 2) {
		double *ns = realloc(scratch, m->n * sizeof(double));
		if (ns) {
			scratch = ns;
			rse = osm_dependent_rse(m->values, m->n, scratch, step_floor(ctx, m, batch), &m->tau);
		}
	}
	free(scratch);
	m->rse = rse;
	if (ctx->counters)
		osm_counters_finish(ctx->counters);
	if (ctx->profile)
		osm_profile_finish(ctx->profile);
	if (bn->teardown)
		bn->teardown(ctx);
	m->elapsed_s = now_s() - t_start;
	if (st != OSM_OK) {
		osm_measurement_free(m);
		return (enum osm_status)st;
	}
	return OSM_OK;
}

void osm_measurement_free(struct osm_measurement *m)
{
	free(m->values);
	m->values = NULL;
	m->n = 0;
}
