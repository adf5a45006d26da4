/* x86_64.h - the time-stamp counter.
 *
 * Rate: on CPUs with an invariant TSC (CPUID 0x80000007 EDX bit 8) the TSC
 * ticks at a constant nominal rate whatever the core frequency or C-state, so
 * it is a clock, not a cycle counter: one tick is a "reference cycle". The
 * rate is calibrated against CLOCK_MONOTONIC_RAW (clock.c).
 * Ordering: rdtsc is not serialising. The start read is `lfence; rdtsc` so
 * earlier instructions have finished; the stop read is `rdtscp; lfence` so the
 * timed code has finished before it and later code does not start early.
 */
#ifndef OSM_ARCH_X86_64_H
#define OSM_ARCH_X86_64_H

#include <stdint.h>
#include <cpuid.h>

#define OSM_ARCH_NAME "x86_64"
#define OSM_HAVE_CYCLE_COUNTER 1
#define OSM_COUNTER_NAME "tsc"

static inline uint64_t osm_arch_counter_start(void)
{
	uint32_t lo, hi;
	__asm__ volatile("lfence\n\trdtsc" : "=a"(lo), "=d"(hi) : : "memory");
	return ((uint64_t)hi << 32) | lo;
}

static inline uint64_t osm_arch_counter_stop(void)
{
	uint32_t lo, hi, aux;
	__asm__ volatile("rdtscp\n\tlfence" : "=a"(lo), "=d"(hi), "=c"(aux) : : "memory");
	return ((uint64_t)hi << 32) | lo;
}

static inline double osm_arch_counter_hz(void)
{
	return 0; /* calibrated; CPUID leaf 0x15 is often absent in guests */
}

/* 1 when CPUID says the TSC is invariant and rdtscp exists. */
static inline int osm_arch_counter_usable(void)
{
	unsigned a, b, c, d;
	if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
		return 0;
	__get_cpuid(0x80000001u, &a, &b, &c, &d);
	if (!(d & (1u << 27))) /* RDTSCP */
		return 0;
	__get_cpuid(0x80000007u, &a, &b, &c, &d);
	return (d >> 8) & 1; /* invariant TSC */
}

#endif
