-- 0006_profiles: the profile of a result's timed region (`osmeter hotspots`,
-- the probe's `profile` record): at most one per result. meta holds every
-- field of the record but its header (type, bench, params, lebench_row) and
-- its stacks; stacks are the folded stacks, one "frame;...;leaf weight" line
-- each, zlib-compressed.
CREATE TABLE profiles (
    run_id INTEGER NOT NULL,
    seq    INTEGER NOT NULL,
    status TEXT NOT NULL,        -- ok / unsupported / empty
    mode   TEXT NOT NULL,        -- sample / function
    meta   TEXT NOT NULL,        -- JSON
    stacks BLOB NOT NULL,
    PRIMARY KEY (run_id, seq),
    FOREIGN KEY (run_id, seq) REFERENCES results (run_id, seq) ON DELETE CASCADE
);
