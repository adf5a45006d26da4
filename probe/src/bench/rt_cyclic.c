/* rt_cyclic.c - rt.cyclic: cyclictest's wake-up latency.
 * Method: docs/methods/rt.md, "rt.cyclic"; source: rt-tests' cyclictest.
 *
 * The measuring thread (the probe's, on its CPU) runs at SCHED_FIFO
 * `priority` with memory locked. Each cycle: next += interval;
 * clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, next);
 * clock_gettime(CLOCK_MONOTONIC, now); the sample is now - next in ns:
 * cyclictest's timed region and clock (its -m -p PRIO -i INTERVAL with
 * clock_nanosleep, the default mode), in ns instead of its us. Periods
 * already past when a cycle starts are skipped, as cyclictest's
 * `while (now > next) next += interval` does (extra.skipped counts them).
 * `cpus` adds one such thread per listed CPU at once (cyclictest -a LIST
 * -t N); their summaries are in info.others, the samples are the measuring
 * thread's. hist_us bounds cyclictest's histogram (-h): latencies above it
 * are counted in extra.overflows (the front end draws the histogram from
 * the raw samples). breaktrace_us (cyclictest -b) ends the run at the
 * first latency above it and writes a line into the kernel trace's
 * trace_marker so the trace shows where; the run's tracer is the user's
 * to set up (osmeter changes no tracing state).
 *
 * Traps avoided: stressors start before the measuring thread turns
 * SCHED_FIFO (threads inherit their creator's class); the harness never
 * stops on the median's RSE mid-run (OSM_PERIODIC), so no sorting between
 * two cycles; only sampled cycles (not warm-up) count in the extras; the
 * other CPUs' threads are joined in teardown and cannot outlive the probe;
 * SCHED_FIFO refused (no root) leaves the thread SCHED_OTHER, said in
 * info.policy, never passed off as a real-time figure. */
#include "rt.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../affinity.h"
#include "../compiler.h"

const struct osm_param osm_rt_cyclic_params[] = {
	{.name = "interval_us", .type = OSM_P_INT, .def = 1000, .min = 50, .max = 1000000,
	 .help = "period of the cycle in microseconds (cyclictest -i)"},
	{.name = "priority", .type = OSM_P_INT, .def = 80, .min = 0, .max = 99,
	 .help = "SCHED_FIFO priority (cyclictest -p); 0 = SCHED_OTHER; needs root, else SCHED_OTHER, said in info"},
	{.name = "loops", .type = OSM_P_INT, .def = 0, .min = 0, .max = 1000000000,
	 .help = "cycles to sample (cyclictest -l); 0 = the time budget decides"},
	{.name = "cpus", .type = OSM_P_STR, .def_str = "", .max_len = 256, .max_len_why = "a CPU list",
	 .help = "more CPUs that run the same cyclic thread at once (cyclictest -a LIST -t): \"\", all, 1,3, 0-2"},
	{.name = "breaktrace_us", .type = OSM_P_INT, .def = 0, .min = 0, .max = 10000000,
	 .help = "stop at the first latency above this and write trace_marker (cyclictest -b); 0 = off"},
	{.name = "pm_qos_us", .type = OSM_P_INT, .def = 0, .min = -1, .max = 100000000,
	 .help = "hold /dev/cpu_dma_latency at this many us while running, as cyclictest does (0); -1 = leave it"},
	{.name = "hist_us", .type = OSM_P_INT, .def = 1000, .min = 1, .max = 1000000,
	 .help = "histogram range in us, 1 us buckets (cyclictest -h); latencies above it count as overflows"},
	OSM_STRESS_PARAMS,
	{0},
};

struct other {
	struct cyclic *owner;
	pthread_t th;
	int cpu, started;
	uint64_t n, overflows;
	int64_t min, max;
	double sum;
	char err[160];
};

struct cyclic {
	struct osm_rt_env env;
	int64_t interval_ns, hist_ns, break_ns;
	int prio;
	struct timespec next;
	/* sampled cycles only */
	uint64_t cycles, overflows, skipped;
	double sum;
	int64_t max;
	int marker_fd;
	char marker_why[256];
	int qos_fd; /* /dev/cpu_dma_latency, held open while running */
	atomic_int stop;   /* teardown: the other threads end */
	atomic_int broken; /* a thread hit breaktrace_us */
	char break_msg[512];
	pthread_mutex_t break_lock;
	int n_others, others_ran;
	struct other others[OSM_RT_MAX_CPUS];
};

int osm_rt_cyclic_check(const struct osm_bench *b, const struct osm_pval *pv, char *err, size_t len)
{
	int cpus[OSM_RT_MAX_CPUS];
	const char *s = osm_pval_of(b, pv, "cpus")->s;
	if (s && strcmp(s, "all") && osm_rt_parse_cpus(s, cpus, OSM_RT_MAX_CPUS, err, len) < 0)
		return -1;
	return 0;
}

static void ts_add(struct timespec *t, int64_t ns)
{
	*t = osm_ns_ts(osm_ts_ns(t) + ns);
}

/* Sleep to next (absolute, CLOCK_MONOTONIC); returns the latency in ns or
 * -1 with errno. next is first moved past any period already gone. */
static int64_t one_cycle(struct timespec *next, int64_t interval, uint64_t *skipped)
{
	struct timespec now;
	ts_add(next, interval);
	clock_gettime(CLOCK_MONOTONIC, &now);
	while (osm_ts_ns(next) <= osm_ts_ns(&now)) {
		ts_add(next, interval);
		(*skipped)++;
	}
	int e;
	while ((e = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, next, NULL)) == EINTR)
		;
	if (e) {
		errno = e;
		return -1;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	return osm_ts_ns(&now) - osm_ts_ns(next);
}

/* First latency above breaktrace_us, on any thread: the trace marker (once)
 * and the message for info.break. */
static void hit_break(struct cyclic *c, int cpu, int64_t lat, uint64_t cycle)
{
	pthread_mutex_lock(&c->break_lock);
	if (!atomic_load(&c->broken)) {
		char line[200];
		int n = snprintf(line, sizeof(line), "osmeter rt.cyclic: latency %" PRId64 " ns > %" PRId64
				 " ns on CPU %d at cycle %" PRIu64 "\n", lat, c->break_ns, cpu, cycle);
		const char *marker;
		if (c->marker_fd >= 0 && write(c->marker_fd, line, (size_t)n) == n)
			marker = "trace_marker written";
		else if (c->marker_fd >= 0)
			marker = "trace_marker not written: write failed";
		else
			marker = c->marker_why;
		snprintf(c->break_msg, sizeof(c->break_msg), "latency %" PRId64 " ns > %" PRId64 " ns on CPU %d at "
			 "cycle %" PRIu64 "; %s", lat, c->break_ns, cpu, cycle, marker);
		atomic_store(&c->broken, 1);
	}
	pthread_mutex_unlock(&c->break_lock);
}

static void *other_main(void *arg)
{
	struct other *o = arg;
	struct cyclic *c = o->owner;
	if (osm_pin_self(o->cpu)) {
		snprintf(o->err, sizeof(o->err), "cannot pin to CPU %d: %s", o->cpu, strerror(errno));
		return NULL;
	}
	if (c->env.fifo) {
		struct sched_param sp = {.sched_priority = c->prio};
		sched_setscheduler(0, SCHED_FIFO, &sp); /* this thread */
	}
	struct timespec next;
	clock_gettime(CLOCK_MONOTONIC, &next);
	uint64_t skipped = 0;
	o->min = INT64_MAX;
	while (!atomic_load_explicit(&c->stop, memory_order_relaxed)) {
		int64_t lat = one_cycle(&next, c->interval_ns, &skipped);
		if (lat < 0) {
			snprintf(o->err, sizeof(o->err), "clock_nanosleep: %s", strerror(errno));
			return NULL;
		}
		o->n++;
		o->sum += (double)lat;
		if (lat < o->min)
			o->min = lat;
		if (lat > o->max)
			o->max = lat;
		if (lat > c->hist_ns)
			o->overflows++;
		if (c->break_ns && lat > c->break_ns)
			hit_break(c, o->cpu, lat, o->n);
	}
	return NULL;
}

static void open_marker(struct cyclic *c)
{
	static const char *const paths[] = {"/sys/kernel/tracing/trace_marker",
					    "/sys/kernel/debug/tracing/trace_marker"};
	c->marker_fd = -1;
	int err = ENOENT;
	for (size_t i = 0; i < ARRAY_SIZE(paths); i++) {
		c->marker_fd = open(paths[i], O_WRONLY | O_CLOEXEC);
		if (c->marker_fd >= 0)
			return;
		if (errno != ENOENT)
			err = errno;
	}
	if (err == ENOENT)
		snprintf(c->marker_why, sizeof(c->marker_why),
			 "trace_marker not written: tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)");
	else
		snprintf(c->marker_why, sizeof(c->marker_why), "trace_marker not written: %s%s", strerror(err),
			 err == EACCES || err == EPERM ? " (needs root)" : "");
}

/* cyclictest's --latency (default 0): a PM QoS request on
 * /dev/cpu_dma_latency keeps the CPUs out of idle states slower to leave
 * than us while the descriptor is open. The kernel removes the request when
 * it is closed, which also happens when the probe dies by any means: nothing
 * to restore. */
static void hold_pm_qos(struct osm_ctx *ctx, struct cyclic *c, int64_t us)
{
	if (us < 0) {
		osm_add_info(ctx, "pm_qos", "not set (pm_qos_us=-1)");
		return;
	}
	int fd = open("/dev/cpu_dma_latency", O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		osm_add_info(ctx, "pm_qos", "not set: /dev/cpu_dma_latency: %s%s", strerror(errno),
			     errno == EACCES || errno == EPERM ? " (needs root)" : "");
		return;
	}
	int32_t v = (int32_t)us;
	if (write(fd, &v, sizeof(v)) != (ssize_t)sizeof(v)) {
		osm_add_info(ctx, "pm_qos", "not set: writing /dev/cpu_dma_latency: %s", strerror(errno));
		close(fd);
		return;
	}
	c->qos_fd = fd;
	osm_add_info(ctx, "pm_qos", "/dev/cpu_dma_latency held at %" PRId64 " us", us);
}

static void stop_others(struct cyclic *c)
{
	atomic_store(&c->stop, 1);
	for (int i = 0; i < c->n_others; i++)
		if (c->others[i].started) {
			pthread_join(c->others[i].th, NULL);
			c->others[i].started = 0;
		}
}

void osm_rt_cyclic_teardown(struct osm_ctx *ctx)
{
	struct cyclic *c = ctx->priv;
	if (!c)
		return;
	stop_others(c);
	char buf[OSM_INFO_LEN];
	size_t w = 0;
	buf[0] = 0;
	for (int i = 0; i < c->n_others && w < sizeof(buf) - 200; i++) {
		const struct other *o = &c->others[i];
		if (o->err[0])
			w += (size_t)snprintf(buf + w, sizeof(buf) - w, "%scpu%d: %s", i ? "; " : "", o->cpu, o->err);
		else
			w += (size_t)snprintf(buf + w, sizeof(buf) - w,
					      "%scpu%d: n=%" PRIu64 " min=%" PRId64 " avg=%.0f max=%" PRId64
					      " ns overflows=%" PRIu64, i ? "; " : "", o->cpu, o->n,
					      o->n ? o->min : 0, o->n ? o->sum / (double)o->n : 0.0, o->max, o->overflows);
	}
	if (c->n_others && c->others_ran)
		osm_add_info(ctx, "others", "%s", buf);
	if (c->marker_fd >= 0)
		close(c->marker_fd);
	if (c->qos_fd >= 0)
		close(c->qos_fd); /* the kernel drops the request with the descriptor */
	osm_rt_end(ctx, &c->env);
	if (atomic_load(&c->broken))
		osm_add_info(ctx, "break", "%s", c->break_msg);
	osm_add_extra(ctx, "avg_ns", c->cycles ? c->sum / (double)c->cycles : 0.0);
	osm_add_extra(ctx, "max_ns", (double)c->max);
	osm_add_extra(ctx, "overflows", (double)c->overflows);
	osm_add_extra(ctx, "cycles", (double)c->cycles);
	osm_add_extra(ctx, "skipped", (double)c->skipped);
	osm_add_extra(ctx, "interval_ns", (double)c->interval_ns);
	pthread_mutex_destroy(&c->break_lock);
	free(c);
	ctx->priv = NULL;
}

int osm_rt_cyclic_setup(struct osm_ctx *ctx)
{
	struct cyclic *c = calloc(1, sizeof(*c));
	if (!c)
		return osm_fail(ctx, OSM_ERROR, "out of memory");
	ctx->priv = c;
	pthread_mutex_init(&c->break_lock, NULL);
	c->marker_fd = -1;
	c->qos_fd = -1;
	c->interval_ns = osm_param_int(ctx, "interval_us") * 1000;
	c->hist_ns = osm_param_int(ctx, "hist_us") * 1000;
	c->break_ns = osm_param_int(ctx, "breaktrace_us") * 1000;
	c->prio = (int)osm_param_int(ctx, "priority");
	ctx->stop_after = (uint64_t)osm_param_int(ctx, "loops");

	int cpus[OSM_RT_MAX_CPUS];
	int n = osm_rt_parse_cpus(osm_param_str(ctx, "cpus"), cpus, OSM_RT_MAX_CPUS, ctx->msg, sizeof(ctx->msg));
	if (n < 0) {
		osm_rt_cyclic_teardown(ctx);
		return OSM_ERROR;
	}
	int avoid[OSM_RT_MAX_CPUS + 1], n_avoid = 0;
	avoid[n_avoid++] = ctx->cpu;
	int allowed[1024], n_allowed = osm_allowed_cpus(allowed, 1024);
	for (int i = 0; i < n; i++) {
		if (cpus[i] == ctx->cpu)
			continue; /* the measuring thread's own CPU ("all" lists it) */
		int ok = 0;
		for (int k = 0; k < n_allowed; k++)
			ok |= allowed[k] == cpus[i];
		if (!ok) {
			int st = osm_fail(ctx, OSM_SKIP, "cpus: CPU %d is not one this probe may run on (online and in "
					  "its affinity mask)", cpus[i]);
			osm_rt_cyclic_teardown(ctx);
			return st;
		}
		c->others[c->n_others].cpu = cpus[i];
		c->others[c->n_others++].owner = c;
		avoid[n_avoid++] = cpus[i];
	}
	if (c->break_ns)
		open_marker(c);

	int st = osm_rt_begin(ctx, &c->env, c->prio, 1, avoid, n_avoid);
	if (st != OSM_OK) {
		osm_rt_cyclic_teardown(ctx);
		return st;
	}
	for (int i = 0; i < c->n_others; i++) {
		int e = pthread_create(&c->others[i].th, NULL, other_main, &c->others[i]);
		if (e) {
			st = osm_fail(ctx, OSM_ERROR, "starting the cyclic thread of CPU %d: %s", c->others[i].cpu,
				      strerror(e));
			osm_rt_cyclic_teardown(ctx);
			return st;
		}
		c->others[i].started = 1;
		c->others_ran = 1;
	}
	hold_pm_qos(ctx, c, osm_param_int(ctx, "pm_qos_us"));
	clock_gettime(CLOCK_MONOTONIC, &c->next);
	return OSM_OK;
}

int osm_rt_cyclic_run(struct osm_ctx *ctx, uint64_t batch)
{
	struct cyclic *c = ctx->priv;
	(void)batch; /* OSM_ONE_BY_ONE: always 1 */
	uint64_t skipped = 0;
	int64_t lat = one_cycle(&c->next, c->interval_ns, &skipped);
	if (lat < 0)
		return osm_fail_errno(ctx, "clock_nanosleep");
	ctx->self_ns = (double)lat;
	if (!ctx->counting)
		return OSM_OK;
	c->skipped += skipped;
	c->cycles++;
	c->sum += (double)lat;
	if (lat > c->max)
		c->max = lat;
	if (lat > c->hist_ns)
		c->overflows++;
	if (c->break_ns && lat > c->break_ns)
		hit_break(c, ctx->cpu, lat, c->cycles);
	if (atomic_load_explicit(&c->broken, memory_order_relaxed)) {
		ctx->stop_now = 1;
		ctx->stop_why = "break";
	}
	return OSM_OK;
}
