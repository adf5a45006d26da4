-- 0001_initial: runs and their results.
-- Migrations are numbered, forward-only and applied in order, each in one
-- transaction; schema_migrations records which ones a store has.

CREATE TABLE runs (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    label           TEXT,
    start_time      TEXT NOT NULL,               -- UTC ISO 8601, from meta
    end_time        TEXT,                        -- UTC ISO 8601, from end (or when osmeter stopped)
    status          TEXT NOT NULL CHECK (status IN ('running', 'complete', 'incomplete')),
    status_reason   TEXT,                        -- why incomplete: "interrupted by SIGINT", "probe died"
    source          TEXT NOT NULL CHECK (source IN ('run', 'import')),
    osmeter_version TEXT NOT NULL,
    probe_version   TEXT NOT NULL,
    suite           TEXT,                        -- quick / standard / full / lebench, NULL for named benchmarks
    argv            TEXT NOT NULL,               -- JSON array: the probe command line (import: the file name)
    params          TEXT NOT NULL,               -- JSON object: the options osmeter was given
    machine         TEXT NOT NULL,               -- JSON object {key: value}: meta.machine
    meta            TEXT NOT NULL                -- JSON object: the meta record without its machine
);

CREATE TABLE results (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id        INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq           INTEGER NOT NULL,              -- order within the run, from 0
    bench         TEXT NOT NULL,                 -- family.operation
    params        TEXT NOT NULL,                 -- canonical JSON: sorted keys, no spaces
    unit          TEXT,                          -- ns / bytes_per_s / count; NULL for skip and error
    status        TEXT NOT NULL CHECK (status IN ('ok', 'skip', 'error')),
    reason        TEXT,                          -- skip reason or error message
    n             INTEGER,
    min           REAL,
    max           REAL,
    mean          REAL,
    median        REAL,
    std           REAL,                          -- ddof = 1
    cv            REAL,                          -- std / mean, a fraction
    trimmed_mean  REAL,                          -- 10 % from each end
    p1            REAL,
    p5            REAL,
    p95           REAL,
    p99           REAL,
    p999          REAL,
    ci_low        REAL,                          -- 95 % bootstrap CI of the median
    ci_high       REAL,
    outliers      INTEGER,                       -- outside Tukey's 1.5 IQR fences
    lebench_kbest REAL,
    kbest_stable  INTEGER,                       -- 0/1: a stable run of 5 was found
    batch         INTEGER,                       -- operations each sample averages over
    samples       BLOB,                          -- zlib(little-endian float64[]), per operation, in unit
    extra         TEXT,                          -- JSON object: result.extra
    counters      TEXT,                          -- JSON object: counters record, when there is one
    record        TEXT NOT NULL,                 -- JSON: the result / skip / error record as received
    UNIQUE (run_id, seq)
);

CREATE INDEX results_bench ON results (bench, params);
