/* file_cache.c - file.cache_sweep: one point of the page-cache curve, the
 * re-read time per block of a file of `size` bytes. Method:
 * docs/methods/file.md, "file.cache_sweep".
 *
 * The file "cache_sweep.dat" in the target's work directory is kept across
 * the instances of one probe run: an instance with a larger size extends
 * it with real data ('a's, never a hole), an instance with a smaller size
 * reads only its first `size` bytes. What is written is fdatasync'ed, in
 * steps of FLUSH_BYTES, so its pages are clean and as evictable as any
 * cached file (and dirty pages never fill a small memory cgroup). Free disk
 * is checked first: a size that does not fit is a skip, as any size the
 * machine cannot hold (DESIGN 4.7).
 *
 * Setup reads the first `size` bytes once, untimed. run(ctx, batch) then
 * pread()s `batch` blocks of `block` bytes in file order from where the
 * last batch stopped, wrapping at `size`, timed by the harness: the value
 * is ns per block. Whether a block comes from memory or from the device
 * depends on what the page cache kept of the file; the front end
 * (osmeter.pagecache) reads the knee off the curve of several sizes.
 *
 * Extras: size_bytes, block_bytes; resident_fraction (mincore() of the
 * first `size` bytes at the end: the share in the page cache); mb_per_s
 * and passes (the sampled blocks' MB/s and how many passes over the file
 * they make, from the benchmark's own clock around the sampled batches:
 * ctx->counting is 1 exactly then); mem_available_bytes (MemAvailable of
 * /proc/meminfo at setup) and cgroup_headroom_bytes (limit - usage of the
 * probe's memory cgroup at setup, -1 with no limit). Extras set in
 * teardown reach the result: the harness calls it before the record is
 * written (harness.c osm_measure, main.c emit_measurement). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../bench.h"
#include "../clock.h"
#include "../compiler.h"
#include "../sysmem.h"
#include "file.h"

#define FILE_NAME "cache_sweep.dat"
#define FILL_CHUNK ((size_t)1 << 20)
#define FLUSH_BYTES ((int64_t)64 << 20) /* fdatasync after this much new data */
#define DISK_RESERVE ((int64_t)128 << 20) /* left free on the target's file system */
#define ALIGN 4096

/* The file, kept across the instances of one probe run (removed at exit
 * with the work directory). */
static char kept_path[OSM_FILE_PATH + 32]; /* open_file's path, the same size: copied whole */

struct cache_state {
	int fd;
	int64_t size, block, pos;
	char *buf;
	uint64_t sampled_blocks;
	double sampled_ns;
	uint64_t sink;
};

static void free_state(struct cache_state *s)
{
	if (s->fd >= 0)
		close(s->fd);
	free(s->buf);
	free(s);
}

/* Real data from offset `from` to `to`, flushed in steps. */
static int extend(struct osm_ctx *ctx, int fd, int64_t from, int64_t to)
{
	char *chunk = malloc(FILL_CHUNK);
	if (!chunk)
		return osm_fail(ctx, OSM_ERROR, "out of memory");
	memset(chunk, 'a', FILL_CHUNK);
	int st = OSM_OK;
	if (lseek(fd, from, SEEK_SET) < 0)
		st = osm_fail_errno(ctx, "lseek");
	int64_t done = from, flushed = from;
	while (st == OSM_OK && done < to) {
		size_t n = to - done < (int64_t)FILL_CHUNK ? (size_t)(to - done) : FILL_CHUNK;
		if (osm_file_write_all(fd, chunk, n) < 0) {
			int e = errno;
			st = osm_fail(ctx, OSM_ERROR, "write %s: %s (%s) after %lld of %lld bytes", FILE_NAME,
				      strerror(e), osm_file_errname(e), (long long)done, (long long)to);
			break;
		}
		done += (int64_t)n;
		if (done - flushed >= FLUSH_BYTES || done == to) {
			if (fdatasync(fd)) {
				int e = errno;
				st = osm_fail(ctx, OSM_ERROR, "fdatasync %s: %s (%s)", FILE_NAME, strerror(e),
					      osm_file_errname(e));
			}
			flushed = done;
		}
	}
	free(chunk);
	return st;
}

/* Opens (and if needed grows) the kept file in t's work directory. */
static int open_file(struct osm_ctx *ctx, const struct osm_file_target *t, struct cache_state *s)
{
	char path[sizeof(kept_path)];
	if (osm_file_path(t, FILE_NAME, path, sizeof(path)))
		return osm_fail(ctx, OSM_ERROR, "dir=%s: path too long", t->dir);
	if (strcmp(path, kept_path)) { /* another directory: the old file goes now, not at exit */
		if (kept_path[0])
			unlink(kept_path);
		snprintf(kept_path, sizeof(kept_path), "%s", path);
	}
	s->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (s->fd < 0)
		return osm_fail(ctx, OSM_ERROR, "cannot create %s: %s", path, strerror(errno));
	struct stat st;
	if (fstat(s->fd, &st))
		return osm_fail_errno(ctx, "fstat");
	int64_t have = st.st_size;
	if (have >= s->size)
		return OSM_OK;
	int64_t need = s->size - have, free_b = osm_file_free_bytes(t);
	if (free_b >= 0 && need + DISK_RESERVE > free_b)
		return osm_fail(ctx, OSM_SKIP,
				"size=%lld needs %lld MiB more on %s, which has %lld MiB free (%lld MiB are left "
				"free): choose a smaller size or another dir=",
				(long long)s->size, (long long)(need >> 20), t->dir, (long long)(free_b >> 20),
				(long long)(DISK_RESERVE >> 20));
	return extend(ctx, s->fd, have, s->size);
}

/* pread of exactly len bytes at off; -1 with errno (EIO for a short file). */
static int read_block(int fd, char *buf, int64_t len, int64_t off)
{
	int64_t got = 0;
	while (got < len) {
		ssize_t r = pread(fd, buf + got, (size_t)(len - got), off + got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0) {
			errno = EIO;
			return -1;
		}
		got += r;
	}
	return 0;
}

static int check_params(struct osm_ctx *ctx, int64_t size, int64_t block)
{
	if (block % 512)
		return osm_fail(ctx, OSM_ERROR, "block=%lld is not a multiple of 512", (long long)block);
	if (block > size)
		return osm_fail(ctx, OSM_ERROR, "block=%lld is larger than size=%lld: choose block <= size",
				(long long)block, (long long)size);
	if (size % block)
		return osm_fail(ctx, OSM_ERROR,
				"size=%lld is not a multiple of block=%lld: every block of a pass must be whole",
				(long long)size, (long long)block);
	return OSM_OK;
}

int osm_file_cache_setup(struct osm_ctx *ctx)
{
	int64_t size = osm_param_int(ctx, "size"), block = osm_param_int(ctx, "block");
	int st = check_params(ctx, size, block);
	if (st != OSM_OK)
		return st;
	struct osm_file_target t;
	if ((st = osm_file_target(ctx, &t)) != OSM_OK)
		return st;
	if (t.in_memory)
		return osm_fail(ctx, OSM_SKIP,
				"dir=%s is on %s: a file there lives in memory and is never read from a device, so "
				"the page cache has no size to find; choose a directory on a disk (--param dir=)",
				t.dir, t.fstype);
	struct cache_state *s = calloc(1, sizeof(*s));
	if (!s)
		return osm_fail(ctx, OSM_ERROR, "out of memory");
	s->fd = -1;
	s->size = size;
	s->block = block;
	ctx->priv = s;
	if (posix_memalign((void **)&s->buf, ALIGN, (size_t)block)) {
		s->buf = NULL;
		st = osm_fail(ctx, OSM_ERROR, "out of memory for a block of %lld bytes", (long long)block);
	}
	osm_add_extra(ctx, "size_bytes", (double)size);
	osm_add_extra(ctx, "block_bytes", (double)block);
	osm_add_extra(ctx, "mem_available_bytes", (double)osm_meminfo_bytes("MemAvailable"));
	osm_add_extra(ctx, "cgroup_headroom_bytes", (double)osm_cgroup_headroom());
	if (st == OSM_OK)
		st = open_file(ctx, &t, s);
	for (int64_t off = 0; st == OSM_OK && off < size; off += block) /* the untimed first read */
		if (read_block(s->fd, s->buf, block, off))
			st = osm_fail(ctx, OSM_ERROR, "read %s: %s", FILE_NAME, strerror(errno));
	if (st != OSM_OK) {
		free_state(s);
		ctx->priv = NULL;
	}
	return st;
}

int osm_file_cache_run(struct osm_ctx *ctx, uint64_t batch)
{
	struct cache_state *s = ctx->priv;
	int sampled = ctx->counting; /* a sampled batch (not warm-up): its time goes into mb_per_s */
	uint64_t t0 = sampled ? osm_clock_start() : 0;
	for (uint64_t i = 0; i < batch; i++) {
		if (read_block(s->fd, s->buf, s->block, s->pos))
			return osm_fail(ctx, OSM_ERROR, "read %s at %lld: %s", FILE_NAME, (long long)s->pos,
					strerror(errno));
		s->sink += (unsigned char)s->buf[s->block - 1];
		s->pos += s->block;
		if (s->pos >= s->size)
			s->pos = 0;
	}
	OSM_KEEP(s->sink);
	if (sampled) {
		s->sampled_ns += osm_ticks_to_ns(osm_clock_stop() - t0);
		s->sampled_blocks += batch;
	}
	return OSM_OK;
}

/* Share of the file's first `size` bytes in the page cache, or -1. */
static double resident_fraction(const struct cache_state *s)
{
	long page = sysconf(_SC_PAGESIZE);
	if (page <= 0)
		return -1;
	size_t pages = (size_t)((s->size + page - 1) / page);
	void *map = mmap(NULL, (size_t)s->size, PROT_READ, MAP_SHARED, s->fd, 0);
	if (map == MAP_FAILED)
		return -1;
	unsigned char *vec = malloc(pages);
	double share = -1;
	if (vec && mincore(map, (size_t)s->size, vec) == 0) {
		size_t in = 0;
		for (size_t i = 0; i < pages; i++)
			in += vec[i] & 1;
		share = (double)in / (double)pages;
	}
	free(vec);
	munmap(map, (size_t)s->size);
	return share;
}

void osm_file_cache_teardown(struct osm_ctx *ctx)
{
	struct cache_state *s = ctx->priv;
	if (!s)
		return;
	osm_add_extra(ctx, "resident_fraction", resident_fraction(s));
	double bytes = (double)s->sampled_blocks * (double)s->block;
	osm_add_extra(ctx, "mb_per_s", s->sampled_ns > 0 ? bytes / s->sampled_ns * 1e3 : -1);
	osm_add_extra(ctx, "passes", bytes / (double)s->size);
	free_state(s);
	ctx->priv = NULL;
}
