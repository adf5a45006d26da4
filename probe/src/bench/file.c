/* file.c - file.*: files and the page cache. This file holds the family's
 * table; read/write (LEBench's rows) are in file_rw.c, the metadata rates in
 * file_meta.c, the cold reads in file_cold.c (cache bypass in
 * file_bypass.c), the contention in file_contention.c, the page-cache sweep
 * in file_cache.c, the target directory in file_util.c.
 * Method: docs/methods/file.md */
#include "../bench.h"
#include "../compiler.h"
#include "file.h"

#define KIB ((int64_t)1 << 10)
#define MIB ((int64_t)1 << 20)
#define GIB ((int64_t)1 << 30)
#define TIB ((int64_t)1 << 40)

const char *const osm_file_method_names[] = {"auto", "direct", "fadvise", "drop_caches", NULL};
const char *const osm_file_fill_names[] = {"chunks", "lebench", NULL};
static const char *const buffer_names[] = {"reused", "malloc", NULL};
static const char *const sync_names[] = {"none", "fsync", "fdatasync", NULL};
static const char *const pattern_names[] = {"seq", "rand", NULL};
static const char *const open_names[] = {"once", "per_call", NULL};

#define DIR_PARAM                                                                                  \
	{.name = "dir", .type = OSM_P_STR, .def_str = "", .max_len = OSM_FILE_DIR_MAX,             \
	 .max_len_why = OSM_FILE_DIR_WHY,                                                          \
	 .help = "directory for the work files (default: the probe's work directory, or /var/tmp "  \
		 "when that is on tmpfs); a remote mount (sshfs, NFS, SMB) measures remote files"}
#define RW_SIZE_PARAM(what)                                                                        \
	{.name = "size", .type = OSM_P_SIZE, .def = 4 * KIB, .min = 1, .max = GIB,                 \
	 .help = "bytes per " what " call (LEBench: 4 KiB, 40 KiB, 4000 KiB, 40000 KiB)"}
#define BUFFER_PARAM                                                                               \
	{.name = "buffer", .type = OSM_P_ENUM, .choices = buffer_names, .def = 0,                  \
	 .help = "reused: one buffer, touched in setup; malloc: malloc'd (and for write filled) "   \
		 "before each call and freed after it, outside the clock, as LEBench"}
#define OPEN_PARAM                                                                                 \
	{.name = "open", .type = OSM_P_ENUM, .choices = open_names, .def = 0,                      \
	 .help = "once: the file opened once, lseek()ed to 0 before each call; per_call: opened "   \
		 "before each call and closed after it, outside the clock, as LEBench (a just-opened " \
		 "file's call costs more)"}
#define FILL_PARAM                                                                                 \
	{.name = "fill", .type = OSM_P_ENUM, .choices = osm_file_fill_names, .def = 0,                      \
	 .help = "how the test file is written in setup: chunks (1 MiB writes: the page cache's "   \
		 "large folios); lebench: grown as LEBench's test file, one write at offset 0 of 4 KiB, " \
		 "40 KiB, 4000 KiB, 40000 KiB up to size, so its head stays in small folios"}
#define FILE_SIZE_PARAM(def_)                                                                      \
	{.name = "file_size", .type = OSM_P_SIZE, .def = (def_), .min = MIB, .max = TIB,           \
	 .help = "size of the file read (written once in setup, real data)"}
#define BLOCK_PARAM(def_)                                                                          \
	{.name = "block", .type = OSM_P_SIZE, .def = (def_), .min = 512, .max = 64 * MIB,          \
	 .help = "bytes per read() (a multiple of 512; O_DIRECT needs the device's alignment)"}
#define METHOD_PARAM                                                                               \
	{.name = "method", .type = OSM_P_ENUM, .choices = osm_file_method_names, .def = 0,         \
	 .help = "how the page cache is bypassed: auto (the first that works: direct, fadvise, "   \
		 "drop_caches), direct (O_DIRECT), fadvise (DONTNEED before each read), "           \
		 "drop_caches (before each pass, root)"}
#define FILES_PARAM                                                                                \
	{.name = "files", .type = OSM_P_INT, .def = 1000, .min = 1, .max = 1000000,                \
	 .help = "files in the directory (lmbench lat_fs: 1000)"}

static const struct osm_param read_params[] = {
	RW_SIZE_PARAM("read()"), BUFFER_PARAM, OPEN_PARAM, FILL_PARAM, DIR_PARAM, {0}};

static const struct osm_param write_params[] = {
	RW_SIZE_PARAM("write()"),
	BUFFER_PARAM,
	OPEN_PARAM,
	FILL_PARAM,
	{.name = "sync", .type = OSM_P_ENUM, .choices = sync_names, .def = 0,
	 .help = "none: write() alone (LEBench); fsync/fdatasync: and that call, inside the clock"},
	DIR_PARAM,
	{0},
};

#define FILE_PARAM                                                                                 \
	{.name = "file", .type = OSM_P_STR, .def_str = "", .max_len = OSM_FILE_DIR_MAX,            \
	 .max_len_why = OSM_FILE_DIR_WHY,                                                          \
	 .help = "read this existing file instead of making one (never written or removed; "       \
		 "file_size is then ignored); its directory is the target unless dir= is given"}

static const struct osm_param cold_seq_params[] = {
	FILE_SIZE_PARAM(64 * MIB), BLOCK_PARAM(MIB), METHOD_PARAM, DIR_PARAM, FILE_PARAM, {0}};
static const struct osm_param cold_rand_params[] = {
	FILE_SIZE_PARAM(64 * MIB), BLOCK_PARAM(4 * KIB), METHOD_PARAM, DIR_PARAM, FILE_PARAM, {0}};

static const struct osm_param cache_params[] = {
	{.name = "size", .type = OSM_P_SIZE, .def = 64 * MIB, .min = MIB, .max = TIB,
	 .help = "file size (a multiple of block): the file is read once, then re-read block by block, "
		 "start to end, again and again; one file per run, grown for larger sizes"},
	BLOCK_PARAM(MIB),
	DIR_PARAM,
	{0},
};

static const struct osm_param contention_params[] = {
	{.name = "procs", .type = OSM_P_INT, .def = 1, .min = 1, .max = 64,
	 .help = "processes reading at once, each its own file (shared=0) or the same file (shared=1)"},
	{.name = "shared", .type = OSM_P_INT, .def = 0, .min = 0, .max = 1,
	 .help = "1: every process reads the one file; 0: each its own"},
	{.name = "pattern", .type = OSM_P_ENUM, .choices = pattern_names, .def = 0,
	 .help = "seq: each process reads its file start to end; rand: random blocks"},
	FILE_SIZE_PARAM(64 * MIB),
	BLOCK_PARAM(64 * KIB),
	METHOD_PARAM,
	DIR_PARAM,
	{0},
};

static const struct osm_param create_params[] = {
	FILES_PARAM,
	{.name = "file_bytes", .type = OSM_P_SIZE, .def = 0, .min = 0, .max = MIB,
	 .help = "bytes written into each new file (lmbench lat_fs: 0, 1K, 4K, 10K)"},
	DIR_PARAM,
	{0},
};

static const struct osm_param meta_params[] = {FILES_PARAM, DIR_PARAM, {0}};

#define LEBENCH_SIZES "size=4K;size=40K;size=4000K;size=40000K"
#define LATFS_SWEEP "file_bytes=0;file_bytes=1K;file_bytes=4K;file_bytes=10K"

static const struct osm_bench file_benches[] = {
	{
		.name = "read",
		.desc = "read() of a file in the page cache, whole size from offset 0 (LEBench read)",
		.unit = OSM_UNIT_NS,
		.flags = OSM_SELF_TIMED | OSM_SELF_COUNTED,
		.suites = OSM_SUITES_ALL,
		.params = read_params,
		.sweep = LEBENCH_SIZES,
		.setup = osm_file_read_setup,
		.run = osm_file_read_run,
		.teardown = osm_file_rw_teardown,
	},
	{
		.name = "write",
		.desc = "write() over a file's cached pages, whole size at offset 0 (LEBench write); sync= adds fsync",
		.unit = OSM_UNIT_NS,
		.flags = OSM_SELF_TIMED | OSM_SELF_COUNTED,
		.suites = OSM_SUITES_ALL,
		.params = write_params,
		.sweep = LEBENCH_SIZES,
		.setup = osm_file_write_setup,
		.run = osm_file_write_run,
		.teardown = osm_file_rw_teardown,
	},
	{
		.name = "seq_read_cold",
		.desc = "sequential read() of one block, page cache bypassed: time per block (and MB/s)",
		.unit = OSM_UNIT_NS,
		.flags = OSM_SELF_TIMED | OSM_ONE_BY_ONE | OSM_SELF_COUNTED,
		.suites = OSM_SUITE_STANDARD | OSM_SUITE_FULL,
		.params = cold_seq_params,
		.sweep = "block=4K;block=64K;block=1M",
		.setup = osm_file_cold_setup,
		.run = osm_file_cold_run,
		.teardown = osm_file_cold_teardown,
	},
	{
		.name = "rand_read_cold",
		.desc = "read() of one random block, page cache bypassed: time per block (and MB/s)",
		.unit = OSM_UNIT_NS,
		.flags = OSM_SELF_TIMED | OSM_ONE_BY_ONE | OSM_SELF_COUNTED,
		.suites = OSM_SUITE_STANDARD | OSM_SUITE_FULL,
		.params = cold_rand_params,
		.sweep = "block=4K;block=64K;block=1M",
		.setup = osm_file_cold_setup,
		.run = osm_file_cold_run,
		.teardown = osm_file_cold_teardown,
	},
	{
		.name = "cache_sweep",
		.desc = "re-read of a file block by block at one file size, ns per block: a point of the "
			"page-cache curve (osmeter page-cache finds the knee)",
		.unit = OSM_UNIT_NS,
		.flags = 0,
		.suites = OSM_SUITE_FULL,
		.params = cache_params,
		.sweep = "size=16M;size=64M;size=256M",
		.setup = osm_file_cache_setup,
		.run = osm_file_cache_run,
		.teardown = osm_file_cache_teardown,
	},
	{
		.name = "contention",
		.desc = "procs processes reading at once, cache bypassed: time per block against procs",
		.unit = OSM_UNIT_NS,
		.flags = OSM_SELF_TIMED | OSM_SELF_COUNTED,
		.suites = OSM_SUITE_FULL,
		.params = contention_params,
		.sweep = "procs=1;procs=2;procs=4;procs=8",
		.setup = osm_file_contention_setup,
		.run = osm_file_contention_run,
		.teardown = osm_file_contention_teardown,
	},
	{
		.name = "create",
		.desc = "creat()+write+close of a new file in a directory of `files` files (lmbench lat_fs)",
		.unit = OSM_UNIT_NS,
		.flags = OSM_SELF_TIMED | OSM_SELF_COUNTED,
		.suites = OSM_SUITE_STANDARD | OSM_SUITE_FULL,
		.params = create_params,
		.sweep = LATFS_SWEEP,
		.setup = osm_file_meta_setup,
		.run = osm_file_create_run,
		.teardown = osm_file_meta_teardown,
	},
	{
		.name = "unlink",
		.desc = "unlink() of a file in a directory of `files` files (lmbench lat_fs)",
		.unit = OSM_UNIT_NS,
		.flags = OSM_SELF_TIMED | OSM_SELF_COUNTED,
		.suites = OSM_SUITE_STANDARD | OSM_SUITE_FULL,
		.params = create_params,
		.sweep = LATFS_SWEEP,
		.setup = osm_file_meta_setup,
		.run = osm_file_unlink_run,
		.teardown = osm_file_meta_teardown,
	},
	{
		.name = "stat",
		.desc = "stat() of a random file among `files` in a directory",
		.unit = OSM_UNIT_NS,
		.flags = OSM_SELF_TIMED,
		.suites = OSM_SUITES_ALL,
		.params = meta_params,
		.setup = osm_file_meta_setup,
		.run = osm_file_stat_run,
		.teardown = osm_file_meta_teardown,
	},
	{
		.name = "open_close",
		.desc = "open(O_RDONLY)+close() of a random file among `files` in a directory",
		.unit = OSM_UNIT_NS,
		.flags = OSM_SELF_TIMED,
		.suites = OSM_SUITES_ALL,
		.params = meta_params,
		.setup = osm_file_meta_setup,
		.run = osm_file_open_close_run,
		.teardown = osm_file_meta_teardown,
	},
};

const struct osm_family osm_family_file = {
	.name = "file",
	.desc = "files and the page cache: read/write (LEBench), cold reads, cache size, contention, metadata",
	.benches = file_benches,
	.n = ARRAY_SIZE(file_benches),
};
