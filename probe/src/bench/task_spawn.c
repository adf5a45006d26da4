/* task_spawn.c - task.vfork, task.posix_spawn and task.fork_exec: a child
 * that exits at once, timed until waitpid() returns. See task.c. */
#include "task.h"

#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../bench.h"
#include "../clock.h"
#include "../compiler.h"
#include "../procs.h"

/* ---- vfork, posix_spawn, fork + exec ---------------------------------- */

struct spawn_state {
	char helper[512];
};

/* An empty environment: the cost must not depend on the caller's. */
static char *const empty_env[] = {NULL};

int task_spawn_setup(struct osm_ctx *ctx)
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
	if (e == 0 && task_wait_child(pid, &status) == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return OSM_OK;
	if (e == EAGAIN || e == ENOMEM)
		return OSM_OK;
	char what[64];
	if (e)
		snprintf(what, sizeof(what), "%s", strerror(e));
	else
		task_bad_status(what, sizeof(what), "it", status);
	osm_fail(ctx, OSM_SKIP, "cannot execute %s here: %s", s->helper, what);
	free(s);
	ctx->priv = NULL;
	return OSM_SKIP;
}

void task_plain_teardown(struct osm_ctx *ctx)
{
	free(ctx->priv);
	ctx->priv = NULL;
}

int task_vfork_setup(struct osm_ctx *ctx)
{
	ctx->placement = "same_cpu";
	return OSM_OK;
}

static int reap_ok(struct osm_ctx *ctx, pid_t pid, const char *who)
{
	int status;
	char msg[MSG];
	if (task_wait_child(pid, &status))
		return osm_fail_errno(ctx, "waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		task_bad_status(msg, sizeof(msg), who, status);
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

int task_vfork_run(struct osm_ctx *ctx, uint64_t batch)
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

int task_posix_spawn_run(struct osm_ctx *ctx, uint64_t batch)
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

int task_fork_exec_run(struct osm_ctx *ctx, uint64_t batch)
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
