/* stressors.c - see stressors.h. Method: docs/methods/rt.md, "Stressors".
 *
 * The RT study's memory stressors: each thread, pinned to a CPU of its own
 * other than the measured one, sweeps its own array of at least twice the
 * last-level cache, one access per cache line, for ever: `read` loads one
 * word per line (consumed, so the loads stay), `write` stores one word per
 * line (every line dirtied, so it is written back to memory). Two more
 * kinds load the other CPUs without touching memory: `cpu` (an integer
 * hash loop in registers) and `syscall` (raw getppid(2) in a loop: kernel
 * entries and exits on the other CPUs).
 *
 * Traps avoided: the arrays are checked against the memory headroom before
 * anything is mapped (osm_mem_fit) and written once before the threads
 * report ready, so page faults are not the stress and the stress is at full
 * strength when sampling starts; the threads are joined in teardown, and,
 * being threads of the probe, cannot outlive it on any exit path; a CPU
 * list too short for `stress` is a skip that names both numbers, never
 * stressors doubled up on one CPU or on the measured one. */
#include "stressors.h"

#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../affinity.h"
#include "../clock.h"
#include "../compiler.h"
#include "mem.h"

const char *const osm_stress_ops[] = {"read", "write", "cpu", "syscall", NULL};

#define LINE 64
#define MAX_CPUS 1024
/* Work between two looks at the stop flag. */
#define ROUND_LINES 4096

static void read_loop(struct osm_stressor *s, size_t size)
{
	struct osm_stress *st = s->owner;
	size_t off = 0;
	uint64_t sum = 0;
	while (!atomic_load_explicit(&st->stop, memory_order_relaxed)) {
		for (int k = 0; k < ROUND_LINES; k++) {
			sum += *(volatile const uint64_t *)(s->buf + off);
			off += LINE;
			if (off >= size)
				off = 0;
		}
		atomic_fetch_add_explicit(&s->ops, ROUND_LINES, memory_order_relaxed);
	}
	OSM_KEEP(sum);
}

static void write_loop(struct osm_stressor *s, size_t size)
{
	struct osm_stress *st = s->owner;
	size_t off = 0;
	uint64_t v = 1;
	while (!atomic_load_explicit(&st->stop, memory_order_relaxed)) {
		for (int k = 0; k < ROUND_LINES; k++) {
			*(volatile uint64_t *)(s->buf + off) = v++;
			off += LINE;
			if (off >= size)
				off = 0;
		}
		atomic_fetch_add_explicit(&s->ops, ROUND_LINES, memory_order_relaxed);
	}
}

static void cpu_loop(struct osm_stressor *s)
{
	struct osm_stress *st = s->owner;
	uint64_t x = 0x9E3779B97F4A7C15u;
	while (!atomic_load_explicit(&st->stop, memory_order_relaxed)) {
		for (int k = 0; k < ROUND_LINES; k++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
		OSM_KEEP(x);
		atomic_fetch_add_explicit(&s->ops, ROUND_LINES, memory_order_relaxed);
	}
}

static void syscall_loop(struct osm_stressor *s)
{
	struct osm_stress *st = s->owner;
	while (!atomic_load_explicit(&st->stop, memory_order_relaxed)) {
		for (int k = 0; k < 64; k++)
			OSM_KEEP(syscall(SYS_getppid));
		atomic_fetch_add_explicit(&s->ops, 64, memory_order_relaxed);
	}
}

static void *stressor_main(void *arg)
{
	struct osm_stressor *s = arg;
	struct osm_stress *st = s->owner;
	osm_pin_self(s->cpu);
	if (s->buf)
		memset(s->buf, 0x5a, st->size); /* faulted in before the stress counts */
	atomic_fetch_add(&st->ready, 1);
	switch (st->op) {
	case OSM_STRESS_READ:
		read_loop(s, st->size);
		break;
	case OSM_STRESS_WRITE:
		write_loop(s, st->size);
		break;
	case OSM_STRESS_CPU:
		cpu_loop(s);
		break;
	case OSM_STRESS_SYSCALL:
		syscall_loop(s);
		break;
	}
	return NULL;
}

static int avoided(int cpu, const int *avoid, int n_avoid)
{
	for (int i = 0; i < n_avoid; i++)
		if (avoid[i] == cpu)
			return 1;
	return 0;
}

static double mib(int64_t b)
{
	return (double)b / (1024.0 * 1024.0);
}

int osm_stress_start(struct osm_ctx *ctx, struct osm_stress *st, int n, int op, int64_t size,
		     const int *avoid, int n_avoid)
{
	memset(st, 0, sizeof(*st));
	st->op = (enum osm_stress_op)op;
	st->n = 0;
	if (n <= 0)
		return OSM_OK;
	int cpus[MAX_CPUS], others[MAX_CPUS], n_others = 0;
	int n_cpus = osm_allowed_cpus(cpus, MAX_CPUS);
	for (int i = 0; i < n_cpus; i++)
		if (!avoided(cpus[i], avoid, n_avoid))
			others[n_others++] = cpus[i];
	if (n > n_others)
		return osm_fail(ctx, OSM_SKIP,
				"stress=%d needs %d CPU%s besides the measured one%s; this machine (or the probe's "
				"CPU affinity) gives %d: lower stress to at most %d",
				n, n, n > 1 ? "s" : "", n_avoid > 1 ? "s" : "", n_others, n_others);
	int memory = st->op == OSM_STRESS_READ || st->op == OSM_STRESS_WRITE;
	st->llc = osm_mem_llc_bytes();
	if (memory) {
		if (size == 0)
			size = st->llc > 0 ? 2 * st->llc : (int64_t)64 << 20;
		size = (size + LINE - 1) / LINE * LINE;
		if (osm_mem_fit(ctx, "the stressors' arrays", size * n) != OSM_OK)
			return OSM_SKIP;
		st->size = (size_t)size;
	}
	atomic_store(&st->stop, 0);
	atomic_store(&st->ready, 0);
	for (int i = 0; i < n; i++) {
		struct osm_stressor *s = &st->s[i];
		s->owner = st;
		s->cpu = others[i];
		if (memory) {
			struct osm_region r;
			if (osm_region_map(&r, st->size, 0)) {
				osm_stress_stop(st);
				return osm_fail(ctx, OSM_ERROR, "mapping a %.1f MiB stressor array: %s", mib(size),
						strerror(errno));
			}
			s->buf = (unsigned char *)r.p;
			s->maplen = r.maplen;
			/* osm_region_map's p is its map for base pages (thp=0). */
		}
		int e = pthread_create(&s->th, NULL, stressor_main, s);
		if (e) {
			osm_stress_stop(st);
			return osm_fail(ctx, OSM_ERROR, "starting stressor %d: %s", i + 1, strerror(e));
		}
		s->started = 1;
		st->n = i + 1;
	}
	/* Every stressor running (its array written once) before measuring. */
	struct timespec ms = {0, 1000000};
	for (int waited = 0; atomic_load(&st->ready) < n; waited++) {
		if (waited > 60000) {
			osm_stress_stop(st);
			return osm_fail(ctx, OSM_ERROR, "the stressors did not start within 60 s");
		}
		nanosleep(&ms, NULL);
	}
	st->t_start_ns = osm_mono_raw_ns();
	return OSM_OK;
}

void osm_stress_stop(struct osm_stress *st)
{
	atomic_store(&st->stop, 1);
	for (int i = 0; i < st->n; i++) {
		struct osm_stressor *s = &st->s[i];
		if (s->started) {
			pthread_join(s->th, NULL);
			s->started = 0;
			st->t_stop_ns = osm_mono_raw_ns();
		}
		if (s->buf) {
			struct osm_region r = {.map = s->buf, .maplen = s->maplen, .p = (char *)s->buf,
					       .len = st->size};
			osm_region_unmap(&r);
			s->buf = NULL;
		}
	}
}

void osm_stress_describe(const struct osm_stress *st, char *out, size_t len)
{
	if (st->n == 0) {
		snprintf(out, len, "none");
		return;
	}
	char where[256] = "";
	size_t w = 0;
	for (int i = 0; i < st->n && w < sizeof(where) - 16; i++)
		w += (size_t)snprintf(where + w, sizeof(where) - w, "%s%d", i ? "," : "", st->s[i].cpu);
	double secs = st->t_stop_ns > st->t_start_ns ? (double)(st->t_stop_ns - st->t_start_ns) * 1e-9 : 0;
	uint64_t ops = 0;
	for (int i = 0; i < st->n; i++)
		ops += atomic_load(&st->s[i].ops);
	double each = secs > 0 ? (double)ops / secs / st->n : 0;
	const char *op = osm_stress_ops[st->op];
	if (st->op == OSM_STRESS_READ || st->op == OSM_STRESS_WRITE) {
		char llc[96] = "";
		if (st->llc > 0)
			snprintf(llc, sizeof(llc), " (%.2g x the LLC of %.1f MiB)", (double)st->size / (double)st->llc,
				 mib(st->llc));
		int n = snprintf(out, len, "%d x %s over %.1f MiB%s on CPU%s %s", st->n, op, mib((int64_t)st->size),
				 llc, st->n > 1 ? "s" : "", where);
		if (secs > 0 && n > 0 && (size_t)n < len)
			snprintf(out + n, len - (size_t)n, ": %.2f GB/s each", each * LINE / 1e9);
	} else {
		int n = snprintf(out, len, "%d x %s on CPU%s %s", st->n, op, st->n > 1 ? "s" : "", where);
		/* Scaled as the front end scales counts (no exponent): 48.6 M calls/s. */
		double scale = each >= 1e9 ? 1e9 : each >= 1e6 ? 1e6 : each >= 1e3 ? 1e3 : 1;
		const char *prefix = scale == 1e9 ? " G" : scale == 1e6 ? " M" : scale == 1e3 ? " k" : "";
		if (secs > 0 && n > 0 && (size_t)n < len)
			snprintf(out + n, len - (size_t)n, ": %.4g%s %s/s each", each / scale, prefix,
				 st->op == OSM_STRESS_CPU ? "rounds" : "calls");
	}
}
