/* test_cli.c - `run`'s argument parser (cli.c, cli_param.c): --param lists
 * of any length, A..B ranges, repeated keys, de-duplication, the limits and
 * their messages, a second value for a single-valued option. Under the
 * sanitizer build this also checks that no path leaks or overruns. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_param.h"
#include "tap.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static char err[8192];

/* Parses "run" + args; returns the parser's result, the instances in *o. */
static int parse(struct osm_run_opts *o, int n, const char **args)
{
	char **argv = calloc((size_t)n + 2, sizeof(*argv));
	argv[0] = (char *)"run";
	for (int i = 0; i < n; i++)
		argv[i + 1] = (char *)args[i];
	err[0] = 0;
	int r = osm_cli_parse_run(n + 1, argv, o, err, sizeof(err));
	free(argv);
	return r;
}

/* The args values of cpu.call instances, as "1,3" in buf. */
static const char *args_list(const struct osm_run_opts *o, char *buf, size_t len)
{
	size_t off = 0;
	buf[0] = 0;
	for (int i = 0; i < o->n_instances && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%lld", i ? "," : "",
					(long long)o->instances[i].params[0].i);
	return buf;
}

static const struct {
	const char *value; /* --param args=VALUE */
	const char *want;  /* the args measured */
} good[] = {
	{"3", "3"},
	{"1,3", "1,3"},
	{"0..7", "0,1,2,3,4,5,6,7"},
	{"6,2..3,2", "6,2,3"},
	{"1,01,+1,1", "1"},
	{"5..5", "5"},
};

static const struct {
	const char *value;
	const char *err_has;
} bad[] = {
	{"0..8", "8 is out of range; allowed: 0..7"},
	{"3..1", "the range 3..1 is empty"},
	{"1,,2", "'' is not an integer"},
	{",", "'' is not an integer"},
	{"..", "'' is not an integer"},
	{"1..", "'' is not an integer"},
	{"x..2", "'x' is not an integer"},
};

int main(void)
{
	struct osm_run_opts o;
	char buf[256];

	for (size_t i = 0; i < N(good); i++) {
		char p[64];
		snprintf(p, sizeof(p), "args=%s", good[i].value);
		const char *a[] = {"cpu.call", "--param", p};
		ok(parse(&o, 3, a) == 0, "args=%s parses (%s)", good[i].value, err);
		is_str(args_list(&o, buf, sizeof(buf)), good[i].want, "args=%s", good[i].value);
		osm_cli_free_run(&o);
	}
	for (size_t i = 0; i < N(bad); i++) {
		char p[64];
		snprintf(p, sizeof(p), "args=%s", bad[i].value);
		const char *a[] = {"cpu.call", "--param", p};
		ok(parse(&o, 3, a) == -1 && strstr(err, bad[i].err_has) && o.instances == NULL,
		   "args=%s refused: %s", bad[i].value, err);
	}

	/* The hostile list: 1100 zeros before a 3, no buffer to cut it. */
	{
		char *p = malloc(1200);
		strcpy(p, "args=1,1,1,");
		memset(p + strlen(p), '0', 1100);
		strcpy(p + 11 + 1100, "3");
		const char *a[] = {"cpu.call", "--param", p};
		ok(parse(&o, 3, a) == 0, "a 1116-byte list parses");
		is_str(args_list(&o, buf, sizeof(buf)), "1,3", "nothing cut, nothing invented");
		osm_cli_free_run(&o);
		free(p);
	}

	/* Repeated --param: a sweep over both, as a comma list. */
	{
		const char *a[] = {"cpu.call", "--param", "args=4", "--sweep", "--param", "args=2..3"};
		ok(parse(&o, 6, a) == 0, "repeated --param parses");
		is_str(args_list(&o, buf, sizeof(buf)), "4,2,3", "repeated --param sweeps over both");
		osm_cli_free_run(&o);
	}

	/* Limits, named in the message. */
	{
		const char *a[] = {"test.spin", "--param", "ns=10..1034"};
		ok(parse(&o, 3, a) == -1 && strstr(err, "1025 values; at most 1024"), "range limit: %s", err);
		const char *b[] = {"test.spin", "--param", "ns=10..1033"};
		ok(parse(&o, 3, b) == 0 && o.n_instances == OSM_MAX_PARAM_VALUES, "1024 values are allowed");
		osm_cli_free_run(&o);
		const char *c[] = {"task.fork", "--param", "vmas=0..1023", "--param", "touched_mib=1..65"};
		ok(parse(&o, 5, c) == -1 && strstr(err, "at most 65536"), "instance limit: %s", err);
	}

	/* One value per single-valued option; the same value twice is harmless. */
	{
		const char *a[] = {"cpu.call", "--fifo", "5", "--fifo", "6"};
		ok(parse(&o, 5, a) == -1 && strstr(err, "--fifo given twice ('5', then '6')"), "%s", err);
		const char *b[] = {"cpu.call", "--max-time", "2", "--max-time", "2", "--quiet", "--quiet"};
		ok(parse(&o, 7, b) == 0 && o.budget.max_time_s == 2 && o.quiet, "same value twice: %s", err);
		osm_cli_free_run(&o);
	}

	/* Every numeric option of the table keeps its range and its name. */
	{
		static const char *const opts[][3] = {
			{"--min-time", "-1", "0..3600"},        {"--max-time", "0", "0.001..86400"},
			{"--min-samples", "0", "1..10000000"},  {"--max-samples", "0", "1..10000000"},
			{"--target-rse", "2", "0.0001..1"},     {"--fifo", "100", "1..99"},
			{"--budget-fraction", "2", "0.01..1"},  {"--cpu", "-1", "0..1023"},
		};
		for (size_t i = 0; i < N(opts); i++) {
			const char *a[] = {"cpu.call", opts[i][0], opts[i][1]};
			ok(parse(&o, 3, a) == -1 && !strncmp(err, opts[i][0], strlen(opts[i][0])) &&
				   strstr(err, opts[i][2]),
			   "%s %s: %s", opts[i][0], opts[i][1], err);
		}
	}
	return done_testing();
}
