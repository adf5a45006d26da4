/* run.c - see run.h: the `run` and `hotspots` commands. Options parsed
 * (cli.h) before anything is written; the clock, the output, the CPU;
 * then every instance measured (harness.h) and its records written
 * (records.h); clean-up (cleanup.h) on every path. */
#include "run.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "affinity.h"
#include "catalog.h"
#include "cleanup.h"
#include "cli.h"
#include "clock.h"
#include "counters.h"
#include "emit.h"
#include "harness.h"
#include "log.h"
#include "profile.h"
#include "records.h"

/* One instance: measured (or skipped: needs root), then its records.
 * Returns its status. */
static int run_one(struct osm_json *j, const struct osm_instance *in, int cpu,
		   const struct osm_budget *budget, const struct osm_counter_spec *cspec,
		   const struct osm_run_opts *o, const struct osm_run_state *rs)
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
		osm_record_measurement(j, name, in, &ctx, &m, budget, rs);
		if (ctx.counters)
			osm_record_counters(j, name, in, ctx.counters);
		if (ctx.profile)
			osm_record_profile(j, name, in, ctx.profile, o->profile.folded);
	} else {
		osm_record_failure(j, name, in, st, &ctx);
	}
	osm_measurement_free(&m);
	osm_counters_free(ctx.counters);
	osm_profile_free(ctx.profile);
	osm_cleanup_count(st);
	if (!osm_log_quiet && st != OSM_OK)
		osm_info("%s: %s: %s", name, st == OSM_SKIP ? "skip" : "error", ctx.msg);
	return st;
}

/* Pinning, SCHED_FIFO and mlock, then the meta record. */
static void start_run(struct osm_json *j, const struct osm_run_opts *o, int cpu, struct osm_run_state *rs)
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
	osm_record_meta(j, o, cpu, o->cpu >= 0, fw, mw, rs, pw);
}

/* Every instance, each after its progress record. Returns 1 when one failed,
 * 0, or -1 when the output cannot be written. */
static int run_all(struct osm_json *j, const struct osm_run_opts *o, int cpu, const struct osm_run_state *rs)
{
	int failed = 0;
	char name[128];
	for (int i = 0; i < o->n_instances; i++) {
		const struct osm_instance *in = &o->instances[i];
		osm_full_name(in->fam, in->bench, name, sizeof(name));
		osm_record_progress(j, i, o->n_instances, name, in);
		if (run_one(j, in, cpu, &o->budget, o->have_counters ? &o->counters : NULL, o, rs) == OSM_ERROR)
			failed = 1;
		if (ferror(j->f))
			return -1;
	}
	return failed;
}

int osm_run_command(int argc, char **argv)
{
	struct osm_run_opts o;
	char err[8192];
	if (osm_cli_parse_run(argc, argv, &o, err, sizeof(err))) {
		osm_err("%s", err);
		return OSM_EXIT_USAGE;
	}
	osm_log_quiet = o.quiet;
	if (o.hotspots && o.profile.folded && o.n_instances != 1) {
		osm_err("--folded writes one profile: name one benchmark instance (%d given)", o.n_instances);
		osm_cli_free_run(&o);
		return OSM_EXIT_USAGE;
	}
	/* The least busy CPU is sampled over the clock's 50 ms calibration
	 * (a sleep), not over 50 ms more: the probe starts in 50 ms, not 100. */
	if (o.cpu < 0)
		osm_least_busy_begin();
	/* The forced clock must be usable before anything is written. */
	if (osm_clock_init(o.clock, 50, err, sizeof(err))) {
		osm_err("%s", err);
		osm_cli_free_run(&o);
		return o.clock ? OSM_EXIT_USAGE : OSM_EXIT_CANNOT_RUN;
	}

	FILE *out = stdout;
	if (o.output) {
		out = fopen(o.output, "w");
		if (!out) {
			osm_err("cannot write %s: %s", o.output, strerror(errno));
			osm_cli_free_run(&o);
			return OSM_EXIT_CANNOT_RUN;
		}
	}
	if (o.die_with_parent) {
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() == 1) /* the parent is already gone */
			raise(SIGTERM);
	}
	osm_cleanup_install_signals(fileno(out));

	int cpu = o.cpu >= 0 ? o.cpu : osm_least_busy_end(50);
	struct osm_run_state rs;
	struct osm_json j;
	osm_json_init(&j, out);
	start_run(&j, &o, cpu, &rs);
	int failed = run_all(&j, &o, cpu, &rs);
	if (failed < 0) {
		osm_err("cannot write the output: %s", strerror(errno));
		osm_cleanup_run_all();
		osm_cli_free_run(&o);
		return OSM_EXIT_CANNOT_RUN;
	}
	osm_record_end(&j);
	osm_cleanup_run_all();
	osm_cli_free_run(&o);
	int werr = ferror(out) || (out != stdout && fclose(out));
	if (werr) {
		osm_err("cannot write the output: %s", strerror(errno));
		return OSM_EXIT_CANNOT_RUN;
	}
	return failed ? OSM_EXIT_BENCH_FAILED : OSM_EXIT_OK;
}
