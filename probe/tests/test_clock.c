/* test_clock.c - clock choice and calibration: the default and forced
 * clocks initialise, unknown names fail with a message naming the allowed
 * ones, reads never go backwards, and the calibrated rate agrees with
 * CLOCK_MONOTONIC_RAW over a 100 ms sleep.
 *
 * Under qemu-user (OSM_EMULATED=1, set by CTest when cross-compiling) the
 * guest is descheduled at random for milliseconds, so the rate check only
 * tests plausibility (25 %) there; natively it is 0.5 %, best of 3 tries so
 * a busy build machine does not make it flaky. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "tap.h"

static int emulated(void)
{
	const char *e = getenv("OSM_EMULATED");
	return e && *e && strcmp(e, "0") != 0;
}

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0)
		;
}

/* 10000 back-to-back start and stop reads never decrease. */
static void check_monotonic(const char *name)
{
	int mono = 1;
	uint64_t prev = osm_clock_start();
	for (int i = 0; i < 10000; i++) {
		uint64_t t = (i & 1) ? osm_clock_stop() : osm_clock_start();
		if (t < prev) {
			mono = 0;
			diag("%s: read %d went back from %llu to %llu", name, i, (unsigned long long)prev,
			     (unsigned long long)t);
			break;
		}
		prev = t;
	}
	ok(mono, "%s: 10000 reads are monotonic", name);
}

/* Elapsed clock time vs CLOCK_MONOTONIC_RAW over a 100 ms sleep; each end
 * is a clock read bracketed by two raw reads, the raw time taken as the
 * bracket's midpoint. Returns the relative error of the best of `tries`. */
static double rate_error(int tries)
{
	double best = INFINITY;
	for (int k = 0; k < tries; k++) {
		int64_t a0 = osm_mono_raw_ns();
		uint64_t c0 = osm_clock_start();
		int64_t a1 = osm_mono_raw_ns();
		sleep_ms(100);
		int64_t b0 = osm_mono_raw_ns();
		uint64_t c1 = osm_clock_stop();
		int64_t b1 = osm_mono_raw_ns();
		double raw = (double)((b0 + b1) / 2 - (a0 + a1) / 2);
		double clk = osm_ticks_to_ns(c1 - c0);
		double e = fabs(clk / raw - 1.0);
		if (e < best)
			best = e;
		if (best < 0.001)
			break;
	}
	return best;
}

static void check_rate(const char *name)
{
	double tol = emulated() ? 0.25 : 0.005;
	double e = rate_error(3);
	ok(e <= tol, "%s: rate agrees with CLOCK_MONOTONIC_RAW over 100 ms within %g %%%s", name,
	   tol * 100, emulated() ? " (emulated: loosened)" : "");
	diag("%s: relative rate error %.3g %%", name, e * 100);
}

static void check_info(const char *want_source, int forced)
{
	const struct osm_clock_info *ci = osm_clock_get_info();
	if (want_source)
		is_str(ci->source, want_source, "source is %s", want_source);
	else
		ok(ci->source != NULL, "source is %s", ci->source ? ci->source : "(null)");
	is_int(ci->forced, forced, "%s: forced = %d", ci->source, forced);
	ok(ci->hz >= 1e6 && ci->hz <= 1e11, "%s: rate %g Hz is plausible", ci->source, ci->hz);
	is_double_near(ci->tick_ns * ci->hz, 1e9, 1e-3, "%s: tick_ns = 1e9 / hz", ci->source);
	is_double_near(osm_clock_tick_ns, ci->tick_ns, 0, "%s: osm_clock_tick_ns matches info",
		       ci->source);
	ok(ci->resolution_ns >= 0 && ci->resolution_ns < 1e6, "%s: resolution %g ns", ci->source,
	   ci->resolution_ns);
	ok(ci->overhead_ns >= 0 && ci->overhead_ns < 1e6, "%s: overhead %g ns", ci->source,
	   ci->overhead_ns);
	is_int(osm_clock_kind, !strcmp(ci->source, "monotonic_raw") ? OSM_CLOCK_MONO_RAW
			       : !strcmp(ci->source, "monotonic") ? OSM_CLOCK_MONO : OSM_CLOCK_COUNTER,
	       "%s: clock kind matches the source", ci->source);
}

int main(void)
{
	char err[256];
	diag("clocks on this build: %s%s", osm_clock_names(), emulated() ? " (emulated)" : "");
	ok(strstr(osm_clock_names(), "monotonic_raw") != NULL, "monotonic_raw is always offered");

	/* Default choice. */
	if (!ok(osm_clock_init(NULL, 50, err, sizeof(err)) == 0, "osm_clock_init(NULL) works"))
		diag("%s", err);
	check_info(NULL, 0);
	diag("default clock: %s at %.6g Hz", osm_clock_get_info()->source, osm_clock_get_info()->hz);
	check_monotonic("default");
	check_rate("default");

	/* Forced monotonic_raw. */
	if (!ok(osm_clock_init("monotonic_raw", 50, err, sizeof(err)) == 0,
		"osm_clock_init(\"monotonic_raw\") works"))
		diag("%s", err);
	check_info("monotonic_raw", 1);
	is_double_near(osm_clock_get_info()->hz, 1e9, 0, "monotonic_raw ticks in ns");
	check_monotonic("monotonic_raw");
	check_rate("monotonic_raw");

	/* The kernel's verdict on the TSC: listed among the available
	 * clocksources, or removed (marked unstable). */
	is_int(osm_clocksource_listed("tsc kvm-clock \n", "tsc"), 1, "tsc listed first");
	is_int(osm_clocksource_listed("kvm-clock tsc\n", "tsc"), 1, "tsc listed last");
	is_int(osm_clocksource_listed("kvm-clock hpet acpi_pm \n", "tsc"), 0, "tsc removed: unstable");
	is_int(osm_clocksource_listed("tsc-early kvm-clock\n", "tsc"), 0, "tsc-early is not tsc");
	is_int(osm_clocksource_listed("", "tsc"), 0, "empty list");
	{
		int k = osm_clock_kernel_tsc_stable();
		ok(k == -1 || k == 0 || k == 1, "kernel TSC verdict is -1, 0 or 1 (%d)", k);
	}

	/* Forced monotonic (CLOCK_MONOTONIC, LEBench's clock: --lebench-exact). */
	if (!ok(osm_clock_init("monotonic", 50, err, sizeof(err)) == 0,
		"osm_clock_init(\"monotonic\") works"))
		diag("%s", err);
	check_info("monotonic", 1);
	is_double_near(osm_clock_get_info()->hz, 1e9, 0, "monotonic ticks in ns");
	check_monotonic("monotonic");
	check_rate("monotonic");

	/* Unknown names fail and say what is allowed. */
	static const char *const bad[] = {"bogus", "", "MONOTONIC_RAW", "monotonic ", "mono", "tsc ",
#if defined(__x86_64__)
					  "cntvct",
#else
					  "tsc",
#endif
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		is_int(osm_clock_init(bad[i], 50, err, sizeof(err)), -1, "clock '%s' is rejected", bad[i]);
		ok(strstr(err, "monotonic_raw") != NULL, "clock '%s': message names the allowed clocks",
		   bad[i]);
		if (bad[i][0])
			ok(strstr(err, bad[i]) != NULL, "clock '%s': message names it (%s)", bad[i], err);
	}

	/* The architecture's counter, forced (tsc on x86-64, cntvct on aarch64). */
#if OSM_HAVE_CYCLE_COUNTER
	if (osm_arch_counter_usable()) {
		if (!ok(osm_clock_init(OSM_COUNTER_NAME, 50, err, sizeof(err)) == 0,
			"forced %s works", OSM_COUNTER_NAME))
			diag("%s", err);
		check_info(OSM_COUNTER_NAME, 1);
		ok(osm_clock_get_info()->calibration_ns >= 45e6,
		   "%s: calibrated over >= 45 ms (%g ns)", OSM_COUNTER_NAME,
		   osm_clock_get_info()->calibration_ns);
		check_monotonic(OSM_COUNTER_NAME);
		check_rate(OSM_COUNTER_NAME);
	} else {
		err[0] = 0;
		is_int(osm_clock_init(OSM_COUNTER_NAME, 50, err, sizeof(err)), -1,
		       "unusable %s is refused", OSM_COUNTER_NAME);
		ok(strstr(err, "not usable") != NULL, "unusable %s: message says why (%s)",
		   OSM_COUNTER_NAME, err);
		diag("%s is not usable on this CPU: forced-counter checks skipped", OSM_COUNTER_NAME);
	}
#else
	skip(1, "no user-readable counter on this architecture (generic clock only)");
#endif
	return done_testing();
}
