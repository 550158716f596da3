"""What `foundry run` and `foundry chat` print of a session's events on stderr."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from foundry.cli.sessions import event_printer
from foundry.session.events import AgentApplied, Event, EventBody, SupervisorOff


def printed(body: EventBody, capsys: pytest.CaptureFixture[str]) -> str:
    event_printer(show_tokens=True)(
        Event(session_id="s1", seq=1, time=datetime.now(UTC), body=body)
    )
    return capsys.readouterr().err.strip()


def test_a_save_of_the_agent_says_what_the_chat_took_and_how_to_take_the_rest(
    capsys: pytest.CaptureFixture[str],
) -> None:
    saved = AgentApplied(agent_path="/a", applied=("its policy",), pending=("its model",))
    said = printed(saved, capsys)
    assert said.startswith("[agent saved] The agent was saved.")
    assert "follows its policy from the next step" in said
    assert "the saved model" in said and "`foundry chat --session s1`" in said


def test_a_supervisor_left_off_is_said_once_with_why(capsys: pytest.CaptureFixture[str]) -> None:
    off = SupervisorOff(supervisor_id="a", supervisor="Architect", reason="needs a capable model")
    assert printed(off, capsys) == "[supervisor off] Architect: needs a capable model"
