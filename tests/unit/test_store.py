"""The store: round trip, migrations, location, and refusing bad stores.

Tests taking `store_at` run on both backends: SQLite, and PostgreSQL on a
server the tests start (tests/pgserver.py; those copies are slow-marked, so
CI runs them). The rest are about SQLite's file: paths, modes, mounts."""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import re
import shutil
import sqlite3
import stat
import subprocess
import zlib
from pathlib import Path
from typing import Iterator

import numpy as np
import pytest

from osmeter import stats
from osmeter.errors import EXIT_NOT_FOUND, EXIT_STORE, EXIT_USAGE, NotFoundError, StoreError, UsageError
from osmeter.model import BenchResult, NewRun
from osmeter.store import default_location, open_store, resolve_location
from osmeter.store.base import decode_samples, encode_samples
from osmeter.store.migrate import head_version
from osmeter.store.sqlite import migrations

from ..conftest import DATA, StoreAt, db_rows, import_fixture


def new_run(label: str | None = "t") -> NewRun:
    return NewRun(
        label=label,
        start_time="2026-11-22T07:40:00Z",
        source="run",
        osmeter_version="0.1.0",
        probe_version="0.1.0",
        suite="quick",
        argv=["osmeter-probe", "run", "--suite", "quick"],
        params={"cpu": 1},
        machine={"hostname": "h", "kernel_release": "6.8"},
        meta={"type": "meta", "schema": 1},
    )


def ok_result(seq: int, values: np.ndarray) -> BenchResult:
    return BenchResult(
        seq=seq,
        bench="cpu.call",
        params={"args": 3, "a": "z"},
        status="ok",
        unit="ns",
        summary=stats.summary(values),
        batch=1000,
        extra={"expected_ns": 1.5},
        record={"type": "result", "cpu": 2, "placement": None, "stop_reason": "rse", "elapsed_s": 0.5},
    )


def test_round_trip(store_at: StoreAt) -> None:
    values = np.random.default_rng(0).normal(10.0, 0.1, 100)
    store = open_store(store_at.location, create=True)
    run_id = store.create_run(new_run())
    store.add_result(run_id, ok_result(0, values), values)
    store.add_result(
        run_id, BenchResult(seq=1, bench="file.read_cold", params={}, status="skip", reason="needs root"), None
    )
    store.set_counters(run_id, 0, {"type": "counters", "cycles": 12})
    store.finish_run(run_id, "complete", "2026-11-22T07:41:00Z", None)
    store.close()

    store = open_store(store_at.location, create=False)
    run = store.run(str(run_id))
    assert run == store.run("latest")
    assert run.status == "complete" and run.label == "t" and run.machine["hostname"] == "h"
    assert (run.counts.ok, run.counts.skip, run.counts.error) == (1, 1, 0)
    ok, skip = store.results(run_id)
    assert ok.summary == stats.summary(values)
    assert ok.params == {"a": "z", "args": 3} and ok.extra == {"expected_ns": 1.5}
    assert ok.counters == {"type": "counters", "cycles": 12}
    assert ok.cpu == 2 and ok.stop_reason == "rse" and ok.elapsed_s == 0.5
    assert skip.status == "skip" and skip.reason == "needs root" and skip.summary is None
    np.testing.assert_array_equal(store.samples(run_id, 0), values)
    assert store.samples(run_id, 1) is None
    store.close()
    # params are stored canonically: sorted keys, no spaces
    assert store_at.rows("SELECT params FROM results WHERE seq = 0") == [('{"a":"z","args":3}',)]


def test_nan_statistics_survive_as_nan(store_at: StoreAt) -> None:
    store = open_store(store_at.location, create=True)
    run_id = store.create_run(new_run())
    store.add_result(run_id, ok_result(0, np.array([5.0])), np.array([5.0]))
    (r,) = store.results(run_id)
    assert r.summary is not None and math.isnan(r.summary.std) and math.isnan(r.summary.cv)
    store.close()


def test_samples_codec_is_little_endian_float64() -> None:
    values = [1.5, -2.25, 1e300]
    blob = encode_samples(values)
    assert np.frombuffer(__import__("zlib").decompress(blob), dtype="<f8").tolist() == values
    assert decode_samples(blob, 3).tolist() == values


def test_a_samples_blob_is_not_decompressed_past_its_result_n() -> None:
    """A damaged (or hostile) blob that expands far beyond its result's n is
    refused after n values, not decompressed whole into memory."""
    import zlib

    bomb = zlib.compress(bytes(8 << 20))  # 1 Mi zeros as float64, about 8 KiB compressed
    with pytest.raises(ValueError, match="more than the 10 values its result holds"):
        decode_samples(bomb, 10)
    with pytest.raises(zlib.error):
        decode_samples(zlib.compress(bytes(80))[:-4], 10)  # cut short


def test_migrations_are_recorded(store_at: StoreAt) -> None:
    open_store(store_at.location, create=True).close()
    versions = store_at.rows("SELECT version, name FROM schema_migrations ORDER BY version")
    assert versions == [(m.version, m.name) for m in migrations()] + [(7, "fleet"), (8, "fleet_host_unique"),
                        (9, "results_run_status"), (10, "quartiles_modes")]
    assert versions[0] == (1, "initial") and len(versions) == head_version()
    assert store_at.rows("SELECT version_num FROM alembic_version") == [(str(head_version()).zfill(4),)]
    open_store(store_at.location, create=True).close()  # reopening applies nothing twice
    assert store_at.rows("SELECT count(*) FROM schema_migrations") == [(len(versions),)]


def test_newer_alembic_revision_is_refused(store_at: StoreAt) -> None:
    open_store(store_at.location, create=True).close()
    store_at.execute("UPDATE alembic_version SET version_num = '0999'")
    with pytest.raises(StoreError, match="newer than this osmeter knows"):
        open_store(store_at.location, create=False)


def test_newer_store_schema_is_refused(store_at: StoreAt) -> None:
    open_store(store_at.location, create=True).close()
    store_at.execute("INSERT INTO schema_migrations VALUES (999, 'future', 'x')")
    with pytest.raises(StoreError, match="schema version 999, newer than this osmeter"):
        open_store(store_at.location, create=False)


def test_transaction_is_all_or_nothing(store_at: StoreAt) -> None:
    store = open_store(store_at.location, create=True)
    with pytest.raises(RuntimeError):
        with store.transaction():
            store.create_run(new_run())
            raise RuntimeError("boom")
    assert store.runs() == []
    store.close()


def test_unknown_run(store_at: StoreAt) -> None:
    store = open_store(store_at.location, create=True)
    with pytest.raises(NotFoundError, match="has no runs yet"):
        store.run("latest")
    with pytest.raises(NotFoundError, match="no run 7"):
        store.run("7")
    with pytest.raises(UsageError, match="id \\(a number\\) or 'latest'"):
        store.run("yesterday")
    store.close()


def test_an_empty_postgresql_database_is_no_store_for_readers(pg_server) -> None:
    url = pg_server.database()
    with pytest.raises(NotFoundError, match="no store at"):
        open_store(url, create=False)
    assert not StoreAt(url, "postgresql").exists()  # no table made


def test_missing_store_is_not_created_by_readers(store_path: Path) -> None:
    with pytest.raises(NotFoundError, match="no store at"):
        open_store(str(store_path), create=False)
    assert not store_path.exists()


def test_unwritable_location_names_path_and_fix(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    path = blocker / "sub" / "osmeter.db"  # a directory under a regular file: even root cannot
    with pytest.raises(StoreError) as e:
        open_store(str(path), create=True)
    assert str(path) in e.value.message and "--store" in e.value.message


def test_read_only_store_is_refused_before_writing(store_path: Path) -> None:
    open_store(str(store_path), create=True).close()
    # A read-only connection stands in for a read-only file (tests may run as root).
    import sqlalchemy as sa

    from osmeter.store import sqlite as backend

    engine = sa.create_engine(f"sqlite:///file:{store_path}?mode=ro&uri=true")
    sa.event.listen(engine, "connect", backend._on_connect)
    store = backend.SQLiteStore(engine, engine.connect(), store_path, {"write": True})
    with pytest.raises(StoreError, match="cannot write to the store") as e:
        store._check_writable()
    store.close()
    assert "is read-only" in e.value.message and "locked" not in e.value.message


def test_locked_read_only_file_says_read_only(store_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # What a read-only file can produce: SQLite reports it as busy ("database is locked").
    import sqlite3

    from osmeter.store import sqlite as backend

    open_store(str(store_path), create=True).close()
    monkeypatch.setattr(backend.os, "access", lambda path, mode: False)
    message = backend._explain(store_path, sqlite3.OperationalError("database is locked"), "write to")
    assert "is read-only" in message and str(store_path) in message


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes to read-only files")
def test_read_only_file_for_real(cli, store_path: Path) -> None:
    import_fixture(store_path)
    store_path.chmod(0o444)
    try:
        r = cli("import", "--again", str(DATA / "run_x86_64.jsonl"))
    finally:
        store_path.chmod(0o644)
    assert r.code == EXIT_STORE and "is read-only" in r.err


root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (mount, mknod)")


@contextlib.contextmanager
def read_only_mount(directory: Path) -> Iterator[None]:
    """`directory` bind-mounted read-only onto itself, so that even root cannot
    write there; always unmounted. Skips the test where mounting is not permitted
    (no CAP_SYS_ADMIN, as in most containers)."""
    if shutil.which("mount") is None:
        pytest.skip("no mount command")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(args, capture_output=True, text=True, check=False)

    def why(done: subprocess.CompletedProcess[str]) -> str:
        return (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[0]

    bound = run("mount", "--bind", str(directory), str(directory))
    if bound.returncode != 0:
        pytest.skip(f"mount --bind is not permitted here: {why(bound)}")
    try:
        remounted = run("mount", "-o", "remount,bind,ro", str(directory))
        if remounted.returncode != 0:
            pytest.skip(f"mount -o remount,bind,ro is not permitted here: {why(remounted)}")
        yield
    finally:
        if run("umount", str(directory)).returncode != 0:
            run("umount", "-l", str(directory))


@pytest.mark.root
@root
def test_read_only_mount_for_real(cli, store_path: Path) -> None:
    """The root variant of the test above: chmod does not stop root, a read-only mount does."""
    import_fixture(store_path)
    with read_only_mount(store_path.parent):
        r = cli("import", "--again", str(DATA / "run_x86_64.jsonl"))
        listed = cli("runs")  # reading still works
    assert r.code == EXIT_STORE and "is read-only" in r.err and "mounted read-only" in r.err, r.err
    assert listed.code == 0 and db_rows(store_path, "SELECT count(*) FROM runs") == [(1,)]


@pytest.mark.root
@root
def test_new_store_on_a_read_only_mount_says_so(cli, tmp_path: Path) -> None:
    place = tmp_path / "ro"
    place.mkdir()
    with read_only_mount(place):
        r = cli("import", "--store", str(place / "osmeter.db"), str(DATA / "run_x86_64.jsonl"))
    assert r.code == EXIT_STORE, r.err
    assert f"its directory {place} is on a file system mounted read-only" in r.err and "unable to open" not in r.err


@pytest.mark.root
@root
def test_store_that_is_a_device_is_refused(cli, tmp_path: Path) -> None:
    device = tmp_path / "null"
    os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # a /dev/null of our own
    for args in (["runs"], ["show", "1"], ["import", str(DATA / "run_x86_64.jsonl")]):
        r = cli(*args, "--store", str(device))
        assert r.code == EXIT_STORE, (args, r.err)
        assert f"the store {device} is a character device, not a regular file" in r.err, r.err
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("null")) == ["null"]  # no journal made


def _damage(store_path: Path, sql: str) -> None:
    conn = sqlite3.connect(store_path)
    conn.execute(sql)
    conn.commit()
    conn.close()


@pytest.mark.parametrize("column", ["argv", "params", "machine", "meta"])
def test_corrupt_run_column_is_a_store_error(cli, store_at: StoreAt, column: str) -> None:
    run_id = import_fixture(store_at.location)
    store_at.execute(f"UPDATE runs SET {column} = '{{not json' WHERE id = {run_id}")
    for args in (["runs"], ["show", str(run_id)]):
        r = cli(*args)
        assert r.code == EXIT_STORE, r.err
        assert f"run {run_id}, column '{column}' is not valid JSON" in r.err and "Traceback" not in r.err


@pytest.mark.parametrize(
    ("column", "value"),
    [("record", "'[1'"), ("params", "'{'"), ("extra", "'nope'"), ("repetitions", "'[1]'"),
     ("record", "'[]'")],
)
def test_corrupt_result_column_is_a_store_error(cli, store_at: StoreAt, column: str, value: str) -> None:
    run_id = import_fixture(store_at.location)
    store_at.execute(f"UPDATE results SET {column} = {value} WHERE run_id = {run_id} AND seq = 1")
    r = cli("show", str(run_id))
    assert r.code == EXIT_STORE, r.err
    assert f"run {run_id}, result 1, column '{column}'" in r.err and "Traceback" not in r.err


SHAPES = {  # damage both backends can hold: JSON of the wrong shape in a TEXT column
    "machine-array": ("UPDATE runs SET machine = '[1,2]' WHERE id = {run}", "machine", "a JSON array, not an object",
                      [["runs"], ["show", "{run}"], ["report", "{run}", "--format", "md", "-o", "{out}"],
                       ["mem-levels", "{run}"], ["compare", "{run}", "{other}"]]),
    "meta-string": ("UPDATE runs SET meta = '\"x\"' WHERE id = {run}", "meta", "a JSON string, not an object",
                    [["show", "{run}"], ["report", "{run}", "--format", "md", "-o", "{out}"],
                     ["compare", "{run}", "{other}"]]),
    "params-null": ("UPDATE runs SET params = 'null' WHERE id = {run}", "params", "JSON null, not an object",
                    [["compare", "{run}", "{other}"]]),
    "json-nan": ("UPDATE runs SET machine = '{{\"a\":NaN}}' WHERE id = {run}", "machine", "not valid JSON",
                 [["export", "{run}", "--format", "json"]]),
    "median-inf": ("UPDATE results SET median = {inf} WHERE run_id = {run} AND seq = 0", "median",
                   "inf, not a finite number", [["export", "{run}", "--format", "json"], ["show", "{run}", "--json"]]),
    "flags-numbers": ("UPDATE results SET flags = '[1]' WHERE run_id = {run} AND seq = 0", "flags",
                      "an array whose element 0 is a JSON number, not a string", [["show", "{run}"]]),
    "repetition-n-text": ("UPDATE results SET repetitions = '[{{\"n\":\"x\"}}]' WHERE run_id = {run} AND seq = 0",
                          "repetitions", "an array whose element 0 has 'n' of a JSON string, not an integer >= 0",
                          [["show", "{run}"]]),
}
TYPES = {  # damage only SQLite's loose column types can hold (a UTF-8 PostgreSQL database refuses
           # text that is not UTF-8, and a blob put in its TEXT column arrives as text, "\\x6869")
    "label-blob": ("UPDATE runs SET label = X'6869' WHERE id = {run}", "label", "a blob, not text",
                   [["runs"], ["export", "{run}", "--format", "json"]]),
    "label-not-utf8": ("UPDATE runs SET label = CAST(X'ff' AS TEXT) WHERE id = {run}", "label",
                       "text that is not UTF-8", [["runs"], ["show", "{run}"]]),
}


def _damaged_commands_say_so(cli, store_at: StoreAt, tmp_path: Path, case: tuple[str, str, str, list[list[str]]]) -> None:
    """A column of the right syntax but the wrong type or JSON shape (issue
    10): an error naming run, result and column, not a traceback."""
    sql, column, why, commands = case
    run_id, other = import_fixture(store_at.location), import_fixture(store_at.location)
    store_at.execute(sql.format(run=run_id, inf="9e999" if store_at.backend == "sqlite" else "'Infinity'"))
    result = ", result 0" if "results" in sql else ""
    for args in commands:
        args = [a.format(run=run_id, other=other, out=tmp_path / "report.md") for a in args]
        r = cli(*args)
        assert r.code == EXIT_STORE, (args, r.err)
        assert f"is damaged: run {run_id}{result}, column '{column}' is {why}" in r.err, r.err
        assert "Traceback" not in r.err


@pytest.mark.parametrize("case", list(SHAPES))
def test_wrong_shape_is_a_store_error(cli, store_at: StoreAt, tmp_path: Path, case: str) -> None:
    _damaged_commands_say_so(cli, store_at, tmp_path, SHAPES[case])


@pytest.mark.parametrize("case", list(TYPES))
def test_wrong_sqlite_type_is_a_store_error(cli, store_path: Path, tmp_path: Path, case: str) -> None:
    _damaged_commands_say_so(cli, StoreAt(str(store_path), "sqlite"), tmp_path, TYPES[case])


def test_runs_lists_the_runs_that_can_be_read_and_names_the_damaged(cli, store_at: StoreAt) -> None:
    """What the damaged-store message promises: `osmeter runs` still lists the others."""
    first = import_fixture(store_at.location)
    assert cli("import", "--again", str(DATA / "run_x86_64.jsonl")).code == 0
    store_at.execute(f"UPDATE runs SET machine = '[1,2]' WHERE id = {first}")
    r = cli("runs")
    assert r.code == EXIT_STORE
    listed = [line.split()[0] for line in r.out.splitlines()[2:]]
    assert listed == [str(first + 1)], r.out
    assert f"is damaged: run {first}, column 'machine' is" in r.err and "lists the runs that can still be read" in r.err
    j = cli("runs", "--json")
    assert j.code == EXIT_STORE and [x["id"] for x in json.loads(j.out)["runs"]] == [first + 1]
    store_at.execute(f"UPDATE runs SET machine = '[1,2]' WHERE id = {first + 1}")
    r = cli("runs")
    assert r.code == EXIT_STORE and "no runs" not in r.out and r.err.count("is damaged") == 2


@pytest.mark.parametrize(
    "blob",
    [b"not zlib", b"", zlib.compress(b"12345"), encode_samples([1.0, math.inf]), encode_samples([math.nan]),
     encode_samples([1e300]), zlib.compress(b"")],
    ids=["garbage", "empty", "odd-size", "infinite", "nan", "huge", "no-values"],
)
def test_corrupt_samples_blob_is_a_store_error(store_at: StoreAt, blob: bytes) -> None:
    run_id = import_fixture(store_at.location)
    store_at.execute("UPDATE results SET samples = ? WHERE run_id = ? AND seq = 0", blob, run_id)
    store = open_store(store_at.location, create=False)
    try:
        with pytest.raises(StoreError, match=f"run {run_id}, result 0, column 'samples' is not readable samples"):
            store.samples(run_id, 0)
    finally:
        store.close()


@pytest.mark.parametrize(
    ("sql", "value"),
    [("UPDATE results SET samples = ? WHERE run_id = ? AND seq = 0", zlib.compress(bytes(8 << 20))),
     ("UPDATE results SET n = 1 WHERE run_id = ? AND seq = 0", None)],
    ids=["blob-expands-past-n", "n-below-the-blob"],
)
def test_samples_and_n_that_disagree_name_both_columns(store_at: StoreAt, sql: str, value: bytes | None) -> None:
    """Either column may be the damaged one (a fuzzed n of 1 was once blamed on
    the samples alone): the error names both, and decompression stops at n."""
    run_id = import_fixture(store_at.location)
    store_at.execute(sql, *((value, run_id) if value is not None else (run_id,)))
    store = open_store(store_at.location, create=False)
    try:
        with pytest.raises(StoreError, match=f"run {run_id}, result 0, column 'n' is 1?[0-9]*, fewer than the "
                                             "values in column 'samples'"):
            store.samples(run_id, 0)
    finally:
        store.close()


def test_empty_store_option_is_a_usage_error(cli, store_path: Path) -> None:
    for args in (["runs", "--store", ""], ["import", "--store", " ", str(DATA / "run_x86_64.jsonl")]):
        r = cli(*args)
        assert r.code == EXIT_USAGE and "--store is empty" in r.err
    assert not store_path.exists()  # not silently the default store


@pytest.mark.parametrize("ref", ["9223372036854775808", "99999999999999999999999999", "-1", "0"])
def test_run_id_out_of_range_is_no_such_run(cli, store_at: StoreAt, ref: str) -> None:
    import_fixture(store_at.location)
    r = cli("show", "--", ref) if ref.startswith("-") else cli("show", ref)
    assert r.code == EXIT_NOT_FOUND, r.err
    assert f"no run {ref}" in r.err and "Traceback" not in r.err


@pytest.mark.parametrize("name", ["a" * 300 + "/osmeter.db", "a/" * 3000 + "osmeter.db"], ids=["long-name", "deep"])
def test_over_long_store_path_is_a_store_error(cli, tmp_path: Path, name: str) -> None:
    r = cli("runs", "--store", str(tmp_path / name))
    assert r.code == EXIT_STORE and "File name too long" in r.err and "Traceback" not in r.err
    r = cli("import", "--store", str(tmp_path / name), str(DATA / "run_x86_64.jsonl"))
    assert r.code == EXIT_STORE and "File name too long" in r.err


@pytest.mark.parametrize(
    "content",
    [b"this is not a database\n" * 50, b"SQLite format 3\x00" + b"\xff" * 200],
    ids=["text", "bad-header"],
)
def test_corrupt_store_is_refused_and_left_untouched(store_path: Path, content: bytes) -> None:
    store_path.parent.mkdir(parents=True)
    store_path.write_bytes(content)
    before = hashlib.sha256(store_path.read_bytes()).hexdigest()
    for create in (True, False):
        with pytest.raises(StoreError, match="left untouched"):
            open_store(str(store_path), create=create)
    assert hashlib.sha256(store_path.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in store_path.parent.iterdir()) == ["osmeter.db"]


def test_foreign_database_is_refused(store_at: StoreAt) -> None:
    if store_at.backend == "sqlite":
        Path(store_at.location).parent.mkdir(parents=True)
    store_at.execute("CREATE TABLE mine (x INTEGER)")
    with pytest.raises(StoreError, match="not an osmeter store"):
        open_store(store_at.location, create=True)
    with pytest.raises(StoreError, match="not an osmeter store"):
        open_store(store_at.location, create=False)
    tables = ("SELECT name FROM sqlite_master" if store_at.backend == "sqlite" else
              "SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
    assert store_at.rows(tables) == [("mine",)]


def test_directory_as_store_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="is a directory"):
        open_store(str(tmp_path), create=True)


@pytest.mark.parametrize("url", ["postgresql://user:secret@127.0.0.1:1/osm", "postgres://user:secret@127.0.0.1:1/osm",
                                 "postgresql://user:se/cret@127.0.0.1:1/osm", "postgresql://user:se%40cret@127.0.0.1:1/osm",
                                 "postgresql://user:se?cret@127.0.0.1:1/osm",
                                 "postgresql://user@127.0.0.1:1/osm?password=secret"])
def test_postgresql_server_that_does_not_answer_is_a_clear_error(url: str) -> None:
    """The password never shows: in the user part (whatever it holds) or as a parameter."""
    with pytest.raises(StoreError, match="no PostgreSQL server answers there") as e:
        open_store(url, create=True)
    assert "secret" not in e.value.message and "cret" not in e.value.message
    assert "user@127.0.0.1:1/osm" in e.value.message


@pytest.mark.parametrize(("url", "why"), [("postgresql://user:secret@db:notaport/osm", "cannot be read as a PostgreSQL URL"),
                                          ("postgresql://user:se@cret@db/osm", "holds an '@'; write it as %40")])
def test_a_url_that_cannot_be_used_is_an_error_without_its_password(url: str, why: str) -> None:
    with pytest.raises(StoreError, match=why) as e:
        open_store(url, create=True)
    assert "secret" not in e.value.message and "cret" not in e.value.message


@pytest.mark.parametrize(("url", "why"), [("postgresql://127.0.0.1", "names no database"),
                                          ("mysql://db/osm", "unknown store URL scheme 'mysql://'")])
def test_unusable_store_url_is_refused(url: str, why: str) -> None:
    with pytest.raises(StoreError, match=why):
        open_store(url, create=True)


def test_postgresql_database_that_does_not_exist_says_createdb(pg_server) -> None:
    url = pg_server.database().replace("/t", "/nosuch", 1)
    with pytest.raises(StoreError, match="does not exist.*createdb"):
        open_store(url, create=True)


def test_location_precedence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OSMETER_STORE", "/env/store.db")
    assert resolve_location("/cli/store.db") == "/cli/store.db"
    assert resolve_location(None) == "/env/store.db"
    monkeypatch.delenv("OSMETER_STORE")
    monkeypatch.setenv("XDG_DATA_HOME", "/xdg")
    assert resolve_location(None) == "/xdg/osmeter/osmeter.db"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert default_location() == str(tmp_path / ".local" / "share" / "osmeter" / "osmeter.db")


def test_quick_decoding_paths_read_what_the_careful_ones_read() -> None:
    """decode's quick paths (a repetition as to_dict writes it, statistics that are all finite floats) give
    the objects the careful paths give, and anything else goes the careful way: integers are taken as
    numbers, NULL statistics as NaN, damage is refused with its reason."""
    from osmeter.repeats import Repetition
    from osmeter.store import decode

    reps = [Repetition("ok", 100, 1.5, 1.4, 1.6, 2, "precision", ("unstable",), 0.25, None),
            Repetition("skip", reason="needs root"), Repetition("error", 0, reason="died")]
    for rep in reps:
        d = json.loads(json.dumps(rep.to_dict()))
        assert decode._plain_repetition(d) is not None
        got, want = decode._repetition(0, d), Repetition.from_dict(d)
        assert repr(got) == repr(want)  # NaN fields compare by their text
    as_ints = {"status": "ok", "n": 3, "median": 2, "ci_low": 1, "ci_high": 3}
    assert decode._plain_repetition(as_ints) is None
    assert decode._repetition(0, as_ints) == Repetition("ok", 3, 2.0, 1.0, 3.0)
    for bad, why in (({"n": True}, "'n' of JSON true/false"), ({"flags": [1]}, "'flags' of a JSON array"),
                     ({"status": "maybe"}, "'status'"), ({"median": "1"}, "'median' of a JSON string")):
        assert decode._plain_repetition(bad) is None
        with pytest.raises(decode.Corrupt, match=re.escape(why)):
            decode._repetition(0, bad)
    row = {c: float(i + 1) for i, c in enumerate(decode.SUMMARY_COLUMNS)}
    row.update(n=10, outliers=1, kbest_stable=1)
    quick = decode._summary(row)
    assert quick.median == row["median"] and quick.n == 10 and quick.kbest_stable is True
    careful = decode._summary(dict(row, std=None, p1=3))  # NULL (NaN) and an integer: the careful path
    assert math.isnan(careful.std) and careful.p1 == 3.0 and type(careful.p1) is float
    assert careful.median == quick.median
    with pytest.raises(decode.Corrupt, match="not a number"):
        decode._summary(dict(row, p5="x"))
    for bad in (math.inf, -math.inf, math.nan):  # one among finite floats: the careful path refuses it
        with pytest.raises(decode.Corrupt):
            decode._summary(dict(row, p99=bad))


def test_objects_built_without_init_are_the_dataclasses_own(store_path: Path) -> None:
    """decode.built makes Summary, Repetition and BenchResult without their __init__: every field set,
    equal to (and hashing like) the object the constructor makes, still frozen; results read in bulk
    get params of their own (a copy of the parsed text shared by the rows of one parameter set)."""
    import dataclasses

    from osmeter.model import BenchResult

    import_fixture(store_path)
    import_fixture(store_path)
    store = open_store(str(store_path), create=False)
    try:
        read = store.figures([1, 2])
        whole = store.results(1)
    finally:
        store.close()
    ok = [r for r in whole if r.status == "ok"]
    assert ok and read[1] and len(read[1]) == len(read[2])
    for r in ok:
        for obj in (r, r.summary, *r.repetitions):
            names = [f.name for f in dataclasses.fields(obj)]
            assert sorted(vars(obj)) == sorted(names)
            again = type(obj)(**{n: getattr(obj, n) for n in names})
            assert repr(again) == repr(obj)  # NaN fields compare by their text
        assert hash(r.summary) == hash(type(r.summary)(**vars(r.summary)))
        with pytest.raises(dataclasses.FrozenInstanceError):
            r.summary.median = 0.0  # type: ignore[misc]
    with_params = [(a, b) for a, b in zip(read[1], read[2]) if a.params]
    assert with_params
    a, b = with_params[0]
    assert a.params == b.params and a.params is not b.params
    a.params["changed"] = 1
    assert "changed" not in b.params
    for x in whole:  # what BenchResult.__post_init__ checks, which built() skips, holds by construction
        BenchResult.__post_init__(x)


def test_light_read_holds_the_median_interval_and_n_and_nan_for_the_rest(store_path: Path) -> None:
    """SQLStore.figures (compare --by's read) reads of the statistics only decode.LIGHT_STATS, the same
    values results() reads; every other statistic is NaN (outliers 0), so none can pass as a figure;
    damage in a column it reads is still refused."""
    import dataclasses

    from osmeter.store import decode

    import_fixture(store_path)
    store = open_store(str(store_path), create=False)
    try:
        light, whole = store.figures([1])[1], store.results(1)
    finally:
        store.close()
    assert [(r.seq, r.status, r.unit) for r in light] == [(r.seq, r.status, r.unit) for r in whole]
    ok = [(a, b) for a, b in zip(light, whole) if b.status == "ok"]
    assert ok
    for a, b in ok:
        assert a.summary is not None and b.summary is not None
        assert (a.summary.n, a.summary.median, a.summary.ci_low, a.summary.ci_high) == \
            (b.summary.n, b.summary.median, b.summary.ci_low, b.summary.ci_high)
        rest = [f.name for f in dataclasses.fields(a.summary) if f.name not in decode.LIGHT_STATS]
        assert rest and all(math.isnan(getattr(a.summary, f)) for f in rest if f not in ("outliers", "kbest_stable"))
        assert a.summary.outliers == 0 and a.summary.kbest_stable is False
        assert not math.isnan(b.summary.p99)  # the whole read has them
    row = {"median": 2.0, "ci_low": 1.0, "ci_high": 3.0, "n": 5}
    assert decode._light_summary(dict(row, median=2)).median == 2.0  # an integer: the careful path
    for bad in ({"median": "x"}, {"ci_high": math.inf}, {"n": 0}):
        with pytest.raises(decode.Corrupt):
            decode._light_summary(dict(row, **bad))


def test_canonical_params_remembered_per_type() -> None:
    """1, 1.0 and True are equal in Python and different parameters: the remembered canonical texts
    keep them apart; an unhashable value takes the slow path."""
    from osmeter.comparing import instance_keys
    from osmeter.model import BenchResult

    results = [BenchResult(i, "x.y", {"v": v}, "skip", reason="r") for i, v in enumerate([1, 1.0, True, [1], 1])]
    keys = list(instance_keys(results))
    assert [k[1] for k in keys] == ['{"v":1}', '{"v":1.0}', '{"v":true}', '{"v":[1]}', '{"v":1}']
    assert [k[2] for k in keys] == [0, 0, 0, 0, 1]


def test_revision_0010_fills_in_the_quartiles_and_modes_of_results_stored_before(tmp_path: Path) -> None:
    """A store of 0009 (no p25/p75/mode columns) opened by this osmeter: each result's quartiles and
    modes come from its own samples; `bimodal` is added where one repetition's samples have two modes,
    not where two repetitions sit at two levels; a result whose samples are damaged keeps NULL."""
    import sqlite3

    import numpy as np

    from tests.synthetic import add_run

    rng = np.random.default_rng(11)
    two = np.concatenate([rng.normal(1600, 30, 800), rng.normal(1900, 40, 1200)])
    levels = np.concatenate([rng.normal(1600, 30, 1000), rng.normal(1900, 40, 1000)])  # two repetitions
    calm = rng.normal(1000, 10, 2000)
    path = tmp_path / "s.db"
    add_run(path, [("a.two", {}, "ns", two), ("b.levels", {}, "ns", levels), ("c.calm", {}, "ns", calm),
                   ("d.damaged", {}, "ns", calm)])
    db = sqlite3.connect(path)
    reps = json.dumps([{"status": "ok", "n": 1000}, {"status": "ok", "n": 1000}])
    db.execute("UPDATE results SET repetitions = ? WHERE seq = 1", (reps,))
    db.execute("UPDATE results SET samples = x'00' WHERE seq = 3")
    for c in ("p25", "p75", "mode_low", "mode_high"):
        db.execute(f"ALTER TABLE results DROP COLUMN {c}")
    db.execute("UPDATE results SET flags = '[]'")
    db.execute("UPDATE alembic_version SET version_num = '0009'")
    db.execute("DELETE FROM schema_migrations WHERE version = 10")
    db.commit()
    db.close()
    store = open_store(str(path), create=False)
    try:
        assert store.schema_version() == head_version()
        got = {r.bench: r for r in store.results(1)}
    finally:
        store.close()
    for name, x in (("a.two", two), ("b.levels", levels), ("c.calm", calm)):
        s = got[name].summary
        assert s is not None and [s.p25, s.p75] == pytest.approx(list(np.percentile(x, [25, 75])), rel=1e-12)
    assert got["a.two"].flags == ("bimodal",) and got["a.two"].summary.mode_low == pytest.approx(1600, rel=0.03)
    assert got["b.levels"].flags == () and got["b.levels"].summary.bimodal  # the pooled modes, not the flag
    assert got["c.calm"].flags == () and not got["c.calm"].summary.bimodal
    damaged = got["d.damaged"].summary
    assert damaged is not None and math.isnan(damaged.p25) and math.isnan(damaged.mode_low)
