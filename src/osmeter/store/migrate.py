"""Schema migrations for both backends, through Alembic.

The revisions live in alembic/versions/ and run on the connection the store
opened, inside one write transaction: SQLite's BEGIN IMMEDIATE, or on
PostgreSQL a transaction holding an advisory lock, so that several osmeter
processes opening a new or old store at once migrate it once (the others
wait, then find it current). DDL is transactional on both, so a migration
that fails leaves the store as it was.

Every revision also adds its row to schema_migrations (version, name), the
table osmeter 0.2 kept before Alembic: an older osmeter reading a newer store
refuses it by that table, and the migration history stays readable with
plain SQL.

osmeter 0.2's SQLite stores (no alembic_version table) are upgraded by the
same path: revision 0006 applies the legacy SQL files (migrations/*.sql)
such a store lacks, then the later revisions run.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path

from typing import TYPE_CHECKING

import sqlalchemy as sa

if TYPE_CHECKING:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

# The revisions in alembic/versions/, oldest first (test_store_backends checks
# them against Alembic's own reading of that directory). Opening a current
# store needs only these; Alembic itself is imported when a store must move.
REVISIONS = ("0006", "0007", "0008", "0009", "0010")
HEAD = REVISIONS[-1]

_LEGACY_NAME = re.compile(r"^(\d{4})_(\w+)\.sql$")
_LOCK_KEY = 0x6F736D65746572  # "osmeter": the advisory lock PostgreSQL migrations take


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str


def migrations() -> list[Migration]:
    """osmeter 0.2's SQLite migrations (before Alembic), in order."""
    found = []
    for entry in (resources.files("osmeter.store") / "migrations").iterdir():
        m = _LEGACY_NAME.match(entry.name)
        if m:
            found.append(Migration(int(m.group(1)), m.group(2), entry.read_text(encoding="utf-8")))
    found.sort(key=lambda mig: mig.version)
    if [mig.version for mig in found] != list(range(1, len(found) + 1)):
        raise RuntimeError("store migrations must be numbered 0001, 0002, ... without gaps")
    return found


def _statements(sql: str) -> list[str]:
    """A legacy SQL file as single statements (comments dropped): the
    transaction is ours, so sqlite3's executescript (which commits) is not used."""
    out, pending = [], ""
    for line in sql.splitlines():
        pending += _without_comment(line) + "\n"
        if sqlite3.complete_statement(pending):
            out.append(pending.strip())
            pending = ""
    if pending.strip():
        raise RuntimeError(f"an unterminated statement in a store migration: {pending.strip()[:60]}")
    return out


def _without_comment(line: str) -> str:
    """The line up to a `--` comment that is outside a string literal."""
    quoted = False
    for i, ch in enumerate(line):
        if ch == "'":
            quoted = not quoted
        elif not quoted and line.startswith("--", i):
            return line[:i]
    return line


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _ensure_record_table(conn: sa.Connection) -> None:
    conn.exec_driver_sql("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
                         "name TEXT NOT NULL, applied_at TEXT NOT NULL)")


def record(conn: sa.Connection, version: int, name: str) -> None:
    """schema_migrations gets the row of a migration just applied."""
    _ensure_record_table(conn)
    conn.execute(sa.text("INSERT INTO schema_migrations (version, name, applied_at) VALUES (:v, :n, :t)"),
                 {"v": version, "n": name, "t": _now()})


def legacy_version(conn: sa.Connection) -> int:
    """The highest schema_migrations version (0 when there is no such table)."""
    if not sa.inspect(conn).has_table("schema_migrations"):
        return 0
    return int(conn.execute(sa.text("SELECT max(version) FROM schema_migrations")).scalar() or 0)


def legacy_upgrade(conn: sa.Connection, upto: int) -> None:
    """An SQLite store brought to legacy version `upto` by the SQL files it lacks."""
    current = legacy_version(conn)
    _ensure_record_table(conn)
    for mig in migrations()[current:upto]:
        for statement in _statements(mig.sql):
            conn.exec_driver_sql(statement)
        record(conn, mig.version, mig.name)


def _config(conn: sa.Connection | None = None) -> "Config":
    """Alembic's configuration: our revisions, and the connection they run on."""
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(Path(str(resources.files("osmeter.store") / "alembic"))))
    cfg.attributes["connection"] = conn
    return cfg


def script() -> "ScriptDirectory":
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(_config())


def head_version() -> int:
    """The schema version this osmeter writes (its newest revision's number)."""
    return int(HEAD)


def revision(conn: sa.Connection) -> str | None:
    """The Alembic revision the store is at (None: none yet, or osmeter 0.2's)."""
    if not sa.inspect(conn).has_table("alembic_version"):
        return None
    return conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalar()


def lock(conn: sa.Connection) -> None:
    """PostgreSQL: the advisory lock migrations take, held to the end of the
    caller's transaction; the first statement of it, so that what the
    transaction reads next is read after any other migration committed.
    (SQLite's BEGIN IMMEDIATE already is that lock.)"""
    if conn.dialect.name == "postgresql":
        conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _LOCK_KEY})


def upgrade(conn: sa.Connection, target: str = "head") -> None:
    """Every revision the store lacks, in the caller's write transaction (which
    the caller commits, holding lock())."""
    from alembic import command

    command.upgrade(_config(conn), target)
