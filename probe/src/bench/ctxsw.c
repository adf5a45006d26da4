/* ctxsw.c - ctxsw.*: context switches between processes and threads.
 * Method: docs/methods/ctxsw.md
 *
 * This file: ctxsw.futex, ctxsw.yield and the family's table; the pipe ring
 * (ctxsw.pipe, ctxsw.pipe_rtt) is in ctxsw_ring.c.
 *
 *  - ctxsw.pipe: lmbench lat_ctx. A ring of `nproc` members (processes or
 *    threads; the probe is member 0) joined by pipes passes a 4-byte token
 *    round; each member, on receiving it, reads its own `ws_kib` KiB working
 *    set (one word per cache line) and passes the token on. All members are
 *    pinned to the probe's CPU (placement=same_cpu), so every hop is one
 *    context switch plus one pipe write and read plus one working-set pass.
 *    The cost of the latter ("overhead": the same write, read and pass by
 *    one process through one pipe to itself, its working set hot) is
 *    measured in setup() and subtracted, as lmbench does. The value is the
 *    corrected time per switch; extra.raw_ns is the uncorrected median per
 *    switch and extra.pipe_overhead_ns the subtracted overhead per hop.
 *  - ctxsw.pipe_rtt: LEBench "context switch" (context_switch_test in
 *    OS_Eval.c): two processes (or threads) pinned to one CPU pass one byte
 *    back and forth through two pipes; the value is one raw round trip
 *    (two switches, two 1-byte writes and two reads), nothing subtracted.
 *    It is the same ring with nproc = 2, no working set and 1-byte tokens,
 *    timed in batches as LEBench times 1000 round trips per clock pair.
 *  - ctxsw.futex: two parties (processes sharing a page, or threads) hand a
 *    futex word back and forth with FUTEX_WAKE / FUTEX_WAIT; value = round
 *    trip / 2, nothing subtracted (the futex calls are part of the switch).
 *  - ctxsw.yield: two threads on one CPU call sched_yield() in turn; value =
 *    time per yield of the probe's thread / 2 (each of its yields is a switch
 *    to the partner and one back), nothing subtracted.
 *
 * Traps avoided: the ring's children ask for SIGKILL when the probe dies,
 * are tracked by the cleanup stack, close every pipe end that is not theirs,
 * and never run the probe's signal handler (osm_child_init); a member that
 * dies ends the ring with EOF, so the probe gets an error, not a hang;
 * a correction that would leave nothing (overhead >= raw) is an error, not a
 * negative figure; sched_yield that does not actually switch (the partner
 * did not run once per yield) is an error. */
#include "ctxsw.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../affinity.h"
#include "../bench.h"
#include "../cleanup.h"
#include "../clock.h"
#include "../compiler.h"
#include "../procs.h"

static const char *const modes[] = {"process", "thread", NULL};
static const char *const placements[] = {"same_cpu", "cross_cpu", NULL};

/* ---- ctxsw.futex ------------------------------------------------------ */

enum { F_PROBE = 0, F_PARTNER = 1, F_STOP = 2 }; /* whose turn the word says it is */

struct futex_state {
	int shared;          /* mode=process */
	atomic_uint *word;   /* in a shared page (process) or below (thread) */
	atomic_uint local;
	pid_t pid;
	int handle;
	pthread_t th;
	int have_thread;
};

/* The partner: wait for its turn, hand it back, until told to stop. */
static void futex_partner(atomic_uint *w, int shared)
{
	for (;;) {
		unsigned v = atomic_load(w);
		if (v == F_STOP)
			return;
		if (v == F_PARTNER) {
			atomic_store(w, F_PROBE);
			osm_futex_wake(w, 1, shared);
			continue;
		}
		osm_futex_wait(w, v, shared, NULL);
	}
}

static void *futex_partner_thread(void *arg)
{
	futex_partner(arg, 0);
	return NULL;
}

static void futex_teardown(struct osm_ctx *ctx);

static int futex_setup(struct osm_ctx *ctx)
{
	struct futex_state *s = calloc(1, sizeof(*s));
	if (!s)
		return osm_fail(ctx, OSM_ERROR, "out of memory");
	ctx->priv = s;
	s->handle = -1;
	ctx->ops_per_unit = 2; /* run() repeats round trips of two switches */
	osm_count_note(ctx, "the partner (started in setup) is not counted: the probe's side of each switch only");
	s->shared = osm_param_int(ctx, "mode") == 0;
	int cross = osm_param_int(ctx, "placement") == 1;
	ctx->placement = cross ? "cross_cpu" : "same_cpu";
	int cpu = cross ? osm_other_cpu(ctx->cpu) : ctx->cpu;
	if (cpu < 0) {
		futex_teardown(ctx);
		return osm_skip_one_cpu(ctx, "placement=cross_cpu", "--param placement=same_cpu");
	}
	s->word = s->shared ? osm_shared_alloc(sizeof(atomic_uint)) : &s->local;
	if (!s->word) {
		int st = osm_fail_errno(ctx, "mmap of the shared page");
		futex_teardown(ctx);
		return st;
	}
	atomic_store(s->word, F_PROBE);
	if (!s->shared) {
		pthread_attr_t a;
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		pthread_attr_init(&a);
		pthread_attr_setaffinity_np(&a, sizeof(set), &set);
		int e = pthread_create(&s->th, &a, futex_partner_thread, s->word);
		pthread_attr_destroy(&a);
		if (e) {
			futex_teardown(ctx);
			return osm_fail(ctx, OSM_ERROR, "pthread_create: %s", strerror(e));
		}
		s->have_thread = 1;
		return OSM_OK;
	}
	pid_t self = getpid();
	pid_t pid = fork();
	if (pid == 0) {
		osm_child_init(self);
		if (osm_pin_self(cpu))
			_exit(2);
		futex_partner(s->word, 1);
		_exit(0);
	}
	if (pid < 0) {
		int st = osm_fail_errno(ctx, "fork of the partner");
		futex_teardown(ctx);
		return st;
	}
	s->pid = pid;
	s->handle = osm_cleanup_track_child(pid);
	if (s->handle < 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		futex_teardown(ctx);
		return osm_fail(ctx, OSM_ERROR, "cannot register the partner for clean-up");
	}
	return OSM_OK;
}

static int futex_run(struct osm_ctx *ctx, uint64_t batch)
{
	struct futex_state *s = ctx->priv;
	atomic_uint *w = s->word;
	/* A timeout only so that a partner killed from outside cannot hang
	 * the probe; it is far longer than any switch. */
	const struct timespec limit = {5, 0};
	uint64_t t0 = osm_clock_start();
	for (uint64_t i = 0; i < batch; i++) {
		atomic_store(w, F_PARTNER);
		osm_futex_wake(w, 1, s->shared);
		while (atomic_load(w) == F_PARTNER) {
			if (osm_futex_wait(w, F_PARTNER, s->shared, &limit) && errno == ETIMEDOUT)
				return osm_fail(ctx, OSM_ERROR, "the futex partner stopped answering");
		}
	}
	ctx->self_ns = osm_ticks_to_ns(osm_clock_stop() - t0) / 2; /* a round trip is two switches */
	return OSM_OK;
}

static void futex_teardown(struct osm_ctx *ctx)
{
	struct futex_state *s = ctx->priv;
	if (!s)
		return;
	if (s->word) {
		atomic_store(s->word, F_STOP);
		osm_futex_wake(s->word, 1, s->shared);
	}
	if (s->have_thread)
		pthread_join(s->th, NULL);
	if (s->handle >= 0)
		osm_cleanup_pop(s->handle, 1);
	if (s->shared)
		osm_shared_free(s->word, sizeof(atomic_uint));
	free(s);
	ctx->priv = NULL;
}

/* ---- ctxsw.yield ------------------------------------------------------ */

struct yield_state {
	atomic_uint stop;
	atomic_ullong partner_yields;
	pthread_t th;
	int have_thread;
	uint64_t probe_yields;
};

static void *yield_partner(void *arg)
{
	struct yield_state *s = arg;
	while (!atomic_load_explicit(&s->stop, memory_order_relaxed)) {
		sched_yield();
		atomic_fetch_add_explicit(&s->partner_yields, 1, memory_order_relaxed);
	}
	return NULL;
}

static void yield_teardown(struct osm_ctx *ctx);

static int yield_setup(struct osm_ctx *ctx)
{
	struct yield_state *s = calloc(1, sizeof(*s));
	if (!s)
		return osm_fail(ctx, OSM_ERROR, "out of memory");
	ctx->priv = s;
	ctx->placement = "same_cpu"; /* sched_yield only yields to its own run queue */
	ctx->ops_per_unit = 2;       /* each of run()'s yields is two switches */
	osm_count_note(ctx, "the partner (started in setup) is not counted: the probe's side of each switch only");
	pthread_attr_t a;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(ctx->cpu, &set);
	pthread_attr_init(&a);
	pthread_attr_setaffinity_np(&a, sizeof(set), &set);
	int e = pthread_create(&s->th, &a, yield_partner, s);
	pthread_attr_destroy(&a);
	if (e) {
		yield_teardown(ctx);
		return osm_fail(ctx, OSM_ERROR, "pthread_create: %s", strerror(e));
	}
	s->have_thread = 1;
	/* Let the partner start before anything is timed. */
	while (atomic_load(&s->partner_yields) == 0)
		sched_yield();
	return OSM_OK;
}

static int yield_run(struct osm_ctx *ctx, uint64_t batch)
{
	struct yield_state *s = ctx->priv;
	uint64_t c0 = atomic_load_explicit(&s->partner_yields, memory_order_relaxed);
	uint64_t t0 = osm_clock_start();
	for (uint64_t i = 0; i < batch; i++)
		sched_yield();
	uint64_t t1 = osm_clock_stop();
	uint64_t ran = atomic_load_explicit(&s->partner_yields, memory_order_relaxed) - c0;
	/* Each of our yields must have let the partner run (+-1 at the edges). */
	if (batch >= 4 && ran + 1 < batch / 2)
		return osm_fail(ctx, OSM_ERROR,
				"sched_yield did not switch: the partner ran %llu times during %llu yields "
				"(this scheduler does not alternate on yield)",
				(unsigned long long)ran, (unsigned long long)batch);
	s->probe_yields += batch;
	ctx->self_ns = osm_ticks_to_ns(t1 - t0) / 2; /* each yield: a switch away and one back */
	return OSM_OK;
}

static void yield_teardown(struct osm_ctx *ctx)
{
	struct yield_state *s = ctx->priv;
	if (!s)
		return;
	atomic_store(&s->stop, 1);
	if (s->have_thread)
		pthread_join(s->th, NULL);
	if (s->probe_yields)
		osm_add_extra(ctx, "partner_runs_per_yield",
			      (double)atomic_load(&s->partner_yields) / (double)s->probe_yields);
	free(s);
	ctx->priv = NULL;
}

/* ---- the table -------------------------------------------------------- */

static const struct osm_param pipe_params[] = {
	{.name = "mode", .type = OSM_P_ENUM, .choices = modes, .def = 0,
	 .help = "ring members are processes or threads"},
	{.name = "nproc", .type = OSM_P_INT, .def = 2, .min = 2, .max = MAX_RING,
	 .help = "members in the ring, the probe included (lmbench: 2, 4, 8, 16, ...)"},
	{.name = "ws_kib", .type = OSM_P_INT, .def = 0, .min = 0, .max = 65536,
	 .help = "KiB of working set each member reads between switches (lmbench: 0, 16, 64)"},
	{.name = "placement", .type = OSM_P_ENUM, .choices = placements, .def = 0,
	 .help = "same_cpu: every member on the probe's CPU; cross_cpu: neighbours on two CPUs"},
	{0},
};

static const struct osm_param rtt_params[] = {
	{.name = "mode", .type = OSM_P_ENUM, .choices = modes, .def = 0,
	 .help = "the partner is a process (LEBench) or a thread"},
	{.name = "placement", .type = OSM_P_ENUM, .choices = placements, .def = 0,
	 .help = "same_cpu: both on the probe's CPU (LEBench); cross_cpu: the partner on another CPU"},
	{0},
};

static const struct osm_param futex_params[] = {
	{.name = "mode", .type = OSM_P_ENUM, .choices = modes, .def = 0,
	 .help = "the partner is a process (shared futex) or a thread (private futex)"},
	{.name = "placement", .type = OSM_P_ENUM, .choices = placements, .def = 0,
	 .help = "the partner runs on the probe's CPU or another one"},
	{0},
};

static const struct osm_bench ctxsw_benches[] = {
	{
		.name = "pipe",
		.desc = "context switch by pipe token ring (lmbench lat_ctx), pipe cost subtracted, per switch",
		.unit = OSM_UNIT_NS,
		.flags = OSM_SELF_TIMED,
		.suites = OSM_SUITES_ALL,
		.params = pipe_params,
		.sweep = "mode=process;mode=thread",
		.setup = ctxsw_ring_setup,
		.run = ctxsw_ring_run,
		.teardown = ctxsw_ring_teardown,
	},
	{
		.name = "pipe_rtt",
		.desc = "raw round trip of one byte through two pipes between two parties (LEBench context switch)",
		.unit = OSM_UNIT_NS,
		.flags = OSM_SELF_TIMED,
		.suites = OSM_SUITES_ALL,
		.params = rtt_params,
		.setup = ctxsw_rtt_setup,
		.run = ctxsw_ring_run,
		.teardown = ctxsw_ring_teardown,
	},
	{
		.name = "futex",
		.desc = "context switch by futex ping-pong, per switch (round trip / 2)",
		.unit = OSM_UNIT_NS,
		.flags = OSM_SELF_TIMED,
		.suites = OSM_SUITES_ALL,
		.params = futex_params,
		.sweep = "mode=process;mode=thread",
		.setup = futex_setup,
		.run = futex_run,
		.teardown = futex_teardown,
	},
	{
		.name = "yield",
		.desc = "sched_yield between two threads on one CPU, per switch",
		.unit = OSM_UNIT_NS,
		.flags = OSM_SELF_TIMED,
		.suites = OSM_SUITE_STANDARD | OSM_SUITE_FULL,
		.setup = yield_setup,
		.run = yield_run,
		.teardown = yield_teardown,
	},
};

const struct osm_family osm_family_ctxsw = {
	"ctxsw", "context switches: pipe token ring (lmbench), pipe round trip (LEBench), futex ping-pong, sched_yield",
	ctxsw_benches, ARRAY_SIZE(ctxsw_benches),
};
