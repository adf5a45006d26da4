/* sysinfo.h - the machine description (`osmeter-probe sysinfo`, meta.machine).
 *
 * One table of fields drives all three outputs, so they cannot disagree.
 * A field the machine does not expose is null; nothing here fails or prints
 * an error when a file is missing or unreadable (unprivileged, ARM boards,
 * containers, qemu-user). See docs/schema.md. */
#ifndef OSM_SYSINFO_H
#define OSM_SYSINFO_H

#include <stdio.h>

#include "emit.h"

/* Writes  "fields":[{"key":..,"value":..,"help":..},...]  as a member of the
 * current JSON object. */
void osm_sysinfo_write_fields(struct osm_json *j);
/* Writes  key:{"<field key>": value, ...}  (same fields, values only) as a
 * member of the current object. */
void osm_sysinfo_write_machine(struct osm_json *j, const char *key);
/* Human-readable "key: value" lines, for `osmeter-probe sysinfo` without
 * --json. */
void osm_sysinfo_print_text(FILE *f);

#endif
