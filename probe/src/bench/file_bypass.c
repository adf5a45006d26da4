/* file_bypass.c - reading past the page cache for the cold benchmarks
 * (file.h): O_DIRECT, or posix_fadvise(DONTNEED) of each block before it is
 * read, or dropping the page cache before each pass (root); each verified
 * on the file with a real read. And the reader that times one block at a
 * time (file.seq_read_cold, file.rand_read_cold, file.contention).
 * Method: docs/methods/file.md, "Cold reads".
 *
 * Verification: mincore() on a fresh read-only mapping of the file tells
 * which of its pages are in the page cache without mapping any in.
 *  - direct: the alignment the file system asks for (statx STATX_DIOALIGN,
 *    else 4096), then one aligned read; EINVAL, or a read that left the
 *    block's pages cached (a buffered fallback), means it is not usable.
 *  - fadvise / drop_caches: the file is made clean (fdatasync: DONTNEED
 *    drops clean pages only) and read-ahead turned off (POSIX_FADV_RANDOM);
 *    then the first block and the 32 pages after it are evicted, block 0 is
 *    read (its pages must show up, nothing after them: no read-ahead) and
 *    evicted again (its pages must be gone). Before every timed read the
 *    block's pages are checked once more: every read is a verified miss. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../bench.h"
#include "../clock.h"
#include "file.h"

/* A method's reason for not working: fixed words, numbers and strerror(),
 * no path: under REASON bytes by construction; three of them and their
 * "; method: " fit reasons[] in osm_file_bypass_open. */
#define REASON 200
#define RA_PAGES 32 /* pages after block 0 that read-ahead would have filled */

static const char *const info_names[] = {"auto", "o_direct", "fadvise_dontneed", "drop_caches"};

static size_t page_size(void)
{
	long p = sysconf(_SC_PAGESIZE);
	return p > 0 ? (size_t)p : 4096;
}

/* Pages of [off, off+len) of the file in the page cache, or -1 when that
 * cannot be told (mmap or mincore failed). */
static int64_t cached_pages(int fd, int64_t off, size_t len)
{
	size_t pg = page_size();
	int64_t start = off / (int64_t)pg * (int64_t)pg;
	size_t span = ((size_t)(off - start) + len + pg - 1) / pg * pg;
	void *m = mmap(NULL, span, PROT_READ, MAP_SHARED, fd, (off_t)start);
	if (m == MAP_FAILED)
		return -1;
	size_t n = span / pg;
	unsigned char small[512];
	unsigned char *vec = n <= sizeof(small) ? small : malloc(n);
	int64_t res = -1;
	if (vec && !mincore(m, span, vec)) {
		res = 0;
		for (size_t i = 0; i < n; i++)
			res += vec[i] & 1;
	}
	if (vec != small)
		free(vec);
	munmap(m, span);
	return res;
}

/* posix_fadvise(DONTNEED) of the whole pages that hold [off, off+len): a
 * partial page at either end would otherwise be left alone. 0 or an errno. */
static int evict_range(int fd, int64_t off, size_t len)
{
	int64_t pg = (int64_t)page_size();
	int64_t start = off / pg * pg, end = (off + (int64_t)len + pg - 1) / pg * pg;
	return posix_fadvise(fd, (off_t)start, (off_t)(end - start), POSIX_FADV_DONTNEED);
}

/* The whole page cache, dropped (clean pages; sync first). 0, or -1 with errno. */
static int drop_all(int dc_fd)
{
	sync();
	return pwrite(dc_fd, "1", 1, 0) == 1 ? 0 : -1;
}

void osm_file_bypass_close(struct osm_file_bypass *b)
{
	if (b->fd >= 0)
		close(b->fd);
	if (b->dc_fd >= 0)
		close(b->dc_fd);
	b->fd = b->dc_fd = -1;
}

/* The direct I/O alignment of `path`: offset/length and memory. 0, or -1
 * when the file system says this file cannot do direct I/O. */
static int dio_alignment(const char *path, size_t *off_align, size_t *mem_align, int *known)
{
	*off_align = *mem_align = 4096;
	*known = 0;
#if defined(__GLIBC__) && defined(STATX_DIOALIGN)
	struct statx sx;
	if (statx(AT_FDCWD, path, 0, STATX_DIOALIGN, &sx) == 0 && (sx.stx_mask & STATX_DIOALIGN)) {
		if (sx.stx_dio_offset_align == 0)
			return -1;
		*off_align = sx.stx_dio_offset_align;
		*mem_align = sx.stx_dio_mem_align ? sx.stx_dio_mem_align : 1;
		*known = 1;
	}
#else
	(void)path;
#endif
	return 0;
}

static void *aligned_buffer(size_t align, size_t len)
{
	void *p = NULL;
	if (align < page_size())
		align = page_size();
	if (posix_memalign(&p, align, len))
		return NULL;
	memset(p, 0, len); /* touched now: no first-touch fault inside a timed read */
	return p;
}

/* One read of block 0 (verification). OSM_OK, OSM_SKIP (EINVAL: reason in
 * why) or OSM_ERROR. */
static int read_block0(struct osm_ctx *ctx, struct osm_file_bypass *b, void *buf, size_t block, const char *path,
		       char *why, size_t wl)
{
	ssize_t n = pread(b->fd, buf, block, 0);
	if (n < 0 && errno == EINVAL) {
		snprintf(why, wl, "an aligned %zu-byte read failed with EINVAL", block);
		return OSM_SKIP;
	}
	if (n < 0)
		return osm_fail(ctx, OSM_ERROR, "read of %s: %s", path, strerror(errno));
	if ((size_t)n != block)
		return osm_fail(ctx, OSM_ERROR, "read of %s: %zd of %zu bytes (a short read)", path, n, block);
	return OSM_OK;
}

static int try_direct(struct osm_ctx *ctx, const char *path, size_t block, int explicit, struct osm_file_bypass *b,
		      char *why, size_t wl)
{
	size_t off_align, mem_align;
	int known;
	if (dio_alignment(path, &off_align, &mem_align, &known)) {
		snprintf(why, wl, "the file system does no direct I/O for this file (statx: alignment 0)");
		return OSM_SKIP;
	}
	if (block % off_align) {
		if (explicit)
			return osm_fail(ctx, OSM_ERROR, "method=direct: block=%zu is not a multiple of the direct I/O "
					"alignment here, %zu bytes (%s)", block, off_align,
					known ? "statx STATX_DIOALIGN" : "assumed: statx does not say");
		snprintf(why, wl, "block=%zu is not a multiple of the direct I/O alignment, %zu bytes", block,
			 off_align);
		return OSM_SKIP;
	}
	b->fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (b->fd < 0 && errno == EINVAL) {
		snprintf(why, wl, "open(O_DIRECT): %s (the file system refuses it)", strerror(errno));
		return OSM_SKIP;
	}
	if (b->fd < 0)
		return osm_fail(ctx, OSM_ERROR, "open %s: %s", path, strerror(errno));
	b->method = OSM_FILE_DIRECT;
	b->dio_align = off_align;
	b->mem_align = mem_align;
	void *buf = aligned_buffer(mem_align, block);
	if (!buf)
		return osm_fail(ctx, OSM_ERROR, "out of memory for a %zu-byte buffer", block);
	/* Block 0 out of the page cache first, so the check after the read
	 * means something (when DONTNEED works here). */
	int64_t before = evict_range(b->fd, 0, block) ? -1 : cached_pages(b->fd, 0, block);
	int st = read_block0(ctx, b, buf, block, path, why, wl);
	free(buf);
	if (st == OSM_OK && before == 0 && cached_pages(b->fd, 0, block) > 0) {
		snprintf(why, wl, "an O_DIRECT read filled the page cache (the file system fell back to buffered I/O)");
		st = OSM_SKIP;
	}
	return st;
}

/* fadvise or drop_caches: evict [0, len) as the method does. 0 or an errno. */
static int evict_as_method(struct osm_file_bypass *b, size_t len)
{
	if (b->method == OSM_FILE_DROP_CACHES)
		return drop_all(b->dc_fd) ? errno : 0;
	return evict_range(b->fd, 0, len);
}

/* The checks of the header comment for fadvise and drop_caches. */
static int verify_eviction(struct osm_ctx *ctx, struct osm_file_bypass *b, size_t block, const char *path,
			   char *why, size_t wl)
{
	const char *how = b->method == OSM_FILE_DROP_CACHES ? "drop_caches" : "posix_fadvise(DONTNEED)";
	size_t pg = page_size(), blk_end = (block + pg - 1) / pg * pg;
	size_t span = blk_end + RA_PAGES * pg;
	if ((int64_t)span > b->size)
		span = (size_t)b->size;
	int e = evict_as_method(b, span);
	if (e) {
		snprintf(why, wl, "%s: %s", how, strerror(e));
		return OSM_SKIP;
	}
	int64_t c = cached_pages(b->fd, 0, span);
	if (c != 0) {
		if (c < 0)
			snprintf(why, wl, "mincore failed (%s): the eviction cannot be verified", strerror(errno));
		else
			snprintf(why, wl, "%s left %lld of %zu pages cached", how, (long long)c, span / pg);
		return OSM_SKIP;
	}
	void *buf = aligned_buffer(pg, block);
	if (!buf)
		return osm_fail(ctx, OSM_ERROR, "out of memory for a %zu-byte buffer", block);
	int st = read_block0(ctx, b, buf, block, path, why, wl);
	free(buf);
	if (st != OSM_OK)
		return st;
	if (cached_pages(b->fd, 0, block) <= 0) {
		snprintf(why, wl, "mincore does not show the pages of a block just read: the eviction cannot be verified");
		return OSM_SKIP;
	}
	if ((int64_t)span > (int64_t)blk_end && (c = cached_pages(b->fd, (int64_t)blk_end, span - blk_end)) != 0) {
		snprintf(why, wl, "read-ahead still fills the page cache past the block read (%lld pages)", (long long)c);
		return OSM_SKIP;
	}
	e = evict_as_method(b, block);
	if (e || (c = cached_pages(b->fd, 0, block)) != 0) {
		snprintf(why, wl, "%s does not evict a block just read here (%s)", how,
			 e ? strerror(e) : "its pages stay cached");
		return OSM_SKIP;
	}
	return OSM_OK;
}

static int try_evicting(struct osm_ctx *ctx, const char *path, size_t block, enum osm_file_method m, int explicit,
			struct osm_file_bypass *b, char *why, size_t wl)
{
	if (m == OSM_FILE_DROP_CACHES) {
		if (geteuid() != 0) {
			snprintf(why, wl, "needs root (it writes /proc/sys/vm/drop_caches)");
			return OSM_SKIP;
		}
		if (block % page_size()) {
			if (explicit)
				return osm_fail(ctx, OSM_ERROR, "method=drop_caches: block=%zu is not a multiple of the "
						"page size (%zu): blocks sharing a page would be read from the cache",
						block, page_size());
			snprintf(why, wl, "block=%zu is not a multiple of the page size (%zu)", block, page_size());
			return OSM_SKIP;
		}
		if ((b->dc_fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC)) < 0) {
			snprintf(why, wl, "cannot open /proc/sys/vm/drop_caches: %s", strerror(errno));
			return OSM_SKIP;
		}
	}
	b->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (b->fd < 0)
		return osm_fail(ctx, OSM_ERROR, "open %s: %s", path, strerror(errno));
	b->method = m;
	b->mem_align = page_size();
	/* Dirty pages cannot be dropped: the data goes to the device first. */
	if (fdatasync(b->fd) && errno == EIO)
		return osm_fail(ctx, OSM_ERROR, "fdatasync of %s: %s", path, strerror(errno));
	int e = posix_fadvise(b->fd, 0, 0, POSIX_FADV_RANDOM);
	if (e) {
		snprintf(why, wl, "posix_fadvise(RANDOM) to turn read-ahead off: %s", strerror(e));
		return OSM_SKIP;
	}
	/* Whatever of the file is cached (it was just written) goes first. */
	if (m == OSM_FILE_FADVISE)
		posix_fadvise(b->fd, 0, 0, POSIX_FADV_DONTNEED);
	return verify_eviction(ctx, b, block, path, why, wl);
}

static int try_method(struct osm_ctx *ctx, const char *path, size_t block, enum osm_file_method m, int explicit,
		      struct osm_file_bypass *b, char *why, size_t wl)
{
	int st = m == OSM_FILE_DIRECT ? try_direct(ctx, path, block, explicit, b, why, wl)
				      : try_evicting(ctx, path, block, m, explicit, b, why, wl);
	if (st != OSM_OK)
		osm_file_bypass_close(b);
	return st;
}

int osm_file_bypass_possible(struct osm_ctx *ctx, const struct osm_file_target *t)
{
	if (t->in_memory)
		return osm_fail(ctx, OSM_SKIP, "a file on %s lives in memory: there is no cold read; use --param dir= "
				"on a disk file system", t->fstype);
	return OSM_OK;
}

int osm_file_bypass_open(struct osm_ctx *ctx, const struct osm_file_target *t, const char *path, int64_t size,
			 size_t block, enum osm_file_method want, int allow_drop, struct osm_file_bypass *b)
{
	memset(b, 0, sizeof(*b));
	b->fd = b->dc_fd = -1;
	b->size = size;
	if (osm_file_bypass_possible(ctx, t) != OSM_OK)
		return OSM_SKIP;
	char reasons[3 * REASON + 64] = "", why[REASON];
	size_t used = 0;
	for (int m = OSM_FILE_DIRECT; m <= OSM_FILE_DROP_CACHES; m++) {
		if (want != OSM_FILE_AUTO && (int)want != m)
			continue;
		why[0] = 0;
		if (m == OSM_FILE_DROP_CACHES && !allow_drop)
			snprintf(why, sizeof(why), "not used here: dropping the whole page cache would disturb the "
				 "other readers");
		int st = why[0] ? OSM_SKIP : try_method(ctx, path, block, (enum osm_file_method)m,
							 want != OSM_FILE_AUTO, b, why, sizeof(why));
		if (st == OSM_OK) {
			osm_add_info(ctx, "cache_bypass", "%s", info_names[m]);
			return OSM_OK;
		}
		if (st != OSM_SKIP)
			return st;
		size_t room = sizeof(reasons) - used;
		int n = snprintf(reasons + used, room, "%s%s: %s", used ? "; " : "", osm_file_method_names[m], why);
		if (n > 0)
			used += (size_t)n < room ? (size_t)n : room - 1;
	}
	if (want == OSM_FILE_AUTO)
		return osm_fail(ctx, OSM_SKIP, "cannot bypass the page cache in %s (%s): %s", t->dir, t->fstype, reasons);
	return osm_fail(ctx, OSM_SKIP, "method=%s cannot bypass the page cache in %s (%s): %s; try method=auto",
			osm_file_method_names[want], t->dir, t->fstype, reasons);
}

/* ---- the reader ---------------------------------------------------------- */

static uint64_t mix64(uint64_t z)
{
	z += UINT64_C(0x9e3779b97f4a7c15);
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* The i-th block of this pass: a four-round Feistel permutation of
 * [0, 2^(2 half_bits)) keyed per pass, walked until it lands below nblocks
 * (cycle walking): a permutation of [0, nblocks) without a table, so each
 * block is read once per pass whatever the file's size. */
static uint64_t permute(const struct osm_file_reader *r, uint64_t i)
{
	uint64_t h = r->half_bits, mask = (UINT64_C(1) << h) - 1, x = i;
	do {
		uint64_t left = x >> h, right = x & mask;
		for (int k = 0; k < 4; k++) {
			uint64_t f = left ^ (mix64(right ^ r->key[k]) & mask);
			left = right;
			right = f;
		}
		x = (left << h) | right;
	} while (x >= r->nblocks);
	return x;
}

void osm_file_reader_init(struct osm_file_reader *r, struct osm_file_bypass *b, size_t block, uint64_t first,
			  uint64_t nblocks, int rand, uint64_t seed)
{
	memset(r, 0, sizeof(*r));
	r->bp = *b;
	b->fd = b->dc_fd = -1; /* taken over */
	r->block = block;
	r->first = first;
	r->nblocks = nblocks;
	r->rand = rand;
	r->rng = mix64(seed ^ UINT64_C(0x6f736d6574657221));
	unsigned bits = 2;
	while (bits < 64 && (UINT64_C(1) << bits) < nblocks)
		bits++;
	r->half_bits = (bits + 1) / 2;
}

void osm_file_reader_close(struct osm_file_reader *r)
{
	free(r->buf);
	r->buf = NULL;
	osm_file_bypass_close(&r->bp);
}

/* Untimed, before the read of [off, off+block): the start of a pass, the
 * eviction, and the check that none of the block's pages is cached. */
static int before_read(struct osm_file_reader *r, int64_t off, char *msg, size_t len)
{
	struct osm_file_bypass *b = &r->bp;
	if (!r->buf && !(r->buf = aligned_buffer(b->mem_align, r->block))) {
		snprintf(msg, len, "out of memory for a %zu-byte buffer", r->block);
		return -1;
	}
	if (r->pos == 0 && b->method == OSM_FILE_DROP_CACHES && drop_all(b->dc_fd)) {
		snprintf(msg, len, "write /proc/sys/vm/drop_caches: %s", strerror(errno));
		return -1;
	}
	if (b->method == OSM_FILE_DIRECT)
		return 0;
	int e = b->method == OSM_FILE_FADVISE ? evict_range(b->fd, off, r->block) : 0;
	int64_t c = e ? -1 : cached_pages(b->fd, off, r->block);
	if (e || c < 0) {
		snprintf(msg, len, "%s before the read at offset %lld: %s",
			 e ? "posix_fadvise(DONTNEED)" : "mincore", (long long)off, strerror(e ? e : errno));
		return -1;
	}
	if (c > 0) {
		snprintf(msg, len, "%lld page(s) of the block at offset %lld were still cached before its read: "
			 "it would not be a cold read", (long long)c, (long long)off);
		return -1;
	}
	return 0;
}

double osm_file_reader_read(struct osm_file_reader *r, struct osm_ctx *count, char *msg, size_t len)
{
	if (r->pos == 0 && r->rand)
		for (int k = 0; k < 4; k++)
			r->key[k] = r->rng = mix64(r->rng);
	uint64_t idx = r->rand ? permute(r, r->pos) : r->pos;
	int64_t off = (int64_t)((r->first + idx) * r->block);
	if (before_read(r, off, msg, len))
		return -1;
	if (count)
		osm_count_begin(count);
	uint64_t t0 = osm_clock_start();
	ssize_t n = pread(r->bp.fd, r->buf, r->block, (off_t)off);
	uint64_t t1 = osm_clock_stop();
	if (count)
		osm_count_end(count, 1);
	if (n < 0) {
		snprintf(msg, len, "read of %zu bytes at offset %lld: %s", r->block, (long long)off, strerror(errno));
		return -1;
	}
	if ((size_t)n != r->block) {
		snprintf(msg, len, "short read: %zd of %zu bytes at offset %lld", n, r->block, (long long)off);
		return -1;
	}
	r->pos = r->pos + 1 == r->nblocks ? 0 : r->pos + 1;
	double ns = osm_ticks_to_ns(t1 - t0);
	r->reads++;
	r->ns += ns;
	return ns;
}
