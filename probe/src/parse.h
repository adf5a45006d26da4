/* parse.h - strict number parsing with range checks. Each function returns 0
 * or -1 with a message in err that names what is allowed. */
#ifndef OSM_PARSE_H
#define OSM_PARSE_H

#include <stddef.h>
#include <stdint.h>

/* Decimal integer, optional sign, no trailing garbage, in [min, max]. */
int osm_parse_int(const char *s, int64_t min, int64_t max, int64_t *out, char *err, size_t errlen);
/* Size in bytes: an integer with an optional suffix k/K/KiB/KB (1024),
 * m/M/MiB/MB (2^20), g/G/GiB/GB (2^30); in [min, max]. */
int osm_parse_size(const char *s, int64_t min, int64_t max, int64_t *out, char *err, size_t errlen);
/* Finite decimal number (seconds, ratios) in [min, max]. */
int osm_parse_double(const char *s, double min, double max, double *out, char *err, size_t errlen);
/* User input shown in a message: s itself when it has at most OSM_SHOW_MAX
 * bytes, else its start, "..." and its length, so a long argument cannot push
 * the rest of the message (the allowed values) out of a fixed buffer. buf
 * should have OSM_SHOW_LEN bytes; returns buf. */
#define OSM_SHOW_MAX 64
#define OSM_SHOW_LEN 96
const char *osm_shorten(const char *s, char *buf, size_t len);
/* src into dst (len bytes), whole when it fits; else its middle is cut out
 * and marked, "HEAD [... N bytes left out ...] TAIL", so a message keeps
 * both what failed (its start) and why (its end: the errno text, the
 * limit). Never cuts inside a UTF-8 sequence; a dst too small for the mark
 * (under OSM_CUT_MIN bytes) gets the head alone. Returns the bytes of src
 * left out (0: whole). */
#define OSM_CUT_MIN 64
size_t osm_cut_middle(char *dst, size_t len, const char *src);
/* Human form of a size: "4 KiB", "40000 KiB", "512 MiB", "123 B". */
void osm_format_size(int64_t bytes, char *buf, size_t len);

#endif
