"""`foundry policy questions`: the questions an agent's calls asked a person, and the rules
proposed from the routine ones, read from Foundry's own store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from foundry.agent.document import AgentDocument
from foundry.cli import main
from foundry.store import Store
from tests.supervision.needless_agent import DENY, asked, careful_agent, routine_notes, write


@pytest.fixture
def agent(tmp_path: Path) -> AgentDocument:
    return careful_agent(tmp_path)


def test_the_table_and_the_proposal_are_printed(
    foundry_home: Path, agent: AgentDocument, capsys: pytest.CaptureFixture[str]
) -> None:
    with Store.open() as store:
        asked(store, agent, routine_notes(4))
    assert main(["policy", "questions", "--agent", str(agent.path)]) == 0
    out = capsys.readouterr().out
    assert "4 of your last 4 questions were approved unchanged: 1 rule would have settled 4" in out
    table = next(line for line in out.splitlines() if "fs.write_file" in line).split()
    assert table[:6] == ["writing-inside-the-workspace", "fs.write_file", "4", "4", "0", "0"]
    assert "Proposed: routine-fs-write_file-in-notes, above writing-inside-the-workspace" in out
    assert '"op":"within","value":"notes"' in out


def test_json_names_every_agent_that_asked_and_a_refused_group_gets_no_rule(
    foundry_home: Path, agent: AgentDocument, capsys: pytest.CaptureFixture[str]
) -> None:
    with Store.open() as store:
        asked(store, agent, [*routine_notes(3), (write("notes/x.md", "secret"), DENY)])
    assert main(["policy", "questions", "--json"]) == 0
    [line] = capsys.readouterr().out.splitlines()
    data = json.loads(line)
    assert Path(data["agent"]) == agent.path.resolve()
    assert (data["asked"], data["needless"], data["proposals"]) == (4, 3, [])
    assert any("denied" in why for why in data["not_proposed"])


def test_an_agent_that_cannot_be_read_is_one_line_and_a_failure(
    foundry_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["policy", "questions", "--agent", str(tmp_path / "gone")])
    assert code == 1
    err = capsys.readouterr().err
    assert "cannot be read" in err and "Traceback" not in err
