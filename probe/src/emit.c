/* emit.c - JSON Lines writer. See emit.h and docs/schema.md. */
#include "emit.h"

#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

static sigset_t saved_mask;

void osm_json_init(struct osm_json *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	j->first[0] = true;
}

static void sep(struct osm_json *j, const char *key)
{
	if (!j->first[j->depth])
		fputc(',', j->f);
	j->first[j->depth] = false;
	if (key && !j->in_array[j->depth]) {
		osm_json_write_string(j->f, key);
		fputc(':', j->f);
	}
}

static void push(struct osm_json *j, bool array)
{
	if (j->depth + 1 >= OSM_JSON_DEPTH)
		abort(); /* a programming error: records are shallow */
	j->depth++;
	j->first[j->depth] = true;
	j->in_array[j->depth] = array;
}

/* Length of the valid UTF-8 sequence at p (1..4), or 0 if it is not one
 * (overlong forms, surrogates and code points above U+10FFFF are invalid);
 * its code point goes to *cpp. */
static int utf8_len(const unsigned char *p, unsigned *cpp)
{
	*cpp = p[0];
	if (p[0] < 0x80)
		return 1;
	int n;
	unsigned cp;
	if ((p[0] & 0xe0) == 0xc0) {
		n = 2;
		cp = p[0] & 0x1f;
	} else if ((p[0] & 0xf0) == 0xe0) {
		n = 3;
		cp = p[0] & 0x0f;
	} else if ((p[0] & 0xf8) == 0xf0) {
		n = 4;
		cp = p[0] & 0x07;
	} else {
		return 0;
	}
	for (int i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	static const unsigned min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
	if (cp < min_cp[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	*cpp = cp;
	return n;
}

long osm_utf8_check(const char *s)
{
	unsigned cp;
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		int n = utf8_len(p, &cp);
		if (!n)
			return (long)(p - (const unsigned char *)s);
		p += n;
	}
	return -1;
}

/* Code points a line-splitting reader may take for a line end (Python's
 * str.splitlines, JavaScript before ES2019): the C1 controls, NEL among
 * them, and the Unicode line and paragraph separators. */
static int splits_lines(unsigned cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029;
}

/* Escapes per RFC 8259. Bytes that are not valid UTF-8 (a disk model, a
 * path from the environment) become U+FFFD, so every line stays parseable
 * JSON; U+0080..U+009F, U+2028 and U+2029 are written as \uXXXX escapes, so
 * no reader that splits lines on them breaks a record in two. */
void osm_json_write_string(FILE *f, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		switch (*p) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		case '\b': fputs("\\b", f); break;
		case '\f': fputs("\\f", f); break;
		default:
			if (*p < 0x20 || *p == 0x7f) {
				fputs("\\u00", f);
				fputc(hex[*p >> 4], f);
				fputc(hex[*p & 15], f);
			} else if (*p >= 0x80) {
				unsigned cp;
				int n = utf8_len(p, &cp);
				if (!n) {
					fputs("\\ufffd", f);
					p++;
				} else if (splits_lines(cp)) {
					fprintf(f, "\\u%04x", cp);
					p += n;
				} else {
					fwrite(p, 1, (size_t)n, f);
					p += n;
				}
				continue;
			} else {
				fputc(*p, f);
			}
		}
		p++;
	}
	fputc('"', f);
}

void osm_json_format_num(char *buf, size_t len, double v)
{
	if (!isfinite(v)) {
		snprintf(buf, len, "null");
		return;
	}
	/* The probe never calls setlocale(), so the C locale's '.' is in force. */
	snprintf(buf, len, "%.17g", v);
}

void osm_json_record_begin(struct osm_json *j, const char *type)
{
	sigset_t all;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &saved_mask);
	j->depth = 0;
	j->first[0] = true;
	j->in_array[0] = false;
	fputc('{', j->f);
	j->first[0] = false;
	osm_json_write_string(j->f, "type");
	fputc(':', j->f);
	osm_json_write_string(j->f, type);
}

void osm_json_record_end(struct osm_json *j)
{
	fputs("}\n", j->f);
	fflush(j->f);
	sigprocmask(SIG_SETMASK, &saved_mask, NULL);
}

void osm_json_doc_begin(struct osm_json *j)
{
	j->depth = 0;
	j->first[0] = true;
	j->in_array[0] = false;
	fputc('{', j->f);
}

void osm_json_doc_end(struct osm_json *j)
{
	fputs("}\n", j->f);
	fflush(j->f);
}

void osm_json_str(struct osm_json *j, const char *key, const char *v)
{
	sep(j, key);
	if (v)
		osm_json_write_string(j->f, v);
	else
		fputs("null", j->f);
}

void osm_json_int(struct osm_json *j, const char *key, int64_t v)
{
	sep(j, key);
	fprintf(j->f, "%lld", (long long)v);
}

void osm_json_num(struct osm_json *j, const char *key, double v)
{
	char buf[40];
	sep(j, key);
	osm_json_format_num(buf, sizeof(buf), v);
	fputs(buf, j->f);
}

void osm_json_bool(struct osm_json *j, const char *key, bool v)
{
	sep(j, key);
	fputs(v ? "true" : "false", j->f);
}

void osm_json_null(struct osm_json *j, const char *key)
{
	sep(j, key);
	fputs("null", j->f);
}

void osm_json_raw(struct osm_json *j, const char *key, const char *json)
{
	sep(j, key);
	fputs(json, j->f);
}

void osm_json_obj_begin(struct osm_json *j, const char *key)
{
	sep(j, key);
	fputc('{', j->f);
	push(j, false);
}

void osm_json_obj_end(struct osm_json *j)
{
	fputc('}', j->f);
	j->depth--;
}

void osm_json_arr_begin(struct osm_json *j, const char *key)
{
	sep(j, key);
	fputc('[', j->f);
	push(j, true);
}

void osm_json_arr_end(struct osm_json *j)
{
	fputc(']', j->f);
	j->depth--;
}
