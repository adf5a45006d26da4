/* test_rt.c - what the rt family changes in its process is undone
 * (rt.c): osm_rt_begin puts the calling thread in SCHED_FIFO (or
 * SCHED_OTHER for priority 0, even under --fifo), locks memory and starts
 * stressor threads; osm_rt_end puts every one of these back. And the `cpus`
 * list parser, table-driven. */
#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "affinity.h"
#include "bench/rt.h"
#include "tap.h"

static const struct osm_param params[] = {OSM_STRESS_PARAMS, {0}};
static const struct osm_bench bench = {.name = "t", .params = params};

static struct osm_ctx make_ctx(int stress, int op, int64_t size)
{
	struct osm_ctx ctx;
	memset(&ctx, 0, sizeof(ctx));
	ctx.bench = &bench;
	ctx.params[0].i = stress;
	ctx.params[1].i = op;
	ctx.params[2].i = size;
	ctx.cpu = 0;
	return ctx;
}

static const char *info(const struct osm_ctx *ctx, const char *key)
{
	for (int i = 0; i < ctx->n_info; i++)
		if (!strcmp(ctx->info[i].key, key))
			return ctx->info[i].value;
	return NULL;
}

static int threads(void)
{
	DIR *d = opendir("/proc/self/task");
	int n = 0;
	if (!d)
		return -1;
	for (struct dirent *e; (e = readdir(d));)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* The thread count once it reaches `want`, or the last count after 2 s.
 * pthread_join returns when the kernel clears the thread's tid, a moment
 * before its /proc/self/task entry goes: on a busy machine the joined
 * thread can still be listed right after the join. A thread that really
 * stays keeps the count above `want` and the test fails. */
static int threads_settled(int want)
{
	int n = threads();
	for (int i = 0; i < 200 && n != want; i++) {
		struct timespec ts = {0, 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
		n = threads();
	}
	return n;
}

static int baseline; /* the test's own threads: main's, before any stressor */

static long locked_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kib = -1;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmLck: %ld", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib;
}

static void test_fifo_and_lock_undone(void)
{
	if (geteuid() != 0 || getenv("OSM_EMULATED")) {
		skip(6, "SCHED_FIFO and mlockall need root (and a real kernel under us)");
		return;
	}
	struct osm_ctx ctx = make_ctx(0, 0, 0);
	struct osm_rt_env env;
	is_int(osm_rt_begin(&ctx, &env, 10, 1, &ctx.cpu, 1), OSM_OK, "begin: FIFO 10, locked");
	is_int(sched_getscheduler(0), SCHED_FIFO, "the thread runs SCHED_FIFO");
	is_str(info(&ctx, "policy"), "SCHED_FIFO 10", "info.policy says so");
#if defined(__SANITIZE_ADDRESS__)
	/* ASan intercepts mlockall and returns 0 doing nothing: said, not hidden. */
	ok(locked_kib() == 0 && !strncmp(info(&ctx, "mlock"), "not locked: mlockall returned 0", 31), "under ASan: %s",
	   info(&ctx, "mlock"));
#else
	ok(locked_kib() > 0 && !strcmp(info(&ctx, "mlock"), "locked"), "memory locked (VmLck %ld KiB)", locked_kib());
#endif
	osm_rt_end(&ctx, &env);
	is_int(sched_getscheduler(0), SCHED_OTHER, "end: SCHED_OTHER again");
	is_int(locked_kib(), 0, "end: nothing locked");
}

static void test_priority_zero_under_fifo(void)
{
	if (geteuid() != 0 || getenv("OSM_EMULATED")) {
		skip(3, "needs root to put the thread in SCHED_FIFO first");
		return;
	}
	struct sched_param sp = {.sched_priority = 5};
	sched_setscheduler(0, SCHED_FIFO, &sp); /* as --fifo 5 */
	struct osm_ctx ctx = make_ctx(0, 0, 0);
	struct osm_rt_env env;
	osm_rt_begin(&ctx, &env, 0, 0, &ctx.cpu, 1);
	is_int(sched_getscheduler(0), SCHED_OTHER, "priority 0 runs SCHED_OTHER under --fifo");
	is_str(info(&ctx, "policy"), "SCHED_OTHER (priority=0)", "and says so");
	osm_rt_end(&ctx, &env);
	is_int(sched_getscheduler(0), SCHED_FIFO, "end: back to the probe's SCHED_FIFO");
	sp.sched_priority = 0;
	sched_setscheduler(0, SCHED_OTHER, &sp);
}

static void test_stressors_joined(void)
{
	int cpus[8];
	if (osm_allowed_cpus(cpus, 8) < 2) {
		skip(4, "one CPU: no other CPU for a stressor");
		return;
	}
	for (int op = 0; op < 4; op++) {
		struct osm_ctx ctx = make_ctx(1, op, 1 << 20);
		struct osm_rt_env env;
		int before = threads_settled(baseline);
		int st = osm_rt_begin(&ctx, &env, 0, 0, &ctx.cpu, 1);
		int during = threads();
		osm_rt_end(&ctx, &env);
		int after = threads_settled(before);
		/* Under qemu-user /proc/self/task also lists the emulator's own
		 * threads, which come and go on their own: the count means nothing. */
		if (getenv("OSM_EMULATED"))
			during = before + 1, after = before;
		ok(st == OSM_OK && during == before + 1 && after == before && info(&ctx, "stress") &&
			   !strncmp(info(&ctx, "stress"), "1 x ", 4) && !strstr(info(&ctx, "stress"), "e+"),
		   "stress_op=%s: one thread while running (%d -> %d -> %d), described: %s", osm_stress_ops[op], before,
		   during, after, info(&ctx, "stress") ? info(&ctx, "stress") : "(none)");
	}
}

static void test_too_many_stressors(void)
{
	struct osm_ctx ctx = make_ctx(OSM_STRESS_MAX, 0, 1 << 20);
	struct osm_rt_env env;
	int before = threads_settled(baseline);
	is_int(osm_rt_begin(&ctx, &env, 0, 0, &ctx.cpu, 1), OSM_SKIP, "more stressors than CPUs: a skip");
	ok(strstr(ctx.msg, "besides the measured one") != NULL, "naming the CPUs: %s", ctx.msg);
	is_int(getenv("OSM_EMULATED") ? before : threads_settled(before), before, "and nothing left running");
}

static void test_parse_cpus(void)
{
	static const struct {
		const char *s;
		int n;
		int first, last;
	} cases[] = {
		{"", 0, -1, -1}, {"1", 1, 1, 1}, {"1,3", 2, 1, 3}, {"0-2", 3, 0, 2}, {"0-2,5", 4, 0, 5},
		{"3,3", 1, 3, 3}, {"x", -1, 0, 0}, {"1-", -1, 0, 0}, {"2-1", -1, 0, 0}, {"1,,2", -1, 0, 0},
		{"1,", -1, 0, 0}, {"-1", -1, 0, 0}, {"4096", -1, 0, 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int cpus[OSM_RT_MAX_CPUS];
		char err[256] = "";
		int n = osm_rt_parse_cpus(cases[i].s, cpus, OSM_RT_MAX_CPUS, err, sizeof(err));
		if (cases[i].n < 0)
			ok(n < 0 && strstr(err, "not a CPU list"), "'%s' refused: %s", cases[i].s, err);
		else
			ok(n == cases[i].n && (n == 0 || (cpus[0] == cases[i].first && cpus[n - 1] == cases[i].last)),
			   "'%s' -> %d CPUs", cases[i].s, n);
	}
	int cpus[OSM_RT_MAX_CPUS], allowed[1024];
	char err[256];
	ok(osm_rt_parse_cpus("all", cpus, OSM_RT_MAX_CPUS, err, sizeof(err)) ==
		   (osm_allowed_cpus(allowed, 1024) < OSM_RT_MAX_CPUS ? osm_allowed_cpus(allowed, 1024) : -1),
	   "'all' is every allowed CPU");
}

int main(void)
{
	baseline = threads();
	test_fifo_and_lock_undone();
	test_priority_zero_under_fifo();
	test_stressors_joined();
	test_too_many_stressors();
	test_parse_cpus();
	return done_testing();
}
