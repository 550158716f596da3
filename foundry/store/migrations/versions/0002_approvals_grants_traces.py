"""Tool-call approvals, grants and decision traces.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-21
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TIME = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "approvals",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("session_id", sa.String(64), nullable=True),
        sa.Column("agent_id", sa.String(), nullable=False),
        sa.Column("tool", sa.String(), nullable=False),
        sa.Column("params", sa.JSON(), nullable=False),
        sa.Column("policy_rule", sa.String(), nullable=True),
        sa.Column("level", sa.String(8), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("injection_risk", sa.Boolean(), nullable=False),
        sa.Column("supervisor_verdict", sa.JSON(), nullable=True),
        sa.Column("created_at", TIME, nullable=False),
        sa.Column("expires_at", TIME, nullable=True),
        sa.Column("resolved_at", TIME, nullable=True),
        sa.Column("resolved_by", sa.String(), nullable=True),
        sa.Column("reasoning", sa.String(), nullable=True),
        sa.Column("confidence", sa.Float(), nullable=True),
    )
    for column in ("session_id", "agent_id", "tool", "status"):
        op.create_index(f"ix_approvals_{column}", "approvals", [column])
    op.create_table(
        "grants",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("agent_glob", sa.String(), nullable=False),
        sa.Column("tool_glob", sa.String(), nullable=False),
        sa.Column("granted_by", sa.String(), nullable=False),
        sa.Column("created_at", TIME, nullable=False),
        sa.Column("expires_at", TIME, nullable=False),
        sa.Column("revoked_at", TIME, nullable=True),
    )
    op.create_table(
        "traces",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("session_id", sa.String(64), nullable=True),
        sa.Column("agent_id", sa.String(), nullable=False),
        sa.Column("tool", sa.String(), nullable=False),
        sa.Column("params", sa.JSON(), nullable=False),
        sa.Column("decision", sa.String(16), nullable=False),
        sa.Column("resolved_level", sa.String(16), nullable=False),
        sa.Column("resolved_by", sa.String(), nullable=False),
        sa.Column("policy_rule", sa.String(), nullable=True),
        sa.Column("approval_id", sa.String(64), nullable=True),
        sa.Column("reasoning", sa.String(), nullable=True),
        sa.Column("confidence", sa.Float(), nullable=True),
        sa.Column("decided_ms", sa.Float(), nullable=True),
        sa.Column("created_at", TIME, nullable=False),
    )
    for column in ("session_id", "agent_id", "approval_id", "created_at"):
        op.create_index(f"ix_traces_{column}", "traces", [column])


def downgrade() -> None:
    op.drop_table("traces")
    op.drop_table("grants")
    op.drop_table("approvals")
