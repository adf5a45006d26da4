/* cpu.c - cpu.*: the cost of reading the clock, of an empty loop iteration,
 * and of a procedure call with 0-7 integer arguments (lmbench lat_ops-style
 * floor figures that every other result sits on). Method: docs/methods/cpu.md */
#include <stdint.h>
#include <time.h>

#include "../bench.h"
#include "../clock.h"
#include "../compiler.h"

/* cpu.timer_overhead: `batch` back-to-back reads of one clock. For the probe's
 * own clock the read is the stop read (rdtscp; lfence on x86-64), the one
 * that closes every timed region, so this is the price of a clock read in
 * osmeter's measurements. Each value is consumed so no read is dropped. */
static const char *const timer_sources[] = {"probe", "monotonic_raw", "monotonic", "realtime", NULL};

static int timer_run(struct osm_ctx *ctx, uint64_t batch)
{
	struct timespec ts;
	switch (osm_param_int(ctx, "source")) {
	case 0:
		for (uint64_t i = 0; i < batch; i++)
			OSM_KEEP(osm_clock_stop());
		break;
	case 1:
		for (uint64_t i = 0; i < batch; i++) {
			clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
			OSM_KEEP(ts.tv_nsec);
		}
		break;
	case 2:
		for (uint64_t i = 0; i < batch; i++) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			OSM_KEEP(ts.tv_nsec);
		}
		break;
	default:
		for (uint64_t i = 0; i < batch; i++) {
			clock_gettime(CLOCK_REALTIME, &ts);
			OSM_KEEP(ts.tv_nsec);
		}
		break;
	}
	return OSM_OK;
}

/* cpu.loop_overhead: one iteration of an empty counted loop whose counter
 * is kept alive (OSM_KEEP), i.e. what a batch loop adds per operation. */
static int loop_run(struct osm_ctx *ctx, uint64_t batch)
{
	(void)ctx;
	for (uint64_t i = 0; i < batch; i++)
		OSM_KEEP(i);
	return OSM_OK;
}

/* cpu.call: a call to a function the compiler may not inline, clone or
 * analyse (OSM_NOIPA), with N integer arguments, whose result is consumed.
 * Trap: a plain `noinline` pure function can still be hoisted out of the
 * loop by interprocedural analysis; noipa forbids that. Includes one loop
 * iteration (cpu.loop_overhead). */
OSM_NOIPA static long f0(void) { return 1; }
OSM_NOIPA static long f1(long a) { return a; }
OSM_NOIPA static long f2(long a, long b) { return a + b; }
OSM_NOIPA static long f3(long a, long b, long c) { return a + b + c; }
OSM_NOIPA static long f4(long a, long b, long c, long d) { return a + b + c + d; }
OSM_NOIPA static long f5(long a, long b, long c, long d, long e) { return a + b + c + d + e; }
OSM_NOIPA static long f6(long a, long b, long c, long d, long e, long f)
{
	return a + b + c + d + e + f;
}
OSM_NOIPA static long f7(long a, long b, long c, long d, long e, long f, long g)
{
	return a + b + c + d + e + f + g;
}

static int call_run(struct osm_ctx *ctx, uint64_t batch)
{
	long acc = 0;
	long n = (long)batch;
	switch (osm_param_int(ctx, "args")) {
	case 0: for (long i = 0; i < n; i++) acc += f0(); break;
	case 1: for (long i = 0; i < n; i++) acc += f1(i); break;
	case 2: for (long i = 0; i < n; i++) acc += f2(i, 2); break;
	case 3: for (long i = 0; i < n; i++) acc += f3(i, 2, 3); break;
	case 4: for (long i = 0; i < n; i++) acc += f4(i, 2, 3, 4); break;
	case 5: for (long i = 0; i < n; i++) acc += f5(i, 2, 3, 4, 5); break;
	case 6: for (long i = 0; i < n; i++) acc += f6(i, 2, 3, 4, 5, 6); break;
	default: for (long i = 0; i < n; i++) acc += f7(i, 2, 3, 4, 5, 6, 7); break;
	}
	OSM_KEEP(acc);
	return OSM_OK;
}

static const struct osm_param timer_params[] = {
	{.name = "source", .type = OSM_P_ENUM, .choices = timer_sources, .def = 0,
	 .help = "clock read: probe (the probe's own timer), or a clock_gettime clock"},
	{0},
};

static const struct osm_param call_params[] = {
	{.name = "args", .type = OSM_P_INT, .def = 0, .min = 0, .max = 7,
	 .help = "number of integer arguments passed"},
	{0},
};

static const struct osm_bench cpu_benches[] = {
	{
		.name = "timer_overhead",
		.desc = "cost of one clock read",
		.unit = OSM_UNIT_NS,
		.suites = OSM_SUITES_ALL,
		.params = timer_params,
		.sweep = "source=probe;source=monotonic_raw;source=monotonic;source=realtime",
		.run = timer_run,
	},
	{
		.name = "loop_overhead",
		.desc = "one iteration of an empty counted loop",
		.unit = OSM_UNIT_NS,
		.suites = OSM_SUITES_ALL,
		.run = loop_run,
	},
	{
		.name = "call",
		.desc = "procedure call with N integer arguments",
		.unit = OSM_UNIT_NS,
		.suites = OSM_SUITES_ALL,
		.params = call_params,
		.sweep = "args=0;args=1;args=2;args=3;args=4;args=5;args=6;args=7",
		.run = call_run,
	},
};

const struct osm_family osm_family_cpu = {
	"cpu", "processor floor costs: clock read, loop, procedure call",
	cpu_benches, ARRAY_SIZE(cpu_benches),
};
