"""Where osmeter keeps runs: choosing the location and opening it.

Location, first match wins: `--store PATH|URL` > $OSMETER_STORE >
$XDG_DATA_HOME/osmeter/osmeter.db (default ~/.local/share/osmeter/osmeter.db).
A path is an SQLite file (the embedded default); a postgresql:// URL is a
PostgreSQL database (docs/store.md).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping

from typing import TYPE_CHECKING, Any

from .. import spool, textsafe
from ..errors import StoreError, UsageError
from .base import Store
from .urls import SCHEMES, redact, scheme_without_slashes

if TYPE_CHECKING:
    from .sql import SQLStore

_BACKENDS = {"SQLStore": "sql", "SQLiteStore": "sqlite", "PostgresStore": "postgres"}


def __getattr__(name: str) -> Any:
    """The backend classes, imported when first asked for: SQLAlchemy costs
    a third of a second at start-up, which commands that open no store skip."""
    if name in _BACKENDS:
        from importlib import import_module

        return getattr(import_module(f".{_BACKENDS[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

ENV_STORE = "OSMETER_STORE"
DEFAULT_NAME = Path("osmeter") / "osmeter.db"

__all__ = ["Store", "SQLStore", "SQLiteStore", "PostgresStore", "default_location", "resolve_location",
           "open_store", "describe"]


def default_location(env: Mapping[str, str] = os.environ) -> str:
    data_home = env.get("XDG_DATA_HOME") or str(Path(env.get("HOME") or Path.home()) / ".local" / "share")
    return str(Path(data_home) / DEFAULT_NAME)


def resolve_location(cli_value: str | None, env: Mapping[str, str] = os.environ) -> str:
    """The store location: the command-line value, else $OSMETER_STORE, else the default.

    An empty --store is a mistake (an unset shell variable, most often), not
    a request for the default. An empty $OSMETER_STORE counts as unset."""
    if cli_value is not None and not cli_value.strip():
        raise UsageError("--store is empty; give the path of the store file or a postgresql:// URL, or leave --store out for the default "
                         f"(${ENV_STORE}, else {default_location(env)})")
    return cli_value or env.get(ENV_STORE) or default_location(env)


def _scheme(location: str) -> str | None:
    return location.split("://", 1)[0].lower() if "://" in location else None


def describe(location: str) -> str:
    """The location fit for a message: a URL without its password."""
    return redact(location) if _scheme(location) or scheme_without_slashes(location) else location


def open_store(location: str, *, create: bool) -> SQLStore:
    """Open (and with create=True, create and check writable) the store.

    create=True is for commands that write (run, import): the store is
    created and proved writable here, before anything runs. create=False
    is for readers: a missing store raises NotFoundError.
    """
    scheme = _scheme(location)
    bare = scheme_without_slashes(location)
    if scheme is None and bare is not None:
        raise StoreError(f"{redact(location)}: a {bare} URL needs '//' after '{bare}:' "
                         f"({bare}://USER[:PASSWORD]@HOST[:PORT]/DBNAME); for an SQLite file of that name, "
                         "write ./ in front of it")
    if scheme in SCHEMES:
        from .postgres import PostgresStore

        return _mark_unmarked(PostgresStore.open(location, create=create))
    if scheme is not None:
        raise StoreError(f"{redact(location)}: unknown store URL scheme '{scheme}://'; give a file path for an "
                         "SQLite store, or a postgresql:// URL")
    from .sqlite import SQLiteStore

    return _mark_unmarked(SQLiteStore.open(Path(location).expanduser(), create=create))


def _mark_unmarked(store: SQLStore) -> SQLStore:
    """Runs a failing store left `running` (spool.note_unmarked) marked, now
    that a store holding them is open; matched by uid, so another store's
    run of the same id is never touched. A store that still refuses keeps
    them for the next time."""
    done = set()
    for entry in spool.unmarked():
        try:
            run_id = store.run_with_uid(entry["uid"])
            if run_id is None:
                continue  # a run of another store
            if store.run(str(run_id)).status == "running":
                store.finish_run(run_id, entry["status"], entry["end_time"], entry["reason"])
                textsafe.say("note", f"marked run {run_id} {entry['status']}: {entry['reason']}")
            done.add(entry["uid"])
        except StoreError:
            pass
    if done:
        spool.forget_unmarked(done)
    return store
