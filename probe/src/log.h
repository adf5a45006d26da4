/* log.h - diagnostics on stderr. Never exits. */
#ifndef OSM_LOG_H
#define OSM_LOG_H

#include "compiler.h"

extern int osm_log_quiet; /* 1: only errors */

void osm_warn(const char *fmt, ...) OSM_PRINTF(1, 2);
void osm_info(const char *fmt, ...) OSM_PRINTF(1, 2);
void osm_err(const char *fmt, ...) OSM_PRINTF(1, 2);

#endif
