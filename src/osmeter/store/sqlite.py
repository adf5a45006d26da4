"""SQLite backend: the embedded default, one file (SQLAlchemy over stdlib sqlite3).

What is SQLite's own: the checks on the path before SQLite touches it (a
directory, a device, a FIFO, a missing directory), the explanation of its
errors in words (read-only file or mount, locked, disk full), BEGIN
IMMEDIATE for writes (a second writer waits up to 10 s for the first
instead of failing half-way), and text that is not UTF-8 read as damage.
The queries are sql.SQLStore's; the schema is migrate.py's.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.pool import NullPool

from ..errors import NotFoundError, StoreError
from . import decode
from .migrate import Migration, migrations
from .sql import MAX_RUN_ID, SQLStore

__all__ = ["SQLiteStore", "Migration", "migrations", "MAX_RUN_ID"]

_FIX = "choose another location with --store PATH or OSMETER_STORE"


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


def _make_parent(path: Path) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise StoreError(f"cannot create the store {path}: {e.strerror} ({e.filename}); "
                         f"create that directory with write permission, or {_FIX}") from None


class SQLiteStore(SQLStore):
    """A store in one SQLite file."""

    FIX = _FIX
    KIND = "an SQLite database"
    BACKEND = "sqlite"

    def __init__(self, engine: sa.Engine, conn: sa.Connection, path: Path, mode: dict[str, bool]) -> None:
        super().__init__(engine, conn, str(path), str(path))
        self.path = path
        self._mode = mode

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
            _make_parent(path)
        elif kind != "a regular file":  # SQLite would read a device or wait on a FIFO; it was left untouched
            raise StoreError(f"the store {path} is {kind}, not a regular file; a store is an SQLite file: "
                             f"give the path of one, or of a file to create, or {_FIX}")
        mode = {"write": False}
        engine = sa.create_engine(sa.engine.URL.create("sqlite", database=str(path)), poolclass=NullPool,
                                  connect_args={"timeout": 10.0})
        sa.event.listen(engine, "connect", _on_connect)
        sa.event.listen(engine, "begin",
                        lambda c: c.exec_driver_sql("BEGIN IMMEDIATE" if mode["write"] else "BEGIN"))
        try:
            conn = engine.connect()
        except sa.exc.DBAPIError as e:
            engine.dispose()
            raise StoreError(_explain(path, e.orig, "open", f"make it readable and writable, or {_FIX}")) from None
        store = cls(engine, conn, path, mode)
        try:
            store._prepare(create=create)
        except BaseException:
            store.close()
            raise
        return store

    def _set_write_mode(self, write: bool) -> None:
        self._mode["write"] = write

    def explain(self, e: BaseException, doing: str, fix: str = "") -> str:
        if isinstance(e, sqlite3.Error):
            return _explain(self.path, e, doing, fix)
        return super().explain(e, doing, fix)

    def _table_names(self) -> set[str]:
        try:
            rows = self._conn.exec_driver_sql("SELECT name FROM sqlite_master WHERE type = 'table'").all()
        except sa.exc.DBAPIError as e:
            raise StoreError(f"{self.path} is not a usable osmeter store ({e.orig}); it was left untouched: "
                             f"move it aside to start a new store, or {_FIX}") from None
        return {row[0] for row in rows if row[0] != "sqlite_sequence"}


def _on_connect(dbapi_conn: Any, _record: Any) -> None:
    """Transactions are begun by the "begin" listener (BEGIN or BEGIN IMMEDIATE),
    never implicitly by the driver; text that is not UTF-8 is read as damage."""
    dbapi_conn.isolation_level = None
    dbapi_conn.text_factory = decode.text_factory
    dbapi_conn.execute("PRAGMA foreign_keys = ON")
