/* harness.h - warm-up, batch calibration and adaptive sampling. The only
 * place where stopping rules live (DESIGN section 4). */
#ifndef OSM_HARNESS_H
#define OSM_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include "bench.h"

struct osm_budget {
	double min_time_s;   /* sample at least this long (after warm-up) */
	double max_time_s;   /* stop sampling after this long, whatever the RSE */
	double warmup_s;     /* run untimed batches at least this long first */
	double target_rse;   /* stop when the robust RSE of the median (x sqrt(tau)) falls under this */
	int64_t min_samples; /* never fewer samples (unless max_time stops first) */
	int64_t max_samples; /* never more samples */
};

struct osm_measurement {
	double *values;          /* per-operation values in the benchmark's unit */
	size_t n;
	uint64_t batch;          /* operations per sample */
	double elapsed_s;        /* whole instance, warm-up and calibration included */
	const char *stop_reason; /* "rse", "max_time", "max_samples" */
	double target_batch_ns;  /* the batch length calibration aimed at */
	double rse;              /* the stopping rule's relative standard error at the stop */
	double tau;              /* the autocorrelation time in that rse (osm_median_tau); 0 if none */
	int calibrated;          /* 0: the batch size was still being calibrated at max_time */
};

/* The batch length calibration aims at:
 *   T = max(1000 * resolution, 100 * overhead, 10 us, min_time / 2000)
 * so the clock's step and the cost of reading it are each under 0.1 % and
 * 1 % of a batch, and a min_time run yields about 2000 samples at most. */
double osm_target_batch_ns(double resolution_ns, double overhead_ns, double min_time_s);

/* Next batch size during calibration, from the last batch size b and its
 * measured time t_ns against the target T (see harness.c for the rule). */
uint64_t osm_next_batch(uint64_t b, double t_ns, double target_ns);

/* Robust RSE of the median from the MAD, the MAD floored at mad_floor
 * (formula in harness.c), for independent samples; scratch must hold n
 * doubles. INFINITY for n < 2 or a zero median. */
double osm_robust_rse(const double *v, size_t n, double *scratch, double mad_floor);

/* Largest lag of osm_median_tau's autocorrelation sum: bounds its cost
 * (n per lag) and caps tau at about 2 * 256 + 1. The front end's
 * stats.TAU_MAX_LAG is the same number. */
#define OSM_TAU_MAX_LAG 256

/* Integrated autocorrelation time (>= 1) of the indicator series
 * 1[v_t <= median]: the median of these n samples is worth n / tau
 * independent ones (formula in harness.c, docs/statistics.md). ind must
 * hold n bytes. 1 for n < 2. */
double osm_median_tau(const double *v, size_t n, double median, unsigned char *ind);

/* What the stopping rule uses: osm_robust_rse() * sqrt(tau), tau from
 * osm_median_tau() about the samples' median (stored in *tau_out unless
 * NULL). scratch must hold n doubles. */
double osm_dependent_rse(const double *v, size_t n, double *scratch, double mad_floor, double *tau_out);
/* Whether sampling stops now, and why (NULL = go on), given n samples whose
 * robust RSE is rse. min_time counts sampling time only; max_time counts the
 * whole instance (total_s). */
const char *osm_stop_rule(const struct osm_budget *b, int64_t n, double rse,
			  double sampling_s, double total_s);

/* The same for OSM_PERIODIC benchmarks (bench.h), after each sample: the
 * benchmark's own stop (stop_now: stop_why, default "break"), then exactly
 * stop_after samples when it is set ("loops", nothing else stops it), then
 * max_samples, max_time, and min_time with min_samples ("duration"); never
 * the RSE. */
const char *osm_periodic_stop_rule(const struct osm_budget *b, int64_t n, double sampling_s, double total_s,
				   uint64_t stop_after, int stop_now, const char *stop_why);

/* Runs setup, calibration/warm-up, sampling and teardown for ctx->bench.
 * On OSM_SKIP or OSM_ERROR, ctx->msg says why and m holds no values. */
enum osm_status osm_measure(struct osm_ctx *ctx, const struct osm_budget *b,
			    struct osm_measurement *m);
void osm_measurement_free(struct osm_measurement *m);

#endif
