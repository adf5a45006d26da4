/* mem.h - internal to the mem family (bench/mem*.c): the benchmark
 * functions its table in mem.c points at, and the helpers they share
 * (memory headroom, huge-page regions and thp=1's skips, which the fork
 * study shares too, sysfs cache sizes, a PRNG).
 * Method notes: docs/methods/mem.md */
#ifndef OSM_BENCH_MEM_H
#define OSM_BENCH_MEM_H

#include <stddef.h>
#include <stdint.h>

#include "../bench.h"

#define OSM_MEM_HUGE_BYTES ((size_t)2 << 20) /* x86-64/aarch64(4K) PMD huge page */

/* --- memory headroom (mem_util.c) -------------------------------------- */

/* The most memory one benchmark may take: the smallest of half of
 * MemAvailable, the cgroup's limit minus its usage, RLIMIT_AS minus the
 * current address-space size (less 64 MiB of slack), and on a 32-bit probe a
 * quarter of the address space. `why` names the bound that decided.
 * Returns -1 when nothing could be read (no bound known). */
int64_t osm_mem_headroom(char *why, size_t len);
/* OSM_OK when `need` bytes fit the headroom, else OSM_SKIP with a message in
 * ctx->msg naming the request, the limit and what to do. Never allocates.
 * Call it with 64-bit sizes before casting them to size_t. */
int osm_mem_fit(struct osm_ctx *ctx, const char *what, int64_t need);
/* OSM_OK when the work directory's file system has `need` bytes free (plus
 * 5 %), else OSM_SKIP with the reason. */
int osm_mem_disk_fit(struct osm_ctx *ctx, const char *dir, int64_t need);

/* Size of the largest data/unified cache of CPU 0 in sysfs, or 0. */
int64_t osm_mem_llc_bytes(void);
/* "always"/"madvise"/"never" from /sys/kernel/mm/transparent_hugepage/enabled,
 * or NULL when THP is not there. */
const char *osm_mem_thp_mode(char *buf, size_t len);
/* thp=1's skips, one wording per cause wherever thp=1 is a parameter (the
 * mem family and the fork study, task_fork.c): osm_thp_check is OSM_OK when
 * this kernel has transparent huge pages and they are not off (`mode`, if
 * not NULL, gets the mode), else OSM_SKIP with the reason; osm_thp_granted
 * is OSM_OK when `fraction` (osm_region_huge_fraction) of the memory got
 * huge pages is 90 % or more, or unknown (< 0), else OSM_SKIP. */
int osm_thp_check(struct osm_ctx *ctx, char *mode, size_t len);
int osm_thp_granted(struct osm_ctx *ctx, double fraction);

/* --- anonymous regions ------------------------------------------------- */

struct osm_region {
	void *map;     /* what mmap returned */
	size_t maplen; /* its length */
	char *p;       /* start of the usable, aligned area */
	size_t len;    /* usable length (>= the request) */
};

/* The `thp` parameter's values (mem.fault_anon, task.fork*). */
enum { OSM_THP_OFF = 0, OSM_THP_ON = 1, OSM_THP_SYSTEM = 2 };
/* Maps `len` bytes of private anonymous memory. thp = 1: 2 MiB-aligned,
 * rounded up to 2 MiB and madvise(MADV_HUGEPAGE); thp = 0:
 * madvise(MADV_NOHUGEPAGE), so the region is backed by base pages whatever
 * the system THP mode; thp = 2: aligned and rounded as 1 but no madvise, so
 * the system's THP setting decides (`always` gives huge pages, `madvise`
 * and `never` base pages). Nothing is touched. Returns 0, or -1 with errno. */
int osm_region_map(struct osm_region *r, size_t len, int thp);
void osm_region_unmap(struct osm_region *r);
/* Fraction of [p, p+len) backed by transparent huge pages, from
 * AnonHugePages of its mapping in /proc/self/smaps; -1 if unreadable. */
double osm_region_huge_fraction(const struct osm_region *r);

/* --- a small PRNG (splitmix64): deterministic, no libc state ------------ */

static inline uint64_t osm_mem_rand(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

/* --- the benchmarks (table in mem.c) ------------------------------------ */

int osm_mem_bw_setup(struct osm_ctx *ctx);
int osm_mem_bw_run(struct osm_ctx *ctx, uint64_t batch);
void osm_mem_bw_teardown(struct osm_ctx *ctx);

int osm_mem_fault_anon_setup(struct osm_ctx *ctx);
int osm_mem_fault_anon_run(struct osm_ctx *ctx, uint64_t batch);
int osm_mem_fault_file_setup(struct osm_ctx *ctx);
int osm_mem_fault_minor_run(struct osm_ctx *ctx, uint64_t batch);
int osm_mem_fault_major_setup(struct osm_ctx *ctx);
int osm_mem_fault_major_run(struct osm_ctx *ctx, uint64_t batch);
void osm_mem_fault_teardown(struct osm_ctx *ctx);

int osm_mem_map_setup(struct osm_ctx *ctx);
int osm_mem_mmap_run(struct osm_ctx *ctx, uint64_t batch);
int osm_mem_munmap_run(struct osm_ctx *ctx, uint64_t batch);
int osm_mem_page_fault_run(struct osm_ctx *ctx, uint64_t batch);
void osm_mem_map_teardown(struct osm_ctx *ctx);

#endif
