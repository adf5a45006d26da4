/* task_thread.c - task.thread_create, task.thread_join and
 * task.thread_child: pthread_create() of a thread that returns at once.
 * See task.c. */
#include "task.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../affinity.h"
#include "../bench.h"
#include "../clock.h"
#include "../compiler.h"

/* ---- threads ---------------------------------------------------------- */

struct thread_state {
	pthread_attr_t attr;
	int have_attr;
	atomic_ullong stamp;
	struct osm_ctx *ctx; /* thread_child: the new thread ends the counters' window */
};

static void *thread_empty(void *arg)
{
	return arg;
}

/* The clock stops in the new thread, and so does the counters' window
 * (the creator waits in pthread_join and touches neither meanwhile). */
static void *thread_stamp(void *arg)
{
	struct thread_state *s = arg;
	atomic_store_explicit(&s->stamp, osm_clock_stop(), memory_order_relaxed);
	osm_count_end(s->ctx, 1);
	return NULL;
}

int task_thread_setup(struct osm_ctx *ctx)
{
	struct thread_state *s = calloc(1, sizeof(*s));
	if (!s)
		return osm_fail(ctx, OSM_ERROR, "out of memory");
	ctx->priv = s;
	int cross = osm_param_int(ctx, "placement") == 1;
	ctx->placement = cross ? "cross_cpu" : "same_cpu";
	if (cross) {
		/* The new thread starts on the other CPU (glibc applies the mask
		 * before the thread runs). same_cpu inherits the probe's pinning
		 * and makes no extra call. */
		int other = osm_other_cpu(ctx->cpu);
		if (other < 0) {
			free(s);
			ctx->priv = NULL;
			return osm_skip_one_cpu(ctx, "placement=cross_cpu", "--param placement=same_cpu");
		}
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(other, &set);
		pthread_attr_init(&s->attr);
		s->have_attr = 1;
		pthread_attr_setaffinity_np(&s->attr, sizeof(set), &set);
	}
	return OSM_OK;
}

void task_thread_teardown(struct osm_ctx *ctx)
{
	struct thread_state *s = ctx->priv;
	if (s && s->have_attr)
		pthread_attr_destroy(&s->attr);
	free(s);
	ctx->priv = NULL;
}

/* task.thread_create: until pthread_create() returns; the join is outside
 * the clock (LEBench "thr create") and outside the counters' window. */
int task_thread_create_run(struct osm_ctx *ctx, uint64_t batch)
{
	struct thread_state *s = ctx->priv;
	double total = 0;
	for (uint64_t i = 0; i < batch; i++) {
		pthread_t t;
		void *ret;
		osm_count_begin(ctx);
		uint64_t t0 = osm_clock_start();
		int e = pthread_create(&t, s->have_attr ? &s->attr : NULL, thread_empty, s);
		uint64_t t1 = osm_clock_stop();
		osm_count_end(ctx, e ? 0 : 1);
		if (e)
			return osm_fail(ctx, OSM_ERROR, "pthread_create: %s", strerror(e));
		pthread_join(t, &ret);
		OSM_KEEP(ret);
		total += osm_ticks_to_ns(t1 - t0);
	}
	ctx->self_ns = total;
	return OSM_OK;
}

/* task.thread_join: pthread_create() + pthread_join(), both timed. */
int task_thread_join_run(struct osm_ctx *ctx, uint64_t batch)
{
	struct thread_state *s = ctx->priv;
	uint64_t t0 = osm_clock_start();
	for (uint64_t i = 0; i < batch; i++) {
		pthread_t t;
		void *ret;
		int e = pthread_create(&t, s->have_attr ? &s->attr : NULL, thread_empty, s);
		if (e)
			return osm_fail(ctx, OSM_ERROR, "pthread_create: %s", strerror(e));
		pthread_join(t, &ret);
		OSM_KEEP(ret);
	}
	ctx->self_ns = osm_ticks_to_ns(osm_clock_stop() - t0);
	return OSM_OK;
}

int task_thread_child_run(struct osm_ctx *ctx, uint64_t batch)
{
	struct thread_state *s = ctx->priv;
	double total = 0;
	for (uint64_t i = 0; i < batch; i++) {
		pthread_t t;
		atomic_store(&s->stamp, 0);
		s->ctx = ctx;
		osm_count_begin(ctx);
		uint64_t t0 = osm_clock_start();
		int e = pthread_create(&t, s->have_attr ? &s->attr : NULL, thread_stamp, s);
		if (e) {
			osm_count_end(ctx, 0);
			return osm_fail(ctx, OSM_ERROR, "pthread_create: %s", strerror(e));
		}
		pthread_join(t, NULL);
		uint64_t t1 = atomic_load(&s->stamp);
		if (t1 < t0)
			return osm_fail(ctx, OSM_ERROR, "the thread's clock stamp is earlier than its creation "
					"(clock not synchronised across CPUs?)");
		total += osm_ticks_to_ns(t1 - t0);
	}
	ctx->self_ns = total;
	return OSM_OK;
}
