/* cli.c - see cli.h. `run`'s options are one table (opt_table): each row
 * names an option, says whether it takes a value, and gives its handler and,
 * for a number, the allowed range; getopt_long's table is built from it.
 * --param lists are expanded by cli_param.c. */
#include "cli.h"

#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "affinity.h"
#include "cli_param.h"
#include "clock.h"
#include "parse.h"

void osm_cli_usage(FILE *f)
{
	fprintf(f,
		"usage: osmeter-probe list [--json] [--all]\n"
		"       osmeter-probe run NAME... | --suite quick|standard|full|lebench\n"
		"                     [--param KEY=VALUES]... [--sweep] [--cpu N]\n"
		"                     [--min-time S] [--max-time S] [--min-samples N] [--max-samples N]\n"
		"                     [--target-rse R] [--fifo PRIO] [--mlock] [--clock NAME]\n"
		"                     [--counters LIST] [--lebench-exact] [--budget-fraction F]\n"
		"                     [--inject-ns NAME=NS]\n"
		"                     [-o FILE] [--quiet] [--die-with-parent]\n"
		"       osmeter-probe hotspots NAME... [run's options] [--profile sample|function]\n"
		"                     [--event auto|cpu-clock|cycles] [--frequency HZ] [--buffer-kb KB]\n"
		"                     [--folded FILE]\n"
		"       osmeter-probe serve [--listen ADDR[:PORT]] [--token T | --token-file F]\n"
		"                     [--max-sessions N] [--session-time S] [--session-bytes B]\n"
		"                     [-v | --verbose | --quiet]\n"
		"       osmeter-probe sysinfo [--json]\n"
		"       osmeter-probe version\n"
		"       osmeter-probe init [--plan FILE] [--channel PATH]\n"
		"--param KEY=VALUES sets a parameter of every named benchmark that has it:\n"
		"  KEY=V1,V2,...  one run per value (a comma list); several keys give every combination\n"
		"  KEY=A..B       integer parameters only: every integer from A to B (at most %d values)\n"
		"  --param KEY=A --param KEY=B  the same as KEY=A,B; a value given twice runs once\n"
		"  a string parameter (a path) takes its value whole, commas and '..' included\n"
		"Every option but --param is given at most once. Arguments must be UTF-8.\n"
		"serve runs the network peer of the net benchmarks until SIGINT or SIGTERM (docs/peer.md);\n"
		"  --listen defaults to 127.0.0.1:7478; an address that is not loopback needs a token.\n"
		"init runs a plan of these commands as PID 1 of a VM (its /init) and powers off\n"
		"  (docs/probe-init.md).\n"
		"Exit codes: 0 ok, 1 a benchmark failed, 2 bad input, 3 cannot run (see docs/exit-codes.md).\n",
		OSM_MAX_PARAM_VALUES);
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

/* What the options set, before the budget and the instances are worked out. */
struct pstate {
	struct osm_run_opts *o;
	const char **params; /* every --param, in order */
	int n_params;
	int sweep, mlock, die, quiet, lebench_exact;
	double min_time, max_time, rse, fraction; /* -1: not given */
	int64_t min_samples, max_samples, fifo;
	int64_t frequency, buffer_kb; /* -1: not given */
	const char *profile_opt; /* a profile option given (for run's error) */
	const char **given; /* per option: its value, to refuse a second, different one */
};

struct optdef;
typedef int (*opt_fn)(const struct optdef *d, const char *arg, struct pstate *st, char *err, size_t len);

struct optdef {
	const char *name; /* the long name, without "--" */
	int has_arg;
	opt_fn fn;
	size_t off;       /* the struct pstate field a generic handler sets */
	double min, max;  /* a number's allowed range */
	const char *hint; /* after a number's error: what it means */
	int repeat;       /* may be given more than once */
};

#define FIELD(st, d, type) ((type *)(void *)((char *)(st) + (d)->off))

static int opt_flag(const struct optdef *d, const char *arg, struct pstate *st, char *err, size_t len)
{
	(void)arg, (void)err, (void)len;
	*FIELD(st, d, int) = 1;
	return 0;
}

static int opt_int(const struct optdef *d, const char *arg, struct pstate *st, char *err, size_t len)
{
	char why[300];
	if (osm_parse_int(arg, (int64_t)d->min, (int64_t)d->max, FIELD(st, d, int64_t), why, sizeof(why))) {
		snprintf(err, len, "--%s: %s%s", d->name, why, d->hint ? d->hint : "");
		return -1;
	}
	return 0;
}

static int opt_double(const struct optdef *d, const char *arg, struct pstate *st, char *err, size_t len)
{
	char why[300];
	if (osm_parse_double(arg, d->min, d->max, FIELD(st, d, double), why, sizeof(why))) {
		snprintf(err, len, "--%s: %s%s", d->name, why, d->hint ? d->hint : "");
		return -1;
	}
	return 0;
}

static int opt_suite(const struct optdef *d, const char *arg, struct pstate *st, char *err, size_t len)
{
	char sh[OSM_SHOW_LEN];
	(void)d;
	if (!osm_suite_bit(arg)) {
		snprintf(err, len, "unknown suite '%s'; allowed: quick, standard, full, lebench",
			 osm_shorten(arg, sh, sizeof(sh)));
		return -1;
	}
	st->o->suite = arg;
	return 0;
}

static int opt_param(const struct optdef *d, const char *arg, struct pstate *st, char *err, size_t len)
{
	char sh[OSM_SHOW_LEN];
	(void)d;
	if (!strchr(arg, '=') || arg[0] == '=') {
		snprintf(err, len, "--param takes KEY=VALUE, got '%s'", osm_shorten(arg, sh, sizeof(sh)));
		return -1;
	}
	st->params[st->n_params++] = arg; /* params has room for every argument */
	return 0;
}

/* "0-3, 6, 8-9" into buf: the CPUs this process may use. */
static void format_cpus(const int *cpus, int n, char *buf, size_t len)
{
	size_t off = 0;
	buf[0] = 0;
	for (int i = 0; i < n && off < len; i++) {
		int j = i;
		while (j + 1 < n && cpus[j + 1] == cpus[j] + 1)
			j++;
		if (j > i)
			off += (size_t)snprintf(buf + off, len - off, "%s%d-%d", off ? ", " : "", cpus[i], cpus[j]);
		else
			off += (size_t)snprintf(buf + off, len - off, "%s%d", off ? ", " : "", cpus[i]);
		i = j;
	}
}

static int opt_cpu(const struct optdef *d, const char *arg, struct pstate *st, char *err, size_t len)
{
	static int cpus[CPU_SETSIZE];
	int64_t v;
	char why[300];
	if (osm_parse_int(arg, (int64_t)d->min, (int64_t)d->max, &v, why, sizeof(why))) {
		snprintf(err, len, "--cpu: %s", why);
		return -1;
	}
	int n = osm_allowed_cpus(cpus, CPU_SETSIZE);
	for (int i = 0; i < n; i++)
		if (cpus[i] == v) {
			st->o->cpu = (int)v;
			return 0;
		}
	int off = snprintf(err, len, "--cpu: CPU %lld is not available to this process; allowed: ", (long long)v);
	if (off > 0 && (size_t)off < len)
		format_cpus(cpus, n, err + off, len - (size_t)off);
	return -1;
}

static int opt_inject(const struct optdef *d, const char *arg, struct pstate *st, char *err, size_t len)
{
	/* NAME=NS: a busy wait of NS per operation inside the timed region of
	 * NAME (a known change, to test `compare`). */
	const char *eq = strchr(arg, '=');
	const struct osm_family *fam;
	char sh[OSM_SHOW_LEN], why[300];
	struct osm_run_opts *o = st->o;
	(void)d;
	if (!eq) {
		snprintf(err, len, "--inject-ns takes NAME=NS, got '%s'", osm_shorten(arg, sh, sizeof(sh)));
		return -1;
	}
	char *name = strndup(arg, (size_t)(eq - arg));
	if (!name) {
		snprintf(err, len, "out of memory");
		return -1;
	}
	o->inject_bench = osm_find_bench(name, &fam);
	if (!o->inject_bench)
		snprintf(err, len, "--inject-ns: unknown benchmark '%s'", osm_shorten(name, sh, sizeof(sh)));
	free(name);
	if (!o->inject_bench)
		return -1;
	osm_full_name(fam, o->inject_bench, o->inject_name, sizeof(o->inject_name));
	if (o->inject_bench->flags & OSM_SELF_TIMED) {
		snprintf(err, len, "--inject-ns: %s times itself; injection needs a benchmark the harness "
			 "times (cpu.call, syscall.null, ...)", o->inject_name);
		return -1;
	}
	if (osm_parse_double(eq + 1, 0.001, 1e9, &o->inject_ns, why, sizeof(why))) {
		snprintf(err, len, "--inject-ns: %s (ns per operation)", why);
		return -1;
	}
	return 0;
}

static int opt_clock(const struct optdef *d, const char *arg, struct pstate *st, char *err, size_t len)
{
	/* A whole word of the list: "monotonic" is not "monotonic_raw". */
	const char *names = osm_clock_names();
	size_t n = strlen(arg);
	char sh[OSM_SHOW_LEN];
	(void)d;
	for (const char *p = names; n && (p = strstr(p, arg)); p += n)
		if ((p == names || p[-1] == ' ') && (p[n] == ' ' || !p[n])) {
			st->o->clock = arg;
			return 0;
		}
	snprintf(err, len, "unknown clock '%s'; allowed on this machine: %s", osm_shorten(arg, sh, sizeof(sh)),
		 names);
	return -1;
}

static int opt_output(const struct optdef *d, const char *arg, struct pstate *st, char *err, size_t len)
{
	(void)d;
	if (strlen(arg) >= PATH_MAX) {
		snprintf(err, len, "-o: the path has %zu bytes; at most %d (PATH_MAX - 1)", strlen(arg),
			 PATH_MAX - 1);
		return -1;
	}
	st->o->output = arg;
	return 0;
}

static int opt_counters(const struct optdef *d, const char *arg, struct pstate *st, char *err, size_t len)
{
	(void)d; /* names checked now; opened per benchmark (counters.h) */
	if (osm_counters_parse(arg, &st->o->counters, err, len))
		return -1;
	st->o->have_counters = 1;
	return 0;
}

static int opt_profile(const struct optdef *d, const char *arg, struct pstate *st, char *err, size_t len)
{
	(void)d;
	if (osm_profile_parse_mode(arg, &st->o->profile.mode)) {
		snprintf(err, len, "--profile: unknown mode '%s'; allowed: sample, function", arg);
		return -1;
	}
	st->profile_opt = "--profile";
	return 0;
}

static int opt_event(const struct optdef *d, const char *arg, struct pstate *st, char *err, size_t len)
{
	(void)d;
	if (osm_profile_parse_event(arg, &st->o->profile.event)) {
		snprintf(err, len, "--event: unknown event '%s'; allowed: auto, cpu-clock, cycles", arg);
		return -1;
	}
	st->profile_opt = "--event";
	return 0;
}

static int opt_folded(const struct optdef *d, const char *arg, struct pstate *st, char *err, size_t len)
{
	(void)d;
	if (!*arg || strlen(arg) >= PATH_MAX) {
		snprintf(err, len, "--folded: give a file name of 1 to %d bytes", PATH_MAX - 1);
		return -1;
	}
	st->o->profile.folded = arg;
	st->profile_opt = "--folded";
	return 0;
}

#define PS(f) offsetof(struct pstate, f)
static const struct optdef opt_table[] = {
	{"suite", 1, opt_suite, 0, 0, 0, NULL, 0},
	{"param", 1, opt_param, 0, 0, 0, NULL, 1},
	{"sweep", 0, opt_flag, PS(sweep), 0, 0, NULL, 1},
	{"cpu", 1, opt_cpu, 0, 0, CPU_SETSIZE - 1, NULL, 0},
	{"min-time", 1, opt_double, PS(min_time), 0, 3600, " (seconds)", 0},
	{"max-time", 1, opt_double, PS(max_time), 0.001, 86400, " (seconds)", 0},
	{"min-samples", 1, opt_int, PS(min_samples), 1, 10000000, NULL, 0},
	{"max-samples", 1, opt_int, PS(max_samples), 1, 10000000, NULL, 0},
	{"target-rse", 1, opt_double, PS(rse), 0.0001, 1, " (a fraction: 0.01 = 1 %)", 0},
	{"fifo", 1, opt_int, PS(fifo), 1, 99, NULL, 0},
	{"mlock", 0, opt_flag, PS(mlock), 0, 0, NULL, 1},
	{"clock", 1, opt_clock, 0, 0, 0, NULL, 0},
	{"output", 1, opt_output, 0, 0, 0, NULL, 0},
	{"die-with-parent", 0, opt_flag, PS(die), 0, 0, NULL, 1},
	{"quiet", 0, opt_flag, PS(quiet), 0, 0, NULL, 1},
	{"counters", 1, opt_counters, 0, 0, 0, NULL, 0},
	{"lebench-exact", 0, opt_flag, PS(lebench_exact), 0, 0, NULL, 1},
	{"budget-fraction", 1, opt_double, PS(fraction), 0.01, 1, " (the share of the suite's budget, 0.01..1)", 0},
	{"inject-ns", 1, opt_inject, 0, 0, 0, NULL, 0},
	{"profile", 1, opt_profile, 0, 0, 0, NULL, 0},
	{"event", 1, opt_event, 0, 0, 0, NULL, 0},
	{"frequency", 1, opt_int, PS(frequency), 1, 100000, " (samples per second)", 0},
	{"buffer-kb", 1, opt_int, PS(buffer_kb), 1024, 4194304, " (KiB of trace buffer per CPU)", 0},
	{"folded", 1, opt_folded, 0, 0, 0, NULL, 0},
};
#define N_OPTS (sizeof(opt_table) / sizeof(opt_table[0]))

static int unknown_option(int argc, char **argv, char *err, size_t len)
{
	char sh[OSM_SHOW_LEN];
	if (optopt > 0 && optopt < 256)
		snprintf(err, len, "unknown option '-%c'; see `osmeter-probe --help`", optopt);
	else
		snprintf(err, len, "unknown option '%s' (or an ambiguous abbreviation); see `osmeter-probe --help`",
			 osm_shorten(optind - 1 < argc ? argv[optind - 1] : "", sh, sizeof(sh)));
	return -1;
}

/* One option: its handler, after refusing a second, different value. */
static int one_option(int idx, struct pstate *st, char *err, size_t len)
{
	const struct optdef *d = &opt_table[idx];
	const char *arg = d->has_arg ? optarg : "";
	char a[OSM_SHOW_LEN], b[OSM_SHOW_LEN];
	if (!d->repeat && st->given[idx]) {
		if (!strcmp(st->given[idx], arg))
			return 0;
		snprintf(err, len, "--%s given twice ('%s', then '%s'); give it once", d->name,
			 osm_shorten(st->given[idx], a, sizeof(a)), osm_shorten(arg, b, sizeof(b)));
		return -1;
	}
	st->given[idx] = arg;
	return d->fn(d, arg, st, err, len);
}

static int parse_options(int argc, char **argv, struct pstate *st, char *err, size_t len)
{
	struct option lo[N_OPTS + 1];
	size_t out_idx = 0;
	for (size_t i = 0; i < N_OPTS; i++) {
		lo[i] = (struct option){opt_table[i].name, opt_table[i].has_arg ? required_argument : no_argument,
					NULL, 256 + (int)i};
		if (!strcmp(opt_table[i].name, "output"))
			out_idx = i;
	}
	lo[N_OPTS] = (struct option){0, 0, 0, 0};
	optind = 0; /* glibc: start afresh, also on a second call (unit tests) */
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, ":o:", lo, NULL)) != -1) {
		if (c == 'o')
			c = 256 + (int)out_idx;
		if (c == ':') {
			char sh[OSM_SHOW_LEN];
			snprintf(err, len, "option %s needs a value", osm_shorten(argv[optind - 1], sh, sizeof(sh)));
			return -1;
		}
		if (c < 256 || c >= 256 + (int)N_OPTS)
			return unknown_option(argc, argv, err, len);
		if (one_option(c - 256, st, err, len))
			return -1;
	}
	return 0;
}

/* The budget: the suite's defaults, scaled by --budget-fraction, then the
 * values given explicitly. */
static int set_budget(const struct pstate *st, struct osm_budget *b, char *err, size_t len)
{
	double fraction = st->fraction;
	osm_budget_for_suite(st->o->suite, b);
	/* One of R repetitions (osmeter run --repeat R passes 1/R): the
	 * default times and sample limit shrink by F, the target RSE grows by
	 * 1/sqrt(F), so the R repetitions together take the suite's budget
	 * and reach its precision; values given explicitly are kept. */
	b->min_time_s *= fraction;
	b->max_time_s *= fraction;
	b->max_samples = (int64_t)ceil((double)b->max_samples * fraction);
	b->target_rse /= sqrt(fraction);
	if (st->min_time >= 0) b->min_time_s = st->min_time;
	if (st->max_time >= 0) b->max_time_s = st->max_time;
	if (st->rse >= 0) b->target_rse = st->rse;
	if (st->min_samples >= 0) b->min_samples = st->min_samples;
	if (st->max_samples >= 0) b->max_samples = st->max_samples;
	if (b->warmup_s > b->max_time_s / 4)
		b->warmup_s = b->max_time_s / 4;
	/* A default minimum yields to an explicit maximum; two explicit
	 * values that contradict each other are an error. */
	if (st->min_time < 0 && b->min_time_s > b->max_time_s)
		b->min_time_s = b->max_time_s;
	if (st->min_samples < 0 && b->min_samples > b->max_samples)
		b->min_samples = b->max_samples;
	if (b->min_time_s > b->max_time_s) {
		snprintf(err, len, "--min-time (%g s) is larger than --max-time (%g s)", b->min_time_s,
			 b->max_time_s);
		return -1;
	}
	if (b->min_samples > b->max_samples) {
		snprintf(err, len, "--min-samples (%lld) is larger than --max-samples (%lld)",
			 (long long)b->min_samples, (long long)b->max_samples);
		return -1;
	}
	return 0;
}

/* "unknown benchmark 'X'; allowed: a.b, c.d, ..." with every visible name. */
static void unknown_bench(const char *name, char *err, size_t len)
{
	char fn[128], sh[OSM_SHOW_LEN];
	int off = snprintf(err, len, "unknown benchmark '%s'; allowed: ", osm_shorten(name, sh, sizeof(sh)));
	int first = 1;
	for (size_t i = 0; i < osm_n_families; i++)
		for (size_t k = 0; k < osm_families[i]->n; k++) {
			const struct osm_bench *b = &osm_families[i]->benches[k];
			if ((b->flags & OSM_HIDDEN) || off < 0 || (size_t)off >= len)
				continue;
			osm_full_name(osm_families[i], b, fn, sizeof(fn));
			off += snprintf(err + off, len - (size_t)off, "%s%s", first ? "" : ", ", fn);
			first = 0;
		}
}

/* Each name's defaults (its sweep with --sweep), in order. */
static int name_instances(char **names, int n_names, int sweep, struct osm_instance **out, int *n_out,
			  char *err, size_t len)
{
	struct osm_instance *all = NULL;
	int n = 0;
	for (int i = 0; i < n_names; i++) {
		const struct osm_family *fam;
		const struct osm_bench *b = osm_find_bench(names[i], &fam);
		if (!b) {
			unknown_bench(names[i], err, len);
			free(all);
			return -1;
		}
		struct osm_instance *s = NULL;
		int m = sweep ? osm_sweep_instances(fam, b, &s) : ((s = calloc(1, sizeof(*s))) ? 1 : -1);
		if (!sweep && s)
			osm_instance_init(s, fam, b);
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
	*out = all;
	*n_out = n;
	return 0;
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

/* The instances: a suite's or the names', --param applied, duplicates
 * (a --param value equal to a sweep's) dropped. */
static int make_instances(int argc, char **argv, struct pstate *st, char *err, size_t len)
{
	struct osm_run_opts *o = st->o;
	int n_names = argc - optind, n = 0;
	struct osm_instance *all = NULL;
	if (o->suite && n_names) {
		snprintf(err, len, "give benchmark names or --suite, not both");
		return -1;
	}
	if (!o->suite && !n_names) {
		snprintf(err, len, "nothing to run: give benchmark names or --suite quick|standard|full|lebench");
		return -1;
	}
	if (o->suite) {
		n = osm_suite_instances(osm_suite_bit(o->suite), &all);
		if (n < 0) {
			snprintf(err, len, "internal: cannot expand suite %s", o->suite);
			return -1;
		}
	} else if (name_instances(argv + optind, n_names, st->sweep, &all, &n, err, len)) {
		return -1;
	}
	if (osm_params_apply(&all, &n, st->params, st->n_params, err, len))
		return -1;
	int k = 0;
	for (int i = 0; i < n; i++) {
		int dup = 0;
		for (int j = 0; j < k && !dup; j++)
			dup = same_instance(&all[j], &all[i]);
		if (!dup)
			all[k++] = all[i];
	}
	for (int i = 0; i < k; i++)
		if (osm_instance_check(&all[i], err, len)) {
			free(all);
			return -1;
		}
	o->instances = all;
	o->n_instances = k;
	return 0;
}

int osm_cli_parse_run(int argc, char **argv, struct osm_run_opts *o, char *err, size_t len)
{
	struct pstate st = {.o = o, .min_time = -1, .max_time = -1, .rse = -1, .fraction = 1,
			    .min_samples = -1, .max_samples = -1, .frequency = -1, .buffer_kb = -1};
	memset(o, 0, sizeof(*o));
	o->hotspots = argc > 0 && !strcmp(argv[0], "hotspots");
	o->profile.mode = OSM_PROF_SAMPLE;
	o->profile.event = OSM_PROF_AUTO;
	o->cpu = -1;
	st.params = calloc((size_t)argc + 1, sizeof(*st.params));
	st.given = calloc(N_OPTS, sizeof(*st.given));
	int rc = -1;
	if (!st.params || !st.given)
		snprintf(err, len, "out of memory");
	else if (!parse_options(argc, argv, &st, err, len) && !set_budget(&st, &o->budget, err, len))
		rc = make_instances(argc, argv, &st, err, len);
	free(st.params);
	free(st.given);
	if (!rc && o->hotspots && o->have_counters) {
		snprintf(err, len, "--counters is an option of run, not of hotspots (a profile and counters "
			 "would switch each other's events)");
		osm_cli_free_run(o);
		rc = -1;
	}
	if (!rc && !o->hotspots && (st.profile_opt || st.frequency >= 0 || st.buffer_kb >= 0)) {
		snprintf(err, len, "%s is an option of `osmeter-probe hotspots`, not of run",
			 st.profile_opt ? st.profile_opt : st.frequency >= 0 ? "--frequency" : "--buffer-kb");
		osm_cli_free_run(o);
		rc = -1;
	}
	if (rc)
		return -1;
	/* 999 Hz, not 1000: out of step with the scheduler tick, whose work
	 * would otherwise be sampled too often or never. */
	o->profile.frequency = st.frequency >= 0 ? (int)st.frequency : 999;
	o->profile.buffer_kb = st.buffer_kb >= 0 ? (int)st.buffer_kb : 32768;
	o->fifo = (int)st.fifo;
	o->mlock = st.mlock;
	o->die_with_parent = st.die;
	o->quiet = st.quiet;
	o->lebench_exact = st.lebench_exact;
	o->budget_fraction = st.fraction;
	/* LEBench times with CLOCK_MONOTONIC; --clock still overrides. */
	if (o->lebench_exact && !o->clock)
		o->clock = "monotonic";
	return 0;
}

void osm_cli_free_run(struct osm_run_opts *o)
{
	free(o->instances);
	o->instances = NULL;
}
