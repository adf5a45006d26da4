/* mem.c - mem.*: the memory hierarchy. This file holds the family's table
 * and mem.latency; bandwidth is in mem_bw.c, page faults and the LEBench
 * mmap rows in mem_fault.c, shared helpers in mem_util.c.
 * Method: docs/methods/mem.md
 *
 * mem.latency: load-to-use latency by pointer chasing (lmbench lat_mem_rd;
 * the random-order variant of the "memory latency" literature). The working
 * set is an array of `size / stride` elements, each holding a pointer to the
 * next; pattern=random links them in one random cycle (Sattolo's algorithm),
 * so the next address is unknown until the current load returns and no
 * prefetcher can guess it; pattern=stride links element i to i+1 (what
 * lat_mem_rd does), which stride prefetchers can follow.
 *
 * One operation = one load. Traps avoided:
 * - the chase is unrolled 16 times, and every load's address is the previous
 *   load's value, so neither the loop nor out-of-order execution overlaps two
 *   loads; the final pointer is kept (OSM_KEEP) so no load is dead;
 * - the chain is built, and every page first touched, in setup: no page
 *   fault is timed; the harness's warm-up then runs the chase untimed so the
 *   caches hold what they will hold in the steady state;
 * - one random cycle through every element (Sattolo), not a random
 *   permutation that may split into short cycles living in a faster cache;
 * - each batch continues from where the previous one stopped, so a batch
 *   smaller than the array does not re-walk the same cached prefix;
 * - thp=0 maps the array with MADV_NOHUGEPAGE and thp=1 with MADV_HUGEPAGE
 *   (2 MiB-aligned, and checked in /proc/self/smaps: a run that did not get
 *   its huge pages is skipped, never reported as a huge-page figure), so TLB
 *   misses can be told from cache misses;
 * - the footprint is checked against free memory before anything is mapped
 *   (osm_mem_fit): a request that does not fit is skipped with the reason,
 *   never OOM-killed. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../bench.h"
#include "../compiler.h"
#include "file.h" /* osm_file_fill_names */
#include "mem.h"

enum { PATTERN_RANDOM = 0, PATTERN_STRIDE = 1 };

struct lat_state {
	struct osm_region r;
	void *cur; /* where the next batch continues */
};

static void lat_free(struct lat_state *s)
{
	osm_region_unmap(&s->r);
	free(s);
}

static int lat_setup(struct osm_ctx *ctx)
{
	int64_t size = osm_param_int(ctx, "size");
	int64_t stride = osm_param_int(ctx, "stride");
	int pattern = (int)osm_param_int(ctx, "pattern");
	int thp = (int)osm_param_int(ctx, "thp");
	if (stride % (int64_t)sizeof(void *))
		return osm_fail(ctx, OSM_ERROR, "stride %lld is not a multiple of the pointer size (%zu bytes)",
				(long long)stride, sizeof(void *));
	if (size / stride < 2)
		return osm_fail(ctx, OSM_ERROR, "size %lld holds fewer than two elements of stride %lld",
				(long long)size, (long long)stride);
	if (thp && osm_thp_check(ctx, NULL, 0) != OSM_OK)
		return OSM_SKIP;
	/* Checked in 64 bits before anything is cast to size_t (32-bit probes). */
	int st = osm_mem_fit(ctx, "mem.latency", size / stride * stride + (thp ? 2 * (int64_t)OSM_MEM_HUGE_BYTES : 0));
	if (st != OSM_OK)
		return st;
	size_t n = (size_t)(size / stride);
	size_t bytes = n * (size_t)stride;

	struct lat_state *s = calloc(1, sizeof(*s));
	if (!s)
		return osm_fail(ctx, OSM_ERROR, "out of memory");
	if (osm_region_map(&s->r, bytes, thp)) {
		int e = errno;
		free(s);
		return osm_fail(ctx, OSM_ERROR, "mmap of %zu bytes: %s", bytes, strerror(e));
	}
	char *base = s->r.p;
	/* Slot i first holds the index of its successor (this also touches
	 * every page in order), then the indices become addresses. */
	for (size_t i = 0; i < n; i++)
		*(uintptr_t *)(base + i * (size_t)stride) = pattern == PATTERN_STRIDE ? (i + 1) % n : i;
	if (pattern == PATTERN_RANDOM) {
		/* Sattolo: j drawn from [0, i) (never i) yields a single cycle. */
		uint64_t seed = UINT64_C(0x05e1ec7ed) ^ (uint64_t)n;
		for (size_t i = n - 1; i > 0; i--) {
			size_t j = (size_t)(osm_mem_rand(&seed) % i);
			uintptr_t *a = (uintptr_t *)(base + i * (size_t)stride);
			uintptr_t *b = (uintptr_t *)(base + j * (size_t)stride);
			uintptr_t t = *a;
			*a = *b;
			*b = t;
		}
	}
	for (size_t i = 0; i < n; i++) {
		uintptr_t *slot = (uintptr_t *)(base + i * (size_t)stride);
		*slot = (uintptr_t)(base + *slot * (size_t)stride);
	}
	s->cur = base;

	double huge = osm_region_huge_fraction(&s->r);
	if (thp && osm_thp_granted(ctx, huge) != OSM_OK) {
		lat_free(s);
		return OSM_SKIP;
	}
	ctx->priv = s;
	osm_add_extra(ctx, "size_bytes", (double)bytes);
	osm_add_extra(ctx, "elements", (double)n);
	osm_add_extra(ctx, "huge_fraction", huge < 0 ? NAN : huge); /* null: smaps unreadable */
	return OSM_OK;
}

#define CHASE1(p) ((p) = *(void *const *)(p))
#define CHASE4(p) do { CHASE1(p); CHASE1(p); CHASE1(p); CHASE1(p); } while (0)

static int lat_run(struct osm_ctx *ctx, uint64_t batch)
{
	struct lat_state *s = ctx->priv;
	void *p = s->cur;
	for (uint64_t k = batch / 16; k; k--) {
		CHASE4(p);
		CHASE4(p);
		CHASE4(p);
		CHASE4(p);
	}
	for (uint64_t k = batch % 16; k; k--)
		CHASE1(p);
	OSM_KEEP(p);
	s->cur = p;
	return OSM_OK;
}

static void lat_teardown(struct osm_ctx *ctx)
{
	if (ctx->priv)
		lat_free(ctx->priv);
	ctx->priv = NULL;
}

/* ----------------------------------------------------------------------- */
/* The table                                                               */

#define TIB ((int64_t)1 << 40)

static const char *const pattern_choices[] = {"random", "stride", NULL};
static const char *const bw_ops[] = {"read", "write", "copy", "memcpy", NULL};
static const char *const bw_threads[] = {"1", "all", NULL};
static const char *const major_advice[] = {"random", "normal", NULL};

static const struct osm_param lat_params[] = {
	{.name = "size", .type = OSM_P_SIZE, .def = 64 << 20, .min = 1024, .max = TIB,
	 .help = "working set in bytes (rounded down to a multiple of stride)"},
	{.name = "pattern", .type = OSM_P_ENUM, .choices = pattern_choices, .def = PATTERN_RANDOM,
	 .help = "random: one random cycle through all elements (defeats prefetchers); stride: element i -> i+1"},
	{.name = "stride", .type = OSM_P_SIZE, .def = 64, .min = 8, .max = 1 << 20,
	 .help = "bytes between elements (one load per element); 64 = one cache line"},
	{.name = "thp", .type = OSM_P_INT, .def = 0, .min = 0, .max = 1,
	 .help = "1: transparent huge pages (MADV_HUGEPAGE, skipped if not granted); 0: base pages (MADV_NOHUGEPAGE)"},
	{0},
};

static const struct osm_param bw_params[] = {
	{.name = "op", .type = OSM_P_ENUM, .choices = bw_ops, .def = 0,
	 .help = "read (sum), write (store), copy (load+store loop) or memcpy(); bytes counted once"},
	{.name = "threads", .type = OSM_P_ENUM, .choices = bw_threads, .def = 0,
	 .help = "1, or all: one pinned thread per allowed CPU on its share of the buffer, started by a barrier"},
	{.name = "size", .type = OSM_P_SIZE, .def = 0, .min = 0, .max = TIB,
	 .help = "bytes per pass (per buffer); 0 = auto: 4 x the last-level cache, 64 MiB..1 GiB, lowered to fit memory"},
	{0},
};

static const struct osm_param fault_anon_params[] = {
	{.name = "size", .type = OSM_P_SIZE, .def = 16 << 20, .min = 4096, .max = TIB,
	 .help = "region mapped fresh for each sample and touched once per 4 KiB page"},
	{.name = "thp", .type = OSM_P_INT, .def = 0, .min = 0, .max = 2,
	 .help = "1: MADV_HUGEPAGE (one fault per 2 MiB); 0: MADV_NOHUGEPAGE (one fault per 4 KiB page); "
		 "2: no madvise, the system's THP setting decides"},
	{0},
};

static const struct osm_param fault_minor_params[] = {
	{.name = "size", .type = OSM_P_SIZE, .def = 64 << 20, .min = 4096, .max = TIB,
	 .help = "file size; the file stays in the page cache and is mapped fresh for each sample"},
	{0},
};

static const struct osm_param fault_major_params[] = {
	{.name = "size", .type = OSM_P_SIZE, .def = 4 << 20, .min = 4096, .max = TIB,
	 .help = "file size; evicted from the page cache before each sample"},
	{.name = "advice", .type = OSM_P_ENUM, .choices = major_advice, .def = 0,
	 .help = "random: MADV_RANDOM, no read-ahead, one device read per page; normal: the kernel's read-ahead"},
	{0},
};

#define MAP_SIZE_PARAM                                                                         \
	{.name = "size", .type = OSM_P_SIZE, .def = 4096, .min = 4096, .max = (int64_t)1 << 30,   \
	 .help = "file and mapping size (LEBench: 4 KiB, 40 KiB, 4000 KiB, 40000 KiB)"}
#define MAP_GROUP_PARAM                                                                        \
	{.name = "group", .type = OSM_P_INT, .def = 8, .min = 1, .max = 8,                        \
	 .help = "calls timed back to back per clock pair (1: one call per pair, as LEBench; "    \
		 "fewer above 32 MiB)"}

static const struct osm_param map_params[] = {MAP_SIZE_PARAM, MAP_GROUP_PARAM, {0}};

static const struct osm_param fault_params[] = {
	MAP_SIZE_PARAM,
	MAP_GROUP_PARAM,
	{.name = "fill", .type = OSM_P_ENUM, .choices = osm_file_fill_names, .def = 0,
	 .help = "how the file is written in setup: chunks (64 KiB writes: the page cache's large folios, "
		 "fault-around maps one or two); lebench: grown as LEBench's test file (one write at offset 0 "
		 "of 4 KiB, 40 KiB, 4000 KiB, 40000 KiB up to size), its head in small folios"},
	{0},
};

static const char *const map_prots[] = {"read", "read_write", NULL};

static const struct osm_param mmap_params[] = {
	MAP_SIZE_PARAM,
	{.name = "prot", .type = OSM_P_ENUM, .choices = map_prots, .def = 0,
	 .help = "read: PROT_READ (LEBench); read_write: PROT_READ|PROT_WRITE"},
	MAP_GROUP_PARAM,
	{0},
};

/* The latency curve: 1 KiB, 2 KiB, then 3 sizes per doubling from 4 KiB to
 * 512 MiB (2^(k/3) KiB, rounded to 64 B below 64 KiB, to 1 KiB below 64 MiB,
 * to 1 MiB above), with base pages; then huge pages at eight sizes from
 * 256 KiB (the L2/TLB range, the L2-to-memory transition, memory), to tell
 * TLB misses from cache misses. Sizes that do not fit free memory are skipped
 * with the reason. The front end (osmeter/memlevels.py) reads cache levels
 * off these curves. About 45 s on a 2-core KVM guest with the standard
 * budget. */
#define LAT_SWEEP                                                                              \
	"size=1K;size=2K;size=4K;size=5184;size=6528;"                                         \
	"size=8K;size=10304;size=12992;size=16K;size=20672;size=25984;size=32K;size=41280;"    \
	"size=52032;size=64K;size=81K;size=102K;size=128K;size=161K;size=203K;size=256K;"      \
	"size=323K;size=406K;size=512K;size=645K;size=813K;size=1M;size=1290K;size=1625K;"     \
	"size=2M;size=2580K;size=3251K;size=4M;size=5161K;size=6502K;size=8M;size=10321K;"     \
	"size=13004K;size=16M;size=20643K;size=26008K;size=32M;size=41285K;size=52016K;"       \
	"size=64M;size=81M;size=102M;size=128M;size=161M;size=203M;size=256M;size=323M;"       \
	"size=406M;size=512M;"                                                                 \
	"size=256K,thp=1;size=1M,thp=1;size=2M,thp=1;size=4M,thp=1;size=8M,thp=1;"             \
	"size=32M,thp=1;size=128M,thp=1;size=512M,thp=1"

/* Bandwidth: the four operations with one thread and with all CPUs on the
 * auto-sized buffer (>= 4 x LLC), then the read curve against working set. */
#define BW_SWEEP                                                                               \
	"op=read;op=write;op=copy;op=memcpy;"                                                  \
	"op=read,threads=all;op=write,threads=all;op=copy,threads=all;op=memcpy,threads=all;"  \
	"size=4K;size=8K;size=16K;size=32K;size=64K;size=128K;size=256K;size=512K;size=1M;"    \
	"size=2M;size=4M;size=8M;size=16M;size=32M;size=64M;size=128M;size=256M"

#define LEBENCH_SIZES "size=4K;size=40K;size=4000K;size=40000K"

/* osm_sweep_instances() copies a sweep into a 1024-byte buffer. */
_Static_assert(sizeof(LAT_SWEEP) < 1024, "mem.latency sweep too long for the catalogue");
_Static_assert(sizeof(BW_SWEEP) < 1024, "mem.bandwidth sweep too long for the catalogue");

static const struct osm_bench mem_benches[] = {
	{
		.name = "latency",
		.desc = "load-to-use latency: dependent loads chasing a random cycle through `size` bytes",
		.unit = OSM_UNIT_NS,
		.suites = OSM_SUITE_STANDARD | OSM_SUITE_FULL,
		.params = lat_params,
		.sweep = LAT_SWEEP,
		.setup = lat_setup,
		.run = lat_run,
		.teardown = lat_teardown,
	},
	{
		.name = "bandwidth",
		.desc = "memory bandwidth of read / write / copy / memcpy passes over a buffer, 1 thread or all CPUs",
		.unit = OSM_UNIT_BYTES_PER_S,
		.suites = OSM_SUITE_STANDARD | OSM_SUITE_FULL,
		.params = bw_params,
		.sweep = BW_SWEEP,
		.setup = osm_mem_bw_setup,
		.run = osm_mem_bw_run,
		.teardown = osm_mem_bw_teardown,
	},
	{
		.name = "fault_anon",
		.desc = "first-touch page fault on fresh anonymous memory, per 4 KiB page over a whole region",
		.unit = OSM_UNIT_NS,
		.flags = OSM_SELF_TIMED | OSM_ONE_BY_ONE | OSM_SELF_COUNTED,
		.suites = OSM_SUITES_ALL,
		.params = fault_anon_params,
		.sweep = "thp=0;thp=1",
		.setup = osm_mem_fault_anon_setup,
		.run = osm_mem_fault_anon_run,
		.teardown = osm_mem_fault_teardown,
	},
	{
		.name = "fault_file_minor",
		.desc = "minor page fault on a mapped file in the page cache, per 4 KiB page over the whole file",
		.unit = OSM_UNIT_NS,
		.flags = OSM_SELF_TIMED | OSM_ONE_BY_ONE | OSM_SELF_COUNTED,
		.suites = OSM_SUITES_ALL,
		.params = fault_minor_params,
		.setup = osm_mem_fault_file_setup,
		.run = osm_mem_fault_minor_run,
		.teardown = osm_mem_fault_teardown,
	},
	{
		.name = "fault_file_major",
		.desc = "major page fault on a mapped file evicted from the page cache, per 4 KiB page",
		.unit = OSM_UNIT_NS,
		.flags = OSM_SELF_TIMED | OSM_ONE_BY_ONE | OSM_SELF_COUNTED,
		.suites = OSM_SUITE_STANDARD | OSM_SUITE_FULL,
		.params = fault_major_params,
		.setup = osm_mem_fault_major_setup,
		.run = osm_mem_fault_major_run,
		.teardown = osm_mem_fault_teardown,
	},
	{
		.name = "mmap",
		.desc = "mmap() of a cached file (PROT_READ, MAP_PRIVATE), LEBench sizes",
		.unit = OSM_UNIT_NS,
		.flags = OSM_SELF_TIMED | OSM_SELF_COUNTED,
		.suites = OSM_SUITES_ALL,
		.params = mmap_params,
		.sweep = LEBENCH_SIZES,
		.setup = osm_mem_map_setup,
		.run = osm_mem_mmap_run,
		.teardown = osm_mem_map_teardown,
	},
	{
		.name = "munmap",
		.desc = "munmap() of a private file mapping whose every byte was written, LEBench sizes",
		.unit = OSM_UNIT_NS,
		.flags = OSM_SELF_TIMED | OSM_SELF_COUNTED,
		.suites = OSM_SUITE_STANDARD | OSM_SUITE_FULL,
		.params = map_params,
		.sweep = LEBENCH_SIZES,
		.setup = osm_mem_map_setup,
		.run = osm_mem_munmap_run,
		.teardown = osm_mem_map_teardown,
	},
	{
		.name = "page_fault",
		.desc = "LEBench page fault: first read of byte 0 of a fresh file mapping (page cached; fault-around)",
		.unit = OSM_UNIT_NS,
		.flags = OSM_SELF_TIMED | OSM_SELF_COUNTED,
		.suites = OSM_SUITE_STANDARD | OSM_SUITE_FULL,
		.params = fault_params,
		.sweep = LEBENCH_SIZES,
		.setup = osm_mem_map_setup,
		.run = osm_mem_page_fault_run,
		.teardown = osm_mem_map_teardown,
	},
};

const struct osm_family osm_family_mem = {
	"mem", "memory hierarchy: latency curve, bandwidth, page faults, mmap/munmap",
	mem_benches, ARRAY_SIZE(mem_benches),
};
