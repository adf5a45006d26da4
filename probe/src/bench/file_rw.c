/* file_rw.c - file.read and file.write: one read() or write() of `size`
 * bytes at offset 0 of a file in the page cache (LEBench's read_test and
 * write_test, its eight file rows). Method: docs/methods/file.md, "file.read
 * and file.write".
 *
 * Setup: a new file of `size` bytes of real data ('a's) in the target's
 * work directory (osm_file_fill: a failure such as ENOSPC is an error naming
 * the errno, the file removed at once), written back once (fdatasync: the
 * samples do not start with setup's own writeback under way), read once so
 * every page is in the page cache (checked with mincore), then opened as
 * LEBench opens it: O_RDONLY for read, O_WRONLY for write (no O_TRUNC).
 *
 * fill=lebench writes the file as LEBench's program grows its own
 * (osm_file_fill_lebench): the same bytes, the page cache's folios as
 * LEBench's rows find them.
 *
 * One operation (OSM_SELF_TIMED, self-counted): untimed lseek(fd, 0,
 * SEEK_SET), or with open=per_call an untimed open() as LEBench's (closed
 * after the call, untimed); with buffer=malloc an untimed
 * malloc(size) (for write filled with 'a', as LEBench; for read left
 * untouched, as LEBench); then the clock pair around the one read()/write()
 * (and the fsync()/fdatasync() of sync=); then, untimed, free(). A short
 * read or write is an error with its reason. extra.minflt_per_call counts
 * the minor faults inside the clock pair (getrusage around it): the faults
 * of a fresh malloc'd destination buffer that LEBench's read includes. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "../bench.h"
#include "../clock.h"
#include "../compiler.h"
#include "../sysmem.h"
#include "file.h"

#define PAGE 4096
#define WARM_CHUNK ((size_t)1 << 20)

enum { SYNC_NONE = 0, SYNC_FSYNC = 1, SYNC_FDATASYNC = 2 };
enum { BUF_REUSED = 0, BUF_MALLOC = 1 };

struct rw_state {
	struct osm_file_target t;
	char path[OSM_FILE_PATH];
	int fd;
	int writing;
	int malloc_buf;       /* buffer=malloc */
	int open_per_call;    /* open=per_call: opened and closed around each call, as LEBench */
	int fill_lebench;     /* fill=lebench: the file grown as LEBench's (osm_file_fill_lebench) */
	int sync;             /* SYNC_* (write only) */
	size_t size;
	char *buf;            /* buffer=reused: touched (write: filled) in setup */
	uint64_t calls, minflt;
};

static void free_state(struct rw_state *s)
{
	if (s->fd >= 0)
		close(s->fd);
	if (s->path[0])
		unlink(s->path);
	free(s->buf);
	free(s);
}

void osm_file_rw_teardown(struct osm_ctx *ctx)
{
	if (ctx->priv)
		free_state(ctx->priv);
	ctx->priv = NULL;
}

/* Pages of fd's first `size` bytes in the page cache (mincore on a fresh
 * shared mapping), or -1 when that cannot be told (mmap refused: some FUSE
 * file systems). */
static int64_t resident_pages(int fd, size_t size)
{
	void *m = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return -1;
	size_t n = (size + PAGE - 1) / PAGE;
	unsigned char *vec = malloc(n);
	int64_t res = -1;
	if (vec && !mincore(m, size, vec)) {
		res = 0;
		for (size_t i = 0; i < n; i++)
			res += vec[i] & 1;
	}
	free(vec);
	munmap(m, size);
	return res;
}

/* Reads the whole file once (into the page cache) and checks it stayed. */
static int warm(struct osm_ctx *ctx, struct rw_state *s, int fd)
{
	char *chunk = malloc(WARM_CHUNK);
	if (!chunk)
		return osm_fail(ctx, OSM_ERROR, "out of memory");
	size_t off = 0;
	while (off < s->size) {
		ssize_t r = pread(fd, chunk, WARM_CHUNK, (off_t)off);
		if (r <= 0) {
			int e = errno;
			free(chunk);
			if (r == 0)
				return osm_fail(ctx, OSM_ERROR, "reading %s back: end of file after %zu of %zu bytes",
						s->path, off, s->size);
			return osm_fail(ctx, OSM_ERROR, "reading %s back: %s (%s)", s->path, strerror(e),
					osm_file_errname(e));
		}
		off += (size_t)r;
	}
	free(chunk);
	size_t pages = (s->size + PAGE - 1) / PAGE;
	int64_t res = resident_pages(fd, s->size);
	if (res >= 0 && (size_t)res < pages)
		return osm_fail(ctx, OSM_SKIP, "only %lld of the test file's %zu pages stay in the page cache "
				"(memory pressure?): a %s of a cached file cannot be measured; try a smaller size",
				(long long)res, pages, s->writing ? "write" : "read");
	return OSM_OK;
}

/* extra.folios: the page cache's folios over the file (null when
 * /proc/kpageflags cannot be read: not root). */
static void add_folios(struct osm_ctx *ctx, int fd, size_t size)
{
	int64_t n = osm_file_folios(fd, size);
	osm_add_extra(ctx, "folios", n < 0 ? NAN : (double)n);
}

/* The test file: created, filled, written back, read once, reopened as
 * LEBench opens it. */
static int make_file(struct osm_ctx *ctx, struct rw_state *s)
{
	static unsigned seq;
	char name[64]; /* fits by construction: "read" or "write", '.', 10 digits */
	snprintf(name, sizeof(name), "%s.%u", ctx->bench->name, ++seq);
	if (osm_file_path(&s->t, name, s->path, sizeof(s->path))) {
		s->path[0] = 0;
		return osm_fail(ctx, OSM_ERROR, "dir=%s: the work file's path is too long", s->t.dir);
	}
	int fd = open(s->path, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0) {
		int e = errno;
		osm_fail(ctx, OSM_ERROR, "cannot create %s: %s (%s)", s->path, strerror(e), osm_file_errname(e));
		s->path[0] = 0; /* not ours to unlink */
		return OSM_ERROR;
	}
	int st = s->fill_lebench ? osm_file_fill_lebench(ctx, fd, (int64_t)s->size, "write")
				 : osm_file_fill(ctx, fd, (int64_t)s->size, "write");
	if (st == OSM_OK && fdatasync(fd)) {
		int e = errno;
		st = osm_fail(ctx, OSM_ERROR, "fdatasync of the new test file: %s (%s)", strerror(e),
			      osm_file_errname(e));
	}
	if (st == OSM_OK)
		st = warm(ctx, s, fd);
	if (st == OSM_OK) /* what a write or read walks: fewer, larger folios cost less */
		add_folios(ctx, fd, s->size);
	close(fd);
	if (st != OSM_OK)
		return st;
	s->fd = open(s->path, (s->writing ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
	if (s->fd < 0) {
		int e = errno;
		return osm_fail(ctx, OSM_ERROR, "cannot open %s again: %s (%s)", s->path, strerror(e),
				osm_file_errname(e));
	}
	return OSM_OK;
}

/* The buffer and the file's cached pages must fit in memory: at most half
 * of MemAvailable and the memory cgroup's headroom (which the page cache is
 * charged to); a size that does not fit is a skip, never the OOM killer. */
static int check_memory(struct osm_ctx *ctx, size_t size)
{
	double need = 2.0 * (double)size;
	int64_t avail = osm_meminfo_bytes("MemAvailable"), cg = osm_cgroup_headroom();
	double limit = avail > 0 ? (double)avail / 2 : -1;
	const char *why = "half of MemAvailable";
	if (cg >= 0 && (limit < 0 || (double)cg < limit)) {
		limit = (double)cg;
		why = "the memory cgroup's headroom";
	}
	if (limit < 0 || need <= limit)
		return OSM_OK;
	return osm_fail(ctx, OSM_SKIP, "size=%zu needs %.1f MiB of memory (the buffer and the file's pages in the "
			"page cache) but %.1f MiB may be used here (%s): choose a smaller size", size,
			need / 1048576.0, limit / 1048576.0, why);
}

static int rw_setup(struct osm_ctx *ctx, int writing)
{
	struct rw_state *s = calloc(1, sizeof(*s));
	if (!s)
		return osm_fail(ctx, OSM_ERROR, "out of memory");
	s->fd = -1;
	s->writing = writing;
	s->size = (size_t)osm_param_int(ctx, "size");
	s->malloc_buf = osm_param_int(ctx, "buffer") == BUF_MALLOC;
	s->open_per_call = osm_param_int(ctx, "open") == 1;
	s->fill_lebench = osm_param_int(ctx, "fill") == 1;
	s->sync = writing ? (int)osm_param_int(ctx, "sync") : SYNC_NONE;
	int st = osm_file_target(ctx, &s->t);
	if (st == OSM_OK)
		st = check_memory(ctx, s->size);
	if (st == OSM_OK)
		st = make_file(ctx, s);
	if (st == OSM_OK && !s->malloc_buf) {
		/* One buffer, its pages faulted in here, outside every sample. */
		s->buf = malloc(s->size);
		if (!s->buf)
			st = osm_fail(ctx, OSM_ERROR, "out of memory for a %zu-byte buffer", s->size);
		else
			memset(s->buf, 'a', s->size);
	}
	if (st != OSM_OK) {
		free_state(s);
		return st;
	}
	osm_add_extra(ctx, "size_bytes", (double)s->size);
	ctx->priv = s;
	return OSM_OK;
}

int osm_file_read_setup(struct osm_ctx *ctx)
{
	return rw_setup(ctx, 0);
}

int osm_file_write_setup(struct osm_ctx *ctx)
{
	return rw_setup(ctx, 1);
}

static uint64_t minflt_now(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_THREAD, &ru))
		return 0;
	return (uint64_t)ru.ru_minflt;
}

/* The reason a timed call did not move the whole size. */
static int short_call(struct osm_ctx *ctx, struct rw_state *s, int fd, const char *buf, ssize_t n)
{
	if (!s->writing)
		return osm_fail(ctx, OSM_ERROR, "read: short read of %zd of %zu bytes from %s (the file shrank?)",
				n, s->size, s->path);
	/* Write the rest to learn why the file system stopped. */
	if (osm_file_write_all(fd, buf + n, s->size - (size_t)n) < 0) {
		int e = errno;
		return osm_fail(ctx, OSM_ERROR, "write: short write of %zd of %zu bytes to %s, then %s (%s)", n,
				s->size, s->path, strerror(e), osm_file_errname(e));
	}
	return osm_fail(ctx, OSM_ERROR, "write: short write of %zd of %zu bytes to %s (the rest then went "
			"through: interrupted?)", n, s->size, s->path);
}

static int sync_call(int fd, int how)
{
	if (how == SYNC_FSYNC)
		return fsync(fd);
	if (how == SYNC_FDATASYNC)
		return fdatasync(fd);
	return 0;
}

/* One operation: its time in *ns; OSM_OK, or OSM_ERROR with ctx->msg set. */
static int one_call(struct osm_ctx *ctx, struct rw_state *s, int fd, char *buf, double *ns)
{
	uint64_t f0 = minflt_now();
	osm_count_begin(ctx);
	uint64_t t0 = osm_clock_start();
	ssize_t n = s->writing ? write(fd, buf, s->size) : read(fd, buf, s->size);
	int sync_rc = n == (ssize_t)s->size ? sync_call(fd, s->sync) : 0;
	uint64_t t1 = osm_clock_stop();
	int e = errno;
	osm_count_end(ctx, n == (ssize_t)s->size && !sync_rc ? 1 : 0);
	uint64_t f1 = minflt_now();
	if (n < 0)
		return osm_fail(ctx, OSM_ERROR, "%s of %s: %s (%s)", s->writing ? "write" : "read", s->path,
				strerror(e), osm_file_errname(e));
	if (n != (ssize_t)s->size)
		return short_call(ctx, s, fd, buf, n);
	if (sync_rc)
		return osm_fail(ctx, OSM_ERROR, "%s of %s: %s (%s)", s->sync == SYNC_FSYNC ? "fsync" : "fdatasync",
				s->path, strerror(e), osm_file_errname(e));
	s->calls++;
	s->minflt += f1 - f0;
	*ns += osm_ticks_to_ns(t1 - t0);
	return OSM_OK;
}

/* The descriptor of one call: the standing one at offset 0, or with
 * open=per_call one opened for it (as LEBench: O_WRONLY or O_RDONLY, no
 * O_TRUNC; the caller closes it); -1 with ctx->msg set. */
static int call_fd(struct osm_ctx *ctx, struct rw_state *s)
{
	if (!s->open_per_call) {
		if (lseek(s->fd, 0, SEEK_SET) < 0) {
			osm_fail_errno(ctx, "lseek");
			return -1;
		}
		return s->fd;
	}
	int fd = open(s->path, (s->writing ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		osm_fail(ctx, OSM_ERROR, "cannot open %s: %s (%s)", s->path, strerror(e), osm_file_errname(e));
	}
	return fd;
}

static int rw_run(struct osm_ctx *ctx, uint64_t batch)
{
	struct rw_state *s = ctx->priv;
	double ns = 0;
	for (uint64_t b = 0; b < batch; b++) {
		int fd = call_fd(ctx, s);
		if (fd < 0)
			return OSM_ERROR;
		char *buf = s->buf;
		if (s->malloc_buf) {
			/* LEBench: malloc'd per call; for write filled with 'a',
			 * for read untouched (its faults fall in the read). */
			buf = malloc(s->size);
			if (!buf) {
				if (fd != s->fd)
					close(fd);
				return osm_fail(ctx, OSM_ERROR, "out of memory for a %zu-byte buffer", s->size);
			}
			if (s->writing)
				memset(buf, 'a', s->size);
			OSM_CLOBBER();
		}
		int st = one_call(ctx, s, fd, buf, &ns);
		if (fd != s->fd)
			close(fd);
		if (s->malloc_buf)
			free(buf);
		if (st != OSM_OK)
			return st;
	}
	ctx->self_ns = ns;
	osm_add_extra(ctx, "minflt_per_call", (double)s->minflt / (double)(s->calls ? s->calls : 1));
	return OSM_OK;
}

int osm_file_read_run(struct osm_ctx *ctx, uint64_t batch)
{
	return rw_run(ctx, batch);
}

int osm_file_write_run(struct osm_ctx *ctx, uint64_t batch)
{
	return rw_run(ctx, batch);
}
