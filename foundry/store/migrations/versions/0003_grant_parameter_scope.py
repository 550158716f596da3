"""Grants may be limited to calls whose parameters meet conditions.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("grants") as batch:
        batch.add_column(sa.Column("param_scope", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("grants") as batch:
        batch.drop_column("param_scope")
