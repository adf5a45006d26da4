/* file_contention.c - file.contention: procs processes reading at once,
 * each its own file (shared=0) or all the one file (shared=1), the page
 * cache bypassed (O_DIRECT or fadvise; never drop_caches, which is global).
 * Method: docs/methods/file.md, "Contention".
 *
 * The probe is reader 0; setup forks readers 1..procs-1 (pinned round-robin
 * over the CPUs the probe may use, registered for clean-up, dying with the
 * probe). Each run(ctx, batch) is one round: a start barrier releases every
 * reader, each reads `batch` blocks timing each pread() as file.*_read_cold
 * does, and arrives at an end barrier. The value is the mean time per block
 * over all readers: self_ns = (sum of every reader's read time) / procs.
 * extra.mb_per_s_total = all bytes read / the rounds' wall time (first read
 * started to last read ended, over all readers).
 *
 * shared=1: the file is cut into procs equal ranges of whole pages and
 * blocks, one per reader, so no reader's eviction or read can touch a page
 * another is about to read: every read stays a miss. */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
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
#include "file.h"

#define MAX_READERS 64
#define SLICE_MS 100
#define GIVE_UP_S 120 /* no round of reads takes this long */
/* A reader's message: "reader K: " and osm_file_reader_read's, which are
 * fixed words, numbers and strerror() (no path: file_bypass.c), well
 * under SLOT_MSG - 24 bytes; the probe adds the path (file_cold.c). */
#define SLOT_MSG 240

struct slot {
	double ns;            /* this round's read time */
	uint64_t first, last; /* clock ticks: before its first read, after its last */
	int err;              /* 1: failed, msg says why */
	char msg[SLOT_MSG];
	atomic_uint ready;    /* set up and pinned */
};

struct shared {
	struct osm_barrier start, end;
	atomic_uint stop;
	uint64_t batch; /* blocks each reader reads this round */
	struct slot slot[MAX_READERS];
};

struct cont_state {
	struct osm_file_target t;
	int procs, shared_file, nfiles;
	struct osm_file_reader r[MAX_READERS];
	int n_readers;                      /* readers initialised */
	char path[MAX_READERS][OSM_FILE_PATH];
	int n_made;                         /* files made (removed in teardown) */
	int cpus[MAX_READERS];
	int n_cpus;                         /* distinct CPUs the readers run on */
	struct shared *sh;
	struct osm_children kids;
	double wall_ns, bytes;              /* all rounds so far */
};

/* ---- one reader's round ----------------------------------------------- */

/* count: the probe's ctx for reader 0 (--counters count its reads), else NULL. */
static void read_round(struct cont_state *s, int who, struct osm_ctx *count)
{
	struct slot *sl = &s->sh->slot[who];
	uint64_t n = s->sh->batch;
	char msg[SLOT_MSG - 24];
	sl->ns = 0;
	sl->first = osm_clock_start();
	for (uint64_t i = 0; i < n && !sl->err; i++) {
		double ns = osm_file_reader_read(&s->r[who], count, msg, sizeof(msg));
		if (ns < 0) {
			snprintf(sl->msg, SLOT_MSG, "reader %d: %s", who, msg);
			sl->err = 1;
		} else {
			sl->ns += ns;
		}
	}
	sl->last = osm_clock_stop();
}

OSM_NORETURN static void reader_main(struct cont_state *s, int who, pid_t parent)
{
	osm_child_init(parent);
	struct slot *sl = &s->sh->slot[who];
	if (osm_pin_self(s->cpus[who])) {
		snprintf(sl->msg, SLOT_MSG, "reader %d: cannot pin to CPU %d: %s", who, s->cpus[who], strerror(errno));
		sl->err = 1;
	}
	atomic_store(&sl->ready, 1);
	for (;;) {
		unsigned gen = osm_barrier_arrive(&s->sh->start);
		while (osm_barrier_await(&s->sh->start, gen, 1000))
			;
		if (atomic_load(&s->sh->stop))
			_exit(0);
		if (!sl->err)
			read_round(s, who, NULL);
		osm_barrier_arrive(&s->sh->end);
	}
}

/* ---- the probe's side --------------------------------------------------- */

static int readers_alive(struct cont_state *s, char *msg, size_t len)
{
	pid_t pid;
	int status;
	if (!osm_children_reap_dead(&s->kids, &pid, &status))
		return 1;
	if (WIFSIGNALED(status))
		snprintf(msg, len, "reader process %d died of signal %d", (int)pid, WTERMSIG(status));
	else
		snprintf(msg, len, "reader process %d exited with status %d", (int)pid, WEXITSTATUS(status));
	return 0;
}

/* Arrive at barrier b and wait for the others, checking they live. */
static int meet(struct osm_ctx *ctx, struct cont_state *s, struct osm_barrier *b)
{
	char msg[160];
	unsigned gen = osm_barrier_arrive(b);
	for (int waited = 0; osm_barrier_await(b, gen, SLICE_MS); waited++) {
		if (!readers_alive(s, msg, sizeof(msg)))
			return osm_fail(ctx, OSM_ERROR, "%s", msg);
		if (waited * SLICE_MS > GIVE_UP_S * 1000)
			return osm_fail(ctx, OSM_ERROR, "the reader processes stopped answering");
	}
	return OSM_OK;
}

static int reader_error(struct osm_ctx *ctx, struct cont_state *s)
{
	for (int k = 0; k < s->procs; k++)
		if (s->sh->slot[k].err)
			return osm_fail(ctx, OSM_ERROR, "%s", s->sh->slot[k].msg);
	return OSM_OK;
}

void osm_file_contention_teardown(struct osm_ctx *ctx)
{
	struct cont_state *s = ctx->priv;
	if (!s)
		return;
	if (s->sh && s->kids.n) {
		/* Release the readers from the start barrier with the stop flag
		 * up; then kill and reap them (they may be leaving already). */
		atomic_store(&s->sh->stop, 1);
		unsigned gen = osm_barrier_arrive(&s->sh->start);
		char msg[160];
		for (int waited = 0; osm_barrier_await(&s->sh->start, gen, SLICE_MS) && waited < 20 &&
		     readers_alive(s, msg, sizeof(msg)); waited++)
			;
	}
	osm_children_kill(&s->kids);
	for (int k = 0; k < s->n_readers; k++)
		osm_file_reader_close(&s->r[k]);
	for (int k = 0; k < s->n_made; k++)
		unlink(s->path[k]);
	osm_shared_free(s->sh, sizeof(*s->sh));
	free(s);
	ctx->priv = NULL;
}

/* The home CPU of each reader: round-robin over the allowed CPUs, the
 * probe's own first. */
static void place_readers(struct osm_ctx *ctx, struct cont_state *s)
{
	int allowed[1024];
	int n = osm_allowed_cpus(allowed, 1024), start = 0;
	if (n <= 0) {
		allowed[0] = ctx->cpu;
		n = 1;
	}
	for (int i = 0; i < n; i++)
		if (allowed[i] == ctx->cpu)
			start = i;
	for (int k = 0; k < s->procs; k++)
		s->cpus[k] = allowed[(start + k) % n];
	s->n_cpus = s->procs < n ? s->procs : n;
}

/* Files: one per reader (shared=0) or one; each fsynced (file_cold.c). */
static int make_files(struct osm_ctx *ctx, struct cont_state *s, int64_t size)
{
	for (int k = 0; k < s->nfiles; k++) {
		char name[32]; /* fits: k < MAX_READERS */
		snprintf(name, sizeof(name), "contention.%d", k);
		s->n_made = k + 1; /* removed in teardown, made or half made */
		int rc = osm_file_cold_make(ctx, &s->t, name, size, k == 0 ? s->nfiles : 1, s->path[k],
					    sizeof(s->path[k]));
		if (rc != OSM_OK)
			return rc;
	}
	return OSM_OK;
}

/* Every reader's file opened and the bypass verified on it; shared=1 cuts
 * the file into procs ranges of `unit` bytes (whole pages and blocks). */
static int open_readers(struct osm_ctx *ctx, struct cont_state *s, int64_t size, size_t block)
{
	enum osm_file_method want = (enum osm_file_method)osm_param_int(ctx, "method");
	int rand = osm_param_int(ctx, "pattern") == 1;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), unit = block;
	while (unit % pg)
		unit += block; /* the least common multiple of block and page */
	uint64_t per = s->shared_file ? (uint64_t)(size / (int64_t)unit) / (uint64_t)s->procs * (unit / block)
				      : (uint64_t)size / block;
	if (per == 0)
		return osm_fail(ctx, OSM_ERROR, "shared=1: file_size=%lld cannot hold procs=%d ranges of %zu bytes "
				"(whole blocks and pages): raise file_size", (long long)size, s->procs, unit);
	for (int k = 0; k < s->procs; k++) {
		struct osm_file_bypass bp;
		int f = s->shared_file ? 0 : k;
		int rc = osm_file_bypass_open(ctx, &s->t, s->path[f], size, block, want, 0, &bp);
		if (rc != OSM_OK)
			return rc;
		want = bp.method; /* the others use the method the first got */
		uint64_t first = s->shared_file ? per * (uint64_t)k : 0;
		osm_file_reader_init(&s->r[k], &bp, block, first, per, rand, (uint64_t)k + 1);
		s->n_readers = k + 1;
	}
	return OSM_OK;
}

static int start_readers(struct osm_ctx *ctx, struct cont_state *s)
{
	osm_barrier_init(&s->sh->start, (unsigned)s->procs, 1);
	osm_barrier_init(&s->sh->end, (unsigned)s->procs, 1);
	pid_t self = getpid();
	for (int k = 1; k < s->procs; k++) {
		pid_t pid = fork();
		if (pid == 0)
			reader_main(s, k, self);
		if (pid < 0)
			return osm_fail_errno(ctx, "fork of a reader process");
		if (osm_children_add(&s->kids, pid)) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			return osm_fail(ctx, OSM_ERROR, "cannot register a reader process for clean-up");
		}
	}
	char msg[160];
	for (int k = 1; k < s->procs; k++)
		for (int waited = 0; !atomic_load(&s->sh->slot[k].ready); waited++) {
			if (!readers_alive(s, msg, sizeof(msg)))
				return osm_fail(ctx, OSM_ERROR, "%s", msg);
			if (waited > GIVE_UP_S * 1000)
				return osm_fail(ctx, OSM_ERROR, "a reader process did not get ready");
			usleep(1000);
		}
	return reader_error(ctx, s);
}

static int contention_prepare(struct osm_ctx *ctx, struct cont_state *s)
{
	size_t block;
	int rc = osm_file_cold_block(ctx, &block);
	if (rc != OSM_OK)
		return rc;
	int64_t size = osm_param_int(ctx, "file_size");
	if ((int64_t)block > size)
		return osm_fail(ctx, OSM_ERROR, "block=%zu is larger than file_size=%lld", block, (long long)size);
	int64_t avail = osm_mem_available();
	if (avail >= 0 && (int64_t)block * s->procs > avail / 2)
		return osm_fail(ctx, OSM_SKIP, "not enough memory: procs=%d buffers of block=%zu bytes need %lld MiB, "
				"half of what this machine can spare is %lld MiB; lower block or procs", s->procs, block,
				(long long)(((int64_t)block * s->procs) >> 20), (long long)((avail / 2) >> 20));
	if (osm_param_int(ctx, "method") == OSM_FILE_DROP_CACHES)
		return osm_fail(ctx, OSM_SKIP, "method=drop_caches is not used here: a global drop of the page cache "
				"would disturb the other readers; use method=direct or method=fadvise (or auto)");
	rc = osm_file_target(ctx, &s->t);
	if (rc == OSM_OK)
		rc = osm_file_bypass_possible(ctx, &s->t);
	if (rc == OSM_OK)
		rc = make_files(ctx, s, size);
	if (rc == OSM_OK)
		rc = open_readers(ctx, s, size, block);
	if (rc == OSM_OK && !(s->sh = osm_shared_alloc(sizeof(*s->sh))))
		rc = osm_fail_errno(ctx, "mmap of the shared page");
	if (rc == OSM_OK) {
		place_readers(ctx, s);
		rc = start_readers(ctx, s);
	}
	return rc;
}

int osm_file_contention_setup(struct osm_ctx *ctx)
{
	struct cont_state *s = calloc(1, sizeof(*s));
	if (!s)
		return osm_fail(ctx, OSM_ERROR, "out of memory");
	ctx->priv = s;
	osm_children_init(&s->kids);
	s->procs = (int)osm_param_int(ctx, "procs");
	s->shared_file = (int)osm_param_int(ctx, "shared");
	s->nfiles = s->shared_file ? 1 : s->procs;
	int rc = contention_prepare(ctx, s);
	if (rc != OSM_OK) {
		osm_file_contention_teardown(ctx);
		return rc;
	}
	osm_add_extra(ctx, "procs", s->procs);
	osm_add_extra(ctx, "cpus", s->n_cpus);
	osm_add_extra(ctx, "block_bytes", (double)s->r[0].block);
	osm_add_extra(ctx, "file_bytes", (double)osm_param_int(ctx, "file_size"));
	if (s->procs > 1)
		osm_count_note(ctx, "the other readers (started in setup) are not counted: the probe's own reads "
			       "only, per block it read");
	return OSM_OK;
}

int osm_file_contention_run(struct osm_ctx *ctx, uint64_t batch)
{
	struct cont_state *s = ctx->priv;
	s->sh->batch = batch;
	int rc = s->procs > 1 ? meet(ctx, s, &s->sh->start) : OSM_OK;
	if (rc != OSM_OK)
		return rc;
	read_round(s, 0, ctx);
	if (s->procs > 1 && (rc = meet(ctx, s, &s->sh->end)) != OSM_OK)
		return rc;
	if ((rc = reader_error(ctx, s)) != OSM_OK)
		return rc;
	double total = 0;
	uint64_t first = s->sh->slot[0].first, last = s->sh->slot[0].last;
	for (int k = 0; k < s->procs; k++) {
		const struct slot *sl = &s->sh->slot[k];
		total += sl->ns;
		first = sl->first < first ? sl->first : first;
		last = sl->last > last ? sl->last : last;
	}
	ctx->self_ns = total / s->procs;
	s->wall_ns += osm_ticks_to_ns(last - first);
	s->bytes += (double)s->procs * (double)batch * (double)s->r[0].block;
	if (s->wall_ns > 0)
		osm_add_extra(ctx, "mb_per_s_total", s->bytes / s->wall_ns * 1e3);
	return OSM_OK;
}
