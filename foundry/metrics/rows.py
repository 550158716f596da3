"""The rows of a store's tables, read with its database's own driver (sqlite3 or psycopg): no
SQLAlchemy, no table models and no migration, for a command that only reads and should start
at once (`foundry metrics export`).

Queries are written with `?` placeholders in the SQL both databases speak, with the few
expressions that differ (JSON fields, a time as text) asked of the StoreRows. Every query of
one StoreRows sees the same snapshot of the store."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

_SQLITE = "sqlite:///"
_POSTGRES = "postgresql+psycopg://"
_BATCH = 5000  # rows a PostgreSQL cursor fetches at a time
_CURSORS = itertools.count()  # a name for each PostgreSQL cursor


class StoreRows:
    """An open connection to a store's database, used to read only. A driver's error while
    it is open (a table missing, the server gone) leaves it as a StoreError."""

    def __init__(self, url: str, connection: Any, errors: type[Exception]) -> None:
        self.url = url
        self.connection = connection
        self.errors = errors  # the driver's

    def rows(self, query: str, *params: Any) -> Iterator[tuple[Any, ...]]:
        """The rows of `query`, streamed."""
        raise NotImplementedError

    def tables(self) -> set[str]:
        raise NotImplementedError

    def iso_time(self, column: str) -> str:
        """The SQL of a time `column` in ISO 8601 as pydantic writes a UTC time:
        `2025-03-01T09:00:00Z`, with a fraction of a second (6 digits) only if there is one."""
        raise NotImplementedError

    def json_fields(self, column: str, paths: Sequence[str]) -> str:
        """The SQL of the values at `paths` (keys joined by dots) in the JSON of `column`, as
        the last columns of a query, which `fields` reads."""
        raise NotImplementedError

    def fields(self, columns: tuple[Any, ...]) -> tuple[Any, ...]:
        """The values `json_fields` asked for, from the query's last columns: each the Python
        value of its JSON type, None where the path is missing."""
        raise NotImplementedError

    def document(self, value: Any) -> Any:
        """A JSON column's value."""
        raise NotImplementedError

    def close(self) -> None:
        self.connection.close()

    def __enter__(self) -> StoreRows:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, _: TracebackType | None
    ) -> None:
        self.close()
        if isinstance(error, self.errors):
            raise store_error(f"cannot read the store at {_shown(self.url)}: {_reason(error)}")


class SQLiteRows(StoreRows):
    """SQLite keeps times as text in UTC (`2025-03-01 09:00:00.000000`) and JSON as text."""

    def rows(self, query: str, *params: Any) -> Iterator[tuple[Any, ...]]:
        return iter(self.connection.execute(query, params))

    def tables(self) -> set[str]:
        query = "SELECT name FROM sqlite_master WHERE type = 'table'"
        return {name for (name,) in self.rows(query)}

    def iso_time(self, column: str) -> str:
        return (
            f"substr({column}, 1, 10) || 'T' || substr({column}, 12, 8) || "
            f"CASE WHEN substr({column}, 20) = '.000000' THEN '' ELSE substr({column}, 20) END "
            "|| 'Z'"
        )

    def json_fields(self, column: str, paths: Sequence[str]) -> str:
        # a column each, read by sqlite3 as Python values (true and false come as 1 and 0)
        return ", ".join(f"json_extract({column}, '$.{path}')" for path in paths)

    def fields(self, columns: tuple[Any, ...]) -> tuple[Any, ...]:
        return columns

    def document(self, value: str) -> Any:
        return json.loads(value)


class PostgresRows(StoreRows):
    """PostgreSQL keeps times with their zone; psycopg reads JSON as Python values."""

    def rows(self, query: str, *params: Any) -> Iterator[tuple[Any, ...]]:
        name = f"foundry_rows_{next(_CURSORS)}"
        with self.connection.cursor(name=name) as cursor:  # on the server: streamed
            cursor.itersize = _BATCH
            cursor.execute(query.replace("?", "%s"), params)
            yield from cursor

    def tables(self) -> set[str]:
        query = (
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
        )
        return {name for (name,) in self.rows(query)}

    def iso_time(self, column: str) -> str:
        utc = f"({column} AT TIME ZONE 'UTC')"
        return (
            f"to_char({utc}, 'YYYY-MM-DD\"T\"HH24:MI:SS') || "
            f"CASE WHEN mod(extract(microseconds FROM {column})::int, 1000000) = 0 THEN '' "
            f"ELSE to_char({utc}, '.US') END || 'Z'"
        )

    def json_fields(self, column: str, paths: Sequence[str]) -> str:
        # one JSON array as text, parsed once: psycopg would parse each JSON value on its own,
        # which took most of an export's time
        values = (column + "".join(f" -> '{key}'" for key in path.split(".")) for path in paths)
        return f"json_build_array({', '.join(values)})::text"

    def fields(self, columns: tuple[Any, ...]) -> tuple[Any, ...]:
        return tuple(json.loads(columns[0]))

    def document(self, value: Any) -> Any:
        return value


def open_rows(url: str) -> StoreRows:
    """The rows of the store at `url` (a URL as `foundry.home.database_url` gives it).

    Raises StoreError when they cannot be read: no such file, an unreachable server, a URL of
    a database Foundry does not support."""
    if url.startswith(_SQLITE):
        return _open_sqlite(url)
    if url.startswith(_POSTGRES):
        return _open_postgres(url)
    raise store_error(
        f"cannot read the store at {_shown(url)}: Foundry reads SQLite and PostgreSQL"
    )


def _open_sqlite(url: str) -> StoreRows:
    import sqlite3

    path = Path(url.removeprefix(_SQLITE).partition("?")[0])
    if not path.is_file():  # connecting would create it
        raise store_error(f"there is no store at {path}")
    try:
        connection = sqlite3.connect(path, timeout=30, isolation_level=None)
        connection.execute("BEGIN")  # one snapshot (the first read takes it) for every query
    except sqlite3.Error as error:
        raise store_error(f"cannot open the store at {path}: {_reason(error)}") from None
    return SQLiteRows(url, connection, sqlite3.Error)


def _open_postgres(url: str) -> StoreRows:
    import psycopg

    try:
        connection = psycopg.connect(
            "postgresql://" + url.removeprefix(_POSTGRES), connect_timeout=10
        )
    except psycopg.Error as error:
        raise store_error(f"cannot open the store at {_shown(url)}: {_reason(error)}") from None
    connection.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ  # one snapshot
    return PostgresRows(url, connection, psycopg.Error)


def store_error(message: str) -> Exception:
    from foundry.store import StoreError  # only when it fails: it imports SQLAlchemy

    return StoreError(message)


def _reason(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


def _shown(url: str) -> str:
    """The URL without its password."""
    scheme, _, rest = url.partition("://")
    who, at, where = rest.rpartition("@")
    if not at or ":" not in who:
        return url
    return f"{scheme}://{who.partition(':')[0]}:***@{where}"
