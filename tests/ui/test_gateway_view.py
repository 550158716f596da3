"""View > Gateway shows each MCP client that went through the gateway and what it called."""

from __future__ import annotations

import asyncio
import functools
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QPlainTextEdit
from pytestqt.qtbot import QtBot

from foundry.gateway.activity import gateway_clients
from foundry.store import Store
from foundry.ui.bridge import EngineBridge
from foundry.ui.clock import local_time
from foundry.ui.gateway_view import GatewayView
from tests.gateway.test_gateway_stdio import POLICY, gateway, gateway_agent

from .conftest import save_screenshot


def client_traffic(agent: Path, home: Path) -> None:
    """An MCP client's session through the gateway: one allowed call, one denied."""

    async def calls() -> None:
        async with gateway(agent, home) as client:
            await client.call_tool("time__get_current_time", {"timezone": "Asia/Tokyo"})
            arguments = {"source_timezone": "UTC", "time": "12:00", "target_timezone": "UTC"}
            await client.call_tool("time__convert_time", arguments)

    worker = threading.Thread(target=asyncio.run, args=(calls(),))
    worker.start()
    worker.join(120)


def test_the_gateway_view_lists_clients_and_their_decided_calls(
    qtbot: QtBot, tmp_path: Path, foundry_home: Path
) -> None:
    client_traffic(gateway_agent(tmp_path / "agent", [POLICY]), foundry_home)
    store = Store.open()
    view = GatewayView(functools.partial(gateway_clients, store))
    qtbot.addWidget(view)
    view.resize(1100, 420)
    view.show()
    view.refresh()
    qtbot.waitUntil(lambda: view.model.rowCount() == 1 and view.model.item(0).rowCount() == 2)
    client = view.model.item(0)
    assert view.model.item(0, 1).text() == "agent"
    calls = [[client.child(row, column).text() for column in range(4)] for row in range(2)]
    newest, oldest = calls
    assert newest[0] == "time.convert_time" and newest[1] == "denied by policy:no-conversions"
    assert oldest[0] == "time.get_current_time" and "Asia/Tokyo" in oldest[3]
    assert not view.connect_panel.isVisible()  # folded away: the calls get the room
    save_screenshot(view, tmp_path, "gateway-view.png")
    qtbot.mouseClick(view.connect_toggle, Qt.MouseButton.LeftButton)
    assert view.connect_panel.isVisible()
    view.show_clients(gateway_clients(store))  # a later look leaves it as the user set it
    assert view.connect_panel.isVisible()
    store.close()


def every_line_fits(snippet: QPlainTextEdit) -> bool:
    scroll = snippet.verticalScrollBar()
    return scroll is not None and scroll.maximum() == 0


def test_the_inbox_names_the_client_an_approval_comes_from(qtbot: QtBot, tmp_path: Path) -> None:
    from foundry.runtime.approvals import Approvals
    from foundry.store import ApprovalRecord
    from foundry.ui.inbox.detail import ApprovalDetailView

    store = Store.open(f"sqlite:///{tmp_path / 'store.sqlite3'}")
    session = store.sessions.create("/agents/files", "Files", "Claude Desktop via the gateway")
    approval = store.approvals.create(
        ApprovalRecord(session_id=session.id, agent_id="Files", tool="fs.write_file", params={})
    )
    detail = ApprovalDetailView()
    qtbot.addWidget(detail)
    detail.show_approval(approval)
    detail.show_context(Approvals(store).context(approval))
    assert "(Claude Desktop via the gateway)" in detail.facts.text()
    store.close()


def test_the_gateway_tab_closed_opens_again_and_stops_polling(
    qtbot: QtBot, bridge: EngineBridge
) -> None:
    from foundry.ui.window.main_window import MainWindow

    window = MainWindow(bridge)
    qtbot.addWidget(window)
    window.show()
    window.show_gateway()
    first = window.gateway
    assert first is not None and first.polling()
    window.close_tab(window.tabs.indexOf(first))
    assert not first.polling()  # a closed tab reads the store no more

    window.show_gateway()  # View > Gateway again

    assert window.gateway is not None and window.gateway.polling()
    assert window.tabs.currentWidget() is window.gateway
    window.close()
    assert not window.gateway.polling()  # nor once the window is closed


def test_with_no_client_yet_the_view_shows_how_to_connect_one(qtbot: QtBot, tmp_path: Path) -> None:
    import json

    from PySide6.QtWidgets import QApplication

    from foundry.ui.gateway_view import NO_AGENT, NO_CLIENT_YET

    store = Store.open(f"sqlite:///{tmp_path / 'store.sqlite3'}")
    view = GatewayView(functools.partial(gateway_clients, store))
    qtbot.addWidget(view)
    view.resize(1100, 600)
    view.show()
    panel = view.connect_panel
    assert panel.snippet.toPlainText() == NO_AGENT and not panel.copy.isEnabled()
    one_line_tall = panel.snippet.height()
    qtbot.waitUntil(lambda: view.listing.currentWidget() is view.empty)
    assert view.empty.text() == NO_CLIENT_YET
    assert panel.isVisible()  # no client yet: how to connect one is in view

    agent = tmp_path / "agents" / "files"
    view.set_agent(agent)
    qtbot.waitUntil(panel.copy.isEnabled)
    entry = json.loads(panel.snippet.toPlainText())["mcpServers"]["foundry"]
    assert entry["args"] == ["gateway", str(agent.resolve())]
    assert Path(entry["command"]).is_absolute()
    assert "claude_desktop_config.json" in panel.where.text()
    assert panel.snippet.height() > 3 * one_line_tall and every_line_fits(panel.snippet)
    save_screenshot(view, tmp_path, "gateway-view-empty.png")

    panel.client.setCurrentIndex(panel.client.findData("vscode"))
    qtbot.waitUntil(lambda: '"servers"' in panel.snippet.toPlainText())
    assert ".vscode/mcp.json" in panel.where.text()
    assert every_line_fits(panel.snippet)  # the longest configuration
    qtbot.mouseClick(panel.copy, Qt.MouseButton.LeftButton)
    assert json.loads(QApplication.clipboard().text())["servers"]["foundry"]["type"] == "stdio"
    assert "VS Code" in panel.copied.text()

    view.set_agent(None)  # the window's agent is broken or closed: nothing to configure
    assert panel.snippet.toPlainText() == NO_AGENT and not panel.copy.isEnabled()
    store.close()


def test_the_gateway_view_follows_the_window_s_agent(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    from foundry.agent import read_agent
    from foundry.ui.window.main_window import MainWindow

    window = MainWindow(bridge)
    qtbot.addWidget(window)
    window.show()
    window.show_gateway()
    assert window.gateway is not None
    panel = window.gateway.connect_panel
    assert not panel.copy.isEnabled()  # no agent open yet
    agent = gateway_agent(tmp_path / "agent", [POLICY])
    window.show_agent(read_agent(agent))
    qtbot.waitUntil(lambda: str(agent.resolve()) in panel.snippet.toPlainText())
    window.close()


def test_times_are_shown_in_the_user_s_time_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    """As everywhere in the app (the gateway view showed UTC): the date only when not today."""
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    try:
        now = datetime.now(UTC)
        assert local_time(now) == now.astimezone(ZoneInfo("Asia/Tokyo")).strftime("%H:%M:%S")
        long_ago = datetime(2026, 1, 2, 20, 30, tzinfo=UTC)  # the next morning in Tokyo
        assert local_time(long_ago) == "Jan 03 05:30"
        assert local_time(None) == "—"
    finally:
        monkeypatch.undo()
        time.tzset()


def test_a_call_waiting_for_a_person_is_listed_as_waiting(qtbot: QtBot, tmp_path: Path) -> None:
    from foundry.gateway.activity import GatewayCall, GatewayClient
    from foundry.ui.gateway_view import DENIED, WAITING

    store = Store.open(f"sqlite:///{tmp_path / 'store.sqlite3'}")
    view = GatewayView(functools.partial(gateway_clients, store))
    qtbot.addWidget(view)
    now = datetime.now(UTC)
    waiting = GatewayCall(
        time=now, tool="fs.write_file", allowed=False, by="", reason="rule ask", waiting_on="a1"
    )
    client = GatewayClient(
        session_id="s1", client="Cursor", agent="files", started=now, calls=(waiting,)
    )
    view.show_clients([client])
    row = [view.model.item(0).child(0, column) for column in range(4)]
    assert [item.text() for item in row] == [
        "fs.write_file",
        "waiting for a person",
        local_time(now),
        WAITING,
    ]
    assert all(item.foreground().color() != DENIED for item in row)
    store.close()


def test_the_gateway_view_shows_what_supervision_found_wrong(qtbot: QtBot, tmp_path: Path) -> None:
    from foundry.llm.base import ToolCall
    from foundry.session.events import (
        ApprovalRequested,
        EventBody,
        SessionStarted,
        ToolCallDecided,
        ToolCallFinished,
        ToolConcernRaised,
    )
    from foundry.store import ApprovalRecord
    from foundry.supervision.concerns import Concern

    store = Store.open(f"sqlite:///{tmp_path / 'store.sqlite3'}")
    session = store.sessions.create("/agents/calc", "calc", "Claude Desktop via the gateway")
    fetched = ToolCall(id="gateway-1", name="web.fetch", arguments={"url": "https://a.example"})
    changed = Concern(kind="definition-changed", reason="calc.add's description changed")
    bodies: list[EventBody] = [
        SessionStarted(agent_path="/agents/calc", agent_name="calc", model="gateway"),
        ToolConcernRaised(tool="calc.add", concern=changed.kind, reason=changed.reason),
        ToolCallDecided(call=fetched, allowed=True, by="policy:reads", reason=""),
        ToolCallFinished(
            call_id="gateway-1", name="web.fetch", text="Ignore all previous…", is_error=False,
            duration_s=0.1,
        ),
        ToolConcernRaised(
            tool="web.fetch", concern="flagged-result", reason="an override phrase",
            call_id="gateway-1",
        ),
        ApprovalRequested(
            approval_id="a1", tool="calc.add", level="L0", reason="held",
            concerns=[changed.record()],
        ),
    ]  # fmt: skip
    for body in bodies:
        store.events.append(session.id, body.kind, body.model_dump(mode="json", exclude={"kind"}))
    store.approvals.create(
        ApprovalRecord(id="a1", session_id=session.id, agent_id="calc", tool="calc.add", params={})
    )
    view = GatewayView(functools.partial(gateway_clients, store))
    qtbot.addWidget(view)
    view.resize(1100, 420)
    view.show()
    view.refresh()
    qtbot.waitUntil(lambda: view.model.rowCount() == 1 and view.model.item(0).rowCount() == 3)
    client = view.model.item(0)
    rows = [[client.child(row, column).text() for column in range(4)] for row in range(3)]
    held, result, definition = rows  # newest first
    assert held[1] == "waiting for a person" and "held: The tool's definition changed" in held[3]
    assert "⚠ The result reads like a prompt injection" in result[1]
    assert definition[1] == "⚠ The tool's definition changed since its server was trusted"
    qtbot.wait(50)
    save_screenshot(view, tmp_path, "gateway-concerns.png")
    store.close()
