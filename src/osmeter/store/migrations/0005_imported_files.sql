-- 0005_imported_files: the SHA-256 of every file an imported run was made
-- from, one row per file in the order given, so a file is recognised when
-- it comes again, alone or among other files (osmeter import refuses it
-- without --again). runs.content_sha256 (0004) keeps the digest of the
-- whole import. Runs imported before this migration have no rows here;
-- for those made from one file, content_sha256 is that file's digest, and
-- osmeter looks there too.
CREATE TABLE imported_files (
    run_id   INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    position INTEGER NOT NULL,   -- 0 for the first file given
    sha256   TEXT NOT NULL,      -- hex digest of the file's bytes
    PRIMARY KEY (run_id, position)
);
CREATE INDEX imported_files_sha256 ON imported_files (sha256);
