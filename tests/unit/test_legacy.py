"""Results of 0.1 probes keep their meaning under today's names (osmeter.legacy,
store migration 0002): task.fork of 0.1 was fork + exit + wait, which is
task.fork_exit now; task.thread_create was create + join (task.thread_join);
mem.mmap mapped PROT_READ|PROT_WRITE in groups of 8."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from osmeter import legacy, stats
from osmeter.model import BenchResult, NewRun
from osmeter.records import canonical_params
from osmeter.store import open_store

from ..conftest import DATA, import_fixture

# (bench, params) of a 0.1.0 probe -> what the same quantity is called now.
CASES = [
    ("task.fork", {"touched_mib": 1, "vmas": 0}, "task.fork_exit", {"touched_mib": 1, "vmas": 0}),
    ("task.thread_create", {"placement": "same_cpu"}, "task.thread_join", {"placement": "same_cpu"}),
    ("mem.mmap", {"size": 4096}, "mem.mmap", {"group": 8, "prot": "read_write", "size": 4096}),
    ("mem.munmap", {"size": 40960}, "mem.munmap", {"group": 8, "size": 40960}),
    ("mem.page_fault", {"size": 4096000}, "mem.page_fault", {"group": 8, "size": 4096000}),
    ("ctxsw.pipe", {"mode": "process"}, "ctxsw.pipe", {"mode": "process"}),
    ("syscall.null", {}, "syscall.null", {}),
]


@pytest.mark.parametrize("bench, params, new_bench, new_params", CASES)
def test_upgrade_maps_a_legacy_result(bench, params, new_bench, new_params) -> None:
    assert legacy.upgrade(bench, params, "0.1.0") == (new_bench, new_params)
    # Results of today's probe are left alone.
    assert legacy.upgrade(bench, params, "0.2.0") == (bench, params)


def test_import_of_a_legacy_file_renames_task_fork(store_path: Path, tmp_path: Path) -> None:
    text = (DATA / "run_x86_64.jsonl").read_text(encoding="utf-8")
    assert '"bench":"task.fork"' in text
    old = tmp_path / "old.jsonl"
    old.write_text(text.replace('"probe_version":"0.2.0"', '"probe_version":"0.1.0"', 1), encoding="utf-8")
    # import_fixture reads from tests/data; go through the same path by hand.
    from osmeter.commands.import_ import read_probe_file, store_probe_file
    from osmeter.recorder import RunContext, RunRecorder

    store = open_store(str(store_path), create=True)
    try:
        recorder = RunRecorder(store, RunContext(None, ["import", str(old)], {}, "import"))
        with store.transaction():
            store_probe_file(read_probe_file(old), recorder)
        names = [r.bench for r in store.results(str(recorder.run_id))]
    finally:
        store.close()
    assert "task.fork_exit" in names and "task.fork" not in names
    # The same file from today's probe keeps task.fork.
    run_id = import_fixture(store_path)
    store = open_store(str(store_path), create=False)
    try:
        assert "task.fork" in [r.bench for r in store.results(str(run_id))]
    finally:
        store.close()


def _legacy_run(probe_version: str) -> NewRun:
    return NewRun(
        label=None,
        start_time="2026-11-22T07:40:00Z",
        source="run",
        osmeter_version=probe_version,
        probe_version=probe_version,
        suite="standard",
        argv=["osmeter-probe", "run"],
        params={},
        machine={},
        meta={"type": "meta", "schema": 1},
    )


def test_migration_0002_agrees_with_legacy_upgrade(store_path: Path) -> None:
    values = np.linspace(1.0, 2.0, 20)
    store = open_store(str(store_path), create=True)
    old_run = store.create_run(_legacy_run("0.1.0"))
    new_run = store.create_run(_legacy_run("0.2.0"))
    for run_id in (old_run, new_run):
        for seq, (bench, params, _, _) in enumerate(CASES):
            result = BenchResult(seq=seq, bench=bench, params=params, status="ok", unit="ns",
                                 summary=stats.summary(values), batch=1)
            store.add_result(run_id, result, values)
    store.close()
    # Back to a store at schema version 1 holding 0.1 results, then reopen:
    # migration 0002 runs on them.
    with sqlite3.connect(str(store_path)) as conn:
        conn.execute("DELETE FROM schema_migrations WHERE version >= 2")
    store = open_store(str(store_path), create=False)
    try:
        assert store.schema_version() >= 2
        got_old = [(r.bench, r.params) for r in store.results(str(old_run))]
        got_new = [(r.bench, r.params) for r in store.results(str(new_run))]
    finally:
        store.close()
    assert got_old == [(nb, np_) for _, _, nb, np_ in CASES]
    assert got_new == [(b, p) for b, p, _, _ in CASES]
    # The migrated parameters are canonical, so they match today's results.
    with sqlite3.connect(str(store_path)) as conn:
        texts = [row[0] for row in conn.execute(
            "SELECT params FROM results WHERE run_id = ? ORDER BY seq", (old_run,))]
    assert texts == [canonical_params(json.loads(t)) for t in texts]
