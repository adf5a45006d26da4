/* catalog_int.h - what catalog.c shares with catalog_list.c (`list`).
 * Not for other modules: they use catalog.h. */
#ifndef OSM_CATALOG_INT_H
#define OSM_CATALOG_INT_H

#include <stddef.h>

#include "bench.h"
#include "catalog.h"
#include "emit.h"

/* Suite bits in osm_suite_names[] order. */
extern const unsigned osm_cat_suite_bits[];

const char *osm_cat_ptype_name(enum osm_ptype t);
/* A string parameter's longest value in bytes (max_len, or PATH_MAX - 1),
 * and why, in words. */
size_t osm_cat_str_max(const struct osm_param *p);
const char *osm_cat_str_max_why(const struct osm_param *p);
void osm_cat_list_choices(const struct osm_param *p, char *buf, size_t len);
int osm_cat_in_lebench(const struct osm_bench *b);
/* The instances of a sweep string for b (NULL: the defaults); the count,
 * or -1. The caller frees *out. */
int osm_cat_sweep_of(const struct osm_family *f, const struct osm_bench *b, const char *sweep,
		     struct osm_instance **out);
void osm_cat_emit_param_value(struct osm_json *j, const char *key, const struct osm_param *p,
			      const struct osm_pval *v);

#endif
