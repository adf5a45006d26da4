/* cleanup.h - a stack of undo actions run on every exit path: normal return,
 * error, and SIGINT/SIGTERM/SIGHUP/SIGQUIT/SIGPIPE. Undo actions may run inside
 * a signal handler, so they must be async-signal-safe (kill, waitpid, unlink,
 * rmdir, open/write/close of a knob file). */
#ifndef OSM_CLEANUP_H
#define OSM_CLEANUP_H

#include <stddef.h>
#include <sys/types.h>

typedef void (*osm_undo_fn)(void *arg);

/* Returns a handle for osm_cleanup_pop, or -1 when the stack is full. */
int osm_cleanup_push(osm_undo_fn fn, void *arg);
/* Removes the action; runs it first when run != 0. */
void osm_cleanup_pop(int handle, int run);
/* Runs every action, newest first, once. */
void osm_cleanup_run_all(void);

/* A child process to SIGKILL and reap on any exit. Returns a handle. */
int osm_cleanup_track_child(pid_t pid);

/* The private work directory ($TMPDIR or /tmp/osmeter-probe.<pid>.XXXXXX),
 * made on first use and removed at exit with everything in it. Returns NULL on error. */
const char *osm_workdir(void);
/* A private work directory "PARENT/osmeter-probe.<pid>.XXXXXX" in any
 * directory (the file family's --param dir=), made on the first call for
 * PARENT and returned again after; at exit it is removed with everything
 * in it (two levels of subdirectories deep), whoever made the files, on
 * every exit path (signals included). The front end removes what a
 * SIGKILLed probe left by that name. Returns 0, or -1 with errno. */
int osm_workdir_in(const char *parent, char *path, size_t len);
/* Full path of a file in the work directory; it is unlinked at exit.
 * Returns 0, or -1 (path too long, work directory unavailable, table full). */
int osm_workfile(const char *name, char *path, size_t len);

/* Interruption: the handler runs the undo stack, writes an `end` record with
 * status "interrupted" to out_fd, then dies of the same signal. */
void osm_cleanup_install_signals(int out_fd);
void osm_cleanup_set_out_fd(int out_fd);
/* Counts of finished instances, written into the `end` record. */
void osm_cleanup_count(int status); /* OSM_OK, OSM_SKIP, OSM_ERROR */
void osm_cleanup_get_counts(int counts[3]);

/* ISO 8601 UTC time, async-signal-safe ("2026-11-22T07:40:00Z"). buf >= 21. */
void osm_utc_now(char *buf);

#endif
