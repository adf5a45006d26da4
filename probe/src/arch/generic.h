/* generic.h - no user-readable counter is used on this architecture
 * (armv7 has none by default; riscv64's rdtime may trap or run at an unknown
 * rate). The clock is clock_gettime(CLOCK_MONOTONIC_RAW) through the vDSO. */
#ifndef OSM_ARCH_GENERIC_H
#define OSM_ARCH_GENERIC_H

#include <stdint.h>

#if defined(__arm__)
#define OSM_ARCH_NAME "arm"
#elif defined(__riscv) && __riscv_xlen == 64
#define OSM_ARCH_NAME "riscv64"
#else
#define OSM_ARCH_NAME "generic"
#endif
#define OSM_HAVE_CYCLE_COUNTER 0
#define OSM_COUNTER_NAME NULL

static inline uint64_t osm_arch_counter_start(void) { return 0; }
static inline uint64_t osm_arch_counter_stop(void) { return 0; }
static inline double osm_arch_counter_hz(void) { return 0; }
static inline int osm_arch_counter_usable(void) { return 0; }

#endif
