/* parse.c - see parse.h. */
#include "parse.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *osm_shorten(const char *s, char *buf, size_t len)
{
	size_t n = s ? strlen(s) : 0;
	if (!s)
		s = "";
	if (n <= OSM_SHOW_MAX) {
		snprintf(buf, len, "%s", s);
		return buf;
	}
	size_t cut = OSM_SHOW_MAX - 16;
	while (cut > 0 && ((unsigned char)s[cut] & 0xc0) == 0x80)
		cut--; /* not inside a UTF-8 sequence */
	snprintf(buf, len, "%.*s... (%zu bytes)", (int)cut, s, n);
	return buf;
}

/* 0, -1 when s does not start with a decimal integer, or -2 when it does
 * but the integer has no int64_t (end is set then too: what follows it may
 * still make the text no number at all). */
/* How many of s's first n bytes end on a character boundary (not inside a
 * UTF-8 sequence). */
static size_t utf8_head(const char *s, size_t n)
{
	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	return n;
}

size_t osm_cut_middle(char *dst, size_t len, const char *src)
{
	size_t n = strlen(src);
	if (len == 0)
		return n;
	if (n < len) {
		memcpy(dst, src, n + 1);
		return 0;
	}
	if (len < OSM_CUT_MIN) {
		size_t h = utf8_head(src, len - 1);
		memcpy(dst, src, h);
		dst[h] = 0;
		return n - h;
	}
	/* The mark is sized for the largest count (n), so what it says fits. */
	char mark[64];
	int ml = snprintf(mark, sizeof(mark), " [... %zu bytes left out ...] ", n);
	size_t room = len - 1 - (size_t)ml;
	size_t head = utf8_head(src, room / 2);
	size_t tail_at = n - (room - room / 2);
	while (tail_at < n && ((unsigned char)src[tail_at] & 0xc0) == 0x80)
		tail_at++; /* the tail starts on a character */
	size_t cut = tail_at - head;
	ml = snprintf(mark, sizeof(mark), " [... %zu bytes left out ...] ", cut);
	memcpy(dst, src, head);
	memcpy(dst + head, mark, (size_t)ml);
	memcpy(dst + head + (size_t)ml, src + tail_at, n - tail_at + 1);
	return cut;
}

static int parse_i64(const char *s, int64_t *out, const char **end)
{
	if (!s || !*s || isspace((unsigned char)*s))
		return -1;
	char *e;
	errno = 0;
	long long v = strtoll(s, &e, 10);
	if (e == s)
		return -1;
	*end = e;
	if (errno == ERANGE)
		return -2;
	*out = v;
	return 0;
}

int osm_parse_int(const char *s, int64_t min, int64_t max, int64_t *out, char *err, size_t errlen)
{
	int64_t v = 0;
	const char *end;
	char sh[OSM_SHOW_LEN];
	int r = parse_i64(s, &v, &end);
	if (r == -1 || *end) {
		snprintf(err, errlen, "'%s' is not an integer; allowed: %lld..%lld",
			 osm_shorten(s, sh, sizeof(sh)), (long long)min, (long long)max);
		return -1;
	}
	if (r == -2) { /* an integer, beyond int64_t: beyond any range too */
		snprintf(err, errlen, "'%s' is out of range; allowed: %lld..%lld", osm_shorten(s, sh, sizeof(sh)),
			 (long long)min, (long long)max);
		return -1;
	}
	if (v < min || v > max) {
		snprintf(err, errlen, "%lld is out of range; allowed: %lld..%lld",
			 (long long)v, (long long)min, (long long)max);
		return -1;
	}
	*out = v;
	return 0;
}

static const struct {
	const char *suffix;
	int shift;
} size_suffixes[] = {
	{"", 0}, {"b", 0}, {"k", 10}, {"kb", 10}, {"kib", 10}, {"m", 20}, {"mb", 20},
	{"mib", 20}, {"g", 30}, {"gb", 30}, {"gib", 30},
};

int osm_parse_size(const char *s, int64_t min, int64_t max, int64_t *out, char *err, size_t errlen)
{
	char lo[32], hi[32], sh[OSM_SHOW_LEN];
	osm_format_size(min, lo, sizeof(lo));
	osm_format_size(max, hi, sizeof(hi));
	int64_t v = 0;
	const char *end;
	int r = parse_i64(s, &v, &end);
	if (r == -1) {
		snprintf(err, errlen, "'%s' is not a size; allowed: %s..%s (suffixes k, KiB, M, MiB, G, GiB)",
			 osm_shorten(s, sh, sizeof(sh)), lo, hi);
		return -1;
	}
	int shift = -1;
	for (size_t i = 0; i < sizeof(size_suffixes) / sizeof(size_suffixes[0]); i++)
		if (!strcasecmp(end, size_suffixes[i].suffix))
			shift = size_suffixes[i].shift;
	if (shift < 0) {
		snprintf(err, errlen, "'%s' has an unknown size suffix; allowed: k, KiB, M, MiB, G, GiB",
			 osm_shorten(s, sh, sizeof(sh)));
		return -1;
	}
	if (r == -2 || v < 0 || (shift && v > (INT64_MAX >> shift))) {
		snprintf(err, errlen, "'%s' is out of range; allowed: %s..%s", osm_shorten(s, sh, sizeof(sh)), lo, hi);
		return -1;
	}
	v <<= shift;
	if (v < min || v > max) {
		snprintf(err, errlen, "'%s' is out of range; allowed: %s..%s", osm_shorten(s, sh, sizeof(sh)), lo, hi);
		return -1;
	}
	*out = v;
	return 0;
}

int osm_parse_double(const char *s, double min, double max, double *out, char *err, size_t errlen)
{
	char *e, sh[OSM_SHOW_LEN];
	if (!s || !*s || isspace((unsigned char)*s)) {
		snprintf(err, errlen, "'%s' is not a number; allowed: %g..%g", osm_shorten(s, sh, sizeof(sh)), min, max);
		return -1;
	}
	errno = 0;
	double v = strtod(s, &e);
	if (e == s || *e || isnan(v)) {
		snprintf(err, errlen, "'%s' is not a number; allowed: %g..%g", osm_shorten(s, sh, sizeof(sh)), min, max);
		return -1;
	}
	/* 1e999 (ERANGE, infinite) and inf are numbers beyond any range; an
	 * underflow (1e-999: ERANGE, a value near 0) is checked as the value. */
	if (isinf(v) || v < min || v > max) {
		snprintf(err, errlen, "%s is out of range; allowed: %g..%g", osm_shorten(s, sh, sizeof(sh)), min, max);
		return -1;
	}
	*out = v;
	return 0;
}

void osm_format_size(int64_t b, char *buf, size_t len)
{
	if (b >= (1LL << 30) && b % (1LL << 30) == 0)
		snprintf(buf, len, "%lld GiB", (long long)(b >> 30));
	else if (b >= (1LL << 20) && b % (1LL << 20) == 0)
		snprintf(buf, len, "%lld MiB", (long long)(b >> 20));
	else if (b >= 1024 && b % 1024 == 0)
		snprintf(buf, len, "%lld KiB", (long long)(b >> 10));
	else
		snprintf(buf, len, "%lld B", (long long)b);
}
