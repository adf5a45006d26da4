"""osmeter import of hostile files: every one is an error naming the line and
the field, never a traceback, and nothing is stored (issue 10, item 3)."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from osmeter import ingest
from osmeter.errors import EXIT_IMPORT

from ..conftest import DATA, db_rows
from .test_import import repetition_files

GOOD = DATA / "run_x86_64.jsonl"
LINES = GOOD.read_text().splitlines()
SAMPLES_LINE = next(i for i, line in enumerate(LINES) if json.loads(line)["type"] == "samples")  # line i + 1


def with_samples_line(tmp_path: Path, edit) -> Path:
    """The good file with its first `samples` record changed by edit(dict) -> str."""
    lines = list(LINES)
    lines[SAMPLES_LINE] = edit(json.loads(lines[SAMPLES_LINE]))
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def replace_value(key: str, text: str):
    def edit(obj: dict) -> str:
        obj[key] = "@@"
        return json.dumps(obj, separators=(",", ":")).replace('"@@"', text)

    return edit


def replace_sample(text: str):
    def edit(obj: dict) -> str:
        obj["values"][2] = "@@"
        return json.dumps(obj, separators=(",", ":")).replace('"@@"', text)

    return edit


LINE = SAMPLES_LINE + 1


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (replace_sample("1e309"), f"line {LINE}: 'values[2]': a number too large for a double"),
        (replace_sample("-1e309"), f"line {LINE}: 'values[2]': a number too large for a double"),
        (replace_sample("1e308"), f"line {LINE}: 'values[2]': the number 1e+308 is out of range"),
        (replace_value("batch", str(2**63)), f"line {LINE}: 'batch': the integer {2**63} is out of range"),
        (replace_value("batch", "9" * 5000), f"line {LINE}: 'batch': the integer 9999"),
        (replace_value("params", "[" * 100000 + "]" * 100000), f"line {LINE}: nested more than 32 levels deep"),
        (replace_value("params", '{"a":' * 40 + "1" + "}" * 40), f"line {LINE}: 'params.a.a.a"),
        (replace_value("unit", '"\\ud800"'), f"line {LINE}: 'unit': a string holds a lone UTF-16 surrogate"),
        (replace_value("params", '{"\\udc80": 1}'), f"line {LINE}: 'params key': a string holds a lone UTF-16"),
    ],
    ids=["1e309", "-1e309", "1e308", "2^63", "5000-digits", "deep-100000", "deep-40", "surrogate", "surrogate-key"],
)
def test_out_of_range_values_are_refused(cli, tmp_path: Path, store_path: Path, edit, message: str) -> None:
    path = with_samples_line(tmp_path, edit)
    r = cli("import", str(path))
    assert r.code == EXIT_IMPORT, r.err
    assert f"osmeter: error: {path}, {message}" in r.err and "Traceback" not in r.err
    assert db_rows(store_path, "SELECT id FROM runs") == []


def test_line_separators_inside_strings_do_not_split_lines(cli, tmp_path: Path, store_path: Path) -> None:
    reason = "needs\u2028root\u2029really\u0085now\x0c\x1c\x1d\x1e"
    lines = [line for line in LINES]
    skip = next(i for i, line in enumerate(lines) if json.loads(line)["type"] == "skip")
    obj = json.loads(lines[skip])
    obj["reason"] = reason
    lines[skip] = json.dumps(obj, ensure_ascii=False)
    path = tmp_path / "sep.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    r = cli("import", str(path))
    assert r.code == 0, r.err
    assert db_rows(store_path, "SELECT reason FROM results WHERE status = 'skip'") == [(reason,)]


def test_unknown_record_types_are_skipped_with_a_warning(cli, tmp_path: Path, store_path: Path) -> None:
    lines = list(LINES)
    lines.insert(SAMPLES_LINE, '{"type":"telemetry","temperature_c":71.5}')
    path = tmp_path / "newer.jsonl"
    path.write_text("\n".join(lines) + "\n")
    r = cli("import", str(path))
    assert r.code == 0, r.err
    assert 'osmeter: warning: skipped a record of unknown type "telemetry"' in r.err
    assert db_rows(store_path, "SELECT status FROM runs") == [("complete",)]
    assert len(db_rows(store_path, "SELECT seq FROM results")) == 5


def test_the_same_file_twice_is_refused_unless_again(cli, tmp_path: Path, store_path: Path) -> None:
    assert cli("import", str(GOOD)).code == 0
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(GOOD.read_bytes())  # another name, the same bytes
    r = cli("import", str(copy))
    assert r.code == EXIT_IMPORT
    assert f"{copy} was imported before, in run 1" in r.err and "--again" in r.err
    assert db_rows(store_path, "SELECT id FROM runs") == [(1,)]
    r = cli("import", "--again", str(copy))
    assert r.code == 0 and "as run 2" in r.out
    hashes = db_rows(store_path, "SELECT content_sha256 FROM runs ORDER BY id")
    assert hashes[0] == hashes[1]


def test_the_same_file_twice_in_one_import_is_refused_even_with_again(cli, store_path: Path) -> None:
    """Two copies of one file would be two repetitions that agree exactly:
    the samples counted twice and the spread between repetitions zero."""
    for again in ([], ["--again"]):
        r = cli("import", *again, str(GOOD), str(GOOD))
        assert r.code == EXIT_IMPORT and f"{GOOD} and {GOOD} have the same bytes (SHA-256)" in r.err
    assert db_rows(store_path, "SELECT id FROM runs") == []


def test_a_file_imported_before_is_refused_among_others(cli, tmp_path: Path, store_path: Path) -> None:
    """rep0 alone, then rep0 with rep1 as the repetitions of one run: rep0's
    samples would be stored twice, so it is refused unless --again; and rep1
    alone after that is refused as a part of run 2."""
    rep0, rep1 = repetition_files(tmp_path, 2)
    assert cli("import", rep0).code == 0
    r = cli("import", rep0, rep1)
    assert r.code == EXIT_IMPORT, r.err
    assert f"{rep0} was imported before, in run 1 (same SHA-256): its samples would be stored twice" in r.err
    assert db_rows(store_path, "SELECT id FROM runs") == [(1,)]
    r = cli("import", "--again", rep0, rep1)
    assert r.code == 0 and "as run 2 (complete, 2 repetitions)" in r.out, r.err
    r = cli("import", rep1)
    assert r.code == EXIT_IMPORT and f"{rep1} was imported before, in run 2" in r.err
    assert db_rows(store_path, "SELECT run_id, position FROM imported_files ORDER BY 1, 2") == [(1, 0), (2, 0), (2, 1)]


def test_a_record_after_end_is_named_as_such(cli, tmp_path: Path, store_path: Path) -> None:
    """Two outputs joined with cat: not 'cut short', but a record after 'end'."""
    joined = tmp_path / "joined.jsonl"
    joined.write_text("\n".join(LINES + LINES) + "\n")
    r = cli("import", str(joined))
    assert r.code == EXIT_IMPORT
    assert (f"{joined}, line {len(LINES) + 1}: a 'meta' record after the 'end' record of line {len(LINES)}"
            in r.err) and "cut short" not in r.err
    trailing = tmp_path / "trailing.jsonl"
    trailing.write_text("\n".join(LINES + ['{"type":"telemetry","t":1}']) + "\n")  # a newer probe's record
    r = cli("import", str(trailing))
    assert r.code == 0 and "unknown type" in r.err, r.err


def test_oversized_file_is_refused(cli, tmp_path: Path, store_path: Path) -> None:
    big = tmp_path / "big.jsonl"
    big.write_bytes(GOOD.read_bytes() + b"\n" * (1 << 20))
    r = cli("import", "--max-size", "1", str(big))
    assert r.code == EXIT_IMPORT and "more than 1 MiB, the limit" in r.err and "--max-size" in r.err
    assert db_rows(store_path, "SELECT id FROM runs") == []


def test_over_long_line_is_refused(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ingest, "MAX_LINE_BYTES", 200)
    r = cli("import", str(GOOD))
    assert r.code == EXIT_IMPORT and "line 1: the line is longer than" in r.err


@pytest.mark.parametrize("device", ["/dev/urandom", "/dev/zero"])
def test_endless_device_is_refused(cli, device: str, store_path: Path) -> None:
    if not os.path.exists(device):
        pytest.skip(f"no {device}")
    started = time.monotonic()
    r = cli("import", "--max-size", "2", device)
    assert r.code == EXIT_IMPORT and "is not a regular file and sent more than 2 MiB" in r.err
    assert time.monotonic() - started < 10
    assert db_rows(store_path, "SELECT id FROM runs") == []


def test_fifo_without_a_writer_is_given_up_on(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ingest, "READ_IDLE_S", 0.3)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    started = time.monotonic()
    r = cli("import", str(fifo))
    assert r.code == EXIT_IMPORT and "sent nothing for 0.3 s" in r.err
    assert time.monotonic() - started < 5


def test_fifo_that_never_ends_is_given_up_on(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ingest, "READ_IDLE_S", 0.5)
    monkeypatch.setattr(ingest, "READ_TOTAL_S", 1.0)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    stop = threading.Event()

    def trickle() -> None:  # a writer that keeps the FIFO open and sends a line now and then
        with open(fifo, "w") as f:
            while not stop.is_set():
                f.write("{}\n")
                f.flush()
                time.sleep(0.05)

    writer = threading.Thread(target=trickle, daemon=True)
    writer.start()
    try:
        r = cli("import", str(fifo))
    finally:
        stop.set()
    writer.join(timeout=5)
    assert r.code == EXIT_IMPORT and "was still sending after 1 s" in r.err


def test_fifo_with_a_good_file_is_imported(cli, tmp_path: Path, store_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)

    def write() -> None:
        with open(fifo, "wb") as f:
            f.write(GOOD.read_bytes())

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    r = cli("import", str(fifo))
    writer.join(timeout=5)
    assert r.code == 0, r.err


def test_directory_is_refused(cli, tmp_path: Path) -> None:
    r = cli("import", str(tmp_path))
    assert r.code == EXIT_IMPORT and "it is a directory" in r.err


def test_a_file_imported_before_migration_0005_is_still_recognised(cli, store_path: Path) -> None:
    """A run imported before imported_files existed (0004) has its file's
    digest in runs.content_sha256 only, and no imported_files row after the
    upgrade: the file is still recognised."""
    assert cli("import", str(GOOD)).code == 0
    conn = sqlite3.connect(store_path)
    conn.execute("DELETE FROM imported_files")  # what 0005 leaves for an older run
    conn.commit()
    conn.close()
    r = cli("import", str(GOOD))
    assert r.code == EXIT_IMPORT and f"{GOOD} was imported before, in run 1" in r.err
    assert db_rows(store_path, "SELECT id FROM runs") == [(1,)]
