"""Long paths in the file family (issue 10: never measure the wrong thing
silently). A message about a long path keeps its cause (osm_fail cuts a
message too long for its buffer in the middle, never at the end)."""
from __future__ import annotations

import os
from pathlib import Path

from probe_helpers import TINY, run_probe


def long_dir(base: Path, length: int, make: bool = True) -> Path:
    """A directory under base whose absolute path has exactly `length`
    bytes, in components of at most 200 bytes; made when `make`."""
    base = base.resolve()
    left = length - len(str(base))
    assert left >= 2, (base, length)
    parts = []
    while left > 0:
        n = min(200, left - 1)
        if left - 1 - n == 1:  # never leave a remainder that cannot hold "/x"
            n -= 1
        parts.append(chr(ord("a") + len(parts) % 26) * n)
        left -= n + 1
    d = base.joinpath(*parts)
    assert len(str(d)) == length, (len(str(d)), length)
    if make:
        d.mkdir(parents=True)
    return d


def run(probe, *args, **kw):
    return run_probe(probe, "run", *args, *TINY, **kw)


def test_a_message_about_a_long_path_keeps_its_cause(probe, tmp_path):
    # 490 + "/nonexistent": the message used to end "...: No" (cut at 511).
    d = long_dir(tmp_path, 490)
    r = run(probe, "file.seq_read_cold", "--param", f"file={d}/nonexistent")
    assert r.rc == 1, r.stderr
    (err,) = r.of_type("error")
    assert err["message"] == f"file={d}/nonexistent: No such file or directory", err["message"]
