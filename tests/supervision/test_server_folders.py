"""The engine's gate judges a relative path where the MCP server really runs (its `cwd`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from foundry.runtime.engine import Engine
from foundry.store import Store
from tests.runtime.conftest import write_agent

FILES_SERVER = '''
from pathlib import Path

from mcp.server.mcpserver import MCPServer

server = MCPServer("files")


@server.tool()
def read_file(path: str) -> str:
    """The text of a file, relative to the server's working folder."""
    return Path(path).read_text()


if __name__ == "__main__":
    server.run()
'''

READS_INSIDE_THE_PROJECT = {
    "type": "policy",
    "id": "policy",
    "config": {
        "rules": [
            {
                "name": "reads-inside-project",
                "tool": "*.read*",
                "when": {"all": [{"param": "path", "op": "within", "value": "."}]},
                "action": "allow",
            },
            {"name": "nothing-else", "tool": "*", "action": "deny"},
        ],
        "loopDetection": False,
    },
}


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    store = Store.open(f"sqlite:///{tmp_path / 'engine.sqlite3'}")
    with Engine(store) as started:
        yield started
    store.close()


def files_server(script: Path, cwd: str) -> dict[str, object]:
    """The files server, declared a filesystem server: it takes relative paths from its `cwd`
    (of a server of no kind Foundry knows, a relative path cannot be placed)."""
    return {
        "command": "python",
        "args": [str(script)],
        "cwd": cwd,
        "confinement": {"kind": "filesystem"},
    }


def test_a_server_running_in_the_root_folder_cannot_read_outside_the_project(
    engine: Engine, tmp_path: Path
) -> None:
    script = tmp_path / "files_server.py"
    script.write_text(FILES_SERVER)
    calls = [
        {"name": "root.read_file", "arguments": {"path": "etc/hostname"}},
        {"name": "data.read_file", "arguments": {"path": "notes.txt"}},
    ]
    root = tmp_path / "reader"
    (root / "data").mkdir(parents=True)
    (root / "data" / "notes.txt").write_text("the notes of the project")
    agent = write_agent(
        root,
        {"turns": [*({"tool_calls": [call]} for call in calls), {"text": "Done."}]},
        servers={"root": files_server(script, "/"), "data": files_server(script, "data")},
        supervisors=[READS_INSIDE_THE_PROJECT],
    )
    session_id = engine.submit(engine.open_session(agent)).result(30)
    result = engine.submit(engine.send(session_id, "read them")).result(60)
    outside, inside = result.tool_calls
    assert outside["is_error"] and outside["approved_by"] == "policy:nothing-else"
    assert not inside["is_error"] and inside["approved_by"] == "policy:reads-inside-project"
    assert "the notes of the project" in inside["result"]
