/* affinity.h - CPU pinning, the least-busy CPU, SCHED_FIFO and mlockall. */
#ifndef OSM_AFFINITY_H
#define OSM_AFFINITY_H

#include <stddef.h>

/* CPUs this process may run on (its affinity mask before the first
 * osm_pin_self()), ascending; returns count. */
int osm_allowed_cpus(int *cpus, int max);
/* The allowed CPU with the most idle time over ~sample_ms (from /proc/stat),
 * or the first allowed CPU when /proc/stat is unreadable. */
int osm_least_busy_cpu(int sample_ms);
/* The same in two halves, so the sample can overlap other waiting (the
 * clock's calibration): _begin() takes the first reading, _end() sleeps
 * what is left of sample_ms since then, takes the second and chooses. */
void osm_least_busy_begin(void);
int osm_least_busy_end(int sample_ms);
/* Pin the calling thread. Returns 0 or -1 with errno. */
int osm_pin_self(int cpu);
/* Another allowed CPU than `cpu` (for cross-CPU placements), or -1. */
int osm_other_cpu(int cpu);

/* SCHED_FIFO at prio for the calling thread. Returns 0, or -1 with a reason
 * the user can act on (e.g. "needs root or CAP_SYS_NICE"). */
int osm_set_fifo(int prio, char *why, size_t len);
/* mlockall(MCL_CURRENT | MCL_FUTURE). Returns 0 or -1 with a reason. */
int osm_lock_memory(char *why, size_t len);

#endif
