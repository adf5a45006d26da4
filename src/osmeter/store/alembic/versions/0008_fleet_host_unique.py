"""0008 one complete run per host of a fleet run (issue 27).

Two `osmeter fleet run --resume F` at once stored the same host twice: each
checked, found nothing, and stored. A partial unique index makes the
database refuse the second: at most one `complete` run per (fleet, host).
The loser of a race gets the same refusal as a sequential second writer.

A store made before may already hold such duplicates: the index then covers
only runs stored after the last of them (`id > N`), so the migration never
has to drop or change a stored run.

Revision ID: 0008
Revises: 0007
"""

import sqlalchemy as sa
from alembic import op

from osmeter.store.migrate import record

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    bind = op.get_bind()
    dup = bind.execute(sa.text(
        "SELECT max(id) FROM runs WHERE fleet IS NOT NULL AND host IS NOT NULL AND status = 'complete' "
        "AND (fleet, host) IN (SELECT fleet, host FROM runs WHERE fleet IS NOT NULL AND host IS NOT NULL "
        "AND status = 'complete' GROUP BY fleet, host HAVING count(*) > 1)")).scalar()
    after = int(dup) if dup is not None else 0
    bind.execute(sa.text(
        "CREATE UNIQUE INDEX runs_fleet_host_complete ON runs (fleet, host) "
        f"WHERE fleet IS NOT NULL AND host IS NOT NULL AND status = 'complete' AND id > {after}"))
    record(bind, 8, "fleet_host_unique")
