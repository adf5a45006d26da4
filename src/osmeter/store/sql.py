"""The store over SQLAlchemy Core: one implementation of the Store protocol
for SQLite (sqlite.py) and PostgreSQL (postgres.py).

Each write commits before it returns (so a result survives a crash a moment
later), except inside transaction(), which `osmeter import` uses to store a
whole file or nothing. A backend subclass opens the engine, explains its
driver's errors in words (explain()) and says how a write transaction
begins (SQLite: BEGIN IMMEDIATE, so two writers queue instead of failing
half-way; PostgreSQL: an ordinary transaction, ids from identities).
Rows are read back through decode.py, which checks every column.
"""

from __future__ import annotations

import json
import math
import time
import uuid
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Sequence, TypeVar

import sqlalchemy as sa

from ..errors import NotFoundError, StoreError
from ..model import BenchResult, NewRun, RunInfo, StoredProfile
from ..records import canonical_params
from ..stats import FloatArray, Summary
from . import decode, migrate, refs
from .base import StoreConnectionLost, encode_samples
from .decode import LIGHT_STATS, SUMMARY_COLUMNS, Corrupt

T = TypeVar("T")

MAX_RUN_ID = refs.MAX_RUN_ID


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _real(value: float | None) -> float | None:
    """No NaN in a store (SQLite has none): stored as NULL, read back as NaN."""
    return None if value is None or math.isnan(value) else value


def _summary_columns(summary: Summary | None) -> dict[str, Any]:
    """The statistics columns of a result row; NULL throughout for skip and error."""
    if summary is None:
        return dict.fromkeys(SUMMARY_COLUMNS)
    values = {c: getattr(summary, c) for c in SUMMARY_COLUMNS}
    return {c: _real(v) if isinstance(v, float) else int(v) for c, v in values.items()}


class SQLStore:
    """A store behind a SQLAlchemy connection held for the store's lifetime."""

    FIX = "choose another store with --store or OSMETER_STORE"
    KIND = "a database"
    BACKEND = "sql"

    def __init__(self, engine: sa.Engine, conn: sa.Connection, location: str, shown: str) -> None:
        self._engine = engine
        self._conn = conn
        self.location = location  # as given
        self.shown = shown  # for messages: the path, or the URL without its password
        self._in_transaction = False

    # --- what a backend provides -------------------------------------

    def explain(self, e: BaseException, doing: str, fix: str = "") -> str:
        return f"cannot {doing} the store {self.shown}: {e}" + (f"; {fix}" if fix else "")

    def _set_write_mode(self, write: bool) -> None:
        """Called before each transaction begins (SQLite picks BEGIN IMMEDIATE for writes)."""

    # --- opening -----------------------------------------------------

    def _prepare(self, *, create: bool) -> None:
        """Checks it is a store (or empty), migrates it, and with create proves it writable."""
        names = self._reading(self._table_names)
        if names and not names & {"schema_migrations", "alembic_version"}:
            raise StoreError(f"{self.shown} is {self.KIND} but not an osmeter store; it was left untouched: "
                             f"{self.FIX}")
        if not names and not create:
            raise NotFoundError(f"no store at {self.shown}: nothing has been run or imported there yet")
        if self._reading(self._behind):
            with self._tx(True, "upgrade"):
                self._call("upgrade", lambda: migrate.lock(self._conn))
                if self._behind():  # another process may have upgraded it meanwhile
                    self._call("upgrade", lambda: migrate.upgrade(self._conn))
        if create:
            self._check_writable()

    def _table_names(self) -> set[str]:
        return self._call("read", lambda: set(sa.inspect(self._conn).get_table_names()))

    def _behind(self) -> bool:
        """Whether the store needs migrations; refused when it is newer than this osmeter."""
        head, known = migrate.head_version(), set(migrate.REVISIONS)
        rev = self._call("read", lambda: migrate.revision(self._conn))
        current = self._call("read", lambda: migrate.legacy_version(self._conn))
        if current > head or (rev is not None and rev not in known):
            raise StoreError(f"store {self.shown} has schema version {current}, newer than this osmeter knows "
                             f"(up to {head}); upgrade osmeter, or {self.FIX}")
        return rev != migrate.HEAD

    def _reading(self, fn: Any) -> Any:
        if self._conn.in_transaction():
            return fn()
        with self._tx(False, "read"):
            return fn()

    def schema_version(self) -> int:
        return self._reading(lambda: self._call("read", lambda: migrate.legacy_version(self._conn)))

    def _check_writable(self) -> None:
        """A real (rolled back) write, so a read-only store fails now, not mid-run."""
        try:
            self._set_write_mode(True)
            with self._conn.begin() as trans:
                self._conn.exec_driver_sql("CREATE TABLE osmeter_write_check (x INTEGER)")
                trans.rollback()
        except sa.exc.SQLAlchemyError as e:
            raise StoreError(self.explain(getattr(e, "orig", None) or e, "write to")) from None

    def close(self) -> None:
        try:
            self._conn.close()
        finally:
            self._engine.dispose()

    # --- transactions ------------------------------------------------

    def _error(self, e: sa.exc.SQLAlchemyError, doing: str) -> StoreError:
        """A driver's error as a StoreError that says what to do; a lost
        connection as StoreConnectionLost (worth a reconnect)."""
        text = self.explain(getattr(e, "orig", None) or e, doing)
        if isinstance(e, sa.exc.DBAPIError) and e.connection_invalidated or self._conn.invalidated or self._conn.closed:
            return StoreConnectionLost(text)
        return StoreError(text)

    def _call(self, doing: str, fn: Any) -> Any:
        """fn() with a driver's error turned into a StoreError that says what to do."""
        try:
            return fn()
        except sa.exc.SQLAlchemyError as e:
            raise self._error(e, doing) from None

    @contextmanager
    def _tx(self, write: bool, doing: str) -> Iterator[None]:
        self._set_write_mode(write)
        try:
            trans = self._conn.begin()
        except sa.exc.SQLAlchemyError as e:
            raise self._error(e, doing) from None
        try:
            yield
        except BaseException:
            if trans.is_active:
                trans.rollback()
            raise
        self._call(doing, trans.commit)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """All writes inside are committed together, or none of them."""
        if self._in_transaction:
            raise RuntimeError("transactions do not nest")
        with self._tx(True, "write to"):
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
        with self._tx(True, "write to"):
            yield

    def _exec(self, sql: str, args: dict[str, Any] | Sequence[dict[str, Any]] | None = None) -> Any:
        return self._call("write to", lambda: self._conn.execute(sa.text(sql), args))

    def _read(self, sql: str, args: dict[str, Any] | None = None) -> list[Any]:
        def fetch() -> list[Any]:
            return list(self._conn.execute(sa.text(sql), args or {}).mappings().all())

        return self._reading(lambda: self._call("read", fetch))

    # --- reconnecting ------------------------------------------------

    # Waits between tries of a write whose connection was lost (about 15 s in
    # all): a server restarted meanwhile (pg_ctl restart) is written to again.
    RETRY_DELAYS: tuple[float, ...] = (0.5, 1.0, 2.0, 4.0, 8.0)

    def reconnect(self) -> None:
        """A new connection in place of a lost one (StoreConnectionLost when none can be made)."""
        try:
            self._conn.close()
        except Exception:  # noqa: BLE001 (the old connection is gone either way)
            pass
        try:
            self._conn = self._engine.connect()
        except sa.exc.SQLAlchemyError as e:
            raise StoreConnectionLost(self.explain(getattr(e, "orig", None) or e, "reconnect to")) from None
        self._in_transaction = False

    def _retrying(self, op: Callable[[], T]) -> T:
        """op() (an idempotent write in its own transaction), tried again on a
        new connection while the connection is lost, RETRY_DELAYS apart.
        Inside transaction() a lost connection has lost the transaction: raised."""
        if self._in_transaction:
            return op()
        unreachable: StoreConnectionLost | None = None  # why the last reconnect failed
        for delay in (*self.RETRY_DELAYS, None):
            if unreachable is None:
                try:
                    return op()
                except StoreConnectionLost:
                    if delay is None:
                        raise
            elif delay is None:
                raise unreachable
            time.sleep(delay)
            try:
                self.reconnect()
                unreachable = None
            except StoreConnectionLost as e:
                unreachable = e
        raise AssertionError("unreachable")

    # --- writing -----------------------------------------------------

    def create_run(self, run: NewRun) -> int:
        row = {"label": run.label, "start_time": run.start_time, "status": "running", "source": run.source,
               "osmeter_version": run.osmeter_version, "probe_version": run.probe_version, "suite": run.suite,
               "argv": _json(run.argv), "params": _json(run.params), "machine": _json(run.machine),
               "meta": _json(run.meta), "host": run.host, "fleet": run.fleet, "uid": run.uid or str(uuid.uuid4())}

        def create() -> int:  # a try whose commit was lost may have stored it: found by its uid
            with self._write():
                rows = self._exec("SELECT id FROM runs WHERE uid = :u", {"u": row["uid"]}).all()
                return int(rows[0][0]) if rows else self.insert_run(row)

        return self._retrying(create)

    def insert_run(self, row: dict[str, Any]) -> int:
        """A runs row (every column but id) stored; its new id."""
        sql = f"INSERT INTO runs ({', '.join(row)}) VALUES ({', '.join(':' + c for c in row)}) RETURNING id"
        return int(self._exec(sql, row).scalar_one())

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

    def insert_rows(self, table: str, rows: Sequence[dict[str, Any]]) -> None:
        """Rows of results, profiles or imported_files stored as they are."""
        if rows:
            cols = list(rows[0])
            self._exec(f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join(':' + c for c in cols)})",
                       list(rows))

    def overwrite_run(self, run_id: int, row: dict[str, Any], children: dict[str, list[dict[str, Any]]]) -> None:
        """Run `run_id`'s row set to `row` (every column but id) and its rows
        of each child table replaced, in one transaction (store copy's update
        of a copy made while the run was still going)."""
        with self.transaction():
            sets = ", ".join(f"{c} = :{c}" for c in row)
            self._exec(f"UPDATE runs SET {sets} WHERE id = :id_", {**row, "id_": run_id})
            for table, rows in children.items():
                self._exec(f"DELETE FROM {table} WHERE run_id = :r", {"r": run_id})
                self.insert_rows(table, [{**r, "run_id": run_id} for r in rows])

    def add_result(self, run_id: int, result: BenchResult, samples: FloatArray | None) -> None:
        row = self._result_row(run_id, result, samples)

        def add() -> None:  # a try whose commit was lost may have stored it: replaced
            with self._write():
                if not self._in_transaction:
                    self._exec("DELETE FROM results WHERE run_id = :r AND seq = :s", {"r": run_id, "s": result.seq})
                self.insert_rows("results", [row])

        self._retrying(add)

    def replace_result(self, run_id: int, result: BenchResult, samples: FloatArray | None) -> None:
        """The result of seq `result.seq` replaced (another repetition came in)."""
        row = self._result_row(run_id, result, samples)
        sets = ", ".join(f"{c} = :{c}" for c in row if c not in ("run_id", "seq"))

        def update() -> None:
            with self._write():
                cur = self._exec(f"UPDATE results SET {sets} WHERE run_id = :run_id AND seq = :seq", row)
                if cur.rowcount != 1:
                    raise StoreError(f"cannot update result {result.seq} of run {run_id} in {self.shown}: "
                                     "no such result")

        self._retrying(update)

    def set_counters(self, run_id: int, seq: int, counters: dict[str, Any]) -> None:
        def update() -> None:
            with self._write():
                self._exec("UPDATE results SET counters = :c WHERE run_id = :r AND seq = :s",
                           {"c": _json(counters), "r": run_id, "s": seq})

        self._retrying(update)

    def add_profile(self, run_id: int, seq: int, record: dict[str, Any]) -> None:
        """The profile record of result `seq` (one per result; a second replaces it)."""
        meta = {k: v for k, v in record.items() if k not in decode.PROFILE_HEADER}
        row = {"run_id": run_id, "seq": seq, "status": record["status"], "mode": record["mode"], "meta": _json(meta),
               "stacks": decode.encode_stacks(record.get("stacks") or [])}

        def add() -> None:
            with self._write():
                self._exec("DELETE FROM profiles WHERE run_id = :r AND seq = :s", {"r": run_id, "s": seq})
                self.insert_rows("profiles", [row])

        self._retrying(add)

    def set_content_hash(self, run_id: int, digest: str, file_digests: Sequence[str] = ()) -> None:
        """What an imported run was made from: the digest of the whole import
        (migration 0004) and of each file, in order (0005)."""
        with self._write():
            self._exec("UPDATE runs SET content_sha256 = :d WHERE id = :r", {"d": digest, "r": run_id})
            self.insert_rows("imported_files", [{"run_id": run_id, "position": i, "sha256": d}
                                                for i, d in enumerate(file_digests)])

    def set_run_meta(self, run_id: int, key: str, value: Any) -> None:
        """`value` (JSON) stored as the run's meta[key], its other meta kept (osmeter noise's result)."""
        def update() -> None:
            with self._write():
                rows = self._read("SELECT meta FROM runs WHERE id = :r", {"r": run_id})
                if not rows:
                    raise StoreError(f"run {run_id} is not in {self.shown}")
                meta = {**decode.json_object(rows[0], "meta"), key: value}
                self._exec("UPDATE runs SET meta = :m WHERE id = :r", {"m": _json(meta), "r": run_id})

        self._retrying(update)

    def finish_run(self, run_id: int, status: str, end_time: str, reason: str | None) -> None:
        """The run marked; a second complete run of one host of a fleet run is
        refused by the database (migration 0008), whoever came first."""
        self._retrying(lambda: self._finish_run(run_id, status, end_time, reason))

    def _finish_run(self, run_id: int, status: str, end_time: str, reason: str | None) -> None:
        sql = "UPDATE runs SET status = :s, end_time = :e, status_reason = :why WHERE id = :r"
        args = {"s": status, "e": end_time, "why": reason, "r": run_id}
        with self._write():
            (owner,) = self._read("SELECT fleet, host FROM runs WHERE id = :r", {"r": run_id}) or [None]
            try:
                self._conn.execute(sa.text(sql), args)
            except sa.exc.IntegrityError as e:
                if "runs_fleet_host_complete" not in str(e.orig) and "runs.fleet, runs.host" not in str(e.orig):
                    raise StoreError(self.explain(e.orig or e, "write to")) from None
                raise StoreError(f"host {owner['host']} of fleet run {owner['fleet']} is already stored as a complete run "
                                 f"in {self.shown} (another osmeter stored it first); it was not stored again") from None
            except sa.exc.SQLAlchemyError as e:
                raise self._error(e, "write to") from None

    # --- reading -----------------------------------------------------

    def _corrupt(self, run_id: Any, e: Corrupt, seq: Any = None) -> StoreError:
        what = f"run {run_id}" + ("" if seq is None else f", result {seq}" if isinstance(seq, int) else ", a result")
        return StoreError(f"the store {self.shown} is damaged: {what}, column '{e.column}' is {e.why}; "
                          f"`osmeter runs` lists the runs that can still be read; restore the store from a backup, "
                          f"or {self.FIX}")

    def lock_content(self, digests: Sequence[str]) -> None:
        """Inside a write transaction: wait until no other writer holds these
        digests (an import checking them), and hold them to the commit.
        SQLite's write transactions queue whole (BEGIN IMMEDIATE): nothing to do."""

    def runs_with_content(self, digest: str) -> list[int]:
        """The runs imported from the same bytes: the same import, or a file
        among others (0005), or alone before 0005 (its content_sha256)."""
        rows = self._read("SELECT id FROM runs WHERE content_sha256 = :d UNION "
                          "SELECT run_id FROM imported_files WHERE sha256 = :d ORDER BY 1", {"d": digest})
        return [int(r["id"]) for r in rows]

    _RUNS_SQL = (
        "SELECT runs.*, "
        " (SELECT count(*) FROM results r WHERE r.run_id = runs.id AND r.status = 'ok') AS n_ok,"
        " (SELECT count(*) FROM results r WHERE r.run_id = runs.id AND r.status = 'skip') AS n_skip,"
        " (SELECT count(*) FROM results r WHERE r.run_id = runs.id AND r.status = 'error') AS n_error"
        " FROM runs"
    )

    def _run_from_row(self, row: Any, shared: dict[str, Any] | None = None) -> RunInfo:
        try:
            return decode.run(row, shared)
        except Corrupt as e:
            raise self._corrupt(row["id"], e) from None

    def runs(self) -> list[RunInfo]:
        with decode.bulk():
            return [self._run_from_row(r) for r in self._read(self._RUNS_SQL + " ORDER BY runs.id")]

    def readable_runs(self, last: int | None = None) -> tuple[list[RunInfo], list[StoreError]]:
        """Every run that can be read, and why each other one cannot (`osmeter
        runs` lists the first and names the second), oldest first; `last`: only
        the newest `last` runs (by id: one indexed query, whatever the store's
        size). The runs of one machine description share its decoded object
        (decode.run): read-only."""
        good, damaged = [], []
        shared: dict[str, Any] = {}
        sql = self._RUNS_SQL + " ORDER BY runs.id"
        if last is not None:
            sql = (f"SELECT * FROM ({self._RUNS_SQL} WHERE runs.id IN "
                   f"(SELECT id FROM runs ORDER BY id DESC LIMIT {int(last)})) AS newest ORDER BY id")
        with decode.bulk():
            for row in self._read(sql):
                try:
                    good.append(self._run_from_row(row, shared))
                except StoreError as e:
                    damaged.append(e)
        return good, damaged

    def count_runs(self) -> int:
        return int(self._read("SELECT count(*) AS n FROM runs")[0]["n"])

    def run(self, ref: str) -> RunInfo:
        """A run by id, label, `latest` or `latest~N` (refs.py: one resolution
        for both backends and every command)."""
        run_id = refs.resolve(ref, self._read, self.shown)
        rows = self._read(self._RUNS_SQL + " WHERE runs.id = :r", {"r": run_id})
        if not rows:
            raise NotFoundError(refs.missing_id(run_id, self._read, self.shown))
        return self._run_from_row(rows[0])

    def results(self, run_id: int) -> list[BenchResult]:
        with decode.bulk():
            rows = self._read(
                f"SELECT seq, bench, params, status, unit, reason, batch, extra, counters, record, flags, repetitions, "
                f"{', '.join(SUMMARY_COLUMNS)} FROM results WHERE run_id = :r ORDER BY seq", {"r": run_id})
            out = []
            for r in rows:
                try:
                    out.append(decode.result(r))
                except Corrupt as e:
                    raise self._corrupt(run_id, e, r["seq"]) from None
        return out

    def figures(self, run_ids: Sequence[int]) -> dict[int, list[BenchResult]]:
        """Each run's results as compare --by needs them, read in a query per
        500 runs: flags, repetitions and of the statistics the median, its
        interval and n (decode.LIGHT_STATS; the others NaN), but not the
        probe's record (read only for a result stored before its flags had a
        column), extra or counters (decode.result(light=True)). compare --by
        of 100 hosts reads 20 000 results this way in about 0.3 s here."""
        out: dict[int, list[BenchResult]] = {r: [] for r in run_ids}
        with decode.bulk():
            for marks, args in _in_lists(list(out)):
                rows = self._read(
                    f"SELECT run_id, seq, bench, params, status, unit, reason, batch, flags, repetitions, "
                    f"CASE WHEN flags IS NULL THEN record END AS record, {', '.join(LIGHT_STATS)} "
                    f"FROM results WHERE run_id IN ({marks}) ORDER BY run_id, seq", args)
                for r in rows:
                    try:
                        out[r["run_id"]].append(decode.result(r, light=True))
                    except Corrupt as e:
                        raise self._corrupt(r["run_id"], e, r["seq"]) from None
        return out

    def samples(self, run_id: int, seq: int) -> FloatArray | None:
        rows = self._read("SELECT samples, n FROM results WHERE run_id = :r AND seq = :s", {"r": run_id, "s": seq})
        if not rows or rows[0]["samples"] is None:
            return None
        try:
            return decode.samples(rows[0]["samples"], rows[0]["n"])
        except Corrupt as e:
            raise self._corrupt(run_id, e, seq) from None

    def profiles(self, run_id: int) -> list[StoredProfile]:
        rows = self._read(
            "SELECT p.seq, p.status, p.mode, p.meta, p.stacks, r.bench, r.params FROM profiles p "
            "JOIN results r ON r.run_id = p.run_id AND r.seq = p.seq WHERE p.run_id = :r ORDER BY p.seq",
            {"r": run_id})
        out = []
        for r in rows:
            try:
                out.append(StoredProfile(run_id=run_id, seq=r["seq"], bench=decode.text(r, "bench"),
                                         params=decode.json_object(r, "params"), status=decode.text(r, "status"),
                                         mode=decode.text(r, "mode"), meta=decode.json_object(r, "meta"),
                                         stacks=decode.decode_stacks(r["stacks"])))
            except Corrupt as e:
                raise self._corrupt(run_id, e, r["seq"]) from None
        return out

    def raw_rows(self, table: str, run_id: int) -> list[dict[str, Any]]:
        """A run's rows of `table` as stored (runs: its one row), for `osmeter store copy`."""
        key = "id" if table == "runs" else "run_id"
        return [dict(r) for r in self._read(f"SELECT * FROM {table} WHERE {key} = :r", {"r": run_id})]

    def run_with_uid(self, uid: str) -> int | None:
        rows = self._read("SELECT id FROM runs WHERE uid = :u", {"u": uid})
        return int(rows[0]["id"]) if rows else None

    # --- reading at scale (issue 27): only the rows a command needs ----------

    def fleet_starts(self) -> dict[str, str]:
        """Every fleet run's id and the start of its first run, in the order of
        their first runs, read without decoding a run (compare --by --fleet,
        report --fleet: which fleet runs there are, and the latest)."""
        rows = self._read("SELECT fleet, min(start_time) AS first FROM runs "
                          "WHERE fleet IS NOT NULL AND fleet <> '' GROUP BY fleet ORDER BY min(id)")
        return {r["fleet"]: r["first"] for r in rows if isinstance(r["fleet"], str) and isinstance(r["first"], str)}

    def fleet_runs(self, fleet: str) -> list[RunInfo]:
        """The runs of the fleet run `fleet`, by id (index runs_fleet); as readable_runs, the
        runs of one machine description share its decoded object."""
        shared: dict[str, Any] = {}
        with decode.bulk():
            rows = self._read(self._RUNS_SQL + " WHERE runs.fleet = :f ORDER BY runs.id", {"f": fleet})
            return [self._run_from_row(r, shared) for r in rows]

    def samples_of(self, wanted: Sequence[tuple[int, int]]) -> dict[tuple[int, int], FloatArray | None]:
        """The samples of many results, each (run id, seq); None where a result
        has none stored or does not exist. When the runs and seqs asked for are
        about all their pairs (compare A B: the same seqs in both runs), in one
        query per 500 runs and 500 seqs; else in a query per distinct seq (a
        row of compare --by's cells: one seq, many runs). The memory is what
        the caller asks for, never whole runs'."""
        pairs = list(dict.fromkeys(wanted))
        out: dict[tuple[int, int], FloatArray | None] = dict.fromkeys(pairs)
        runs = sorted({r for r, _ in pairs})
        seqs = sorted({q for _, q in pairs})
        if len(runs) * len(seqs) <= 2 * len(pairs):
            for marks, args in _in_lists(runs):
                for seq_marks, seq_args in _in_lists(seqs, prefix="s"):
                    self._samples_into(out, f"run_id IN ({marks}) AND seq IN ({seq_marks})", {**args, **seq_args})
            return out
        by_seq: dict[int, list[int]] = {}
        for run_id, seq in pairs:
            by_seq.setdefault(seq, []).append(run_id)
        for seq, ids in by_seq.items():
            for marks, args in _in_lists(ids):
                self._samples_into(out, f"seq = :s AND run_id IN ({marks})", {**args, "s": seq})
        return out

    def _samples_into(self, out: dict[tuple[int, int], FloatArray | None], where: str, args: dict[str, Any]) -> None:
        """The samples of the rows `where` selects into `out`, for the keys it has (others are skipped)."""
        for row in self._read(f"SELECT run_id, seq, samples, n FROM results WHERE {where}", args):
            key = (row["run_id"], row["seq"])
            if key not in out or row["samples"] is None:
                continue
            try:
                out[key] = decode.samples(row["samples"], row["n"])
            except Corrupt as e:
                raise self._corrupt(key[0], e, key[1]) from None


def _in_lists(ids: Sequence[int], size: int = 500, prefix: str = "r") -> Iterator[tuple[str, dict[str, Any]]]:
    """`ids` in chunks of `size` for `... IN (marks)`: the marks (":r0, :r1, ...", with `prefix` for "r")
    and their arguments."""
    for i in range(0, len(ids), size):
        chunk = ids[i:i + size]
        yield (", ".join(f":{prefix}{j}" for j in range(len(chunk))),
               {f"{prefix}{j}": r for j, r in enumerate(chunk)})
