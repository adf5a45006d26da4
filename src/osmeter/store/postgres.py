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

from typing import Sequence
from urllib.parse import parse_qsl, unquote

import sqlalchemy as sa
from sqlalchemy.pool import NullPool

from ..errors import StoreError
from .sql import SQLStore
from .urls import host_holds_at, redact, split

_FIX = "check the URL given with --store or OSMETER_STORE"


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


class PostgresStore(SQLStore):
    """A store in a PostgreSQL database."""

    FIX = _FIX
    KIND = "a PostgreSQL database"
    BACKEND = "postgresql"

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
        engine = sa.create_engine(parsed.set(drivername="postgresql+psycopg"), poolclass=NullPool,
                                  isolation_level="READ COMMITTED",
                                  connect_args={"connect_timeout": 10, "application_name": "osmeter"})
        store = None
        try:
            conn = engine.connect()
            store = cls(engine, conn, url, shown)
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
        for key in sorted({int(d[:15], 16) for d in digests if d}):
            self._call("write to", lambda: self._conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({key})"))

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
