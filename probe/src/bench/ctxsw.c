/* ctxsw.c - ctxsw.*: context switches between processes and threads.
 * Method: docs/methods/ctxsw.md
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
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
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

#define MAX_RING 64
#define LINE 64
#define OVH_CHUNKS 31
#define OVH_CHUNK_NS 1e6

static const char *const modes[] = {"process", "thread", NULL};
static const char *const placements[] = {"same_cpu", "cross_cpu", NULL};

/* One pass over a working set: one word per cache line, summed (unsigned:
 * the sum wraps, and only has to be kept). */
static inline unsigned long ws_pass(const char *ws, size_t len)
{
	unsigned long sum = 0;
	for (size_t off = 0; off < len; off += LINE)
		sum += *(const unsigned long *)(const void *)(ws + off);
	return sum;
}

static char *ws_alloc(size_t len)
{
	if (!len)
		return NULL;
	char *p = malloc(len);
	if (p)
		memset(p, 1, len); /* resident before anything is timed */
	return p;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median_sorted(double *v, size_t n)
{
	qsort(v, n, sizeof(double), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- ctxsw.pipe ------------------------------------------------------- */

struct member {
	int in, out;     /* pipe ends: read the token, pass it on */
	int cpu;
	size_t ws_len;
	size_t tok_len;  /* bytes passed per hop: 4 (lmbench), 1 (LEBench) */
};

struct ring_state {
	int rtt;                    /* ctxsw.pipe_rtt: raw round trips, nothing subtracted */
	size_t tok_len;
	int threads;                /* mode=thread */
	int n;                      /* members, the probe included */
	size_t ws_len;
	int cpus[2];                /* same_cpu: both ctx->cpu */
	int pipes[MAX_RING][2];     /* pipes[i]: member i -> member i+1 (mod n) */
	struct osm_children children; /* process members 1..n-1 */
	pthread_t th[MAX_RING];
	int n_threads;
	struct member m[MAX_RING];
	char *ws;                   /* the probe's own working set */
	double overhead_ns;         /* per hop */
	double *raw;                /* raw ns per switch of every sample */
	size_t n_raw, cap_raw;
};

/* A ring member's life: read the token, pass over the working set, pass the
 * token on; EOF (the ring is being closed) ends it. */
static int member_loop(const struct member *m)
{
	char *ws = ws_alloc(m->ws_len);
	if (m->ws_len && !ws)
		return -1;
	char tok[4];
	unsigned long sum = 0;
	for (;;) {
		ssize_t r = read(m->in, tok, m->tok_len);
		if (r == 0)
			break;
		if (r != (ssize_t)m->tok_len) {
			free(ws);
			return -1;
		}
		sum += ws_pass(ws, m->ws_len);
		if (write(m->out, tok, m->tok_len) != (ssize_t)m->tok_len)
			break; /* the ring is being closed */
	}
	OSM_KEEP(sum);
	free(ws);
	return 0;
}

static void *member_thread(void *arg)
{
	member_loop(arg);
	return NULL;
}

/* Per hop: one pipe write and read and one working-set pass by the probe
 * alone, its working set hot (lmbench's "overhead"). The smallest of the
 * chunk means: interference (another task on this CPU, an interrupt) only
 * ever adds time, and an inflated overhead would be subtracted from every
 * sample. *spread is (median - min) / min of the chunks. */
static double pipe_overhead(struct ring_state *s, double *spread, char *msg, size_t len)
{
	int p[2];
	if (pipe(p)) {
		snprintf(msg, len, "pipe: %s", strerror(errno));
		return -1;
	}
	double chunk[OVH_CHUNKS];
	uint64_t hops = 16;
	int tok = 0, c = -1;
	unsigned long sum = 0;
	double result = -1;
	for (;;) {
		uint64_t t0 = osm_clock_start();
		for (uint64_t i = 0; i < hops; i++) {
			if (write(p[1], &tok, sizeof(tok)) != (ssize_t)sizeof(tok) ||
			    read(p[0], &tok, sizeof(tok)) != (ssize_t)sizeof(tok)) {
				snprintf(msg, len, "pipe transfer: %s", strerror(errno));
				goto out;
			}
			sum += ws_pass(s->ws, s->ws_len);
		}
		double t = osm_ticks_to_ns(osm_clock_stop() - t0);
		if (c < 0) { /* calibrating the chunk length */
			if (t < OVH_CHUNK_NS) {
				hops *= 2;
				continue;
			}
			c = 0;
		}
		chunk[c++] = t / (double)hops;
		if (c == OVH_CHUNKS)
			break;
	}
	double med = median_sorted(chunk, OVH_CHUNKS); /* sorts */
	result = chunk[0];
	*spread = (med - chunk[0]) / chunk[0];
out:
	OSM_KEEP(sum);
	close(p[0]);
	close(p[1]);
	return result;
}

static void ring_teardown(struct osm_ctx *ctx);

/* Shared set-up of ctxsw.pipe (rtt = 0: lmbench's ring of n members with
 * working sets, the pipe cost measured for subtraction) and ctxsw.pipe_rtt
 * (rtt = 1: two members, 1-byte tokens, nothing subtracted). */
static int ring_setup_common(struct osm_ctx *ctx, int rtt)
{
	struct ring_state *s = calloc(1, sizeof(*s));
	if (!s)
		return osm_fail(ctx, OSM_ERROR, "out of memory");
	ctx->priv = s;
	for (int i = 0; i < MAX_RING; i++)
		s->pipes[i][0] = s->pipes[i][1] = -1;
	osm_children_init(&s->children);
	s->rtt = rtt;
	s->tok_len = rtt ? 1 : sizeof(int);
	s->threads = osm_param_int(ctx, "mode") == 1;
	s->n = rtt ? 2 : (int)osm_param_int(ctx, "nproc");
	s->ws_len = rtt ? 0 : (size_t)osm_param_int(ctx, "ws_kib") * 1024;
	int cross = osm_param_int(ctx, "placement") == 1;
	ctx->placement = cross ? "cross_cpu" : "same_cpu";
	s->cpus[0] = s->cpus[1] = ctx->cpu;
	if (cross && (s->cpus[1] = osm_other_cpu(ctx->cpu)) < 0) {
		ring_teardown(ctx);
		return osm_fail(ctx, OSM_SKIP, "placement=cross_cpu needs a second CPU");
	}
	s->ws = ws_alloc(s->ws_len);
	if (s->ws_len && !s->ws) {
		ring_teardown(ctx);
		return osm_fail(ctx, OSM_ERROR, "out of memory for the working set");
	}

	char msg[256];
	double spread = 0;
	if (!rtt) {
		s->overhead_ns = pipe_overhead(s, &spread, msg, sizeof(msg));
		if (s->overhead_ns < 0) {
			ring_teardown(ctx);
			return osm_fail(ctx, OSM_ERROR, "%s", msg);
		}
	}

	for (int i = 0; i < s->n; i++) {
		if (pipe2(s->pipes[i], O_CLOEXEC)) {
			int st = osm_fail_errno(ctx, "pipe");
			ring_teardown(ctx);
			return st;
		}
	}
	for (int i = 1; i < s->n; i++) {
		/* Member i reads pipes[i-1] and writes pipes[i]; with cross_cpu
		 * neighbours sit on different CPUs, so every hop crosses. */
		s->m[i] = (struct member){s->pipes[i - 1][0], s->pipes[i][1], s->cpus[i % 2], s->ws_len,
					  s->tok_len};
	}
	pid_t self = getpid();
	for (int i = 1; i < s->n; i++) {
		if (s->threads) {
			pthread_attr_t a;
			cpu_set_t set;
			CPU_ZERO(&set);
			CPU_SET(s->m[i].cpu, &set);
			pthread_attr_init(&a);
			pthread_attr_setaffinity_np(&a, sizeof(set), &set);
			int e = pthread_create(&s->th[i], &a, member_thread, &s->m[i]);
			pthread_attr_destroy(&a);
			if (e) {
				ring_teardown(ctx);
				return osm_fail(ctx, OSM_ERROR, "pthread_create: %s", strerror(e));
			}
			s->n_threads = i;
			continue;
		}
		pid_t pid = fork();
		if (pid == 0) {
			osm_child_init(self);
			for (int k = 0; k < s->n; k++) {
				if (s->pipes[k][0] != s->m[i].in)
					close(s->pipes[k][0]);
				if (s->pipes[k][1] != s->m[i].out)
					close(s->pipes[k][1]);
			}
			if (osm_pin_self(s->m[i].cpu))
				_exit(2);
			_exit(member_loop(&s->m[i]) ? 1 : 0);
		}
		if (pid < 0) {
			int st = osm_fail_errno(ctx, "fork of a ring member");
			ring_teardown(ctx);
			return st;
		}
		if (osm_children_add(&s->children, pid)) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			ring_teardown(ctx);
			return osm_fail(ctx, OSM_ERROR, "cannot register a ring member for clean-up");
		}
	}
	if (!s->threads) {
		/* The probe keeps only its own two ends, so a member that dies
		 * closes the ring and the probe reads EOF instead of hanging. */
		for (int k = 0; k < s->n; k++) {
			if (k != s->n - 1) {
				close(s->pipes[k][0]);
				s->pipes[k][0] = -1;
			}
			if (k != 0) {
				close(s->pipes[k][1]);
				s->pipes[k][1] = -1;
			}
		}
	}
	if (rtt) {
		ctx->ops_per_unit = 1; /* the value is per round trip */
		return OSM_OK;
	}
	osm_add_extra(ctx, "pipe_overhead_ns", s->overhead_ns);
	osm_add_extra(ctx, "pipe_overhead_spread", spread);
	ctx->ops_per_unit = (unsigned)s->n; /* run() repeats rounds of n switches */
	return OSM_OK;
}

static int ring_setup(struct osm_ctx *ctx) { return ring_setup_common(ctx, 0); }
static int rtt_setup(struct osm_ctx *ctx) { return ring_setup_common(ctx, 1); }

static int ring_run(struct osm_ctx *ctx, uint64_t batch)
{
	struct ring_state *s = ctx->priv;
	int out = s->pipes[0][1], in = s->pipes[s->n - 1][0];
	ssize_t len = (ssize_t)s->tok_len;
	char tok[4] = {'a'};
	unsigned long sum = 0;
	uint64_t t0 = osm_clock_start();
	for (uint64_t i = 0; i < batch; i++) {
		if (write(out, tok, (size_t)len) != len)
			return osm_fail_errno(ctx, "pipe write to the ring");
		ssize_t r = read(in, tok, (size_t)len);
		if (r != len)
			return r == 0 ? osm_fail(ctx, OSM_ERROR, "a ring member died (the token never came back)")
				      : osm_fail_errno(ctx, "pipe read from the ring");
		sum += ws_pass(s->ws, s->ws_len);
	}
	double t = osm_ticks_to_ns(osm_clock_stop() - t0);
	OSM_KEEP(sum);
	if (s->rtt) {
		ctx->self_ns = t; /* batch round trips, raw */
		return OSM_OK;
	}
	/* `batch` rounds of n hops; the harness divides self_ns by batch. */
	double raw = t / (double)s->n / (double)batch; /* per switch */
	if (raw <= s->overhead_ns)
		return osm_fail(ctx, OSM_ERROR,
				"the pipe transfer (%.0f ns per hop) costs as much as a whole hop (%.0f ns): "
				"cannot separate a context switch from it", s->overhead_ns, raw);
	if (s->n_raw == s->cap_raw) {
		size_t nc = s->cap_raw ? 2 * s->cap_raw : 1024;
		double *nv = realloc(s->raw, nc * sizeof(double));
		if (!nv)
			return osm_fail(ctx, OSM_ERROR, "out of memory");
		s->raw = nv;
		s->cap_raw = nc;
	}
	s->raw[s->n_raw++] = raw;
	ctx->self_ns = (raw - s->overhead_ns) * (double)batch;
	return OSM_OK;
}

static void ring_teardown(struct osm_ctx *ctx)
{
	struct ring_state *s = ctx->priv;
	if (!s)
		return;
	/* Closing the write ends ends every member with EOF; children are
	 * then killed and reaped, threads joined. */
	for (int k = 0; k < MAX_RING; k++)
		if (s->pipes[k][1] >= 0) {
			close(s->pipes[k][1]);
			s->pipes[k][1] = -1;
		}
	osm_children_kill(&s->children);
	for (int i = 1; i <= s->n_threads; i++)
		pthread_join(s->th[i], NULL);
	for (int k = 0; k < MAX_RING; k++)
		if (s->pipes[k][0] >= 0)
			close(s->pipes[k][0]);
	if (s->n_raw) {
		/* The warm-up's rounds are in here too; they are few. */
		osm_add_extra(ctx, "raw_ns", median_sorted(s->raw, s->n_raw));
		osm_add_extra(ctx, "raw_min_ns", s->raw[0]);
	}
	free(s->raw);
	free(s->ws);
	free(s);
	ctx->priv = NULL;
}

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
	s->shared = osm_param_int(ctx, "mode") == 0;
	int cross = osm_param_int(ctx, "placement") == 1;
	ctx->placement = cross ? "cross_cpu" : "same_cpu";
	int cpu = cross ? osm_other_cpu(ctx->cpu) : ctx->cpu;
	if (cpu < 0) {
		futex_teardown(ctx);
		return osm_fail(ctx, OSM_SKIP, "placement=cross_cpu needs a second CPU");
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
		.setup = ring_setup,
		.run = ring_run,
		.teardown = ring_teardown,
	},
	{
		.name = "pipe_rtt",
		.desc = "raw round trip of one byte through two pipes between two parties (LEBench context switch)",
		.unit = OSM_UNIT_NS,
		.flags = OSM_SELF_TIMED,
		.suites = OSM_SUITES_ALL,
		.params = rtt_params,
		.setup = rtt_setup,
		.run = ring_run,
		.teardown = ring_teardown,
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
