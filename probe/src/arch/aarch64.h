/* aarch64.h - the generic timer's virtual count, cntvct_el0.
 *
 * Rate: cntfrq_el0 states it (typically 19.2 MHz to 1 GHz; 1 GHz is required
 * from Armv8.6). It is a clock, not a core-cycle counter, so cycles are not
 * reported from it. Ordering: `isb` before the read keeps it from being
 * executed early; another `isb` after the stop read keeps later code out.
 */
#ifndef OSM_ARCH_AARCH64_H
#define OSM_ARCH_AARCH64_H

#include <stdint.h>

#define OSM_ARCH_NAME "aarch64"
#define OSM_HAVE_CYCLE_COUNTER 1
#define OSM_COUNTER_NAME "cntvct"

static inline uint64_t osm_arch_counter_start(void)
{
	uint64_t v;
	__asm__ volatile("isb\n\tmrs %0, cntvct_el0" : "=r"(v) : : "memory");
	return v;
}

static inline uint64_t osm_arch_counter_stop(void)
{
	uint64_t v;
	__asm__ volatile("isb\n\tmrs %0, cntvct_el0\n\tisb" : "=r"(v) : : "memory");
	return v;
}

static inline double osm_arch_counter_hz(void)
{
	uint64_t f;
	__asm__ volatile("mrs %0, cntfrq_el0" : "=r"(f));
	return (double)f;
}

static inline int osm_arch_counter_usable(void)
{
	return osm_arch_counter_hz() > 0;
}

#endif
