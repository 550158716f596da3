"""The metric aggregates count every supervisor decision: a message supervisor's verdict
(`supervisor_decided`) and a call the L1 supervisor sent to a person (`approval_requested`)
besides tool calls and task criteria. No table changes; a store holding such events folded them
into nothing, so its aggregates are incomplete until `foundry metrics rebuild` (the dashboards
say so): the migration cannot read the events' types.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NEWLY_COUNTED = ("supervisor_decided", "approval_requested")


def upgrade() -> None:
    uncounted = sa.text("SELECT 1 FROM events WHERE kind IN :kinds LIMIT 1").bindparams(
        sa.bindparam("kinds", expanding=True)
    )
    if op.get_bind().execute(uncounted, {"kinds": list(NEWLY_COUNTED)}).first() is not None:
        op.execute(sa.text("UPDATE metrics_state SET complete = :no").bindparams(no=False))


def downgrade() -> None:
    """The aggregates of the newly counted events stay: an older Foundry draws none of them."""
