/* sysmem.h - how much memory the machine and this process's cgroup can
 * spare. Shared by every benchmark that must refuse a size up front rather
 * than meet the OOM killer (mem.*, task.* with a large parent). */
#ifndef OSM_SYSMEM_H
#define OSM_SYSMEM_H

#include <stddef.h>
#include <stdint.h>

/* First integer in a file; -1 when absent or not a number (e.g. "max"). */
int64_t osm_read_i64(const char *path);
/* "Key:   12345 kB" from /proc/meminfo, in bytes; -1 when absent. */
int64_t osm_meminfo_bytes(const char *key);
/* The smallest (limit - usage) of this process's memory cgroup and, on
 * cgroup v2, its ancestors; -1 when no limit applies or none can be read. */
int64_t osm_cgroup_headroom(void);

/* Page-cache folios over the first `bytes` of the file open as fd
 * (readable, at least that long; whole pages of the system's size): a folio
 * starts at every page that is not a compound tail. Each page is mapped
 * (MAP_SHARED, PROT_READ) and read once, and its frame looked up in
 * /proc/self/pagemap and /proc/kpageflags, which need CAP_SYS_ADMIN: -1 when
 * they cannot be read, or a page is not in the page cache. */
int64_t osm_file_folios(int fd, size_t bytes);

#endif
