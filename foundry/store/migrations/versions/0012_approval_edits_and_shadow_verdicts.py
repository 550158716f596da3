"""An approval says whether a person approved it with edited parameters (a question answered
"yes, but not like that" was not needless), and keeps the verdict the L1 supervisor gave unseen
while a person decided (shadow mode), to measure how often the two agree.

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


def upgrade() -> None:
    with op.batch_alter_table("approvals") as batch:
        batch.add_column(
            sa.Column("edited", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch.add_column(sa.Column("shadow_verdict", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("approvals") as batch:
        batch.drop_column("shadow_verdict")
        batch.drop_column("edited")
