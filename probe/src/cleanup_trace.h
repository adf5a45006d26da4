/* cleanup_trace.h - changes the profiler makes to the system (a tracefs mount,
 * an ftrace instance, a sysctl such as kptr_restrict), journalled before they
 * are made so that they are undone on every exit path: at the end of the
 * profile, in a signal handler (cleanup.h), and after a SIGKILL by the next
 * osmeter or osmeter-probe command, which finds the journal of a dead probe
 * and replays it (osm_tracestate_recover; the front end's
 * osmeter.tracestate does the same).
 *
 * The journal is OSM_TRACESTATE_DIR/trace-<pid>, one undo action per line,
 * written (and fsynced) before the change it undoes:
 *   write <path> <value>   put <value> back into the file <path>
 *   rmdir <path>           remove the directory <path> (an ftrace instance)
 *   umount <path>          unmount <path> (a tracefs the probe mounted)
 * The actions are undone newest first; the file is removed when all are. */
#ifndef OSM_CLEANUP_TRACE_H
#define OSM_CLEANUP_TRACE_H

#include <stddef.h>
#include <sys/types.h>

#define OSM_TRACESTATE_DIR "/run/osmeter"

/* Records one undo action (kind "write", "rmdir" or "umount"); the first
 * call creates the journal and registers the undo with cleanup.h. Returns 0,
 * or -1 with a message in err (the change must then not be made). */
int osm_tracestate_push(const char *kind, const char *path, const char *value, char *err, size_t len);
/* Undoes every recorded action now (newest first) and removes the journal.
 * Async-signal-safe. */
void osm_tracestate_undo(void);
/* Replays the journals of probes that are no longer running. Returns the
 * number of journals replayed; what was restored is said on stderr. */
int osm_tracestate_recover(void);

#endif
