"""Names and text from agents, tools and models reach the terminal with their control characters
escaped: an agent or tool named with an escape sequence cannot recolour, clear or retitle the
terminal, nor forge a line of the output."""

from __future__ import annotations

from pathlib import Path

import pytest

from foundry.cli import main
from foundry.cli.terminal import escaped
from foundry.store import ApprovalRecord, Store

from .runtime.conftest import write_agent

RETITLE = "\x1b]0;owned\x07"  # sets the terminal's title
CLEAR = "\x1b[2J"  # clears the screen
FORGED = "ok\nfoundry: all approvals approved"  # a line that was never printed
REORDERED = "txt.\u202eexe"  # shows as "txt.exe" reversed


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("plain name, é ü 東京", "plain name, é ü 東京"),
        (f"clock{RETITLE}", "clock\\x1b]0;owned\\x07"),
        (f"time{CLEAR}.now", "time\\x1b[2J.now"),
        (FORGED, "ok\\nfoundry: all approvals approved"),
        (REORDERED, "txt.\\u202eexe"),
        ("carriage\rreturn", "carriage\\rreturn"),
    ],
)
def test_a_name_is_shown_on_one_line_with_its_controls_escaped(text: str, shown: str) -> None:
    assert escaped(text) == shown


def test_text_keeps_its_line_breaks_and_tabs_and_nothing_else() -> None:
    assert escaped(f"line one\n\tline two{CLEAR}", lines=True) == "line one\n\tline two\\x1b[2J"


def no_controls(text: str) -> bool:
    return all(char.isprintable() or char == "\n" for char in text)


def test_sessions_and_approvals_are_listed_with_names_escaped(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with Store.open() as store:
        session = store.sessions.create("/agents/x", agent_name=f"clock{RETITLE}")
        approval = store.approvals.create(
            ApprovalRecord(session_id=session.id, agent_id=FORGED, tool=f"time{CLEAR}.now")
        )
    assert main(["sessions", "list"]) == 0
    assert main(["approvals", "list"]) == 0
    assert main(["approvals", "show", approval.id]) == 0
    out = capsys.readouterr().out
    assert no_controls(out)
    assert "clock\\x1b]0;owned\\x07" in out and "time\\x1b[2J.now" in out
    assert "foundry: all approvals approved" not in out.splitlines()
    assert "ok\\nfoundry: all approvals approved" in out


def test_a_replys_escape_sequences_are_shown_not_obeyed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agent = write_agent(tmp_path / "painter", {"turns": [{"text": f"red{CLEAR} text\nend"}]})
    assert main(["run", str(agent), "-m", "hi"]) == 0
    out = capsys.readouterr().out
    assert "red\\x1b[2J text\nend" in out
    assert "\x1b" not in out
