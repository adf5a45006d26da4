/* file_cold.c - file.seq_read_cold and file.rand_read_cold: one block of a
 * file read past the page cache, timed alone. Method: docs/methods/file.md,
 * "Cold reads".
 *
 * Setup writes a file of file_size bytes of real data in the target
 * directory (free space checked first) and syncs it, or takes an existing
 * file (file=PATH: never written, never removed); then the cache bypass is
 * chosen and verified (file_bypass.c). Each operation reads one block:
 * seq reads blocks 0, 1, 2, ... wrapping at the end of the file; rand reads
 * every block once per pass in a fresh pseudo-random order. Only the
 * pread() is between the two clock reads; the eviction and its check are
 * outside (OSM_SELF_TIMED, OSM_ONE_BY_ONE). */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../bench.h"
#include "file.h"

struct cold_state {
	struct osm_file_target t;
	struct osm_file_reader r;
	int have_reader;
	char path[OSM_FILE_PATH]; /* the file read */
	int made;                 /* 1: ours, removed in teardown */
	char dir[OSM_FILE_PATH];  /* file=PATH: its directory, the target */
};

int osm_file_cold_block(struct osm_ctx *ctx, size_t *block)
{
	*block = (size_t)osm_param_int(ctx, "block");
	if (*block % 512)
		return osm_fail(ctx, OSM_ERROR, "block=%zu is not a multiple of 512 bytes", *block);
	return OSM_OK;
}

int osm_file_cold_make(struct osm_ctx *ctx, const struct osm_file_target *t, const char *name, int64_t size,
		       int copies, char *path, size_t len)
{
	int64_t free_bytes = osm_file_free_bytes(t);
	int64_t need = size * copies;
	if (free_bytes >= 0 && need > free_bytes)
		return osm_fail(ctx, OSM_ERROR, "not enough free space in %s: the file(s) need %lld MiB (%d x %lld "
				"bytes) and %lld MiB are free; lower file_size or use --param dir= elsewhere",
				t->dir, (long long)(need >> 20), copies, (long long)size, (long long)(free_bytes >> 20));
	if (osm_file_path(t, name, path, len))
		return osm_fail(ctx, OSM_ERROR, "%s/%s: path too long", t->work, name);
	int fd = open(path, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0)
		return osm_fail(ctx, OSM_ERROR, "create %s: %s", path, strerror(errno));
	int st = osm_file_fill(ctx, fd, size, "write of the file to read");
	/* On the device, and clean: posix_fadvise(DONTNEED) drops clean pages only. */
	if (st == OSM_OK && fsync(fd)) {
		int e = errno;
		st = osm_fail(ctx, OSM_ERROR, "fsync of %s: %s (%s)", path, strerror(e), osm_file_errname(e));
	}
	close(fd);
	return st;
}

void osm_file_cold_teardown(struct osm_ctx *ctx)
{
	struct cold_state *s = ctx->priv;
	if (!s)
		return;
	if (s->have_reader)
		osm_file_reader_close(&s->r);
	if (s->made)
		unlink(s->path);
	free(s);
	ctx->priv = NULL;
}

/* The target of file=PATH is the file's directory: the `dir` param is
 * pointed at it for osm_file_target() (and back), unless dir= was given,
 * which must then be on the file's file system. */
static int existing_target(struct osm_ctx *ctx, struct cold_state *s, const char *file, struct stat *st)
{
	/* its directory is the target: the limit of dir= */
	if (osm_file_realpath(ctx, "file", file, s->path) != OSM_OK)
		return OSM_ERROR;
	if (stat(s->path, st))
		return osm_fail(ctx, OSM_ERROR, "file=%s: %s", s->path, strerror(errno));
	if (!S_ISREG(st->st_mode))
		return osm_fail(ctx, OSM_ERROR, "file=%s: not a regular file", s->path);
	const char *dir = osm_param_str(ctx, "dir");
	if (dir && *dir) {
		struct stat ds;
		if (stat(dir, &ds) == 0 && ds.st_dev != st->st_dev)
			return osm_fail(ctx, OSM_ERROR, "file=%s is not on the file system of dir=%s: leave dir= out "
					"(the file's directory is described then)", s->path, dir);
		return osm_file_target(ctx, &s->t);
	}
	char copy[OSM_FILE_PATH]; /* s->path and its directory fit: the buffers are the same size */
	memcpy(copy, s->path, sizeof(copy));
	snprintf(s->dir, sizeof(s->dir), "%s", dirname(copy));
	int i = 0;
	while (strcmp(ctx->bench->params[i].name, "dir"))
		i++;
	const char *saved = ctx->params[i].s;
	ctx->params[i].s = s->dir;
	int rc = osm_file_target(ctx, &s->t);
	ctx->params[i].s = saved;
	return rc;
}

/* The file to read: file=PATH, or a new one of file_size bytes. */
static int cold_file(struct osm_ctx *ctx, struct cold_state *s, size_t block, int64_t *size)
{
	const char *file = osm_param_str(ctx, "file");
	if (file && *file) {
		struct stat st;
		int rc = existing_target(ctx, s, file, &st);
		if (rc != OSM_OK)
			return rc;
		if (st.st_size < (off_t)block)
			return osm_fail(ctx, OSM_ERROR, "file=%s has %lld bytes, less than one block (block=%zu)",
					s->path, (long long)st.st_size, block);
		*size = (int64_t)st.st_size;
		osm_add_info(ctx, "file", "%s", s->path);
		if (s->t.in_memory)
			return osm_fail(ctx, OSM_SKIP, "file=%s is on %s, which lives in memory: there is no cold read; "
					"use a file on a disk file system", s->path, s->t.fstype);
		return OSM_OK;
	}
	*size = osm_param_int(ctx, "file_size");
	if ((int64_t)block > *size)
		return osm_fail(ctx, OSM_ERROR, "block=%zu is larger than file_size=%lld", block, (long long)*size);
	int rc = osm_file_target(ctx, &s->t);
	if (rc == OSM_OK)
		rc = osm_file_bypass_possible(ctx, &s->t);
	if (rc != OSM_OK)
		return rc;
	s->made = 1; /* from here on: removed in teardown */
	return osm_file_cold_make(ctx, &s->t, "cold.dat", *size, 1, s->path, sizeof(s->path));
}

int osm_file_cold_setup(struct osm_ctx *ctx)
{
	struct cold_state *s = calloc(1, sizeof(*s));
	if (!s)
		return osm_fail(ctx, OSM_ERROR, "out of memory");
	ctx->priv = s;
	size_t block;
	int64_t size = 0;
	int rc = osm_file_cold_block(ctx, &block);
	if (rc == OSM_OK)
		rc = cold_file(ctx, s, block, &size);
	struct osm_file_bypass bp;
	if (rc == OSM_OK)
		rc = osm_file_bypass_open(ctx, &s->t, s->path, size, block,
					  (enum osm_file_method)osm_param_int(ctx, "method"), 1, &bp);
	if (rc == OSM_OK) {
		int rand = !strcmp(ctx->bench->name, "rand_read_cold");
		osm_file_reader_init(&s->r, &bp, block, 0, (uint64_t)size / block, rand, 1);
		s->have_reader = 1;
	}
	if (rc != OSM_OK) {
		osm_file_cold_teardown(ctx);
		return rc;
	}
	osm_add_extra(ctx, "block_bytes", (double)block);
	osm_add_extra(ctx, "file_bytes", (double)size);
	return OSM_OK;
}

int osm_file_cold_run(struct osm_ctx *ctx, uint64_t batch)
{
	struct cold_state *s = ctx->priv;
	char msg[OSM_MSG_LEN - 64]; /* the reader's words, no path (file_contention.c, SLOT_MSG) */
	double total = 0;
	for (uint64_t i = 0; i < batch; i++) {
		double ns = osm_file_reader_read(&s->r, ctx, msg, sizeof(msg));
		if (ns < 0)
			return osm_fail(ctx, OSM_ERROR, "%s: %s", s->path, msg);
		total += ns;
	}
	ctx->self_ns = total;
	/* MB/s (10^6 bytes) of the reads so far: block / mean read time. */
	if (s->r.ns > 0)
		osm_add_extra(ctx, "mb_per_s", (double)s->r.block * (double)s->r.reads / s->r.ns * 1e3);
	return OSM_OK;
}
