/* cli.c - see cli.h. */
#include "cli.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "affinity.h"
#include "clock.h"
#include "parse.h"

void osm_cli_usage(FILE *f)
{
	fprintf(f,
		"usage: osmeter-probe list [--json] [--all]\n"
		"       osmeter-probe run NAME... | --suite quick|standard|full|lebench\n"
		"                     [--param KEY=VALUE]... [--sweep] [--cpu N]\n"
		"                     [--min-time S] [--max-time S] [--min-samples N] [--max-samples N]\n"
		"                     [--target-rse R] [--fifo PRIO] [--mlock] [--clock NAME]\n"
		"                     [--counters LIST] [--lebench-exact] [--budget-fraction F]\n"
		"                     [--inject-ns NAME=NS]\n"
		"                     [-o FILE] [--quiet] [--die-with-parent]\n"
		"       osmeter-probe sysinfo [--json]\n"
		"       osmeter-probe version\n"
		"Exit codes: 0 ok, 1 a benchmark failed, 2 bad input, 3 cannot run (see docs/exit-codes.md).\n");
}

void osm_budget_for_suite(const char *suite, struct osm_budget *b)
{
	/* min_time, max_time, warm-up, target RSE, min and max samples. The
	 * quick suite trades precision for time (DESIGN 9: < 60 s); full buys
	 * precision with time. */
	if (suite && !strcmp(suite, "quick"))
		*b = (struct osm_budget){0.05, 1.0, 0.02, 0.01, 10, 5000};
	else if (suite && !strcmp(suite, "full"))
		*b = (struct osm_budget){1.0, 10.0, 0.2, 0.002, 50, 50000};
	else
		*b = (struct osm_budget){0.5, 3.0, 0.05, 0.005, 30, 20000};
}

static void list_names(char *buf, size_t len)
{
	size_t off = 0;
	char name[128];
	buf[0] = 0;
	for (size_t i = 0; i < osm_n_families; i++)
		for (size_t k = 0; k < osm_families[i]->n; k++) {
			const struct osm_bench *b = &osm_families[i]->benches[k];
			if (b->flags & OSM_HIDDEN)
				continue;
			osm_full_name(osm_families[i], b, name, sizeof(name));
			off += (size_t)snprintf(buf + off, off < len ? len - off : 0, "%s%s", off ? ", " : "", name);
		}
}

static int same_instance(const struct osm_instance *a, const struct osm_instance *b)
{
	if (a->bench != b->bench)
		return 0;
	for (int i = 0; i < osm_nparams(a->bench); i++) {
		if (a->params[i].i != b->params[i].i)
			return 0;
		if (a->bench->params[i].type == OSM_P_STR && strcmp(a->params[i].s, b->params[i].s))
			return 0;
	}
	return 1;
}

enum {
	OPT_SUITE = 256, OPT_PARAM, OPT_SWEEP, OPT_CPU, OPT_MIN_TIME, OPT_MAX_TIME, OPT_MIN_SAMPLES,
	OPT_MAX_SAMPLES, OPT_RSE, OPT_FIFO, OPT_MLOCK, OPT_CLOCK, OPT_DIE, OPT_QUIET, OPT_COUNTERS,
	OPT_LEBENCH_EXACT, OPT_BUDGET_FRACTION, OPT_INJECT,
};

int osm_cli_parse_run(int argc, char **argv, struct osm_run_opts *o, char *err, size_t len)
{
	static const struct option opts[] = {
		{"suite", required_argument, 0, OPT_SUITE},
		{"param", required_argument, 0, OPT_PARAM},
		{"sweep", no_argument, 0, OPT_SWEEP},
		{"cpu", required_argument, 0, OPT_CPU},
		{"min-time", required_argument, 0, OPT_MIN_TIME},
		{"max-time", required_argument, 0, OPT_MAX_TIME},
		{"min-samples", required_argument, 0, OPT_MIN_SAMPLES},
		{"max-samples", required_argument, 0, OPT_MAX_SAMPLES},
		{"target-rse", required_argument, 0, OPT_RSE},
		{"fifo", required_argument, 0, OPT_FIFO},
		{"mlock", no_argument, 0, OPT_MLOCK},
		{"clock", required_argument, 0, OPT_CLOCK},
		{"output", required_argument, 0, 'o'},
		{"die-with-parent", no_argument, 0, OPT_DIE},
		{"quiet", no_argument, 0, OPT_QUIET},
		{"counters", required_argument, 0, OPT_COUNTERS},
		{"lebench-exact", no_argument, 0, OPT_LEBENCH_EXACT},
		{"budget-fraction", required_argument, 0, OPT_BUDGET_FRACTION},
		{"inject-ns", required_argument, 0, OPT_INJECT},
		{0, 0, 0, 0},
	};
	const char *params[64];
	int n_params = 0, sweep = 0;
	double min_time = -1, max_time = -1, rse = -1, fraction = 1;
	int64_t min_samples = -1, max_samples = -1, v;
	char why[512];

	memset(o, 0, sizeof(*o));
	o->cpu = -1;
	optind = 1;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, ":o:", opts, NULL)) != -1) {
		switch (c) {
		case OPT_SUITE:
			if (!osm_suite_bit(optarg)) {
				snprintf(err, len, "unknown suite '%s'; allowed: quick, standard, full, lebench", optarg);
				return -1;
			}
			o->suite = optarg;
			break;
		case OPT_PARAM:
			if (!strchr(optarg, '=') || optarg[0] == '=') {
				snprintf(err, len, "--param takes KEY=VALUE, got '%s'", optarg);
				return -1;
			}
			if (n_params == 64) {
				snprintf(err, len, "too many --param options (at most 64)");
				return -1;
			}
			params[n_params++] = optarg;
			break;
		case OPT_SWEEP: sweep = 1; break;
		case OPT_CPU: {
			int cpus[1024];
			int n = osm_allowed_cpus(cpus, 1024), ok = 0;
			if (osm_parse_int(optarg, 0, 1023, &v, why, sizeof(why))) {
				snprintf(err, len, "--cpu: %s", why);
				return -1;
			}
			for (int i = 0; i < n; i++)
				ok |= cpus[i] == v;
			if (!ok) {
				char allowed[256];
				size_t off = 0;
				for (int i = 0; i < n && off < sizeof(allowed); i++)
					off += (size_t)snprintf(allowed + off, sizeof(allowed) - off, "%s%d", i ? ", " : "", cpus[i]);
				snprintf(err, len, "--cpu: CPU %lld is not available to this process; allowed: %s",
					 (long long)v, allowed);
				return -1;
			}
			o->cpu = (int)v;
			break;
		}
		case OPT_MIN_TIME:
			if (osm_parse_double(optarg, 0, 3600, &min_time, why, sizeof(why))) {
				snprintf(err, len, "--min-time: %s (seconds)", why);
				return -1;
			}
			break;
		case OPT_MAX_TIME:
			if (osm_parse_double(optarg, 0.001, 86400, &max_time, why, sizeof(why))) {
				snprintf(err, len, "--max-time: %s (seconds)", why);
				return -1;
			}
			break;
		case OPT_MIN_SAMPLES:
			if (osm_parse_int(optarg, 1, 10000000, &min_samples, why, sizeof(why))) {
				snprintf(err, len, "--min-samples: %s", why);
				return -1;
			}
			break;
		case OPT_MAX_SAMPLES:
			if (osm_parse_int(optarg, 1, 10000000, &max_samples, why, sizeof(why))) {
				snprintf(err, len, "--max-samples: %s", why);
				return -1;
			}
			break;
		case OPT_RSE:
			if (osm_parse_double(optarg, 0.0001, 1, &rse, why, sizeof(why))) {
				snprintf(err, len, "--target-rse: %s (a fraction: 0.01 = 1 %%)", why);
				return -1;
			}
			break;
		case OPT_FIFO:
			if (osm_parse_int(optarg, 1, 99, &v, why, sizeof(why))) {
				snprintf(err, len, "--fifo: %s", why);
				return -1;
			}
			o->fifo = (int)v;
			break;
		case OPT_MLOCK: o->mlock = 1; break;
		case OPT_LEBENCH_EXACT: o->lebench_exact = 1; break;
		case OPT_INJECT: {
			/* NAME=NS: a busy wait of NS per operation inside the timed
			 * region of NAME (a known change, to test `compare`). */
			const char *eq = strchr(optarg, '=');
			const struct osm_family *fam;
			if (!eq || (size_t)(eq - optarg) >= sizeof(o->inject_name)) {
				snprintf(err, len, "--inject-ns takes NAME=NS, got '%s'", optarg);
				return -1;
			}
			snprintf(o->inject_name, sizeof(o->inject_name), "%.*s", (int)(eq - optarg), optarg);
			o->inject_bench = osm_find_bench(o->inject_name, &fam);
			if (!o->inject_bench) {
				snprintf(err, len, "--inject-ns: unknown benchmark '%s'", o->inject_name);
				return -1;
			}
			if (o->inject_bench->flags & OSM_SELF_TIMED) {
				snprintf(err, len, "--inject-ns: %s times itself; injection needs a benchmark the harness "
					 "times (cpu.call, syscall.null, ...)", o->inject_name);
				return -1;
			}
			if (osm_parse_double(eq + 1, 0.001, 1e9, &o->inject_ns, why, sizeof(why))) {
				snprintf(err, len, "--inject-ns: %s (ns per operation)", why);
				return -1;
			}
			break;
		}
		case OPT_BUDGET_FRACTION:
			if (osm_parse_double(optarg, 0.01, 1, &fraction, why, sizeof(why))) {
				snprintf(err, len, "--budget-fraction: %s (the share of the suite's budget, 0.01..1)", why);
				return -1;
			}
			break;
		case OPT_CLOCK: {
			/* A whole word of the list: "monotonic" is not "monotonic_raw". */
			char names[128], *save = NULL;
			int found = 0;
			snprintf(names, sizeof(names), "%s", osm_clock_names());
			for (char *t = strtok_r(names, " ", &save); t && !found; t = strtok_r(NULL, " ", &save))
				found = !strcmp(t, optarg);
			if (!found) {
				snprintf(err, len, "unknown clock '%s'; allowed on this machine: %s", optarg,
					 osm_clock_names());
				return -1;
			}
			o->clock = optarg;
			break;
		}
		case 'o': o->output = optarg; break;
		case OPT_DIE: o->die_with_parent = 1; break;
		case OPT_QUIET: o->quiet = 1; break;
		case OPT_COUNTERS: /* names checked now; opened per benchmark (counters.h) */
			if (osm_counters_parse(optarg, &o->counters, err, len))
				return -1;
			o->have_counters = 1;
			break;
		case ':':
			snprintf(err, len, "option %s needs a value", argv[optind - 1]);
			return -1;
		default:
			snprintf(err, len, "unknown option '%s'; see `osmeter-probe --help`", argv[optind - 1]);
			return -1;
		}
	}

	/* LEBench times with CLOCK_MONOTONIC; --clock still overrides. */
	if (o->lebench_exact && !o->clock)
		o->clock = "monotonic";
	osm_budget_for_suite(o->suite, &o->budget);
	/* One of R repetitions (osmeter run --repeat R passes 1/R): the
	 * default times and sample limit shrink by F, the target RSE grows by
	 * 1/sqrt(F), so the R repetitions together take the suite's budget
	 * and reach its precision; values given explicitly are kept. */
	o->budget_fraction = fraction;
	o->budget.min_time_s *= fraction;
	o->budget.max_time_s *= fraction;
	o->budget.max_samples = (int64_t)ceil((double)o->budget.max_samples * fraction);
	o->budget.target_rse /= sqrt(fraction);
	if (min_time >= 0) o->budget.min_time_s = min_time;
	if (max_time >= 0) o->budget.max_time_s = max_time;
	if (rse >= 0) o->budget.target_rse = rse;
	if (min_samples >= 0) o->budget.min_samples = min_samples;
	if (max_samples >= 0) o->budget.max_samples = max_samples;
	if (o->budget.warmup_s > o->budget.max_time_s / 4)
		o->budget.warmup_s = o->budget.max_time_s / 4;
	/* A default minimum yields to an explicit maximum; two explicit
	 * values that contradict each other are an error. */
	if (min_time < 0 && o->budget.min_time_s > o->budget.max_time_s)
		o->budget.min_time_s = o->budget.max_time_s;
	if (min_samples < 0 && o->budget.min_samples > o->budget.max_samples)
		o->budget.min_samples = o->budget.max_samples;
	if (o->budget.min_time_s > o->budget.max_time_s) {
		snprintf(err, len, "--min-time (%g s) is larger than --max-time (%g s)",
			 o->budget.min_time_s, o->budget.max_time_s);
		return -1;
	}
	if (o->budget.min_samples > o->budget.max_samples) {
		snprintf(err, len, "--min-samples (%lld) is larger than --max-samples (%lld)",
			 (long long)o->budget.min_samples, (long long)o->budget.max_samples);
		return -1;
	}

	int n_names = argc - optind;
	if (o->suite && n_names) {
		snprintf(err, len, "give benchmark names or --suite, not both");
		return -1;
	}
	if (!o->suite && !n_names) {
		snprintf(err, len, "nothing to run: give benchmark names or --suite quick|standard|full|lebench");
		return -1;
	}

	/* The instance list: a suite's instances, or each name's defaults
	 * (its sweep with --sweep). */
	struct osm_instance *all = NULL;
	int n = 0;
	if (o->suite) {
		n = osm_suite_instances(osm_suite_bit(o->suite), &all);
		if (n < 0) {
			snprintf(err, len, "internal: cannot expand suite %s", o->suite);
			return -1;
		}
	} else {
		for (int i = optind; i < argc; i++) {
			const struct osm_family *fam;
			const struct osm_bench *b = osm_find_bench(argv[i], &fam);
			if (!b) {
				char names[4096];
				list_names(names, sizeof(names));
				snprintf(err, len, "unknown benchmark '%s'; allowed: %s", argv[i], names);
				free(all);
				return -1;
			}
			struct osm_instance *s;
			int m;
			if (sweep) {
				m = osm_sweep_instances(fam, b, &s);
			} else {
				s = calloc(1, sizeof(*s));
				m = s ? 1 : -1;
				if (s)
					osm_instance_init(s, fam, b);
			}
			struct osm_instance *na = m > 0 ? realloc(all, (size_t)(n + m) * sizeof(*all)) : NULL;
			if (!na) {
				free(s);
				free(all);
				snprintf(err, len, "out of memory");
				return -1;
			}
			all = na;
			memcpy(all + n, s, (size_t)m * sizeof(*s));
			n += m;
			free(s);
		}
	}

	/* --param: applied to every instance whose benchmark has that parameter;
	 * a parameter no selected benchmark has is an error, as is a bad value.
	 * KEY=V1,V2,... gives a numeric or enum parameter several values: each
	 * instance becomes one instance per value, and several such options
	 * give their product (`osmeter study` runs its matrix so). A string
	 * parameter takes the whole value, commas included. */
	for (int p = 0; p < n_params; p++) {
		char key[128], vbuf[1024];
		const char *eq = strchr(params[p], '=');
		snprintf(key, sizeof(key), "%.*s", (int)(eq - params[p]), params[p]);
		const char *vals[64];
		int nv = 0;
		snprintf(vbuf, sizeof(vbuf), "%s", eq + 1);
		char *save = NULL;
		for (char *t = strtok_r(vbuf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
			if (nv == 64) {
				snprintf(err, len, "--param %s: at most 64 values", key);
				free(all);
				return -1;
			}
			vals[nv++] = t;
		}
		struct osm_instance *na = calloc((size_t)n * (size_t)(nv > 1 ? nv : 1) + 1, sizeof(*na));
		if (!na) {
			snprintf(err, len, "out of memory");
			free(all);
			return -1;
		}
		int used = 0, m = 0;
		char first_err[512] = "";
		for (int i = 0; i < n; i++) {
			int whole = 1;
			for (int q = 0; q < osm_nparams(all[i].bench); q++)
				if (!strcmp(all[i].bench->params[q].name, key))
					whole = nv <= 1 || all[i].bench->params[q].type == OSM_P_STR;
			for (int vi = 0; vi < (whole ? 1 : nv); vi++) {
				na[m] = all[i];
				int r = osm_instance_set(&na[m], key, whole ? eq + 1 : vals[vi], why, sizeof(why));
				m++;
				if (r == -2) {
					snprintf(err, len, "%s", why);
					free(na);
					free(all);
					return -1;
				}
				if (r == 0)
					used = 1;
				else if (!first_err[0])
					snprintf(first_err, sizeof(first_err), "%s", why);
			}
		}
		free(all);
		all = na;
		n = m;
		if (!used) {
			snprintf(err, len, "--param %s: %s", params[p], first_err);
			free(all);
			return -1;
		}
	}

	/* Drop duplicates that --param can create from a sweep. */
	int k = 0;
	for (int i = 0; i < n; i++) {
		int dup = 0;
		for (int j = 0; j < k && !dup; j++)
			dup = same_instance(&all[j], &all[i]);
		if (!dup)
			all[k++] = all[i];
	}
	o->instances = all;
	o->n_instances = k;
	return 0;
}

void osm_cli_free_run(struct osm_run_opts *o)
{
	free(o->instances);
	o->instances = NULL;
}
