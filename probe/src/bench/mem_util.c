/* mem_util.c - helpers shared by the mem family (see mem.h): how much memory
 * a benchmark may take, huge-page regions and their real backing, and the
 * sysfs facts the defaults depend on.
 *
 * Trap (the reason osm_mem_fit exists): mmap of more memory than the machine
 * can back succeeds under overcommit and the OOM killer strikes only when the
 * pages are touched, killing the probe (or something else) mid-run. Every mem
 * benchmark checks its footprint against the headroom before it maps
 * anything, and skips with a reason instead. */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "mem.h"
#include "../sysmem.h"

#define SLACK_BYTES ((int64_t)64 << 20)

static double mib(int64_t b)
{
	return (double)b / (1024.0 * 1024.0);
}

int64_t osm_mem_headroom(char *why, size_t len)
{
	int64_t best = -1;
	snprintf(why, len, "no memory limit could be read");
	int64_t avail = osm_meminfo_bytes("MemAvailable");
	if (avail >= 0) {
		best = avail / 2;
		snprintf(why, len, "half of MemAvailable (%.0f MiB)", mib(avail));
	}
	int64_t cg = osm_cgroup_headroom();
	if (cg >= 0 && (best < 0 || cg - SLACK_BYTES < best)) {
		best = cg > SLACK_BYTES ? cg - SLACK_BYTES : 0;
		snprintf(why, len, "the memory cgroup's limit less its usage (%.0f MiB) less 64 MiB", mib(cg));
	}
	if ((uint64_t)SIZE_MAX <= UINT32_MAX) {
		/* A 32-bit process: a quarter of its address space, whatever the
		 * machine has (qemu-user reports the host's MemAvailable). */
		int64_t cap = (int64_t)(SIZE_MAX / 4);
		if (best < 0 || cap < best) {
			best = cap;
			snprintf(why, len, "a quarter of a 32-bit address space");
		}
	}
	struct rlimit rl;
	if (!getrlimit(RLIMIT_AS, &rl) && rl.rlim_cur != RLIM_INFINITY) {
		long long pages = 0;
		FILE *f = fopen("/proc/self/statm", "r");
		if (f) {
			if (fscanf(f, "%lld", &pages) != 1)
				pages = 0;
			fclose(f);
		}
		int64_t used = (int64_t)pages * sysconf(_SC_PAGESIZE);
		int64_t h = (int64_t)rl.rlim_cur - used - SLACK_BYTES;
		if (h < 0)
			h = 0;
		if (best < 0 || h < best) {
			best = h;
			snprintf(why, len, "the address-space limit RLIMIT_AS (ulimit -v: %.0f MiB, %.0f MiB in use) less 64 MiB",
				 mib((int64_t)rl.rlim_cur), mib(used));
		}
	}
	return best;
}

int osm_mem_fit(struct osm_ctx *ctx, const char *what, int64_t need)
{
	char why[256];
	if ((uint64_t)need > SIZE_MAX / 2)
		return osm_fail(ctx, OSM_SKIP, "%s needs %.1f MiB, more than a %zu-bit process can map",
				what, mib(need), sizeof(void *) * 8);
	int64_t h = osm_mem_headroom(why, sizeof(why));
	if (h < 0 || need <= h)
		return OSM_OK;
	return osm_fail(ctx, OSM_SKIP,
			"%s needs %.1f MiB but at most %.1f MiB may be used here (%s); "
			"choose a smaller size or free memory", what, mib(need), mib(h), why);
}

int osm_mem_disk_fit(struct osm_ctx *ctx, const char *dir, int64_t need)
{
	struct statvfs sv;
	if (statvfs(dir, &sv))
		return OSM_OK; /* the write itself will say what is wrong */
	int64_t free_b = (int64_t)sv.f_bavail * (int64_t)sv.f_frsize;
	if (need + need / 20 <= free_b)
		return OSM_OK;
	return osm_fail(ctx, OSM_SKIP,
			"needs a %.1f MiB file but %s has %.1f MiB free; set TMPDIR to a roomier file system",
			mib(need), dir, mib(free_b));
}

int64_t osm_mem_llc_bytes(void)
{
	int64_t best = 0;
	int best_level = 0;
	char path[128], type[32];
	for (int i = 0; i < 16; i++) {
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
		int64_t level = osm_read_i64(path);
		if (level < 0)
			break;
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
		FILE *f = fopen(path, "r");
		if (!f || !fgets(type, sizeof(type), f)) {
			if (f)
				fclose(f);
			continue;
		}
		fclose(f);
		if (!strncmp(type, "Instruction", 11))
			continue;
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
		f = fopen(path, "r");
		long long v;
		char unit = 0;
		int n = f ? fscanf(f, "%lld%c", &v, &unit) : 0;
		if (f)
			fclose(f);
		if (n < 1)
			continue;
		int64_t b = v;
		if (unit == 'K')
			b <<= 10;
		else if (unit == 'M')
			b <<= 20;
		else if (unit == 'G')
			b <<= 30;
		if (level > best_level || (level == best_level && b > best)) {
			best = b;
			best_level = (int)level;
		}
	}
	return best;
}

const char *osm_mem_thp_mode(char *buf, size_t len)
{
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
	char line[256];
	if (!f)
		return NULL;
	int ok = fgets(line, sizeof(line), f) != NULL;
	fclose(f);
	char *a = ok ? strchr(line, '[') : NULL;
	char *b = a ? strchr(a, ']') : NULL;
	if (!b)
		return NULL;
	snprintf(buf, len, "%.*s", (int)(b - a - 1), a + 1);
	return buf;
}

int osm_thp_check(struct osm_ctx *ctx, char *mode, size_t len)
{
	char buf[32];
	if (!mode) {
		mode = buf;
		len = sizeof(buf);
	}
	if (!osm_mem_thp_mode(mode, len))
		return osm_fail(ctx, OSM_SKIP, "thp=1: this kernel has no transparent huge pages "
				"(/sys/kernel/mm/transparent_hugepage is missing)");
	if (!strcmp(mode, "never"))
		return osm_fail(ctx, OSM_SKIP, "thp=1: transparent huge pages are off (mode 'never'; "
				"as root: echo madvise > /sys/kernel/mm/transparent_hugepage/enabled)");
	return OSM_OK;
}

int osm_thp_granted(struct osm_ctx *ctx, double fraction)
{
	if (fraction < 0 || fraction >= 0.9)
		return OSM_OK;
	return osm_fail(ctx, OSM_SKIP, "thp=1: only %.0f %% of the memory got transparent huge pages "
			"(memory too fragmented? see thp_defrag)", 100 * fraction);
}

int osm_region_map(struct osm_region *r, size_t len, int thp)
{
	memset(r, 0, sizeof(*r));
	size_t want = len;
	size_t extra = 0;
	if (thp) {
		/* A huge page needs a 2 MiB-aligned 2 MiB range inside the VMA:
		 * round the length up and map one huge page more to align. */
		want = (len + OSM_MEM_HUGE_BYTES - 1) & ~(OSM_MEM_HUGE_BYTES - 1);
		extra = OSM_MEM_HUGE_BYTES;
	}
	void *m = mmap(NULL, want + extra, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return -1;
	r->map = m;
	r->maplen = want + extra;
	uintptr_t p = (uintptr_t)m;
	if (thp)
		p = (p + OSM_MEM_HUGE_BYTES - 1) & ~(uintptr_t)(OSM_MEM_HUGE_BYTES - 1);
	r->p = (char *)p;
	r->len = want;
	if (thp == OSM_THP_SYSTEM)
		return 0; /* no advice: the system's setting decides */
#ifdef MADV_HUGEPAGE
	if (madvise(r->p, r->len, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) && thp) {
		int e = errno;
		osm_region_unmap(r);
		errno = e;
		return -1;
	}
#else
	if (thp) {
		osm_region_unmap(r);
		errno = ENOTSUP;
		return -1;
	}
#endif
	return 0;
}

void osm_region_unmap(struct osm_region *r)
{
	if (r->map)
		munmap(r->map, r->maplen);
	memset(r, 0, sizeof(*r));
}

double osm_region_huge_fraction(const struct osm_region *r)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	if (!f)
		return -1;
	char line[512];
	uintptr_t addr = (uintptr_t)r->p;
	int in = 0;
	int64_t huge = 0, size = 0;
	int found = 0;
	while (fgets(line, sizeof(line), f)) {
		uintptr_t lo, hi;
		/* A mapping header is "start-end perms offset dev inode path". */
		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			if (in)
				break;
			in = addr >= lo && addr < hi;
			continue;
		}
		long long kb;
		if (in && sscanf(line, "AnonHugePages: %lld kB", &kb) == 1) {
			huge = (int64_t)kb * 1024;
			found = 1;
		} else if (in && sscanf(line, "Size: %lld kB", &kb) == 1) {
			size = (int64_t)kb * 1024;
		}
	}
	fclose(f);
	if (!found || size <= 0)
		return -1;
	/* The VMA may be larger than the usable area (alignment slack). */
	double frac = (double)huge / (double)r->len;
	return frac > 1 ? 1 : frac;
}
