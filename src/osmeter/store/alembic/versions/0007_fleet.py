"""0007 fleet: where a run ran, which fleet run it belongs to, and an id that
is the same in every store the run is copied to (issue 15).

- host: the host's name in the Ansible inventory (`osmeter fleet run`);
  NULL for runs made on this machine.
- fleet: the fleet run's id; NULL outside fleet runs.
- uid: a random UUID given when the run is stored; `osmeter store copy`
  copies a run only to a store without its uid. Runs stored before get one
  here.

Revision ID: 0007
Revises: 0006
"""

import uuid

import sqlalchemy as sa
from alembic import op

from osmeter.store.migrate import record

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("runs", sa.Column("host", sa.Text))
    op.add_column("runs", sa.Column("fleet", sa.Text))
    op.add_column("runs", sa.Column("uid", sa.Text))
    bind = op.get_bind()
    runs = sa.table("runs", sa.column("id", sa.BigInteger), sa.column("uid", sa.Text))
    for (run_id,) in bind.execute(sa.select(runs.c.id)).all():
        bind.execute(runs.update().where(runs.c.id == run_id).values(uid=str(uuid.uuid4())))
    op.create_index("runs_fleet", "runs", ["fleet", "host"])
    op.create_index("runs_uid", "runs", ["uid"], unique=True)
    record(bind, 7, "fleet")
