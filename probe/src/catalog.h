/* catalog.h - the families[] array, name lookup, parameter values, suites,
 * `list` output, and the start-up self-check of every table row. */
#ifndef OSM_CATALOG_H
#define OSM_CATALOG_H

#include <stddef.h>
#include <stdio.h>

#include "bench.h"
#include "emit.h"
#include "lebench.h"

/* One benchmark with one set of parameter values: what `run` executes. */
struct osm_instance {
	const struct osm_family *fam;
	const struct osm_bench *bench;
	struct osm_pval params[OSM_MAX_PARAMS];
	const struct osm_lebench_row *row; /* the LEBench row it reproduces (suite lebench), or NULL */
};

extern const struct osm_family *const osm_families[];
extern const size_t osm_n_families;

/* "family.op" -> row, or NULL. */
const struct osm_bench *osm_find_bench(const char *full, const struct osm_family **fam);
void osm_full_name(const struct osm_family *f, const struct osm_bench *b, char *buf, size_t len);
int osm_nparams(const struct osm_bench *b);
const char *osm_unit_name(enum osm_unit u);

void osm_instance_init(struct osm_instance *in, const struct osm_family *f, const struct osm_bench *b);
/* Sets parameter key. Returns 0; -1 when the benchmark has no such
 * parameter (err lists the ones it has); -2 when the value is invalid (err
 * names the allowed values). */
int osm_instance_set(struct osm_instance *in, const char *key, const char *value,
		     char *err, size_t len);
/* Applies "k=v[,k=v]" (one sweep element). Same returns as above. */
int osm_instance_apply(struct osm_instance *in, const char *assignments, char *err, size_t len);

/* Suite name -> OSM_SUITE_* bit, or 0 for an unknown name. */
unsigned osm_suite_bit(const char *name);
extern const char *const osm_suite_names[]; /* NULL-terminated */
/* Every instance of a suite, in catalogue order, sweeps expanded (the full
 * suite's sweep_full where a benchmark has one). The caller
 * frees *out. Returns the count, or -1 (out of memory or a bad sweep). */
int osm_suite_instances(unsigned bit, struct osm_instance **out);
/* The instances one benchmark's sweep expands to (at least the defaults). */
int osm_sweep_instances(const struct osm_family *f, const struct osm_bench *b,
			struct osm_instance **out);

/* The instance a LEBench row stands for. Returns 0; 1 when the row's
 * family is not built yet (a pending row, err says which); -1 when the
 * family exists but the benchmark or its parameters do not (err). */
int osm_lebench_instance(const struct osm_lebench_row *r, struct osm_instance *out, char *err, size_t len);

/* Checks every row (and every LEBench row); returns 0, or -1 with the
 * first problem in err. */
int osm_catalog_check(char *err, size_t len);

void osm_emit_params(struct osm_json *j, const char *key, const struct osm_instance *in);
void osm_catalog_list_json(FILE *f, int all);
void osm_catalog_list_text(FILE *f, int all);

#endif
