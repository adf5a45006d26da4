/* init.h - init mode (docs/probe-init.md): the static probe as PID 1 of a
 * VM's initramfs. It mounts /proc, /sys, /dev and /tmp, reads a plan of
 * probe commands, runs each in a forked child (the probe's own dispatch,
 * in-process, no exec), sends their output over a channel in CRC-checked
 * frames, and powers off. The parsers and the frame format are public here
 * so that the C unit tests (probe/tests/test_init.c) can check them. */
#ifndef OSM_INIT_H
#define OSM_INIT_H

#include <stddef.h>
#include <stdint.h>

/* The probe's command dispatch (main.c): argv[0] the program name, argv[1]
 * the command; returns the exit code. */
typedef int (*osm_dispatch_fn)(int argc, char **argv);

/* `osmeter-probe init [--plan FILE] [--channel PATH]`, or main() run as
 * /init: argv[0] is "init" (the command, or the program's name), the
 * options follow. Not PID 1: one error line, returns OSM_EXIT_USAGE.
 * PID 1: never returns (powers off, or _exits when that fails). */
int osm_init_main(int argc, char **argv, osm_dispatch_fn dispatch);

/* Limits: the plan's and the kernel command line's size, the plan's
 * commands and arguments, and a frame's payload (a longer stdout or stderr
 * line goes in pieces of this size). */
#define OSM_INIT_MAX_BYTES 65536
#define OSM_INIT_MAX_COMMANDS 32
#define OSM_INIT_MAX_ARGS 512
#define OSM_INIT_PIECE 65536
#define OSM_INIT_PATH_MAX 4096

/* CRC-32 of IEEE 802.3 (zlib's crc32, reflected 0xedb88320, initial and
 * final xor 0xffffffff): crc32("123456789") = 0xcbf43926. */
uint32_t osm_crc32(const void *buf, size_t len);

/* One frame, "@osm1 SEQ KIND CMD LEN CRC PAYLOAD\n", into out (cap bytes;
 * OSM_INIT_FRAME_HEAD more than the payload is always enough). Returns its
 * length, or 0 when it does not fit or the payload holds a '\n'. */
#define OSM_INIT_FRAME_HEAD 96
size_t osm_init_frame_format(char *out, size_t cap, unsigned long long seq, char kind, int cmd,
			     const void *payload, size_t len);

/* A file read whole, at most max bytes: it must be a regular file (opened
 * O_NONBLOCK, so a FIFO or a device is refused at once, never waited on).
 * Returns 0 with a malloc'd, NUL-terminated copy in *out (its length in
 * *len), or -1 with the reason in err. */
int osm_init_read_bounded(const char *path, size_t max, char **out, size_t *len, char *err, size_t errlen);

/* A parsed plan: command i's argv is {"osmeter-probe", args..., NULL},
 * argc[i] counting the program's name. */
struct osm_plan {
	int n;
	int argc[OSM_INIT_MAX_COMMANDS];
	char **argv[OSM_INIT_MAX_COMMANDS];
};

/* Parses a plan (text of len bytes and a NUL at text[len], as
 * osm_init_read_bounded leaves it; changed in place: the argv point into
 * it, so it must outlive the plan). One command a line, arguments separated
 * by one TAB; empty lines and lines starting with '#' are skipped. An empty
 * plan, an empty argument, a NUL byte, more than OSM_INIT_MAX_COMMANDS
 * commands or OSM_INIT_MAX_ARGS arguments in one are errors: -1 with the
 * reason (and the line) in err. */
int osm_init_parse_plan(char *text, size_t len, struct osm_plan *plan, char *err, size_t errlen);
void osm_init_free_plan(struct osm_plan *plan);

/* What the kernel command line says to init: osmeter.sleep=S (0..86400),
 * osmeter.channel=PATH, osmeter.plan=PATH (absolute). */
struct osm_init_cmdline {
	int sleep_s;                        /* -1: not given */
	char channel[OSM_INIT_PATH_MAX];    /* "": not given */
	char plan[OSM_INIT_PATH_MAX];       /* "": not given */
	char ignored[256];                  /* unknown osmeter.* names, for a note; "" if none */
};

/* Parses whitespace-separated tokens (len bytes; no quoting); tokens not
 * starting with "osmeter." are skipped, the last of a name wins. Returns 0,
 * or -1 with the first malformed osmeter.* value named in err (the valid
 * ones are still set). */
int osm_init_parse_cmdline(const char *text, size_t len, struct osm_init_cmdline *c, char *err, size_t errlen);

#endif
