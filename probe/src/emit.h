/* emit.h - the one JSON Lines writer. Every string is escaped; numbers are
 * written with %.17g in the C locale; NaN and +-Inf are written as null. */
#ifndef OSM_EMIT_H
#define OSM_EMIT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define OSM_SCHEMA_VERSION 1
#define OSM_JSON_DEPTH 16

struct osm_json {
	FILE *f;
	int depth;
	bool first[OSM_JSON_DEPTH]; /* no element written yet at this depth */
	bool in_array[OSM_JSON_DEPTH];
	int pretty;                 /* unused: records are one line each */
};

void osm_json_init(struct osm_json *j, FILE *f);
/* A record is one object on one line. Signals are blocked while it is
 * written, so an interrupted probe never leaves half a line behind. */
void osm_json_record_begin(struct osm_json *j, const char *type);
void osm_json_record_end(struct osm_json *j); /* writes "}\n" and flushes */

/* Plain documents (list --json, sysinfo --json). */
void osm_json_doc_begin(struct osm_json *j);
void osm_json_doc_end(struct osm_json *j);

/* Members of the current object (key != NULL) or elements of the current
 * array (key == NULL). */
void osm_json_str(struct osm_json *j, const char *key, const char *v); /* NULL -> null */
void osm_json_int(struct osm_json *j, const char *key, int64_t v);
void osm_json_num(struct osm_json *j, const char *key, double v);    /* NaN/Inf -> null */
void osm_json_bool(struct osm_json *j, const char *key, bool v);
void osm_json_null(struct osm_json *j, const char *key);
void osm_json_obj_begin(struct osm_json *j, const char *key);
void osm_json_obj_end(struct osm_json *j);
void osm_json_arr_begin(struct osm_json *j, const char *key);
void osm_json_arr_end(struct osm_json *j);
/* A raw, already valid JSON value (used to splice the machine object). */
void osm_json_raw(struct osm_json *j, const char *key, const char *json);

/* Escape s as a JSON string (with quotes) into f: RFC 8259 escapes, invalid
 * UTF-8 -> U+FFFD, and U+0080..U+009F, U+2028, U+2029 as \uXXXX. */
void osm_json_write_string(FILE *f, const char *s);
/* Offset of the first byte of s that is not part of valid UTF-8, or -1. */
long osm_utf8_check(const char *s);
/* Format a double as JSON into buf (>= 32 bytes): %.17g, C locale, or "null". */
void osm_json_format_num(char *buf, size_t len, double v);

#endif
