/* catalog_list.c - `osmeter-probe list`: the catalogue as text and as JSON
 * (docs/schema.md, "list"). */
#include "catalog.h"
#include "catalog_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "compiler.h"
#include "parse.h"

static void emit_suites(struct osm_json *j, const struct osm_bench *b)
{
	unsigned s = b->suites | (osm_cat_in_lebench(b) ? OSM_SUITE_LEBENCH : 0);
	osm_json_arr_begin(j, "suites");
	for (int i = 0; osm_suite_names[i]; i++)
		if (s & osm_cat_suite_bits[i])
			osm_json_str(j, NULL, osm_suite_names[i]);
	osm_json_arr_end(j);
}

/* `list --json`: the LEBench table ("lebench_rows", docs/schema.md). */
static void emit_lebench_rows(struct osm_json *j)
{
	osm_json_arr_begin(j, "lebench_rows");
	for (size_t i = 0; i < osm_n_lebench_rows; i++) {
		const struct osm_lebench_row *r = &osm_lebench_rows[i];
		struct osm_instance in;
		char why[512];
		int st = osm_lebench_instance(r, &in, why, sizeof(why));
		osm_json_obj_begin(j, NULL);
		osm_json_str(j, "name", r->name);
		osm_json_str(j, "bench", r->bench);
		osm_json_str(j, "given_params", r->params ? r->params : "");
		if (st == 0)
			osm_emit_params(j, "params", &in);
		else
			osm_json_null(j, "params");
		osm_json_bool(j, "available", st == 0);
		osm_json_str(j, "pending", st == 0 ? NULL : why);
		osm_json_str(j, "region", r->region);
		osm_json_str(j, "note", r->note);
		osm_json_int(j, "exact_batch", (int64_t)r->exact_batch);
		osm_json_int(j, "lebench_iterations", r->lebench_iter);
		osm_json_obj_end(j);
	}
	osm_json_arr_end(j);
}

static void emit_param_json(struct osm_json *j, const struct osm_param *pp)
{
	struct osm_pval dv = {pp->def, pp->def_str ? pp->def_str : ""};
	osm_json_obj_begin(j, NULL);
	osm_json_str(j, "name", pp->name);
	osm_json_str(j, "type", osm_cat_ptype_name(pp->type));
	osm_cat_emit_param_value(j, "default", pp, &dv);
	if (pp->type == OSM_P_INT || pp->type == OSM_P_SIZE) {
		osm_json_int(j, "min", pp->min);
		osm_json_int(j, "max", pp->max);
	}
	if (pp->type == OSM_P_STR) {
		osm_json_int(j, "max_len", (int64_t)osm_cat_str_max(pp));
		osm_json_str(j, "max_len_why", osm_cat_str_max_why(pp));
	}
	if (pp->type == OSM_P_ENUM) {
		osm_json_arr_begin(j, "choices");
		for (int c = 0; pp->choices[c]; c++)
			osm_json_str(j, NULL, pp->choices[c]);
		osm_json_arr_end(j);
	}
	osm_json_str(j, "help", pp->help);
	osm_json_obj_end(j);
}

/* A sweep's parameter sets; [] for none (the defaults only). */
static void emit_sweep(struct osm_json *j, const char *key, const struct osm_family *fam, const struct osm_bench *b,
		       const char *sweep)
{
	osm_json_arr_begin(j, key);
	if (sweep) {
		struct osm_instance *s;
		int m = osm_cat_sweep_of(fam, b, sweep, &s);
		for (int q = 0; q < m; q++)
			osm_emit_params(j, NULL, &s[q]);
		if (m > 0)
			free(s);
	}
	osm_json_arr_end(j);
}

static void emit_bench_json(struct osm_json *j, const struct osm_family *fam, const struct osm_bench *b)
{
	char name[128];
	osm_full_name(fam, b, name, sizeof(name));
	osm_json_obj_begin(j, NULL);
	osm_json_str(j, "name", name);
	osm_json_str(j, "family", fam->name);
	osm_json_str(j, "description", b->desc);
	osm_json_str(j, "unit", osm_unit_name(b->unit));
	osm_json_arr_begin(j, "requires");
	if (b->flags & OSM_NEEDS_ROOT)
		osm_json_str(j, NULL, "root");
	if (b->flags & OSM_NEEDS_PEER)
		osm_json_str(j, NULL, "peer");
	if (b->flags & OSM_NEEDS_FREE_CPU)
		osm_json_str(j, NULL, "free_cpu");
	osm_json_arr_end(j);
	emit_suites(j, b);
	osm_json_bool(j, "hidden", (b->flags & OSM_HIDDEN) != 0);
	emit_sweep(j, "sweep", fam, b, b->sweep);
	emit_sweep(j, "sweep_full", fam, b, b->sweep_full ? b->sweep_full : b->sweep);
	osm_json_arr_begin(j, "params");
	for (int p = 0; p < osm_nparams(b); p++)
		emit_param_json(j, &b->params[p]);
	osm_json_arr_end(j);
	osm_json_obj_end(j);
}

void osm_catalog_list_json(FILE *f, int all)
{
	struct osm_json j;
	osm_json_init(&j, f);
	osm_json_doc_begin(&j);
	osm_json_int(&j, "schema", OSM_SCHEMA_VERSION);
	osm_json_str(&j, "probe_version", OSM_VERSION);
	osm_json_arr_begin(&j, "suites");
	for (int i = 0; osm_suite_names[i]; i++)
		osm_json_str(&j, NULL, osm_suite_names[i]);
	osm_json_arr_end(&j);
	/* Clocks this build knows; whether the counter is usable on this CPU is
	 * decided when `run --clock` initialises it. */
	osm_json_arr_begin(&j, "clocks");
	{
		char names[64], *save = NULL;
		snprintf(names, sizeof(names), "%s", osm_clock_names());
		for (char *t = strtok_r(names, " ", &save); t; t = strtok_r(NULL, " ", &save))
			osm_json_str(&j, NULL, t);
	}
	osm_json_arr_end(&j);
	osm_json_arr_begin(&j, "benchmarks");
	for (size_t i = 0; i < osm_n_families; i++) {
		const struct osm_family *fam = osm_families[i];
		for (size_t k = 0; k < fam->n; k++)
			if (!(fam->benches[k].flags & OSM_HIDDEN) || all)
				emit_bench_json(&j, fam, &fam->benches[k]);
	}
	osm_json_arr_end(&j);
	emit_lebench_rows(&j);
	osm_json_doc_end(&j);
}

void osm_catalog_list_text(FILE *f, int all)
{
	char name[128], lo[32], hi[32];
	for (size_t i = 0; i < osm_n_families; i++) {
		const struct osm_family *fam = osm_families[i];
		fprintf(f, "%s: %s\n", fam->name, fam->desc);
		for (size_t k = 0; k < fam->n; k++) {
			const struct osm_bench *b = &fam->benches[k];
			if ((b->flags & OSM_HIDDEN) && !all)
				continue;
			osm_full_name(fam, b, name, sizeof(name));
			fprintf(f, "  %-24s %-12s %s\n", name, osm_unit_name(b->unit), b->desc);
			for (int p = 0; p < osm_nparams(b); p++) {
				const struct osm_param *pp = &b->params[p];
				switch (pp->type) {
				case OSM_P_INT:
					fprintf(f, "      --param %s=N (%lld..%lld, default %lld): %s\n", pp->name,
						(long long)pp->min, (long long)pp->max, (long long)pp->def, pp->help);
					break;
				case OSM_P_SIZE:
					osm_format_size(pp->min, lo, sizeof(lo));
					osm_format_size(pp->max, hi, sizeof(hi));
					fprintf(f, "      --param %s=SIZE (%s..%s, default %lld): %s\n", pp->name, lo,
						hi, (long long)pp->def, pp->help);
					break;
				case OSM_P_ENUM: {
					char ch[256];
					osm_cat_list_choices(pp, ch, sizeof(ch));
					fprintf(f, "      --param %s={%s} (default %s): %s\n", pp->name, ch,
						pp->choices[pp->def], pp->help);
					break;
				}
				case OSM_P_STR:
					fprintf(f, "      --param %s=STRING (at most %zu bytes, default '%s'): %s\n",
						pp->name, osm_cat_str_max(pp), pp->def_str ? pp->def_str : "", pp->help);
					break;
				}
			}
		}
	}
}
