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
import os
import re
import sqlite3
import stat
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path
from typing import Any, Iterator, Sequence

from ..errors import NotFoundError, StoreError, UsageError
from ..model import BenchResult, NewRun, RunInfo, StoredProfile
from ..records import canonical_params
from ..stats import FloatArray, Summary
from . import decode
from .base import encode_samples
from .decode import SUMMARY_COLUMNS, Corrupt

_MIGRATION_NAME = re.compile(r"^(\d{4})_(\w+)\.sql$")
_FIX = "choose another location with --store PATH or OSMETER_STORE"
MAX_RUN_ID = 2**63 - 1  # SQLite's INTEGER PRIMARY KEY


def _errorname(e: sqlite3.Error) -> str:
    return str(getattr(e, "sqlite_errorname", "") or "")


def _read_only_mount(path: Path) -> bool:
    """Whether the file (or, when it does not exist, its directory) is on a file system mounted read-only."""
    for place in (path, path.parent):
        try:
            return bool(os.statvfs(place).f_flag & os.ST_RDONLY)
        except OSError:
            continue
    return False


def _explain(path: Path, e: sqlite3.Error, doing: str, fix: str = "") -> str:
    """An SQLite failure in words that say what to do (`fix` ends the message when nothing better is known)."""
    name, text = _errorname(e), str(e)
    read_only = name.startswith("SQLITE_READONLY") or "readonly database" in text
    busy = name == "SQLITE_BUSY" or "database is locked" in text
    if (read_only or busy) and _read_only_mount(path):
        return (f"cannot {doing} the store {path}: it is read-only (on a file system mounted read-only); "
                f"remount it read-write, or {_FIX}")
    if read_only:
        where = "its directory" if name == "SQLITE_READONLY_DIRECTORY" else "the file or its directory"
        return (f"cannot {doing} the store {path}: it is read-only ({where} is not writable by this user); "
                f"make both writable, or {_FIX}")
    if busy:
        if not os.access(path, os.W_OK) or not os.access(path.parent, os.W_OK):
            return (f"cannot {doing} the store {path}: it is read-only (the file or its directory is not writable "
                    f"by this user); make both writable, or {_FIX}")
        return (f"cannot {doing} the store {path}: another process holds it locked (database is locked); "
                "wait for it to finish and try again")
    if name == "SQLITE_FULL" or "disk is full" in text:
        return f"cannot {doing} the store {path}: the disk is full; free some space, or {_FIX}"
    if (name == "SQLITE_CANTOPEN" or "unable to open database file" in text) and not path.exists():
        if _read_only_mount(path.parent):
            return (f"cannot create the store {path}: its directory {path.parent} is on a file system mounted "
                    f"read-only; {_FIX}")
        if not os.access(path.parent, os.W_OK):
            return (f"cannot create the store {path}: its directory {path.parent} is not writable by this user; "
                    f"make it writable, or {_FIX}")
    return f"cannot {doing} the store {path}: {e}" + (f"; {fix}" if fix else "")


def _file_kind(path: Path) -> str | None:
    """What is at `path` (symbolic links followed), in words; None when nothing is."""
    try:
        mode = path.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None
    kinds = ((stat.S_ISREG, "a regular file"), (stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
             (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISSOCK, "a socket"))
    return next((what for test, what in kinds if test(mode)), "not a regular file")


def _corrupt(path: Path, run_id: Any, e: Corrupt, seq: Any = None) -> StoreError:
    what = f"run {run_id}" + ("" if seq is None else f", result {seq}" if isinstance(seq, int) else ", a result")
    return StoreError(f"the store {path} is damaged: {what}, column '{e.column}' is {e.why}; "
                      f"`osmeter runs` lists the runs that can still be read; restore the store from a backup, or "
                      f"{_FIX}")


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


def _summary_columns(summary: Summary | None) -> dict[str, Any]:
    """The statistics columns of a result row; NULL throughout for skip and error."""
    if summary is None:
        return dict.fromkeys(SUMMARY_COLUMNS)
    values = {c: getattr(summary, c) for c in SUMMARY_COLUMNS}
    return {c: _real(v) if isinstance(v, float) else int(v) for c, v in values.items()}


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
        try:
            return cls._open(path, create=create)
        except OSError as e:  # a name too long, a path through a file, ...
            raise StoreError(f"cannot use the store {path}: {e.strerror}; {_FIX}") from None

    @classmethod
    def _open(cls, path: Path, *, create: bool) -> "SQLiteStore":
        kind = _file_kind(path)
        if kind == "a directory":
            raise StoreError(f"store {path} is a directory; give the path of a file, or {_FIX}")
        if kind is None:
            if not create:
                raise NotFoundError(f"no store at {path}: nothing has been run or imported there yet")
            cls._make_parent(path)
        elif kind != "a regular file":  # SQLite would read a device or wait on a FIFO; it was left untouched
            raise StoreError(f"the store {path} is {kind}, not a regular file; a store is an SQLite file: "
                             f"give the path of one, or of a file to create, or {_FIX}")
        try:
            conn = sqlite3.connect(str(path), isolation_level=None, timeout=10.0)
            conn.text_factory = decode.text_factory  # text that is not UTF-8: named as damage, not a failed query
        except sqlite3.Error as e:
            raise StoreError(_explain(path, e, "open", f"make it readable and writable, or {_FIX}")) from None
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
                raise StoreError(f"{_explain(self.path, e, f'upgrade (migration {mig.version:04d})')}") from None

    def _check_writable(self) -> None:
        """A real (rolled back) write, so a read-only store fails now, not mid-run."""
        try:
            self._conn.execute("BEGIN IMMEDIATE")
            self._conn.execute("CREATE TABLE osmeter_write_check (x)")
        except sqlite3.Error as e:
            raise StoreError(_explain(self.path, e, "write to")) from None
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
            raise StoreError(_explain(self.path, e, "write to")) from None

    def create_run(self, run: NewRun) -> int:
        with self._write():
            cur = self._conn.execute(
                "INSERT INTO runs (label, start_time, status, source, osmeter_version, probe_version, suite,"
                " argv, params, machine, meta, host, fleet) VALUES (?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
                    run.host,
                    run.fleet,
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

    def add_profile(self, run_id: int, seq: int, record: dict[str, Any]) -> None:
        """The profile record of result `seq` (one per result; a second replaces it)."""
        meta = {k: v for k, v in record.items() if k not in decode.PROFILE_HEADER}
        with self._write():
            self._conn.execute(
                "INSERT OR REPLACE INTO profiles (run_id, seq, status, mode, meta, stacks) VALUES (?, ?, ?, ?, ?, ?)",
                (run_id, seq, record["status"], record["mode"], _json(meta),
                 decode.encode_stacks(record.get("stacks") or [])))

    def profiles(self, run_id: int) -> list[StoredProfile]:
        rows = self._read(
            "SELECT p.seq, p.status, p.mode, p.meta, p.stacks, r.bench, r.params FROM profiles p "
            "JOIN results r ON r.run_id = p.run_id AND r.seq = p.seq WHERE p.run_id = ? ORDER BY p.seq", (run_id,))
        out = []
        for r in rows:
            try:
                out.append(StoredProfile(run_id=run_id, seq=r["seq"], bench=decode.text(r, "bench"),
                                         params=decode.json_object(r, "params"), status=decode.text(r, "status"),
                                         mode=decode.text(r, "mode"), meta=decode.json_object(r, "meta"),
                                         stacks=decode.decode_stacks(r["stacks"])))
            except Corrupt as e:
                raise _corrupt(self.path, run_id, e, r["seq"]) from None
        return out

    def set_content_hash(self, run_id: int, digest: str, file_digests: Sequence[str] = ()) -> None:
        """What an imported run was made from: the digest of the whole import
        (migration 0004) and of each file, in order (0005)."""
        with self._write():
            self._conn.execute("UPDATE runs SET content_sha256 = ? WHERE id = ?", (digest, run_id))
            self._conn.executemany("INSERT INTO imported_files (run_id, position, sha256) VALUES (?, ?, ?)",
                                   [(run_id, i, d) for i, d in enumerate(file_digests)])

    def runs_with_content(self, digest: str) -> list[int]:
        """The runs imported from the same bytes: the same import, or a file
        among others (0005), or alone before 0005 (its content_sha256)."""
        rows = self._read("SELECT id FROM runs WHERE content_sha256 = ? UNION "
                          "SELECT run_id FROM imported_files WHERE sha256 = ? ORDER BY 1", (digest, digest))
        return [int(r[0]) for r in rows]

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
            raise StoreError(_explain(self.path, e, "read")) from None

    _RUNS_SQL = (
        "SELECT runs.*, "
        " (SELECT count(*) FROM results r WHERE r.run_id = runs.id AND r.status = 'ok') AS n_ok,"
        " (SELECT count(*) FROM results r WHERE r.run_id = runs.id AND r.status = 'skip') AS n_skip,"
        " (SELECT count(*) FROM results r WHERE r.run_id = runs.id AND r.status = 'error') AS n_error"
        " FROM runs"
    )

    def _run_from_row(self, row: sqlite3.Row) -> RunInfo:
        try:
            return decode.run(row)
        except Corrupt as e:
            raise _corrupt(self.path, row["id"], e) from None

    def runs(self) -> list[RunInfo]:
        return [self._run_from_row(r) for r in self._read(self._RUNS_SQL + " ORDER BY runs.id")]

    def readable_runs(self) -> tuple[list[RunInfo], list[StoreError]]:
        """Every run that can be read, and why each other one cannot (`osmeter
        runs` lists the first and names the second)."""
        good, damaged = [], []
        for row in self._read(self._RUNS_SQL + " ORDER BY runs.id"):
            try:
                good.append(self._run_from_row(row))
            except StoreError as e:
                damaged.append(e)
        return good, damaged

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
        if not 1 <= run_id <= MAX_RUN_ID:
            raise NotFoundError(f"no run {ref} in the store {self.path}: run ids are 1 to {MAX_RUN_ID}; "
                                "`osmeter runs` lists the runs there")
        rows = self._read(self._RUNS_SQL + " WHERE runs.id = ?", (run_id,))
        if not rows:
            raise NotFoundError(f"no run {run_id} in the store {self.path}; `osmeter runs` lists the runs there")
        return self._run_from_row(rows[0])

    def results(self, run_id: int) -> list[BenchResult]:
        rows = self._read(
            f"SELECT seq, bench, params, status, unit, reason, batch, extra, counters, record, flags, repetitions, "
            f"{', '.join(SUMMARY_COLUMNS)} FROM results WHERE run_id = ? ORDER BY seq",
            (run_id,),
        )
        out = []
        for r in rows:
            try:
                out.append(decode.result(r))
            except Corrupt as e:
                raise _corrupt(self.path, run_id, e, r["seq"]) from None
        return out

    def samples(self, run_id: int, seq: int) -> FloatArray | None:
        rows = self._read("SELECT samples, n FROM results WHERE run_id = ? AND seq = ?", (run_id, seq))
        if not rows or rows[0]["samples"] is None:
            return None
        try:
            return decode.samples(rows[0]["samples"], rows[0]["n"])
        except Corrupt as e:
            raise _corrupt(self.path, run_id, e, seq) from None
