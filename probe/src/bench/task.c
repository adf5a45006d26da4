/* task.c - task.*: creating processes and threads (lmbench lat_proc,
 * LEBench fork / big fork / huge fork / thread create rows, and the fork
 * study: fork cost against the parent's memory, alone and concurrently on
 * every CPU, with and without a CPU migration before the fork).
 * Method: docs/methods/task.md
 *
 * What is timed (all self-timed, one operation per sample):
 *  - task.fork: fork() until it returns in the parent (LEBench "fork"); the
 *    child _exits at once and is reaped outside the clock;
 *  - task.fork_exit: fork() + the child's _exit(0) + the parent's
 *    waitpid(), the parent's view (lmbench lat_proc "fork+exit");
 *  - task.fork_child: from just before fork() in the parent to the child's
 *    first clock read after fork() returns in it (LEBench "fork Child"),
 *    stamped through a MAP_SHARED page with the probe's own clock (the TSC
 *    is invariant and synchronised across CPUs; CLOCK_MONOTONIC_RAW
 *    elsewhere);
 *  - task.vfork, task.posix_spawn, task.fork_exec: until waitpid() returns;
 *    spawn and exec run the static osmeter-exec-helper installed next to
 *    the probe, with an empty environment;
 *  - task.thread_create: pthread_create() until it returns (LEBench "thr
 *    create"), the join outside the clock; task.thread_join:
 *    pthread_create() + pthread_join() of a thread that returns at once;
 *    task.thread_child: pthread_create() until the new thread's first clock
 *    read (LEBench "thr create Child").
 *
 * Parent size, two axes never confused: touched_mib (N MiB mapped and
 * written before the fork, the fork study's axis; thp madvises them) and
 * vmas (N separate untouched 4 KiB MAP_SHARED mappings: LEBench's big fork
 * is 6000, huge fork 12000).
 *
 * Traps avoided:
 *  - the parent memory is written once in setup(), one byte per 4 KiB page
 *    with a non-zero value (a read would map the shared zero page, and the
 *    fork would copy nothing); later forks find it write-protected by the
 *    previous fork, which costs the same page-table copy;
 *  - MAP_SHARED anonymous mappings each get their own shmem object, so the
 *    kernel cannot merge adjacent ones into one VMA;
 *  - memory beyond what the machine can spare is refused in setup() with a
 *    skip, never left to the OOM killer; a VMA count beyond vm.max_map_count
 *    likewise;
 *  - a failed fork/spawn/pthread_create (EAGAIN under RLIMIT_NPROC, ENOMEM
 *    under RLIMIT_AS) is an error record, never a fast sample; a child that
 *    did not exit 0 is an error too;
 *  - concurrency workers are forked before the parent memory exists, so each
 *    owns its own memory rather than a copy-on-write view of the probe's;
 *    they die with the probe (osm_child_init, osm_cleanup_track_child);
 *  - with migrate=1 the probe is pinned back to its CPU in teardown(), so
 *    the next benchmark is not run elsewhere. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../affinity.h"
#include "../bench.h"
#include "../cleanup.h"
#include "../clock.h"
#include "../compiler.h"
#include "../procs.h"

#define PAGE 4096
#define MIB (1024 * 1024)
#define HUGE_2M (2 * MIB)
#define MAX_PROCS 256
#define PEER_CAP 16384     /* samples kept per concurrency worker */
#define BARRIER_SLICE_MS 100
#define BARRIER_GIVE_UP_S 120 /* no round of forks takes this long */
#define MSG 200

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
		 * silently be huge pages. */
		if (madvise(start, len, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) && thp) {
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

/* ---- one fork --------------------------------------------------------- */

/* Describe a child's wait status that is not a clean exit 0. */
static void bad_status(char *buf, size_t len, const char *who, int status)
{
	if (WIFSIGNALED(status))
		snprintf(buf, len, "%s was killed by signal %d", who, WTERMSIG(status));
	else
		snprintf(buf, len, "%s exited with status %d", who, WEXITSTATUS(status));
}

static int wait_child(pid_t pid, int *status)
{
	while (waitpid(pid, status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return 0;
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
	int waited = wait_child(pid, &status);
	uint64_t t_wait = osm_clock_stop();
	if (ctx && s->view != VIEW_RETURN)
		osm_count_end(ctx, waited ? 0 : 1);
	if (waited) {
		snprintf(msg, len, "waitpid: %s", strerror(errno));
		return -1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		bad_status(msg, len, "the forked child", status);
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
		bad_status(msg, len, "a concurrency worker", status);
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

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

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
				return osm_fail(ctx, OSM_SKIP, "migrate=1 needs a second CPU to move to");
		}
	}
	return OSM_OK;
}

static void fork_teardown(struct osm_ctx *ctx);

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
	if (st == OSM_OK && s->thp && s->touched_mib > 0) {
		FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
		char buf[128] = "";
		if (f) {
			if (!fgets(buf, sizeof(buf), f))
				buf[0] = 0;
			fclose(f);
		}
		if (strstr(buf, "[never]"))
			st = osm_fail(ctx, OSM_SKIP, "thp=1: transparent huge pages are disabled "
				      "(/sys/kernel/mm/transparent_hugepage/enabled is never)");
	}
	if (st == OSM_OK && s->drop_caches) {
		if (geteuid() != 0)
			st = osm_fail(ctx, OSM_SKIP, "needs root: cannot drop the page cache (drop_caches=%lld)",
				      (long long)s->drop_caches);
		else if ((s->dc_fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC)) < 0)
			st = osm_fail(ctx, OSM_SKIP, "cannot open /proc/sys/vm/drop_caches: %s", strerror(errno));
	}
	if (st != OSM_OK) {
		fork_teardown(ctx);
		return st;
	}

	/* Shared page(s): stamps, the start barrier and the workers' samples. */
	s->sh_len = sizeof(struct shared) + (size_t)(s->k > 1 ? s->k - 1 : 0) * PEER_CAP * sizeof(double);
	s->sh = osm_shared_alloc(s->sh_len);
	if (!s->sh) {
		st = osm_fail_errno(ctx, "mmap of the shared page");
		fork_teardown(ctx);
		return st;
	}
	osm_barrier_init(&s->sh->start, (unsigned)s->k, 1);

	/* Workers first, so none inherits the probe's parent memory. */
	pid_t self = getpid();
	for (int k = 1; k < s->k; k++) {
		pid_t pid = fork();
		if (pid == 0)
			worker_main(s, k, self);
		if (pid < 0) {
			st = osm_fail_errno(ctx, "fork of a concurrency worker");
			fork_teardown(ctx);
			return st;
		}
		if (osm_children_add(&s->workers, pid)) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			st = osm_fail(ctx, OSM_ERROR, "cannot register a concurrency worker for clean-up");
			fork_teardown(ctx);
			return st;
		}
	}

	const char *what = NULL;
	if (mem_setup(&s->mem, s->touched_mib, (int)s->thp, s->vmas, &what)) {
		st = osm_fail(ctx, OSM_ERROR, "%s: %s", what, strerror(errno));
		fork_teardown(ctx);
		return st;
	}
	int64_t huge = anon_huge_kib();
	if (s->touched_mib > 0 && huge >= 0)
		osm_add_extra(ctx, "anon_huge_mib", (double)huge / 1024.0);

	/* Wait until every worker has its memory and its CPU. */
	char msg[MSG];
	for (int k = 1; k < s->k; k++) {
		for (int waited = 0; !atomic_load(&s->sh->slot[k].ready); waited++) {
			if (!workers_alive(s, msg, sizeof(msg)) || waited > BARRIER_GIVE_UP_S * 1000) {
				st = osm_fail(ctx, OSM_ERROR, "%s", waited > BARRIER_GIVE_UP_S * 1000 ?
					      "a concurrency worker did not get ready" : msg);
				fork_teardown(ctx);
				return st;
			}
			usleep(1000);
		}
	}
	if ((st = worker_error(ctx, s)) != OSM_OK) {
		fork_teardown(ctx);
		return st;
	}
	osm_add_extra(ctx, "concurrency", s->k);
	return OSM_OK;
}

static int fork_setup(struct osm_ctx *ctx) { return fork_setup_view(ctx, VIEW_RETURN); }
static int fork_exit_setup(struct osm_ctx *ctx) { return fork_setup_view(ctx, VIEW_EXIT_WAIT); }
static int fork_child_setup(struct osm_ctx *ctx) { return fork_setup_view(ctx, VIEW_CHILD); }

static int fork_run(struct osm_ctx *ctx, uint64_t batch)
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

static void fork_teardown(struct osm_ctx *ctx)
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
			qsort(v, n, sizeof(double), cmp_double);
			osm_add_extra(ctx, "peers_min_ns", v[0]);
			osm_add_extra(ctx, "peers_median_ns", n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2);
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

/* ---- vfork, posix_spawn, fork + exec ---------------------------------- */

struct spawn_state {
	char helper[512];
};

/* An empty environment: the cost must not depend on the caller's. */
static char *const empty_env[] = {NULL};

static int spawn_setup(struct osm_ctx *ctx)
{
	struct spawn_state *s = calloc(1, sizeof(*s));
	if (!s)
		return osm_fail(ctx, OSM_ERROR, "out of memory");
	ctx->priv = s;
	ctx->placement = "same_cpu";
	if (osm_exec_helper_path(s->helper, sizeof(s->helper))) {
		free(s);
		ctx->priv = NULL;
		return osm_fail(ctx, OSM_SKIP, "osmeter-exec-helper is not installed next to the probe "
				"(build the osmeter-exec-helper target, or install osmeter with pip)");
	}
	/* One untimed try: a helper that cannot run here (a foreign binary
	 * under qemu-user, a noexec mount) is a skip with the reason, not an
	 * error in the middle of sampling. A limit that stops the spawn
	 * itself (EAGAIN) is left to run(), where it is an error. */
	char *argv[] = {s->helper, NULL};
	pid_t pid;
	int status = 0, e = posix_spawn(&pid, s->helper, NULL, NULL, argv, empty_env);
	if (e == 0 && wait_child(pid, &status) == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return OSM_OK;
	if (e == EAGAIN || e == ENOMEM)
		return OSM_OK;
	char what[64];
	if (e)
		snprintf(what, sizeof(what), "%s", strerror(e));
	else
		bad_status(what, sizeof(what), "it", status);
	osm_fail(ctx, OSM_SKIP, "cannot execute %s here: %s", s->helper, what);
	free(s);
	ctx->priv = NULL;
	return OSM_SKIP;
}

static void plain_teardown(struct osm_ctx *ctx)
{
	free(ctx->priv);
	ctx->priv = NULL;
}

static int vfork_setup(struct osm_ctx *ctx)
{
	ctx->placement = "same_cpu";
	return OSM_OK;
}

static int reap_ok(struct osm_ctx *ctx, pid_t pid, const char *who)
{
	int status;
	char msg[MSG];
	if (wait_child(pid, &status))
		return osm_fail_errno(ctx, "waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		bad_status(msg, sizeof(msg), who, status);
		return osm_fail(ctx, OSM_ERROR, "%s", msg);
	}
	return OSM_OK;
}

/* vfork in a function of its own, so no variable of the caller's can be
 * clobbered while the child borrows the stack; the child only _exits. */
OSM_NOIPA static pid_t vfork_and_exit(void)
{
	pid_t pid = vfork();
	if (pid == 0)
		_exit(0);
	return pid;
}

static int vfork_run(struct osm_ctx *ctx, uint64_t batch)
{
	uint64_t t0 = osm_clock_start();
	for (uint64_t i = 0; i < batch; i++) {
		pid_t pid = vfork_and_exit();
		if (pid < 0)
			return osm_fail_errno(ctx, "vfork");
		int st = reap_ok(ctx, pid, "the vfork child");
		if (st != OSM_OK)
			return st;
	}
	ctx->self_ns = osm_ticks_to_ns(osm_clock_stop() - t0);
	return OSM_OK;
}

static int posix_spawn_run(struct osm_ctx *ctx, uint64_t batch)
{
	struct spawn_state *s = ctx->priv;
	char *argv[] = {s->helper, NULL};
	uint64_t t0 = osm_clock_start();
	for (uint64_t i = 0; i < batch; i++) {
		pid_t pid;
		int e = posix_spawn(&pid, s->helper, NULL, NULL, argv, empty_env);
		if (e)
			return osm_fail(ctx, OSM_ERROR, "posix_spawn %s: %s", s->helper, strerror(e));
		int st = reap_ok(ctx, pid, "the spawned helper");
		if (st != OSM_OK)
			return st;
	}
	ctx->self_ns = osm_ticks_to_ns(osm_clock_stop() - t0);
	return OSM_OK;
}

static int fork_exec_run(struct osm_ctx *ctx, uint64_t batch)
{
	struct spawn_state *s = ctx->priv;
	char *argv[] = {s->helper, NULL};
	uint64_t t0 = osm_clock_start();
	for (uint64_t i = 0; i < batch; i++) {
		pid_t pid = fork();
		if (pid == 0) {
			execve(s->helper, argv, empty_env);
			_exit(127);
		}
		if (pid < 0)
			return osm_fail_errno(ctx, "fork");
		int st = reap_ok(ctx, pid, "the exec'd helper (127: exec failed)");
		if (st != OSM_OK)
			return st;
	}
	ctx->self_ns = osm_ticks_to_ns(osm_clock_stop() - t0);
	return OSM_OK;
}

/* ---- threads ---------------------------------------------------------- */

struct thread_state {
	pthread_attr_t attr;
	int have_attr;
	atomic_ullong stamp;
};

static void *thread_empty(void *arg)
{
	return arg;
}

static void *thread_stamp(void *arg)
{
	struct thread_state *s = arg;
	atomic_store_explicit(&s->stamp, osm_clock_stop(), memory_order_relaxed);
	return NULL;
}

static int thread_setup(struct osm_ctx *ctx)
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
			return osm_fail(ctx, OSM_SKIP, "placement=cross_cpu needs a second CPU");
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

static void thread_teardown(struct osm_ctx *ctx)
{
	struct thread_state *s = ctx->priv;
	if (s && s->have_attr)
		pthread_attr_destroy(&s->attr);
	free(s);
	ctx->priv = NULL;
}

/* task.thread_create: until pthread_create() returns; the join is outside
 * the clock (LEBench "thr create"). */
static int thread_create_run(struct osm_ctx *ctx, uint64_t batch)
{
	struct thread_state *s = ctx->priv;
	double total = 0;
	for (uint64_t i = 0; i < batch; i++) {
		pthread_t t;
		void *ret;
		uint64_t t0 = osm_clock_start();
		int e = pthread_create(&t, s->have_attr ? &s->attr : NULL, thread_empty, s);
		uint64_t t1 = osm_clock_stop();
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
static int thread_join_run(struct osm_ctx *ctx, uint64_t batch)
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

static int thread_child_run(struct osm_ctx *ctx, uint64_t batch)
{
	struct thread_state *s = ctx->priv;
	double total = 0;
	for (uint64_t i = 0; i < batch; i++) {
		pthread_t t;
		atomic_store(&s->stamp, 0);
		uint64_t t0 = osm_clock_start();
		int e = pthread_create(&t, s->have_attr ? &s->attr : NULL, thread_stamp, s);
		if (e)
			return osm_fail(ctx, OSM_ERROR, "pthread_create: %s", strerror(e));
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

/* ---- the table -------------------------------------------------------- */

static const char *const placements[] = {"same_cpu", "cross_cpu", NULL};

/* Shared by task.fork, task.fork_exit and task.fork_child. */
static const struct osm_param fork_params[] = {
	{.name = "touched_mib", .type = OSM_P_INT, .def = 0, .min = 0, .max = 1048576,
	 .help = "MiB the parent maps and writes before forking (the fork study's axis)"},
	{.name = "thp", .type = OSM_P_INT, .def = 0, .min = 0, .max = 1,
	 .help = "1: madvise(MADV_HUGEPAGE) the touched memory; 0: MADV_NOHUGEPAGE"},
	{.name = "vmas", .type = OSM_P_INT, .def = 0, .min = 0, .max = 1000000,
	 .help = "separate untouched 4 KiB MAP_SHARED mappings in the parent (LEBench big fork 6000, huge 12000)"},
	{.name = "concurrency", .type = OSM_P_INT, .def = 1, .min = 0, .max = MAX_PROCS,
	 .help = "processes forking at once, one per CPU, released by a start barrier (0 = every CPU)"},
	{.name = "migrate", .type = OSM_P_INT, .def = 0, .min = 0, .max = 1,
	 .help = "1: move to another CPU after the memory is set up and before every fork"},
	{.name = "drop_caches", .type = OSM_P_INT, .def = 0, .min = 0, .max = 3,
	 .help = "write this to /proc/sys/vm/drop_caches before every fork (1 = page cache; root only)"},
	{0},
};

static const struct osm_param thread_params[] = {
	{.name = "placement", .type = OSM_P_ENUM, .choices = placements, .def = 0,
	 .help = "where the new thread runs: the creator's CPU or another one"},
	{0},
};

static const struct osm_bench task_benches[] = {
	{
		.name = "fork",
		.desc = "fork() until it returns in the parent; child reaped off the clock (parent size: touched_mib, vmas)",
		.unit = OSM_UNIT_NS,
		.flags = OSM_SELF_TIMED | OSM_ONE_BY_ONE | OSM_SELF_COUNTED,
		.suites = OSM_SUITES_ALL,
		.params = fork_params,
		.sweep = "vmas=0;vmas=6000;vmas=12000",
		.setup = fork_setup,
		.run = fork_run,
		.teardown = fork_teardown,
	},
	{
		.name = "fork_exit",
		.desc = "fork + child _exit + waitpid, parent's view (lmbench fork+exit)",
		.unit = OSM_UNIT_NS,
		.flags = OSM_SELF_TIMED | OSM_ONE_BY_ONE | OSM_SELF_COUNTED,
		.suites = OSM_SUITES_ALL,
		.params = fork_params,
		.setup = fork_exit_setup,
		.run = fork_run,
		.teardown = fork_teardown,
	},
	{
		.name = "fork_child",
		.desc = "fork() until the child's first instruction, stamped through shared memory",
		.unit = OSM_UNIT_NS,
		.flags = OSM_SELF_TIMED | OSM_ONE_BY_ONE | OSM_SELF_COUNTED,
		.suites = OSM_SUITE_STANDARD | OSM_SUITE_FULL,
		.params = fork_params,
		.sweep = "vmas=0;vmas=6000;vmas=12000",
		.setup = fork_child_setup,
		.run = fork_run,
		.teardown = fork_teardown,
	},
	{
		.name = "vfork",
		.desc = "vfork + child _exit + waitpid",
		.unit = OSM_UNIT_NS,
		.flags = OSM_SELF_TIMED | OSM_ONE_BY_ONE,
		.suites = OSM_SUITE_STANDARD | OSM_SUITE_FULL,
		.setup = vfork_setup,
		.run = vfork_run,
	},
	{
		.name = "posix_spawn",
		.desc = "posix_spawn of a static do-nothing program + waitpid",
		.unit = OSM_UNIT_NS,
		.flags = OSM_SELF_TIMED | OSM_ONE_BY_ONE,
		.suites = OSM_SUITE_STANDARD | OSM_SUITE_FULL,
		.setup = spawn_setup,
		.run = posix_spawn_run,
		.teardown = plain_teardown,
	},
	{
		.name = "fork_exec",
		.desc = "fork + execve of a static do-nothing program + waitpid",
		.unit = OSM_UNIT_NS,
		.flags = OSM_SELF_TIMED | OSM_ONE_BY_ONE,
		.suites = OSM_SUITES_ALL,
		.setup = spawn_setup,
		.run = fork_exec_run,
		.teardown = plain_teardown,
	},
	{
		.name = "thread_create",
		.desc = "pthread_create until it returns; join off the clock",
		.unit = OSM_UNIT_NS,
		.flags = OSM_SELF_TIMED | OSM_ONE_BY_ONE,
		.suites = OSM_SUITES_ALL,
		.params = thread_params,
		.setup = thread_setup,
		.run = thread_create_run,
		.teardown = thread_teardown,
	},
	{
		.name = "thread_join",
		.desc = "pthread_create + pthread_join of a thread that returns at once",
		.unit = OSM_UNIT_NS,
		.flags = OSM_SELF_TIMED | OSM_ONE_BY_ONE,
		.suites = OSM_SUITE_STANDARD | OSM_SUITE_FULL,
		.params = thread_params,
		.setup = thread_setup,
		.run = thread_join_run,
		.teardown = thread_teardown,
	},
	{
		.name = "thread_child",
		.desc = "pthread_create until the new thread's first instruction",
		.unit = OSM_UNIT_NS,
		.flags = OSM_SELF_TIMED | OSM_ONE_BY_ONE,
		.suites = OSM_SUITE_STANDARD | OSM_SUITE_FULL,
		.params = thread_params,
		.setup = thread_setup,
		.run = thread_child_run,
		.teardown = thread_teardown,
	},
};

const struct osm_family osm_family_task = {
	"task", "processes and threads: fork (by parent size, concurrent, migrating), vfork, spawn, exec, threads",
	task_benches, ARRAY_SIZE(task_benches),
};
