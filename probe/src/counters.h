/* counters.h - performance counters around the timed region
 * (`run --counters LIST`), with perf_event_open(2).
 *
 * Life of one benchmark instance's counters (harness.c drives it):
 *   osm_counters_new(spec)       from the validated --counters list
 *   osm_counters_open(c)         after setup(): opens every event and
 *                                enables it (one that cannot be opened is
 *                                "unsupported"), then counts 64 empty
 *                                windows (below)
 *   osm_counters_begin(c)        a counting window: just before each timed
 *   osm_counters_end(c, ops)     batch of the sampling phase and just after
 *                                it, or around each timed operation of a
 *                                self-counted benchmark (osm_count_begin/end);
 *                                a window that ended no operation (ops 0: a
 *                                failure, a lost datagram) is dropped
 *   osm_counters_finish(c)       before teardown(): 64 more empty windows,
 *                                then closes
 *   osm_counters_write(j, c)     the fields of the `counters` record
 *
 * A window is two reads of every group: the counts at its end less those at
 * its start are added to the totals (the events count all along; only what
 * falls inside a window is kept). The reads themselves cost something that
 * lands inside the window (task-clock: one read's return and the next
 * one's entry, 0.8-1.4 us on the development guest): that cost is
 * measured on 128 empty windows (nothing between start and end; their mean
 * without the top sixteenth) and taken off, windows x cost, never below
 * zero; the record gives the count before (`counted`) and the cost
 * (`window_cost`) beside.
 *
 * Groups: task-clock alone, the other software events in one: a group
 * mixing the two kinds of software event loses counts (on Linux 6.18 a
 * page-fault event grouped under task-clock missed about a fifth of the
 * faults, and task-clock under a page-fault leader about a fifth of the
 * time). task-clock is read innermost, the other groups' reads outside its
 * window. cycles and instructions form one group, so ipc comes from one
 * window; every other hardware or raw event is alone, so a PMU with few
 * counters multiplexes them (the record gives the fraction of the time
 * each was counting) rather than never scheduling one oversized group.
 *
 * What is counted: the probe's measuring thread and, through inherit=1,
 * every process and thread it starts while the counters are open (a fork
 * benchmark's children, so the child's side of fork and exit is in the
 * figures, as far as it falls inside a window). Processes and threads
 * started in setup() (ring members, concurrency workers, partner threads)
 * are not counted. Each figure is divided by the operations of the windows:
 * a value per operation, the same operation as the result's value.
 *
 * Unsupported is a normal outcome, never zero and never missing: every
 * requested counter appears in the record, with status "unsupported" and
 * the reason when the machine cannot count it (no PMU in a VM, an event the
 * PMU lacks, perf_event_open forbidden). */
#ifndef OSM_COUNTERS_H
#define OSM_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

#include "emit.h"

#define OSM_MAX_COUNTERS 32

struct osm_counter_def {
	char name[24];     /* as reported: "task-clock", "cycles", "r01c2", ... */
	uint32_t type;     /* PERF_TYPE_*; unused for derived counters */
	uint64_t config;
	const char *unit;  /* "ns", "count" or "ratio" */
	int hw;            /* needs the PMU */
	int kernel_only;   /* the kernel raises it in kernel mode only */
	int derived;       /* ipc = instructions / cycles, nothing opened */
};

struct osm_counter_spec {
	struct osm_counter_def def[OSM_MAX_COUNTERS];
	int n;
};

/* Parses a comma-separated list of counter names, the groups "sw", "hw" and
 * "all", and raw PMU events "r<hex>". Returns 0, or -1 with a message naming
 * the allowed values. */
int osm_counters_parse(const char *list, struct osm_counter_spec *spec, char *err, size_t len);
/* The names `--counters` accepts, for usage and error messages. */
const char *osm_counters_names(void);

struct osm_counters;

struct osm_counters *osm_counters_new(const struct osm_counter_spec *spec); /* NULL: out of memory */
void osm_counters_open(struct osm_counters *c);
void osm_counters_begin(struct osm_counters *c);
void osm_counters_end(struct osm_counters *c, uint64_t ops);
void osm_counters_finish(struct osm_counters *c);
/* After finish: the counter `name`'s count per operation (the windows' own
 * cost taken off) and one empty window's count. 0, or -1 when it has no
 * figure (unsupported, not counted, derived, or not asked for). */
int osm_counters_get(const struct osm_counters *c, const char *name, double *per_op, double *window_cost);
/* What the record says about the operation the figures are per: the bytes
 * one operation moves (bandwidth benchmarks; 0: not one), and a note on what
 * the windows cover besides the timed operation (a string that outlives c;
 * NULL: nothing besides it). Either may be set on its own. */
void osm_counters_describe(struct osm_counters *c, double bytes_per_op, const char *note);
/* One window's own cost from n empty windows' counts v (sorted in place):
 * their mean without the top sixteenth; 0 for n = 0. */
double osm_counters_window_cost(double *v, size_t n);
/* counted less windows x window_cost, never below 0. */
double osm_counters_net(double counted, uint64_t windows, double window_cost);
/* Writes ops, windows, bytes_per_op, note, kernel, kernel_reason, inherit and counters into the open
 * record (docs/schema.md, `counters`). */
void osm_counters_write(struct osm_json *j, const struct osm_counters *c);
void osm_counters_free(struct osm_counters *c);

#endif
