/* records.c - see records.h. Key order is the schema's (docs/schema.md):
 * the front end and the tests read these records as they are written. */
#include "records.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "build_info.h"
#include "cleanup.h"
#include "clock.h"
#include "log.h"
#include "samples.h"
#include "sysinfo.h"

#ifndef OSM_BUILD_STATIC
#define OSM_BUILD_STATIC 0
#endif

void osm_record_meta(struct osm_json *j, const struct osm_run_opts *o, int cpu, int cpu_requested,
		     const char *fifo_why, const char *mlock_why, const struct osm_run_state *rs,
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

void osm_record_progress(struct osm_json *j, int index, int total, const char *name,
			 const struct osm_instance *in)
{
	osm_json_record_begin(j, "progress");
	osm_json_int(j, "index", index);
	osm_json_int(j, "total", total);
	osm_json_str(j, "bench", name);
	osm_emit_params(j, "params", in);
	osm_json_str(j, "lebench_row", in->row ? in->row->name : NULL);
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

void osm_record_measurement(struct osm_json *j, const char *name, const struct osm_instance *in,
			    const struct osm_ctx *ctx, const struct osm_measurement *m,
			    const struct osm_budget *budget, const struct osm_run_state *rs)
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

/* The `counters` record after a result (--counters; docs/schema.md). */
void osm_record_counters(struct osm_json *j, const char *name, const struct osm_instance *in,
			 const struct osm_counters *c)
{
	emit_head(j, "counters", name, in);
	osm_counters_write(j, c);
	osm_json_record_end(j);
}

/* The `profile` record after a result (hotspots; docs/schema.md), and the
 * folded stacks in --folded's file. */
void osm_record_profile(struct osm_json *j, const char *name, const struct osm_instance *in,
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

void osm_record_failure(struct osm_json *j, const char *name, const struct osm_instance *in,
			enum osm_status st, const struct osm_ctx *ctx)
{
	emit_head(j, st == OSM_SKIP ? "skip" : "error", name, in);
	osm_json_str(j, st == OSM_SKIP ? "reason" : "message", ctx->msg[0] ? ctx->msg : "unknown");
	emit_info(j, ctx);
	osm_json_record_end(j);
}

void osm_record_end(struct osm_json *j)
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

void osm_write_sysinfo_doc(FILE *f)
{
	struct osm_json j;
	osm_json_init(&j, f);
	osm_json_doc_begin(&j);
	osm_json_int(&j, "schema", OSM_SCHEMA_VERSION);
	osm_sysinfo_write_fields(&j);
	osm_json_doc_end(&j);
}
