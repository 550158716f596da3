"""Migrations: an empty database is created, an older one upgraded, a newer one refused."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlmodel import SQLModel

from foundry.home import FoundryHome
from foundry.store import Store, StoreError
from foundry.store.database import (
    HEAD,
    create_database_engine,
    current_revision,
    database_url,
    head_revision,
    migrate,
)
from foundry.store.tables import utc_now


def test_an_empty_database_is_migrated_to_the_latest_schema(database_url: str) -> None:
    with Store.open(database_url) as store:
        assert current_revision(store.engine) == head_revision()
        tables = set(sa.inspect(store.engine).get_table_names())
    assert {"sessions", "messages", "events", "approvals", "grants", "traces"} <= tables


def test_the_newest_revision_foundry_names_is_the_migrations_head() -> None:
    assert head_revision() == HEAD  # a new migration without HEAD moved on fails here


def test_a_database_one_revision_behind_is_upgraded(database_url: str) -> None:
    engine = create_database_engine(database_url)
    migrate(engine, "0008")
    engine.dispose()

    with Store.open(database_url) as store:
        assert current_revision(store.engine) == HEAD


def test_the_tables_match_the_migrations(database_url: str) -> None:
    with Store.open(database_url) as store, store.engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        assert compare_metadata(context, SQLModel.metadata) == []


def schema_and_rows(engine: sa.Engine) -> dict[str, Any]:
    """Every table as the database describes it (columns in any order, keys, indexes), with
    its rows. A key's sequence is left out: PostgreSQL gave migration 0006's `metrics_state.id`
    one, which its one row (id 1, named) never used."""
    inspector = sa.inspect(engine)
    described: dict[str, Any] = {}
    with engine.connect() as connection:
        for table in sorted(inspector.get_table_names()):
            key = inspector.get_pk_constraint(table)["constrained_columns"]
            columns = sorted(
                (
                    c["name"],
                    str(c["type"]),
                    c["nullable"],
                    None if c["name"] in key else c["default"],
                )
                for c in inspector.get_columns(table)
            )
            described[table] = {
                "columns": columns,
                "primary key": key,
                "foreign keys": sorted(
                    (f["constrained_columns"], f["referred_table"], f["referred_columns"])
                    for f in inspector.get_foreign_keys(table)
                ),
                "indexes": sorted(
                    (i["name"], i["column_names"], i["unique"])
                    for i in inspector.get_indexes(table)
                ),
                "rows": [
                    dict(row._mapping)
                    for row in connection.execute(sa.text(f"SELECT * FROM {table}"))
                ],
            }
    return described


def test_a_new_database_is_made_as_every_migration_in_turn_makes_it(database_url: str) -> None:
    engine = create_database_engine(database_url)
    migrate(engine, HEAD)  # named, not "head": through alembic, one migration after another
    through_migrations = schema_and_rows(engine)
    with engine.begin() as connection:
        SQLModel.metadata.drop_all(connection)
        connection.execute(sa.text("DROP TABLE alembic_version"))
    assert sa.inspect(engine).get_table_names() == []

    migrate(engine)  # an empty database: the newest schema at once

    assert schema_and_rows(engine) == through_migrations
    engine.dispose()


def test_a_new_database_whose_making_is_cut_short_is_left_as_it_was(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process killed while it makes a new store leaves no half of it behind (SQLite's driver
    committed each table on its own: the store then never opened again)."""
    engine = create_database_engine(database_url)
    make_tables = SQLModel.metadata.create_all

    def cut_short(*args: Any, **kwargs: Any) -> None:
        make_tables(*args, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(SQLModel.metadata, "create_all", cut_short)
    with pytest.raises(KeyboardInterrupt):
        migrate(engine)
    assert sa.inspect(engine).get_table_names() == []
    monkeypatch.undo()

    migrate(engine)
    assert current_revision(engine) == HEAD
    engine.dispose()


def _half_made(engine: sa.Engine) -> None:
    """Some of the tables and none of the rows, as a Foundry before 2026-11-27 left a store
    whose making was cut short."""
    with engine.begin() as connection:
        SQLModel.metadata.create_all(connection, tables=SQLModel.metadata.sorted_tables[:3])


def test_a_store_left_half_made_and_holding_nothing_is_made_anew(database_url: str) -> None:
    engine = create_database_engine(database_url)
    migrate(engine, HEAD)
    made_at_once = schema_and_rows(engine)
    with engine.begin() as connection:
        SQLModel.metadata.drop_all(connection)
        connection.execute(sa.text("DROP TABLE alembic_version"))
    _half_made(engine)

    with Store.open(database_url) as store:
        assert store.approvals.list() == []
    assert schema_and_rows(engine) == made_at_once
    engine.dispose()


def test_a_store_without_a_revision_that_holds_rows_or_other_tables_is_never_made_anew(
    database_url: str,
) -> None:
    """Only tables that are Foundry's and hold nothing are dropped: a row, or another
    program's table, means the database is not a new store."""
    engine = create_database_engine(database_url)
    _half_made(engine)
    events = SQLModel.metadata.tables["events"]
    with engine.begin() as connection:
        SQLModel.metadata.create_all(connection, tables=[events])
        connection.execute(
            events.insert().values(session_id="s", seq=1, kind="k", time=utc_now(), payload={})
        )
    with pytest.raises(StoreError, match=r"records no schema revision.*move it away"):
        Store.open(database_url).close()
    with engine.connect() as connection:
        assert connection.execute(sa.select(events.c.kind)).scalars().all() == ["k"]

    with engine.begin() as connection:
        connection.execute(events.delete())
        connection.execute(sa.text("CREATE TABLE their_notes (id INTEGER PRIMARY KEY)"))
    with pytest.raises(StoreError, match="records no schema revision"):
        Store.open(database_url).close()
    assert "their_notes" in sa.inspect(engine).get_table_names()
    engine.dispose()


def test_an_older_database_is_upgraded_and_keeps_its_data(database_url: str) -> None:
    engine = create_database_engine(database_url)
    migrate(engine, "0001")
    assert "approvals" not in sa.inspect(engine).get_table_names()
    old = Store(engine)
    session = old.sessions.create("agents/assistant", "Old")
    old.events.append(session.id, "message", {"text": "from before the upgrade"})
    engine.dispose()

    with Store.open(database_url) as store:
        assert current_revision(store.engine) == head_revision()
        assert store.sessions.get(session.id).agent_name == "Old"
        assert store.events.list(session.id)[0].payload == {"text": "from before the upgrade"}
        assert store.approvals.list() == []


def test_grants_and_approvals_from_before_agent_files_keep_their_meaning(
    database_url: str,
) -> None:
    """A grant stored before grants named their agent file still covers the agents its glob
    names (as a grant made through the API does); an approval from then names no file."""
    engine = create_database_engine(database_url)
    migrate(engine, "0008")
    expires = utc_now() + timedelta(hours=1)
    with engine.begin() as connection:
        connection.execute(
            sa.text(
                "INSERT INTO grants (id, agent_glob, tool_glob, granted_by, created_at, "
                "expires_at) VALUES ('g_old', 'worker', 'fs.*', 'human:ana', :now, :expires)"
            ),
            {"now": utc_now(), "expires": expires},
        )
        connection.execute(
            sa.text(
                "INSERT INTO approvals (id, agent_id, tool, params, level, status, "
                "injection_risk, created_at) VALUES ('a_old', 'worker', 'fs.read', '{}', 'L0', "
                "'pending', false, :now)"
            ),
            {"now": utc_now()},
        )
    engine.dispose()

    with Store.open(database_url) as store:
        (old,) = store.grants.active()
        assert (old.id, old.agent_path) == ("g_old", None)
        assert store.grants.matching("worker", "fs.read", agent_path="/anywhere/worker") == old
        assert store.grants.matching("other", "fs.read", agent_path="/anywhere/other") is None
        assert store.approvals.get("a_old").agent_path is None


def test_a_database_from_a_newer_foundry_is_refused(database_url: str) -> None:
    Store.open(database_url).close()
    engine = create_database_engine(database_url)
    with engine.begin() as connection:
        connection.execute(sa.text("UPDATE alembic_version SET version_num = '9999'"))
    engine.dispose()
    with pytest.raises(StoreError, match=r"revision 9999.*newer Foundry"):
        Store.open(database_url)


def test_the_default_store_lives_under_foundry_home(foundry_home: Path) -> None:
    with Store.open() as store:
        assert store.url == f"sqlite:///{foundry_home / 'data' / 'foundry.sqlite3'}"
        with store.engine.connect() as connection:
            assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
    assert FoundryHome.from_environment().config_dir == foundry_home / "config"


def test_foundry_database_url_chooses_the_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FOUNDRY_DATABASE_URL", f"sqlite:///{tmp_path / 'elsewhere.db'}")
    assert database_url() == f"sqlite:///{tmp_path / 'elsewhere.db'}"
    monkeypatch.setenv("FOUNDRY_DATABASE_URL", "postgresql://u:p@127.0.0.1/foundry")
    assert database_url() == "postgresql+psycopg://u:p@127.0.0.1/foundry"


def test_an_unreachable_database_gives_a_clear_error() -> None:
    with pytest.raises(
        StoreError, match=r"cannot open the store at postgresql\+psycopg://u:\*\*\*"
    ):
        Store.open("postgresql://u:secret@127.0.0.1:1/foundry")


def test_a_file_that_is_not_a_database_is_named_in_a_clear_error(tmp_path: Path) -> None:
    garbage = tmp_path / "foundry.sqlite3"
    garbage.write_bytes(b"not a database " * 100)

    with pytest.raises(StoreError) as raised:
        Store.open(f"sqlite:///{garbage}")

    assert str(raised.value) == (
        f"cannot open the store at sqlite:///{garbage}: file is not a database"
    )
    assert garbage.read_bytes() == b"not a database " * 100  # left as it was
