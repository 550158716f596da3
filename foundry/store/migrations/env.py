"""Alembic's entry point for Foundry's migrations; run through foundry.store.database.migrate."""

from __future__ import annotations

from alembic import context
from sqlmodel import SQLModel

import foundry.store.tables  # noqa: F401  (registers the tables on SQLModel.metadata)

engine = context.config.attributes["engine"]

with engine.begin() as connection:
    context.configure(
        connection=connection,
        target_metadata=SQLModel.metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()
