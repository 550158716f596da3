"""The `supervised_*` tools: what each permission level may use, and what the tools change."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from foundry.agent.document import load_agent
from foundry.agent.models import IncludeMode, SupervisionPermission, ToolPermission
from foundry.llm.registry import ModelChoice
from foundry.llm.scripted import ScriptedProvider
from foundry.session.chat import ChatSession
from foundry.session.events import ContextChanged, EventBody
from foundry.session.gate import PermissionGate
from foundry.supervision.supervised_tools import SupervisedTools
from foundry.tools.catalog import ToolInfo

P = SupervisionPermission
REQUEST = "Please draft a formal letter to the board about the time zones of the meeting."

READ = (
    "get_conversation_history",
    "get_session_state",
    "get_current_rules",
    "get_current_references",
    "get_available_tools",
    "get_session_stats",
    "list_rules",
    "get_rule",
    "list_references",
    "get_reference",
    "list_tools",
    "list_tool_servers",
)
CONTEXT = (
    "include_rule",
    "exclude_rule",
    "include_reference",
    "exclude_reference",
    "include_tool",
    "exclude_tool",
    "create_rule",
    "update_rule",
    "delete_rule",
    "create_reference",
    "update_reference",
    "delete_reference",
)
ALLOW = ("allow_message",)
HOLD = ("block_message", "request_human_review")  # they hold the message: MODIFY_MESSAGES
MODIFY = ("modify_message",)
EVERY = READ + CONTEXT + ALLOW + HOLD + MODIFY
MAY_USE: dict[SupervisionPermission, tuple[str, ...]] = {
    P.READ_ONLY: READ + ALLOW,
    P.MODIFY_CONTEXT: READ + CONTEXT + ALLOW,
    P.MODIFY_MESSAGES: READ + ALLOW + HOLD + MODIFY,
    P.FULL_CONTROL: EVERY,
}
ARGUMENTS: dict[str, dict[str, Any]] = {
    "get_conversation_history": {"limit": 5},
    "get_rule": {"name": "formal-tone"},
    "get_reference": {"name": "time-zones"},
    "include_rule": {"name": "formal-tone"},
    "exclude_rule": {"name": "be-concise"},
    "include_reference": {"name": "time-zones"},
    "exclude_reference": {"name": "time-zones"},
    "include_tool": {"name": "time.convert_time"},
    "exclude_tool": {"name": "time.get_current_time"},
    "create_rule": {"name": "cite-sources", "text": "Cite your sources."},
    "update_rule": {"name": "formal-tone", "text": "Be very formal."},
    "delete_rule": {"name": "be-concise"},
    "create_reference": {"name": "board", "text": "The board meets on Mondays."},
    "update_reference": {"name": "time-zones", "include": "always"},
    "delete_reference": {"name": "time-zones"},
    "allow_message": {"reason": "fine"},
    "block_message": {"reason": "harmful"},
    "request_human_review": {"reason": "unsure", "priority": "high"},
    "modify_message": {"content": "Please draft a letter.", "reason": "shorter"},
}
NEEDED = {name: "MODIFY_CONTEXT" for name in CONTEXT} | dict.fromkeys(
    HOLD + MODIFY, "MODIFY_MESSAGES"
)


class Sink:
    """The session's event sink: every event, in order, as the journal would receive them."""

    def __init__(self) -> None:
        self.events: list[EventBody] = []

    async def __call__(self, body: EventBody) -> None:
        self.events.append(body)

    def context_changes(self) -> list[ContextChanged]:
        return [event for event in self.events if isinstance(event, ContextChanged)]


class StaticTools:
    """The tools a running time server offers, without starting it."""

    def __init__(self) -> None:
        self._tools = [
            ToolInfo(
                name=f"time.{tool}",
                server="time",
                tool=tool,
                description=f"{tool.replace('_', ' ')} in a time zone",
                parameters={"type": "object", "properties": {}},
                include=include,
                permission_required=False,
            )
            for tool, include in (
                ("get_current_time", IncludeMode.ALWAYS),
                ("convert_time", IncludeMode.MANUAL),
            )
        ]

    def tools(self) -> Sequence[ToolInfo]:
        return self._tools

    async def call(self, name: str, arguments: dict[str, Any], timeout_s: float = 60.0) -> Any:
        raise AssertionError("supervisors never run the supervised agent's tools")


def write_item(folder: Path, name: str, text: str, **header: Any) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    fields = json.dumps({"name": name, "description": name.replace("-", " "), **header})
    (folder / f"{name}.mdt").write_text(f"---\n{fields}---\n{text}\n")


def write_supervised_agent(root: Path, turns: Sequence[dict[str, Any]]) -> Path:
    """A folder agent with rules, a reference and a time server, answered by a scripted model."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "turns.json").write_text(json.dumps({"turns": list(turns)}))
    config = {
        "metadata": {"name": "Letter writer"},
        "settings": {"model": "scripted:turns.json"},
        "mcpServers": {"time": {"type": "stdio", "command": "python"}},
    }
    (root / "tsagent.json").write_text(json.dumps(config))
    (root / "prompt.md").write_text("You write letters.")
    write_item(root / "rules", "formal-tone", "Write formally.", include="manual")
    write_item(root / "rules", "be-concise", "Be concise.", include="always")
    write_item(root / "rules", "old-style", "Write like 1850.", include="manual", enabled=False)
    write_item(root / "refs", "time-zones", "Board members live in three zones.", include="agent")
    return root


async def supervised_session(
    root: Path, sink: Sink, turns: Sequence[dict[str, Any]] = ({"text": "Dear board,"},)
) -> ChatSession:
    """A real session of the agent in `root`, after one user turn."""
    path = write_supervised_agent(root, turns)
    agent = load_agent(path).agent
    assert agent is not None
    session = ChatSession(
        "s1",
        agent,
        ModelChoice.parse("scripted:turns.json"),
        ScriptedProvider(path / "turns.json"),
        PermissionGate(ToolPermission.NEVER),
        sink,
        tools=StaticTools(),
    )
    await session.send(REQUEST)
    return session


def tools_for(
    session: ChatSession, *permissions: SupervisionPermission, max_modifications: int = 10
) -> SupervisedTools:
    request = session.messages[0]
    return SupervisedTools(
        session, set(permissions), max_modifications, "request", request, supervisor_id="arch"
    )


@pytest.fixture
def sink() -> Sink:
    return Sink()


@pytest.fixture
async def session(tmp_path: Path, sink: Sink) -> ChatSession:
    return await supervised_session(tmp_path / "writer", sink)


@pytest.mark.parametrize("level", list(P))
async def test_specs_list_only_the_tools_a_permission_level_may_use(
    session: ChatSession, level: SupervisionPermission
) -> None:
    names = [spec.name for spec in tools_for(session, level).specs()]
    assert sorted(names) == sorted(f"supervised_{name}" for name in MAY_USE[level])
    assert len(set(names)) == len(names)


@pytest.mark.parametrize("tool", EVERY)
@pytest.mark.parametrize("level", list(P))
async def test_each_level_may_call_exactly_its_tools(
    session: ChatSession, sink: Sink, level: SupervisionPermission, tool: str
) -> None:
    tools = tools_for(session, level)
    events_before = list(sink.events)
    result = await tools.call(f"supervised_{tool}", ARGUMENTS.get(tool, {}))
    if tool not in MAY_USE[level]:
        assert result.startswith(f"not permitted: {NEEDED[tool]} is needed to ")
        assert tools.changes == [] and tools.decision is None and sink.events == events_before
    elif tool in READ:
        assert isinstance(json.loads(result), list | dict)
    elif tool in CONTEXT:
        assert tools.changes == [result]
    else:
        assert result.startswith("decision recorded") and tools.decision is not None


async def test_including_a_rule_changes_the_context_and_records_who_did_it(
    session: ChatSession, sink: Sink
) -> None:
    tools = tools_for(session, P.MODIFY_CONTEXT)
    before = json.loads(await tools.call("supervised_get_current_rules", {}))
    result = await tools.call("supervised_include_rule", {"name": "formal-tone"})
    after = json.loads(await tools.call("supervised_get_current_rules", {}))
    assert result == "included rule formal-tone"
    assert ("rule", "formal-tone") in session.context.included
    assert sink.context_changes() == [
        ContextChanged(item="rule", name="formal-tone", included=True, by="supervisor:arch")
    ]
    assert {"name": "formal-tone", "reason": "manual"} not in before
    assert {"name": "formal-tone", "reason": "manual"} in after


async def test_excluding_takes_even_an_always_item_out_of_context(session: ChatSession) -> None:
    tools = tools_for(session, P.FULL_CONTROL)
    await tools.call("supervised_exclude_rule", {"name": "be-concise"})
    await tools.call("supervised_exclude_tool", {"name": "time.get_current_time"})
    rules = json.loads(await tools.call("supervised_get_current_rules", {}))
    listed = json.loads(await tools.call("supervised_list_tools", {}))
    assert ("rule", "be-concise") in session.context.excluded
    assert "be-concise" not in [rule["name"] for rule in rules]
    assert {tool["name"]: tool["in_context"] for tool in listed} == {
        "time.get_current_time": False,
        "time.convert_time": False,
    }
    assert tools.changes == ["excluded rule be-concise", "excluded tool time.get_current_time"]


async def test_read_only_cannot_include_a_rule(session: ChatSession, sink: Sink) -> None:
    tools = tools_for(session, P.READ_ONLY)
    result = await tools.call("supervised_include_rule", {"name": "formal-tone"})
    assert result == "not permitted: MODIFY_CONTEXT is needed to include a rule"
    assert session.context.included == set() and sink.context_changes() == []


async def test_max_modifications_caps_changes_but_not_reading_or_deciding(
    session: ChatSession, sink: Sink
) -> None:
    tools = tools_for(session, P.FULL_CONTROL, max_modifications=2)
    await tools.call("supervised_include_rule", {"name": "formal-tone"})
    await tools.call("supervised_exclude_rule", {"name": "be-concise"})
    refused = [
        await tools.call("supervised_include_reference", {"name": "time-zones"}),
        await tools.call("supervised_create_rule", {"name": "x", "text": "x"}),
        await tools.call("supervised_modify_message", ARGUMENTS["modify_message"]),
    ]
    assert refused == ["refused: maxModifications (2) reached"] * 3
    assert json.loads(await tools.call("supervised_list_rules", {}))
    assert (await tools.call("supervised_allow_message", {"reason": "ok"})).startswith("decision")
    assert tools.changes == ["included rule formal-tone", "excluded rule be-concise"]
    assert len(sink.context_changes()) == 2 and tools.decision is not None
    assert tools.decision.action == "allow"


async def test_zero_max_modifications_allows_no_change(session: ChatSession) -> None:
    tools = tools_for(session, P.FULL_CONTROL, max_modifications=0)
    result = await tools.call("supervised_include_rule", {"name": "formal-tone"})
    assert result == "refused: maxModifications (0) reached" and not session.context.included


async def test_the_first_decision_wins(session: ChatSession) -> None:
    tools = tools_for(session, P.FULL_CONTROL)
    await tools.call("supervised_block_message", {"reason": "it asks for secrets"})
    later = await tools.call("supervised_allow_message", {"reason": "fine after all"})
    modify = await tools.call("supervised_modify_message", ARGUMENTS["modify_message"])
    assert later == "ignored: the decision was already made (block: it asks for secrets)"
    assert modify.startswith("ignored:")
    assert tools.decision is not None
    assert (tools.decision.action, tools.decision.reason) == ("block", "it asks for secrets")


async def test_modify_records_the_new_content(session: ChatSession) -> None:
    tools = tools_for(session, P.MODIFY_MESSAGES)
    await tools.call("supervised_modify_message", {"content": "Draft a letter.", "reason": "r"})
    assert tools.decision is not None
    assert (tools.decision.action, tools.decision.content) == ("modify", "Draft a letter.")
    assert tools.changes == []  # a rewrite is the decision, not a context change


async def test_created_rules_belong_to_this_session_only(tmp_path: Path, sink: Sink) -> None:
    session = await supervised_session(tmp_path / "writer", sink)
    original = session.agent
    files_before = sorted(p.name for p in (tmp_path / "writer" / "rules").iterdir())
    tools = tools_for(session, P.MODIFY_CONTEXT)
    created = await tools.call(
        "supervised_create_rule",
        {"name": "cite-sources", "text": "Cite sources.", "include": "always"},
    )
    await tools.call("supervised_update_rule", {"name": "formal-tone", "enabled": False})
    await tools.call("supervised_delete_reference", {"name": "time-zones"})
    assert created == "created rule cite-sources"
    assert session.agent.rule("cite-sources") is not None
    assert ("rule", "cite-sources") in {(c.item, c.name) for c in session.candidates()}
    assert session.agent.rule("formal-tone").enabled is False  # type: ignore[union-attr]
    assert session.agent.references == []
    assert original.rule("cite-sources") is None and len(original.references) == 1
    assert original.rule("formal-tone").enabled is True  # type: ignore[union-attr]
    assert sorted(p.name for p in (tmp_path / "writer" / "rules").iterdir()) == files_before
    assert tools.changes == [
        "created rule cite-sources",
        "updated rule formal-tone",
        "deleted reference time-zones",
    ]


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        ("supervised_include_rule", {"name": "no-such"}, "no rule named 'no-such'"),
        ("supervised_include_rule", {"name": "old-style"}, "the rule 'old-style' is disabled"),
        ("supervised_exclude_tool", {"name": "mail.send"}, "no tool named 'mail.send'"),
        ("supervised_get_reference", {"name": "x"}, "no reference named 'x'"),
        ("supervised_include_rule", {}, "supervised_include_rule: `name` must be given as text"),
        ("supervised_create_rule", {"name": "formal-tone", "text": "x"}, "a rule named"),
        ("supervised_create_rule", {"name": "bad name", "text": "x"}, "supervised_create_rule: "),
        ("supervised_update_rule", {"name": "formal-tone", "include": "often"}, "unknown include"),
        ("supervised_update_rule", {"name": "formal-tone"}, "supervised_update_rule: nothing"),
        ("supervised_delete_everything", {}, "unknown tool 'supervised_delete_everything'"),
    ],
)
async def test_bad_calls_are_answered_in_words_and_change_nothing(
    session: ChatSession, sink: Sink, tool: str, arguments: dict[str, Any], expected: str
) -> None:
    agent = session.agent
    tools = tools_for(session, P.FULL_CONTROL)
    result = await tools.call(tool, arguments)
    assert expected in result
    assert tools.changes == [] and tools.modifications == 0
    assert session.agent is agent and sink.context_changes() == []


async def test_including_twice_changes_nothing_the_second_time(
    session: ChatSession, sink: Sink
) -> None:
    tools = tools_for(session, P.MODIFY_CONTEXT)
    await tools.call("supervised_include_rule", {"name": "formal-tone"})
    again = await tools.call("supervised_include_rule", {"name": "formal-tone"})
    assert again == "rule formal-tone is already included; nothing changed"
    assert len(sink.context_changes()) == 1 and tools.modifications == 1


async def test_reading_tools_show_the_supervised_session(session: ChatSession) -> None:
    tools = tools_for(session, P.READ_ONLY)
    history = json.loads(await tools.call("supervised_get_conversation_history", {}))
    state = json.loads(await tools.call("supervised_get_session_state", {}))
    stats = json.loads(await tools.call("supervised_get_session_stats", {}))
    rule = json.loads(await tools.call("supervised_get_rule", {"name": "formal-tone"}))
    servers = json.loads(await tools.call("supervised_list_tool_servers", {}))
    assert history == [
        {"role": "user", "content": REQUEST},
        {"role": "assistant", "content": "Dear board,"},
    ]
    assert state["reviewing"] == {"direction": "request", "content": REQUEST}
    assert state["agent"] == "Letter writer"
    assert stats["messages"] == 2 and stats["rules"] == 3 and stats["tools"] == 2
    assert rule["text"].strip() == "Write formally." and rule["in_context"] is False
    assert servers == [{"name": "time", "type": "stdio", "tools": 2}]
