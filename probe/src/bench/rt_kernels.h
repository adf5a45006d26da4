/* rt_kernels.h - the 19 periodic real-time workload kernels of the rt study
 * (TACLeBench's single-path set, written for osmeter from the kernels'
 * descriptions). One job of a kernel initialises its inputs from a fixed
 * seed, computes, and returns a 32-bit checksum of its results, the same on
 * every job and on every architecture. Method: docs/methods/rt-kernels.md
 *
 * The kernels keep their data in static arrays: a job is not reentrant
 * (one job at a time per process). */
#ifndef OSM_BENCH_RT_KERNELS_H
#define OSM_BENCH_RT_KERNELS_H

#include <stddef.h>
#include <stdint.h>

struct osm_rt_kernel {
	const char *name;
	const char *desc;   /* one line: what one job computes and its data size */
	size_t ws_bytes;    /* the job's data working set in bytes */
	uint32_t (*run)(void); /* one job: initialise its inputs deterministically
				* (every job does the same work), compute,
				* return a 32-bit checksum of the results */
	uint32_t expected;  /* the checksum run() must return, computed
			     * independently by tests/probe/rt_kernels_ref.py */
};

extern const struct osm_rt_kernel osm_rt_kernels[];
extern const size_t osm_rt_n_kernels;
/* The kernels' names in table order, NULL-terminated (an enum's choices). */
extern const char *const osm_rt_kernel_names[];

/* The kernel called `name`, or NULL. */
const struct osm_rt_kernel *osm_rt_kernel_find(const char *name);

#endif
