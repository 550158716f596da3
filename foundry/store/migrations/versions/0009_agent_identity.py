"""Grants belong to the agent file they were made for, not to its name: a grant may name that
file (its resolved path), and an approval records the file of the agent that asked.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-27
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("grants") as batch:
        batch.add_column(sa.Column("agent_path", sa.String(), nullable=True))
    with op.batch_alter_table("approvals") as batch:
        batch.add_column(sa.Column("agent_path", sa.String(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("approvals") as batch:
        batch.drop_column("agent_path")
    with op.batch_alter_table("grants") as batch:
        batch.drop_column("agent_path")
