/* knob.h - the kernel's knobs and small text files (/proc, /sys, tracefs):
 * read one, write one.
 * Depends on nothing (layer 0), so every layer may use it. */
#ifndef OSM_KNOB_H
#define OSM_KNOB_H

#define OSM_KNOB_PARANOID "/proc/sys/kernel/perf_event_paranoid"
#define OSM_KNOB_KPTR "/proc/sys/kernel/kptr_restrict"

/* The integer in the file at path, or fallback when it cannot be read. */
int osm_knob_read_int(const char *path, int fallback);
/* The file at path's first len - 1 bytes into buf, NUL-terminated: the
 * bytes read, or -1 (buf empty) when it cannot be opened. */
long osm_knob_read_text(const char *path, char *buf, unsigned long len);
/* Writes value into the file at path; 0, or -1 with errno. */
int osm_knob_write(const char *path, const char *value);

#endif
