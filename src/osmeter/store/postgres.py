"""PostgreSQL backend: a store many hosts and people write to at once
(SQLAlchemy Core over psycopg 3).

`--store postgresql://USER[:PASSWORD]@HOST[:PORT]/DBNAME[?PARAMS]` (libpq's
URL: `?host=/run/postgresql` for a socket directory, `sslmode=...`; a
password may also come from ~/.pgpass or $PGPASSWORD). The database must
exist (`createdb DBNAME`); osmeter creates its tables there on the first
write and migrates them as SQLite stores are (migrate.py). Run ids come
from an identity column, each write is its own transaction (or the
import's one), so concurrent writers from many hosts neither collide nor
wait on each other beyond a row.
"""

from __future__ import annotations

import math
import os
import socket
import threading
from typing import Any, Mapping, Sequence
from urllib.parse import parse_qsl, unquote

import sqlalchemy as sa
from sqlalchemy.pool import NullPool

from ..errors import StoreError
from .base import StoreConnectionLost
from .sql import SQLStore
from .urls import host_holds_at, redact, split

_FIX = "check the URL given with --store or OSMETER_STORE"
TIMEOUT_ENV = "OSMETER_STORE_TIMEOUT"
DEFAULT_TIMEOUT_S = 60.0


def _explanation(text: str) -> str | None:
    """What to do about a PostgreSQL failure, from its message; None when nothing better is known."""
    low = text.lower()
    hints = (
        (("connection refused", "could not connect", "no such file or directory", "timeout expired"),
         "no PostgreSQL server answers there; start it (pg_ctl start, or the service), or " + _FIX),
        (("failed to resolve host", "could not translate host name", "name or service not known"),
         "the server's host name does not resolve; " + _FIX),
        (("password authentication failed", "no password supplied", "authentication failed", "peer authentication"),
         "the server refused the user or password; give them in the URL (USER:PASSWORD@), ~/.pgpass or "
         "$PGPASSWORD"),
        (("does not exist",), "create the database (createdb NAME, as a user allowed to), or " + _FIX),
        (("permission denied",), "the user may not do this there; GRANT it the rights on the database and its "
         "schema (docs/store.md), or " + _FIX),
        (("read-only transaction", "read only transaction"), "the server is a read-only standby; give the primary's "
         "URL, or " + _FIX),
        (("no space left", "disk full", "could not extend file"), "the server's disk is full; free some space"),
        (("server closed the connection", "terminating connection", "connection is closed", "consuming input failed"),
         "the connection to the server was lost; what was not committed was not stored; check the server and "
         "run again"),
    )
    return next((fix for needles, fix in hints if any(n in low for n in needles)), None)


def _sqlalchemy_url(url: str) -> sa.engine.URL:
    """The URL split by urls.split (the grammar redact shows), decoded as make_url decodes."""
    p = split(url)
    if p is None:
        raise ValueError("not a URL")
    query: dict[str, str | list[str]] = {}
    for key, value in parse_qsl(p.query or ""):
        old = query.get(key)
        query[key] = value if old is None else [*([old] if isinstance(old, str) else old), value]
    host = p.host[1:-1] if p.host and p.host.startswith("[") else p.host
    return sa.engine.URL.create(p.scheme, username=unquote(p.user) if p.user is not None else None,
                                password=unquote(p.password) if p.password is not None else None,
                                host=host or None, port=int(p.port) if p.port else None,
                                database=unquote(p.database) if p.database is not None else None, query=query)


def store_timeout(env: Mapping[str, str] = os.environ) -> float:
    """$OSMETER_STORE_TIMEOUT: seconds a statement may take before osmeter gives up on the server."""
    text = env.get(TIMEOUT_ENV, "").strip()
    if not text:
        return DEFAULT_TIMEOUT_S
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 1 <= value <= 86400:
        raise StoreError(f"${TIMEOUT_ENV} is {text!r}: give the seconds a store statement may take, 1 to 86400 "
                         f"(default {DEFAULT_TIMEOUT_S:g})")
    return value


def connect_args(query: Mapping[str, Any], timeout: float) -> dict[str, Any]:
    """The driver's connection settings osmeter adds, where the URL sets none:
    a connect timeout, TCP keepalives and a user timeout (a dead server or
    network is noticed), and a statement timeout (a stuck server is)."""
    wanted: dict[str, Any] = {
        "connect_timeout": 10,
        "application_name": "osmeter",
        "keepalives": 1, "keepalives_idle": 30, "keepalives_interval": 10, "keepalives_count": 3,
        "tcp_user_timeout": int(timeout * 1000),
        "options": f"-c statement_timeout={int(timeout * 1000)}",
    }
    return {k: v for k, v in wanted.items() if k not in query}


class PostgresStore(SQLStore):
    """A store in a PostgreSQL database."""

    FIX = _FIX
    KIND = "a PostgreSQL database"
    BACKEND = "postgresql"
    timeout_s = DEFAULT_TIMEOUT_S
    _unbounded = False

    def _prepare(self, *, create: bool) -> None:
        """Opening waits as long as another osmeter's migration takes, and a
        migration of a large store may take longer than a statement may:
        both run without the statement timeout or the cut."""
        self._statement_timeout(0)
        try:
            super()._prepare(create=create)
        finally:
            try:
                self._statement_timeout(self.timeout_s)
            except (sa.exc.SQLAlchemyError, StoreError):
                pass  # the error being raised says more

    def _statement_timeout(self, seconds: float) -> None:
        """The session's statement_timeout (0: none); the cut is off while it is 0."""
        if "options" in (self._engine.url.query or {}):
            return  # the URL's own options set it
        self._conn.exec_driver_sql(f"SET statement_timeout = {int(seconds * 1000)}")
        self._conn.commit()
        self._unbounded = seconds == 0

    def _call(self, doing: str, fn: Any) -> Any:
        """As SQLStore's, and a server that does not answer within timeout_s
        (stopped, or a network that drops everything) has its connection cut
        here: the statement timeout cannot fire in a server that does not run."""
        if self._unbounded:  # waiting on purpose: for another's migration or import
            return super()._call(doing, fn)
        fired = threading.Event()
        fd = self._socket()

        def cut() -> None:
            fired.set()
            if fd is not None:
                try:
                    with socket.socket(fileno=os.dup(fd)) as sock:
                        sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

        timer = threading.Timer(self.timeout_s + 5, cut)  # the server's statement_timeout comes first
        timer.daemon = True
        timer.start()
        try:
            return super()._call(doing, fn)
        except StoreError as e:
            if not fired.is_set():
                raise
            raise StoreConnectionLost(f"cannot {doing} the store {self.shown}: the server did not answer for "
                                      f"{self.timeout_s + 5:g} s (${TIMEOUT_ENV} sets the limit); check the "
                                      "server") from e
        finally:
            timer.cancel()

    def _socket(self) -> int | None:
        try:
            return self._conn.connection.dbapi_connection.fileno()  # type: ignore[union-attr]
        except Exception:  # noqa: BLE001 (a closed or invalidated connection: nothing to cut)
            return None

    @classmethod
    def open(cls, url: str, *, create: bool) -> "PostgresStore":
        shown = redact(url)
        if host_holds_at(url):  # the driver would take part of the password for the host, and name it
            raise StoreError(f"{shown}: the user or password holds an '@'; write it as %40 in the URL, or give the "
                             "password in ~/.pgpass or $PGPASSWORD")
        try:
            parsed = _sqlalchemy_url(url)
        except (sa.exc.ArgumentError, ValueError):  # their messages may quote the password
            raise StoreError(f"{shown} cannot be read as a PostgreSQL URL (a port that is not a number?); give "
                             "postgresql://USER[:PASSWORD]@HOST[:PORT]/DBNAME") from None
        if not parsed.database:
            raise StoreError(f"{shown} names no database; give postgresql://USER@HOST/DBNAME")
        # READ COMMITTED whatever the server's default: a migration that waited
        # for another's lock must then see what that one committed (migrate.lock).
        timeout = store_timeout()
        engine = sa.create_engine(parsed.set(drivername="postgresql+psycopg"), poolclass=NullPool,
                                  isolation_level="READ COMMITTED",
                                  connect_args=connect_args(parsed.query, timeout))
        store = None
        try:
            conn = engine.connect()
            store = cls(engine, conn, url, shown)
            store.timeout_s = timeout
            store._prepare(create=create)
        except sa.exc.DBAPIError as e:
            if store is not None:
                store.close()
            else:
                engine.dispose()
            raise StoreError(cls.explain_for(shown, e.orig or e, "open")) from None
        except BaseException:
            if store is not None:
                store.close()
            else:
                engine.dispose()
            raise
        return store

    @staticmethod
    def explain_for(shown: str, e: BaseException, doing: str, fix: str = "") -> str:
        text = " ".join(str(e).split())
        hint = _explanation(text) or fix
        return f"cannot {doing} the store {shown}: {text}" + (f"; {hint}" if hint else "")

    def explain(self, e: BaseException, doing: str, fix: str = "") -> str:
        return self.explain_for(self.shown, e, doing, fix)

    def lock_content(self, digests: Sequence[str]) -> None:
        """Transaction-level advisory locks, one per digest (its first 60 bits), taken in order."""
        keys = sorted({int(d[:15], 16) for d in digests if d})
        if not keys:
            return
        # Another import of these files holds them until it commits, however
        # long that takes: waited for without the statement timeout or the cut.
        own = "options" not in (self._engine.url.query or {})  # else the URL's statement_timeout rules
        self._unbounded = True
        try:
            if own:
                self._call("write to", lambda: self._conn.exec_driver_sql("SET LOCAL statement_timeout = 0"))
            for key in keys:
                self._call("write to", lambda: self._conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({key})"))
            if own:
                ms = int(self.timeout_s * 1000)
                self._call("write to", lambda: self._conn.exec_driver_sql(f"SET LOCAL statement_timeout = {ms}"))
        finally:
            self._unbounded = False

    def _check_writable(self) -> None:
        """A real (rolled back) write, so a store the user may not write to fails now."""
        try:
            with self._conn.begin() as trans:
                self._conn.exec_driver_sql("LOCK TABLE runs IN ROW EXCLUSIVE MODE NOWAIT")
                trans.rollback()
        except sa.exc.DBAPIError as e:
            if "could not obtain lock" in str(e.orig):  # someone else holds it more strongly: writable
                return
            raise StoreError(self.explain(e.orig or e, "write to")) from None
