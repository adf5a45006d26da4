"""osmeter import: good files are stored as a run would be; bad ones store nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from osmeter.errors import EXIT_BENCH_ERRORS, EXIT_IMPORT
from osmeter.store import open_store

from ..conftest import DATA, FakeProbe, StoreAt

GOOD = DATA / "run_x86_64.jsonl"


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def repetition_files(tmp_path: Path, count: int) -> list[str]:
    """`count` files as `count` probe processes would write them: the same
    records, each started a minute after the last (distinct bytes)."""
    text = GOOD.read_text()
    stamp = '"start_time":"2026-11-22T07:40:00Z"'
    assert stamp in text
    return [str(write(tmp_path, f"rep{i}.jsonl", text.replace(stamp, stamp.replace(":40:", f":4{i}:"), 1)))
            for i in range(count)]


def stored_runs(store_at: StoreAt) -> list[tuple[object, ...]]:
    return store_at.rows("SELECT id FROM runs")


def test_import_stores_the_run_as_osmeter_run_would(cli, fake_probe: FakeProbe, store_at: StoreAt) -> None:
    r = cli("import", str(GOOD), "--label", "board")
    assert r.code == 0, r.err
    assert r.out.strip() == f"imported {GOOD} as run 1 (complete): 3 ok, 1 skipped, 1 failed"
    # The same script through the fake probe, one repetition as the file is: run 2.
    assert cli("run", "--repeat", "1").code == EXIT_BENCH_ERRORS
    store = open_store(store_at.location, create=False)
    imported, ran = store.run("1"), store.run("2")
    assert imported.source == "import" and ran.source == "run" and imported.label == "board"
    assert imported.machine == ran.machine and imported.start_time == ran.start_time
    for a, b in zip(store.results(1), store.results(2)):
        assert (a.bench, a.params, a.status, a.summary, a.reason) == (b.bench, b.params, b.status, b.summary, b.reason)
        if a.status == "ok":
            assert store.samples(1, a.seq).tolist() == store.samples(2, b.seq).tolist()
    store.close()


def test_import_aarch64(cli, store_at: StoreAt) -> None:
    r = cli("import", str(DATA / "run_aarch64.jsonl"))
    assert r.code == 0
    shown = cli("show", "1").out
    assert "lebench on board, Linux 6.1.55-rt" in shown
    assert "B/s" in shown and "bytes_per_s" not in shown and "warning [virtualized]" in shown  # a rate, scaled


def truncated_text() -> str:
    lines = GOOD.read_text().splitlines(keepends=True)
    return "".join(lines[:-2]) + lines[-2][: len(lines[-2]) // 2]  # no end, half a line


def test_truncated_file_is_refused_then_allowed(cli, tmp_path: Path, store_at: StoreAt) -> None:
    cut = write(tmp_path, "cut.jsonl", truncated_text())
    r = cli("import", str(cut))
    assert r.code == EXIT_IMPORT
    assert "cut short" in r.err and "--allow-incomplete" in r.err and "line 14" in r.err
    assert stored_runs(store_at) == []

    r = cli("import", str(cut), "--allow-incomplete")
    assert r.code == 0
    assert "(incomplete): 3 ok, 1 skipped, 0 failed" in r.out
    assert "ignored line 14" in r.err
    assert store_at.rows("SELECT status, status_reason FROM runs") == [
        ("incomplete", "imported from a file that was cut short")
    ]


def test_file_without_end_but_whole_lines(cli, tmp_path: Path, store_at: StoreAt) -> None:
    no_end = write(tmp_path, "no-end.jsonl", "".join(GOOD.read_text().splitlines(keepends=True)[:-1]))
    r = cli("import", str(no_end))
    assert r.code == EXIT_IMPORT and "no 'end' record" in r.err
    assert stored_runs(store_at) == []


def meta_line(**changes: object) -> str:
    meta = json.loads(GOOD.read_text().splitlines()[0])
    meta.update(changes)
    return json.dumps(meta)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("empty.jsonl", "", "is not osmeter-probe run output: it is empty"),
        ("notes.txt", "hello world\nthis is text\n", "is not osmeter-probe run output: line 1: not valid JSON"),
        ("binary.bin", b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe", "it is not UTF-8 text"),
        ("list.json", (DATA / "list.json").read_text(), "is not osmeter-probe run output: line 1"),
        ("other.jsonl", '{"name": "x", "value": 1}\n', "line 1: missing key 'type'"),
        ("headless.jsonl", "".join(GOOD.read_text().splitlines(keepends=True)[1:]), "is a 'progress' record, not 'meta'"),
        ("newer.jsonl", meta_line(schema=2) + "\n", "schema 2 is not supported (newer than this osmeter; upgrade osmeter); this osmeter reads schema 1"),
    ],
)
def test_foreign_files_are_refused(cli, tmp_path: Path, store_at: StoreAt, name: str, content, message: str) -> None:
    path = write(tmp_path, name, content)
    r = cli("import", str(path))
    assert r.code == EXIT_IMPORT
    assert message in r.err
    assert not store_at.exists()


def test_bad_record_in_the_middle_stores_nothing(cli, tmp_path: Path, store_at: StoreAt) -> None:
    lines = GOOD.read_text().splitlines(keepends=True)
    broken = write(tmp_path, "broken.jsonl", "".join(lines[:5] + ['{"type": "result", "bench": 1}\n'] + lines[5:]))
    r = cli("import", str(broken))
    assert r.code == EXIT_IMPORT and "line 6" in r.err
    assert stored_runs(store_at) == []


def test_order_violation_rolls_back(cli, tmp_path: Path, store_at: StoreAt) -> None:
    lines = GOOD.read_text().splitlines(keepends=True)
    no_samples = write(tmp_path, "order.jsonl", "".join(lines[:5] + lines[6:]))  # syscall.null result, no samples
    r = cli("import", str(no_samples))
    assert r.code == EXIT_IMPORT and "without its 'samples'" in r.err and "nothing was stored" in r.err
    assert stored_runs(store_at) == []
    assert store_at.rows("SELECT count(*) FROM results") == [(0,)]


def test_missing_file(cli, tmp_path: Path) -> None:
    r = cli("import", str(tmp_path / "absent.jsonl"))
    assert r.code == EXIT_IMPORT and "cannot read" in r.err


def test_several_files_are_the_repetitions_of_one_run(cli, tmp_path: Path, store_at: StoreAt) -> None:
    """Three files from three probe processes: one run, each result pooled
    from three repetitions (the board-without-Python form of --repeat)."""
    paths = repetition_files(tmp_path, 3)
    r = cli("import", *paths, "--label", "board x3")
    assert r.code == 0, r.err
    assert "as run 1 (complete, 3 repetitions)" in r.out
    store = open_store(store_at.location, create=False)
    try:
        run = store.run("1")
        assert run.params["repeat"] == 3 and len(run.params["files"]) == 3
        ok = [x for x in store.results(1) if x.status == "ok"]
        assert ok and all(len(x.repetitions) == 3 for x in ok)
        one = ok[0]
        assert one.summary.n == 3 * one.repetitions[0].n
    finally:
        store.close()


def test_only_the_last_of_several_files_may_be_cut_short(cli, tmp_path: Path, store_at: StoreAt) -> None:
    cut = write(tmp_path, "cut.jsonl", truncated_text())
    r = cli("import", str(cut), str(GOOD), "--allow-incomplete")
    assert r.code == EXIT_IMPORT and "only the last of several files" in r.err
    assert not store_at.exists() or store_at.rows("SELECT count(*) FROM runs") == [(0,)]
    r = cli("import", str(GOOD), str(cut), "--allow-incomplete")
    assert r.code == 0, r.err
    assert "(incomplete, 2 repetitions)" in r.out
