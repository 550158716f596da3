"""A counter per kind of record that other processes follow: bumped in every transaction that
changes approvals, so a process watching the store learns of the change without re-reading them.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-26
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    changes = op.create_table(
        "store_changes",
        sa.Column("topic", sa.String(32), primary_key=True),
        sa.Column("version", sa.BigInteger(), nullable=False),
    )
    op.bulk_insert(changes, [{"topic": "approvals", "version": 0}])


def downgrade() -> None:
    op.drop_table("store_changes")
