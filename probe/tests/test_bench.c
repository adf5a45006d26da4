/* test_bench.c - the messages a benchmark leaves (bench.c): osm_fail and
 * osm_add_info keep a text whole when it fits and, when it does not, its
 * start and its end with the middle cut out and marked (osm_cut_middle,
 * parse.c), so the cause at the end of a message about a long path is
 * never lost (issue 10). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "parse.h"
#include "tap.h"

/* Valid UTF-8 in the sense that matters here: every continuation byte
 * follows a lead byte or another continuation, and no sequence is cut. */
static int utf8_whole(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		int k = *p < 0x80 ? 0 : (*p & 0xe0) == 0xc0 ? 1 : (*p & 0xf0) == 0xe0 ? 2 : (*p & 0xf8) == 0xf0 ? 3 : -1;
		if (k < 0)
			return 0;
		p++;
		for (int i = 0; i < k; i++, p++)
			if ((*p & 0xc0) != 0x80)
				return 0;
	}
	return 1;
}

/* "HEAD [... N bytes left out ...] TAIL": N plus what is kept is the whole. */
static size_t kept_plus_cut(const char *out)
{
	const char *m = strstr(out, " [... ");
	unsigned long long n = 0;
	const char *end = m ? strstr(m, " bytes left out ...] ") : NULL;
	if (!m || !end || sscanf(m, " [... %llu bytes", &n) != 1)
		return 0;
	return (size_t)(m - out) + strlen(end + strlen(" bytes left out ...] ")) + (size_t)n;
}

static char *repeat(const char *unit, size_t times, const char *tail)
{
	size_t ul = strlen(unit), tl = strlen(tail);
	char *s = malloc(ul * times + tl + 1);
	for (size_t i = 0; i < times; i++)
		memcpy(s + i * ul, unit, ul);
	memcpy(s + ul * times, tail, tl + 1);
	return s;
}

static void test_cut_middle(void)
{
	char buf[200];
	is_int((int64_t)osm_cut_middle(buf, sizeof(buf), "short"), 0, "cut_middle: a short text is whole");
	is_str(buf, "short", "cut_middle: copied");
	char *fits = repeat("a", sizeof(buf) - 1, "");
	is_int((int64_t)osm_cut_middle(buf, sizeof(buf), fits), 0, "cut_middle: len - 1 bytes fit whole");
	is_str(buf, fits, "cut_middle: exact fit copied");
	free(fits);

	char *big = repeat("x", 5000, ": No such file or directory");
	size_t cut = osm_cut_middle(buf, sizeof(buf), big);
	ok(strlen(buf) < sizeof(buf), "cut_middle: fits the buffer (%zu bytes)", strlen(buf));
	ok(!strncmp(buf, "xxxx", 4), "cut_middle: keeps the head");
	size_t bl = strlen(buf);
	ok(bl > 27 && !strcmp(buf + bl - 27, ": No such file or directory"), "cut_middle: keeps the tail: %s", buf);
	ok(cut > 0 && kept_plus_cut(buf) == strlen(big), "cut_middle: marks the %zu bytes left out: %s", cut, buf);
	free(big);

	/* two-byte characters: neither end of the cut splits one */
	for (size_t len = OSM_CUT_MIN; len < OSM_CUT_MIN + 8; len++) {
		char *u = repeat("\xc3\xa9", 400, "");
		char *out = malloc(len);
		osm_cut_middle(out, len, u);
		ok(utf8_whole(out) && strlen(out) < len && kept_plus_cut(out) == strlen(u),
		   "cut_middle: UTF-8 whole at len %zu", len);
		free(out);
		free(u);
	}
	/* a buffer too small for the mark: the head alone, terminated */
	char tiny[10];
	is_int((int64_t)osm_cut_middle(tiny, sizeof(tiny), "0123456789abcdef"), 7, "cut_middle: tiny: 7 left out");
	is_str(tiny, "012345678", "cut_middle: tiny buffer: the head");
}

static void test_fail(void)
{
	struct osm_ctx *ctx = calloc(1, sizeof(*ctx));
	is_int(osm_fail(ctx, OSM_SKIP, "needs %s", "root"), OSM_SKIP, "osm_fail returns the status");
	is_str(ctx->msg, "needs root", "osm_fail: a short message whole");

	/* A path as long as the system allows, twice, and the words: whole. */
	char *path = repeat("p", 4095, "");
	osm_fail(ctx, OSM_ERROR, "file=%s is not on the file system of dir=%s: leave dir= out", path, path);
	ok(strlen(ctx->msg) == 2 * 4095 + strlen("file= is not on the file system of dir=: leave dir= out") &&
		   !strstr(ctx->msg, "left out ...]"),
	   "osm_fail: two PATH_MAX paths fit whole (%zu bytes)", strlen(ctx->msg));

	/* Longer than the buffer: the start and the cause are kept. */
	char *huge = repeat("d", 3 * OSM_MSG_LEN, "");
	osm_fail(ctx, OSM_ERROR, "dir=%s: cannot make a work directory there: %s", huge, "No such file or directory");
	size_t ml = strlen(ctx->msg);
	ok(ml < OSM_MSG_LEN && !strncmp(ctx->msg, "dir=ddd", 7), "osm_fail: cut to fit, the head kept");
	const char *tail = "ddd: cannot make a work directory there: No such file or directory";
	ok(ml > strlen(tail) && !strcmp(ctx->msg + ml - strlen(tail), tail), "osm_fail: the cause kept");
	ok(kept_plus_cut(ctx->msg) ==
		   3 * OSM_MSG_LEN + strlen("dir=: cannot make a work directory there: No such file or directory"),
	   "osm_fail: the mark counts the bytes left out");

	/* info: a path whole; longer, cut in the middle */
	osm_add_info(ctx, "dir", "%s", path);
	is_str(ctx->info[0].value, path, "osm_add_info: a PATH_MAX path whole");
	osm_add_info(ctx, "dir", "%s/end", huge);
	size_t il = strlen(ctx->info[0].value);
	ok(ctx->n_info == 1 && il < OSM_INFO_LEN && !strcmp(ctx->info[0].value + il - 8, "dddd/end") &&
		   kept_plus_cut(ctx->info[0].value) == 3 * OSM_MSG_LEN + 4,
	   "osm_add_info: too long, the middle cut and marked");
	free(huge);
	free(path);
	free(ctx);
}

int main(void)
{
	test_cut_middle();
	test_fail();
	return done_testing();
}
