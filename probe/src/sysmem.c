/* sysmem.c - see sysmem.h. */
#include "sysmem.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int64_t osm_meminfo_bytes(const char *key)
{
	FILE *f = fopen("/proc/meminfo", "r");
	if (!f)
		return -1;
	char line[256];
	size_t kl = strlen(key);
	int64_t v = -1;
	while (fgets(line, sizeof(line), f)) {
		long long kb;
		if (!strncmp(line, key, kl) && line[kl] == ':' && sscanf(line + kl + 1, "%lld", &kb) == 1) {
			v = (int64_t)kb * 1024;
			break;
		}
	}
	fclose(f);
	return v;
}

int64_t osm_read_i64(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	long long v;
	int ok = fscanf(f, "%lld", &v) == 1;
	fclose(f);
	return ok ? (int64_t)v : -1;
}

/* limit - usage from two files; -1 when there is no (finite) limit. v1
 * writes "no limit" as a number near 2^63, v2 as "max". */
static int64_t headroom(const char *limit_file, const char *usage_file)
{
	int64_t lim = osm_read_i64(limit_file), use = osm_read_i64(usage_file);
	if (lim <= 0 || use < 0 || lim >= ((int64_t)1 << 60))
		return -1;
	return lim > use ? lim - use : 0;
}

static int64_t smaller(int64_t best, int64_t h)
{
	return h >= 0 && (best < 0 || h < best) ? h : best;
}

int64_t osm_cgroup_headroom(void)
{
	FILE *f = fopen("/proc/self/cgroup", "r");
	if (!f)
		return -1;
	char line[1024], lim[PATH_MAX + 64], use[PATH_MAX + 64];
	int64_t best = -1;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		char *c1 = strchr(line, ':');
		char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c2 = 0;
		const char *ctrl = c1 + 1;
		char path[PATH_MAX];
		snprintf(path, sizeof(path), "%s", c2 + 1);
		if (!strcmp(line, "0") && !*ctrl) {
			/* cgroup v2: a limit on any ancestor applies too. */
			for (;;) {
				const char *p = strcmp(path, "/") ? path : "";
				snprintf(lim, sizeof(lim), "/sys/fs/cgroup%s/memory.max", p);
				snprintf(use, sizeof(use), "/sys/fs/cgroup%s/memory.current", p);
				best = smaller(best, headroom(lim, use));
				char *slash = strrchr(path, '/');
				if (!slash || slash == path)
					break;
				*slash = 0;
			}
		} else if (strstr(ctrl, "memory")) { /* cgroup v1 */
			snprintf(lim, sizeof(lim), "/sys/fs/cgroup/memory%s/memory.limit_in_bytes", path);
			snprintf(use, sizeof(use), "/sys/fs/cgroup/memory%s/memory.usage_in_bytes", path);
			best = smaller(best, headroom(lim, use));
		}
	}
	fclose(f);
	return best;
}

#define PFN_MASK ((UINT64_C(1) << 55) - 1)
#define PM_PRESENT (UINT64_C(1) << 63)
#define KPF_COMPOUND_TAIL (UINT64_C(1) << 16)

int64_t osm_file_folios(int fd, size_t bytes)
{
	long psz = sysconf(_SC_PAGESIZE);
	if (psz <= 0 || bytes == 0 || bytes > SIZE_MAX / 2)
		return -1;
	size_t pages = (bytes + (size_t)psz - 1) / (size_t)psz, len = pages * (size_t)psz;
	int kf = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	if (kf < 0)
		return -1;
	int pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	uint64_t *ent = malloc(pages * sizeof(*ent));
	volatile const char *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	int64_t count = -1;
	if (pm >= 0 && ent && m != MAP_FAILED) {
		for (size_t i = 0; i < pages; i++)
			(void)m[i * (size_t)psz]; /* mapped: its frame is in pagemap */
		off_t at = (off_t)((uintptr_t)m / (uintptr_t)psz * sizeof(*ent));
		if (pread(pm, ent, pages * sizeof(*ent), at) == (ssize_t)(pages * sizeof(*ent)))
			count = 0;
		for (size_t i = 0; count >= 0 && i < pages; i++) {
			uint64_t fl, pfn = ent[i] & PFN_MASK;
			if (!(ent[i] & PM_PRESENT) || !pfn || pread(kf, &fl, sizeof(fl), (off_t)(pfn * sizeof(fl))) != sizeof(fl))
				count = -1; /* no frame number: not CAP_SYS_ADMIN */
			else if (!(fl & KPF_COMPOUND_TAIL))
				count++;
		}
	}
	if (m != MAP_FAILED)
		munmap((void *)m, len);
	free(ent);
	if (pm >= 0)
		close(pm);
	close(kf);
	return count;
}
