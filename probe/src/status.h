/* status.h - how one benchmark instance ended. The lowest layer: the
 * benchmark contract (bench.h) returns it, and the clean-up code (cleanup.c)
 * counts instances by it for the `end` record, without knowing benchmarks. */
#ifndef OSM_STATUS_H
#define OSM_STATUS_H

enum osm_status { OSM_OK = 0, OSM_SKIP = 1, OSM_ERROR = 2 };

#endif
