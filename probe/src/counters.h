/* counters.h - performance counters around the timed region
 * (`run --counters LIST`), with perf_event_open(2).
 *
 * Life of one benchmark instance's counters (harness.c drives it):
 *   osm_counters_new(spec)       from the validated --counters list
 *   osm_counters_open(c)         after setup(): opens every event, disabled;
 *                                one that cannot be opened is "unsupported"
 *   osm_counters_enable(c)       just before each timed batch of the
 *   osm_counters_disable(c, ops) sampling phase, just after it (warm-up and
 *                                calibration batches are not counted)
 *   osm_counters_finish(c)       before teardown(): reads and closes
 *   osm_counters_write(j, c)     the fields of the `counters` record
 *
 * What is counted: the probe's measuring thread and, through inherit=1,
 * every process and thread it starts while the counters are open (a fork
 * benchmark's children, so the child's side of fork and exit is in the
 * figures). Processes and threads started in setup() (ring members,
 * concurrency workers, partner threads) are not counted. Each figure is
 * divided by the operations of the counted batches: a value per operation.
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
void osm_counters_enable(struct osm_counters *c);
void osm_counters_disable(struct osm_counters *c, uint64_t ops);
void osm_counters_finish(struct osm_counters *c);
/* Writes ops, kernel, kernel_reason, inherit and counters into the open
 * record (docs/schema.md, `counters`). */
void osm_counters_write(struct osm_json *j, const struct osm_counters *c);
void osm_counters_free(struct osm_counters *c);

#endif
