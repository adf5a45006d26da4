/* test_catalog.c - every row of every family table is valid (unique full
 * names, snake_case, a known unit, defaults inside their ranges, hidden rows
 * in no suite, sweeps that expand); name lookup; parameter setting and its
 * error codes and messages; suites and sweep expansion. */
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "tap.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static int snake_case(const char *s)
{
	if (!s || !*s || !(*s >= 'a' && *s <= 'z'))
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
			return 0;
	return 1;
}

static void test_rows(void)
{
	char err[512] = "";
	if (!ok(osm_catalog_check(err, sizeof(err)) == 0, "osm_catalog_check passes"))
		diag("%s", err);
	ok(osm_n_families > 0, "there are families (%zu)", osm_n_families);

	/* Each property is checked across every row; one line per property, the
	 * offending rows as diagnostics. */
	int names_ok = 1, unique = 1, units = 1, descs = 1, params_ok = 1, hidden_ok = 1;
	int sweeps = 1, lookup = 1;
	size_t total = 0;
	char name[128], other[128];
	for (size_t i = 0; i < osm_n_families; i++) {
		const struct osm_family *f = osm_families[i];
		if (!snake_case(f->name) || !f->desc || !f->n) {
			names_ok = 0;
			diag("family %zu: bad name, no description or no rows", i);
		}
		for (size_t k = 0; k < f->n; k++) {
			const struct osm_bench *b = &f->benches[k];
			total++;
			osm_full_name(f, b, name, sizeof(name));
			if (!snake_case(b->name)) {
				names_ok = 0;
				diag("%s: name is not snake_case", name);
			}
			for (size_t i2 = 0; i2 < osm_n_families; i2++)
				for (size_t k2 = 0; k2 < osm_families[i2]->n; k2++) {
					const struct osm_bench *b2 = &osm_families[i2]->benches[k2];
					osm_full_name(osm_families[i2], b2, other, sizeof(other));
					if (b2 != b && !strcmp(name, other)) {
						unique = 0;
						diag("%s: duplicate", name);
					}
				}
			const char *u = osm_unit_name(b->unit);
			if (strcmp(u, "ns") && strcmp(u, "bytes_per_s") && strcmp(u, "count")) {
				units = 0;
				diag("%s: unit '%s'", name, u);
			}
			if (!b->desc || !*b->desc || !b->run) {
				descs = 0;
				diag("%s: no description or no run()", name);
			}
			int np = osm_nparams(b);
			if (np > OSM_MAX_PARAMS) {
				params_ok = 0;
				diag("%s: %d parameters", name, np);
			}
			for (int p = 0; p < np && p < OSM_MAX_PARAMS; p++) {
				const struct osm_param *pp = &b->params[p];
				int good = snake_case(pp->name) && pp->help && *pp->help;
				switch (pp->type) {
				case OSM_P_INT:
				case OSM_P_SIZE:
					good &= pp->min <= pp->def && pp->def <= pp->max;
					break;
				case OSM_P_ENUM: {
					int nc = 0;
					while (pp->choices && pp->choices[nc])
						nc++;
					good &= nc > 0 && pp->def >= 0 && pp->def < nc;
					break;
				}
				case OSM_P_STR:
					good &= pp->def_str != NULL;
					break;
				}
				for (int q = 0; q < p; q++)
					good &= strcmp(b->params[q].name, pp->name) != 0;
				if (!good) {
					params_ok = 0;
					diag("%s: parameter %s: bad name/help/default/range", name, pp->name);
				}
			}
			if ((b->flags & OSM_HIDDEN) && b->suites) {
				hidden_ok = 0;
				diag("%s: hidden but in a suite", name);
			}
			struct osm_instance *s = NULL;
			int m = osm_sweep_instances(f, b, &s);
			if (m < 1) {
				sweeps = 0;
				diag("%s: sweep expands to %d", name, m);
			}
			free(s);
			const struct osm_family *ff = NULL;
			if (osm_find_bench(name, &ff) != b || ff != f) {
				lookup = 0;
				diag("%s: osm_find_bench does not find its own row", name);
			}
		}
	}
	ok(total > 0, "%zu benchmarks", total);
	ok(names_ok, "every family and benchmark name is snake_case");
	ok(unique, "every full name is unique");
	ok(units, "every unit name is valid");
	ok(descs, "every row has a description and run()");
	ok(params_ok, "every parameter: snake_case, help, default inside its range");
	ok(hidden_ok, "hidden benchmarks are in no suite");
	ok(sweeps, "every sweep expands to at least one instance");
	ok(lookup, "osm_find_bench finds every row by its full name");

	is_str(osm_unit_name(OSM_UNIT_NS), "ns", "unit name ns");
	is_str(osm_unit_name(OSM_UNIT_BYTES_PER_S), "bytes_per_s", "unit name bytes_per_s");
	is_str(osm_unit_name(OSM_UNIT_COUNT), "count", "unit name count");
}

static void test_find(void)
{
	const struct osm_family *f = NULL;
	const struct osm_bench *b = osm_find_bench("syscall.null", &f);
	if (ok(b != NULL, "finds syscall.null")) {
		is_str(b->name, "null", "syscall.null row");
		is_str(f ? f->name : NULL, "syscall", "syscall.null family");
	}
	ok(osm_find_bench("cpu.call", NULL) != NULL, "finds cpu.call with fam == NULL");
	static const char *const bad[] = {
		"nope", "syscall.", ".null", "", ".", "syscall", "null", "syscall.null.x",
		"syscall.nul", "syscall.nulll", "sys.null", "syscallx.null", "SYSCALL.NULL",
		"syscall..null", " syscall.null", "cpu.null",
	};
	for (size_t i = 0; i < N(bad); i++) {
		f = NULL;
		ok(osm_find_bench(bad[i], &f) == NULL && f == NULL, "rejects '%s'", bad[i]);
	}
}

static struct osm_instance instance_of(const char *full)
{
	struct osm_instance in;
	const struct osm_family *f = NULL;
	const struct osm_bench *b = osm_find_bench(full, &f);
	if (!b) {
		printf("Bail out! %s is not in the catalogue\n", full);
		exit(1);
	}
	osm_instance_init(&in, f, b);
	return in;
}

static void test_params(void)
{
	char err[512];
	struct osm_instance in = instance_of("cpu.call");
	is_int(in.params[0].i, 0, "cpu.call args defaults to 0");

	static const struct {
		const char *key, *value;
		int rc;
		int64_t want;
		const char *err_has[2];
	} cases[] = {
		{"args", "3", 0, 3, {NULL, NULL}},
		{"args", "0", 0, 0, {NULL, NULL}},
		{"args", "7", 0, 7, {NULL, NULL}},
		{"args", "8", -2, 0, {"0..7", "cpu.call"}},
		{"args", "-1", -2, 0, {"0..7", "args"}},
		{"args", "x", -2, 0, {"0..7", NULL}},
		{"args", "", -2, 0, {"0..7", NULL}},
		{"args", "3k", -2, 0, {"0..7", NULL}},
		{"nope", "1", -1, 0, {"nope", "args"}},
		{"ARGS", "1", -1, 0, {"args", NULL}},
		{"", "1", -1, 0, {"args", NULL}},
	};
	for (size_t i = 0; i < N(cases); i++) {
		in = instance_of("cpu.call");
		err[0] = 0;
		int rc = osm_instance_set(&in, cases[i].key, cases[i].value, err, sizeof(err));
		is_int(rc, cases[i].rc, "cpu.call %s=%s -> %d", cases[i].key, cases[i].value, cases[i].rc);
		if (cases[i].rc == 0)
			is_int(in.params[0].i, cases[i].want, "cpu.call %s=%s sets %lld", cases[i].key,
			       cases[i].value, (long long)cases[i].want);
		for (int k = 0; k < 2; k++)
			if (cases[i].err_has[k] && !ok(strstr(err, cases[i].err_has[k]) != NULL,
						       "cpu.call %s=%s: message names '%s'", cases[i].key,
						       cases[i].value, cases[i].err_has[k]))
				diag("message: %s", err);
	}

	/* Enum parameter: stored as the choice's index; errors list the choices. */
	in = instance_of("cpu.timer_overhead");
	is_int(osm_instance_set(&in, "source", "monotonic", err, sizeof(err)), 0,
	       "timer_overhead source=monotonic");
	is_int(in.params[0].i, 2, "source=monotonic is choice 2");
	is_int(osm_instance_set(&in, "source", "bogus", err, sizeof(err)), -2,
	       "timer_overhead source=bogus -> -2");
	ok(strstr(err, "probe") && strstr(err, "monotonic_raw") && strstr(err, "realtime"),
	   "source=bogus: message lists the choices (%s)", err);

	/* A benchmark without parameters says so. */
	in = instance_of("cpu.loop_overhead");
	is_int(osm_instance_set(&in, "x", "1", err, sizeof(err)), -1, "loop_overhead x=1 -> -1");
	ok(strstr(err, "none") != NULL, "loop_overhead: message says it has none (%s)", err);

	/* String parameter: any value. */
	in = instance_of("syscall.stat");
	is_int(osm_instance_set(&in, "path", "/etc/hostname", err, sizeof(err)), 0, "stat path=...");
	is_str(in.params[0].s, "/etc/hostname", "stat path stored");

	/* osm_instance_apply: "k=v[,k=v]". */
	in = instance_of("cpu.call");
	is_int(osm_instance_apply(&in, "args=5", err, sizeof(err)), 0, "apply args=5");
	is_int(in.params[0].i, 5, "apply args=5 sets 5");
	is_int(osm_instance_apply(&in, "args", err, sizeof(err)), -2, "apply 'args' (no =) -> -2");
	is_int(osm_instance_apply(&in, "args=1,nope=2", err, sizeof(err)), -1, "apply unknown key -> -1");
	is_int(osm_instance_apply(&in, "args=9", err, sizeof(err)), -2, "apply args=9 -> -2");
}

static void test_suites(void)
{
	for (int i = 0; osm_suite_names[i]; i++)
		ok(osm_suite_bit(osm_suite_names[i]) != 0, "suite '%s' has a bit", osm_suite_names[i]);
	is_int(osm_suite_bit("quick"), OSM_SUITE_QUICK, "quick bit");
	is_int(osm_suite_bit("bogus"), 0, "unknown suite -> 0");
	is_int(osm_suite_bit(""), 0, "empty suite name -> 0");

	struct osm_instance *v = NULL;
	int n = osm_suite_instances(OSM_SUITE_QUICK, &v);
	ok(n > 0, "quick suite has %d instances", n);
	int hidden = 0, member = 1, calls = 0, null_seen = 0;
	int64_t call_args[16];
	char name[128];
	for (int i = 0; i < n; i++) {
		hidden |= (v[i].bench->flags & OSM_HIDDEN) != 0;
		member &= (v[i].bench->suites & OSM_SUITE_QUICK) != 0;
		osm_full_name(v[i].fam, v[i].bench, name, sizeof(name));
		if (!strcmp(name, "cpu.call") && calls < 16)
			call_args[calls++] = v[i].params[0].i;
		null_seen |= !strcmp(name, "syscall.null");
		if (!strcmp(name, "test.spin"))
			hidden = 1;
	}
	ok(!hidden, "quick excludes hidden benchmarks");
	ok(member, "every quick instance is in quick");
	ok(null_seen, "quick includes syscall.null");
	is_int(calls, 8, "quick runs cpu.call 8 times (its sweep)");
	int seq = calls == 8;
	for (int i = 0; i < calls; i++)
		seq &= call_args[i] == i;
	ok(seq, "quick cpu.call instances have args 0..7 in order");
	free(v);

	/* Sweep expansion directly. */
	const struct osm_family *f = NULL;
	const struct osm_bench *b = osm_find_bench("cpu.call", &f);
	n = osm_sweep_instances(f, b, &v);
	is_int(n, 8, "cpu.call sweep -> 8 instances");
	seq = n == 8;
	for (int i = 0; i < n; i++)
		seq &= v[i].params[0].i == i && v[i].bench == b && v[i].fam == f;
	ok(seq, "cpu.call sweep yields args 0..7");
	free(v);

	b = osm_find_bench("cpu.loop_overhead", &f);
	n = osm_sweep_instances(f, b, &v);
	is_int(n, 1, "no sweep -> one instance with the defaults");
	free(v);

	b = osm_find_bench("cpu.timer_overhead", &f);
	n = osm_sweep_instances(f, b, &v);
	is_int(n, 4, "timer_overhead sweep -> 4 instances");
	seq = n == 4;
	for (int i = 0; i < n; i++)
		seq &= v[i].params[0].i == i;
	ok(seq, "timer_overhead sweep covers every source in order");
	free(v);

	/* The hidden test family is reachable by name but in no suite. */
	for (int s = 0; osm_suite_names[s]; s++) {
		n = osm_suite_instances(osm_suite_bit(osm_suite_names[s]), &v);
		int spin = 0;
		for (int i = 0; i < n; i++)
			spin |= (v[i].bench->flags & OSM_HIDDEN) != 0;
		ok(n >= 0 && !spin, "suite %s: %d instances, none hidden", osm_suite_names[s], n);
		free(v);
		v = NULL;
	}
}

static void test_list_json(void)
{
	for (int all = 0; all < 2; all++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		osm_catalog_list_json(f, all);
		fclose(f);
		int lines = 0;
		for (size_t i = 0; i < len; i++)
			lines += buf[i] == '\n';
		is_int(lines, 1, "list --json%s is one line", all ? " --all" : "");
		ok(len && buf[0] == '{' && buf[len - 2] == '}', "list --json%s is one object",
		   all ? " --all" : "");
		ok(strstr(buf, "\"name\":\"syscall.null\"") != NULL, "list --json%s names syscall.null",
		   all ? " --all" : "");
		ok(!!strstr(buf, "\"name\":\"test.spin\"") == all, "list --json%s %s test.spin",
		   all ? " --all" : "", all ? "shows" : "hides");
		ok(strstr(buf, "\"schema\":1") != NULL, "list --json has schema 1");
		free(buf);
	}
}

int main(void)
{
	test_rows();
	test_find();
	test_params();
	test_suites();
	test_list_json();
	return done_testing();
}
