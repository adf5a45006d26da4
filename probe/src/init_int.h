/* init_int.h - init mode's parts (internal): the channel (init_frame.c)
 * and running one command of the plan (init_run.c). */
#ifndef OSM_INIT_INT_H
#define OSM_INIT_INT_H

#include <stddef.h>

#include "compiler.h"
#include "init.h"

/* The channel: frames numbered from 0. A write that fails marks it broken;
 * nothing more is sent then. */
struct osm_chan {
	int fd;              /* -1: not open */
	int is_tty;
	int broken;
	unsigned long long seq;
};

/* Opens an existing path for writing (O_NONBLOCK while opening, so neither
 * a serial line without carrier nor a FIFO without a reader blocks; a FIFO
 * without one fails); a tty is made raw. Returns 0, or -1 with err. */
int osm_chan_open(struct osm_chan *c, const char *path, char *err, size_t errlen);
/* Sends one frame (payload of at most OSM_INIT_PIECE bytes, no '\n'):
 * 0, or -1 when the channel is (or just became) broken. */
int osm_chan_send(struct osm_chan *c, char kind, int cmd, const void *payload, size_t len);
int osm_chan_sendf(struct osm_chan *c, char kind, int cmd, const char *fmt, ...) OSM_PRINTF(4, 5);
/* tcdrain for a tty, else fsync (errors of a device that has no fsync ignored). */
void osm_chan_drain(struct osm_chan *c);

/* Runs plan command `index` (1-based) in a forked child that calls
 * dispatch(argc, argv) with its stdout and stderr on pipes, framing them
 * as they come (O/o, E/e) and ending with the X frame. Every child that
 * ends meanwhile is reaped. Returns 0 with the child's wait status in
 * *status, or -1 when the channel broke (the message in err); a command
 * that could not start (pipe, fork) is reported as L and X "exit 3". */
int osm_init_run_command(struct osm_chan *c, int index, int argc, char **argv, osm_dispatch_fn dispatch,
			 int *status, char *err, size_t errlen);

/* Progress on stderr (the console): "osmeter-probe init: ...". */
void osm_init_progress(const char *fmt, ...) OSM_PRINTF(1, 2);

#endif
