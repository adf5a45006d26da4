/* cli_param.h - `run --param KEY=VALUES`: value lists, integer ranges and
 * repeated keys turned into benchmark instances.
 *
 *   KEY=V           one value
 *   KEY=V1,V2,...   several values: one instance per value
 *   KEY=A..B        integer parameters only: every integer from A to B
 *   --param KEY=A --param KEY=B   the same as KEY=A,B
 *
 * A value given twice (1,1 or 1,01 or 4k,4096) is measured once; values keep
 * the order of their first appearance. A string parameter (a path) takes each
 * --param value whole, commas and ".." included. Several keys give the
 * product of their lists. Nothing is truncated: a list beyond a limit below
 * is refused with a message that names the limit. */
#ifndef OSM_CLI_PARAM_H
#define OSM_CLI_PARAM_H

#include <stddef.h>

#include "catalog.h"

#define OSM_MAX_PARAM_VALUES 1024 /* distinct values of one parameter in one run */
#define OSM_MAX_INSTANCES 65536   /* instances one run may have after --param */

/* Applies the assignments (each "KEY=VALUES", command-line order) to the
 * instance list *all (*n entries, malloc'ed; replaced). A key that no
 * instance has, a bad value or a list beyond a limit is an error. Returns 0,
 * or -1 with the message in err (*all is then freed and NULL). */
int osm_params_apply(struct osm_instance **all, int *n, const char *const *assign, int n_assign,
		     char *err, size_t len);

#endif
