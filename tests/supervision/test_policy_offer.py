"""What the try panel says of a tool no server of the agent offers."""

from __future__ import annotations

from foundry.supervision.policy_check import offer_problem

SERVERS = ("time", "github")
LISTED = {"time": ["get_current_time", "convert_time"]}


def test_a_tool_of_a_server_the_agent_has_not_is_said() -> None:
    assert offer_problem("files.read_file", SERVERS, LISTED) == (
        "No server of this agent is named 'files' (its servers: github, time): its chats "
        "cannot make this call."
    )


def test_a_tool_its_server_does_not_list_is_said_with_what_it_lists() -> None:
    assert offer_problem("time.get_time", SERVERS, LISTED) == (
        "The server 'time' does not offer 'get_time'; it offers convert_time, get_current_time."
    )


def test_a_tool_its_server_lists_or_may_offer_is_not_questioned() -> None:
    assert offer_problem("time.convert_time", SERVERS, LISTED) is None
    assert offer_problem("github.get_issue", SERVERS, LISTED) is None  # its list is not known


def test_a_name_without_a_server_is_said() -> None:
    assert offer_problem("read_file", (), {}) == (
        "'read_file' names no server: write server.tool (this agent's servers: none)."
    )
