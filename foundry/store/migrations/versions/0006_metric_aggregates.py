"""Metric aggregates kept up to date as events are appended: bins, chats, tasks, and their state.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-26
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "metric_bins",
        sa.Column("resolution", sa.Integer(), primary_key=True),
        sa.Column("agent", sa.String(), primary_key=True),
        sa.Column("series", sa.String(32), primary_key=True),
        sa.Column("bucket", sa.BigInteger(), primary_key=True),
        sa.Column("label", sa.String(), primary_key=True),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.Column("total", sa.Float(), nullable=False),
        sa.Column("low", sa.Float(), nullable=False),
        sa.Column("high", sa.Float(), nullable=False),
    )
    op.create_table(
        "metric_sessions",
        sa.Column("session_id", sa.String(64), primary_key=True),
        sa.Column("agent", sa.String(), nullable=False),
        sa.Column("task_id", sa.String(64), nullable=False),
    )
    op.create_table(
        "metric_tasks",
        sa.Column("task_id", sa.String(64), primary_key=True),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("iterations", sa.Integer(), nullable=False),
        sa.Column("phase_seconds", sa.JSON(), nullable=False),
        sa.Column("agents", sa.JSON(), nullable=False),
    )
    op.create_index("ix_metric_tasks_started_at", "metric_tasks", ["started_at"])
    state = op.create_table(
        "metrics_state",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("events", sa.Integer(), nullable=False),
        sa.Column("tasks", sa.Integer(), nullable=False),
        sa.Column("complete", sa.Boolean(), nullable=False),
    )
    # A database with events gets its aggregates from `foundry metrics rebuild` (the dashboards
    # run it when they find them incomplete): the migration cannot read the events' types.
    has_events = op.get_bind().execute(sa.text("SELECT 1 FROM events LIMIT 1")).first() is not None
    op.bulk_insert(
        state, [{"id": 1, "version": 0, "events": 0, "tasks": 0, "complete": not has_events}]
    )


def downgrade() -> None:
    for table in ("metrics_state", "metric_tasks", "metric_sessions", "metric_bins"):
        op.drop_table(table)
