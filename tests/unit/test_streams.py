"""What osmeter writes stays bounded, valid and harmless whatever was stored
(issue 27, defect 6): long labels and flags cut for people and kept whole in
the exports, CSV valid with any control character, the stream guard
(osmeter.streams; the real descriptors are tests/e2e/test_streams.py's)."""

from __future__ import annotations

import csv
import errno
import io
import json
from pathlib import Path

import numpy as np
import pytest

from osmeter import streams, textsafe
from osmeter.errors import OutputError
from osmeter.export import EXPORTERS
from osmeter.model import BenchResult, NewRun
from osmeter.stats import summary
from osmeter.store import open_store

from ..synthetic import MACHINE, META, add_run, noisy

LONG = 3000
CUT = f"…(+{LONG - 50} chars)"  # what is left of a 3000-character value: 50 characters and the marker


def test_clip() -> None:
    assert textsafe.clip("short") == "short"
    assert textsafe.clip("x" * textsafe.CLIP) == "x" * textsafe.CLIP
    assert textsafe.clip("L" * LONG) == "L" * 50 + CUT
    for n in (textsafe.CLIP + 1, 100, 10_000, 10**6):
        shown = textsafe.clip("y" * n)
        assert len(shown) == textsafe.CLIP and shown.endswith(f"…(+{n - shown.index('…')} chars)"), n


def test_visible() -> None:
    assert textsafe.visible("plain é\ttab\nline") == "plain é\ttab\nline"
    assert textsafe.visible("a\x1b[31mb\rc\x9b\u202e\x00\x7f") == "a\\x1b[31mb\\rc\\x9b\\u202e\\x00\\x7f"


def long_run(store_path: Path, results: int = 40) -> int:
    """A run with a 3000-character label, each result flagged with a 3000-character flag."""
    store = open_store(str(store_path), create=True)
    try:
        with store.transaction():
            run_id = store.create_run(NewRun(
                label="L" * LONG, start_time="2026-11-22T08:00:00Z", source="import", osmeter_version="0.1.0",
                probe_version="0.1.0", suite="standard", argv=["synthetic"], params={}, machine=dict(MACHINE),
                meta=dict(META)))
            x = np.linspace(100.0, 101.0, 50)
            for i in range(results):
                store.add_result(run_id, BenchResult(seq=i, bench="syscall.null", params={"i": i}, status="ok",
                                                     unit="ns", summary=summary(x, higher_is_better=False),
                                                     batch=1, flags=("F" * LONG,)), x)
            store.finish_run(run_id, "complete", "2026-11-22T08:01:00Z", None)
        return run_id
    finally:
        store.close()


def test_long_label_and_flag_are_cut_where_people_read_them(cli, store_path: Path) -> None:
    run_id = long_run(store_path)
    shown = cli("show", str(run_id))
    assert shown.code == 0
    assert len(shown.out) < 20_000  # was 211 KB: every row padded to the flag, the legend's lines to it too
    assert max(len(line) for line in shown.out.splitlines()) < 400
    assert f"run {run_id} '{'L' * 50}{CUT}'" in shown.out
    assert f"{'F' * 50}{CUT}" in shown.out and "F" * 51 not in shown.out
    runs = cli("runs").out
    assert f"{'L' * 50}{CUT}" in runs and "L" * 51 not in runs
    # the exports keep the whole value
    doc = json.loads(cli("show", str(run_id), "--json").out)
    assert doc["run"]["label"] == "L" * LONG and doc["results"][0]["flags"] == ["F" * LONG]
    assert json.loads(cli("runs", "--json").out)["runs"][0]["label"] == "L" * LONG
    rows = list(csv.DictReader(io.StringIO(cli("export", str(run_id), "--format", "csv").out, newline="")))
    assert rows[0]["run_label"] == "L" * LONG and rows[0]["flags"] == "F" * LONG


def test_csv_stays_valid_with_any_control_character(store_path: Path) -> None:
    label = "a lone cr\r \x1b[31m\x00\x85\u2028 nothing else a writer quotes for"  # Python's csv left it bare
    reason = 'cr\r, lf\n and\r\n "quoted"'
    run_id = add_run(store_path, [("syscall.null", {"k": "v"}, "ns", noisy(np.random.default_rng(1), 100.0, 50))],
                     label=label, skips=[("cpu.call", {}, reason)])
    store = open_store(str(store_path), create=False)
    try:
        run = store.run(str(run_id))
        text = EXPORTERS["csv"](run, store.results(run_id))
    finally:
        store.close()
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    assert [(row["run_label"], row["reason"]) for row in rows] == [(label, ""), (label, reason)]


class Failing(io.StringIO):
    def __init__(self, error: OSError, tty: bool = False) -> None:
        super().__init__()
        self.error, self.tty = error, tty

    def write(self, text: str) -> int:
        if self.error.errno:
            raise self.error
        return super().write(text)

    def isatty(self) -> bool:
        return self.tty


def test_guard_turns_a_failed_write_into_one_output_error() -> None:
    out = streams.Guarded(streams.STDOUT, Failing(OSError(errno.ENOSPC, "No space left on device")), loud=True)
    with pytest.raises(OutputError, match="^cannot write to standard output: No space left on device$"):
        out.write("x")
    out.flush()  # what it held is dropped: no second error at exit
    with pytest.raises(OutputError):
        out.write("more")  # but nothing written later is lost in silence


def test_guard_keeps_a_broken_pipe_and_drops_stderr_failures() -> None:
    out = streams.Guarded(streams.STDOUT, Failing(BrokenPipeError(errno.EPIPE, "Broken pipe")), loud=True)
    with pytest.raises(BrokenPipeError):
        out.write("x")
    err = streams.Guarded("standard error", Failing(OSError(errno.EIO, "Input/output error")), loud=False)
    assert err.write("progress\n") == len("progress\n")
    err.flush()


def test_guard_escapes_controls_on_a_terminal_only() -> None:
    tty, pipe = Failing(OSError(0, ""), tty=True), Failing(OSError(0, ""))
    streams.Guarded(streams.STDOUT, tty, loud=True).write("a\x1b[2Jb\u202e\n")
    streams.Guarded(streams.STDOUT, pipe, loud=True).write("a\x1b[2Jb\u202e\n")
    assert (tty.getvalue(), pipe.getvalue()) == ("a\\x1b[2Jb\\u202e\n", "a\x1b[2Jb\u202e\n")
