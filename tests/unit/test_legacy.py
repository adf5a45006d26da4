"""Results of 0.1 probes keep their meaning under today's names (osmeter.legacy,
store migration 0002): task.fork of 0.1 was fork + exit + wait, which is
task.fork_exit now; task.thread_create was create + join (task.thread_join);
mem.mmap mapped PROT_READ|PROT_WRITE in groups of 8."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from osmeter import legacy
from osmeter.records import canonical_params
from osmeter.store import open_store
from osmeter.store.migrate import head_version
from osmeter.store.sqlite import migrations

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
    from osmeter.ingest import read_probe_file, store_probe_file
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


def _version1_store(path: Path, rows: list[tuple[str, str, dict]]) -> None:
    """A store at schema version 1 (before 0002), holding (probe_version, bench, params) results."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(str(path)) as conn:
        conn.executescript(migrations()[0].sql)
        conn.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL,"
                     " applied_at TEXT NOT NULL)")
        conn.execute("INSERT INTO schema_migrations VALUES (1, 'initial', 't')")
        runs: dict[str, int] = {}
        for seq, (version, bench, params) in enumerate(rows):
            if version not in runs:
                cur = conn.execute(
                    "INSERT INTO runs (start_time, status, source, osmeter_version, probe_version, argv, params,"
                    " machine, meta) VALUES ('t', 'complete', 'run', ?, ?, '[]', '{}', '{}', '{}')",
                    (version, version))
                runs[version] = cur.lastrowid
            conn.execute("INSERT INTO results (run_id, seq, bench, params, unit, status, record)"
                         " VALUES (?, ?, ?, ?, 'ns', 'skip', '{}')",
                         (runs[version], seq, bench, canonical_params(params)))


def test_migration_0002_agrees_with_legacy_upgrade(store_path: Path) -> None:
    rows = [("0.1.0", b, p) for b, p, _, _ in CASES] + [("0.2.0", b, p) for b, p, _, _ in CASES]
    _version1_store(store_path, rows)
    store = open_store(str(store_path), create=False)  # migrates
    try:
        assert store.schema_version() == head_version()
        got = [(r.bench, r.params) for run in store.runs() for r in store.results(run.id)]
    finally:
        store.close()
    want = [legacy.upgrade(b, p, v) for v, b, p in rows]
    assert got == want
    assert want[: len(CASES)] == [(nb, np_) for _, _, nb, np_ in CASES]
    # The migrated parameters are canonical, so they match today's results.
    with sqlite3.connect(str(store_path)) as conn:
        texts = [row[0] for row in conn.execute("SELECT params FROM results ORDER BY run_id, seq")]
    assert texts == [canonical_params(json.loads(t)) for t in texts]
