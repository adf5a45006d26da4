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

/* A path of the family holds any path the system takes: PATH_MAX bytes,
 * the NUL included. */
#define OSM_FILE_PATH PATH_MAX
/* Under the target directory the family adds its work directory,
 * "/osmeter-probe.<pid>.XXXXXX" (at most 29 bytes: a pid has at most 7
 * digits), and in it the names it makes: "/" and a name of at most 63
 * bytes (its name[64] buffers: "read.<seq>", "open_close.<seq>" and its
 * "/f0000000", "cold.dat", "contention.<k>", "cache_sweep.dat"). So dir=
 * and file= (whose directory is the target) are refused beyond
 * OSM_FILE_DIR_MAX bytes before anything runs, and a directory that only
 * gets longer after realpath() (a symlink to a long one, a relative path)
 * is an error naming the limit: every path the family makes then fits
 * OSM_FILE_PATH by construction. */
#define OSM_FILE_RESERVE 128
#define OSM_FILE_DIR_MAX (PATH_MAX - 1 - OSM_FILE_RESERVE)
#define OSM_FILE_DIR_WHY "PATH_MAX - 1, less 128 for the work directory and the files the benchmark makes in it"
_Static_assert(29 + 64 <= OSM_FILE_RESERVE, "the work directory and a name fit the reserve");

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
/* The real path (realpath) of `given`, the value of param `key`, into out
 * (OSM_FILE_PATH bytes) when it has at most OSM_FILE_DIR_MAX bytes: OSM_OK,
 * or OSM_ERROR naming the limit (a name over NAME_MAX, a real path over
 * PATH_MAX - 1 or OSM_FILE_DIR_MAX) or the reason (errno). */
int osm_file_realpath(struct osm_ctx *ctx, const char *key, const char *given, char *out);
/* "WORK/NAME" into path; 0, or -1 when it does not fit (a name of the
 * family always fits an OSM_FILE_PATH buffer: see OSM_FILE_RESERVE). */
int osm_file_path(const struct osm_file_target *t, const char *name, char *path, size_t len);
/* Free bytes for an unprivileged user on the target's file system, or -1. */
int64_t osm_file_free_bytes(const struct osm_file_target *t);
/* Writes `size` bytes of real data (not a hole: 'a's, as LEBench) at offset
 * 0 of fd, in chunks, retrying short writes; a failure (ENOSPC, EDQUOT,
 * EIO) is OSM_ERROR with "WHAT: strerror (ENAME) after N of SIZE bytes". */
int osm_file_fill(struct osm_ctx *ctx, int fd, int64_t size, const char *what);
/* The same data written as LEBench grows its test_file.txt: one write() at
 * offset 0 of each of its sizes up to `size` (4 KiB, 40 KiB, 4 000 KiB,
 * 40 000 KiB), then of `size` when it is none of them. The page cache keeps
 * the folios each write made: at the file's head the small ones of the
 * earlier, smaller writes (fill=lebench, docs/lebench.md). Errors as
 * osm_file_fill. */
int osm_file_fill_lebench(struct osm_ctx *ctx, int fd, int64_t size, const char *what);
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
/* The `fill` param of file.read, file.write and mem.page_fault: chunks, or
 * lebench (osm_file_fill_lebench). */
extern const char *const osm_file_fill_names[];

/* One reader's way past the page cache: the file open for reading as the
 * method needs (O_DIRECT for direct; POSIX_FADV_RANDOM, so no read-ahead,
 * for fadvise and drop_caches). */
struct osm_file_bypass {
	enum osm_file_method method; /* the method in use: never AUTO once open */
	int fd;                      /* the file, read-only; -1 when closed */
	size_t mem_align;            /* the read buffer's alignment (at least the page size) */
	size_t dio_align;            /* direct: offset and length alignment; else 0 */
	int dc_fd;                   /* drop_caches: /proc/sys/vm/drop_caches, else -1 */
	int64_t size;                /* the file's bytes */
};

/* What one reader reads: blocks first .. first+nblocks-1 of its file, in
 * passes; each pass reads every block once, in order (seq) or in a fresh
 * pseudo-random permutation (rand). */
struct osm_file_reader {
	struct osm_file_bypass bp;
	char *buf;                   /* block bytes, aligned for bp */
	size_t block;
	uint64_t first, nblocks;
	int rand;
	uint64_t rng;                /* rand: the permutation keys' generator */
	uint64_t key[4], half_bits;  /* rand: this pass's permutation */
	uint64_t pos;                /* reads done in this pass */
	uint64_t reads;              /* every read so far, and their time */
	double ns;
};

/* OSM_OK, or the skip for a target in memory (tmpfs, ramfs: no cold read). */
int osm_file_bypass_possible(struct osm_ctx *ctx, const struct osm_file_target *t);
/* Opens `path` (a regular file of `size` bytes whose data is on its device:
 * written and fsynced, or an existing file) to read blocks of `block` bytes
 * past the page cache: `want`, or for AUTO the first of direct, fadvise and
 * drop_caches (root only; not when allow_drop is 0) that works here, each
 * verified with a real read (mincore: the read left nothing cached, or the
 * eviction before it really evicts). Adds info cache_bypass. A target in
 * memory (tmpfs, ramfs) or no usable method is OSM_SKIP with the reason;
 * a block the method cannot read (misaligned for O_DIRECT) is OSM_ERROR.
 * On failure b is closed. */
int osm_file_bypass_open(struct osm_ctx *ctx, const struct osm_file_target *t, const char *path, int64_t size,
			 size_t block, enum osm_file_method want, int allow_drop, struct osm_file_bypass *b);
void osm_file_bypass_close(struct osm_file_bypass *b);

/* A reader over the open b (taken over: closed with the reader); `seed`
 * makes its permutations its own. Its buffer is made (and written) at its
 * first read, outside the clock, by the process that reads. */
void osm_file_reader_init(struct osm_file_reader *r, struct osm_file_bypass *b, size_t block, uint64_t first,
			  uint64_t nblocks, int rand, uint64_t seed);
/* Reads the next block: the untimed eviction (fadvise) or drop (drop_caches,
 * at the start of a pass) and its mincore check, then pread() of one block
 * between two reads of the probe's clock (and, when `count` is not NULL,
 * between osm_count_begin/end on it: OSM_SELF_COUNTED). Returns the pread's
 * time in ns, or -1 with the reason in msg (an error, a short read, a block
 * still cached, no memory for the buffer). */
double osm_file_reader_read(struct osm_file_reader *r, struct osm_ctx *count, char *msg, size_t len);
void osm_file_reader_close(struct osm_file_reader *r);

/* file_cold.c, for file.contention too: the block param, checked (a
 * multiple of 512); and `copies` x `size` bytes of free space checked, then
 * the file "WORK/name" made: `size` bytes of real data, fsynced. OSM_OK, or
 * OSM_ERROR naming what is needed and what is free. */
int osm_file_cold_block(struct osm_ctx *ctx, size_t *block);
int osm_file_cold_make(struct osm_ctx *ctx, const struct osm_file_target *t, const char *name, int64_t size,
		       int copies, char *path, size_t len);

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
