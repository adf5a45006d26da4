"""Both backends at work: 8 processes writing runs at once, `osmeter store
copy` between SQLite and PostgreSQL, and a store of the previous schema
version (0006, before host/fleet/uid) upgraded with every run intact."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from osmeter.errors import EXIT_NOT_FOUND, EXIT_STORE, EXIT_USAGE
from osmeter.records import parse_line
from osmeter.store import migrate, open_store

from ..conftest import DATA, SRC, StoreAt, import_fixture
from .test_store_profiles import PROFILE
from .test_recorder import objs

WRITERS, RUNS_EACH = 8, 3
DIGEST = "d" * 64

_WRITER = r"""
import sys, time
from pathlib import Path
from osmeter.ingest import read_probe_file, store_probe_file
from osmeter.recorder import RunContext, RunRecorder
from osmeter.store import open_store
location, name, go, runs = sys.argv[1], sys.argv[2], Path(sys.argv[3]), int(sys.argv[4])
probe_file = read_probe_file(Path(sys.argv[5]))
Path(f"{go}.{name}").touch()                    # ready: everything imported
while not go.exists():                          # all start together
    time.sleep(0.001)
for i in range(runs):
    store = open_store(location, create=True)   # the first of them creates the schema
    try:
        recorder = RunRecorder(store, RunContext(f"{name}-{i}", ["import", name], {}, "import", host=name))
        store_probe_file(probe_file, recorder)  # no transaction: a commit per record, so the writers interleave
    finally:
        store.close()
"""


def _backend(request: pytest.FixtureRequest, isolated_env: Path) -> StoreAt:
    if request.param == "sqlite":
        return StoreAt(str(isolated_env / "store" / "osmeter.db"), "sqlite")
    return StoreAt(request.getfixturevalue("pg_server").database(), "postgresql")


@pytest.fixture(params=["sqlite", "postgresql"])
def fresh(request: pytest.FixtureRequest, isolated_env: Path) -> StoreAt:
    """A location with no store yet, on each backend (not slow-marked: these are the backends' own tests)."""
    return _backend(request, isolated_env)


@pytest.mark.slow  # eight Python processes start; CI runs it on both backends
def test_eight_writers_at_once_lose_nothing(fresh: StoreAt, tmp_path: Path) -> None:
    import time

    go = tmp_path / "go"
    env = {"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"}
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, fresh.location, f"w{i}", str(go), str(RUNS_EACH),
                               str(DATA / "run_x86_64.jsonl")], env=env, stderr=subprocess.PIPE, text=True)
             for i in range(WRITERS)]
    deadline = time.monotonic() + 120
    while len(list(tmp_path.glob("go.w*"))) < WRITERS and time.monotonic() < deadline:
        if any(p.poll() is not None for p in procs):
            break
        time.sleep(0.01)
    go.touch()
    errors = [p.communicate(timeout=300)[1] for p in procs]
    assert [p.returncode for p in procs] == [0] * WRITERS, errors
    store = open_store(fresh.location, create=False)
    try:
        runs = store.runs()
        want = len(store.results(runs[0].id))
        assert want == 5  # the results in run_x86_64.jsonl
        assert sorted(r.label for r in runs) == sorted(f"w{i}-{j}" for i in range(WRITERS) for j in range(RUNS_EACH))
        assert all(r.status == "complete" and r.counts.total == want for r in runs)
        assert all(len(store.results(r.id)) == want for r in runs)
        assert len({r.id for r in runs}) == WRITERS * RUNS_EACH
    finally:
        store.close()
    assert fresh.rows("SELECT count(*) FROM schema_migrations") == [(migrate.head_version(),)]


def _everything(location: str) -> list[dict[str, Any]]:
    """Every run as the model reads it, ids left out (they differ between stores)."""
    store = open_store(location, create=False)
    try:
        out = []
        for run in store.runs():
            results = store.results(run.id)
            out.append({
                "run": {k: v for k, v in run.__dict__.items() if k != "id"},
                "results": results,
                "samples": [None if (s := store.samples(run.id, r.seq)) is None else s.tolist() for r in results],
                "profiles": [(p.seq, p.bench, p.status, p.mode, p.meta, p.stacks) for p in store.profiles(run.id)],
            })
        return out
    finally:
        store.close()


def _fill(location: str) -> None:
    """Three runs: two imported files (content digests), one with a profile and a fleet host."""
    first = import_fixture(location)
    import_fixture(location, "run_aarch64.jsonl", label="board")
    items = objs()
    from osmeter.recorder import RunContext, RunRecorder

    store = open_store(location, create=True)
    try:
        store.set_content_hash(first, DIGEST, [DIGEST, "e" * 64])
        recorder = RunRecorder(store, RunContext("p", ["x"], {}, "run", host="rpi", fleet="fleet-1"))
        for item in items[:4] + [PROFILE] + items[4:]:
            recorder.feed(parse_line(json.dumps(item)))
        recorder.finish()
    finally:
        store.close()


@pytest.mark.parametrize("there,back", [("sqlite", "postgresql"), ("postgresql", "sqlite")])
@pytest.mark.slow
def test_store_copy_between_backends_keeps_everything(cli, isolated_env: Path, pg_server, there: str,
                                                      back: str) -> None:
    where = {"sqlite": lambda n: str(isolated_env / f"{n}.db"), "postgresql": lambda n: pg_server.database()}
    a, b, c = where[there]("a"), where[back]("b"), where[there]("c")
    _fill(a)
    first = cli("store", "copy", a, b)
    assert first.code == 0, first.err
    assert "3 runs copied" in first.out and first.err.count("osmeter: copy: [") == 3
    assert _everything(b) == _everything(a)
    again = cli("store", "copy", a, b, "--json")  # nothing twice: the runs' uids are there
    assert again.code == 0 and json.loads(again.out)["copied"] == []
    assert len(json.loads(again.out)["already_there"]) == 3
    assert cli("store", "copy", b, c, "--run", "2").code == 0
    assert _everything(c) == _everything(a)[1:2]
    store = open_store(b, create=False)
    try:  # what `osmeter import` looks for when a file comes again
        assert store.runs_with_content(DIGEST) == store.runs_with_content("e" * 64) == [1]
    finally:
        store.close()


def test_store_copy_bad_input(cli, isolated_env: Path) -> None:
    a = str(isolated_env / "a.db")
    import_fixture(a)
    r = cli("store", "copy", a, a)
    assert r.code == EXIT_USAGE and "the same store" in r.err
    r = cli("store", "copy", str(isolated_env / "none.db"), str(isolated_env / "b.db"))
    assert r.code == EXIT_NOT_FOUND and "no store at" in r.err and not (isolated_env / "b.db").exists()
    r = cli("store", "copy", a, str(isolated_env / "b.db"), "--run", "x")
    assert r.code == EXIT_USAGE and "a run id is a number" in r.err
    r = cli("store", "copy", a, str(isolated_env / "b.db"), "--run", "1", "--run", "9")
    assert r.code == EXIT_NOT_FOUND and "no run 9" in r.err
    assert json.loads(cli("runs", "--json", "--store", str(isolated_env / "b.db")).out)["runs"] == []  # not run 1


def test_store_copy_leaves_a_damaged_run_behind(cli, isolated_env: Path) -> None:
    a, b = str(isolated_env / "a.db"), str(isolated_env / "b.db")
    import_fixture(a)
    import_fixture(a)
    StoreAt(a, "sqlite").execute("UPDATE results SET extra = '[' WHERE run_id = 1 AND seq = 2")
    r = cli("store", "copy", a, b)
    assert r.code == EXIT_STORE and "1 runs copied" in r.out and "1 damaged (not copied)" in r.out
    assert "run 1, result 2, column 'extra'" in r.err
    assert [x["id"] for x in json.loads(cli("runs", "--json", "--store", b).out)["runs"]] == [1]


def test_store_info(cli, fresh: StoreAt) -> None:
    _fill(fresh.location)
    r = cli("store", "info", "--store", fresh.location, "--json")
    assert r.code == 0, r.err
    doc = json.loads(r.out)
    assert doc["backend"] == fresh.backend and doc["runs"] == 3 and doc["fleets"] == ["fleet-1"]
    assert doc["schema_version"] == doc["schema_head"] == migrate.head_version()


def _store_at_0006(at: StoreAt) -> None:
    """An empty store as the previous schema version (0006) left it."""
    url = (f"sqlite:///{at.location}" if at.backend == "sqlite"
           else at.location.replace("postgresql://", "postgresql+psycopg://"))
    if at.backend == "sqlite":
        Path(at.location).parent.mkdir(parents=True, exist_ok=True)
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            if at.backend == "sqlite":  # as osmeter 0.2 made it: the legacy files, no Alembic
                migrate.legacy_upgrade(conn, 6)
            else:
                migrate.upgrade(conn, "0006")
    finally:
        engine.dispose()


QUARTILES_MODES = ("p25", "p75", "mode_low", "mode_high")  # revision 0010's columns


def test_a_store_of_the_previous_schema_is_upgraded_with_every_run_intact(fresh: StoreAt, isolated_env: Path) -> None:
    source = str(isolated_env / "now.db")
    _fill(source)
    _store_at_0006(fresh)
    cols = {r[0] for r in fresh.rows("SELECT version FROM schema_migrations")}
    assert cols == {1, 2, 3, 4, 5, 6}
    src = open_store(source, create=False)
    try:  # the runs written as the previous version would: no host, fleet or uid
        for table in ("runs", "results", "profiles", "imported_files"):
            for run in src.runs():
                for row in src.raw_rows(table, run.id):
                    row = {k: v for k, v in row.items() if k not in ("host", "fleet", "uid", *QUARTILES_MODES)}
                    fresh.execute(f"INSERT INTO {table} ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                                  *row.values())
    finally:
        src.close()
    before = fresh.rows("SELECT * FROM results ORDER BY run_id, seq")
    store = open_store(fresh.location, create=False)  # migrates 0006 -> head
    try:
        assert store.schema_version() == migrate.head_version()
    finally:
        store.close()
    # the results as they were, with the quartiles and modes (0010) computed from their samples at the end
    assert [r[:len(before[0])] for r in fresh.rows("SELECT * FROM results ORDER BY run_id, seq")] == before
    want = _everything(source)
    for w in want:
        w["run"].update(host=None, fleet=None)
    assert _everything(fresh.location) == want
    uids = [r[0] for r in fresh.rows("SELECT uid FROM runs")]
    assert len(set(uids)) == 3 and all(len(u) == 36 for u in uids)


def test_the_revisions_osmeter_knows_are_alembics() -> None:
    """migrate.REVISIONS (what opening a current store checks, without Alembic)
    is the chain Alembic reads from alembic/versions/, oldest first."""
    chain = [r.revision for r in migrate.script().walk_revisions()][::-1]
    assert tuple(chain) == migrate.REVISIONS and migrate.script().get_current_head() == migrate.HEAD


def test_store_copy_skips_a_running_run_and_completes_an_earlier_copy(cli, isolated_env: Path) -> None:
    """Issue 27, defect 3: a run copied while going stayed a part in the destination forever."""
    a, b = str(isolated_env / "a.db"), str(isolated_env / "b.db")
    import_fixture(a)
    src = StoreAt(a, "sqlite")
    src.execute("UPDATE runs SET status = 'running', end_time = NULL WHERE id = 1")
    src.execute("DELETE FROM results WHERE run_id = 1 AND seq > 1")
    r = cli("store", "copy", a, b, "--json")
    assert r.code == 0 and json.loads(r.out)["still_running"] == [1] and json.loads(r.out)["copied"] == [], r.out
    assert "still running, not copied" in r.err
    # an earlier osmeter copied it anyway, as it was then; the run has ended since
    import_fixture(str(isolated_env / "full.db"))
    copy_all = cli("store", "copy", str(isolated_env / "full.db"), b)
    assert copy_all.code == 0
    full = StoreAt(str(isolated_env / "full.db"), "sqlite")
    dst = StoreAt(b, "sqlite")
    n_results = full.rows("SELECT count(*) FROM results")[0][0]
    dst.execute("UPDATE runs SET status = 'running' WHERE id = 1")
    dst.execute("DELETE FROM results WHERE run_id = 1 AND seq > 1")
    r = cli("store", "copy", str(isolated_env / "full.db"), b, "--json")
    assert r.code == 0 and json.loads(r.out)["updated"] == [{"src": 1, "dst": 1}], r.out
    assert dst.rows("SELECT status FROM runs") == full.rows("SELECT status FROM runs")
    assert dst.rows("SELECT count(*) FROM results") == [(n_results,)]
    again = cli("store", "copy", str(isolated_env / "full.db"), b, "--json")
    assert json.loads(again.out)["already_there"] == [{"src": 1, "dst": 1}] and json.loads(again.out)["updated"] == []
