"""TryBinding: the try panel decides typed and recorded calls under the policy as edited, against
the agent's servers and workspace, on a worker thread, and decides them again after each edit.

A try never runs a tool and records nothing. The servers are the agent's as edited; their tools
are those the Tools page listed when it started them, and those recorded when the agent's chats
started them. The workspace is the agent's folder, as its chats use it, unless one is chosen.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QFileDialog, QTableWidgetItem

from foundry.agent.models import PolicyConfig
from foundry.agent.trust import trust_key
from foundry.runtime.policy_records import PolicyRecords
from foundry.supervision.paths import server_folders
from foundry.supervision.policy import PolicyEngine
from foundry.supervision.policy_check import (
    CallToCheck,
    CheckedCall,
    loop_key_note,
    offer_problem,
)
from foundry.ui.editor.try_panel import TryPanel

if TYPE_CHECKING:
    from foundry.ui.editor.controller import EditorController

RECORDED_IN_PICKER = 50
SHOWN_PARAMS = 80
AGAIN_AFTER_EDIT_MS = 400
OUTCOME_WORDS = {"allow": "ALLOWED", "deny": "DENIED", "human": "ASKS A PERSON"}
# Opens the store of an editor without an engine; a future of its own lets `close` wait for a
# store still opening, which a cancelled task would otherwise drop unclosed.
STORE_OPENER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="try-panel-store")


def verdict_text(result: CheckedCall) -> str:
    """`DENIED (decided at L0, rule 'deny-writing-outside-the-workspace'): path is outside…`."""
    rule = f", rule '{result.rule}'" if result.rule else ", no rule matched"
    outcome = OUTCOME_WORDS[result.outcome]
    where = "sent on to a person" if result.level == "human" else f"decided at {result.level}"
    return f"{outcome} ({where}{rule}): {result.reason}"


def why_now(result: CheckedCall) -> str:
    """The reason of a decision as the changed list shows it: the rule that matched and how,
    or the loop, rate limit or default that decided (every reason names which)."""
    return result.reason or f"decided at {result.level}"


class TryBinding(QObject):
    def __init__(self, panel: TryPanel, editor: EditorController) -> None:
        super().__init__(panel)
        self.panel = panel
        self.editor = editor
        self.last_answer_ms: float | None = None
        self._records: Future[PolicyRecords] | None = None  # its own, without an engine
        self._compiled: tuple[PolicyConfig, PolicyEngine] | None = None
        self._recorded: list[CallToCheck] = []
        self._recorded_tools: dict[str, dict[str, Any]] = {}
        self._tried: CallToCheck | None = None  # the call last decided, decided again on edits
        self._replayed: int | None = None  # how many recorded calls were last replayed
        self._root: Path | None = None  # the workspace the compiled policy judges in
        self._decided: tuple[object, Path | None] = (None, None)  # on what agent, in where
        self._tries = 0  # counts the tries started: only the newest one's verdict shows
        self._replays = 0
        self._again = QTimer(self)
        self._again.setSingleShot(True)
        self._again.setInterval(AGAIN_AFTER_EDIT_MS)
        self._again.timeout.connect(self._decide_again)
        panel.decide.clicked.connect(self.try_call)
        panel.decide_shortcut.activated.connect(self.try_call)
        panel.replay.clicked.connect(self.test_recorded)
        panel.recorded.activated.connect(self._recorded_chosen)
        panel.try_tool.textChanged.connect(lambda _: self._show_offer())
        panel.choose_workspace.clicked.connect(self._choose_workspace)
        panel.workspace.textChanged.connect(self._workspace_changed)
        editor.undo_stack.indexChanged.connect(self._edited)

    # -- following the agent --------------------------------------------------------------------

    def agent_changed(self) -> None:
        """The agent was edited, undone or reloaded: what was tried is decided again, once
        the edits pause."""
        self._show_workspace()
        self._show_tool_names()
        if self._tried is not None or self._replayed is not None:
            self._again.start()

    def _edited(self, _index: int) -> None:
        self.agent_changed()

    def _workspace_changed(self, _text: str) -> None:
        if self._tried is not None or self._replayed is not None:
            self._again.start()

    def _decide_again(self) -> None:
        agent, decided_on, decided_in = self.editor.snapshot(), *self._decided
        if agent is None or (agent is decided_on and self.workspace() == decided_in):
            return
        if self._tried is not None:
            self.editor.spawn(self._decide(self._tried))
        if self._replayed is not None:
            self.editor.spawn(self._test_recorded(self._replayed))

    def _show_workspace(self) -> None:
        base_dir = self.editor.base_dir
        shown = f"the agent's folder: {base_dir}" if base_dir else "the agent's folder"
        self.panel.workspace.setPlaceholderText(shown)

    def _choose_workspace(self) -> None:
        dialog = QFileDialog(self.panel, "Choose the workspace the call is judged in")
        dialog.setFileMode(QFileDialog.FileMode.Directory)
        dialog.fileSelected.connect(self.panel.workspace.setText)
        dialog.open()

    def workspace(self) -> Path | None:
        """The workspace chosen, else the agent's folder (None: no agent is shown)."""
        chosen = self.panel.workspace.text().strip()
        if chosen:
            return Path(chosen).expanduser()
        return self.editor.base_dir

    # -- which server offers a tool -------------------------------------------------------------

    def offered_tools(self) -> dict[str, list[str]]:
        """The tools of each of the agent's servers whose list is known, by server: as the
        Tools page listed them when it ran the server, else as the agent's chats recorded."""
        agent = self.editor.snapshot()
        servers = agent.mcp_servers if agent is not None else {}
        offered: dict[str, list[str]] = {}
        for name in self._recorded_tools:
            server, _, tool = name.partition(".")
            if server in servers and tool:
                offered.setdefault(server, []).append(tool)
        for server, tools in self.editor.tools.known_tools.items():
            if server in servers:
                offered[server] = [tool.tool for tool in tools]
        return offered

    def _show_offer(self) -> None:
        tool = self.panel.try_tool.text().strip()
        agent = self.editor.snapshot()
        if not tool or agent is None:
            self.panel.show_offer(None)
            return
        self.panel.show_offer(offer_problem(tool, agent.mcp_servers, self.offered_tools()))

    def _show_tool_names(self) -> None:
        agent = self.editor.snapshot()
        offered = self.offered_tools()
        names = [f"{server}.{tool}" for server, tools in offered.items() for tool in tools]
        unlisted = [f"{server}." for server in (agent.mcp_servers if agent else {})]
        names += [name for name in unlisted if name[:-1] not in offered]
        self.panel.tool_names.setStringList(sorted(set(names)))
        self._show_offer()

    # -- trying one call ------------------------------------------------------------------------

    def try_call(self) -> None:
        tool = self.panel.try_tool.text().strip()
        params_text = self.panel.try_params.toPlainText().strip() or "{}"
        if not tool:
            self.panel.show_verdict("Name the tool to try (server.tool).")
            return
        try:
            params = json.loads(params_text)
        except json.JSONDecodeError as error:
            self.panel.show_verdict(f"The parameters are not valid JSON: {error}")
            return
        if not isinstance(params, dict):
            self.panel.show_verdict('The parameters must be a JSON object: {"name": value}')
            return
        call = CallToCheck(id="try", agent=self._agent_name(), tool=tool, params=params)
        self._tried = call
        self.editor.spawn(self._decide(call))

    async def _decide(self, call: CallToCheck) -> None:
        self._tries += 1
        attempt, started = self._tries, time.perf_counter()
        results = await self._what_if([call], await self._tool_schemas())
        if results is None or attempt != self._tries:
            return
        elapsed = (time.perf_counter() - started) * 1000
        result = results[0]
        self.editor.policy.show_matched(result.rule)
        self.panel.show_verdict(f"{verdict_text(result)} (decided in {elapsed:.0f} ms)")
        self._show_offer()
        self.last_answer_ms = elapsed

    # -- trying the recorded calls --------------------------------------------------------------

    def test_recorded(self) -> None:
        self._replayed = self.panel.replay_count.value()
        self.editor.spawn(self._test_recorded(self._replayed))

    async def _test_recorded(self, count: int) -> None:
        self._replays += 1
        attempt = self._replays
        self.panel.replay_summary.setText("Deciding the recorded calls…")
        calls = await self._calls_recorded(count)
        results = await self._what_if(calls, await self._tool_schemas()) if calls else []
        if results is None or attempt != self._replays:
            return
        changed = [result for result in results if result.changed]
        self._list_changed(changed, {call.id: call for call in calls})
        if not calls:
            self.panel.replay_summary.setText("This agent has no recorded tool calls yet.")
            return
        text = (
            f"{len(changed)} of {len(calls)} recorded calls would be decided differently "
            "(each decided when it was made)."
        )
        note = loop_key_note(results)
        self.panel.show_replayed(text if note is None else f"{text} {note}")

    def _list_changed(self, changed: list[CheckedCall], calls: dict[str, CallToCheck]) -> None:
        table = self.panel.changed
        table.setRowCount(len(changed))
        for row, result in enumerate(changed):
            params = json.dumps(calls[result.id].params, ensure_ascii=False)
            then = " ".join(part for part in (result.was_by, result.was_reason) if part)
            cells = (
                (result.tool, result.tool),
                (_shortened(params), params),
                (str(result.was), f"Decided then by {then}" if then else "As recorded"),
                (str(result.outcome), verdict_text(result)),
                (why_now(result), verdict_text(result)),
            )
            for column, (text, tip) in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(tip)
                table.setItem(row, column, item)

    async def load_recorded(self) -> None:
        """Fill the picker with this agent's latest recorded calls, and learn the tools its
        chats' servers listed (when the page is shown)."""
        self._recorded = list(reversed(await self._calls_recorded(RECORDED_IN_PICKER)))
        self._recorded_tools = await self._recorded_schemas()
        picker = self.panel.recorded
        picker.clear()
        picker.addItem("(pick a recorded call)" if self._recorded else "(no recorded calls)")
        for call in self._recorded:
            params = json.dumps(call.params, ensure_ascii=False)
            picker.addItem(f"{call.tool} {params[:60]}")
        self.agent_changed()

    def _recorded_chosen(self, row: int) -> None:
        if 1 <= row <= len(self._recorded):
            call = self._recorded[row - 1]
            self.panel.try_tool.setText(call.tool)
            self.panel.try_params.setPlainText(json.dumps(call.params, indent=1))
            self.try_call()

    async def _calls_recorded(self, count: int) -> list[CallToCheck]:
        document = self.editor.document
        if document is None:
            return []
        records = await self._records_to_use()
        return await asyncio.to_thread(records.calls, document.path, count)

    async def _recorded_schemas(self) -> dict[str, dict[str, Any]]:
        """The tools' schemas, as recorded when the agent's chats started their servers."""
        document = self.editor.document
        if document is None:
            return {}
        records = await self._records_to_use()
        return await asyncio.to_thread(records.schemas, document.path)

    async def _tool_schemas(self) -> dict[str, dict[str, Any]]:
        """The tools' schemas, as recorded in the agent's sessions, and as listed on the Tools
        page (newer)."""
        schemas = await self._recorded_schemas()
        self._recorded_tools = dict(schemas)
        for tools in self.editor.tools.known_tools.values():
            schemas |= {tool.name: tool.parameters for tool in tools}
        return schemas

    async def _what_if(
        self, calls: list[CallToCheck], tool_schemas: dict[str, dict[str, Any]] | None = None
    ) -> list[CheckedCall] | None:
        """Decide `calls` under the policy as edited, on a worker thread; the policy is compiled
        once per edit and workspace (the snapshot an edit leaves is never changed afterwards)."""
        agent, document, workspace = self.editor.snapshot(), self.editor.document, self.workspace()
        config = self.editor.policy.config_of(agent)
        if agent is None or document is None or config is None or workspace is None:
            return None
        if not await asyncio.to_thread(workspace.is_dir):
            self.panel.show_verdict(f"Not decided: the workspace {workspace} is not a folder.")
            return None
        records = await self._records_to_use()
        workspace = workspace.resolve()
        reuse = self._compiled and self._compiled[0] is config and self._root == workspace
        compiled = self._compiled[1] if reuse and self._compiled else None

        def decide() -> tuple[PolicyEngine, list[CheckedCall]]:  # the servers' folders: reads
            folders = server_folders(agent.mcp_servers, document.base_dir)
            engine = compiled or PolicyEngine(config, workspace, server_folders=folders)
            identity = trust_key(document.path)  # its grants apply, as in its chats
            decided = records.what_if(
                engine, config, workspace, calls, folders, tool_schemas, identity
            )
            return engine, decided

        engine, results = await asyncio.to_thread(decide)
        self._compiled, self._root = (config, engine), workspace
        self._decided = (agent, self.workspace())
        return results

    async def _records_to_use(self) -> PolicyRecords:
        """The engine's records in the app; without one, the store opened once (off the GUI
        thread)."""
        bridge = self.editor.bridge
        if bridge is not None:
            return bridge.engine.policy_records
        if self._records is None:
            self._records = STORE_OPENER.submit(PolicyRecords.opened)
        return await asyncio.wrap_future(self._records)

    def _agent_name(self) -> str:
        agent = self.editor.working
        return agent.metadata.name if agent is not None else "agent"

    def close(self) -> None:
        self._again.stop()
        records, self._records = self._records, None
        if records is not None and not records.cancelled():
            with contextlib.suppress(Exception):  # a store that failed to open is not open
                records.result().close()  # waits for one still opening: never left open


def _shortened(text: str) -> str:
    return text if len(text) <= SHOWN_PARAMS else text[: SHOWN_PARAMS - 1] + "…"
