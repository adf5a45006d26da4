/* mem_fault.c - page faults over whole regions (mem.fault_anon,
 * mem.fault_file_minor, mem.fault_file_major) and LEBench's file-mapping
 * rows (mem.mmap, mem.munmap, mem.page_fault). Method: docs/methods/mem.md
 *
 * Region faults: one sample = one fresh mapping of the whole region, every
 * 4 KiB page touched once in address order; the timed part is the touch
 * loop only (mmap, munmap and eviction are outside it: OSM_SELF_TIMED), and
 * the sample is that time divided by the number of 4 KiB pages; --counters
 * count the touch loop alone, one window per region, per 4 KiB page too
 * (OSM_SELF_COUNTED). How many
 * faults that took (fault-around maps up to fault_around_bytes per minor
 * file fault; a THP fault maps 2 MiB) is reported from getrusage as
 * extra.minflt_per_page / extra.majflt_per_page, so a figure is never read
 * as "one fault" when the kernel took fewer.
 *
 * LEBench rows (LEBench OS_Eval.c semantics, osmeter's harness): the file of
 * `size` bytes is written once in setup and stays in the page cache.
 * mem.mmap times mmap(PROT_READ, MAP_PRIVATE) alone (prot=read_write maps
 * it writable, as osmeter 0.1 did); mem.munmap times munmap() of a
 * PROT_WRITE private mapping whose every byte was written first (private
 * copies to free); mem.page_fault times the first read of byte 0 of a fresh
 * PROT_READ private mapping. LEBench times calls one at a time; osmeter
 * times them in groups of up to 8 (fewer when the group's mappings would
 * exceed 256 MiB) with the untimed set-up and clean-up of the group outside
 * the clock (and outside the counters' window, which is the clock's), so the clock's own cost (35 ns on a KVM guest) is spread over
 * the group while the address space changes by at most 8 mappings.
 * --lebench-exact times one call per clock pair, as LEBench.
 *
 * Traps avoided: the file is real data written once (not sparse: a hole
 * would fault in the zero page, not the page cache); files live in the
 * probe's work directory and are removed on every exit path (osm_workfile);
 * eviction for major faults is verified with mincore() before each sample,
 * and a work directory on tmpfs (which cannot be evicted) is a skip. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "../bench.h"
#include "../cleanup.h"
#include "../clock.h"
#include "../compiler.h"
#include "../sysmem.h"
#include "file.h" /* osm_file_fill_lebench */
#include "mem.h"

#define PAGE 4096
#define GROUP 8 /* at most this many calls per clock pair (the `group` param; LEBench: 1) */
#define GROUP_BYTES ((size_t)256 << 20)   /* mappings alive at once, at most */
#define TMPFS_MAGIC_ 0x01021994u
#define RAMFS_MAGIC_ 0x858458f6u

struct fault_state {
	size_t size;       /* region / file size, a multiple of PAGE */
	int thp;
	int fd;
	int advice;        /* major: 0 MADV_RANDOM, 1 normal */
	int drop_caches;   /* major: eviction needs /proc/sys/vm/drop_caches */
	char path[512];
	uint64_t pages, minflt, majflt; /* totals over all samples, for extra */
	uint64_t sink;
	int map_prot;      /* mem.mmap: the protection its prot= asks for */
};

static int make_state(struct osm_ctx *ctx, struct fault_state **out)
{
	struct fault_state *s = calloc(1, sizeof(*s));
	if (!s)
		return osm_fail(ctx, OSM_ERROR, "out of memory");
	s->fd = -1;
	int64_t size = osm_param_int(ctx, "size");
	char what[64];
	snprintf(what, sizeof(what), "mem.%s", ctx->bench->name);
	int st = osm_mem_fit(ctx, what, size); /* 64-bit check before the cast */
	if (st != OSM_OK) {
		free(s);
		return st;
	}
	s->size = ((size_t)size + PAGE - 1) & ~(size_t)(PAGE - 1);
	*out = s;
	return OSM_OK;
}

static void free_state(struct fault_state *s)
{
	if (s->fd >= 0)
		close(s->fd);
	if (s->path[0])
		unlink(s->path);
	free(s);
}

void osm_mem_fault_teardown(struct osm_ctx *ctx)
{
	if (ctx->priv)
		free_state(ctx->priv);
	ctx->priv = NULL;
}

void osm_mem_map_teardown(struct osm_ctx *ctx)
{
	osm_mem_fault_teardown(ctx);
}

/* The file `name` in the work directory, `size` bytes of real data; with
 * `lebench`, written as LEBench grows its file (osm_file_fill_lebench: the
 * page cache holds LEBench's folios), else in 64 KiB writes. */
static int make_file(struct osm_ctx *ctx, struct fault_state *s, const char *name, int lebench)
{
	if (osm_workfile(name, s->path, sizeof(s->path))) {
		s->path[0] = 0;
		return osm_fail(ctx, OSM_ERROR, "cannot make a file in the work directory (TMPDIR)");
	}
	int st = osm_mem_disk_fit(ctx, osm_workdir(), (int64_t)s->size);
	if (st != OSM_OK)
		return st;
	s->fd = open(s->path, O_CREAT | O_RDWR | O_TRUNC | O_CLOEXEC, 0600);
	if (s->fd < 0)
		return osm_fail(ctx, OSM_ERROR, "cannot create %s: %s", s->path, strerror(errno));
	if (lebench)
		return osm_file_fill_lebench(ctx, s->fd, (int64_t)s->size, "mem.page_fault fill=lebench");
	static char buf[1 << 16];
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (char)('a' + i % 26);
	for (size_t off = 0; off < s->size;) {
		size_t n = s->size - off < sizeof(buf) ? s->size - off : sizeof(buf);
		ssize_t w = write(s->fd, buf, n);
		if (w <= 0)
			return osm_fail(ctx, OSM_ERROR, "cannot write %s: %s", s->path,
					w < 0 ? strerror(errno) : "short write");
		off += (size_t)w;
	}
	return OSM_OK;
}

static void rusage_faults(uint64_t *minflt, uint64_t *majflt)
{
	struct rusage ru;
	getrusage(RUSAGE_THREAD, &ru);
	*minflt = (uint64_t)ru.ru_minflt;
	*majflt = (uint64_t)ru.ru_majflt;
}

static void add_fault_extras(struct osm_ctx *ctx, const struct fault_state *s)
{
	if (!s->pages)
		return;
	osm_add_extra(ctx, "minflt_per_page", (double)s->minflt / (double)s->pages);
	osm_add_extra(ctx, "majflt_per_page", (double)s->majflt / (double)s->pages);
}

/* Touch every 4 KiB page of [p, p+len) once, in address order (write when
 * `write`, else read); returns the time in ns and counts the faults. The
 * counters' window is the clock's: len / 4 KiB operations. */
static double touch_pages(struct osm_ctx *ctx, struct fault_state *s, char *p, size_t len, int write)
{
	uint64_t mn0, mj0, mn1, mj1, sum = 0;
	rusage_faults(&mn0, &mj0);
	osm_count_begin(ctx);
	uint64_t t0 = osm_clock_start();
	if (write) {
		for (size_t off = 0; off < len; off += PAGE)
			p[off] = 1;
	} else {
		for (size_t off = 0; off < len; off += PAGE)
			sum += (unsigned char)*(volatile char *)(p + off);
	}
	uint64_t t1 = osm_clock_stop();
	osm_count_end(ctx, len / PAGE);
	rusage_faults(&mn1, &mj1);
	s->sink += sum;
	s->pages += len / PAGE;
	s->minflt += mn1 - mn0;
	s->majflt += mj1 - mj0;
	return osm_ticks_to_ns(t1 - t0);
}

/* ------------------------------------------------------------------------ */
/* mem.fault_anon                                                           */

int osm_mem_fault_anon_setup(struct osm_ctx *ctx)
{
	struct fault_state *s = NULL;
	int st = make_state(ctx, &s);
	if (st != OSM_OK)
		return st;
	s->thp = (int)osm_param_int(ctx, "thp");
	if (s->thp == OSM_THP_ON && osm_thp_check(ctx, NULL, 0) != OSM_OK) {
		free_state(s);
		return OSM_SKIP;
	}
	if (s->thp) /* whole huge pages only */
		s->size = (s->size + OSM_MEM_HUGE_BYTES - 1) & ~(OSM_MEM_HUGE_BYTES - 1);
	st = osm_mem_fit(ctx, "mem.fault_anon", (int64_t)s->size + 2 * (int64_t)OSM_MEM_HUGE_BYTES);
	if (st != OSM_OK) {
		free_state(s);
		return st;
	}
	ctx->priv = s;
	osm_add_extra(ctx, "size_bytes", (double)s->size);
	return OSM_OK;
}

int osm_mem_fault_anon_run(struct osm_ctx *ctx, uint64_t batch)
{
	struct fault_state *s = ctx->priv;
	double ns = 0;
	for (uint64_t b = 0; b < batch; b++) {
		struct osm_region r;
		if (osm_region_map(&r, s->size, s->thp))
			return osm_fail_errno(ctx, "mmap");
		double t = touch_pages(ctx, s, r.p, s->size, 1);
		if (s->thp && s->pages == s->size / PAGE) {
			/* First region: did the huge pages come? (thp=2: as the
			 * system's setting gave them, whatever that is) */
			double f = osm_region_huge_fraction(&r);
			osm_add_extra(ctx, "huge_fraction", f < 0 ? NAN : f); /* null: smaps unreadable */
			if (s->thp == OSM_THP_ON && osm_thp_granted(ctx, f) != OSM_OK) {
				osm_region_unmap(&r);
				return OSM_SKIP;
			}
		}
		osm_region_unmap(&r);
		ns += t / (double)(s->size / PAGE);
	}
	/* Self-timed, one by one: the "operation" is one 4 KiB page of the
	 * region, its time the region's touch time / its page count. */
	ctx->self_ns = ns;
	add_fault_extras(ctx, s);
	return OSM_OK;
}

/* ------------------------------------------------------------------------ */
/* mem.fault_file_minor / mem.fault_file_major                              */

/* Resident pages of the file, from mincore() on a fresh read-only mapping. */
static int64_t resident_pages(const struct fault_state *s)
{
	void *m = mmap(NULL, s->size, PROT_READ, MAP_SHARED, s->fd, 0);
	if (m == MAP_FAILED)
		return -1;
	size_t n = s->size / PAGE;
	unsigned char *vec = malloc(n);
	int64_t res = -1;
	if (vec && !mincore(m, s->size, vec)) {
		res = 0;
		for (size_t i = 0; i < n; i++)
			res += vec[i] & 1;
	}
	free(vec);
	munmap(m, s->size);
	return res;
}

static int file_fault_setup(struct osm_ctx *ctx, const char *name, struct fault_state **out)
{
	struct fault_state *s = NULL;
	int st = make_state(ctx, &s);
	if (st != OSM_OK)
		return st;
	st = osm_mem_fit(ctx, name, (int64_t)s->size);
	if (st == OSM_OK)
		st = make_file(ctx, s, name, 0);
	if (st != OSM_OK) {
		free_state(s);
		return st;
	}
	*out = s;
	return OSM_OK;
}

int osm_mem_fault_file_setup(struct osm_ctx *ctx)
{
	struct fault_state *s = NULL;
	int st = file_fault_setup(ctx, "mem.fault_file_minor", &s);
	if (st != OSM_OK)
		return st;
	/* Just written, so cached; read it once more if some of it was not. */
	int64_t res = resident_pages(s);
	if (res >= 0 && (size_t)res < s->size / PAGE) {
		char buf[1 << 16];
		for (off_t off = 0; pread(s->fd, buf, sizeof(buf), off) > 0; off += (off_t)sizeof(buf))
			;
		res = resident_pages(s);
	}
	if (res >= 0 && (size_t)res < s->size / PAGE) {
		size_t n = s->size / PAGE;
		free_state(s);
		return osm_fail(ctx, OSM_SKIP, "only %lld of the file's %zu pages stay in the page cache "
				"(memory pressure?): minor faults cannot be measured", (long long)res, n);
	}
	ctx->priv = s;
	osm_add_extra(ctx, "size_bytes", (double)s->size);
	return OSM_OK;
}

int osm_mem_fault_minor_run(struct osm_ctx *ctx, uint64_t batch)
{
	struct fault_state *s = ctx->priv;
	double ns = 0;
	for (uint64_t b = 0; b < batch; b++) {
		char *m = mmap(NULL, s->size, PROT_READ, MAP_PRIVATE, s->fd, 0);
		if (m == MAP_FAILED)
			return osm_fail_errno(ctx, "mmap");
		double t = touch_pages(ctx, s, m, s->size, 0);
		munmap(m, s->size);
		ns += t / (double)(s->size / PAGE);
	}
	ctx->self_ns = ns;
	add_fault_extras(ctx, s);
	return OSM_OK;
}

static int drop_caches(void)
{
	sync();
	int fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int ok = write(fd, "1", 1) == 1;
	close(fd);
	return ok ? 0 : -1;
}

/* Evicts the file's pages; returns the pages still resident (-1: unknown). */
static int64_t evict(struct fault_state *s)
{
	posix_fadvise(s->fd, 0, 0, POSIX_FADV_DONTNEED);
	int64_t res = resident_pages(s);
	if (res != 0 && s->drop_caches && !drop_caches())
		res = resident_pages(s);
	return res;
}

int osm_mem_fault_major_setup(struct osm_ctx *ctx)
{
	struct fault_state *s = NULL;
	int st = file_fault_setup(ctx, "mem.fault_file_major", &s);
	if (st != OSM_OK)
		return st;
	s->advice = (int)osm_param_int(ctx, "advice");
	struct statfs sf;
	if (!fstatfs(s->fd, &sf) && ((uint32_t)sf.f_type == TMPFS_MAGIC_ || (uint32_t)sf.f_type == RAMFS_MAGIC_)) {
		free_state(s);
		return osm_fail(ctx, OSM_SKIP, "the work directory is on tmpfs/ramfs, whose pages cannot be "
				"evicted: set TMPDIR to a directory on a disk file system");
	}
	/* Dirty pages cannot be dropped: write the file back first. */
	if (fdatasync(s->fd)) {
		int e = errno;
		free_state(s);
		return osm_fail(ctx, OSM_ERROR, "fdatasync: %s", strerror(e));
	}
	int64_t res = evict(s);
	if (res != 0 && geteuid() == 0) {
		s->drop_caches = 1;
		res = evict(s);
	}
	if (res != 0) {
		size_t n = s->size / PAGE;
		int root = geteuid() == 0;
		free_state(s);
		if (res < 0)
			return osm_fail(ctx, OSM_SKIP, "cannot tell whether the file left the page cache "
					"(mincore failed): major faults cannot be verified");
		return osm_fail(ctx, OSM_SKIP, "cannot evict the file from the page cache (%lld of %zu pages "
				"stay after posix_fadvise(DONTNEED)%s)%s", (long long)res, n,
				root ? " and drop_caches" : "",
				root ? "" : "; as root, drop_caches would be tried");
	}
	ctx->priv = s;
	osm_add_extra(ctx, "size_bytes", (double)s->size);
	osm_add_extra(ctx, "drop_caches", s->drop_caches);
	return OSM_OK;
}

int osm_mem_fault_major_run(struct osm_ctx *ctx, uint64_t batch)
{
	struct fault_state *s = ctx->priv;
	double ns = 0;
	for (uint64_t b = 0; b < batch; b++) {
		int64_t res = evict(s);
		if (res != 0)
			return osm_fail(ctx, OSM_ERROR, "%lld pages of the file stayed in the page cache "
					"after eviction: this sample would not be major faults", (long long)res);
		char *m = mmap(NULL, s->size, PROT_READ, MAP_PRIVATE, s->fd, 0);
		if (m == MAP_FAILED)
			return osm_fail_errno(ctx, "mmap");
		if (s->advice == 0 && madvise(m, s->size, MADV_RANDOM)) {
			munmap(m, s->size);
			return osm_fail_errno(ctx, "madvise(MADV_RANDOM)");
		}
		double t = touch_pages(ctx, s, m, s->size, 0);
		munmap(m, s->size);
		ns += t / (double)(s->size / PAGE);
	}
	ctx->self_ns = ns;
	add_fault_extras(ctx, s);
	return OSM_OK;
}

/* ------------------------------------------------------------------------ */
/* LEBench: mem.mmap, mem.munmap, mem.page_fault                            */

/* Calls per clock pair: the `group` param, fewer when the group's mappings
 * would exceed GROUP_BYTES, one under --lebench-exact. */
static size_t group_size(const struct osm_ctx *ctx, const struct fault_state *s, uint64_t left)
{
	size_t g = GROUP_BYTES / s->size, want = (size_t)osm_param_int(ctx, "group");
	g = g < 1 || ctx->lebench_exact ? 1 : g > want ? want : g;
	return left < g ? (size_t)left : g;
}

int osm_mem_map_setup(struct osm_ctx *ctx)
{
	struct fault_state *s = NULL;
	int st = make_state(ctx, &s);
	if (st != OSM_OK)
		return st;
	s->size = (size_t)osm_param_int(ctx, "size"); /* LEBench sizes are not all page multiples */
	/* munmap keeps a group of written private mappings alive. */
	size_t group = GROUP_BYTES / s->size;
	group = group < 1 ? 1 : group > GROUP ? GROUP : group;
	char what[64];
	snprintf(what, sizeof(what), "mem.%s", ctx->bench->name);
	st = osm_mem_fit(ctx, what, (int64_t)(group * s->size + s->size));
	int fault = !strcmp(ctx->bench->name, "page_fault");
	if (st == OSM_OK)
		st = make_file(ctx, s, "mem.map", fault && osm_param_int(ctx, "fill") == 1);
	if (st != OSM_OK) {
		free_state(s);
		return st;
	}
	if (fault) {
		/* What fault-around maps: the folios over its reach (64 KiB by
		 * default), and the file's. */
		size_t reach = s->size < 65536 ? s->size : 65536;
		int64_t head = osm_file_folios(s->fd, reach), all = osm_file_folios(s->fd, s->size);
		osm_add_extra(ctx, "head_folios", head < 0 ? NAN : (double)head);
		osm_add_extra(ctx, "folios", all < 0 ? NAN : (double)all);
	}
	/* Every sample holds whole groups: group=8 is 8 calls per clock pair
	 * whatever one call costs. */
	ctx->min_batch = group_size(ctx, s, UINT64_MAX);
	ctx->priv = s;
	return OSM_OK;
}

static void unmap_all(void **a, size_t n, size_t size)
{
	for (size_t i = 0; i < n; i++)
		if (a[i] != MAP_FAILED)
			munmap(a[i], size);
}

/* g private mappings of the file into a[], off the clock. With PROT_WRITE
 * every byte is written, as LEBench does before munmap: private copies of
 * every page, and the data in the caches as LEBench leaves it. OSM_OK, or
 * the mmap error (ctx->msg) with the mappings made so far undone. */
static int map_group(struct osm_ctx *ctx, const struct fault_state *s, void **a, size_t g, int prot)
{
	for (size_t i = 0; i < g; i++) {
		a[i] = mmap(NULL, s->size, prot, MAP_PRIVATE, s->fd, 0);
		if (a[i] == MAP_FAILED) {
			int e = errno;
			unmap_all(a, i, s->size);
			errno = e;
			return osm_fail_errno(ctx, "mmap");
		}
		if (prot & PROT_WRITE) {
			memset(a[i], 'b', s->size);
			OSM_CLOBBER();
		}
	}
	return OSM_OK;
}

/* What is timed of one group of g calls (a holds the group's mappings,
 * room for GROUP): its clock ticks in *ticks, the counters' window (ctx)
 * around the same calls; 0, or -1 with errno from the call that failed. */
typedef int (*group_fn)(struct osm_ctx *ctx, struct fault_state *s, void **a, size_t g, uint64_t *ticks);

/* run() of the three: batch calls in groups of group_size(), each group's
 * mappings made off the clock first unless pre_prot is 0 (then `timed`
 * makes them), each group timed by `timed`; ctx->self_ns is the sum. A
 * failure of `timed` is an error naming `call`. */
static int run_groups(struct osm_ctx *ctx, uint64_t batch, int pre_prot, group_fn timed, const char *call)
{
	struct fault_state *s = ctx->priv;
	void *a[GROUP];
	double ns = 0;
	for (uint64_t done = 0; done < batch;) {
		size_t g = group_size(ctx, s, batch - done);
		if (pre_prot && map_group(ctx, s, a, g, pre_prot) != OSM_OK)
			return OSM_ERROR;
		uint64_t ticks = 0;
		if (timed(ctx, s, a, g, &ticks))
			return osm_fail_errno(ctx, call);
		ns += osm_ticks_to_ns(ticks);
		done += g;
	}
	ctx->self_ns = ns;
	return OSM_OK;
}

/* mem.mmap: the mmap() calls timed, the mappings undone off the clock. */
static int mmap_group(struct osm_ctx *ctx, struct fault_state *s, void **a, size_t g, uint64_t *ticks)
{
	size_t ok = 0;
	osm_count_begin(ctx);
	uint64_t t0 = osm_clock_start();
	for (; ok < g; ok++) {
		a[ok] = mmap(NULL, s->size, s->map_prot, MAP_PRIVATE, s->fd, 0);
		if (a[ok] == MAP_FAILED)
			break;
	}
	*ticks = osm_clock_stop() - t0;
	osm_count_end(ctx, ok < g ? 0 : g);
	int e = errno;
	unmap_all(a, ok, s->size);
	errno = e;
	return ok < g ? -1 : 0;
}

/* mem.munmap: the munmap() calls of written private mappings timed. */
static int munmap_group(struct osm_ctx *ctx, struct fault_state *s, void **a, size_t g, uint64_t *ticks)
{
	int failed = 0;
	osm_count_begin(ctx);
	uint64_t t0 = osm_clock_start();
	for (size_t i = 0; i < g; i++)
		failed |= munmap(a[i], s->size);
	*ticks = osm_clock_stop() - t0;
	osm_count_end(ctx, failed ? 0 : g);
	return failed ? -1 : 0;
}

/* mem.page_fault: the first read of each fresh read-only mapping timed. */
static int fault_group(struct osm_ctx *ctx, struct fault_state *s, void **a, size_t g, uint64_t *ticks)
{
	uint64_t sum = 0;
	osm_count_begin(ctx);
	uint64_t t0 = osm_clock_start();
	for (size_t i = 0; i < g; i++)
		sum += (unsigned char)*(volatile char *)a[i];
	*ticks = osm_clock_stop() - t0;
	osm_count_end(ctx, g);
	unmap_all(a, g, s->size);
	s->sink += sum;
	OSM_KEEP(s->sink);
	return 0;
}

int osm_mem_mmap_run(struct osm_ctx *ctx, uint64_t batch)
{
	struct fault_state *s = ctx->priv;
	s->map_prot = osm_param_int(ctx, "prot") == 0 ? PROT_READ : PROT_READ | PROT_WRITE;
	return run_groups(ctx, batch, 0, mmap_group, "mmap");
}

int osm_mem_munmap_run(struct osm_ctx *ctx, uint64_t batch)
{
	return run_groups(ctx, batch, PROT_WRITE, munmap_group, "munmap");
}

int osm_mem_page_fault_run(struct osm_ctx *ctx, uint64_t batch)
{
	return run_groups(ctx, batch, PROT_READ, fault_group, "read"); /* never fails */
}
