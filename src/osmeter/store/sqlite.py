"""SQLite backend (stdlib sqlite3).

Each write commits before it returns (so a result survives a crash a moment
later), except inside transaction(), which `osmeter import` uses to store a
whole file or nothing. The schema comes from the numbered files in
migrations/, applied in order, each in one transaction, and recorded in
schema_migrations.
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
from contextlib import contextmanager
from dataclasses import dataclass, fields
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path
from typing import Any, Iterator

from ..errors import NotFoundError, StoreError, UsageError
from ..model import BenchResult, Counts, NewRun, RunInfo
from ..repeats import Repetition
from ..records import canonical_params
from ..stats import FloatArray, Summary
from .base import decode_samples, encode_samples

_MIGRATION_NAME = re.compile(r"^(\d{4})_(\w+)\.sql$")
_FIX = "choose another location with --store PATH or OSMETER_STORE"
_SUMMARY_COLUMNS = tuple(f.name for f in fields(Summary))


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str


def migrations() -> list[Migration]:
    """The migrations shipped with this osmeter, in order."""
    found = []
    for entry in (resources.files("osmeter.store") / "migrations").iterdir():
        m = _MIGRATION_NAME.match(entry.name)
        if m:
            found.append(Migration(int(m.group(1)), m.group(2), entry.read_text(encoding="utf-8")))
    found.sort(key=lambda mig: mig.version)
    if [mig.version for mig in found] != list(range(1, len(found) + 1)):
        raise RuntimeError("store migrations must be numbered 0001, 0002, ... without gaps")
    return found


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _real(value: float | None) -> float | None:
    """SQLite has no NaN: store it as NULL."""
    return None if value is None or math.isnan(value) else value


def _float(value: Any) -> float:
    return math.nan if value is None else float(value)


def _summary_columns(summary: Summary | None) -> dict[str, Any]:
    """The statistics columns of a result row; NULL throughout for skip and error."""
    if summary is None:
        return dict.fromkeys(_SUMMARY_COLUMNS)
    values = {c: getattr(summary, c) for c in _SUMMARY_COLUMNS}
    return {c: _real(v) if isinstance(v, float) else int(v) for c, v in values.items()}


def _summary_from_row(row: sqlite3.Row) -> Summary:
    def column(name: str) -> Any:
        if name in ("n", "outliers"):
            return int(row[name])
        if name == "kbest_stable":
            return bool(row[name])
        return _float(row[name])

    return Summary(**{c: column(c) for c in _SUMMARY_COLUMNS})


class SQLiteStore:
    """A store in one SQLite file."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self._conn = conn
        self.path = path
        self.location = str(path)
        self._in_transaction = False

    # --- opening -----------------------------------------------------

    @classmethod
    def open(cls, path: Path, *, create: bool) -> "SQLiteStore":
        if path.is_dir():
            raise StoreError(f"store {path} is a directory; give the path of a file, or {_FIX}")
        if not path.exists():
            if not create:
                raise NotFoundError(f"no store at {path}: nothing has been run or imported there yet")
            cls._make_parent(path)
        try:
            conn = sqlite3.connect(str(path), isolation_level=None, timeout=10.0)
        except sqlite3.Error as e:
            raise StoreError(f"cannot open the store {path}: {e}; make it readable and writable, or {_FIX}") from None
        store = cls(conn, path)
        try:
            store._check_is_store()
            store._migrate()
            if create:
                store._check_writable()
            conn.execute("PRAGMA foreign_keys = ON")
        except BaseException:
            conn.close()
            raise
        return store

    @staticmethod
    def _make_parent(path: Path) -> None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise StoreError(
                f"cannot create the store {path}: {e.strerror} ({e.filename}); "
                f"create that directory with write permission, or {_FIX}"
            ) from None

    def _check_is_store(self) -> None:
        try:
            names = {row[0] for row in self._conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        except sqlite3.DatabaseError as e:
            raise StoreError(
                f"{self.path} is not a usable osmeter store ({e}); it was left untouched: "
                f"move it aside to start a new store, or {_FIX}"
            ) from None
        if names and "schema_migrations" not in names:
            raise StoreError(
                f"{self.path} is an SQLite database but not an osmeter store; it was left untouched: {_FIX}"
            )

    def schema_version(self) -> int:
        try:
            row = self._conn.execute("SELECT max(version) FROM schema_migrations").fetchone()
        except sqlite3.OperationalError:  # no table yet: a new, empty file
            return 0
        return int(row[0] or 0)

    def _migrate(self) -> None:
        current = self.schema_version()
        known = migrations()
        if current > len(known):
            raise StoreError(
                f"store {self.path} has schema version {current}, newer than this osmeter knows "
                f"(up to {len(known)}); upgrade osmeter, or {_FIX}"
            )
        for mig in known[current:]:
            # executescript() runs the file as it is; version and name come from
            # our own file names (\d{4} and \w+), so formatting them in is safe.
            script = (
                "BEGIN IMMEDIATE;\n"
                "CREATE TABLE IF NOT EXISTS schema_migrations (\n"
                "  version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL);\n"
                f"{mig.sql}\n"
                "INSERT INTO schema_migrations (version, name, applied_at)"
                f" VALUES ({mig.version}, '{mig.name}', '{_now()}');\n"
                "COMMIT;"
            )
            try:
                self._conn.executescript(script)
            except sqlite3.Error as e:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise StoreError(
                    f"cannot set up the store {self.path} (migration {mig.version:04d}): {e}; {_FIX}"
                ) from None

    def _check_writable(self) -> None:
        """A real (rolled back) write, so a read-only store fails now, not mid-run."""
        try:
            self._conn.execute("BEGIN IMMEDIATE")
            self._conn.execute("CREATE TABLE osmeter_write_check (x)")
        except sqlite3.Error as e:
            raise StoreError(
                f"cannot write to the store {self.path}: {e}; make the file and its directory writable, or {_FIX}"
            ) from None
        finally:
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK")

    def close(self) -> None:
        self._conn.close()

    # --- writing -----------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """All writes inside are committed together, or none of them."""
        if self._in_transaction:
            raise RuntimeError("transactions do not nest")
        with self._write():
            self._in_transaction = True
            try:
                yield
            finally:
                self._in_transaction = False

    @contextmanager
    def _write(self) -> Iterator[None]:
        if self._in_transaction:
            yield
            return
        try:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")
        except sqlite3.Error as e:
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK")
            raise StoreError(f"cannot write to the store {self.path}: {e}") from None

    def create_run(self, run: NewRun) -> int:
        with self._write():
            cur = self._conn.execute(
                "INSERT INTO runs (label, start_time, status, source, osmeter_version, probe_version, suite,"
                " argv, params, machine, meta) VALUES (?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    run.label,
                    run.start_time,
                    run.source,
                    run.osmeter_version,
                    run.probe_version,
                    run.suite,
                    _json(run.argv),
                    _json(run.params),
                    _json(run.machine),
                    _json(run.meta),
                ),
            )
            assert cur.lastrowid is not None
            return cur.lastrowid

    @staticmethod
    def _result_row(run_id: int, result: BenchResult, samples: FloatArray | None) -> dict[str, Any]:
        return {
            "run_id": run_id,
            "seq": result.seq,
            "bench": result.bench,
            "params": canonical_params(result.params),
            "unit": result.unit,
            "status": result.status,
            "reason": result.reason,
            **_summary_columns(result.summary),
            "batch": result.batch,
            "samples": None if samples is None else encode_samples(samples),
            "extra": _json(result.extra),
            "counters": None if result.counters is None else _json(result.counters),
            "record": _json(result.record),
            "flags": _json(list(result.flags)),
            "repetitions": _json([r.to_dict() for r in result.repetitions]),
        }

    def add_result(self, run_id: int, result: BenchResult, samples: FloatArray | None) -> None:
        row = self._result_row(run_id, result, samples)
        sql = f"INSERT INTO results ({', '.join(row)}) VALUES ({', '.join(':' + c for c in row)})"
        with self._write():
            self._conn.execute(sql, row)

    def replace_result(self, run_id: int, result: BenchResult, samples: FloatArray | None) -> None:
        """The result of seq `result.seq` replaced (another repetition came in)."""
        row = self._result_row(run_id, result, samples)
        sets = ", ".join(f"{c} = :{c}" for c in row if c not in ("run_id", "seq"))
        with self._write():
            cur = self._conn.execute(f"UPDATE results SET {sets} WHERE run_id = :run_id AND seq = :seq", row)
            if cur.rowcount != 1:
                raise StoreError(f"cannot update result {result.seq} of run {run_id} in {self.path}: no such result")

    def set_counters(self, run_id: int, seq: int, counters: dict[str, Any]) -> None:
        with self._write():
            self._conn.execute(
                "UPDATE results SET counters = ? WHERE run_id = ? AND seq = ?", (_json(counters), run_id, seq)
            )

    def finish_run(self, run_id: int, status: str, end_time: str, reason: str | None) -> None:
        with self._write():
            self._conn.execute(
                "UPDATE runs SET status = ?, end_time = ?, status_reason = ? WHERE id = ?",
                (status, end_time, reason, run_id),
            )

    # --- reading -----------------------------------------------------

    def _read(self, sql: str, args: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        try:
            cur = self._conn.execute(sql, args)
            cur.row_factory = sqlite3.Row
            return cur.fetchall()
        except sqlite3.DatabaseError as e:
            raise StoreError(f"cannot read the store {self.path}: {e}") from None

    _RUNS_SQL = (
        "SELECT runs.*, "
        " (SELECT count(*) FROM results r WHERE r.run_id = runs.id AND r.status = 'ok') AS n_ok,"
        " (SELECT count(*) FROM results r WHERE r.run_id = runs.id AND r.status = 'skip') AS n_skip,"
        " (SELECT count(*) FROM results r WHERE r.run_id = runs.id AND r.status = 'error') AS n_error"
        " FROM runs"
    )

    @staticmethod
    def _run_from_row(row: sqlite3.Row) -> RunInfo:
        return RunInfo(
            id=row["id"],
            label=row["label"],
            start_time=row["start_time"],
            end_time=row["end_time"],
            status=row["status"],
            status_reason=row["status_reason"],
            source=row["source"],
            osmeter_version=row["osmeter_version"],
            probe_version=row["probe_version"],
            suite=row["suite"],
            argv=json.loads(row["argv"]),
            params=json.loads(row["params"]),
            machine=json.loads(row["machine"]),
            meta=json.loads(row["meta"]),
            counts=Counts(ok=row["n_ok"], skip=row["n_skip"], error=row["n_error"]),
        )

    def runs(self) -> list[RunInfo]:
        return [self._run_from_row(r) for r in self._read(self._RUNS_SQL + " ORDER BY runs.id")]

    def run(self, ref: str) -> RunInfo:
        """A run by id or `latest`."""
        if ref == "latest":
            rows = self._read(self._RUNS_SQL + " ORDER BY runs.id DESC LIMIT 1")
            if not rows:
                raise NotFoundError(f"the store {self.path} has no runs yet")
            return self._run_from_row(rows[0])
        try:
            run_id = int(ref)
        except ValueError:
            raise UsageError(f"a run is given by its id (a number) or 'latest', not {ref!r}") from None
        rows = self._read(self._RUNS_SQL + " WHERE runs.id = ?", (run_id,))
        if not rows:
            raise NotFoundError(f"no run {run_id} in the store {self.path}; `osmeter runs` lists the runs there")
        return self._run_from_row(rows[0])

    @staticmethod
    def _result_from_row(row: sqlite3.Row) -> BenchResult:
        record = json.loads(row["record"])
        # Stored before migration 0003: the flags the probe's record carries.
        flags = json.loads(row["flags"]) if row["flags"] else record.get("flags", [])
        flags = [f for f in flags if isinstance(f, str)] if isinstance(flags, list) else []
        return BenchResult(
            seq=row["seq"],
            bench=row["bench"],
            params=json.loads(row["params"]),
            status=row["status"],
            unit=row["unit"],
            reason=row["reason"],
            summary=_summary_from_row(row) if row["status"] == "ok" else None,
            batch=row["batch"],
            extra=json.loads(row["extra"]) if row["extra"] else {},
            counters=json.loads(row["counters"]) if row["counters"] else None,
            record=record,
            flags=tuple(flags),
            repetitions=tuple(Repetition.from_dict(r) for r in json.loads(row["repetitions"] or "[]")),
        )

    def results(self, run_id: int) -> list[BenchResult]:
        rows = self._read(
            f"SELECT seq, bench, params, status, unit, reason, batch, extra, counters, record, flags, repetitions, "
            f"{', '.join(_SUMMARY_COLUMNS)} FROM results WHERE run_id = ? ORDER BY seq",
            (run_id,),
        )
        return [self._result_from_row(r) for r in rows]

    def samples(self, run_id: int, seq: int) -> FloatArray | None:
        rows = self._read("SELECT samples FROM results WHERE run_id = ? AND seq = ?", (run_id, seq))
        if not rows or rows[0]["samples"] is None:
            return None
        return decode_samples(rows[0]["samples"])
