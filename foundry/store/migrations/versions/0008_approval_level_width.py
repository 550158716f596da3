"""An approval's level holds "supervisor" (a message supervisor asking a person): ten characters,
which PostgreSQL refused in the column of eight that 0002 made.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-26
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("approvals") as table:
        table.alter_column("level", type_=sa.String(16), existing_nullable=False)


def downgrade() -> None:
    with op.batch_alter_table("approvals") as table:
        table.alter_column("level", type_=sa.String(8), existing_nullable=False)
