/* task.h - what the parts of the task family (task.c, task_fork.c,
 * task_spawn.c, task_thread.c) share; not for use outside bench/task*.c. */
#ifndef OSM_BENCH_TASK_H
#define OSM_BENCH_TASK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../bench.h"

#define MAX_PROCS 256 /* processes forking at once, at most */
#define MSG 200       /* one failure message */

/* task.c: describes a child's wait status that is not a clean exit 0;
 * waitpid() retried on EINTR (0, or -1 with errno). */
void task_bad_status(char *buf, size_t len, const char *who, int status);
int task_wait_child(pid_t pid, int *status);

/* task_fork.c: task.fork, task.fork_exit, task.fork_child */
void task_fork_teardown(struct osm_ctx *ctx);
int task_fork_setup(struct osm_ctx *ctx);
int task_fork_exit_setup(struct osm_ctx *ctx);
int task_fork_child_setup(struct osm_ctx *ctx);
int task_fork_run(struct osm_ctx *ctx, uint64_t batch);

/* task_spawn.c: task.vfork, task.posix_spawn, task.fork_exec */
int task_spawn_setup(struct osm_ctx *ctx);
void task_plain_teardown(struct osm_ctx *ctx);
int task_vfork_setup(struct osm_ctx *ctx);
int task_vfork_run(struct osm_ctx *ctx, uint64_t batch);
int task_posix_spawn_run(struct osm_ctx *ctx, uint64_t batch);
int task_fork_exec_run(struct osm_ctx *ctx, uint64_t batch);

/* task_thread.c: task.thread_create, task.thread_join, task.thread_child */
int task_thread_setup(struct osm_ctx *ctx);
void task_thread_teardown(struct osm_ctx *ctx);
int task_thread_create_run(struct osm_ctx *ctx, uint64_t batch);
int task_thread_join_run(struct osm_ctx *ctx, uint64_t batch);
int task_thread_child_run(struct osm_ctx *ctx, uint64_t batch);

#endif
