/* test_emit.c - the JSON Lines writer: string escaping (RFC 8259, invalid
 * UTF-8 -> U+FFFD), the NaN/Inf -> null policy, %.17g round trips, one
 * record per line, commas in nested objects and arrays, signal mask restored.
 * Output is captured with open_memstream. */
#include <float.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "tap.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Captures what fn writes to a FILE; the caller frees the result. */
struct capture {
	FILE *f;
	char *buf;
	size_t len;
};

static void cap_open(struct capture *c)
{
	c->buf = NULL;
	c->len = 0;
	c->f = open_memstream(&c->buf, &c->len);
	if (!c->f) {
		perror("open_memstream");
		exit(2);
	}
}

static char *cap_close(struct capture *c)
{
	fclose(c->f);
	return c->buf;
}

static const struct {
	const char *in;
	const char *want;
	const char *what;
} str_cases[] = {
	{"", "\"\"", "empty"},
	{"plain", "\"plain\"", "plain ASCII"},
	{"a\"b", "\"a\\\"b\"", "quote"},
	{"a\\b", "\"a\\\\b\"", "backslash"},
	{"\\\"", "\"\\\\\\\"\"", "backslash then quote"},
	{"/", "\"/\"", "slash is not escaped"},
	{"l1\nl2", "\"l1\\nl2\"", "newline"},
	{"\r\t\b\f", "\"\\r\\t\\b\\f\"", "short escapes"},
	{"\x01", "\"\\u0001\"", "control 0x01"},
	{"\x1b[0m", "\"\\u001b[0m\"", "escape sequence"},
	{"\x1f", "\"\\u001f\"", "control 0x1f"},
	{"\x7f", "\"\\u007f\"", "DEL"},
	{" ~", "\" ~\"", "printable edges"},
	{"h\xc3\xa9llo", "\"h\xc3\xa9llo\"", "2-byte UTF-8 passes through"},
	{"\xe6\x97\xa5\xe6\x9c\xac", "\"\xe6\x97\xa5\xe6\x9c\xac\"", "3-byte UTF-8 passes through"},
	{"\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\"", "4-byte UTF-8 passes through"},
	{"\xef\xbf\xbf", "\"\xef\xbf\xbf\"", "U+FFFF passes through"},
	{"\xf4\x8f\xbf\xbf", "\"\xf4\x8f\xbf\xbf\"", "U+10FFFF passes through"},
	{"a\xff" "b", "\"a\\ufffdb\"", "invalid byte 0xff"},
	{"\x80", "\"\\ufffd\"", "lone continuation byte"},
	{"\xc0\xaf", "\"\\ufffd\\ufffd\"", "overlong 2-byte form"},
	{"\xe0\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\"", "overlong 3-byte form"},
	{"\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"", "UTF-16 surrogate"},
	{"\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"", "above U+10FFFF"},
	{"x\xe6\x97", "\"x\\ufffd\\ufffd\"", "truncated sequence at the end"},
	{"\xe6\x97" "a", "\"\\ufffd\\ufffda\"", "truncated sequence before ASCII"},
	/* What a line-splitting reader takes for a line end is escaped. */
	{"a\xc2\x85" "b", "\"a\\u0085b\"", "NEL U+0085 escaped"},
	{"\xc2\x80\xc2\x9f", "\"\\u0080\\u009f\"", "C1 controls escaped"},
	{"a\xe2\x80\xa8" "b", "\"a\\u2028b\"", "LINE SEPARATOR U+2028 escaped"},
	{"a\xe2\x80\xa9" "b", "\"a\\u2029b\"", "PARAGRAPH SEPARATOR U+2029 escaped"},
	{"\xc2\xa0\xe2\x80\xa7\xe2\x80\xaa", "\"\xc2\xa0\xe2\x80\xa7\xe2\x80\xaa\"",
	 "neighbours U+00A0, U+2027, U+202A pass through"},
};

static const struct {
	const char *in;
	long want;
} utf8_cases[] = {
	{"", -1}, {"plain", -1}, {"h\xc3\xa9llo", -1}, {"\xf0\x9f\x98\x80", -1}, {"a\xff", 1},
	{"ab\xc0\xaf", 2}, {"x\xed\xa0\x80", 1}, {"\xe6\x97", 0}, {"\xe2\x80\xa8", -1},
};

static const double round_trip[] = {
	0.0, 1.0, -2.5, 0.1, 1.0 / 3.0, 2.0 / 3.0, 123456789.123456789, 1e-300, 5e-324,
	DBL_MIN, DBL_MAX, -DBL_MAX, 9007199254740993.0, 1e21, 1e22, 6.02214076e23, 299792458.0,
	12.3456789e-9, 4.9406564584124654e-324,
};

/* A JSON number per RFC 8259: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static int is_json_number(const char *s)
{
	const char *p = s;
	if (*p == '-')
		p++;
	if (*p == '0')
		p++;
	else if (*p >= '1' && *p <= '9')
		while (*p >= '0' && *p <= '9')
			p++;
	else
		return 0;
	if (*p == '.') {
		p++;
		if (!(*p >= '0' && *p <= '9'))
			return 0;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!(*p >= '0' && *p <= '9'))
			return 0;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	return *p == 0;
}

static int count_char(const char *s, char c)
{
	int n = 0;
	for (; *s; s++)
		n += *s == c;
	return n;
}

static int same_sigmask(const sigset_t *a, const sigset_t *b)
{
	for (int s = 1; s < 32; s++)
		if (sigismember(a, s) != sigismember(b, s))
			return 0;
	return 1;
}

int main(void)
{
	struct capture c;

	/* --- strings --- */
	for (size_t i = 0; i < N(str_cases); i++) {
		cap_open(&c);
		osm_json_write_string(c.f, str_cases[i].in);
		char *got = cap_close(&c);
		is_str(got, str_cases[i].want, "escape: %s", str_cases[i].what);
		free(got);
	}
	for (size_t i = 0; i < N(utf8_cases); i++)
		is_int(osm_utf8_check(utf8_cases[i].in), utf8_cases[i].want, "osm_utf8_check case %zu", i);
	/* Every control character is escaped. */
	{
		int all = 1;
		for (int ch = 1; ch < 0x20; ch++) {
			char in[2] = {(char)ch, 0};
			cap_open(&c);
			osm_json_write_string(c.f, in);
			char *got = cap_close(&c);
			for (char *p = got; *p; p++)
				if ((unsigned char)*p < 0x20)
					all = 0;
			free(got);
		}
		ok(all, "no raw control character survives escaping");
	}

	/* --- numbers --- */
	{
		char buf[40];
		osm_json_format_num(buf, sizeof(buf), NAN);
		is_str(buf, "null", "NaN -> null");
		osm_json_format_num(buf, sizeof(buf), -NAN);
		is_str(buf, "null", "-NaN -> null");
		osm_json_format_num(buf, sizeof(buf), INFINITY);
		is_str(buf, "null", "+Inf -> null");
		osm_json_format_num(buf, sizeof(buf), -INFINITY);
		is_str(buf, "null", "-Inf -> null");
		osm_json_format_num(buf, sizeof(buf), 1.5);
		is_str(buf, "1.5", "1.5 is written short");
		osm_json_format_num(buf, sizeof(buf), 100.0);
		is_str(buf, "100", "100.0 is written as 100");
	}
	for (size_t i = 0; i < N(round_trip); i++) {
		double v = round_trip[i];
		char buf[40];
		osm_json_format_num(buf, sizeof(buf), v);
		double back = strtod(buf, NULL);
		ok(memcmp(&back, &v, sizeof(v)) == 0, "%%.17g round trip of %.17g via '%s'", v, buf);
		ok(is_json_number(buf), "'%s' is a JSON number", buf);
	}

	/* --- one record --- */
	{
		sigset_t before, after;
		sigprocmask(SIG_SETMASK, NULL, &before);
		struct osm_json j;
		cap_open(&c);
		osm_json_init(&j, c.f);
		osm_json_record_begin(&j, "result");
		osm_json_str(&j, "bench", "cpu.call");
		osm_json_int(&j, "n", -42);
		osm_json_int(&j, "big", INT64_MAX);
		osm_json_num(&j, "median", 2.5);
		osm_json_num(&j, "bad", NAN);
		osm_json_bool(&j, "t", true);
		osm_json_bool(&j, "f", false);
		osm_json_null(&j, "z");
		osm_json_str(&j, "s", NULL);
		osm_json_str(&j, "msg", "line1\nline2");
		osm_json_record_end(&j);
		sigprocmask(SIG_SETMASK, NULL, &after);
		char *got = cap_close(&c);
		is_str(got,
		       "{\"type\":\"result\",\"bench\":\"cpu.call\",\"n\":-42,\"big\":9223372036854775807,"
		       "\"median\":2.5,\"bad\":null,\"t\":true,\"f\":false,\"z\":null,\"s\":null,"
		       "\"msg\":\"line1\\nline2\"}\n",
		       "flat record");
		is_int(count_char(got, '\n'), 1, "a record is exactly one line");
		ok(got[0] && got[strlen(got) - 1] == '\n', "a record ends in \\n");
		ok(same_sigmask(&before, &after), "signal mask restored after the record");
		free(got);
	}

	/* --- nesting: commas in objects, arrays, arrays of objects, empties --- */
	{
		struct osm_json j;
		cap_open(&c);
		osm_json_init(&j, c.f);
		osm_json_record_begin(&j, "meta");
		osm_json_int(&j, "schema", OSM_SCHEMA_VERSION);
		osm_json_obj_begin(&j, "build");
		osm_json_str(&j, "arch", "x86_64");
		osm_json_arr_begin(&j, "list");
		osm_json_int(&j, NULL, 1);
		osm_json_num(&j, NULL, 2.5);
		osm_json_str(&j, NULL, "three");
		osm_json_obj_begin(&j, NULL);
		osm_json_null(&j, "c");
		osm_json_obj_end(&j);
		osm_json_obj_begin(&j, NULL);
		osm_json_obj_end(&j);
		osm_json_arr_end(&j);
		osm_json_arr_begin(&j, "empty");
		osm_json_arr_end(&j);
		osm_json_obj_end(&j);
		osm_json_arr_begin(&j, "nested");
		osm_json_arr_begin(&j, NULL);
		osm_json_arr_end(&j);
		osm_json_arr_begin(&j, NULL);
		osm_json_int(&j, NULL, 1);
		osm_json_arr_begin(&j, NULL);
		osm_json_bool(&j, NULL, false);
		osm_json_arr_end(&j);
		osm_json_arr_end(&j);
		osm_json_arr_end(&j);
		osm_json_obj_begin(&j, "o");
		osm_json_obj_end(&j);
		osm_json_raw(&j, "raw", "{\"k\":[1,2]}");
		osm_json_int(&j, "last", 0);
		osm_json_record_end(&j);

		/* A second record on the same writer starts fresh. */
		osm_json_record_begin(&j, "end");
		osm_json_str(&j, "status", "complete");
		osm_json_record_end(&j);
		char *got = cap_close(&c);
		is_str(got,
		       "{\"type\":\"meta\",\"schema\":1,\"build\":{\"arch\":\"x86_64\","
		       "\"list\":[1,2.5,\"three\",{\"c\":null},{}],\"empty\":[]},"
		       "\"nested\":[[],[1,[false]]],\"o\":{},\"raw\":{\"k\":[1,2]},\"last\":0}\n"
		       "{\"type\":\"end\",\"status\":\"complete\"}\n",
		       "nested record, then a second record");
		is_int(count_char(got, '\n'), 2, "two records are two lines");
		free(got);
	}

	/* A key is escaped like a value. */
	{
		struct osm_json j;
		cap_open(&c);
		osm_json_init(&j, c.f);
		osm_json_record_begin(&j, "x\"y");
		osm_json_int(&j, "a\\b", 1);
		osm_json_record_end(&j);
		char *got = cap_close(&c);
		is_str(got, "{\"type\":\"x\\\"y\",\"a\\\\b\":1}\n", "type and keys are escaped");
		free(got);
	}

	/* --- plain documents (list --json) --- */
	{
		struct osm_json j;
		cap_open(&c);
		osm_json_init(&j, c.f);
		osm_json_doc_begin(&j);
		osm_json_int(&j, "schema", 1);
		osm_json_arr_begin(&j, "benchmarks");
		osm_json_obj_begin(&j, NULL);
		osm_json_str(&j, "name", "a.b");
		osm_json_obj_end(&j);
		osm_json_obj_begin(&j, NULL);
		osm_json_str(&j, "name", "c.d");
		osm_json_obj_end(&j);
		osm_json_arr_end(&j);
		osm_json_doc_end(&j);
		char *got = cap_close(&c);
		is_str(got, "{\"schema\":1,\"benchmarks\":[{\"name\":\"a.b\"},{\"name\":\"c.d\"}]}\n",
		       "document");
		free(got);
	}
	{
		struct osm_json j;
		cap_open(&c);
		osm_json_init(&j, c.f);
		osm_json_doc_begin(&j);
		osm_json_doc_end(&j);
		char *got = cap_close(&c);
		is_str(got, "{}\n", "empty document");
		free(got);
	}
	return done_testing();
}
