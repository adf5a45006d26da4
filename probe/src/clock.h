/* clock.h - the probe's one clock: an invariant hardware counter where the
 * architecture has one (arch/), else CLOCK_MONOTONIC_RAW. Chosen once at
 * start-up; `--clock NAME` forces one so each can be tested, and
 * `--clock monotonic` times with CLOCK_MONOTONIC as LEBench does (the
 * default of `run --lebench-exact`). */
#ifndef OSM_CLOCK_H
#define OSM_CLOCK_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "arch/arch.h"

enum osm_clock_kind {
	OSM_CLOCK_COUNTER,  /* tsc / cntvct */
	OSM_CLOCK_MONO_RAW, /* clock_gettime(CLOCK_MONOTONIC_RAW) */
	OSM_CLOCK_MONO,     /* clock_gettime(CLOCK_MONOTONIC): LEBench's clock */
};

struct osm_clock_info {
	const char *source;   /* "tsc", "cntvct", "monotonic_raw", "monotonic" */
	int forced;           /* chosen with --clock */
	double hz;            /* ticks per second */
	double tick_ns;       /* 1e9 / hz */
	double resolution_ns; /* smallest non-zero step seen between consecutive reads */
	double overhead_ns;   /* median cost of an empty timed region */
	int invariant;        /* 1/0 for tsc, -1 where it does not apply */
	double calibration_ns;/* length of the calibration interval */
};

extern enum osm_clock_kind osm_clock_kind;
extern double osm_clock_tick_ns;

static inline int64_t osm_mono_raw_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline int64_t osm_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Read at the start of a timed region: ordered after earlier work. */
static inline uint64_t osm_clock_start(void)
{
	if (osm_clock_kind == OSM_CLOCK_COUNTER)
		return osm_arch_counter_start();
	if (osm_clock_kind == OSM_CLOCK_MONO)
		return (uint64_t)osm_mono_ns();
	return (uint64_t)osm_mono_raw_ns();
}

/* Read at the end of a timed region: ordered before later work. */
static inline uint64_t osm_clock_stop(void)
{
	if (osm_clock_kind == OSM_CLOCK_COUNTER)
		return osm_arch_counter_stop();
	if (osm_clock_kind == OSM_CLOCK_MONO)
		return (uint64_t)osm_mono_ns();
	return (uint64_t)osm_mono_raw_ns();
}

static inline double osm_ticks_to_ns(uint64_t ticks)
{
	return (double)ticks * osm_clock_tick_ns;
}

/* Names --clock accepts on this build ("tsc monotonic_raw monotonic" on x86-64). */
const char *osm_clock_names(void);
/* Choose and calibrate. forced == NULL picks the best usable clock.
 * Returns 0, or -1 with a message in err (unknown or unusable clock). */
int osm_clock_init(const char *forced, int calibration_ms, char *err, size_t errlen);
const struct osm_clock_info *osm_clock_get_info(void);
/* Whether the kernel still trusts the TSC: 1 when "tsc" is among its
 * available clocksources, 0 when it is not (the kernel marked it unstable:
 * an unstable TSC loses CLOCK_SOURCE_VALID_FOR_HRES and leaves the list),
 * -1 when that cannot be told (not x86, no sysfs). */
int osm_clock_kernel_tsc_stable(void);
/* Whether `name` is a whole word of `available` (available_clocksource's text). */
int osm_clocksource_listed(const char *available, const char *name);

#endif
