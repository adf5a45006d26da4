"""A store that fails mid-run loses nothing (issue 27, defect 2): the
measuring goes on into the spool, the stored run is marked incomplete, and
the message names the files and the `osmeter import` that stores the whole
run. Without a failure the spool is removed."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from osmeter import errors
from osmeter.errors import StoreError
from osmeter.spool import spool_dir
from osmeter.store.sql import SQLStore

from ..conftest import db_rows

NAMES = ("syscall.null", "cpu.call", "cpu.timer_overhead", "mem.mmap")
TINY = ("--min-time", "0.01", "--max-time", "0.2")


def _fail_after(monkeypatch: pytest.MonkeyPatch, n: int, *, marking_fails: bool = False) -> None:
    """add_result succeeds n times, then the store fails (as a full disk does: no reconnect helps)."""
    real_add, real_finish = SQLStore.add_result, SQLStore.finish_run
    calls = {"add": 0}

    def add(self, *args, **kwargs):
        calls["add"] += 1
        if calls["add"] > n:
            raise StoreError(f"cannot write to the store {self.shown}: database or disk is full")
        return real_add(self, *args, **kwargs)

    def finish(self, *args, **kwargs):
        if marking_fails:
            raise StoreError("cannot write to the store: database or disk is full")
        return real_finish(self, *args, **kwargs)

    monkeypatch.setattr(SQLStore, "add_result", add)
    monkeypatch.setattr(SQLStore, "finish_run", finish)


def _heal(monkeypatch: pytest.MonkeyPatch) -> None:
    """The store works again (only the store's methods restored: the test's environment stays)."""
    monkeypatch.setattr(SQLStore, "add_result", REAL["add_result"])
    monkeypatch.setattr(SQLStore, "finish_run", REAL["finish_run"])


REAL = {"add_result": SQLStore.add_result, "finish_run": SQLStore.finish_run}


def _import_line(err: str) -> list[str]:
    line = next(x for x in err.splitlines() if x.strip().startswith("osmeter import"))
    return shlex.split(line)[1:]


def test_a_store_that_fails_mid_run_loses_no_result(cli, real_probe: str, store_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    _fail_after(monkeypatch, 2)
    r = cli("run", *NAMES, *TINY, "--repeat", "2", "--label", "outage")
    assert r.code == errors.EXIT_STORE, r.err
    assert "the measuring goes on" in r.err and "run 1 keeps the 2 result(s) stored before, marked incomplete" in r.err
    assert db_rows(store_path, "SELECT status FROM runs") == [("incomplete",)]
    (reason,) = db_rows(store_path, "SELECT status_reason FROM runs")[0]
    assert "the store failed after 2 result(s)" in reason
    assert db_rows(store_path, "SELECT count(*) FROM results") == [(2,)]
    argv = _import_line(r.err)
    files = [a for a in argv if a.endswith(".jsonl")]
    assert len(files) == 2 and all(Path(f).parent == spool_dir() for f in files)
    _heal(monkeypatch)
    r = cli(*argv)
    assert r.code == 0, r.err
    assert db_rows(store_path, "SELECT label, status FROM runs ORDER BY id") == [("outage", "incomplete"),
                                                                              ("outage", "complete")]
    assert sorted(b for (b,) in db_rows(store_path, "SELECT bench FROM results WHERE run_id = 2")) == sorted(NAMES)


def test_a_store_that_cannot_even_be_marked_says_so(cli, real_probe: str, store_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    _fail_after(monkeypatch, 1, marking_fails=True)
    r = cli("run", *NAMES, *TINY, "--repeat", "1")
    assert r.code == errors.EXIT_STORE, r.err
    assert "could not be marked incomplete" in r.err and "osmeter import" in r.err
    files = [a for a in _import_line(r.err) if a.endswith(".jsonl")]
    assert len(files) == 1 and Path(files[0]).read_text().count('"type":"result"') == len(NAMES)
    assert "the next osmeter that opens this store marks it" in r.err
    assert db_rows(store_path, "SELECT status FROM runs") == [("running",)]
    _heal(monkeypatch)
    r = cli("runs")  # any command that opens the store, once it can be written
    assert r.code == 0 and "marked run 1 incomplete" in r.err, r.err
    assert db_rows(store_path, "SELECT status FROM runs") == [("incomplete",)]
    assert not (spool_dir() / "unmarked.jsonl").exists()


def test_the_spool_is_removed_when_the_store_held(cli, real_probe: str, store_path: Path) -> None:
    assert cli("run", *NAMES[:2], *TINY).code == 0
    assert not spool_dir().exists() or list(spool_dir().iterdir()) == []


def test_a_spool_that_fails_after_the_store_stops_the_measuring(cli, real_probe: str, store_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Neither the store nor the spool keeps what follows: the run stops and says what the files hold."""
    from osmeter.spool import Spool

    _fail_after(monkeypatch, 1)
    real_write = Spool.write
    lines = {"n": 0}

    def write(self, line: str) -> None:
        lines["n"] += 1
        if lines["n"] > 12:  # well after the store failed (meta, progress, samples, result, ...)
            self.error = "cannot write the spool: No space left on device"
            return
        real_write(self, line)

    monkeypatch.setattr(Spool, "write", write)
    r = cli("run", *NAMES, *TINY, "--repeat", "1")
    assert r.code == errors.EXIT_STORE, r.err
    assert "stopped there" in r.err and "--allow-incomplete" in r.err, r.err
    assert db_rows(store_path, "SELECT status FROM runs") == [("incomplete",)]


def test_a_run_left_to_mark_is_matched_by_uid_not_by_id(cli, store_path: Path) -> None:
    """A run 1, running (a live run), of a store shown by the same name is not the run a failed store
    left (another file of that name, or one made anew): untouched."""
    from osmeter.spool import note_unmarked, unmarked
    from osmeter.store import open_store

    from ..synthetic import add_run

    add_run(store_path, [("syscall.null", {}, "ns", [1.0, 2.0, 3.0])])
    store = open_store(str(store_path), create=True)
    store.finish_run(1, "running", "2026-11-28T00:00:00Z", None)
    store.close()
    assert note_unmarked("uid-of-another-store", str(store_path), 1, "incomplete", "2026-11-28T00:00:00Z", "lost")
    r = cli("runs")
    assert r.code == 0 and "marked run" not in r.err
    assert db_rows(store_path, "SELECT status FROM runs") == [("running",)]
    assert [e["uid"] for e in unmarked()] == ["uid-of-another-store"]  # kept for its own store
