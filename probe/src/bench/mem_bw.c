/* mem_bw.c - mem.bandwidth: bytes per second streamed through a buffer
 * (lmbench bw_mem rd/wr/cp/bcopy, mbw, sysbench memory). Method:
 * docs/methods/mem.md
 *
 * One operation = one block of each thread's share of the buffer: the whole
 * share when it is at most 1 MiB, else the next 1 MiB of it, cyclically,
 * so successive operations stream through the whole buffer and a large
 * buffer never stays in a cache; for memcpy always the whole share (one
 * memcpy call per share, so the C library picks the strategy it would for
 * a copy of that size). The harness batches operations like any
 * other benchmark and turns them into bytes/s with ctx->bytes_per_op = the
 * bytes one operation reads (read), writes (write) or copies (copy, memcpy:
 * counted once, not read + write, as mbw and bw_mem count them), summed
 * over threads.
 *
 * threads=all runs one thread per CPU the probe may use, each pinned, each
 * on its own contiguous share. Every batch starts all threads at once through
 * a start barrier and ends at an end barrier when the slowest thread is
 * done, so the figure is the aggregate bandwidth. The barriers spin on an
 * atomic generation counter: a futex wake-up costs tens of microseconds on a
 * virtual machine, which would be a visible part of a 100 us block.
 *
 * Traps avoided:
 * - the buffer is first touched in setup by the thread that will use it
 *   (its NUMA node), so no page fault is timed;
 * - the plain loops move 64 bytes per iteration through four independent
 *   16-byte vectors (GCC/Clang vector extensions: SSE2 on x86-64, NEON on
 *   aarch64, scalar code elsewhere), so a read is not limited by one
 *   dependent add chain;
 * - OSM_CLOBBER() after every block forces its loads and stores to happen
 *   (no block is merged with the next or found dead);
 * - the copy loop hides its destination pointer from the optimiser (an
 *   empty asm), so the compiler cannot turn it into a call to memcpy: the
 *   two copy figures stay different methods;
 * - the default buffer is 4 x the last-level cache (sysfs), at least 64 MiB,
 *   so a "memory" figure is not a cache figure. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../affinity.h"
#include "../bench.h"
#include "../compiler.h"
#include "mem.h"

enum { OP_READ, OP_WRITE, OP_COPY, OP_MEMCPY };
enum { CMD_INIT, CMD_RUN, CMD_QUIT };

#define MAX_THREADS 256
#define BLOCK ((size_t)1 << 20) /* one operation on a large share */
#define LOOP_BYTES 64             /* the plain loops' step */
#define MIN_AUTO ((int64_t)64 << 20)
#define MAX_AUTO ((int64_t)1 << 30)

typedef uint64_t v2u64 __attribute__((vector_size(16)));

struct bw_state;

struct bw_worker {
	struct bw_state *s;
	pthread_t th;
	int cpu;
	int started;
	char *src, *dst; /* this thread's share */
	size_t len;
	size_t op_len;   /* bytes per operation: len or BLOCK */
	size_t off;      /* next block */
	int err;         /* error number of a failed pin */
	uint64_t sink;
};

struct bw_state {
	struct osm_region a, b; /* source (or the only buffer) and destination */
	int op;
	int n;                  /* threads, the calling thread included */
	uint64_t batch;         /* operations per thread in this round */
	int cmd;
	uint64_t pass;          /* round counter: the value write stores */
	atomic_uint gen;        /* start barrier: bumped to start a round */
	atomic_uint done;       /* end barrier: workers that finished the round */
	struct bw_worker w[MAX_THREADS];
};

static uint64_t do_read(const char *p, size_t len)
{
	v2u64 a0 = {0, 0}, a1 = a0, a2 = a0, a3 = a0;
	const v2u64 *end = (const v2u64 *)(p + len);
	for (const v2u64 *q = (const v2u64 *)p; q < end; q += 4) {
		a0 += q[0];
		a1 += q[1];
		a2 += q[2];
		a3 += q[3];
	}
	OSM_CLOBBER();
	v2u64 t = a0 + a1 + a2 + a3;
	return t[0] ^ t[1];
}

static void do_write(char *p, size_t len, uint64_t val)
{
	v2u64 v = {val, ~val};
	v2u64 *end = (v2u64 *)(p + len);
	for (v2u64 *q = (v2u64 *)p; q < end; q += 4) {
		q[0] = v;
		q[1] = v;
		q[2] = v;
		q[3] = v;
	}
	OSM_CLOBBER();
}

static void do_copy(char *dst, const char *src, size_t len)
{
	const v2u64 *q = (const v2u64 *)src, *end = (const v2u64 *)(src + len);
	v2u64 *d = (v2u64 *)dst;
	for (; q < end; q += 4, d += 4) {
		/* Opaque to the optimiser: no loop-to-memcpy rewrite. */
		__asm__("" : "+r"(d));
		d[0] = q[0];
		d[1] = q[1];
		d[2] = q[2];
		d[3] = q[3];
	}
	OSM_CLOBBER();
}

static void work(struct bw_state *s, struct bw_worker *w, int cmd)
{
	if (cmd == CMD_INIT) {
		/* First touch by the owning thread; memcpy's source holds data. */
		memset(w->src, 0x5a, w->len);
		if (w->dst)
			memset(w->dst, 0, w->len);
		return;
	}
	for (uint64_t i = 0; i < s->batch; i++) {
		char *src = w->src + w->off;
		char *dst = w->dst ? w->dst + w->off : NULL;
		switch (s->op) {
		case OP_READ: w->sink ^= do_read(src, w->op_len); break;
		case OP_WRITE: do_write(src, w->op_len, s->pass); break;
		case OP_COPY: do_copy(dst, src, w->op_len); break;
		default:
			memcpy(dst, src, w->op_len);
			OSM_CLOBBER();
			break;
		}
		w->off += w->op_len;
		if (w->off >= w->len)
			w->off = 0;
	}
}

static void *worker_main(void *arg)
{
	struct bw_worker *w = arg;
	struct bw_state *s = w->s;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(w->cpu, &set);
	w->err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	unsigned seen = 0;
	for (;;) {
		unsigned g;
		while ((g = atomic_load(&s->gen)) == seen)
			; /* spin: the start barrier */
		seen = g;
		int cmd = s->cmd;
		if (cmd == CMD_QUIT)
			break;
		work(s, w, cmd);
		atomic_fetch_add(&s->done, 1); /* the end barrier */
	}
	OSM_KEEP(w->sink);
	return NULL;
}

/* One round: every thread (the caller as thread 0) does `cmd`. */
static void round_all(struct bw_state *s, int cmd)
{
	s->cmd = cmd;
	int others = 0;
	for (int i = 1; i < s->n; i++)
		others += s->w[i].started;
	if (others) {
		atomic_store(&s->done, 0);
		atomic_fetch_add(&s->gen, 1); /* release the workers */
	}
	if (cmd == CMD_QUIT)
		return;
	work(s, &s->w[0], cmd);
	while (others && atomic_load(&s->done) != (unsigned)others)
		; /* spin until the slowest thread is done */
}

/* Stops and joins the threads, frees everything. Safe at any stage. */
static void bw_free(struct bw_state *s)
{
	round_all(s, CMD_QUIT);
	for (int i = 1; i < s->n; i++)
		if (s->w[i].started)
			pthread_join(s->w[i].th, NULL);
	osm_region_unmap(&s->a);
	osm_region_unmap(&s->b);
	free(s);
}

/* The size: `size`, or with 0 (auto) 4 x LLC in [64 MiB, 1 GiB], lowered to
 * what fits; then checked against what the machine can spare. */
static int bw_pick_size(struct osm_ctx *ctx, int two, int64_t llc, int64_t *size)
{
	if (*size == 0) {
		*size = llc > 0 ? 4 * llc : 256 << 20;
		*size = *size < MIN_AUTO ? MIN_AUTO : *size > MAX_AUTO ? MAX_AUTO : *size;
		char why[256];
		int64_t h = osm_mem_headroom(why, sizeof(why));
		if (h > 0 && *size * (two ? 2 : 1) > h)
			*size = (h / (two ? 2 : 1)) & ~(((int64_t)1 << 20) - 1);
		if (*size < 4096)
			return osm_mem_fit(ctx, "mem.bandwidth", 4096 * (two ? 2 : 1));
	}
	return osm_mem_fit(ctx, "mem.bandwidth", *size * (two ? 2 : 1)); /* 64-bit check first */
}

/* Maps the buffers, gives each of the s->n workers its share and starts
 * and pins the threads. Frees s on failure. */
static int bw_start(struct osm_ctx *ctx, struct bw_state *s, const int *cpus, size_t share, int two)
{
	size_t total = share * (size_t)s->n;
	if (osm_region_map(&s->a, total, 0) || (two && osm_region_map(&s->b, total, 0))) {
		int e = errno;
		bw_free(s);
		return osm_fail(ctx, OSM_ERROR, "mmap of %zu bytes: %s", total, strerror(e));
	}
	for (int i = 0; i < s->n; i++) {
		struct bw_worker *w = &s->w[i];
		w->s = s;
		w->cpu = cpus[i];
		w->src = s->a.p + (size_t)i * share;
		w->dst = two ? s->b.p + (size_t)i * share : NULL;
		w->len = share;
		/* memcpy is called on the whole share, as bw_mem bcopy and mbw
		 * call it: glibc switches to non-temporal stores above a size
		 * threshold, which 1 MiB calls would never reach. */
		w->op_len = share > BLOCK && s->op != OP_MEMCPY ? BLOCK : share;
	}
	for (int i = 1; i < s->n; i++) {
		int e = pthread_create(&s->w[i].th, NULL, worker_main, &s->w[i]);
		if (e) {
			bw_free(s);
			return osm_fail(ctx, OSM_ERROR, "pthread_create: %s", strerror(e));
		}
		s->w[i].started = 1;
	}
	round_all(s, CMD_INIT);
	for (int i = 1; i < s->n; i++) {
		if (s->w[i].err) {
			int e = s->w[i].err, c = s->w[i].cpu;
			bw_free(s);
			return osm_fail(ctx, OSM_ERROR, "cannot pin a thread to CPU %d: %s", c, strerror(e));
		}
	}
	return OSM_OK;
}

int osm_mem_bw_setup(struct osm_ctx *ctx)
{
	int op = (int)osm_param_int(ctx, "op");
	int all = osm_param_int(ctx, "threads") == 1; /* choices: "1", "all" */
	int64_t size = osm_param_int(ctx, "size");
	int two = op == OP_COPY || op == OP_MEMCPY;
	int64_t llc = osm_mem_llc_bytes();
	if (size > 0 && size < 4096)
		return osm_fail(ctx, OSM_ERROR, "size %lld: use 0 (auto) or at least 4 KiB", (long long)size);

	int cpus[MAX_THREADS], ncpu = 1;
	cpus[0] = ctx->cpu;
	if (all) {
		int allowed[MAX_THREADS];
		int na = osm_allowed_cpus(allowed, MAX_THREADS);
		for (int i = 0; i < na; i++)
			if (allowed[i] != ctx->cpu)
				cpus[ncpu++] = allowed[i];
	}

	int st = bw_pick_size(ctx, two, llc, &size);
	if (st != OSM_OK)
		return st;
	/* Each share: whole blocks when larger than a block, else whole loop steps. */
	size_t share = (size_t)size / (size_t)ncpu;
	share &= share > BLOCK ? ~(BLOCK - 1) : ~(size_t)(LOOP_BYTES - 1);
	if (share == 0)
		return osm_fail(ctx, OSM_ERROR, "size %lld is too small for %d threads", (long long)size, ncpu);
	size_t total = share * (size_t)ncpu;

	struct bw_state *s = calloc(1, sizeof(*s));
	if (!s)
		return osm_fail(ctx, OSM_ERROR, "out of memory");
	s->op = op;
	s->n = ncpu;
	atomic_init(&s->gen, 0);
	atomic_init(&s->done, 0);
	if ((st = bw_start(ctx, s, cpus, share, two)) != OSM_OK)
		return st;
	ctx->priv = s;
	ctx->bytes_per_op = (double)(s->w[0].op_len * (size_t)ncpu);
	if (ncpu > 1)
		osm_count_note(ctx, "the other threads (started in setup) are not counted: the probe's thread's "
			       "block of each operation only");
	osm_add_extra(ctx, "size_bytes", (double)total);
	osm_add_extra(ctx, "threads", (double)ncpu);
	osm_add_extra(ctx, "block_bytes", (double)s->w[0].op_len);
	osm_add_extra(ctx, "llc_bytes", (double)llc);
	return OSM_OK;
}

int osm_mem_bw_run(struct osm_ctx *ctx, uint64_t batch)
{
	struct bw_state *s = ctx->priv;
	s->batch = batch;
	s->pass++;
	round_all(s, CMD_RUN);
	return OSM_OK;
}

void osm_mem_bw_teardown(struct osm_ctx *ctx)
{
	if (ctx->priv)
		bw_free(ctx->priv);
	ctx->priv = NULL;
}
