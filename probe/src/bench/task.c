/* task.c - task.*: the family's table and what its parts share. Creating processes and threads (lmbench lat_proc,
 * LEBench fork / big fork / huge fork / thread create rows, and the fork
 * study: fork cost against the parent's memory, alone and concurrently on
 * every CPU, with and without a CPU migration before the fork).
 * Method: docs/methods/task.md
 *
 * Parts: task_fork.c (task.fork, task.fork_exit, task.fork_child: the fork
 * study), task_spawn.c (task.vfork, task.posix_spawn, task.fork_exec),
 * task_thread.c (task.thread_*); task.h declares what this table uses.
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
#include "task.h"

#include <errno.h>
#include <stdio.h>
#include <sys/wait.h>

#include "../bench.h"
#include "../compiler.h"

/* ---- shared by the parts ---------------------------------------------- */

/* Describe a child's wait status that is not a clean exit 0. */
void task_bad_status(char *buf, size_t len, const char *who, int status)
{
	if (WIFSIGNALED(status))
		snprintf(buf, len, "%s was killed by signal %d", who, WTERMSIG(status));
	else
		snprintf(buf, len, "%s exited with status %d", who, WEXITSTATUS(status));
}

int task_wait_child(pid_t pid, int *status)
{
	while (waitpid(pid, status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return 0;
}

/* ---- the table -------------------------------------------------------- */

static const char *const placements[] = {"same_cpu", "cross_cpu", NULL};

/* Shared by task.fork, task.fork_exit and task.fork_child. */
static const struct osm_param fork_params[] = {
	{.name = "touched_mib", .type = OSM_P_INT, .def = 0, .min = 0, .max = 1048576,
	 .help = "MiB the parent maps and writes before forking (the fork study's axis)"},
	{.name = "thp", .type = OSM_P_INT, .def = 0, .min = 0, .max = 2,
	 .help = "1: madvise(MADV_HUGEPAGE) the touched memory; 0: MADV_NOHUGEPAGE; 2: no madvise, the system's "
		 "THP setting decides"},
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
		.setup = task_fork_setup,
		.run = task_fork_run,
		.teardown = task_fork_teardown,
	},
	{
		.name = "fork_exit",
		.desc = "fork + child _exit + waitpid, parent's view (lmbench fork+exit)",
		.unit = OSM_UNIT_NS,
		.flags = OSM_SELF_TIMED | OSM_ONE_BY_ONE | OSM_SELF_COUNTED,
		.suites = OSM_SUITES_ALL,
		.params = fork_params,
		.setup = task_fork_exit_setup,
		.run = task_fork_run,
		.teardown = task_fork_teardown,
	},
	{
		.name = "fork_child",
		.desc = "fork() until the child's first instruction, stamped through shared memory",
		.unit = OSM_UNIT_NS,
		.flags = OSM_SELF_TIMED | OSM_ONE_BY_ONE | OSM_SELF_COUNTED,
		.suites = OSM_SUITE_STANDARD | OSM_SUITE_FULL,
		.params = fork_params,
		.sweep = "vmas=0;vmas=6000;vmas=12000",
		.setup = task_fork_child_setup,
		.run = task_fork_run,
		.teardown = task_fork_teardown,
	},
	{
		.name = "vfork",
		.desc = "vfork + child _exit + waitpid",
		.unit = OSM_UNIT_NS,
		.flags = OSM_SELF_TIMED | OSM_ONE_BY_ONE,
		.suites = OSM_SUITE_STANDARD | OSM_SUITE_FULL,
		.setup = task_vfork_setup,
		.run = task_vfork_run,
	},
	{
		.name = "posix_spawn",
		.desc = "posix_spawn of a static do-nothing program + waitpid",
		.unit = OSM_UNIT_NS,
		.flags = OSM_SELF_TIMED | OSM_ONE_BY_ONE,
		.suites = OSM_SUITE_STANDARD | OSM_SUITE_FULL,
		.setup = task_spawn_setup,
		.run = task_posix_spawn_run,
		.teardown = task_plain_teardown,
	},
	{
		.name = "fork_exec",
		.desc = "fork + execve of a static do-nothing program + waitpid",
		.unit = OSM_UNIT_NS,
		.flags = OSM_SELF_TIMED | OSM_ONE_BY_ONE,
		.suites = OSM_SUITES_ALL,
		.setup = task_spawn_setup,
		.run = task_fork_exec_run,
		.teardown = task_plain_teardown,
	},
	{
		.name = "thread_create",
		.desc = "pthread_create until it returns; join off the clock",
		.unit = OSM_UNIT_NS,
		.flags = OSM_SELF_TIMED | OSM_ONE_BY_ONE | OSM_SELF_COUNTED,
		.suites = OSM_SUITES_ALL,
		.params = thread_params,
		.setup = task_thread_setup,
		.run = task_thread_create_run,
		.teardown = task_thread_teardown,
	},
	{
		.name = "thread_join",
		.desc = "pthread_create + pthread_join of a thread that returns at once",
		.unit = OSM_UNIT_NS,
		.flags = OSM_SELF_TIMED | OSM_ONE_BY_ONE,
		.suites = OSM_SUITE_STANDARD | OSM_SUITE_FULL,
		.params = thread_params,
		.setup = task_thread_setup,
		.run = task_thread_join_run,
		.teardown = task_thread_teardown,
	},
	{
		.name = "thread_child",
		.desc = "pthread_create until the new thread's first instruction",
		.unit = OSM_UNIT_NS,
		.flags = OSM_SELF_TIMED | OSM_ONE_BY_ONE | OSM_SELF_COUNTED,
		.suites = OSM_SUITE_STANDARD | OSM_SUITE_FULL,
		.params = thread_params,
		.setup = task_thread_setup,
		.run = task_thread_child_run,
		.teardown = task_thread_teardown,
	},
};

const struct osm_family osm_family_task = {
	"task", "processes and threads: fork (by parent size, concurrent, migrating), vfork, spawn, exec, threads",
	task_benches, ARRAY_SIZE(task_benches),
};
