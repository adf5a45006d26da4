/* stressors.h - load on the other CPUs while an rt benchmark measures one:
 * threads pinned one per CPU that read or write an array larger than the
 * last-level cache, spin on integer arithmetic, or enter the kernel in a
 * loop (docs/methods/rt.md, "Stressors"). */
#ifndef OSM_STRESSORS_H
#define OSM_STRESSORS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "../bench.h"

#define OSM_STRESS_MAX 256

enum osm_stress_op { OSM_STRESS_READ, OSM_STRESS_WRITE, OSM_STRESS_CPU, OSM_STRESS_SYSCALL };

/* The stress_op parameter's choices, in enum order (NULL-terminated). */
extern const char *const osm_stress_ops[];

struct osm_stressor {
	struct osm_stress *owner;
	pthread_t th;
	int cpu;              /* the CPU it is pinned to */
	unsigned char *buf;   /* read/write: its own array of owner->size bytes */
	size_t maplen;        /* buf's mapping */
	_Atomic uint64_t ops; /* cache lines touched, loop rounds or calls so far */
	int started;          /* pthread_create succeeded */
};

struct osm_stress {
	int n;                   /* threads */
	enum osm_stress_op op;
	size_t size;             /* bytes per array (read/write) */
	int64_t llc;             /* last-level cache size read from sysfs; 0 unknown */
	atomic_int stop;
	atomic_int ready;        /* threads that have started their loop */
	int64_t t_start_ns, t_stop_ns;
	struct osm_stressor s[OSM_STRESS_MAX];
};

/* Starts n stressors of op (an osm_stress_ops index) on allowed CPUs other
 * than those in avoid[0..n_avoid-1], one per CPU; size 0 = 2 x the LLC.
 * Returns OSM_OK once every thread runs its loop, OSM_SKIP (too few other
 * CPUs, not enough memory) or OSM_ERROR, with ctx->msg set; on failure
 * nothing is left running. n = 0 starts nothing. */
int osm_stress_start(struct osm_ctx *ctx, struct osm_stress *st, int n, int op, int64_t size,
		     const int *avoid, int n_avoid);
/* Stops and joins every thread and frees the arrays; idempotent. */
void osm_stress_stop(struct osm_stress *st);
/* info.stress: "none", or e.g. "1 x read over 64 MiB (2 x LLC of 32 MiB) on CPU 1: 9.8 GB/s
 * each" (the rate once stopped). */
void osm_stress_describe(const struct osm_stress *st, char *out, size_t len);

/* The three parameters every rt benchmark takes, for its params table. */
#define OSM_STRESS_PARAMS                                                                              \
	{.name = "stress", .type = OSM_P_INT, .def = 0, .min = 0, .max = OSM_STRESS_MAX,                  \
	 .help = "stressor threads, one per other CPU (0 = none)"},                                      \
	{.name = "stress_op", .type = OSM_P_ENUM, .def = 0, .choices = osm_stress_ops,                   \
	 .help = "what each stressor does: read or write its array, cpu (arithmetic) or syscall (getppid)"}, \
	{.name = "stress_size", .type = OSM_P_SIZE, .def = 0, .min = 0, .max = INT64_C(16) << 30,        \
	 .help = "bytes of each read/write stressor's array (0 = 2 x the last-level cache)"}

#endif
