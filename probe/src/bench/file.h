/* file.h - internal to the file family (bench/file*.c): the benchmark
 * functions its table in file.c points at, and the helpers they share.
 * Method notes: docs/methods/file.md
 *
 * Where the files go (file_util.c): every file benchmark has `dir`; its
 * work files live in a private subdirectory "DIR/osmeter-probe.<pid>.XXXXXX"
 * made by osm_workdir_in() and removed at exit with everything in it, on
 * every exit path (the front end removes what a SIGKILLed probe left).
 * dir="" means the probe's own work directory, or /var/tmp when that is on
 * tmpfs or ramfs (a file there lives in memory: no disk under it).
 *
 * How the page cache is bypassed (file_bypass.c) for the cold benchmarks:
 * O_DIRECT where the file system allows it, else posix_fadvise(DONTNEED)
 * of what is about to be read (checked with mincore()), else dropping the
 * page cache as root; the method used is recorded in the result's info. */
#ifndef OSM_BENCH_FILE_H
#define OSM_BENCH_FILE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../bench.h"

#define OSM_FILE_PATH 512

/* The directory a file benchmark measures. */
struct osm_file_target {
	char dir[OSM_FILE_PATH];   /* the directory measured (dir param, or the default) */
	char work[OSM_FILE_PATH];  /* the private subdirectory in it, removed at exit */
	char fstype[64];           /* from /proc/self/mountinfo, e.g. "ext4", "fuse.sshfs" */
	int in_memory;             /* tmpfs or ramfs: nothing is ever read from a device */
	int remote;                /* nfs, cifs/smb, fuse.sshfs, 9p, ceph, ...: the file is on another machine */
};

/* --- the target directory (file_util.c) --------------------------------- */

/* Resolves the `dir` param, checks it is a writable directory, makes the
 * private work directory in it and adds the result's info: dir, fs_type,
 * device, mount_options, remote ("yes"/"no"). OSM_OK, or OSM_ERROR/OSM_SKIP
 * with a message naming the directory (missing, not a directory, not
 * writable: the reason from errno). */
int osm_file_target(struct osm_ctx *ctx, struct osm_file_target *t);
/* "WORK/NAME" into path; 0, or -1 when it does not fit. */
int osm_file_path(const struct osm_file_target *t, const char *name, char *path, size_t len);
/* Free bytes for an unprivileged user on the target's file system, or -1. */
int64_t osm_file_free_bytes(const struct osm_file_target *t);
/* Writes `size` bytes of real data (not a hole: 'a's, as LEBench) at offset
 * 0 of fd, in chunks, retrying short writes; a failure (ENOSPC, EDQUOT,
 * EIO) is OSM_ERROR with "WHAT: strerror (ENAME) after N of SIZE bytes". */
int osm_file_fill(struct osm_ctx *ctx, int fd, int64_t size, const char *what);
/* write() of all `len` bytes at the current offset, retrying short writes;
 * returns the bytes written (== len), or -1 with errno (a short write
 * followed by a failing one gives that one's errno). */
ssize_t osm_file_write_all(int fd, const void *buf, size_t len);
/* errno's symbolic name ("ENOSPC"), or "errno N". */
const char *osm_file_errname(int e);

/* --- cache bypass for the cold benchmarks (file_bypass.c) --------------- */

enum osm_file_method {
	OSM_FILE_AUTO = 0,        /* the first of the three that works here */
	OSM_FILE_DIRECT = 1,      /* O_DIRECT */
	OSM_FILE_FADVISE = 2,     /* posix_fadvise(DONTNEED) before each read */
	OSM_FILE_DROP_CACHES = 3, /* echo 1 > /proc/sys/vm/drop_caches before each pass (root) */
};

/* The `method` param's choices, in enum order. */
extern const char *const osm_file_method_names[];

/* --- the benchmarks (table in file.c) ------------------------------------ */

/* file_rw.c: file.read, file.write (LEBench rows) */
int osm_file_read_setup(struct osm_ctx *ctx);
int osm_file_read_run(struct osm_ctx *ctx, uint64_t batch);
int osm_file_write_setup(struct osm_ctx *ctx);
int osm_file_write_run(struct osm_ctx *ctx, uint64_t batch);
void osm_file_rw_teardown(struct osm_ctx *ctx);

/* file_meta.c: file.create, file.unlink, file.stat, file.open_close */
int osm_file_meta_setup(struct osm_ctx *ctx);
int osm_file_create_run(struct osm_ctx *ctx, uint64_t batch);
int osm_file_unlink_run(struct osm_ctx *ctx, uint64_t batch);
int osm_file_stat_run(struct osm_ctx *ctx, uint64_t batch);
int osm_file_open_close_run(struct osm_ctx *ctx, uint64_t batch);
void osm_file_meta_teardown(struct osm_ctx *ctx);

/* file_cold.c: file.seq_read_cold, file.rand_read_cold */
int osm_file_cold_setup(struct osm_ctx *ctx);
int osm_file_cold_run(struct osm_ctx *ctx, uint64_t batch);
void osm_file_cold_teardown(struct osm_ctx *ctx);

/* file_contention.c: file.contention */
int osm_file_contention_setup(struct osm_ctx *ctx);
int osm_file_contention_run(struct osm_ctx *ctx, uint64_t batch);
void osm_file_contention_teardown(struct osm_ctx *ctx);

/* file_cache.c: file.cache_sweep */
int osm_file_cache_setup(struct osm_ctx *ctx);
int osm_file_cache_run(struct osm_ctx *ctx, uint64_t batch);
void osm_file_cache_teardown(struct osm_ctx *ctx);

#endif
