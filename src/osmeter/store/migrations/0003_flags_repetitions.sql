-- 0003_flags_repetitions: what a figure cannot vouch for, and the
-- repetitions it comes from (osmeter run --repeat; issue 9).

-- JSON array of strings: precision-unmet, calibration-timeout, not-pinned,
-- tsc-unstable (the probe's), unstable, repetition-failed (osmeter's).
-- NULL for results stored before: read as the result record's flags.
ALTER TABLE results ADD COLUMN flags TEXT;

-- JSON array, one object per repetition (a fresh probe process):
-- {status, n, median, ci_low, ci_high, batch, stop_reason, flags,
--  elapsed_s, reason}. NULL for results stored before: one repetition.
ALTER TABLE results ADD COLUMN repetitions TEXT;
