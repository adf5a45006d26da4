/* ctxsw_ring.c - ctxsw.pipe and ctxsw.pipe_rtt: a token passed round a ring
 * of processes or threads joined by pipes. What is timed, what is
 * subtracted and the traps avoided: ctxsw.c, docs/methods/ctxsw.md. */
#include "ctxsw.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../affinity.h"
#include "../bench.h"
#include "../clock.h"
#include "../compiler.h"
#include "../procs.h"
#include "../samples.h"

#define LINE 64
#define OVH_CHUNKS 31
#define OVH_CHUNK_NS 1e6

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
	struct osm_samples raw;     /* raw ns per switch of every sample */
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
	double med = osm_sort_median(chunk, OVH_CHUNKS); /* sorts */
	result = chunk[0];
	*spread = (med - chunk[0]) / chunk[0];
out:
	OSM_KEEP(sum);
	close(p[0]);
	close(p[1]);
	return result;
}


/* Starts ring member i (1..n-1): a thread, or a process that keeps only
 * its own two pipe ends. */
static int ring_start_member(struct osm_ctx *ctx, struct ring_state *s, int i, pid_t self)
{
	if (s->threads) {
		pthread_attr_t a;
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(s->m[i].cpu, &set);
		pthread_attr_init(&a);
		pthread_attr_setaffinity_np(&a, sizeof(set), &set);
		int e = pthread_create(&s->th[i], &a, member_thread, &s->m[i]);
		pthread_attr_destroy(&a);
		if (e)
			return osm_fail(ctx, OSM_ERROR, "pthread_create: %s", strerror(e));
		s->n_threads = i;
		return OSM_OK;
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
	if (pid < 0)
		return osm_fail_errno(ctx, "fork of a ring member");
	if (osm_children_add(&s->children, pid)) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return osm_fail(ctx, OSM_ERROR, "cannot register a ring member for clean-up");
	}
	return OSM_OK;
}

/* The pipes and the members 1..n-1. Process members: the probe then keeps
 * only its own two ends, so a member that dies closes the ring and the
 * probe reads EOF instead of hanging. */
static int ring_start(struct osm_ctx *ctx, struct ring_state *s)
{
	for (int i = 0; i < s->n; i++)
		if (pipe2(s->pipes[i], O_CLOEXEC))
			return osm_fail_errno(ctx, "pipe");
	for (int i = 1; i < s->n; i++) {
		/* Member i reads pipes[i-1] and writes pipes[i]; with cross_cpu
		 * neighbours sit on different CPUs, so every hop crosses. */
		s->m[i] = (struct member){s->pipes[i - 1][0], s->pipes[i][1], s->cpus[i % 2], s->ws_len,
					  s->tok_len};
	}
	pid_t self = getpid();
	for (int i = 1; i < s->n; i++) {
		int st = ring_start_member(ctx, s, i, self);
		if (st != OSM_OK)
			return st;
	}
	if (s->threads)
		return OSM_OK;
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
	return OSM_OK;
}

/* The parameters, the second CPU and the probe's working set. */
static int ring_configure(struct osm_ctx *ctx, struct ring_state *s, int rtt)
{
	s->rtt = rtt;
	s->tok_len = rtt ? 1 : sizeof(int);
	s->threads = osm_param_int(ctx, "mode") == 1;
	s->n = rtt ? 2 : (int)osm_param_int(ctx, "nproc");
	s->ws_len = rtt ? 0 : (size_t)osm_param_int(ctx, "ws_kib") * 1024;
	int cross = osm_param_int(ctx, "placement") == 1;
	ctx->placement = cross ? "cross_cpu" : "same_cpu";
	s->cpus[0] = s->cpus[1] = ctx->cpu;
	if (cross && (s->cpus[1] = osm_other_cpu(ctx->cpu)) < 0)
		return osm_skip_one_cpu(ctx, "placement=cross_cpu", "--param placement=same_cpu");
	s->ws = ws_alloc(s->ws_len);
	if (s->ws_len && !s->ws)
		return osm_fail(ctx, OSM_ERROR, "out of memory for the working set");
	return OSM_OK;
}

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

	char msg[256];
	double spread = 0;
	int st = ring_configure(ctx, s, rtt);
	if (st == OSM_OK && !rtt) {
		s->overhead_ns = pipe_overhead(s, &spread, msg, sizeof(msg));
		if (s->overhead_ns < 0)
			st = osm_fail(ctx, OSM_ERROR, "%s", msg);
	}
	if (st == OSM_OK)
		st = ring_start(ctx, s);
	if (st != OSM_OK) {
		ctxsw_ring_teardown(ctx);
		return st;
	}
	if (rtt) {
		ctx->ops_per_unit = 1; /* the value is per round trip */
		osm_count_note(ctx, "the partner (started in setup) is not counted: the probe's side of each "
			       "round trip only");
		return OSM_OK;
	}
	osm_count_note(ctx, "the other ring members (started in setup) are not counted, and the counters "
		       "include the pipe transfer the value has taken off (extra.pipe_overhead_ns)");
	osm_add_extra(ctx, "pipe_overhead_ns", s->overhead_ns);
	osm_add_extra(ctx, "pipe_overhead_spread", spread);
	ctx->ops_per_unit = (unsigned)s->n; /* run() repeats rounds of n switches */
	return OSM_OK;
}

int ctxsw_ring_setup(struct osm_ctx *ctx) { return ring_setup_common(ctx, 0); }
int ctxsw_rtt_setup(struct osm_ctx *ctx) { return ring_setup_common(ctx, 1); }

int ctxsw_ring_run(struct osm_ctx *ctx, uint64_t batch)
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
	/* raw_ns is the median of the sampled batches alone, as the value's
	 * is: value = raw - overhead holds for the two medians too. */
	if (ctx->counting && osm_samples_push(&s->raw, raw))
		return osm_fail(ctx, OSM_ERROR, "out of memory");
	ctx->self_ns = (raw - s->overhead_ns) * (double)batch;
	return OSM_OK;
}

void ctxsw_ring_teardown(struct osm_ctx *ctx)
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
	if (s->raw.n) {
		/* the sampled batches' (not the warm-up's or calibration's) */
		osm_add_extra(ctx, "raw_ns", osm_sort_median(s->raw.v, s->raw.n));
		osm_add_extra(ctx, "raw_min_ns", s->raw.v[0]);
	}
	osm_samples_free(&s->raw);
	free(s->ws);
	free(s);
	ctx->priv = NULL;
}
