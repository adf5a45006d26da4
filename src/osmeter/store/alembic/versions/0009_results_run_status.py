"""0009 an index for counting a run's results by status (issue 27, at scale).

Every list of runs (`osmeter runs`, a run by id, a fleet run's runs) counts
each run's ok, skip and error results. Without this index each count reads
the run's result rows themselves, samples and records included: on a store
of 10 000 runs x 200 results, `osmeter runs` read the whole results table
(gigabytes). On (run_id, status) the counts are read off the index alone.

Revision ID: 0009
Revises: 0008
"""

from alembic import op

from osmeter.store.migrate import record

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("results_run_status", "results", ["run_id", "status"])
    record(op.get_bind(), 9, "results_run_status")
