"""Profiles (osmeter-probe hotspots' `profile` records) through the recorder
into the store, the migration that added them, and damage."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from osmeter.errors import RecordError, StoreError
from osmeter.records import parse_line
from osmeter.store import open_store
from osmeter.store.migrate import head_version
from osmeter.store.sqlite import migrations

from ..conftest import StoreAt, db_rows
from .test_recorder import feed_all, objs

PROFILE: dict[str, Any] = {
    "type": "profile", "bench": "cpu.call", "params": {"args": 0}, "lebench_row": None, "status": "ok",
    "reason": None, "mode": "sample", "event": "cpu-clock", "frequency_hz": 999, "weight_unit": "samples",
    "samples": 12, "lost": 0, "kernel": True, "kernel_reason": None,
    "symbols": {"kernel": "kallsyms", "kernel_reason": None},
    "window": {"start_ns": 1, "end_ns": 2, "enabled_s": 0.5, "batches": 3}, "ops": 300,
    "stacks": [["osmeter-probe;main;sys_[k]", 9], ["osmeter-probe;main", 3]], "calls": None, "notes": ["n"],
}


def test_a_profile_is_stored_with_its_result(store_at: StoreAt) -> None:
    items = objs()
    feed_all(store_at.location, items[:4] + [PROFILE] + items[4:])
    store = open_store(store_at.location, create=False)
    try:
        run = store.runs()[0]
        (p,) = store.profiles(run.id)
        assert (p.seq, p.bench, p.params, p.status, p.mode) == (0, "cpu.call", {"args": 0}, "ok", "sample")
        assert p.stacks == [("osmeter-probe;main;sys_[k]", 9), ("osmeter-probe;main", 3)]
        assert p.meta["window"]["batches"] == 3 and p.meta["notes"] == ["n"] and "stacks" not in p.meta
        assert [r.status for r in store.results(run.id)] == ["ok", "ok", "skip", "ok", "error"], "the run is whole"
    finally:
        store.close()


def test_a_profile_that_follows_no_result_of_its_own_is_a_note(store_at: StoreAt) -> None:
    items = objs()
    stray = dict(PROFILE, bench="syscall.null", params={})
    recorder = feed_all(store_at.location, items[:4] + [stray] + items[4:])
    assert any("'profile' for syscall.null" in n for n in recorder.notes), recorder.notes
    assert store_at.rows("SELECT count(*) FROM profiles") == [(0,)]


@pytest.mark.parametrize("change, message", [
    ({"stacks": [["a", 0]]}, r"stacks\[0\]"),
    ({"stacks": [["", 3]]}, r"stacks\[0\]"),
    ({"stacks": "a 3"}, "must be a list"),
    ({"status": "great"}, "status"),
    ({"mode": "graph"}, "mode"),
    ({"calls": {"f": -1}}, "calls"),
])
def test_malformed_profile_records_are_refused(change: dict[str, Any], message: str) -> None:
    with pytest.raises(RecordError, match=message):
        parse_line(json.dumps(dict(PROFILE, **change)))


def test_a_hotspots_stream_is_a_run(store_at: StoreAt) -> None:
    items = objs()
    items[0] = dict(items[0], command="hotspots")
    recorder = feed_all(store_at.location, items[:4] + [PROFILE] + items[4:])
    assert recorder.run_id is not None and recorder.notes == []


def test_damaged_stacks_are_a_store_error(store_at: StoreAt) -> None:
    items = objs()
    feed_all(store_at.location, items[:4] + [PROFILE] + items[4:])
    store_at.execute("UPDATE profiles SET stacks = ?", b"not zlib")
    store = open_store(store_at.location, create=False)
    try:
        with pytest.raises(StoreError, match=r"damaged: run 1, result 0, column 'stacks'"):
            store.profiles(1)
    finally:
        store.close()


def _store_at(path: Path, version: int) -> None:
    """A store made by the migrations up to `version` (an older osmeter), with one run of results."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(str(path)) as conn:
        conn.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL,"
                     " applied_at TEXT NOT NULL)")
        for m in migrations()[:version]:
            conn.executescript(m.sql)
            conn.execute("INSERT INTO schema_migrations VALUES (?, ?, 't')", (m.version, m.name))
        conn.execute("INSERT INTO runs (start_time, status, source, osmeter_version, probe_version, argv, params,"
                     " machine, meta) VALUES ('t', 'complete', 'run', '0.1', '0.1', '[]', '{}', '{}', '{}')")
        for seq, bench in enumerate(("syscall.null", "task.fork")):
            conn.execute("INSERT INTO results (run_id, seq, bench, params, unit, status, reason, record)"
                         " VALUES (1, ?, ?, '{}', 'ns', 'skip', 'why', '{}')", (seq, bench))


def test_a_store_before_profiles_is_upgraded_with_every_run_intact(store_path: Path) -> None:
    assert migrations()[5].name.endswith("profiles")
    _store_at(store_path, 5)
    before = db_rows(store_path, "SELECT * FROM results ORDER BY seq")
    store = open_store(str(store_path), create=False)  # migrates
    try:
        assert store.schema_version() == head_version()
        assert [(r.bench, r.reason) for r in store.results(1)] == [("syscall.null", "why"), ("task.fork", "why")]
        store.add_profile(1, 1, dict(PROFILE, bench="task.fork", params={}))
        assert [p.bench for p in store.profiles(1)] == ["task.fork"]
    finally:
        store.close()
    after = db_rows(store_path, "SELECT * FROM results ORDER BY seq")  # revision 0010 adds 4 columns at the end
    assert [r[: len(before[0])] for r in after] == before and all(r[len(before[0]):] == (None,) * 4 for r in after)



def test_import_stores_the_profiles_and_export_carries_them(cli, tmp_path: Path) -> None:
    items = objs()
    f = tmp_path / "hotspots.jsonl"
    f.write_text("".join(json.dumps(o) + "\n" for o in items[:4] + [PROFILE] + items[4:]))
    r = cli("import", str(f))
    assert r.code == 0, r.err
    out = cli("export", "latest", "--format", "json")
    assert out.code == 0, out.err
    doc = json.loads(out.out)
    (p,) = doc["profiles"]
    want = {k: v for k, v in PROFILE.items() if k not in ("type", "lebench_row")}
    assert {k: v for k, v in p.items() if k != "seq"} == want and p["seq"] == 0
    csv = cli("export", "latest", "--format", "csv")
    assert csv.code == 0 and "osmeter-probe;main" not in csv.out
    shown = cli("hotspots", "--show", "latest", "-o", str(tmp_path / "shown"))
    assert shown.code == 0, shown.err
    assert (tmp_path / "shown" / "profile.folded").read_text() == \
        "osmeter-probe;main;sys_[k] 9\nosmeter-probe;main 3\n"


def test_compare_links_the_profiles_of_an_instance_in_both_runs(cli, tmp_path: Path) -> None:
    items = objs()
    for name in ("a", "b"):
        f = tmp_path / f"{name}.jsonl"
        f.write_text("".join(json.dumps(o) + "\n" for o in items[:4] + [PROFILE] + items[4:])
                     + "\n" * (name == "b"))  # two different files: import refuses the same one twice
        assert cli("import", str(f)).code == 0
    r = cli("compare", "1", "2")
    assert r.code == 0, r.err
    assert "osmeter hotspots --diff 1:1 2:1" in r.out
    doc = json.loads(cli("compare", "1", "2", "--json").out)
    assert doc["hotspots"] == [{"bench": "cpu.call", "params": {"args": 0}, "baseline": "1:1", "run": "2:1",
                                "command": "osmeter hotspots --diff 1:1 2:1"}]
    d = cli("hotspots", "--diff", "1:1", "2:1", "-o", str(tmp_path / "d"))
    assert d.code == 0, d.err


def test_the_report_shows_the_profiles_top_functions(cli, tmp_path: Path) -> None:
    items = objs()
    f = tmp_path / "h.jsonl"
    f.write_text("".join(json.dumps(o) + "\n" for o in items[:4] + [PROFILE] + items[4:]))
    assert cli("import", str(f)).code == 0
    md = tmp_path / "r.md"
    r = cli("report", "latest", "-o", str(md))
    assert r.code == 0, r.err
    text = md.read_text()
    assert "### Hotspots" in text and "osmeter hotspots --show 1:1" in text
    assert "| sys_[k] | 75.0% | 75.0% | 9 | 9 |" in text.replace("\\_", "_").replace("\\[", "[").replace("\\]", "]")
    html = tmp_path / "r.html"
    assert cli("report", "latest", "-o", str(html)).code == 0
    assert '<table class="hotspots">' in html.read_text()
