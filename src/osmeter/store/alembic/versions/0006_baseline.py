"""0006 baseline: the schema of osmeter 0.2's SQLite stores (legacy migrations
0001-0006, in ../migrations), the first schema Alembic knows.

- A new SQLite store runs the legacy SQL files, so it is the same file an
  earlier osmeter would have made; an SQLite store an earlier osmeter made
  at a version below 6 gets the files it lacks (its schema_migrations says
  which); one at 6 gets nothing.
- A new PostgreSQL store gets the same tables, columns and constraints in
  PostgreSQL's types (DOUBLE PRECISION for REAL, BYTEA for BLOB, BIGINT
  identities), and schema_migrations rows 1-6 as if the files had run.

Revision ID: 0006
Revises: (none)
"""

import sqlalchemy as sa
from alembic import op

from osmeter.store.migrate import legacy_upgrade, record

revision = "0006"
down_revision = None
branch_labels = None
depends_on = None

_REAL = ("min", "max", "mean", "median", "std", "cv", "trimmed_mean", "p1", "p5", "p95", "p99", "p999", "ci_low",
         "ci_high", "lebench_kbest")


def _id() -> sa.Column:
    return sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True)


def _postgresql() -> None:
    op.create_table(
        "runs", _id(), sa.Column("label", sa.Text), sa.Column("start_time", sa.Text, nullable=False),
        sa.Column("end_time", sa.Text), sa.Column("status", sa.Text, nullable=False),
        sa.Column("status_reason", sa.Text), sa.Column("source", sa.Text, nullable=False),
        *(sa.Column(c, sa.Text, nullable=False) for c in ("osmeter_version", "probe_version")),
        sa.Column("suite", sa.Text),
        *(sa.Column(c, sa.Text, nullable=False) for c in ("argv", "params", "machine", "meta")),
        sa.Column("content_sha256", sa.Text),
        sa.CheckConstraint("status IN ('running', 'complete', 'incomplete')"),
        sa.CheckConstraint("source IN ('run', 'import')"))
    op.create_index("runs_content_sha256", "runs", ["content_sha256"])
    op.create_table(
        "results", _id(),
        sa.Column("run_id", sa.BigInteger, sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("seq", sa.BigInteger, nullable=False), sa.Column("bench", sa.Text, nullable=False),
        sa.Column("params", sa.Text, nullable=False), sa.Column("unit", sa.Text),
        sa.Column("status", sa.Text, nullable=False), sa.Column("reason", sa.Text), sa.Column("n", sa.BigInteger),
        *(sa.Column(c, sa.Double) for c in _REAL[:-1]), sa.Column("outliers", sa.BigInteger),
        sa.Column("lebench_kbest", sa.Double), sa.Column("kbest_stable", sa.BigInteger),
        sa.Column("batch", sa.BigInteger), sa.Column("samples", sa.LargeBinary), sa.Column("extra", sa.Text),
        sa.Column("counters", sa.Text), sa.Column("record", sa.Text, nullable=False),
        sa.Column("flags", sa.Text), sa.Column("repetitions", sa.Text),
        sa.UniqueConstraint("run_id", "seq"), sa.CheckConstraint("status IN ('ok', 'skip', 'error')"))
    op.create_index("results_bench", "results", ["bench", "params"])
    op.create_table(
        "imported_files",
        sa.Column("run_id", sa.BigInteger, sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("position", sa.BigInteger, primary_key=True), sa.Column("sha256", sa.Text, nullable=False))
    op.create_index("imported_files_sha256", "imported_files", ["sha256"])
    op.create_table(
        "profiles", sa.Column("run_id", sa.BigInteger, primary_key=True),
        sa.Column("seq", sa.BigInteger, primary_key=True), sa.Column("status", sa.Text, nullable=False),
        sa.Column("mode", sa.Text, nullable=False), sa.Column("meta", sa.Text, nullable=False),
        sa.Column("stacks", sa.LargeBinary, nullable=False),
        sa.ForeignKeyConstraint(["run_id", "seq"], ["results.run_id", "results.seq"], ondelete="CASCADE"))
    for version, name in ((1, "initial"), (2, "lebench_names"), (3, "flags_repetitions"), (4, "content_hash"),
                          (5, "imported_files"), (6, "profiles")):
        record(op.get_bind(), version, name)


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "sqlite":
        legacy_upgrade(bind, 6)
    else:
        _postgresql()
