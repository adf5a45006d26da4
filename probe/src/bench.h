/* bench.h - the one contract between the harness and the benchmarks.
 *
 * A benchmark is a row in its family's table (bench/<family>.c). The harness
 * calls setup() once, then run(ctx, batch) many times, timing each call, then
 * teardown(). A benchmark never parses argv, never prints and never exits: it
 * returns OSM_OK, OSM_SKIP or OSM_ERROR and puts the reason in ctx->msg. */
#ifndef OSM_BENCH_H
#define OSM_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "status.h" /* enum osm_status: OSM_OK, OSM_SKIP, OSM_ERROR */

enum osm_unit {
	OSM_UNIT_NS,          /* nanoseconds per operation */
	OSM_UNIT_BYTES_PER_S, /* bytes per second (10^9 = 1 GB/s) */
	OSM_UNIT_COUNT,       /* a dimensionless count */
};

enum osm_ptype {
	OSM_P_INT,  /* integer in [min, max] */
	OSM_P_SIZE, /* bytes in [min, max]; accepts k/KiB/M/MiB/G/GiB suffixes */
	OSM_P_ENUM, /* one of choices[]; stored as its index in .i */
	OSM_P_STR,  /* free string (a path); def_str is the default, may be "" */
};

struct osm_param {
	const char *name;             /* snake_case */
	enum osm_ptype type;
	const char *help;             /* one line */
	int64_t def;                  /* default for INT/SIZE/ENUM (index) */
	int64_t min, max;             /* inclusive range for INT/SIZE */
	const char *const *choices;   /* ENUM: NULL-terminated */
	const char *def_str;          /* STR default */
	/* STR: the longest value in bytes, refused beyond it before anything
	 * runs, and why (a few words, shown with the limit by the refusal and
	 * by `list`); 0 means PATH_MAX - 1, the longest path there is. */
	size_t max_len;
	const char *max_len_why;
};

/* Requirement flags (shown by `list`, checked before run). */
#define OSM_NEEDS_ROOT     (1u << 0) /* skips without root */
#define OSM_NEEDS_PEER     (1u << 1) /* needs --param peer= */
#define OSM_NEEDS_FREE_CPU (1u << 2) /* its defaults want a second CPU (placement=cross_cpu: setup skips without) */
#define OSM_HIDDEN         (1u << 8) /* test-only: not listed without --all, in no suite */

/* Suite membership bits. */
#define OSM_SUITE_QUICK    (1u << 0)
#define OSM_SUITE_STANDARD (1u << 1)
#define OSM_SUITE_FULL     (1u << 2)
#define OSM_SUITE_LEBENCH  (1u << 3)
#define OSM_SUITES_ALL     (OSM_SUITE_QUICK | OSM_SUITE_STANDARD | OSM_SUITE_FULL)

#define OSM_MAX_PARAMS 12
/* A skip reason or error message: two whole paths (PATH_MAX bytes each)
 * and their words fit; a longer one is cut in its middle and the cut
 * marked (osm_fail), never at its end, where the cause is. */
#define OSM_MSG_LEN (2 * 4096 + 1024)
#define OSM_MAX_EXTRA 8
#define OSM_MAX_INFO 8
/* An info value: a whole path (PATH_MAX bytes) fits; longer is cut in its
 * middle, marked, as a message. */
#define OSM_INFO_LEN 4096

struct osm_pval {
	int64_t i;     /* INT, SIZE, ENUM index */
	const char *s; /* STR value (points into argv or def_str) */
};

struct osm_bench;
struct osm_counters; /* counters.h */
struct osm_profile;  /* profile.h */

/* A named fact in words a benchmark adds to its record ("info" in the
 * schema): the file system it measured, the cache-bypass method used. */
struct osm_info {
	const char *key;
	char value[OSM_INFO_LEN];
};

/* A named figure a benchmark adds to its result ("extra" in the schema). */
struct osm_extra {
	const char *key;
	double value;
};

struct osm_ctx {
	const struct osm_bench *bench;
	struct osm_pval params[OSM_MAX_PARAMS]; /* in bench->params order */
	int cpu;                                /* CPU the probe is pinned to */
	const char *workdir;                    /* private temp dir, removed at exit */
	void *priv;                             /* the benchmark's own state */
	char msg[OSM_MSG_LEN];                  /* skip reason or error message */
	/* Self-timed benchmarks (OSM_SELF_TIMED) put the measured time of the
	 * whole batch here, in ns, instead of being timed around run(). */
	double self_ns;
	const char *placement;                  /* "same_cpu"/"cross_cpu" or NULL */
	struct osm_extra extra[OSM_MAX_EXTRA];  /* figures for result.extra */
	int n_extra;
	struct osm_info info[OSM_MAX_INFO];     /* facts for result/skip/error .info */
	int n_info;
	/* OSM_UNIT_BYTES_PER_S: bytes moved per operation, set in setup(). */
	double bytes_per_op;
	/* Harness only (--counters): performance counters opened after setup()
	 * and enabled around each timed sampling batch; NULL when off.
	 * Benchmarks never touch it. */
	struct osm_counters *counters;
	/* Harness only (osmeter-probe hotspots): the profile, opened, enabled
	 * and finished exactly as the counters are; NULL when off. */
	struct osm_profile *profile;
	/* Self-timed benchmarks whose value is per sub-operation of what
	 * run() repeats (ctxsw: a context switch, while run() does round
	 * trips): sub-operations per repetition, set in setup(); 0 means 1.
	 * --counters divides by it too, so counters are per the same
	 * operation as the value. */
	unsigned ops_per_unit;
	/* Set by the harness: 1 while a sampled batch runs (counters may
	 * count), 0 in warm-up and calibration. Benchmarks may read it (to
	 * sum their own rate over sampled batches only), never write it. */
	int counting;
	/* run --lebench-exact: time one call per clock pair as LEBench does.
	 * The harness then uses fixed_batch instead of calibrating; a
	 * self-timed benchmark that groups calls per clock pair (mem.mmap)
	 * times them one by one. */
	int lebench_exact;
	uint64_t fixed_batch; /* > 0: every sample is this many operations */
	/* Set in setup() by a benchmark that times a group of operations per
	 * clock pair (mem.mmap, mem.munmap, mem.page_fault: `group`): > 1, every
	 * sample holds whole groups, so calibration starts at one group and only
	 * ever takes multiples of it (without it, an operation of a microsecond
	 * or more was timed alone: the group's quantity silently became
	 * group=1's). Ignored under fixed_batch. */
	uint64_t min_batch;
	/* run --inject-ns (a testing aid for compare): a busy wait of this
	 * many ns per operation added inside the timed region; harness-timed
	 * benchmarks only. */
	double inject_ns;
	/* OSM_PERIODIC benchmarks (rt): set in setup(). stop_after > 0: sampling
	 * stops after exactly this many samples (cyclictest -l), whatever the
	 * time budget (stop_reason "loops"). run() sets stop_now to end the
	 * sampling after the sample it just took (stop_reason stop_why, e.g.
	 * "break": cyclictest -b). */
	uint64_t stop_after;
	int stop_now;
	const char *stop_why;
};

#define OSM_SELF_TIMED     (1u << 16) /* run() fills ctx->self_ns */
#define OSM_ONE_BY_ONE     (1u << 17) /* never batch: always batch = 1 */
/* --counters: run() brackets exactly what it times with osm_count_begin()
 * and osm_count_end(), instead of the harness counting the whole run() call
 * (for self-timed benchmarks whose run() also does untimed preparation,
 * such as a CPU move or a start barrier before each fork). */
#define OSM_SELF_COUNTED   (1u << 18)
/* The samples are periodic events (a cycle, a window, a job: rt): the
 * harness never stops them by the median's RSE, whose checks would delay the
 * next period; it samples for min_time (stop_reason "duration", at least
 * min_samples), or up to max_samples, max_time or ctx->stop_after, and
 * computes the RSE once at the end (precision-unmet when above target). */
#define OSM_PERIODIC       (1u << 19)

struct osm_bench {
	const char *name;        /* operation; full name is family.name */
	const char *desc;        /* one line for `list` */
	enum osm_unit unit;
	unsigned flags;          /* OSM_NEEDS_*, OSM_HIDDEN, OSM_SELF_TIMED, ... */
	unsigned suites;         /* OSM_SUITE_* */
	const struct osm_param *params; /* terminated by a row with name == NULL; may be NULL */
	/* Parameter sets a suite runs, ';'-separated, each "k=v[,k=v]"; NULL = defaults only. */
	const char *sweep;
	/* The full suite's parameter sets where it sweeps more than the other
	 * suites (a size sweep), in sweep's format; NULL = sweep. */
	const char *sweep_full;
	int (*setup)(struct osm_ctx *ctx);           /* may be NULL */
	int (*run)(struct osm_ctx *ctx, uint64_t batch); /* do `batch` operations */
	void (*teardown)(struct osm_ctx *ctx);       /* may be NULL; always called after setup() succeeded */
	/* May be NULL. Refuses, before anything runs, values that are each
	 * allowed alone but cannot be built together (poll: ready > nfds), or
	 * a string parameter that is malformed (net: peer=): returns 0, or -1
	 * with the reason in err, and the whole command exits 2. params are in
	 * params[] order (osm_pval_of finds one by name). Called for every
	 * instance `run` makes (names, suites, sweeps, --param lists) and for
	 * every sweep by the catalogue's start-up self-check. What only the
	 * run can know (a file that may appear later, the machine's CPUs)
	 * stays a skip or an error of setup(). */
	int (*check)(const struct osm_bench *b, const struct osm_pval *params, char *err, size_t len);
};

struct osm_family {
	const char *name;
	const char *desc;
	const struct osm_bench *benches;
	size_t n;
};

/* Helpers for benchmarks (bench.c). */
/* The value of b's parameter name in params (params[] order); a name b
 * does not declare is a bug (abort). */
const struct osm_pval *osm_pval_of(const struct osm_bench *b, const struct osm_pval *params, const char *name);
int64_t osm_param_int(const struct osm_ctx *ctx, const char *name);
const char *osm_param_str(const struct osm_ctx *ctx, const char *name);
/* Sets ctx->msg and returns st. A message longer than OSM_MSG_LEN - 1 keeps
 * its start and its end: the middle is cut out and the cut marked with the
 * bytes left out (osm_cut_middle, parse.h). */
int osm_fail(struct osm_ctx *ctx, enum osm_status st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int osm_fail_errno(struct osm_ctx *ctx, const char *what); /* OSM_ERROR with strerror(errno) */
/* OSM_SKIP for a setting ("placement=cross_cpu", "migrate=1") that needs a
 * second CPU where the probe may use only its own (osm_other_cpu < 0): one
 * wording of that cause for every benchmark. `instead`: what the user may
 * give instead ("--param placement=same_cpu"), or NULL. */
int osm_skip_one_cpu(struct osm_ctx *ctx, const char *setting, const char *instead);
void osm_add_extra(struct osm_ctx *ctx, const char *key, double value);
/* A fact in words (key: a string literal); replaces an earlier value of the
 * same key; a value longer than OSM_INFO_LEN - 1 is cut in its middle, the cut
 * marked, as osm_fail does. Shown
 * in the result, skip or error record, so a failed run still says where it
 * ran. More than OSM_MAX_INFO keys is a bug (abort, as osm_add_extra). */
void osm_add_info(struct osm_ctx *ctx, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* OSM_SELF_COUNTED benchmarks: around each timed operation (no-ops unless
 * --counters is on and a sampled batch is running); ops operations ended. */
void osm_count_begin(struct osm_ctx *ctx);
void osm_count_end(struct osm_ctx *ctx, uint64_t ops);
/* --counters, from setup(): what the counted windows cover besides the
 * timed operation, in the `counters` record's note (a string literal): a
 * window that must end later than the clock (the clock stops in a child), a
 * part of the work the counters cannot see (partners started in setup). */
void osm_count_note(struct osm_ctx *ctx, const char *note);

#endif
