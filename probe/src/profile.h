/* profile.h - where a benchmark's time goes (`osmeter-probe hotspots`,
 * docs/methods/hotspots.md): its timed region sampled with perf_event_open
 * (mode "sample") or traced with the ftrace function tracer (mode
 * "function"), folded into stacks.
 *
 * The harness drives it exactly like the counters (counters.h): open after
 * setup(), enable/disable around each timed sampling batch (or the
 * benchmark's own osm_count_begin/end bracket), finish before teardown().
 * So set-up, warm-up, calibration and clean-up are not in the profile.
 * Processes and threads the benchmark starts while the profile is open are
 * followed (perf inherit; ftrace function-fork). */
#ifndef OSM_PROFILE_H
#define OSM_PROFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "emit.h"

enum osm_profile_mode { OSM_PROF_SAMPLE = 1, OSM_PROF_FUNCTION = 2 };
enum osm_profile_event { OSM_PROF_AUTO = 0, OSM_PROF_CPU_CLOCK = 1, OSM_PROF_CYCLES = 2 };

struct osm_profile_spec {
	int mode;          /* enum osm_profile_mode */
	int event;         /* enum osm_profile_event (sample mode) */
	int frequency;     /* samples per second (sample mode) */
	int buffer_kb;     /* ftrace buffer per CPU (function mode) */
	const char *folded; /* also write the folded stacks here (NULL: no) */
};

/* Parses "sample" / "function" and "auto" / "cpu-clock" / "cycles". */
int osm_profile_parse_mode(const char *s, int *mode);
int osm_profile_parse_event(const char *s, int *event);

struct osm_profile;
struct osm_profile *osm_profile_new(const struct osm_profile_spec *spec); /* NULL: out of memory */
void osm_profile_open(struct osm_profile *p);
void osm_profile_enable(struct osm_profile *p);
void osm_profile_disable(struct osm_profile *p, uint64_t ops);
void osm_profile_finish(struct osm_profile *p);
/* The fields of the `profile` record (docs/schema.md). */
void osm_profile_write(struct osm_json *j, const struct osm_profile *p);
/* The folded stacks, one "frames weight" line each; 0 or -1 (errno). */
int osm_profile_write_folded(FILE *f, const struct osm_profile *p);
void osm_profile_free(struct osm_profile *p);

#endif
