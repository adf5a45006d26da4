/* main.c - osmeter-probe: argv -> list | run | serve | sysinfo | version.
 *
 * Exit codes (docs/exit-codes.md):
 *   0  everything ran (some benchmarks may have been skipped, with reasons)
 *   1  at least one benchmark failed (an `error` record says why)
 *   2  bad input: unknown command, option, benchmark, parameter or value;
 *      nothing was run and nothing was written to the output
 *   3  cannot run: the output cannot be written, no usable clock, no work
 *      directory
 *   killed by SIGINT/SIGTERM/...: after cleaning up and writing an `end`
 *      record with status "interrupted", the probe dies of the same signal
 *      (a shell shows 128 + the signal number).
 * `serve` runs the network peer: 0 when SIGINT, SIGTERM or SIGHUP stopped
 * it, 2 bad options (a non-loopback address without a token included), 3
 * when it cannot listen. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "affinity.h"
#include "build_info.h"
#include "catalog.h"
#include "cleanup.h"
#include "cli.h"
#include "clock.h"
#include "counters.h"
#include "emit.h"
#include "harness.h"
#include "log.h"
#include "peer.h"
#include "profile.h"
#include "samples.h"
#include "sysinfo.h"

enum { EXIT_OK = 0, EXIT_BENCH_FAILED = 1, EXIT_USAGE = 2, EXIT_CANNOT_RUN = 3 };

#ifndef OSM_BUILD_STATIC
#define OSM_BUILD_STATIC 0
#endif

static int has_flag(int argc, char **argv, const char *flag)
{
	for (int i = 0; i < argc; i++)
		if (!strcmp(argv[i], flag))
			return 1;
	return 0;
}

static int only_flags(int argc, char **argv, const char *const *allowed)
{
	for (int i = 0; i < argc; i++) {
		int ok = 0;
		for (int k = 0; allowed[k]; k++)
			ok |= !strcmp(argv[i], allowed[k]);
		if (!ok) {
			osm_err("unknown argument '%s'", argv[i]);
			return 0;
		}
	}
	return 1;
}

static int cmd_list(int argc, char **argv)
{
	static const char *const allowed[] = {"--json", "--all", NULL};
	if (!only_flags(argc, argv, allowed)) {
		fprintf(stderr, "usage: osmeter-probe list [--json] [--all]\n");
		return EXIT_USAGE;
	}
	if (has_flag(argc, argv, "--json"))
		osm_catalog_list_json(stdout, has_flag(argc, argv, "--all"));
	else
		osm_catalog_list_text(stdout, has_flag(argc, argv, "--all"));
	return EXIT_OK;
}

static int cmd_sysinfo(int argc, char **argv)
{
	static const char *const allowed[] = {"--json", NULL};
	if (!only_flags(argc, argv, allowed)) {
		fprintf(stderr, "usage: osmeter-probe sysinfo [--json]\n");
		return EXIT_USAGE;
	}
	if (has_flag(argc, argv, "--json")) {
		struct osm_json j;
		osm_json_init(&j, stdout);
		osm_json_doc_begin(&j);
		osm_json_int(&j, "schema", OSM_SCHEMA_VERSION);
		osm_sysinfo_write_fields(&j);
		osm_json_doc_end(&j);
	} else {
		osm_sysinfo_print_text(stdout);
	}
	return EXIT_OK;
}

/* What a result says about how it was measured (result.flags, schema.md). */
struct run_state {
	int pinned;     /* the pin to the chosen CPU succeeded */
	int tsc_stable; /* clock is tsc: 1 the kernel trusts it, 0 marked unstable, -1 unknown */
};

static void emit_meta(struct osm_json *j, const struct osm_run_opts *o, int cpu, int cpu_requested,
		      const char *fifo_why, const char *mlock_why, const struct run_state *rs,
		      const char *pin_why)
{
	const struct osm_clock_info *ci = osm_clock_get_info();
	char ts[32];
	osm_utc_now(ts);
	osm_json_record_begin(j, "meta");
	osm_json_int(j, "schema", OSM_SCHEMA_VERSION);
	osm_json_str(j, "probe_version", OSM_VERSION);
	osm_json_str(j, "command", o->hotspots ? "hotspots" : "run");
	osm_json_str(j, "suite", o->suite);
	osm_json_str(j, "start_time", ts);
	osm_json_obj_begin(j, "clock");
	osm_json_str(j, "source", ci->source);
	osm_json_bool(j, "forced", ci->forced);
	osm_json_num(j, "hz", ci->hz);
	osm_json_num(j, "tick_ns", ci->tick_ns);
	osm_json_num(j, "resolution_ns", ci->resolution_ns);
	osm_json_num(j, "overhead_ns", ci->overhead_ns);
	if (ci->invariant < 0)
		osm_json_null(j, "invariant");
	else
		osm_json_bool(j, "invariant", ci->invariant);
	osm_json_num(j, "calibration_ns", ci->calibration_ns);
	if (rs->tsc_stable < 0)
		osm_json_null(j, "kernel_stable");
	else
		osm_json_bool(j, "kernel_stable", rs->tsc_stable);
	osm_json_obj_end(j);
	osm_json_int(j, "cpu", cpu);
	osm_json_str(j, "cpu_choice", cpu_requested ? "requested" : "least_busy");
	osm_json_bool(j, "pinned", rs->pinned);
	osm_json_str(j, "pin_error", pin_why);
	osm_json_bool(j, "lebench_exact", o->lebench_exact);
	if (o->inject_bench) {
		osm_json_obj_begin(j, "inject");
		osm_json_str(j, "bench", o->inject_name);
		osm_json_num(j, "ns_per_op", o->inject_ns);
		osm_json_obj_end(j);
	} else {
		osm_json_null(j, "inject");
	}
	osm_json_obj_begin(j, "fifo");
	if (o->fifo)
		osm_json_int(j, "requested", o->fifo);
	else
		osm_json_null(j, "requested");
	osm_json_bool(j, "applied", o->fifo && !fifo_why);
	osm_json_str(j, "reason", fifo_why);
	osm_json_obj_end(j);
	osm_json_obj_begin(j, "mlock");
	osm_json_bool(j, "requested", o->mlock);
	osm_json_bool(j, "applied", o->mlock && !mlock_why);
	osm_json_str(j, "reason", mlock_why);
	osm_json_obj_end(j);
	osm_json_obj_begin(j, "budget");
	osm_json_num(j, "min_time_s", o->budget.min_time_s);
	osm_json_num(j, "max_time_s", o->budget.max_time_s);
	osm_json_num(j, "warmup_s", o->budget.warmup_s);
	osm_json_int(j, "min_samples", o->budget.min_samples);
	osm_json_int(j, "max_samples", o->budget.max_samples);
	osm_json_num(j, "target_rse", o->budget.target_rse);
	osm_json_num(j, "fraction", o->budget_fraction);
	osm_json_obj_end(j);
	osm_json_obj_begin(j, "build");
	osm_json_str(j, "compiler", OSM_BUILD_COMPILER);
	osm_json_str(j, "flags", OSM_BUILD_FLAGS);
	osm_json_bool(j, "static", OSM_BUILD_STATIC);
	osm_json_str(j, "build_type", OSM_BUILD_TYPE);
	osm_json_str(j, "arch", OSM_ARCH_NAME);
	osm_json_obj_end(j);
	osm_sysinfo_write_machine(j, "machine");
	osm_json_record_end(j);
}

static void emit_head(struct osm_json *j, const char *type, const char *name,
		      const struct osm_instance *in)
{
	osm_json_record_begin(j, type);
	osm_json_str(j, "bench", name);
	osm_emit_params(j, "params", in);
	osm_json_str(j, "lebench_row", in->row ? in->row->name : NULL);
}

/* The benchmark's facts in words (result, skip and error records). */
static void emit_info(struct osm_json *j, const struct osm_ctx *ctx)
{
	if (!ctx->n_info)
		return;
	osm_json_obj_begin(j, "info");
	for (int i = 0; i < ctx->n_info; i++)
		osm_json_str(j, ctx->info[i].key, ctx->info[i].value);
	osm_json_obj_end(j);
}

static void emit_measurement(struct osm_json *j, const char *name, const struct osm_instance *in,
			     const struct osm_ctx *ctx, const struct osm_measurement *m,
			     const struct osm_budget *budget, const struct run_state *rs)
{
	const char *unit = osm_unit_name(in->bench->unit);
	emit_head(j, "samples", name, in);
	osm_json_str(j, "unit", unit);
	osm_json_int(j, "batch", (int64_t)m->batch);
	osm_json_arr_begin(j, "values");
	double sum = 0, min = INFINITY;
	for (size_t i = 0; i < m->n; i++) {
		osm_json_num(j, NULL, m->values[i]);
		sum += m->values[i];
		if (m->values[i] < min)
			min = m->values[i];
	}
	osm_json_arr_end(j);
	osm_json_record_end(j);

	const struct osm_clock_info *ci = osm_clock_get_info();
	double median = osm_median(m->values, m->n);
	emit_head(j, "result", name, in);
	osm_json_str(j, "unit", unit);
	osm_json_int(j, "n", (int64_t)m->n);
	osm_json_num(j, "min", min);
	osm_json_num(j, "median", median);
	osm_json_num(j, "mean", sum / (double)m->n);
	osm_json_int(j, "batch", (int64_t)m->batch);
	osm_json_int(j, "cpu", ctx->cpu);
	osm_json_str(j, "placement", ctx->placement);
	osm_json_num(j, "elapsed_s", m->elapsed_s);
	osm_json_str(j, "stop_reason", m->stop_reason);
	osm_json_num(j, "rse", m->rse);
	osm_json_num(j, "tau", m->tau > 0 ? m->tau : NAN);
	if (in->bench->unit == OSM_UNIT_NS && !strcmp(ci->source, "tsc"))
		osm_json_num(j, "ref_cycles", median * ci->hz / 1e9);
	else
		osm_json_null(j, "ref_cycles");
	/* What the figure cannot vouch for (docs/schema.md, result.flags). */
	osm_json_arr_begin(j, "flags");
	if (!m->calibrated)
		osm_json_str(j, NULL, "calibration-timeout");
	if (!m->calibrated || !(m->rse <= budget->target_rse))
		osm_json_str(j, NULL, "precision-unmet");
	if (!rs->pinned)
		osm_json_str(j, NULL, "not-pinned");
	if (!strcmp(ci->source, "tsc") && rs->tsc_stable == 0)
		osm_json_str(j, NULL, "tsc-unstable");
	osm_json_arr_end(j);
	osm_json_obj_begin(j, "extra");
	for (int i = 0; i < ctx->n_extra; i++)
		osm_json_num(j, ctx->extra[i].key, ctx->extra[i].value);
	osm_json_obj_end(j);
	emit_info(j, ctx);
	osm_json_record_end(j);
}

/* The `profile` record after a result (hotspots; docs/schema.md), and the
 * folded stacks in --folded's file. */
static void emit_profile(struct osm_json *j, const char *name, const struct osm_instance *in,
			 const struct osm_profile *p, const char *folded)
{
	emit_head(j, "profile", name, in);
	osm_profile_write(j, p);
	osm_json_record_end(j);
	if (!folded)
		return;
	FILE *f = fopen(folded, "w");
	if (!f || osm_profile_write_folded(f, p) || fclose(f))
		osm_warn("cannot write the folded stacks to %s: %s", folded, strerror(errno));
}

/* The `counters` record after a result (--counters; docs/schema.md). */
static void emit_counters(struct osm_json *j, const char *name, const struct osm_instance *in,
			  const struct osm_counters *c)
{
	emit_head(j, "counters", name, in);
	osm_counters_write(j, c);
	osm_json_record_end(j);
}

static int run_one(struct osm_json *j, const struct osm_instance *in, int cpu,
		   const struct osm_budget *budget, const struct osm_counter_spec *cspec,
		   const struct osm_run_opts *o, const struct run_state *rs)
{
	char name[128];
	osm_full_name(in->fam, in->bench, name, sizeof(name));
	struct osm_ctx ctx;
	memset(&ctx, 0, sizeof(ctx));
	ctx.bench = in->bench;
	memcpy(ctx.params, in->params, sizeof(ctx.params));
	ctx.cpu = cpu;
	ctx.workdir = NULL;
	if (o->lebench_exact) {
		/* One call per clock pair, or what LEBench times per pair. */
		ctx.lebench_exact = 1;
		ctx.fixed_batch = in->row ? in->row->exact_batch : 1;
	}
	if (o->inject_bench == in->bench)
		ctx.inject_ns = o->inject_ns;
	if (cspec && !(ctx.counters = osm_counters_new(cspec)))
		osm_warn("%s: no memory for the counters; running without them", name);
	if (o->hotspots && !(ctx.profile = osm_profile_new(&o->profile)))
		osm_warn("%s: no memory for the profile; running without it", name);

	enum osm_status st;
	struct osm_measurement m;
	memset(&m, 0, sizeof(m));
	if ((in->bench->flags & OSM_NEEDS_ROOT) && geteuid() != 0)
		st = osm_fail(&ctx, OSM_SKIP, "needs root");
	else
		st = osm_measure(&ctx, budget, &m);

	if (st == OSM_OK) {
		emit_measurement(j, name, in, &ctx, &m, budget, rs);
		if (ctx.counters)
			emit_counters(j, name, in, ctx.counters);
		if (ctx.profile)
			emit_profile(j, name, in, ctx.profile, o->profile.folded);
	} else {
		emit_head(j, st == OSM_SKIP ? "skip" : "error", name, in);
		osm_json_str(j, st == OSM_SKIP ? "reason" : "message", ctx.msg[0] ? ctx.msg : "unknown");
		emit_info(j, &ctx);
		osm_json_record_end(j);
	}
	osm_measurement_free(&m);
	osm_counters_free(ctx.counters);
	osm_profile_free(ctx.profile);
	osm_cleanup_count(st);
	if (!osm_log_quiet && st != OSM_OK)
		osm_info("%s: %s: %s", name, st == OSM_SKIP ? "skip" : "error", ctx.msg);
	return st;
}

static void emit_end(struct osm_json *j)
{
	int counts[3];
	char ts[32];
	osm_cleanup_get_counts(counts);
	osm_utc_now(ts);
	osm_json_record_begin(j, "end");
	osm_json_str(j, "status", "complete");
	osm_json_null(j, "signal");
	osm_json_str(j, "end_time", ts);
	osm_json_obj_begin(j, "counts");
	osm_json_int(j, "ok", counts[OSM_OK]);
	osm_json_int(j, "skip", counts[OSM_SKIP]);
	osm_json_int(j, "error", counts[OSM_ERROR]);
	osm_json_obj_end(j);
	osm_json_record_end(j);
}

/* Pinning, SCHED_FIFO and mlock, then the meta record. */
static void start_run(struct osm_json *j, const struct osm_run_opts *o, int cpu, struct run_state *rs)
{
	char pin_why[256], fifo_why[256], mlock_why[256];
	const char *pw = NULL, *fw = NULL, *mw = NULL;
	rs->pinned = 1;
	rs->tsc_stable = osm_clock_kernel_tsc_stable();
	if (osm_pin_self(cpu)) {
		rs->pinned = 0;
		snprintf(pin_why, sizeof(pin_why), "cannot pin to CPU %d: %s", cpu, strerror(errno));
		pw = pin_why;
		osm_warn("%s; every result is flagged not-pinned", pin_why);
	}
	if (o->fifo && osm_set_fifo(o->fifo, fifo_why, sizeof(fifo_why))) {
		fw = fifo_why;
		osm_warn("SCHED_FIFO not applied: %s; running under the normal scheduler", fifo_why);
	}
	if (o->mlock && osm_lock_memory(mlock_why, sizeof(mlock_why))) {
		mw = mlock_why;
		osm_warn("memory not locked: %s", mlock_why);
	}
	emit_meta(j, o, cpu, o->cpu >= 0, fw, mw, rs, pw);
}

/* Every instance, each after its progress record. Returns 1 when one failed,
 * 0, or -1 when the output cannot be written. */
static int run_all(struct osm_json *j, const struct osm_run_opts *o, int cpu, const struct run_state *rs)
{
	int failed = 0;
	char name[128];
	for (int i = 0; i < o->n_instances; i++) {
		const struct osm_instance *in = &o->instances[i];
		osm_full_name(in->fam, in->bench, name, sizeof(name));
		osm_json_record_begin(j, "progress");
		osm_json_int(j, "index", i);
		osm_json_int(j, "total", o->n_instances);
		osm_json_str(j, "bench", name);
		osm_emit_params(j, "params", in);
		osm_json_str(j, "lebench_row", in->row ? in->row->name : NULL);
		osm_json_record_end(j);
		if (run_one(j, in, cpu, &o->budget, o->have_counters ? &o->counters : NULL, o, rs) == OSM_ERROR)
			failed = 1;
		if (ferror(j->f))
			return -1;
	}
	return failed;
}

static int cmd_run(int argc, char **argv)
{
	struct osm_run_opts o;
	char err[8192];
	if (osm_cli_parse_run(argc, argv, &o, err, sizeof(err))) {
		osm_err("%s", err);
		return EXIT_USAGE;
	}
	osm_log_quiet = o.quiet;
	if (o.hotspots && o.profile.folded && o.n_instances != 1) {
		osm_err("--folded writes one profile: name one benchmark instance (%d given)", o.n_instances);
		osm_cli_free_run(&o);
		return EXIT_USAGE;
	}
	/* The least busy CPU is sampled over the clock's 50 ms calibration
	 * (a sleep), not over 50 ms more: the probe starts in 50 ms, not 100. */
	if (o.cpu < 0)
		osm_least_busy_begin();
	/* The forced clock must be usable before anything is written. */
	if (osm_clock_init(o.clock, 50, err, sizeof(err))) {
		osm_err("%s", err);
		osm_cli_free_run(&o);
		return o.clock ? EXIT_USAGE : EXIT_CANNOT_RUN;
	}

	FILE *out = stdout;
	if (o.output) {
		out = fopen(o.output, "w");
		if (!out) {
			osm_err("cannot write %s: %s", o.output, strerror(errno));
			osm_cli_free_run(&o);
			return EXIT_CANNOT_RUN;
		}
	}
	if (o.die_with_parent) {
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() == 1) /* the parent is already gone */
			raise(SIGTERM);
	}
	osm_cleanup_install_signals(fileno(out));

	int cpu = o.cpu >= 0 ? o.cpu : osm_least_busy_end(50);
	struct run_state rs;
	struct osm_json j;
	osm_json_init(&j, out);
	start_run(&j, &o, cpu, &rs);
	int failed = run_all(&j, &o, cpu, &rs);
	if (failed < 0) {
		osm_err("cannot write the output: %s", strerror(errno));
		osm_cleanup_run_all();
		osm_cli_free_run(&o);
		return EXIT_CANNOT_RUN;
	}
	emit_end(&j);
	osm_cleanup_run_all();
	osm_cli_free_run(&o);
	int werr = ferror(out) || (out != stdout && fclose(out));
	if (werr) {
		osm_err("cannot write the output: %s", strerror(errno));
		return EXIT_CANNOT_RUN;
	}
	return failed ? EXIT_BENCH_FAILED : EXIT_OK;
}

/* The network peer until SIGINT/SIGTERM/SIGHUP (exit 0); bad options
 * exit 2, a peer that cannot listen 3. */
static int cmd_serve(int argc, char **argv)
{
	struct osm_peer_config cfg;
	char err[1024];
	if (osm_cli_parse_serve(argc, argv, &cfg, err, sizeof(err))) {
		osm_err("%s", err);
		osm_cli_serve_usage(stderr);
		return EXIT_USAGE;
	}
	if (osm_peer_serve(&cfg, err, sizeof(err))) {
		osm_err("%s", err);
		return EXIT_CANNOT_RUN;
	}
	return EXIT_OK;
}

/* Every argument must be UTF-8: names, values and paths are echoed in JSON
 * strings, and a byte that is not UTF-8 could only be replaced there
 * (docs/exit-codes.md). */
static int check_utf8(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		long bad = osm_utf8_check(argv[i]);
		if (bad >= 0) {
			osm_err("argument %d is not valid UTF-8 (byte 0x%02x at offset %ld); osmeter-probe takes "
				"UTF-8 arguments only", i, (unsigned char)argv[i][bad], bad);
			return -1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	char err[512];
	if (osm_catalog_check(err, sizeof(err))) {
		osm_err("internal: catalogue check failed: %s", err);
		return EXIT_CANNOT_RUN;
	}
	if (argc < 2) {
		osm_cli_usage(stderr);
		return EXIT_USAGE;
	}
	if (check_utf8(argc, argv))
		return EXIT_USAGE;
	const char *cmd = argv[1];
	if (!strcmp(cmd, "list"))
		return cmd_list(argc - 2, argv + 2);
	if (!strcmp(cmd, "run") || !strcmp(cmd, "hotspots"))
		return cmd_run(argc - 1, argv + 1);
	if (!strcmp(cmd, "serve"))
		return cmd_serve(argc - 2, argv + 2);
	if (!strcmp(cmd, "sysinfo"))
		return cmd_sysinfo(argc - 2, argv + 2);
	if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
		printf("osmeter-probe %s (schema %d, %s)\n", OSM_VERSION, OSM_SCHEMA_VERSION, OSM_ARCH_NAME);
		return EXIT_OK;
	}
	if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
		osm_cli_usage(stdout);
		return EXIT_OK;
	}
	osm_err("unknown command '%s'; allowed: list, run, hotspots, serve, sysinfo, version, help", cmd);
	osm_cli_usage(stderr);
	return EXIT_USAGE;
}
