"""Persistence (sqlmodel): SQLite by default, PostgreSQL by URL; migrations with alembic."""

from foundry.store.database import StoreError, database_url
from foundry.store.store import AlreadyResolved, NotFound, Row, Store
from foundry.store.tables import (
    ApprovalRecord,
    EventRecord,
    GrantRecord,
    MessageRecord,
    SessionRecord,
    TaskRecord,
    TraceRecord,
)

__all__ = [
    "AlreadyResolved",
    "ApprovalRecord",
    "EventRecord",
    "GrantRecord",
    "MessageRecord",
    "NotFound",
    "Row",
    "SessionRecord",
    "Store",
    "StoreError",
    "TaskRecord",
    "TraceRecord",
    "database_url",
]
