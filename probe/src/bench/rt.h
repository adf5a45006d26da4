/* rt.h - the rt family's shared pieces (rt.c): scheduling class and memory
 * locking for the measuring thread, the stressors, the `cpus` list. Method:
 * docs/methods/rt.md. */
#ifndef OSM_RT_H
#define OSM_RT_H

#include <sched.h>
#include <stdint.h>

#include "../bench.h"
#include "stressors.h"

#define OSM_RT_MAX_CPUS 64

/* What an rt benchmark changed in its process, to undo in teardown. */
struct osm_rt_env {
	struct osm_stress stress;
	int sched_saved;         /* old_policy/old_sp hold the thread's class before */
	int old_policy;
	struct sched_param old_sp;
	int locked;              /* this benchmark called mlockall (munlockall in teardown) */
	int fifo;                /* the measuring thread runs SCHED_FIFO */
};

/* Starts the stressors (params stress, stress_op, stress_size) on CPUs other
 * than avoid[], then puts the calling thread in SCHED_FIFO at prio (0: left
 * SCHED_OTHER; refused without privilege: SCHED_OTHER, said in info.policy),
 * then locks memory when lock (root or an unlimited RLIMIT_MEMLOCK; info.mlock
 * says what happened). OSM_OK, or a skip/error with ctx->msg, nothing left
 * changed. */
int osm_rt_begin(struct osm_ctx *ctx, struct osm_rt_env *env, int prio, int lock, const int *avoid,
		 int n_avoid);
/* Undoes osm_rt_begin (idempotent) and puts the stressors' description in
 * info.stress. */
void osm_rt_end(struct osm_ctx *ctx, struct osm_rt_env *env);

/* Parses a CPU list ("" none, "all", "1,3", "0-2,5") into cpus (at most max);
 * returns the count or -1 with err set. "all" yields every allowed CPU. */
int osm_rt_parse_cpus(const char *s, int *cpus, int max, char *err, size_t len);

/* Nanoseconds of a timespec, and back. */
static inline int64_t osm_ts_ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

static inline struct timespec osm_ns_ts(int64_t ns)
{
	struct timespec t = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
	return t;
}

/* The benchmarks (rt_cyclic.c, rt_osnoise.c, rt_workload.c); the table is in rt.c. */
extern const struct osm_param osm_rt_cyclic_params[], osm_rt_osnoise_params[], osm_rt_workload_params[];
int osm_rt_cyclic_check(const struct osm_bench *b, const struct osm_pval *pv, char *err, size_t len);
int osm_rt_cyclic_setup(struct osm_ctx *ctx);
int osm_rt_cyclic_run(struct osm_ctx *ctx, uint64_t batch);
void osm_rt_cyclic_teardown(struct osm_ctx *ctx);
int osm_rt_osnoise_setup(struct osm_ctx *ctx);
int osm_rt_osnoise_run(struct osm_ctx *ctx, uint64_t batch);
void osm_rt_osnoise_teardown(struct osm_ctx *ctx);
int osm_rt_workload_setup(struct osm_ctx *ctx);
int osm_rt_workload_run(struct osm_ctx *ctx, uint64_t batch);
void osm_rt_workload_teardown(struct osm_ctx *ctx);

#endif
