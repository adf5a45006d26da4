/* test_parse.c - osm_parse_int/size/double and osm_format_size, driven by
 * tables of cases: good values, suffixes, signs, ranges, overflow, garbage.
 * On failure the error message must name what is allowed. */
#include <stdint.h>
#include <string.h>

#include "parse.h"
#include "tap.h"

#define KiB (INT64_C(1) << 10)
#define MiB (INT64_C(1) << 20)
#define GiB (INT64_C(1) << 30)

struct int_case {
	const char *in;
	int64_t min, max;
	int rc;              /* 0 or -1 */
	int64_t want;        /* when rc == 0 */
	const char *err_has; /* when rc == -1: a substring of the message */
};

static const struct int_case int_cases[] = {
	{"42", 0, 100, 0, 42, NULL},
	{"0", 0, 100, 0, 0, NULL},
	{"100", 0, 100, 0, 100, NULL},
	{"+7", 0, 100, 0, 7, NULL},
	{"-5", -10, 10, 0, -5, NULL},
	{"-9223372036854775808", INT64_MIN, INT64_MAX, 0, INT64_MIN, NULL},
	{"9223372036854775807", INT64_MIN, INT64_MAX, 0, INT64_MAX, NULL},
	{"0", 1, 100, -1, 0, "1..100"},        /* zero where min > 0 */
	{"-1", 0, 100, -1, 0, "0..100"},       /* negative */
	{"101", 0, 100, -1, 0, "0..100"},      /* just above */
	{"9223372036854775808", 0, INT64_MAX, -1, 0, "out of range; allowed: 0..9223372036854775807"}, /* overflow */
	{"99999999999999999999999", 0, 100, -1, 0, "'99999999999999999999999' is out of range; allowed: 0..100"},
	{"-99999999999999999999999", -100, 100, -1, 0, "out of range; allowed: -100..100"},
	{"99999999999999999999x", 0, 100, -1, 0, "not an integer; allowed: 0..100"}, /* garbage after it */
	{"abc", 0, 100, -1, 0, "0..100"},      /* non-numeric */
	{"12x", 0, 100, -1, 0, "0..100"},      /* trailing garbage */
	{"12 ", 0, 100, -1, 0, "0..100"},      /* trailing space */
	{"1.5", 0, 100, -1, 0, "0..100"},
	{"4k", 0, 100000, -1, 0, "0..100000"}, /* no suffixes on plain integers */
	{"", 0, 100, -1, 0, "0..100"},         /* empty */
	{" 5", 0, 100, -1, 0, "0..100"},       /* leading space */
	{"\t5", 0, 100, -1, 0, "0..100"},
	{"-", 0, 100, -1, 0, "0..100"},
	{"0x10", 0, 100, -1, 0, "0..100"},     /* decimal only */
};

static const struct int_case size_cases[] = {
	{"0", 0, GiB, 0, 0, NULL},
	{"512", 0, GiB, 0, 512, NULL},
	{"512b", 0, GiB, 0, 512, NULL},
	{"512B", 0, GiB, 0, 512, NULL},
	{"4k", 0, GiB, 0, 4 * KiB, NULL},
	{"4K", 0, GiB, 0, 4 * KiB, NULL},
	{"4KiB", 0, GiB, 0, 4 * KiB, NULL},
	{"4kib", 0, GiB, 0, 4 * KiB, NULL},
	{"4KB", 0, GiB, 0, 4 * KiB, NULL},
	{"3m", 0, GiB, 0, 3 * MiB, NULL},
	{"3M", 0, GiB, 0, 3 * MiB, NULL},
	{"3MiB", 0, GiB, 0, 3 * MiB, NULL},
	{"3MB", 0, GiB, 0, 3 * MiB, NULL},
	{"1g", 0, 8 * GiB, 0, GiB, NULL},
	{"1G", 0, 8 * GiB, 0, GiB, NULL},
	{"2GiB", 0, 8 * GiB, 0, 2 * GiB, NULL},
	{"8GB", 0, 8 * GiB, 0, 8 * GiB, NULL},
	{"+4k", 0, GiB, 0, 4 * KiB, NULL},
	{"1023", 4 * KiB, GiB, -1, 0, "4 KiB..1 GiB"},  /* below min */
	{"0", 4 * KiB, GiB, -1, 0, "4 KiB..1 GiB"},     /* zero where min > 0 */
	{"2G", 4 * KiB, GiB, -1, 0, "4 KiB..1 GiB"},    /* above max */
	{"1025M", 0, GiB, -1, 0, "0 B..1 GiB"},
	{"-1", 0, GiB, -1, 0, "0 B..1 GiB"},            /* negative */
	{"-4k", 0, GiB, -1, 0, "0 B..1 GiB"},
	{"9223372036854775807k", 0, GiB, -1, 0, "out of range; allowed: 0 B..1 GiB"}, /* shift overflow */
	{"8589934592G", 0, GiB, -1, 0, "0 B..1 GiB"},
	{"99999999999999999999", 0, GiB, -1, 0, "out of range; allowed: 0 B..1 GiB"}, /* strtoll overflow */
	{"99999999999999999999k", 0, GiB, -1, 0, "out of range; allowed: 0 B..1 GiB"},
	{"99999999999999999999q", 0, GiB, -1, 0, "unknown size suffix"},
	{"4T", 0, GiB, -1, 0, "KiB"},                   /* unknown suffix */
	{"4 k", 0, GiB, -1, 0, "KiB"},                  /* space before suffix */
	{"4kk", 0, GiB, -1, 0, "KiB"},                  /* trailing garbage */
	{"4.5k", 0, GiB, -1, 0, "KiB"},
	{"k", 0, GiB, -1, 0, "0 B..1 GiB"},             /* suffix alone */
	{"abc", 0, GiB, -1, 0, "0 B..1 GiB"},
	{"", 0, GiB, -1, 0, "0 B..1 GiB"},
	{" 4k", 0, GiB, -1, 0, "0 B..1 GiB"},           /* leading space */
};

struct dbl_case {
	const char *in;
	double min, max;
	int rc;
	double want;
	const char *err_has;
};

static const struct dbl_case dbl_cases[] = {
	{"0.5", 0, 10, 0, 0.5, NULL},
	{"1", 0, 10, 0, 1.0, NULL},
	{"1e-3", 0, 10, 0, 1e-3, NULL},
	{"2.5E1", 0, 100, 0, 25.0, NULL},
	{"-0.25", -1, 1, 0, -0.25, NULL},
	{"0", 0, 10, 0, 0.0, NULL},
	{"10", 0, 10, 0, 10.0, NULL},
	{"0", 0.001, 10, -1, 0, "0.001..10"},   /* zero where min > 0 */
	{"-1", 0, 10, -1, 0, "0..10"},          /* negative */
	{"10.5", 0, 10, -1, 0, "0..10"},
	{"1e400", 0, 10, -1, 0, "out of range; allowed: 0..10"}, /* overflow */
	{"-1e400", 0, 10, -1, 0, "out of range; allowed: 0..10"},
	{"1e-400", 0, 10, 0, 0, NULL},          /* underflow: a value near 0 */
	{"1e-400", 0.001, 10, -1, 0, "out of range; allowed: 0.001..10"},
	{"inf", 0, 10, -1, 0, "out of range; allowed: 0..10"}, /* not finite */
	{"-inf", -10, 10, -1, 0, "-10..10"},
	{"nan", 0, 10, -1, 0, "not a number; allowed: 0..10"},
	{"abc", 0, 10, -1, 0, "0..10"},         /* non-numeric */
	{"1.5s", 0, 10, -1, 0, "0..10"},        /* trailing garbage */
	{"1.5 ", 0, 10, -1, 0, "0..10"},
	{"", 0, 10, -1, 0, "0..10"},            /* empty */
	{" 1.5", 0, 10, -1, 0, "0..10"},        /* leading space */
	{".", 0, 10, -1, 0, "0..10"},
};

struct fmt_case {
	int64_t bytes;
	const char *want;
};

static const struct fmt_case fmt_cases[] = {
	{0, "0 B"},
	{123, "123 B"},
	{1000, "1000 B"},
	{1024, "1 KiB"},
	{4096, "4 KiB"},
	{40000 * KiB, "40000 KiB"},
	{MiB, "1 MiB"},
	{512 * MiB, "512 MiB"},
	{GiB, "1 GiB"},
	{GiB + KiB, "1048577 KiB"},
	{3 * GiB, "3 GiB"},
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void check_int_table(const char *fn, const struct int_case *cases, size_t n,
			    int (*parse)(const char *, int64_t, int64_t, int64_t *, char *, size_t))
{
	for (size_t i = 0; i < n; i++) {
		const struct int_case *c = &cases[i];
		char err[256] = "";
		int64_t out = INT64_C(0x5a5a5a5a);
		int rc = parse(c->in, c->min, c->max, &out, err, sizeof(err));
		if (c->rc == 0) {
			if (is_int(rc, 0, "%s('%s') accepted", fn, c->in))
				is_int(out, c->want, "%s('%s') = %" PRId64, fn, c->in, c->want);
			else
				diag("error: %s", err);
		} else {
			is_int(rc, -1, "%s('%s') rejected", fn, c->in);
			is_int(out, INT64_C(0x5a5a5a5a), "%s('%s') leaves *out alone", fn, c->in);
			if (!ok(strstr(err, c->err_has) != NULL, "%s('%s') message names '%s'", fn, c->in,
				c->err_has))
				diag("message: %s", err);
		}
	}
}

int main(void)
{
	check_int_table("osm_parse_int", int_cases, N(int_cases), osm_parse_int);
	check_int_table("osm_parse_size", size_cases, N(size_cases), osm_parse_size);

	for (size_t i = 0; i < N(dbl_cases); i++) {
		const struct dbl_case *c = &dbl_cases[i];
		char err[256] = "";
		double out = -12345.0;
		int rc = osm_parse_double(c->in, c->min, c->max, &out, err, sizeof(err));
		if (c->rc == 0) {
			if (is_int(rc, 0, "osm_parse_double('%s') accepted", c->in))
				is_double_near(out, c->want, 0, "osm_parse_double('%s') = %g", c->in, c->want);
			else
				diag("error: %s", err);
		} else {
			is_int(rc, -1, "osm_parse_double('%s') rejected", c->in);
			if (!ok(strstr(err, c->err_has) != NULL, "osm_parse_double('%s') message names '%s'",
				c->in, c->err_has))
				diag("message: %s", err);
		}
	}

	/* NULL input is an error, not a crash. */
	{
		char err[256] = "";
		int64_t v;
		double d;
		is_int(osm_parse_int(NULL, 0, 1, &v, err, sizeof(err)), -1, "osm_parse_int(NULL) rejected");
		is_int(osm_parse_size(NULL, 0, 1, &v, err, sizeof(err)), -1, "osm_parse_size(NULL) rejected");
		is_int(osm_parse_double(NULL, 0, 1, &d, err, sizeof(err)), -1,
		       "osm_parse_double(NULL) rejected");
	}

	/* A short error buffer is truncated, never overrun. */
	{
		char err[8];
		memset(err, 'x', sizeof(err));
		int64_t v;
		osm_parse_int("nope", 0, 100, &v, err, sizeof(err));
		ok(memchr(err, 0, sizeof(err)) != NULL, "short error buffer is NUL-terminated");
	}

	for (size_t i = 0; i < N(fmt_cases); i++) {
		char buf[32];
		osm_format_size(fmt_cases[i].bytes, buf, sizeof(buf));
		is_str(buf, fmt_cases[i].want, "osm_format_size(%" PRId64 ")", fmt_cases[i].bytes);
	}

	/* Every formatted size parses back to itself (the names `list` shows are
	 * accepted by --param). */
	for (size_t i = 0; i < N(fmt_cases); i++) {
		char buf[32], nospace[32], err[256];
		osm_format_size(fmt_cases[i].bytes, buf, sizeof(buf));
		size_t k = 0;
		for (const char *p = buf; *p; p++)
			if (*p != ' ')
				nospace[k++] = *p;
		nospace[k] = 0;
		int64_t v = -1;
		int rc = osm_parse_size(nospace, 0, INT64_MAX, &v, err, sizeof(err));
		ok(rc == 0 && v == fmt_cases[i].bytes, "osm_parse_size('%s') round-trips", nospace);
	}

	/* A long value is shown shortened, so the allowed range still fits a
	 * 300-byte message and the length is named. */
	{
		char big[2001], err[300], sh[OSM_SHOW_LEN];
		memset(big, '7', sizeof(big) - 1);
		big[sizeof(big) - 1] = 0;
		int64_t v;
		double d;
		osm_parse_int(big, 0, 7, &v, err, sizeof(err));
		ok(strstr(err, "allowed: 0..7") && strstr(err, "(2000 bytes)"), "long int: %s", err);
		osm_parse_size(big, 0, 1024, &v, err, sizeof(err));
		ok(strstr(err, "allowed: 0 B..1 KiB") && strstr(err, "(2000 bytes)"), "long size: %s", err);
		big[0] = 'x';
		osm_parse_double(big, 0, 1, &d, err, sizeof(err));
		ok(strstr(err, "allowed: 0..1") && strstr(err, "(2000 bytes)"), "long double: %s", err);
		is_str(osm_shorten("short", sh, sizeof(sh)), "short", "osm_shorten keeps a short value");
		is_str(osm_shorten(NULL, sh, sizeof(sh)), "", "osm_shorten(NULL)");
		/* never cut inside a UTF-8 sequence: 47 ASCII bytes, then U+00E9 */
		char u[100];
		memset(u, 'a', 47);
		strcpy(u + 47, "\xc3\xa9" "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb");
		osm_shorten(u, sh, sizeof(sh));
		ok(strstr(sh, "aaa...") != NULL && strstr(sh, "(81 bytes)") != NULL, "cut before U+00E9: %s", sh);
	}
	return done_testing();
}
