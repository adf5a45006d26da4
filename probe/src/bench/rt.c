/* rt.c - rt.*: real-time behaviour. Method: docs/methods/rt.md
 *
 *  - rt.cyclic (rt_cyclic.c): cyclictest's wake-up latency: an absolute
 *    clock_nanosleep on an interval, SCHED_FIFO, memory locked; one sample
 *    per cycle.
 *  - rt.osnoise (rt_osnoise.c): oslat's method: a busy loop reading the
 *    clock; every gap above a threshold is noise.
 *  - rt.workload (rt_workload.c, rt_kernels.c): the RT study's periodic
 *    workload kernels, each job's execution and response time.
 * Each takes stressors on the other CPUs (stressors.c).
 *
 * This file: the family table and what the three share: the measuring
 * thread's scheduling class and memory lock, set in setup and undone in
 * teardown (the probe runs other benchmarks after these), and the CPU list
 * parser. */
#include "rt.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "../affinity.h"
#include "../compiler.h"

/* VmLck of this process in KiB (0 when nothing is locked), -1 unreadable. */
static long locked_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	if (!f)
		return -1;
	char line[256];
	long kib = -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmLck: %ld", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

static void lock_memory(struct osm_ctx *ctx, struct osm_rt_env *env)
{
	long before = locked_kib();
	if (before > 0) {
		osm_add_info(ctx, "mlock", "locked (already, e.g. --mlock)");
		return;
	}
	struct rlimit rl;
	if (geteuid() != 0 && getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
		/* MCL_FUTURE under a small limit would make later allocations fail. */
		osm_add_info(ctx, "mlock", "not locked: needs root or CAP_IPC_LOCK (RLIMIT_MEMLOCK is %llu KiB)",
			     (unsigned long long)(rl.rlim_cur / 1024));
		return;
	}
	if (mlockall(MCL_CURRENT | MCL_FUTURE) == 0) {
		env->locked = 1;
		/* Trust the kernel's count, not the return value: ASan and other
		 * sanitizers intercept mlockall and return 0 having done nothing. */
		if (locked_kib() > 0)
			osm_add_info(ctx, "mlock", "locked");
		else
			osm_add_info(ctx, "mlock", "not locked: mlockall returned 0 but nothing is locked (VmLck 0: a "
				     "sanitizer build intercepts it)");
	} else {
		osm_add_info(ctx, "mlock", "not locked: mlockall: %s", strerror(errno));
	}
}

int osm_rt_begin(struct osm_ctx *ctx, struct osm_rt_env *env, int prio, int lock, const int *avoid,
		 int n_avoid)
{
	memset(env, 0, sizeof(*env));
	int st = osm_stress_start(ctx, &env->stress, (int)osm_param_int(ctx, "stress"),
				  (int)osm_param_int(ctx, "stress_op"), osm_param_int(ctx, "stress_size"), avoid,
				  n_avoid);
	if (st != OSM_OK)
		return st;
	/* The kernel's view of this thread (sched_*(0) act on the calling
	 * thread), not glibc's pthread_getschedparam, which caches what
	 * pthread_setschedparam set and misses what sched_setscheduler (--fifo)
	 * did. */
	env->old_policy = sched_getscheduler(0);
	if (env->old_policy >= 0 && sched_getparam(0, &env->old_sp) == 0)
		env->sched_saved = 1;
	if (prio > 0) {
		struct sched_param sp;
		memset(&sp, 0, sizeof(sp));
		sp.sched_priority = prio;
		int e = sched_setscheduler(0, SCHED_FIFO, &sp) ? errno : 0;
		if (e == 0) {
			env->fifo = 1;
			osm_add_info(ctx, "policy", "SCHED_FIFO %d", prio);
		} else if (e == EPERM) {
			osm_add_info(ctx, "policy",
				     "SCHED_OTHER: SCHED_FIFO %d refused: needs root or CAP_SYS_NICE (or RLIMIT_RTPRIO "
				     ">= %d)", prio, prio);
		} else {
			osm_add_info(ctx, "policy", "SCHED_OTHER: SCHED_FIFO %d refused: %s", prio, strerror(e));
		}
	} else {
		/* SCHED_OTHER even when the probe runs SCHED_FIFO (--fifo). */
		struct sched_param sp;
		memset(&sp, 0, sizeof(sp));
		if (env->old_policy != SCHED_OTHER && sched_setscheduler(0, SCHED_OTHER, &sp))
			osm_add_info(ctx, "policy", "unchanged (SCHED_OTHER refused)");
		else
			osm_add_info(ctx, "policy", "SCHED_OTHER (priority=0)");
	}
	if (lock)
		lock_memory(ctx, env);
	return OSM_OK;
}

void osm_rt_end(struct osm_ctx *ctx, struct osm_rt_env *env)
{
	if (env->locked) {
		munlockall();
		env->locked = 0;
	}
	if (env->sched_saved) {
		sched_setscheduler(0, env->old_policy, &env->old_sp);
		env->sched_saved = 0;
		env->fifo = 0;
	}
	osm_stress_stop(&env->stress);
	char buf[512];
	osm_stress_describe(&env->stress, buf, sizeof(buf));
	osm_add_info(ctx, "stress", "%s", buf);
}

static int add_cpu(int c, int *cpus, int *n, int max, char *err, size_t len)
{
	for (int i = 0; i < *n; i++)
		if (cpus[i] == c)
			return 0;
	if (*n >= max) {
		snprintf(err, len, "cpus: more than %d CPUs", max);
		return -1;
	}
	cpus[(*n)++] = c;
	return 0;
}

int osm_rt_parse_cpus(const char *s, int *cpus, int max, char *err, size_t len)
{
	int n = 0;
	if (!s || !*s)
		return 0;
	if (!strcmp(s, "all")) {
		int all[1024];
		int k = osm_allowed_cpus(all, 1024);
		for (int i = 0; i < k; i++)
			if (add_cpu(all[i], cpus, &n, max, err, len))
				return -1;
		return n;
	}
	const char *p = s;
	while (*p) {
		char *end;
		errno = 0;
		long a = strtol(p, &end, 10);
		if (end == p || errno || a < 0 || a > 4095)
			goto bad;
		long b = a;
		p = end;
		if (*p == '-') {
			p++;
			b = strtol(p, &end, 10);
			if (end == p || errno || b < a || b > 4095)
				goto bad;
			p = end;
		}
		for (long c = a; c <= b; c++)
			if (add_cpu((int)c, cpus, &n, max, err, len))
				return -1;
		if (*p == ',' && p[1])
			p++;
		else if (*p)
			goto bad;
	}
	return n;
bad:
	snprintf(err, len, "cpus: '%s' is not a CPU list: give \"\" (none), \"all\", or numbers and ranges such as "
		 "1,3 or 0-2", s);
	return -1;
}

#define RT_FLAGS (OSM_SELF_TIMED | OSM_ONE_BY_ONE | OSM_PERIODIC)

static const struct osm_bench rt_benches[] = {
	{
		.name = "cyclic",
		.desc = "wake-up latency of a periodic thread (cyclictest): absolute clock_nanosleep on an interval, "
			"SCHED_FIFO, memory locked; one sample per cycle",
		.unit = OSM_UNIT_NS,
		.flags = RT_FLAGS,
		.suites = OSM_SUITE_STANDARD | OSM_SUITE_FULL,
		.params = osm_rt_cyclic_params,
		.setup = osm_rt_cyclic_setup,
		.run = osm_rt_cyclic_run,
		.teardown = osm_rt_cyclic_teardown,
		.check = osm_rt_cyclic_check,
	},
	{
		.name = "osnoise",
		.desc = "OS noise (oslat): a busy loop reading the clock, gaps above a threshold counted; one sample "
			"per window = its largest gap",
		.unit = OSM_UNIT_NS,
		.flags = RT_FLAGS,
		.suites = OSM_SUITE_STANDARD | OSM_SUITE_FULL,
		.params = osm_rt_osnoise_params,
		.setup = osm_rt_osnoise_setup,
		.run = osm_rt_osnoise_run,
		.teardown = osm_rt_osnoise_teardown,
	},
	{
		.name = "workload",
		.desc = "a periodic real-time job (one of the RT study's 19 kernels) at SCHED_FIFO; one sample per "
			"job = its execution time; response times and deadline misses in extra",
		.unit = OSM_UNIT_NS,
		.flags = RT_FLAGS,
		.suites = OSM_SUITE_FULL,
		.params = osm_rt_workload_params,
		.setup = osm_rt_workload_setup,
		.run = osm_rt_workload_run,
		.teardown = osm_rt_workload_teardown,
	},
};

const struct osm_family osm_family_rt = {
	"rt", "real-time behaviour: periodic wake-up latency (cyclictest), OS noise (oslat), and the RT study's "
	"periodic workload kernels, each with memory or CPU stressors on the other CPUs",
	rt_benches, ARRAY_SIZE(rt_benches),
};
