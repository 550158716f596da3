"""Connecting to the store's database and bringing its schema up to date."""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from foundry.home import DATABASE_URL_VARIABLE as DATABASE_URL_VARIABLE  # where they were
from foundry.home import PRIVATE_FILE
from foundry.home import database_url as database_url
from foundry.home import normalise_url as normalise_url

if TYPE_CHECKING:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

MIGRATIONS = Path(__file__).parent / "migrations"
HEAD = "0012"  # the newest migration's revision (a test checks that alembic finds the same)


class StoreError(Exception):
    """The store cannot be used: unreachable, unwritable, or from a newer Foundry."""


def _sqlite_pragmas(connection: Any, _record: Any) -> None:
    cursor = connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()


def create_database_engine(url: str) -> sa.Engine:
    """The engine for `url`; a URL that names no database Foundry can use is a StoreError."""
    try:
        return _create_engine(url)
    except (sa.exc.ArgumentError, ValueError, ImportError) as error:  # unparsable, no driver
        raise StoreError(
            f"cannot use the database URL ({error}); {DATABASE_URL_VARIABLE} must look like "
            "sqlite:///PATH or postgresql://USER@HOST/DATABASE"
        ) from None


def _create_engine(url: str) -> sa.Engine:
    if url.startswith("sqlite"):
        _create_private_file(sa.make_url(url).database)
        # no pre-ping: a SQLite connection cannot go stale, and a ping is a statement more
        # before every repository call
        engine = sa.create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})
        sa.event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    return sa.create_engine(url, pool_pre_ping=True, connect_args={"connect_timeout": 10})


def _create_private_file(database: str | None) -> None:
    """Make a SQLite store's file, if it is not there, readable by its owner only: SQLite
    gives its write-ahead log and shared-memory files the database file's permissions. (A
    file that cannot be made here is left for SQLite to report.)"""
    if not database or database == ":memory:" or database.startswith("file:"):
        return
    with contextlib.suppress(OSError):  # there already, or its folder is not
        os.close(os.open(database, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE))


def alembic_config(engine: sa.Engine) -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["engine"] = engine
    return config


def head_revision() -> str:
    from alembic.script import ScriptDirectory

    script = ScriptDirectory.from_config(alembic_config(sa.create_engine("sqlite://")))
    head = script.get_current_head()
    assert head is not None
    return head


def current_revision(engine: sa.Engine) -> str | None:
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def _known(script: ScriptDirectory, revision: str) -> bool:
    from alembic.script.revision import ResolutionError
    from alembic.util import CommandError

    try:
        return script.get_revision(revision) is not None
    except (ResolutionError, CommandError):
        return False


# alembic keeps the migration under way in module globals: two at once in one process (stores
# opened on two threads) would run in each other's context
_MIGRATING = threading.Lock()


def migrate(engine: sa.Engine, revision: str = "head") -> None:
    """Upgrade the schema to `revision`; refuse a database written by a newer Foundry. A schema
    already at the newest revision is only read, and an empty database is given the newest one
    directly: alembic, 11 MiB of memory in every process that imports it, is imported only to
    upgrade an older schema."""
    if revision == "head" and _stored_revision(engine) == HEAD:
        return
    with _MIGRATING:
        if revision == "head" and _holds_nothing(engine):
            _create_newest_schema(engine)
        else:
            _migrate(engine, revision)


def _holds_nothing(engine: sa.Engine) -> bool:
    with engine.connect() as connection:
        return _is_new(connection)


def _is_new(connection: sa.Connection) -> bool:
    """Whether the database holds nothing: no tables, or only Foundry's with no rows and no
    revision recorded, as a store whose making was cut short by a Foundry before 2026-11-27
    (SQLite's driver committed each table on its own)."""
    from sqlmodel import SQLModel

    tables = sa.inspect(connection).get_table_names()
    if not tables:
        return True
    ours = set(SQLModel.metadata.tables) | {"alembic_version"}
    if not set(tables) <= ours:
        return False
    return not any(
        connection.execute(sa.text(f'SELECT 1 FROM "{table}" LIMIT 1')).first() for table in tables
    )


def _create_newest_schema(engine: sa.Engine) -> None:
    """The tables as the models define them, the rows the migrations seed, and alembic's record
    of the revision last, in one transaction (so a process killed meanwhile leaves the database
    as it was): what upgrading an empty database through every migration makes (a test
    compares the two). Tables an interrupted making left, holding nothing, are made anew."""
    from sqlmodel import SQLModel

    from foundry.store.changes import APPROVALS
    from foundry.store.tables import MetricsStateRecord, StoreChangeRecord

    version = sa.Table(
        "alembic_version",
        sa.MetaData(),
        sa.Column("version_num", sa.String(32), primary_key=True),
    )
    try:
        with engine.connect() as connection:
            if connection.dialect.name == "sqlite":
                # its driver commits each CREATE TABLE unless a transaction was begun
                connection.exec_driver_sql("BEGIN IMMEDIATE")
            if not _is_new(connection):
                return  # another process made it meanwhile
            left = sa.inspect(connection).get_table_names()
            SQLModel.metadata.drop_all(connection)
            if "alembic_version" in left:
                version.drop(connection)
            SQLModel.metadata.create_all(connection)
            for seed in (MetricsStateRecord(), StoreChangeRecord(topic=APPROVALS)):
                table = sa.inspect(type(seed)).local_table
                connection.execute(table.insert().values(**seed.model_dump()))
            version.create(connection)
            connection.execute(version.insert().values(version_num=HEAD))
            connection.commit()
    except sa.exc.DatabaseError:  # another process made it meanwhile, or began to
        if _stored_revision(engine) != HEAD:
            _migrate(engine, "head")


def _stored_revision(engine: sa.Engine) -> str | None:
    """The revision the database records, or None when it records none or cannot be read (a
    migration then creates the schema, or says what is wrong)."""
    try:
        with engine.connect() as connection:
            query = sa.text("SELECT version_num FROM alembic_version")
            return connection.execute(query).scalar()
    except sa.exc.SQLAlchemyError:
        return None


def _migrate(engine: sa.Engine, revision: str) -> None:
    from alembic import command
    from alembic.script import ScriptDirectory

    config = alembic_config(engine)
    script = ScriptDirectory.from_config(config)
    current = current_revision(engine)
    if current is not None and not _known(script, current):
        raise StoreError(
            f"the database at {engine.url.render_as_string(hide_password=True)} has schema "
            f"revision {current}, which this Foundry does not know; it was written by a newer "
            "Foundry: upgrade Foundry or point FOUNDRY_DATABASE_URL elsewhere"
        )
    if current is None and _holds_foundry_tables(engine):
        raise StoreError(
            f"the database at {engine.url.render_as_string(hide_password=True)} holds some of "
            "Foundry's tables but records no schema revision (a store whose making was cut "
            "short, or not Foundry's) and holds rows or other tables, so nothing was changed: "
            "move it away to start anew"
        )
    command.upgrade(config, revision)


def _holds_foundry_tables(engine: sa.Engine) -> bool:
    from sqlmodel import SQLModel

    return bool(set(sa.inspect(engine).get_table_names()) & set(SQLModel.metadata.tables))
