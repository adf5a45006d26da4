/* cpu.c - cpu.*: the cost of reading the clock, of an empty loop iteration,
 * of a procedure call with 0-7 integer arguments (lmbench lat_ops-style
 * floor figures that every other result sits on), and LEBench's "cpu" row,
 * a fixed chain of double divisions. Method: docs/methods/cpu.md */
#include <stdint.h>
#include <time.h>

#include "../bench.h"
#include "../clock.h"
#include "../compiler.h"

/* cpu.timer_overhead: batch + 1 back-to-back reads of one clock, timed by
 * that clock itself: (last - first) / batch is one read period. For the
 * probe's own clock the read is the stop read (rdtscp; lfence on x86-64),
 * the one that closes every timed region. With batch = 1 (--lebench-exact)
 * it is two reads and their difference: LEBench's "ref" row, when the
 * source is CLOCK_MONOTONIC. Self-timed, so the harness's own clock pair
 * is not added to it. */
static const char *const timer_sources[] = {"probe", "monotonic_raw", "monotonic", "realtime", NULL};

static int64_t read_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int timer_run(struct osm_ctx *ctx, uint64_t batch)
{
	static const clockid_t ids[] = {0, CLOCK_MONOTONIC_RAW, CLOCK_MONOTONIC, CLOCK_REALTIME};
	int64_t src = osm_param_int(ctx, "source");
	if (src == 0) {
		uint64_t first = osm_clock_stop(), last = first;
		for (uint64_t i = 0; i < batch; i++)
			last = osm_clock_stop();
		ctx->self_ns = osm_ticks_to_ns(last - first);
		return OSM_OK;
	}
	clockid_t id = ids[src];
	int64_t first = read_ns(id), last = first;
	for (uint64_t i = 0; i < batch; i++)
		last = read_ns(id);
	ctx->self_ns = (double)(last - first);
	return OSM_OK;
}

/* Placement (issue 30). A loop of a few ns per iteration costs about one
 * cycle more when its body, or the callee it calls, crosses a 64-byte line
 * (measured on an AMD EPYC guest: 3.9 TSC cycles per call from a loop and
 * a callee that each sit inside one line, 4.7 when either crosses one, 5.5
 * when both do). Where the linker puts a function depends on everything
 * linked before it, so an unrelated change moved cpu.call's figure by 20 %
 * from one build to the next. Each timed loop is therefore a function of
 * its own, and each loop and callee starts a 64-byte line: the loop's
 * place in its line is decided by the compiler from this code alone.
 * extra.loop_line_offset and extra.callee_line_offset report the entry
 * points' offsets in their line (0: placed), so a build that loses the
 * alignment is seen (tests/probe/test_cpu.py). */
#define CODE_LINE 64
#if defined(__clang__)
#define PLACED __attribute__((noinline, aligned(CODE_LINE)))
#else
#define PLACED __attribute__((noinline, noclone, aligned(CODE_LINE)))
#endif

static void placed_extra(struct osm_ctx *ctx, uintptr_t loop, uintptr_t callee)
{
	osm_add_extra(ctx, "loop_line_offset", (double)(loop % CODE_LINE));
	if (callee)
		osm_add_extra(ctx, "callee_line_offset", (double)(callee % CODE_LINE));
}

/* cpu.loop_overhead: one iteration of an empty counted loop whose counter
 * is kept alive (OSM_KEEP), i.e. what a batch loop adds per operation. */
PLACED static void empty_loop(uint64_t batch)
{
	for (uint64_t i = 0; i < batch; i++)
		OSM_KEEP(i);
}

static int loop_setup(struct osm_ctx *ctx)
{
	placed_extra(ctx, (uintptr_t)empty_loop, 0);
	return OSM_OK;
}

static int loop_run(struct osm_ctx *ctx, uint64_t batch)
{
	(void)ctx;
	empty_loop(batch);
	return OSM_OK;
}

/* cpu.call: a call to a function the compiler may not inline, clone or
 * analyse (OSM_NOIPA), with N integer arguments, whose result is consumed.
 * Trap: a plain `noinline` pure function can still be hoisted out of the
 * loop by interprocedural analysis; noipa forbids that. Includes one loop
 * iteration (cpu.loop_overhead). */
#define CALLEE OSM_NOIPA __attribute__((aligned(CODE_LINE))) static long
CALLEE f0(void) { return 1; }
CALLEE f1(long a) { return a; }
CALLEE f2(long a, long b) { return a + b; }
CALLEE f3(long a, long b, long c) { return a + b + c; }
CALLEE f4(long a, long b, long c, long d) { return a + b + c + d; }
CALLEE f5(long a, long b, long c, long d, long e) { return a + b + c + d + e; }
CALLEE f6(long a, long b, long c, long d, long e, long f) { return a + b + c + d + e + f; }
CALLEE f7(long a, long b, long c, long d, long e, long f, long g) { return a + b + c + d + e + f + g; }

#define CALL_LOOP(name, call) \
	PLACED static long name(long n) \
	{ \
		long acc = 0; \
		for (long i = 0; i < n; i++) \
			acc += call; \
		return acc; \
	}
CALL_LOOP(call0, f0())
CALL_LOOP(call1, f1(i))
CALL_LOOP(call2, f2(i, 2))
CALL_LOOP(call3, f3(i, 2, 3))
CALL_LOOP(call4, f4(i, 2, 3, 4))
CALL_LOOP(call5, f5(i, 2, 3, 4, 5))
CALL_LOOP(call6, f6(i, 2, 3, 4, 5, 6))
CALL_LOOP(call7, f7(i, 2, 3, 4, 5, 6, 7))

static long (*const call_loops[])(long) = {call0, call1, call2, call3, call4, call5, call6, call7};

static int call_setup(struct osm_ctx *ctx)
{
	const uintptr_t callees[] = {
		(uintptr_t)f0, (uintptr_t)f1, (uintptr_t)f2, (uintptr_t)f3,
		(uintptr_t)f4, (uintptr_t)f5, (uintptr_t)f6, (uintptr_t)f7,
	};
	int64_t k = osm_param_int(ctx, "args");
	placed_extra(ctx, (uintptr_t)call_loops[k], callees[k]);
	return OSM_OK;
}

static int call_run(struct osm_ctx *ctx, uint64_t batch)
{
	long acc = call_loops[osm_param_int(ctx, "args")]((long)batch);
	OSM_KEEP(acc);
	return OSM_OK;
}

/* cpu.fdiv_chain: LEBench's "cpu" row (cpu_test in OS_Eval.c): n = 500 000
 * times x = x / d from x = 9903290.789798798, d = 3232.32, one dependent
 * chain, timed as a whole. The same operands as LEBench, so the same
 * values go through the divider: x underflows through the subnormals to
 * zero after about 90 divisions, and the rest divide zero. Traps: the
 * operands are hidden from the compiler (it could fold the chain to its
 * constant result, 0) and the result is kept; without -ffast-math the
 * compiler may not turn x / d into x * (1 / d). LEBench builds with -O0,
 * which adds a store and a load of x to every step (docs/lebench.md). */
#define FDIV_START 9903290.789798798
#define FDIV_DIVISOR 3232.32

static int fdiv_run(struct osm_ctx *ctx, uint64_t batch)
{
	int64_t n = osm_param_int(ctx, "n");
	double sink = 0;
	for (uint64_t b = 0; b < batch; b++) {
		double x = FDIV_START, d = FDIV_DIVISOR;
		__asm__ volatile("" : "+m"(x), "+m"(d)); /* unknown to the compiler */
		for (int64_t i = 0; i < n; i++)
			x = x / d;
		sink += x;
	}
	OSM_KEEP(sink);
	return OSM_OK;
}

static const struct osm_param fdiv_params[] = {
	{.name = "n", .type = OSM_P_INT, .def = 500000, .min = 1, .max = 100000000,
	 .help = "dependent double divisions in the chain (LEBench cpu: 500000)"},
	{0},
};

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
		.desc = "cost of one clock read: back-to-back reads timed by the clock itself",
		.unit = OSM_UNIT_NS,
		.flags = OSM_SELF_TIMED,
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
		.setup = loop_setup,
		.run = loop_run,
	},
	{
		.name = "call",
		.desc = "procedure call with N integer arguments",
		.unit = OSM_UNIT_NS,
		.suites = OSM_SUITES_ALL,
		.params = call_params,
		.sweep = "args=0;args=1;args=2;args=3;args=4;args=5;args=6;args=7",
		.setup = call_setup,
		.run = call_run,
	},
	{
		.name = "fdiv_chain",
		.desc = "a chain of n dependent double divisions, the whole chain (LEBench cpu)",
		.unit = OSM_UNIT_NS,
		.suites = OSM_SUITE_STANDARD | OSM_SUITE_FULL,
		.params = fdiv_params,
		.run = fdiv_run,
	},
};

const struct osm_family osm_family_cpu = {
	"cpu", "processor floor costs: clock read, loop, procedure call, division chain",
	cpu_benches, ARRAY_SIZE(cpu_benches),
};
