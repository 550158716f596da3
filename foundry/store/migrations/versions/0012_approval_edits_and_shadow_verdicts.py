"""An approval says whether a person approved it with edited parameters (a question answered
"yes, but not like that" was not needless), and keeps the verdict the L1 supervisor gave unseen
while a person decided (shadow mode), to measure how often the two agree. The metric aggregates
count the questions put to people and the shadow verdicts: a store holding approval resolutions
or shadow verdicts folded them into neither, so its aggregates are incomplete until `foundry
metrics rebuild` (as in 0011).

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NEWLY_COUNTED = ("approval_resolved", "shadow_verdict")


def upgrade() -> None:
    with op.batch_alter_table("approvals") as batch:
        batch.add_column(
            sa.Column("edited", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch.add_column(sa.Column("shadow_verdict", sa.JSON(), nullable=True))
    uncounted = sa.text("SELECT 1 FROM events WHERE kind IN :kinds LIMIT 1").bindparams(
        sa.bindparam("kinds", expanding=True)
    )
    if op.get_bind().execute(uncounted, {"kinds": list(NEWLY_COUNTED)}).first() is not None:
        op.execute(sa.text("UPDATE metrics_state SET complete = :no").bindparams(no=False))


def downgrade() -> None:
    """The aggregates of the newly counted events stay: an older Foundry draws none of them."""
    with op.batch_alter_table("approvals") as batch:
        batch.drop_column("shadow_verdict")
        batch.drop_column("edited")
