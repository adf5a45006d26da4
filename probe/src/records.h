/* records.h - what `run` and `hotspots` write (docs/schema.md), one JSON
 * Lines record per call: meta, progress, samples and result, counters,
 * profile, skip or error, end; and the `sysinfo --json` document. The run
 * loop (run.c) decides what happens; these say it, in the schema's words
 * and key order. */
#ifndef OSM_RECORDS_H
#define OSM_RECORDS_H

#include <stdio.h>

#include "bench.h"
#include "catalog.h"
#include "cli.h"
#include "counters.h"
#include "emit.h"
#include "harness.h"
#include "profile.h"

/* What a result says about how it was measured (result.flags, schema.md). */
struct osm_run_state {
	int pinned;     /* the pin to the chosen CPU succeeded */
	int tsc_stable; /* clock is tsc: 1 the kernel trusts it, 0 marked unstable, -1 unknown */
};

/* The run's first record: the command, the clock, the CPU (cpu_requested:
 * given by --cpu, else the least busy), pinning, SCHED_FIFO and mlock (a
 * reason each when not applied, else NULL), the budget, the build and the
 * machine. */
void osm_record_meta(struct osm_json *j, const struct osm_run_opts *o, int cpu, int cpu_requested,
		     const char *fifo_why, const char *mlock_why, const struct osm_run_state *rs,
		     const char *pin_why);
/* Before each instance: its place in the run, name and parameters. */
void osm_record_progress(struct osm_json *j, int index, int total, const char *name,
			 const struct osm_instance *in);
/* A measured instance: the `samples` record (every value) and the
 * `result` record (figures, flags, extra, info). */
void osm_record_measurement(struct osm_json *j, const char *name, const struct osm_instance *in,
			    const struct osm_ctx *ctx, const struct osm_measurement *m,
			    const struct osm_budget *budget, const struct osm_run_state *rs);
/* The `counters` record after a result (--counters). */
void osm_record_counters(struct osm_json *j, const char *name, const struct osm_instance *in,
			 const struct osm_counters *c);
/* The `profile` record after a result (hotspots), and the folded stacks
 * in the file `folded` unless NULL (a warning when it cannot be written). */
void osm_record_profile(struct osm_json *j, const char *name, const struct osm_instance *in,
			const struct osm_profile *p, const char *folded);
/* An instance that did not measure: `skip` (st OSM_SKIP, its reason) or
 * `error` (its message), with the benchmark's info. */
void osm_record_failure(struct osm_json *j, const char *name, const struct osm_instance *in,
			enum osm_status st, const struct osm_ctx *ctx);
/* The last record of a run that completed: the counts of ok, skip, error. */
void osm_record_end(struct osm_json *j);

/* `sysinfo --json`: one document, the schema version and the machine. */
void osm_write_sysinfo_doc(FILE *f);

#endif
