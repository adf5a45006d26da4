-- 0004_content_hash: what an imported run was made from, so importing the
-- same file again is noticed (osmeter import refuses it without --again).
-- The SHA-256 (hex) of the file's bytes, or for several files (the
-- repetitions of one run) the SHA-256 of their digests joined by newlines.
-- NULL for runs made by `osmeter run` and for imports stored before.
ALTER TABLE runs ADD COLUMN content_sha256 TEXT;
CREATE INDEX runs_content_sha256 ON runs (content_sha256);
