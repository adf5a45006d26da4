/* task_fork.c - task.fork, task.fork_exit and task.fork_child: fork()
 * against the parent's memory, alone or concurrently on every CPU, with or
 * without a CPU move first. What is timed and the traps avoided: task.c,
 * docs/methods/task.md. */
#include "task.h"
#include "mem.h" /* osm_thp_check: thp=1 skips as the mem family does */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../affinity.h"
#include "../bench.h"
#include "../clock.h"
#include "../compiler.h"
#include "../procs.h"
#include "../samples.h"

#define PAGE 4096
#define MIB (1024 * 1024)
#define HUGE_2M (2 * MIB)
#define PEER_CAP 16384     /* samples kept per concurrency worker */
#define BARRIER_SLICE_MS 100
#define BARRIER_GIVE_UP_S 120 /* no round of forks takes this long */

/* Where a fork's clock stops: when fork() returns in the parent, after the
 * child exited and was reaped, or at the child's first instruction. */
enum view { VIEW_RETURN, VIEW_EXIT_WAIT, VIEW_CHILD };

/* Per process of a concurrent run, in shared memory. */
struct slot {
	atomic_ullong stamp;     /* fork_child: the child's first clock read */
	int err;                 /* worker: errno of a failure (0 = none) */
	char msg[MSG];           /* worker: what failed */
	atomic_uint ready;       /* worker: memory set up and pinned */
	uint64_t n;              /* worker: samples stored */
};

struct shared {
	struct osm_barrier start; /* releases one round of forks on every CPU */
	atomic_uint stop;         /* set by the probe in teardown() */
	struct slot slot[MAX_PROCS];
	double vals[];            /* worker k's samples: vals[(k - 1) * PEER_CAP + i] */
};

/* The memory of one forking process (the probe or a worker). */
struct parent_mem {
	char *map;        /* touched region (as mapped, with alignment slack) */
	size_t map_len;
	void **vma;       /* the untouched 4 KiB shared mappings */
	int64_t n_vma;
};

struct fork_state {
	enum view view;
	int64_t touched_mib, thp, vmas, migrate, drop_caches;
	int k;                    /* processes forking at once (resolved concurrency) */
	int cpus[MAX_PROCS];      /* home CPU of each process; cpus[0] = ctx->cpu */
	int partner[MAX_PROCS];   /* CPU each process alternates with (migrate=1) */
	struct parent_mem mem;    /* the probe's own parent memory */
	struct shared *sh;
	size_t sh_len;
	struct osm_children workers; /* concurrency workers 1..k-1 */
	uint64_t round;           /* operations so far (migration alternation) */
	int dc_fd;                /* /proc/sys/vm/drop_caches, or -1 */
	char helper[512];         /* exec helper (spawn/exec benchmarks) */
};

/* ---- parent memory ---------------------------------------------------- */

static void mem_free(struct parent_mem *m)
{
	if (m->map)
		munmap(m->map, m->map_len);
	for (int64_t i = 0; i < m->n_vma; i++)
		munmap(m->vma[i], PAGE);
	free(m->vma);
	memset(m, 0, sizeof(*m));
}

/* Maps and writes touched_mib MiB (THP madvised on or off) and maps `vmas`
 * untouched 4 KiB shared mappings. Returns 0, or -1 with errno and `what`. */
static int mem_setup(struct parent_mem *m, int64_t touched_mib, int thp, int64_t vmas,
		     const char **what)
{
	memset(m, 0, sizeof(*m));
	if (touched_mib > 0) {
		size_t len = (size_t)touched_mib * MIB;
		/* Slack so the region can start on a 2 MiB boundary: otherwise
		 * the first and last partial huge pages would stay 4 KiB. */
		m->map_len = len + HUGE_2M;
		void *p = mmap(NULL, m->map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			m->map = NULL;
			*what = "mmap of the parent memory";
			return -1;
		}
		m->map = p;
		char *start = (char *)(((uintptr_t)p + HUGE_2M - 1) & ~(uintptr_t)(HUGE_2M - 1));
		/* Explicit either way: on a THP=always kernel the default would
		 * silently be huge pages; thp=2 asks for that default. */
		if (thp != OSM_THP_SYSTEM && madvise(start, len, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) && thp) {
			*what = "madvise(MADV_HUGEPAGE)";
			return -1;
		}
		for (size_t off = 0; off < len; off += PAGE)
			start[off] = 1; /* non-zero: a real page, not the zero page */
		OSM_CLOBBER();
	}
	if (vmas > 0) {
		m->vma = calloc((size_t)vmas, sizeof(void *));
		if (!m->vma) {
			*what = "memory for the mapping table";
			return -1;
		}
		for (int64_t i = 0; i < vmas; i++) {
			void *p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
			if (p == MAP_FAILED) {
				*what = "mmap of a 4 KiB shared mapping";
				return -1;
			}
			m->vma[m->n_vma++] = p;
		}
	}
	return 0;
}

/* AnonHugePages of this process, KiB (smaps_rollup), or -1. */
static int64_t anon_huge_kib(void)
{
	FILE *f = fopen("/proc/self/smaps_rollup", "r");
	if (!f)
		return -1;
	char line[256];
	long long kb = -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "AnonHugePages: %lld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* One timed fork by process `who`. Returns ns, or -1 with msg set. The
 * child is always reaped before this returns: inside the clock only for
 * VIEW_EXIT_WAIT. ctx (the probe's own forks; NULL for concurrency
 * workers) brackets the counters (--counters) around what is timed: up to
 * fork()'s return, or the wait; for the child's view, whose end is in the
 * child, up to the wait. */
static double fork_once(struct fork_state *s, int who, struct osm_ctx *ctx, char *msg, size_t len)
{
	atomic_ullong *stamp = &s->sh->slot[who].stamp;
	atomic_store_explicit(stamp, 0, memory_order_relaxed);
	if (ctx)
		osm_count_begin(ctx);
	uint64_t t0 = osm_clock_start();
	pid_t pid = fork();
	if (pid == 0) {
		if (s->view == VIEW_CHILD)
			atomic_store_explicit(stamp, osm_clock_stop(), memory_order_relaxed);
		_exit(0);
	}
	uint64_t t_ret = osm_clock_stop();
	if (ctx && s->view == VIEW_RETURN)
		osm_count_end(ctx, pid < 0 ? 0 : 1);
	if (pid < 0) {
		if (ctx && s->view != VIEW_RETURN)
			osm_count_end(ctx, 0);
		snprintf(msg, len, "fork: %s", strerror(errno));
		return -1;
	}
	int status;
	int waited = task_wait_child(pid, &status);
	uint64_t t_wait = osm_clock_stop();
	if (ctx && s->view != VIEW_RETURN)
		osm_count_end(ctx, waited ? 0 : 1);
	if (waited) {
		snprintf(msg, len, "waitpid: %s", strerror(errno));
		return -1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		task_bad_status(msg, len, "the forked child", status);
		return -1;
	}
	if (s->view == VIEW_RETURN)
		return osm_ticks_to_ns(t_ret - t0);
	if (s->view == VIEW_EXIT_WAIT)
		return osm_ticks_to_ns(t_wait - t0);
	uint64_t tc = atomic_load(stamp);
	if (tc == 0 || tc < t0) {
		snprintf(msg, len, "the child's clock stamp is missing or earlier than the fork (clock not synchronised across CPUs?)");
		return -1;
	}
	return osm_ticks_to_ns(tc - t0);
}

/* Before a fork, untimed: drop the page cache (process 0 only). */
static int drop_caches(struct fork_state *s, char *msg, size_t len)
{
	char v = (char)('0' + s->drop_caches);
	if (s->dc_fd >= 0 && pwrite(s->dc_fd, &v, 1, 0) != 1) {
		snprintf(msg, len, "write /proc/sys/vm/drop_caches: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* Before a fork, untimed, with migrate=1: every fork follows a move, to the
 * partner CPU on even rounds and back home on odd ones. */
static int migrate(struct fork_state *s, int who, uint64_t round, char *msg, size_t len)
{
	if (!s->migrate)
		return 0;
	int cpu = round % 2 == 0 ? s->partner[who] : s->cpus[who];
	if (osm_pin_self(cpu)) {
		snprintf(msg, len, "cannot move to CPU %d: %s", cpu, strerror(errno));
		return -1;
	}
	return 0;
}

/* ---- concurrency workers ---------------------------------------------- */

OSM_NORETURN static void worker_main(struct fork_state *s, int who, pid_t parent)
{
	osm_child_init(parent);
	struct slot *sl = &s->sh->slot[who];
	const char *what = NULL;
	if (osm_pin_self(s->cpus[who])) {
		sl->err = errno;
		snprintf(sl->msg, MSG, "worker %d: cannot pin to CPU %d: %s", who, s->cpus[who], strerror(errno));
	} else if (mem_setup(&s->mem, s->touched_mib, (int)s->thp, s->vmas, &what)) {
		sl->err = errno;
		snprintf(sl->msg, MSG, "worker %d: %s: %s", who, what, strerror(errno));
	}
	atomic_store(&sl->ready, 1);
	double *vals = s->sh->vals + (size_t)(who - 1) * PEER_CAP;
	char msg[MSG];
	for (uint64_t round = 0;; round++) {
		unsigned gen = osm_barrier_arrive(&s->sh->start);
		while (osm_barrier_await(&s->sh->start, gen, 1000))
			;
		if (atomic_load(&s->sh->stop))
			_exit(0);
		if (sl->err)
			continue; /* keep the barrier going; the probe reports it */
		double ns = -1;
		if (migrate(s, who, round, msg, sizeof(msg)) == 0)
			ns = fork_once(s, who, NULL, msg, sizeof(msg));
		if (ns < 0) {
			sl->err = errno ? errno : EIO;
			snprintf(sl->msg, MSG, "worker %d: %.160s", who, msg);
			continue;
		}
		if (sl->n < PEER_CAP)
			vals[sl->n] = ns;
		sl->n++;
	}
}

/* A worker's reported failure, if any, as this benchmark's error. */
static int worker_error(struct osm_ctx *ctx, struct fork_state *s)
{
	for (int k = 1; k < s->k; k++)
		if (s->sh->slot[k].err)
			return osm_fail(ctx, OSM_ERROR, "%s", s->sh->slot[k].msg);
	return OSM_OK;
}

static int workers_alive(struct fork_state *s, char *msg, size_t len)
{
	pid_t pid;
	int status;
	if (osm_children_reap_dead(&s->workers, &pid, &status)) {
		task_bad_status(msg, len, "a concurrency worker", status);
		return 0;
	}
	return 1;
}

/* Arrive at the start barrier and wait for everyone, checking the workers. */
static int start_round(struct osm_ctx *ctx, struct fork_state *s)
{
	char msg[MSG];
	unsigned gen = osm_barrier_arrive(&s->sh->start);
	for (int waited = 0; osm_barrier_await(&s->sh->start, gen, BARRIER_SLICE_MS); waited++) {
		if (!workers_alive(s, msg, sizeof(msg)))
			return osm_fail(ctx, OSM_ERROR, "%s", msg);
		if (waited * BARRIER_SLICE_MS > BARRIER_GIVE_UP_S * 1000)
			return osm_fail(ctx, OSM_ERROR, "the concurrency workers stopped answering");
	}
	return OSM_OK;
}

/* ---- the fork benchmarks ---------------------------------------------- */

static int fork_check_resources(struct osm_ctx *ctx, struct fork_state *s)
{
	if (s->touched_mib > 0) {
		/* Every process maps its own; each child needs page tables, about
		 * 2 MiB per GiB. Keep a fifth of what is available untouched. */
		int64_t need = (int64_t)s->k * s->touched_mib * MIB * 102 / 100;
		int64_t avail = osm_mem_available();
		if (avail >= 0 && need > avail / 5 * 4)
			return osm_fail(ctx, OSM_SKIP,
					"not enough memory: touched_mib=%lld x %d process(es) needs %lld MiB, "
					"and this machine can spare %lld MiB (80%% of MemAvailable or of the cgroup's "
					"headroom); lower touched_mib or concurrency",
					(long long)s->touched_mib, s->k, (long long)(need / MIB),
					(long long)(avail / 5 * 4 / MIB));
	}
	if (s->vmas > 0) {
		int64_t have = osm_map_count(), max = osm_max_map_count();
		if (have >= 0 && max >= 0 && have + s->vmas + 256 > max)
			return osm_fail(ctx, OSM_SKIP,
					"vmas=%lld needs that many memory maps, the probe already has %lld and "
					"vm.max_map_count is %lld: raise it (sysctl vm.max_map_count=%lld)",
					(long long)s->vmas, (long long)have, (long long)max,
					(long long)(have + s->vmas + 65536));
	}
	return OSM_OK;
}

static int fork_resolve_cpus(struct osm_ctx *ctx, struct fork_state *s, int64_t conc)
{
	int allowed[MAX_PROCS];
	int n = osm_allowed_cpus(allowed, MAX_PROCS);
	s->k = conc == 0 ? (n > 0 ? n : 1) : (int)conc;
	if (s->k > n && s->k > 1)
		return osm_fail(ctx, OSM_SKIP, "concurrency=%d needs %d CPUs, one per process; this probe may use %d",
				s->k, s->k, n);
	s->cpus[0] = ctx->cpu;
	for (int i = 0, k = 1; i < n && k < s->k; i++)
		if (allowed[i] != ctx->cpu)
			s->cpus[k++] = allowed[i];
	if (s->migrate) {
		if (s->k > 1) {
			for (int k = 0; k < s->k; k++)
				s->partner[k] = s->cpus[(k + 1) % s->k];
		} else {
			s->partner[0] = osm_other_cpu(ctx->cpu);
			if (s->partner[0] < 0)
				return osm_skip_one_cpu(ctx, "migrate=1", "--param migrate=0");
		}
	}
	return OSM_OK;
}

/* thp=1 needs transparent huge pages; drop_caches needs root and the knob. */
static int fork_check_knobs(struct osm_ctx *ctx, struct fork_state *s)
{
	if (s->thp == OSM_THP_ON && s->touched_mib > 0 && osm_thp_check(ctx, NULL, 0) != OSM_OK)
		return OSM_SKIP;
	if (s->drop_caches) {
		if (geteuid() != 0)
			return osm_fail(ctx, OSM_SKIP, "needs root: cannot drop the page cache (drop_caches=%lld)",
					(long long)s->drop_caches);
		if ((s->dc_fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC)) < 0)
			return osm_fail(ctx, OSM_SKIP, "cannot open /proc/sys/vm/drop_caches: %s", strerror(errno));
	}
	return OSM_OK;
}

/* The shared page(s) (stamps, the start barrier and the workers' samples),
 * then the concurrency workers: before the parent memory exists, so none
 * inherits it. */
static int fork_start_workers(struct osm_ctx *ctx, struct fork_state *s)
{
	s->sh_len = sizeof(struct shared) + (size_t)(s->k > 1 ? s->k - 1 : 0) * PEER_CAP * sizeof(double);
	s->sh = osm_shared_alloc(s->sh_len);
	if (!s->sh)
		return osm_fail_errno(ctx, "mmap of the shared page");
	osm_barrier_init(&s->sh->start, (unsigned)s->k, 1);

	pid_t self = getpid();
	for (int k = 1; k < s->k; k++) {
		pid_t pid = fork();
		if (pid == 0)
			worker_main(s, k, self);
		if (pid < 0)
			return osm_fail_errno(ctx, "fork of a concurrency worker");
		if (osm_children_add(&s->workers, pid)) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			return osm_fail(ctx, OSM_ERROR, "cannot register a concurrency worker for clean-up");
		}
	}
	return OSM_OK;
}

/* The probe's own parent memory. */
static int fork_parent_memory(struct osm_ctx *ctx, struct fork_state *s)
{
	const char *what = NULL;
	if (mem_setup(&s->mem, s->touched_mib, (int)s->thp, s->vmas, &what))
		return osm_fail(ctx, OSM_ERROR, "%s: %s", what, strerror(errno));
	int64_t huge = anon_huge_kib();
	if (s->touched_mib > 0 && huge >= 0)
		osm_add_extra(ctx, "anon_huge_mib", (double)huge / 1024.0);
	return OSM_OK;
}

/* Waits until every worker has its memory and its CPU. */
static int fork_wait_workers(struct osm_ctx *ctx, struct fork_state *s)
{
	char msg[MSG];
	for (int k = 1; k < s->k; k++) {
		for (int waited = 0; !atomic_load(&s->sh->slot[k].ready); waited++) {
			if (!workers_alive(s, msg, sizeof(msg)) || waited > BARRIER_GIVE_UP_S * 1000)
				return osm_fail(ctx, OSM_ERROR, "%s", waited > BARRIER_GIVE_UP_S * 1000 ?
						"a concurrency worker did not get ready" : msg);
			usleep(1000);
		}
	}
	return worker_error(ctx, s);
}

static int fork_setup_view(struct osm_ctx *ctx, enum view view)
{
	struct fork_state *s = calloc(1, sizeof(*s));
	if (!s)
		return osm_fail(ctx, OSM_ERROR, "out of memory");
	ctx->priv = s;
	ctx->placement = "same_cpu"; /* the child starts on its parent's CPU */
	s->view = view;
	s->dc_fd = -1;
	s->touched_mib = osm_param_int(ctx, "touched_mib");
	s->thp = osm_param_int(ctx, "thp");
	s->vmas = osm_param_int(ctx, "vmas");
	s->migrate = osm_param_int(ctx, "migrate");
	s->drop_caches = osm_param_int(ctx, "drop_caches");
	osm_children_init(&s->workers);

	int st = fork_resolve_cpus(ctx, s, osm_param_int(ctx, "concurrency"));
	if (st == OSM_OK)
		st = fork_check_resources(ctx, s);
	if (st == OSM_OK)
		st = fork_check_knobs(ctx, s);
	if (st == OSM_OK)
		st = fork_start_workers(ctx, s);
	if (st == OSM_OK)
		st = fork_parent_memory(ctx, s);
	if (st == OSM_OK)
		st = fork_wait_workers(ctx, s);
	if (st != OSM_OK) {
		task_fork_teardown(ctx);
		return st;
	}
	osm_add_extra(ctx, "concurrency", s->k);
	if (view == VIEW_CHILD)
		osm_count_note(ctx, "the clock stops in the child, the counters' window when the wait for it "
			       "returns: the child's exit and the wait are counted too (as task.fork_exit's)");
	return OSM_OK;
}

int task_fork_setup(struct osm_ctx *ctx) { return fork_setup_view(ctx, VIEW_RETURN); }
int task_fork_exit_setup(struct osm_ctx *ctx) { return fork_setup_view(ctx, VIEW_EXIT_WAIT); }
int task_fork_child_setup(struct osm_ctx *ctx) { return fork_setup_view(ctx, VIEW_CHILD); }

int task_fork_run(struct osm_ctx *ctx, uint64_t batch)
{
	struct fork_state *s = ctx->priv;
	char msg[MSG];
	double total = 0;
	for (uint64_t i = 0; i < batch; i++, s->round++) {
		/* Order: drop caches, start barrier (all processes fork
		 * together), migrate, fork. */
		if (drop_caches(s, msg, sizeof(msg)))
			return osm_fail(ctx, OSM_ERROR, "%s", msg);
		if (s->k > 1) {
			int st = worker_error(ctx, s);
			if (st == OSM_OK)
				st = start_round(ctx, s);
			if (st != OSM_OK)
				return st;
		}
		if (migrate(s, 0, s->round, msg, sizeof(msg)))
			return osm_fail(ctx, OSM_ERROR, "%s", msg);
		/* Counted exactly where timed (inside fork_once): the fork, not
		 * the move or the barrier before it. */
		double ns = fork_once(s, 0, ctx, msg, sizeof(msg));
		if (ns < 0)
			return osm_fail(ctx, OSM_ERROR, "%s", msg);
		total += ns;
	}
	ctx->self_ns = total;
	return OSM_OK;
}

void task_fork_teardown(struct osm_ctx *ctx)
{
	struct fork_state *s = ctx->priv;
	if (!s)
		return;
	if (s->sh && s->workers.n) {
		/* Release the workers from the barrier with the stop flag up;
		 * then kill and reap them (they may be leaving already). */
		atomic_store(&s->sh->stop, 1);
		unsigned gen = osm_barrier_arrive(&s->sh->start);
		char msg[MSG];
		for (int waited = 0; osm_barrier_await(&s->sh->start, gen, BARRIER_SLICE_MS) &&
		     waited < 50 && workers_alive(s, msg, sizeof(msg)); waited++)
			;
	}
	osm_children_kill(&s->workers);
	if (s->sh && s->k > 1) {
		/* The other processes' samples, pooled (they ran in the same
		 * rounds as the probe's; warm-up rounds included). */
		size_t n = 0;
		for (int k = 1; k < s->k; k++)
			n += s->sh->slot[k].n < PEER_CAP ? s->sh->slot[k].n : PEER_CAP;
		double *v = n ? malloc(n * sizeof(double)) : NULL;
		if (v) {
			size_t off = 0;
			for (int k = 1; k < s->k; k++) {
				size_t m = s->sh->slot[k].n < PEER_CAP ? s->sh->slot[k].n : PEER_CAP;
				memcpy(v + off, s->sh->vals + (size_t)(k - 1) * PEER_CAP, m * sizeof(double));
				off += m;
			}
			double med = osm_sort_median(v, n);
			osm_add_extra(ctx, "peers_min_ns", v[0]);
			osm_add_extra(ctx, "peers_median_ns", med);
			osm_add_extra(ctx, "peers_max_ns", v[n - 1]);
			osm_add_extra(ctx, "peers_n", (double)n);
			free(v);
		}
	}
	if (s->migrate)
		osm_pin_self(ctx->cpu);
	if (s->dc_fd >= 0)
		close(s->dc_fd);
	mem_free(&s->mem);
	osm_shared_free(s->sh, s->sh_len);
	free(s);
	ctx->priv = NULL;
}
