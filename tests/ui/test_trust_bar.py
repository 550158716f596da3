"""Opening an agent in the app runs none of its commands until the user trusts them."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from foundry.ui.bridge import EngineBridge

from ..runtime.conftest import TIME_SERVER, write_agent
from .conftest import save_screenshot
from .test_session_window import open_window, rows, send

REPLY = {"turns": [{"text": "Hello."}, {"text": "Hello again."}]}


def marker_server(marker: Path) -> dict[str, object]:
    return {"type": "stdio", "command": "python", "args": ["-c", f"open({str(marker)!r}, 'w')"]}


def test_an_untrusted_agent_opens_with_its_commands_stopped_and_named(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    servers = {"mark": marker_server(marker)}
    agent = write_agent(tmp_path / "downloaded", REPLY, servers=servers, trusted=False)
    window, view = open_window(qtbot, bridge, agent)
    qtbot.waitUntil(view.trust.isVisible, timeout=5000)
    assert "mark: python -c" in view.trust.text.text()
    send(qtbot, view, "hi")  # the chat works without the tools
    qtbot.waitUntil(lambda: ("assistant", "Hello.") in rows(view), timeout=10000)
    window.resize(1100, 700)
    qtbot.wait(50)
    save_screenshot(window, tmp_path, "trust-bar.png")
    view.trust.keep_stopped.click()
    assert not view.trust.isVisible()
    assert not marker.exists()


def test_trust_and_start_starts_the_real_server_and_is_remembered(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    agent = write_agent(tmp_path / "timely", REPLY, servers={"time": TIME_SERVER}, trusted=False)
    _, view = open_window(qtbot, bridge, agent)
    qtbot.waitUntil(view.trust.isVisible, timeout=5000)
    view.trust.trust.click()
    qtbot.waitUntil(lambda: not view.trust.isVisible(), timeout=30000)
    session_id = next(iter(bridge.engine._sessions))
    host = bridge.engine._live(session_id).host
    assert "time.get_current_time" in [tool.name for tool in host.tools()]
    assert bridge.engine.trust.check(bridge.engine._live(session_id).document).trusted


def test_a_trusted_agent_opens_without_the_bar(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    agent = write_agent(tmp_path / "mine", REPLY, servers={"time": TIME_SERVER})
    _, view = open_window(qtbot, bridge, agent)
    qtbot.wait(100)
    assert not view.trust.isVisible()


def test_a_script_edited_while_the_bar_shows_it_is_not_trusted_unseen(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    """The person trusts what the bar named; a script changed on disk since then asks again."""
    marker = tmp_path / "ran"
    root = tmp_path / "downloaded"
    root.mkdir()
    (root / "server.py").write_text("print('harmless')\n")
    server = {"type": "stdio", "command": "python", "args": ["server.py"]}
    agent = write_agent(root, REPLY, servers={"run": server}, trusted=False)
    _, view = open_window(qtbot, bridge, agent)
    qtbot.waitUntil(view.trust.isVisible, timeout=5000)
    (root / "server.py").write_text(f"open({str(marker)!r}, 'w')\n")
    view.trust.trust.click()
    qtbot.waitUntil(lambda: "changed since" in view.status.text(), timeout=10000)
    assert view.trust.isVisible() and view.trust.trust.isEnabled()
    session_id = next(iter(bridge.engine._sessions))
    assert bridge.engine._live(session_id).host.held == ["run"]
    assert not marker.exists()


def test_an_untrusted_agent_s_connections_are_named_with_what_they_would_send(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    """An HTTP server's URL and the secrets its headers would take are part of what the bar
    names; nothing is connected to until Trust and start."""
    headers = {"Authorization": "env://GITHUB_TOKEN"}
    servers = {
        "docs": {"type": "streamable-http", "url": "http://127.0.0.1:9/mcp", "headers": headers}
    }
    agent = write_agent(tmp_path / "downloaded", REPLY, servers=servers, trusted=False)
    window, view = open_window(qtbot, bridge, agent)
    qtbot.waitUntil(view.trust.isVisible, timeout=5000)
    shown = view.trust.text.text()
    assert "docs: connects to http://127.0.0.1:9/mcp" in shown
    assert "Authorization (env://GITHUB_TOKEN)" in shown
    window.resize(1100, 700)
    qtbot.wait(50)
    save_screenshot(window, tmp_path, "trust-bar-connections.png")
    view.trust.keep_stopped.click()
