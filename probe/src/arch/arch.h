/* arch.h - picks the one architecture header for this target.
 *
 * Each header defines:
 *   OSM_ARCH_NAME                 "x86_64", "aarch64", ...
 *   OSM_HAVE_CYCLE_COUNTER        1 when a user-readable counter exists
 *   OSM_COUNTER_NAME              its clock source name ("tsc", "cntvct")
 *   osm_arch_counter_start()      read, ordered after earlier instructions
 *   osm_arch_counter_stop()       read, ordered before later instructions
 *   osm_arch_counter_hz()         nominal rate if the hardware states it, else 0
 *   osm_arch_counter_usable()     1 if the counter can be trusted as a clock
 * Everything else uses generic.h (clock_gettime(CLOCK_MONOTONIC_RAW)).
 */
#ifndef OSM_ARCH_H
#define OSM_ARCH_H

#if defined(__x86_64__)
#include "x86_64.h"
#elif defined(__aarch64__)
#include "aarch64.h"
#else
#include "generic.h"
#endif

#endif
