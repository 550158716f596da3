"""Walk issue #36's journeys in the real app under a real X server, screenshotting the screen.

    python bench/walk.py [--size 1280x800] [--size 1440x900] [--only NAME] [--out FOLDER]

For each size it starts Xvfb on a free display, runs the app there (`foundry.ui.app.run`, the
xcb platform, a fresh FOUNDRY_HOME, the embedded model) and drives its window in the same process
as a user would: keys typed into the focused widget, shortcuts pressed, buttons clicked, always
waiting for a condition (a widget shown, a status line, a reply finished), never for a fixed
time. Each journey saves its screenshots of the whole X screen as
docs/screenshots/walk/<WxH>/NN-name.png and prints what it saw; a journey that fails says where
and the walk goes on with the next. The shipped sample answers the first run; the journeys that
edit an agent edit a copy of the samples in the temporary folder, never the checkout's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

ROOT = Path(__file__).resolve().parent.parent
SIZES = ("1280x800", "1440x900")
SAMPLES = ("assistant", "architect", "context-curator")  # the sample and its supervisor agents
MISSING_COMMAND = "foundry-walk-no-such-command"
REPLY_S = 240.0  # a hang guard for the embedded model's reply, never a timing
STEP_S = 30.0

if TYPE_CHECKING:
    from PySide6.QtWidgets import QWidget

    from foundry.ui.session.view import SessionView
    from foundry.ui.window.main_window import MainWindow


# -- the parent: Xvfb and one app process per size -----------------------------------------------


def start_xvfb(size: str) -> tuple[subprocess.Popen[bytes], int]:
    """Xvfb on a display it chooses itself (-displayfd: no race between two walks)."""
    if not Path("/usr/bin/Xvfb").exists():
        raise SystemExit("bench/walk.py needs Xvfb: apt-get install xvfb")
    read, write = os.pipe()
    server = subprocess.Popen(
        [
            "/usr/bin/Xvfb",
            "-displayfd",
            str(write),
            "-screen",
            "0",
            f"{size}x24",
            "-nolisten",
            "tcp",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        pass_fds=(write,),
    )
    os.close(write)
    with os.fdopen(read) as answer:
        number = answer.readline().strip()  # written once the server is ready
    if not number:
        server.kill()
        raise RuntimeError("Xvfb did not start")
    return server, int(number)


def walk_size(size: str, only: list[str], out: Path) -> int:
    """Run the app under a new Xvfb of `size`; the app process's exit code."""
    server, number = start_xvfb(size)
    try:
        with tempfile.TemporaryDirectory(prefix="foundry-walk-") as home:
            env = dict(os.environ, DISPLAY=f":{number}", QT_QPA_PLATFORM="xcb")
            env["FOUNDRY_HOME"] = home
            env.pop("OLLAMA_HOST", None)
            command = [sys.executable, __file__, "--app", "--size", size, "--out", str(out)]
            for name in only:
                command += ["--only", name]
            print(f"== {size} on :{number}, FOUNDRY_HOME={home}", flush=True)
            return subprocess.run(command, env=env, cwd=ROOT, check=False).returncode
    finally:
        server.terminate()
        server.wait(timeout=30)


# -- the app process: the walk's steps -----------------------------------------------------------


@dataclass
class Walk:
    """What the journeys share: the window, the screen's size, where shots go, what was seen."""

    window: MainWindow
    size: str
    out: Path
    folder: Path  # the temporary folder the copies of agents are in
    number: int = 0  # the journey's number, the first digit of its shots' names
    shots: int = 0
    seen: list[str] = field(default_factory=list)

    def say(self, line: str) -> None:
        self.seen.append(line)
        print(f"   {line}", flush=True)

    async def until(
        self, condition: Callable[[], object], what: str, limit_s: float = STEP_S
    ) -> None:
        """Wait until `condition()` is true, letting Qt and the engine run; fail naming `what`."""
        deadline = time.monotonic() + limit_s
        while not condition():
            if time.monotonic() > deadline:
                raise TimeoutError(f"not seen within {limit_s:.0f} s: {what}")
            await asyncio.sleep(0.02)

    async def shot(self, name: str) -> Path:
        """The whole X screen, once the window has painted what the last step changed."""
        from PySide6.QtGui import QGuiApplication

        await self.settle()
        self.shots += 1
        path = self.out / f"{self.number}{self.shots}-{name}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        screen = QGuiApplication.primaryScreen()
        screen.grabWindow(0).save(str(path), "PNG", 0)  # 0: the most compressed
        self.say(f"screenshot {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
        return path

    async def settle(self) -> None:
        """Let pending events and paints run: a few turns of the loop after an update. (Never
        QApplication.processEvents() here: run inside this task, it would start other tasks'
        steps within it, which asyncio refuses, and those tasks would never run.)"""
        self.window.update()
        for _ in range(3):
            await asyncio.sleep(0.05)

    # Input, as a user gives it

    def type_into(self, widget: QWidget, text: str) -> None:
        from PySide6.QtTest import QTest

        widget.setFocus()
        QTest.keyClicks(widget, text)

    def press(self, keys: str, widget: QWidget | None = None) -> None:
        """A key sequence ("Ctrl+E", "Return") pressed on `widget` or the focused widget."""
        from PySide6.QtGui import QKeySequence
        from PySide6.QtTest import QTest
        from PySide6.QtWidgets import QApplication

        target = widget or QApplication.focusWidget() or self.window
        combination = QKeySequence(keys)[0]
        QTest.keyClick(target, combination.key(), combination.keyboardModifiers())

    def click(self, widget: QWidget) -> None:
        from PySide6.QtCore import Qt
        from PySide6.QtTest import QTest

        QTest.mouseClick(widget, Qt.MouseButton.LeftButton, pos=widget.rect().center())

    def click_tab(self, widget: QWidget) -> None:
        """Click the window's tab that shows `widget`."""
        from PySide6.QtCore import Qt
        from PySide6.QtTest import QTest

        tabs = self.window.tabs
        bar = tabs.tabBar()
        index = tabs.indexOf(widget)
        QTest.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(index).center())

    def choose_row(self, view: Any, row: int, column: int = 0, double: bool = False) -> None:
        """Click (or double-click) a row of a list or table view, scrolled into view first."""
        from PySide6.QtCore import Qt
        from PySide6.QtTest import QTest

        index = view.model().index(row, column)
        view.scrollTo(index)
        spot = view.visualRect(index).center()
        QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=spot)
        if double:
            QTest.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=spot)

    # What the window shows

    def chat(self) -> SessionView:
        from foundry.ui.session.view import SessionView

        view = self.window.tabs.currentWidget()
        if not isinstance(view, SessionView):
            raise AssertionError(f"the tab shown is not a chat: {type(view).__name__}")
        return view

    def status_bar(self) -> str:
        return self.window.statusBar().currentMessage()

    def tab_titles(self) -> list[str]:
        return [self.window.tabs.tabText(i) for i in range(self.window.tabs.count())]

    async def ask(self, text: str) -> SessionView:
        """Type `text` in the shown chat and press Enter, as chat apps send."""
        view = self.chat()
        self.type_into(view.input, text)
        self.press("Return", view.input)
        return view

    async def reply(self, view: SessionView, after: int) -> str:
        """The chat's next reply after its row `after`, once its turn has finished."""

        def replied() -> bool:
            return view.status.text() == "Ready." and any(
                row.kind in ("assistant", "error") for row in view.conversation.rows[after:]
            )

        await self.until(replied, "the reply and 'Ready.' in the chat's status line", REPLY_S)
        rows = [r for r in view.conversation.rows[after:] if r.kind in ("assistant", "error")]
        return rows[-1].text

    async def open_agent(self, path: Path) -> SessionView:
        """Open `path` as File > Open Agent does (its dialog is the platform's) and wait for its
        chat; trust its commands when it asks."""
        before = self.window.tabs.count()
        await self.window.open_agent(path)
        await self.until(lambda: self.window.tabs.count() > before, f"a chat of {path.name}")
        await self.settle()  # (the trust bar is shown with the tab, when it asks)
        return self.chat()

    async def trust(self, view: SessionView) -> None:
        if view.trust.isVisible():
            self.say(f"trust bar: {view.trust.text.text()[:160]}")
            self.click(view.trust.trust)
            await self.until(lambda: not view.trust.isVisible(), "the trust bar gone")

    def conversation(self, view: SessionView, kind: str) -> list[str]:
        return [row.text for row in view.conversation.rows if row.kind == kind]


def copy_samples(folder: Path, name: str = "assistant") -> Path:
    """The shipped sample and its supervisor agents copied under `folder` (once); the copy of
    the sample named `name`."""
    folder.mkdir(parents=True, exist_ok=True)
    for sample in SAMPLES:
        if not (folder / sample).exists():
            shutil.copytree(ROOT / "agents" / sample, folder / sample)
    if name != "assistant" and not (folder / name).exists():
        shutil.copytree(ROOT / "agents" / "assistant", folder / name)
    return folder / name


async def sample_copy_chat(walk: Walk) -> SessionView:
    """A chat of the copy of the sample, its tools trusted: opened once, shown again after."""
    from foundry.ui.session.view import SessionView

    path = copy_samples(walk.folder)
    for widget, document in walk.window.chats.agents.items():
        if document.path == path and isinstance(widget, SessionView):
            walk.click_tab(widget)
            await walk.until(
                lambda w=widget: walk.window.tabs.currentWidget() is w, "its tab shown"
            )
            return widget
    view = await walk.open_agent(path)
    await walk.trust(view)
    await walk.until(lambda: "Tools started" in view.status.text(), "the tools started")
    return view


async def editor_of_copy(walk: Walk) -> Any:
    """The editor of the sample's copy, opened with Ctrl+E from its chat."""
    from foundry.ui.editor import AgentEditor

    view = await sample_copy_chat(walk)
    view.input.setFocus()
    walk.press("Ctrl+E")
    await walk.until(
        lambda: isinstance(walk.window.tabs.currentWidget(), AgentEditor), "the editor"
    )
    editor = walk.window.tabs.currentWidget()
    await walk.until(lambda: editor.controller.document is not None, "the agent in the editor")
    return editor


def show_page(walk: Walk, editor: Any, name: str) -> None:
    from foundry.ui.editor.view import SECTIONS

    walk.choose_row(editor.sections, SECTIONS.index(name))


# -- the journeys --------------------------------------------------------------------------------


async def first_run(walk: Walk) -> None:
    """The app opens on the sample; a question sent with Enter; the typing indicator; the reply."""
    view = walk.chat()
    walk.say(f"window title: {walk.window.windowTitle()!r}; tabs: {walk.tab_titles()}")
    walk.say(f"status before asking: {view.status.text()!r}")
    after = len(view.conversation.rows)
    await walk.ask("What time is it in Paris?")
    await walk.until(
        lambda: view.typing.text() or len(view.conversation.rows) > after + 1,
        "the typing indicator",
    )
    walk.say(f"typing indicator: {view.typing.text()!r}")
    await walk.shot("typing")
    answer = await walk.reply(view, after)
    walk.say(f"reply: {answer!r}")
    walk.say(f"notices: {walk.conversation(view, 'notice')}")
    walk.say(f"timeline: {[row.title for row in view.timeline.rows][:12]}")
    await walk.shot("reply")


async def in_force(walk: Walk) -> None:
    """The time tool's rule set to ask a person and saved: the open chat asks at its next call."""
    view = await sample_copy_chat(walk)
    after = len(view.conversation.rows)
    await walk.ask("What time is it in Tokyo?")
    walk.say(f"before the save: {await walk.reply(view, after)!r}; {tool_verdicts(view)}")
    editor = await editor_of_copy(walk)
    await set_rule_action(walk, editor, "current-time-is-routine", "human")
    walk.press("Ctrl+S", editor.policy.rules)
    await walk.until(lambda: "Saved" in editor.status.text(), "the editor's 'Saved'")
    walk.say(f"editor: {editor.status.text()!r}")
    await walk.shot("saved-human")
    walk.click_tab(view)
    await walk.until(lambda: walk.window.tabs.currentWidget() is view, "the chat's tab")
    await walk.until(
        lambda: any("follows" in n for n in walk.conversation(view, "notice")),
        "the chat saying it follows the saved agent",
    )
    walk.say(f"chat notices: {walk.conversation(view, 'notice')}")
    after = len(view.conversation.rows)
    await walk.ask("And what time is it in Paris?")
    try:
        await walk.until(view.approval.isVisible, "the approval asked in the chat", REPLY_S)
    except TimeoutError:
        walk.say(f"no approval; the chat: {walk.conversation(view, 'assistant')[-1:]}")
        raise
    walk.say(f"chat status: {view.status.text()!r}")
    walk.say(f"status bar: {walk.window.approvals.waiting.text()!r}")
    walk.say(f"window title: {walk.window.windowTitle()!r}")
    await walk.shot("waiting-for-approval")
    walk.press("Ctrl+Shift+I", view.input)
    inbox = walk.window.inbox
    await walk.until(lambda: walk.window.tabs.currentWidget() is inbox, "the Approvals tab")
    walk.say(f"tabs: {walk.tab_titles()}")
    await walk.shot("approvals-tab")
    walk.click_tab(view)
    await walk.until(lambda: walk.window.tabs.currentWidget() is view, "the chat's tab")
    walk.click(view.approval.approve)
    answer = await walk.reply(view, after)
    walk.say(f"reply after approval: {answer!r}; {tool_verdicts(view)}")
    await walk.shot("approved")


def tool_verdicts(view: SessionView) -> list[str]:
    return [row.title for row in view.timeline.rows if row.title.startswith("tool ")]


async def set_rule_action(walk: Walk, editor: Any, rule: str, action: str) -> None:
    """On the Policy page: the rule found with Ctrl+F, its Action cell edited (F2, the choice
    typed, Enter)."""
    show_page(walk, editor, "Policy")
    policy = editor.policy
    walk.press("Ctrl+F", policy.rules)
    walk.press("Ctrl+A", policy.overview.filter)
    walk.type_into(policy.overview.filter, rule)
    model = policy.rules_model
    row = next(r for r in range(model.rowCount()) if not policy.rules.isRowHidden(r))
    walk.say(f"rule row {row + 1}: {[model.text(row, c) for c in range(model.columnCount())]}")
    walk.choose_row(policy.rules, row, 5)
    walk.press("F2", policy.rules)
    await walk.until(lambda: _open_combo(policy.rules) is not None, "the action's choices")
    combo = _open_combo(policy.rules)
    combo.setCurrentIndex(combo.findText(action))
    walk.press("Return", combo)
    await walk.until(lambda: model.text(row, 5) == action, f"the rule's action {action!r}")
    policy.rules.setFocus()


def _open_combo(table: Any) -> Any:
    from PySide6.QtWidgets import QComboBox

    combos = [c for c in table.viewport().findChildren(QComboBox) if c.isVisible()]
    return combos[0] if combos else None


async def save_refused(walk: Walk) -> None:
    """A supervisor's agent path set to ../gone: Ctrl+S refused with validate's message; undo."""
    editor = await editor_of_copy(walk)
    show_page(walk, editor, "Supervisors")
    page = editor.supervisors
    entries = page.entries
    row = next(i for i in range(entries.count()) if "architect" in entries.item(i).text().lower())
    walk.choose_row(entries, row)
    field = page.forms.agent.agent_path
    await walk.until(field.isVisible, "the agent supervisor's form")
    before = field.text()
    walk.press("Ctrl+A", field)
    walk.type_into(field, "../gone")
    walk.press("Ctrl+S", field)
    await walk.until(lambda: "Not saved" in editor.status.text(), "the save refused")
    await walk.until(
        lambda: (
            "gone" in editor.problems.title.text() + " ".join(editor.problems.model.stringList())
        ),
        "the problem listed in the Problems panel",
    )
    walk.say(f"editor: {editor.status.text()!r}; field: {field.text()!r}")
    walk.say(f"problems: {editor.problems.model.stringList()}")
    await walk.shot("save-refused")
    for _ in range(20):  # Ctrl+Z until the field reads as before (one undo, as it is)
        if field.text() == before:
            break
        walk.press("Ctrl+Z", field)
        await walk.settle()
    try:
        await walk.until(
            lambda: (
                "Not saved" not in editor.status.text() and not editor.problems.model.stringList()
            ),
            "the status line and the Problems panel following the undo",
        )
    except TimeoutError as stale:
        walk.say(f"STALE: {stale}")
    walk.say(f"after undo: field {field.text()!r}; editor: {editor.status.text()!r}")
    walk.say(f"problems: {editor.problems.model.stringList()}")
    await walk.shot("undone")


async def failing_server(walk: Walk) -> None:
    """An agent whose server's command does not exist: after trust, said in the status line,
    the chat and the Agent panel."""
    path = walk.folder / "missing-server"
    path.mkdir(parents=True, exist_ok=True)
    server = {"type": "stdio", "command": MISSING_COMMAND, "args": ["--serve"], "env": {}}
    config = {
        "metadata": {"name": "Missing server"},
        "settings": {},
        "mcpServers": {"files": server},
    }
    (path / "tsagent.json").write_text(json.dumps(config, indent=2))
    (path / "prompt.md").write_text("You are a helpful assistant.")
    view = await walk.open_agent(path)
    await walk.trust(view)
    await walk.until(lambda: "failed" in view.status.text(), "the status line saying it failed")
    await walk.until(
        lambda: any("failed" in e for e in walk.conversation(view, "error")),
        "the chat saying it failed",
    )
    walk.say(f"status: {view.status.text()!r}")
    walk.say(f"chat errors: {walk.conversation(view, 'error')}")
    await walk.until(
        lambda: (
            "failed" in walk.window.agent_panel.text()
            or "did not start" in walk.window.agent_panel.text()
        ),
        "the Agent panel saying it failed",
    )
    walk.say(f"agent panel names the command: {MISSING_COMMAND in walk.window.agent_panel.text()}")
    await walk.shot("server-failed")


async def try_panel(walk: Walk) -> None:
    """files.read_file on the sample: no server named files; a time call decided."""
    editor = await editor_of_copy(walk)
    show_page(walk, editor, "Policy")
    panel = editor.policy.try_panel
    await _try_call(walk, panel, "files.read_file", '{"path": "notes/todo.md"}')
    await walk.until(
        lambda: "No server" in panel.offer.text(), "the panel saying no server is named files"
    )
    walk.say(f"offer: {panel.offer.text()!r}; verdict: {panel.verdict.text()!r}")
    await walk.shot("no-such-server")
    await _try_call(walk, panel, "time.get_current_time", '{"timezone": "Europe/Paris"}')
    await walk.until(
        lambda: (
            "time.get_current_time" in panel.verdict.text()
            or ("ALLOW" in panel.verdict.text().upper() and not panel.offer.isVisible())
        ),
        "a verdict of the time call",
    )
    walk.say(f"verdict: {panel.verdict.text()!r}")
    await walk.shot("time-call-decided")


async def _try_call(walk: Walk, panel: Any, tool: str, parameters: str) -> None:
    verdict = panel.verdict.text()
    panel.try_tool.setFocus()
    walk.press("Ctrl+A", panel.try_tool)
    walk.type_into(panel.try_tool, tool)
    popup = panel.try_tool.completer().popup() if panel.try_tool.completer() else None
    if popup is not None and popup.isVisible():
        walk.press("Escape", popup)  # the completion list closed, as a user would
    panel.try_params.setFocus()
    walk.press("Ctrl+A", panel.try_params)
    walk.type_into(panel.try_params, parameters)
    walk.click(panel.decide)
    await walk.until(lambda: panel.verdict.text() != verdict, f"a verdict of {tool}")


async def broken_agent(walk: Walk) -> None:
    """A copy with a JSON syntax error: its Files page at the line; fixed there, saved; New Chat."""
    path = copy_samples(walk.folder, "assistant-broken")
    config = path / "tsagent.json"
    text = config.read_text()
    config.write_text(text.replace('"maxChatTurns": 10,', '"maxChatTurns": 10', 1))
    await walk.window.open_agent(path)
    await walk.until(
        lambda: "cannot be used" in walk.window.agent_panel.text(), "the Agent panel's problems"
    )
    walk.say(f"status bar: {walk.status_bar()!r}")
    await walk.shot("broken-opened")
    from foundry.ui.editor import AgentEditor

    walk.window.agent_panel.linkActivated.emit("edit")  # the panel's link, as a click on it
    tabs = walk.window.tabs

    def broken_agent_edited() -> bool:  # (another agent's editor is open from journey 2)
        shown = tabs.currentWidget()
        return isinstance(shown, AgentEditor) and path.name in tabs.tabText(tabs.currentIndex())

    await walk.until(broken_agent_edited, "the broken agent's editor")
    editor = walk.window.tabs.currentWidget()
    raw = editor.raw_files
    await walk.until(lambda: raw.isVisible() and raw.text.toPlainText(), "the Files page")
    line = raw.text.textCursor().blockNumber() + 1
    walk.say(
        f"Files page: {raw.problem.text()!r}; cursor on line {line}; "
        f"marked {raw.text.marked_lines()}"
    )
    await walk.shot("files-page-at-problem")
    raw.text.setFocus()
    walk.press("Ctrl+Home", raw.text)
    assert raw.text.find('"maxChatTurns": 10'), "the line to fix"
    walk.press("End", raw.text)
    walk.type_into(raw.text, ",")
    walk.press("Ctrl+S", raw.text)
    await walk.until(
        lambda: raw.outcome.text().startswith(("Saved", "Not saved")), "the save's outcome"
    )
    walk.say(f"saved: {raw.outcome.text()!r}; editor: {editor.status.text()!r}")
    await walk.shot("repaired")
    before = walk.window.tabs.count()
    walk.press("Ctrl+N", raw.text)
    await walk.until(lambda: walk.window.tabs.count() > before, "a new chat of the repaired agent")
    view = walk.chat()
    await walk.trust(view)
    walk.say(f"new chat: tabs {walk.tab_titles()}; status {view.status.text()!r}")
    await walk.shot("new-chat-after-repair")


async def many_tabs(walk: Walk) -> None:
    """8-12 chats, three approvals waiting: the count shows; the dark theme; the dashboards."""
    await sample_copy_chat(walk)
    waiting = walk.window.approvals
    for question in ("Time in Lima?", "Time in Oslo?", "Time in Cairo?"):
        await new_chat(walk)
        view = await walk.ask(question)
        await walk.until(
            lambda v=view: v.approval.isVisible() or v.status.text() == "Ready.",
            f"'{question}' asked or answered",
            REPLY_S,
        )
        walk.say(f"{question}: {view.status.text()!r}")
    while walk.window.tabs.count() < 10:
        await new_chat(walk)
    walk.press("Ctrl+Shift+I")
    await walk.until(
        lambda: walk.window.tabs.currentWidget() is walk.window.inbox, "the Approvals tab"
    )
    walk.say(
        f"tabs: {walk.tab_titles()}; status bar: {waiting.waiting.text()!r}; "
        f"title {walk.window.windowTitle()!r}"
    )
    await walk.shot("many-tabs")
    dialog = walk.window.show_preferences()
    await walk.until(dialog.isVisible, "Preferences")
    dialog.theme.setCurrentIndex(dialog.theme.findText("Dark", flags=_contains()))
    await walk.shot("preferences-dark")
    dialog.accept()
    await walk.until(lambda: not dialog.isVisible(), "Preferences closed")
    dashboards = next(a for a in walk.window.menus.view.actions() if "Dashboards" in a.text())
    dashboards.trigger()  # View > Dashboards
    await walk.until(
        lambda: (
            walk.window.dashboards is not None
            and walk.window.tabs.currentWidget() is walk.window.dashboards
        ),
        "the dashboards",
        120,
    )
    await walk.settle()
    await walk.shot("dashboards-dark")


async def new_chat(walk: Walk) -> SessionView:
    """Ctrl+N in the chat shown: a new chat of its agent, shown."""
    before = walk.window.tabs.count()
    walk.press("Ctrl+N", walk.chat().input)
    await walk.until(lambda: walk.window.tabs.count() > before, "a new chat's tab")
    return walk.chat()


def _contains() -> Any:
    from PySide6.QtCore import Qt

    return Qt.MatchFlag.MatchContains


@dataclass(frozen=True)
class Journey:
    name: str
    title: str
    run: Callable[[Walk], Awaitable[None]]


JOURNEYS = (
    Journey("first-run", "First run: a question on the sample, its reply and timeline", first_run),
    Journey("in-force", "A policy saved in the editor is in force in the open chat", in_force),
    Journey("save-refused", "A save validate refuses is refused, and undone", save_refused),
    Journey("failing-server", "A tool server that fails is said everywhere", failing_server),
    Journey("try-panel", "The Try panel decides against the agent's own servers", try_panel),
    Journey("broken-agent", "A broken agent fixed on its Files page, then a chat", broken_agent),
    Journey("many-tabs", "Many tabs and Approvals (3); dark theme; dashboards", many_tabs),
)


async def walk_journeys(window: MainWindow, size: str, out: Path, only: list[str]) -> int:
    """Each journey chosen, in order; how many failed. The window is closed at the end."""
    from PySide6.QtWidgets import QApplication

    width, height = (int(n) for n in size.split("x"))
    walk = Walk(
        window, size, out, Path(tempfile.mkdtemp(prefix="agents-", dir=os.environ["FOUNDRY_HOME"]))
    )
    failed = 0
    try:
        await walk.until(
            lambda: window.engine_ready and window.tabs.count() > 0, "the first chat", 120
        )
        window.setGeometry(0, 0, width, height)
        window.activateWindow()
        await walk.until(lambda: QApplication.activeWindow() is window, "the window active")
        for number, journey in enumerate(JOURNEYS, start=1):
            if only and journey.name not in only:
                continue
            walk.number, walk.shots = number, 0
            print(f"-- {number}. {journey.name}: {journey.title}", flush=True)
            started = time.monotonic()
            try:
                await journey.run(walk)
            except Exception:
                failed += 1
                print(f"   FAILED:\n{traceback.format_exc()}", flush=True)
                walk.out, kept = Path(tempfile.gettempdir()) / "walk-failures" / size, walk.out
                await walk.shot(f"{journey.name}-failed")
                walk.out = kept
            print(f"   ({time.monotonic() - started:.0f} s)", flush=True)
    finally:
        window.closed.set()  # the app stops its engine and returns (unsaved edits are the walk's)
    return failed


def run_app(size: str, out: Path, only: list[str]) -> int:
    """The app, with the walk started on its loop once the window exists."""
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    import foundry.ui.app as app
    from foundry.ui.window.main_window import MainWindow

    qt = QApplication(sys.argv[:1])
    outcome: dict[str, int] = {}

    def start() -> None:
        window = next(w for w in qt.topLevelWidgets() if isinstance(w, MainWindow))
        task = asyncio.ensure_future(walk_journeys(window, size, out, only))
        task.add_done_callback(lambda t: outcome.update(failed=t.result()))

    QTimer.singleShot(0, start)
    app.run()
    return 1 if outcome.get("failed", 1) else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", action="append", choices=SIZES, help="screen size (repeatable)")
    parser.add_argument("--only", action="append", default=[], choices=[j.name for j in JOURNEYS])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots" / "walk")
    parser.add_argument("--app", action="store_true", help=argparse.SUPPRESS)  # the app process
    args = parser.parse_args()
    sizes = args.size or list(SIZES)
    if args.app:
        return run_app(sizes[0], args.out / sizes[0], args.only)
    return max(walk_size(size, args.only, args.out) for size in sizes)


if __name__ == "__main__":
    sys.exit(main())
