/* procs.h - helpers for benchmarks with more than one party (task.*,
 * ctxsw.*): shared memory, futexes, a futex start barrier, the set-up every
 * long-lived child runs first, and the memory the machine can spare.
 *
 * The rules they implement (DESIGN 4.4, 10):
 *  - no child outlives the probe: every long-lived child is registered with
 *    osm_cleanup_track_child() (killed and reaped on every exit path of the
 *    probe, signals included) and asks for SIGKILL when its parent dies
 *    (PR_SET_PDEATHSIG), which covers a probe killed by SIGKILL;
 *  - a child never runs the probe's cleanup handler: a forked child inherits
 *    the handler and a copy of the undo stack, and running it would kill the
 *    parent's other children, remove the parent's work directory and write
 *    an `end` record into the parent's output;
 *  - a child never returns into the harness and never calls exit(): it ends
 *    with _exit(), so no stdio buffer or atexit handler runs twice. */
#ifndef OSM_PROCS_H
#define OSM_PROCS_H

#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* Zeroed MAP_SHARED | MAP_ANONYMOUS memory (shared with forked children),
 * or NULL with errno. */
void *osm_shared_alloc(size_t len);
void osm_shared_free(void *p, size_t len);

/* The long-lived children of one benchmark, killed (SIGKILL) and reaped on
 * every exit path: one entry on the cleanup stack for all of them, however
 * many (the stack has room for 64 entries, a ring or a many-CPU machine can
 * need more children). The undo action runs in a signal handler too: it
 * only calls kill() and waitpid(). */
#define OSM_MAX_CHILDREN 1024

struct osm_children {
	pid_t pid[OSM_MAX_CHILDREN]; /* 0: reaped already (never killed: the pid may be reused) */
	volatile sig_atomic_t n;     /* entries used; written after pid[n] */
	int handle;                  /* cleanup stack entry, -1 until the first child */
};

void osm_children_init(struct osm_children *c);
/* Registers a child the moment fork() returned it. Returns 0, or -1 when
 * it cannot be registered (the caller must kill and reap it itself). */
int osm_children_add(struct osm_children *c, pid_t pid);
/* If one of the children has exited: reaps it, returns 1 and its wait
 * status; else 0. */
int osm_children_reap_dead(struct osm_children *c, pid_t *pid, int *status);
/* Kills and reaps every child still there and drops the cleanup entry. */
void osm_children_kill(struct osm_children *c);

/* First thing a forked child that lives longer than an instant does:
 * default dispositions for the signals the probe handles, SIGKILL when the
 * parent dies, and _exit(0) at once if `parent` already died (the
 * PDEATHSIG race). Returns nothing; never fails. */
void osm_child_init(pid_t parent);

/* futex(2) on a 32-bit word. `shared` = 0 uses FUTEX_PRIVATE_FLAG (threads of
 * one process), 1 a shared futex (processes sharing a MAP_SHARED page).
 * wait returns 0 (woken, or the value had already changed) or -1 with errno
 * (ETIMEDOUT after `timeout`, a relative time; NULL waits for ever). */
int osm_futex_wait(atomic_uint *addr, unsigned val, int shared, const struct timespec *timeout);
int osm_futex_wake(atomic_uint *addr, int n, int shared);

/* A start barrier for n parties (perf bench's idea), in memory every party
 * sees (osm_shared_alloc for processes). Split into arrive and await so the
 * caller can wait in slices and check that its partners are still alive:
 *   gen = osm_barrier_arrive(b);
 *   while (osm_barrier_await(b, gen, 100)) { if a partner died: give up }
 * The last party to arrive releases everyone. Generation counting makes it
 * reusable at once: nobody leaves before the count is reset. */
struct osm_barrier {
	atomic_uint count; /* parties arrived in this generation */
	atomic_uint gen;   /* bumped by the last arrival; the futex word */
	unsigned n;        /* parties */
	int shared;        /* 1: processes (shared futex) */
};

void osm_barrier_init(struct osm_barrier *b, unsigned n, int shared);
/* Returns the generation to pass to osm_barrier_await. */
unsigned osm_barrier_arrive(struct osm_barrier *b);
/* 0 once the barrier of generation `gen` has opened, -1 (errno ETIMEDOUT)
 * after timeout_ms; call again to keep waiting. */
int osm_barrier_await(struct osm_barrier *b, unsigned gen, int timeout_ms);

/* Bytes of memory this process can use without pushing the machine into
 * reclaim or the OOM killer: MemAvailable, lowered to the headroom under
 * the cgroup v2 memory.max of this process when there is one. -1 when
 * neither can be read. */
int64_t osm_mem_available(void);

/* Memory-map entries this process has now (lines of /proc/self/maps), and
 * the system limit (vm.max_map_count); -1 when unreadable. */
int64_t osm_map_count(void);
int64_t osm_max_map_count(void);

/* Full path of the static exec helper (osmeter-exec-helper) installed next
 * to this probe (/proc/self/exe). Returns 0, or -1 when it is not there. */
int osm_exec_helper_path(char *buf, size_t len);

#endif
