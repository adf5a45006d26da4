/* cli.h - `run` and `serve` options: parsed and validated completely before anything
 * runs, so bad input never produces a half-run. */
#ifndef OSM_CLI_H
#define OSM_CLI_H

#include <stddef.h>

#include "catalog.h"
#include "counters.h"
#include "harness.h"
#include "peer.h"
#include "profile.h"

/* The probe's exit codes (docs/exit-codes.md; main.c says when each). */
enum osm_exit { OSM_EXIT_OK = 0, OSM_EXIT_BENCH_FAILED = 1, OSM_EXIT_USAGE = 2, OSM_EXIT_CANNOT_RUN = 3 };

struct osm_run_opts {
	struct osm_instance *instances; /* what to run, in order (owned) */
	int n_instances;
	const char *suite;       /* suite name or NULL */
	struct osm_budget budget;
	int cpu;                 /* -1 = least busy */
	int fifo;                /* 0 = no SCHED_FIFO, else priority 1..99 */
	int mlock;
	const char *clock;       /* forced clock name or NULL */
	const char *output;      /* -o FILE or NULL for stdout */
	int die_with_parent;
	int quiet;
	int lebench_exact;       /* --lebench-exact: one call per clock pair, CLOCK_MONOTONIC */
	double budget_fraction;  /* --budget-fraction: this run's share of the suite's default budget */
	const struct osm_bench *inject_bench; /* --inject-ns NAME=NS: a testing aid for compare */
	char inject_name[128];
	double inject_ns;
	int have_counters;       /* --counters given */
	struct osm_counter_spec counters; /* its validated list */
	int hotspots;            /* the `hotspots` command: every instance is profiled */
	struct osm_profile_spec profile; /* --profile, --event, --frequency, --buffer-kb, --folded */
};

/* Default budgets per suite (a named run uses "standard"). */
void osm_budget_for_suite(const char *suite, struct osm_budget *b);

/* Parses argv from "run" or "hotspots" (argv[0]) on. Returns 0, or -1 with the message in err. */
int osm_cli_parse_run(int argc, char **argv, struct osm_run_opts *o, char *err, size_t len);
void osm_cli_free_run(struct osm_run_opts *o);
void osm_cli_usage(FILE *f);

/* Parses argv after "serve" into a peer configuration (docs/peer.md):
 * address, token (--token, --token-file, else $OSMETER_PEER_TOKEN),
 * limits, --quiet. A non-loopback address without a token is refused
 * here. Returns 0, or -1 with the message in err. */
int osm_cli_parse_serve(int argc, char **argv, struct osm_peer_config *cfg, char *err, size_t len);
void osm_cli_serve_usage(FILE *f);

#endif
