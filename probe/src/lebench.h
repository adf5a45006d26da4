/* lebench.h - LEBench's 42 figures, one table: each row's LEBench name, the
 * osmeter benchmark and parameters that reproduce it, and LEBench's timed
 * region. It drives `run --suite lebench`, the row labels in every output
 * (`lebench_row` in the records) and docs/lebench.md (`list --json`
 * carries the table). Source: LEBench's TEST_DIR/OS_Eval.c (github
 * LinuxPerfStudy/LEBench); nothing of its code is copied. */
#ifndef OSM_LEBENCH_H
#define OSM_LEBENCH_H

#include <stddef.h>
#include <stdint.h>

struct osm_lebench_row {
	const char *name;       /* LEBench's name: "fork", "fork Child", "small read" */
	const char *bench;      /* the osmeter benchmark, "family.op" */
	const char *params;     /* "k=v[,k=v]" on top of its defaults, or NULL */
	const char *region;     /* LEBench's timed region, one sentence */
	const char *note;       /* where osmeter's harness differs by default, or NULL */
	uint64_t exact_batch;   /* operations LEBench times per clock pair (--lebench-exact) */
	long lebench_iter;      /* LEBench's iteration count (samples) */
};

extern const struct osm_lebench_row osm_lebench_rows[];
extern const size_t osm_n_lebench_rows;

#endif
