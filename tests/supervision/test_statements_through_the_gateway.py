"""The careful default's SQL judgement through the real gateway, on a real SQLite database: a
read runs and answers, a second statement hidden behind a comment never reaches the server, and
the database is as it was."""

from __future__ import annotations

import json
import sqlite3
import sys
from contextlib import closing
from pathlib import Path

import pytest

from foundry.cli import main
from tests.gateway.test_gateway_stdio import gateway, text_of
from tests.supervision import statements_server

SERVER = Path(__file__).with_name("statements_server.py")
ALWAYS = {"include": "always", "permissionRequired": False}


def shop_agent(tmp_path: Path) -> Path:
    """A new agent (the careful default), trusted, whose `db` server is declared a sqlite one
    and serves shop.db in the agent's folder, its workspace."""
    agent = tmp_path / "agent"
    assert main(["create-agent", str(agent), "--name", "Shop"]) == 0
    config = json.loads((agent / "tsagent.json").read_text())
    config["mcpServers"] = {
        "db": {
            "type": "stdio",
            "command": sys.executable,
            "args": [str(SERVER)],
            "confinement": {"kind": "sqlite"},
            "serverToolDefaults": ALWAYS,
        }
    }
    (agent / "tsagent.json").write_text(json.dumps(config))
    with closing(sqlite3.connect(agent / "shop.db")) as connection, connection:
        connection.executescript(
            "CREATE TABLE orders (id INTEGER PRIMARY KEY, cents INTEGER);"
            "INSERT INTO orders (cents) VALUES (999), (2000);"
        )
    assert main(["trust", "--yes", str(agent)]) == 0
    return agent


async def test_a_read_runs_and_a_hidden_second_statement_never_reaches_the_database(
    tmp_path: Path, foundry_home: Path
) -> None:
    agent = shop_agent(tmp_path)
    async with gateway(agent, foundry_home) as client:
        read = await client.call_tool(
            "db__read_query", {"query": "SELECT count(*), sum(cents) FROM orders"}
        )
        hidden = await client.call_tool(
            "db__read_query", {"query": "SELECT * FROM orders /* report */; DELETE FROM orders; --"}
        )
        nested = await client.call_tool(
            "db__read_query", {"query": "SELECT 1 /* /* */; DELETE FROM orders; /* */"}
        )
    assert not read.is_error and json.loads(text_of(read)) == [[2, 2999]]
    for refused in (hidden, nested):
        assert refused.is_error
        assert "deny-several-statements-in-one-read-query" in text_of(refused)
    with closing(sqlite3.connect(agent / "shop.db")) as connection, connection:
        assert connection.execute("SELECT count(*) FROM orders").fetchone() == (2,)


def test_the_server_runs_a_hidden_second_statement_when_it_is_given_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the gateway test refuses would reach the database: the server runs it all."""
    monkeypatch.chdir(tmp_path)
    with closing(sqlite3.connect(statements_server.DATABASE)) as connection, connection:
        connection.executescript("CREATE TABLE orders (id INTEGER PRIMARY KEY);"
                                 "INSERT INTO orders DEFAULT VALUES;")  # fmt: skip
    statements_server.run("SELECT * FROM orders /* report */; DELETE FROM orders; --")
    with closing(sqlite3.connect(statements_server.DATABASE)) as connection, connection:
        assert connection.execute("SELECT count(*) FROM orders").fetchone() == (0,)
