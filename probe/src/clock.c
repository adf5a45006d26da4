/* clock.c - clock choice and calibration. */
#include "clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler.h"

enum osm_clock_kind osm_clock_kind = OSM_CLOCK_MONO_RAW;
double osm_clock_tick_ns = 1.0;
static struct osm_clock_info info;

const char *osm_clock_names(void)
{
#if OSM_HAVE_CYCLE_COUNTER
	return OSM_COUNTER_NAME " monotonic_raw monotonic";
#else
	return "monotonic_raw monotonic";
#endif
}

/* A (CLOCK_MONOTONIC_RAW, counter) pair read as close together as possible:
 * of five tries, keep the one whose two raw reads bracket the counter read
 * most tightly, and take the raw time as the bracket's midpoint. */
struct pair {
	int64_t raw_ns;
	uint64_t ticks;
};

static struct pair read_pair(void)
{
	struct pair best = {0, 0};
	int64_t best_gap = INT64_MAX;
	for (int k = 0; k < 5; k++) {
		int64_t r0 = osm_mono_raw_ns();
		uint64_t c = osm_arch_counter_start();
		int64_t r1 = osm_mono_raw_ns();
		if (r1 - r0 < best_gap) {
			best_gap = r1 - r0;
			best.raw_ns = r0 + (r1 - r0) / 2;
			best.ticks = c;
		}
	}
	return best;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* Resolution: the smallest non-zero step between back-to-back reads.
 * Overhead: the median of (stop - start) with nothing between them, i.e. what
 * an empty timed region costs. Both in ns. */
static void measure_resolution_and_overhead(void)
{
	enum { N = 2001 };
	uint64_t d[N];
	uint64_t min_step = UINT64_MAX;
	for (int i = 0; i < N; i++) {
		uint64_t a = osm_clock_start();
		uint64_t b = osm_clock_start();
		if (b > a && b - a < min_step)
			min_step = b - a;
	}
	for (int i = 0; i < N; i++) {
		uint64_t a = osm_clock_start();
		uint64_t b = osm_clock_stop();
		d[i] = b - a;
	}
	qsort(d, N, sizeof(d[0]), cmp_u64);
	info.resolution_ns = min_step == UINT64_MAX ? 0 : osm_ticks_to_ns(min_step);
	info.overhead_ns = osm_ticks_to_ns(d[N / 2]);
}

int osm_clock_init(const char *forced, int calibration_ms, char *err, size_t errlen)
{
	memset(&info, 0, sizeof(info));
	info.invariant = -1;
	int want_counter = 0, want_mono = 0;
	if (forced) {
		info.forced = 1;
		if (!strcmp(forced, "monotonic_raw")) {
			want_counter = 0;
		} else if (!strcmp(forced, "monotonic")) {
			want_mono = 1;
		}
#if OSM_HAVE_CYCLE_COUNTER
		else if (!strcmp(forced, OSM_COUNTER_NAME)) {
			if (!osm_arch_counter_usable()) {
				snprintf(err, errlen, "clock '%s' is not usable on this CPU"
					 " (not invariant or not readable); allowed: monotonic_raw, monotonic", forced);
				return -1;
			}
			want_counter = 1;
		}
#endif
		else {
			snprintf(err, errlen, "unknown clock '%s'; allowed on this machine: %s",
				 forced, osm_clock_names());
			return -1;
		}
	} else {
		want_counter = OSM_HAVE_CYCLE_COUNTER && osm_arch_counter_usable();
	}

#if OSM_HAVE_CYCLE_COUNTER
	if (!strcmp(OSM_COUNTER_NAME, "tsc"))
		info.invariant = osm_arch_counter_usable();
#endif

	if (want_counter) {
		/* Calibrate the counter's rate against CLOCK_MONOTONIC_RAW over
		 * calibration_ms. With ~50 ns of read uncertainty at each end,
		 * 50 ms gives the rate to about 2 parts per million. */
		struct pair a = read_pair();
		struct timespec ts = {calibration_ms / 1000, (long)(calibration_ms % 1000) * 1000000L};
		nanosleep(&ts, NULL);
		struct pair b = read_pair();
		if (b.ticks <= a.ticks || b.raw_ns <= a.raw_ns) {
			snprintf(err, errlen, "clock calibration failed: counter did not advance");
			return -1;
		}
		osm_clock_kind = OSM_CLOCK_COUNTER;
		info.source = OSM_COUNTER_NAME;
		info.hz = (double)(b.ticks - a.ticks) * 1e9 / (double)(b.raw_ns - a.raw_ns);
		info.calibration_ns = (double)(b.raw_ns - a.raw_ns);
	} else {
		osm_clock_kind = want_mono ? OSM_CLOCK_MONO : OSM_CLOCK_MONO_RAW;
		info.source = want_mono ? "monotonic" : "monotonic_raw";
		info.hz = 1e9;
		info.calibration_ns = 0;
	}
	info.tick_ns = 1e9 / info.hz;
	osm_clock_tick_ns = info.tick_ns;
	measure_resolution_and_overhead();
	return 0;
}

const struct osm_clock_info *osm_clock_get_info(void)
{
	return &info;
}

int osm_clocksource_listed(const char *available, const char *name)
{
	char buf[512];
	snprintf(buf, sizeof(buf), "%s", available);
	for (char *save = NULL, *t = strtok_r(buf, " \n", &save); t; t = strtok_r(NULL, " \n", &save))
		if (!strcmp(t, name))
			return 1;
	return 0;
}

int osm_clock_kernel_tsc_stable(void)
{
#if defined(__x86_64__)
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/available_clocksource", "r");
	if (!f)
		return -1;
	char buf[512] = "";
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	return osm_clocksource_listed(buf, "tsc");
#else
	return -1;
#endif
}
