/* syscall.c - syscall.*: the cost of entering the kernel (lmbench
 * lat_syscall, LEBench "getpid"). Method: docs/methods/syscall.md
 *
 * Traps avoided: glibc once cached getpid(), so syscall.null issues the raw
 * syscall(SYS_getpid); every return value is checked (a failing syscall is
 * an error record, never a fast figure) and consumed. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../bench.h"
#include "../cleanup.h"
#include "../compiler.h"

struct fd_state {
	int fd;
	char path[PATH_MAX]; /* catalog.c refuses a longer path parameter */
};

static int null_run(struct osm_ctx *ctx, uint64_t batch)
{
	(void)ctx;
	for (uint64_t i = 0; i < batch; i++)
		OSM_KEEP(syscall(SYS_getpid));
	return OSM_OK;
}

static int getuid_run(struct osm_ctx *ctx, uint64_t batch)
{
	(void)ctx;
	for (uint64_t i = 0; i < batch; i++)
		OSM_KEEP(getuid());
	return OSM_OK;
}

static int open_dev(struct osm_ctx *ctx, const char *path, int flags)
{
	struct fd_state *s = calloc(1, sizeof(*s));
	if (!s)
		return osm_fail(ctx, OSM_ERROR, "out of memory");
	s->fd = open(path, flags | O_CLOEXEC);
	if (s->fd < 0) {
		int e = errno;
		free(s);
		return osm_fail(ctx, OSM_SKIP, "cannot open %s: %s", path, strerror(e));
	}
	ctx->priv = s;
	return OSM_OK;
}

static void close_fd(struct osm_ctx *ctx)
{
	struct fd_state *s = ctx->priv;
	if (s && s->fd >= 0)
		close(s->fd);
	free(s);
	ctx->priv = NULL;
}

static int read_setup(struct osm_ctx *ctx) { return open_dev(ctx, "/dev/zero", O_RDONLY); }
static int write_setup(struct osm_ctx *ctx) { return open_dev(ctx, "/dev/null", O_WRONLY); }

static int read_run(struct osm_ctx *ctx, uint64_t batch)
{
	struct fd_state *s = ctx->priv;
	char c;
	for (uint64_t i = 0; i < batch; i++)
		if (read(s->fd, &c, 1) != 1)
			return osm_fail_errno(ctx, "read /dev/zero");
	OSM_KEEP(c);
	return OSM_OK;
}

static int write_run(struct osm_ctx *ctx, uint64_t batch)
{
	struct fd_state *s = ctx->priv;
	char c = 'x';
	for (uint64_t i = 0; i < batch; i++)
		if (write(s->fd, &c, 1) != 1)
			return osm_fail_errno(ctx, "write /dev/null");
	return OSM_OK;
}

/* open_close and stat work on `path`, or by default on a small file the probe
 * makes in its private work directory (removed at exit), so the figure does
 * not depend on what happens to exist under /etc. */
static int path_setup(struct osm_ctx *ctx)
{
	struct fd_state *s = calloc(1, sizeof(*s));
	if (!s)
		return osm_fail(ctx, OSM_ERROR, "out of memory");
	s->fd = -1;
	/* teardown() is not called when setup fails, so every failure below
	 * frees s itself. */
	int rc;
	const char *p = osm_param_str(ctx, "path");
	if (p && *p) {
		snprintf(s->path, sizeof(s->path), "%s", p);
	} else {
		if (osm_workfile("syscall-target", s->path, sizeof(s->path))) {
			rc = osm_fail(ctx, OSM_ERROR, "cannot make a file in the work directory (TMPDIR)");
			goto fail;
		}
		int fd = open(s->path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0 || write(fd, "osmeter\n", 8) != 8) {
			int e = errno;
			if (fd >= 0)
				close(fd);
			rc = osm_fail(ctx, OSM_ERROR, "cannot write %s: %s", s->path, strerror(e));
			goto fail;
		}
		close(fd);
	}
	struct stat st;
	if (stat(s->path, &st)) {
		rc = osm_fail(ctx, OSM_ERROR, "cannot stat %s: %s", s->path, strerror(errno));
		goto fail;
	}
	ctx->priv = s;
	return OSM_OK;
fail:
	free(s);
	return rc;
}

static int open_close_run(struct osm_ctx *ctx, uint64_t batch)
{
	struct fd_state *s = ctx->priv;
	for (uint64_t i = 0; i < batch; i++) {
		int fd = open(s->path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return osm_fail_errno(ctx, s->path);
		close(fd);
	}
	return OSM_OK;
}

static int stat_run(struct osm_ctx *ctx, uint64_t batch)
{
	struct fd_state *s = ctx->priv;
	struct stat st;
	for (uint64_t i = 0; i < batch; i++)
		if (stat(s->path, &st))
			return osm_fail_errno(ctx, s->path);
	OSM_KEEP(st.st_size);
	return OSM_OK;
}

static const struct osm_param path_params[] = {
	{.name = "path", .type = OSM_P_STR, .def_str = "",
	 .help = "file to use (default: a small file in the probe's temporary work directory)"},
	{0},
};

static const struct osm_bench syscall_benches[] = {
	{
		.name = "null",
		.desc = "null system call: raw syscall(SYS_getpid)",
		.unit = OSM_UNIT_NS,
		.suites = OSM_SUITES_ALL,
		.run = null_run,
	},
	{
		.name = "getuid",
		.desc = "getuid()",
		.unit = OSM_UNIT_NS,
		.suites = OSM_SUITES_ALL,
		.run = getuid_run,
	},
	{
		.name = "read",
		.desc = "read of 1 byte from /dev/zero",
		.unit = OSM_UNIT_NS,
		.suites = OSM_SUITES_ALL,
		.setup = read_setup,
		.run = read_run,
		.teardown = close_fd,
	},
	{
		.name = "write",
		.desc = "write of 1 byte to /dev/null",
		.unit = OSM_UNIT_NS,
		.suites = OSM_SUITES_ALL,
		.setup = write_setup,
		.run = write_run,
		.teardown = close_fd,
	},
	{
		.name = "open_close",
		.desc = "open(O_RDONLY) + close of an existing file",
		.unit = OSM_UNIT_NS,
		.suites = OSM_SUITES_ALL,
		.params = path_params,
		.setup = path_setup,
		.run = open_close_run,
		.teardown = close_fd,
	},
	{
		.name = "stat",
		.desc = "stat() of an existing file",
		.unit = OSM_UNIT_NS,
		.suites = OSM_SUITES_ALL,
		.params = path_params,
		.setup = path_setup,
		.run = stat_run,
		.teardown = close_fd,
	},
};

const struct osm_family osm_family_syscall = {
	"syscall", "entering the kernel: null call, ids, 1-byte I/O, open/close, stat",
	syscall_benches, ARRAY_SIZE(syscall_benches),
};
