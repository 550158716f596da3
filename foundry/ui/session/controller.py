"""Connects a SessionView to the engine: sends, stops, approvals, context changes and events."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, cast

from PySide6.QtCore import QModelIndex, QObject, Qt, QTimer, Signal

from foundry.agent.problems import AgentError
from foundry.agent.trust import TrustCheck, UntrustedAgent
from foundry.runtime.engine import SessionRunningElsewhere
from foundry.session.context import ItemKind
from foundry.session.events import (
    AgentApplied,
    AgentSave,
    ApprovalRequested,
    ApprovalResolved,
    ContextSelected,
    Event,
    ModelCallFinished,
    SessionRestarted,
    TurnFinished,
    TurnStarted,
)
from foundry.supervision.resolution import human_resolver
from foundry.ui.background import BackgroundTasks
from foundry.ui.bridge import EngineBridge
from foundry.ui.session.at_work import SupervisorsAtWork
from foundry.ui.session.chat_status import ChatStatus
from foundry.ui.session.timeline import MESSAGE_ROLE
from foundry.ui.session.view import NO_CONTEXT, SessionView

log = logging.getLogger(__name__)
ITEM_PREFIXES: dict[str, ItemKind] = {"rule": "rule", "ref": "reference", "tool": "tool"}
AT_WORK_TICK_MS = 100


class SessionController(QObject):
    """`restarted` says that the chat now runs its agent as saved (Restart chat);
    `servers_changed` that the tool servers that failed (`failed_servers`) are others now;
    `agent_saved` that its agent's file (the path) was saved, here or by another program."""

    restarted = Signal()
    servers_changed = Signal()
    agent_saved = Signal(str)

    def __init__(self, view: SessionView, bridge: EngineBridge, session_id: str) -> None:
        super().__init__(view)
        self.view = view
        self.bridge = bridge
        self.session_id = session_id
        self._status = ChatStatus()
        self._tasks = BackgroundTasks("session action", self._say)
        self._pending_approval: str | None = None
        self._shown_trust: TrustCheck | None = None  # the commands the trust bar names
        self._totals = {"turns": 0, "input": 0, "output": 0, "model time": 0.0}
        self._last_seq = 0  # the last event of the session shown here
        self._shown: set[int] = set()  # the events shown as they came
        self._history_loaded = False
        self._undoable: list[Event] = []  # the agent's saves to its files, the latest last
        self._at_work = SupervisorsAtWork()
        self._at_work_clock = QTimer(self)
        self._at_work_clock.setInterval(AT_WORK_TICK_MS)
        self._at_work_clock.timeout.connect(self._tick)
        bridge.event_arrived.connect(self.on_event)
        view.timeline.set_tally_supervisors(_statistics_supervisors(bridge, session_id))
        view.send.clicked.connect(self.send)
        view.send_shortcut.activated.connect(self.send)
        view.input.submitted.connect(self.send)
        view.stop.clicked.connect(self.stop)
        view.stop_shortcut.activated.connect(self.stop)
        view.decisions.clicked.connect(self.highlight_message)
        view.context.itemDoubleClicked.connect(
            lambda item: self._change_context(item.text(), False)
        )
        view.include.returnPressed.connect(self._include_typed)
        view.approval.approve.clicked.connect(lambda: self._answer_approval(True))
        view.approval.deny.clicked.connect(lambda: self._answer_approval(False))
        view.trust.trust.clicked.connect(self.trust_and_start)
        view.trust.keep_stopped.clicked.connect(self.keep_stopped)
        view.agent_bar.restart.clicked.connect(self.restart)
        view.saves_bar.undo.clicked.connect(self.undo_save)
        view.saves_bar.keep.clicked.connect(self.keep_saves)
        self._spawn(self._catch_up())

    def _spawn(self, coroutine: Any) -> None:
        self._tasks.spawn(coroutine)

    @property
    def failed_servers(self) -> dict[str, str]:
        """The chat's tool servers that failed, with why."""
        return dict(self._status.failed_servers)

    # -- user actions ---------------------------------------------------------------------------

    def send(self) -> None:
        text = self.view.input.toPlainText().strip()
        if not text or not self.view.send.isEnabled():
            return
        self.view.input.clear()
        self._set_busy(True)
        self._spawn(self._send(text))

    async def _send(self, text: str) -> None:
        engine = self.bridge.engine
        await self._run_turn(engine.send(self.session_id, text), unsent=text)

    def resume(self) -> None:
        """Finish a turn that was cut short (the app or the engine stopped mid-turn)."""
        self._set_busy(True)
        self._spawn(self._resume())

    async def _resume(self) -> None:
        await self._run_turn(self.bridge.engine.resume(self.session_id))

    async def _run_turn(self, turn: Any, unsent: str = "") -> None:
        """Run a turn on the engine; if another process is running one of this session, show
        that one instead (and keep the message that was not sent in the field)."""
        try:
            result = await self.bridge.call(turn)
        except SessionRunningElsewhere:
            self.view.input.setPlainText(unsent or self.view.input.toPlainText())
            self.follow()
            return
        except BaseException:
            self._set_busy(False)
            raise
        if result.ended_by == "error":  # (the other endings come with the turn's end)
            self._status.failed(result.error or "")
        self._set_busy(False)

    def follow(self) -> None:
        """Show the turn another Foundry process is running as it stores it; it cannot be
        stopped from here. If that process stops mid-turn, the turn is finished here."""
        self.view.send.setEnabled(False)
        self.view.stop.setEnabled(False)
        self._status.elsewhere = True
        self._show_status()
        self._spawn(self._follow())

    async def _follow(self) -> None:
        engine = self.bridge.engine
        try:
            await self.bridge.call(engine.follow(self.session_id, self._last_seq))
        finally:
            self._status.elsewhere = False
            self._set_busy(False)
        if engine.session(self.session_id).needs_resume:
            self._say("The other process stopped mid-turn; finishing it here…")
            self.resume()

    def show_trust(self, check: TrustCheck) -> None:
        """The agent's commands wait for the user's trust: say which, and offer to start them."""
        if not check.trusted:
            self._shown_trust = check
            self.view.trust.show_check(check)

    def trust_and_start(self) -> None:
        self.view.trust.trust.setEnabled(False)
        self._say("Starting the agent's tools…")
        self._spawn(self._trust_and_start())

    async def _trust_and_start(self) -> None:
        engine = self.bridge.engine
        shown = self._shown_trust
        try:
            await self.bridge.call(engine.start_held_servers(self.session_id, True, shown))
        except UntrustedAgent as changed:
            self.view.trust.show_check(changed.check)
            self._shown_trust = changed.check
            self._say("The agent's commands changed since they were shown: look at them again.")
            return
        finally:
            self.view.trust.trust.setEnabled(True)
        self.view.trust.hide()
        failed = self._status.failed_servers
        failed.update(_failures(engine.tool_statuses(self.session_id)))
        self.servers_changed.emit()
        self._say("" if failed else "Tools started; this agent's commands are trusted.")
        self._finish_interrupted_turn()

    def keep_stopped(self) -> None:
        self.view.trust.hide()
        self._say("Tools kept stopped: the agent answers without them.")
        self._finish_interrupted_turn()

    def restart(self) -> None:
        """Run the chat on its agent as saved, keeping the conversation (not mid-turn)."""
        if self._status.answering:
            self._say("Restart the chat once this reply is done (or stop it with Esc).")
            return
        self.view.agent_bar.restart.setEnabled(False)
        self._say("Restarting the chat on the saved agent…")
        self._spawn(self._restart())

    async def _restart(self) -> None:
        engine = self.bridge.engine
        try:
            await self.bridge.call(engine.restart_session(self.session_id))
            trust = await self.bridge.call(engine.trust_check(self.session_id))
        except AgentError as error:
            self._say(f"Not restarted: the saved agent does not load: {error.problems[0]}")
            return
        except Exception as error:  # e.g. its new model does not open: said, tried again later
            log.warning("restarting session %s failed", self.session_id, exc_info=error)
            self._say(f"The chat could not start again: {error}. Fix it, then Restart chat.")
            self.view.agent_bar.show()
            return
        finally:
            self.view.agent_bar.restart.setEnabled(True)
        self.view.agent_bar.hide()
        self.show_trust(trust)
        self._say("Restarted on the saved agent; the conversation is kept.")
        self.restarted.emit()

    def undo_save(self) -> None:
        """Take back the latest save the agent made to its files (not mid-turn)."""
        if not self._undoable:
            return
        if self._status.answering:
            self._say("Undo the agent's change once this reply is done (or stop it with Esc).")
            return
        self._spawn(self._undo(self._undoable[-1].seq))

    async def _undo(self, seq: int) -> None:
        from foundry.runtime.internal_tools import UndoRefused  # loaded with the internal tools

        self.view.saves_bar.undo.setEnabled(False)
        try:
            await self.bridge.call(self.bridge.engine.undo_agent_save(self.session_id, seq))
        except UndoRefused as error:
            self._say(f"Not undone: {error}")
        finally:
            self.view.saves_bar.undo.setEnabled(True)

    def keep_saves(self) -> None:
        self._undoable.clear()
        self.view.saves_bar.show_save(None)

    def _track_save(self, event: Event) -> None:
        """The agent's saves that can still be undone, as they are made and undone."""
        body = event.body
        assert isinstance(body, AgentSave)
        if body.undoes is not None:
            self._undoable = [save for save in self._undoable if save.seq != body.undoes]
        elif body.undoable:
            self._undoable.append(event)
        latest = self._undoable[-1].body if self._undoable else None
        self.view.saves_bar.show_save(cast(AgentSave | None, latest), len(self._undoable) - 1)

    def _finish_interrupted_turn(self) -> None:
        """A reopened session's interrupted turn waited for the decision about its tools."""
        if self.bridge.engine.session(self.session_id).needs_resume:
            self.resume()

    def stop(self) -> None:
        if self.view.stop.isEnabled():
            self._spawn(self.bridge.call(self.bridge.engine.cancel(self.session_id)))

    def _set_busy(self, busy: bool) -> None:
        self.view.send.setEnabled(not busy)
        self.view.stop.setEnabled(busy)
        self._status.answering = busy
        self._tick()

    def _say(self, text: str) -> None:
        """What an action did, in the status line until the chat's state changes."""
        self._status.say(text)
        self._show_status()

    def _show_status(self) -> None:
        self.view.status.setText(self._status.line())

    def highlight_message(self, index: QModelIndex) -> None:
        message_index = index.data(MESSAGE_ROLE)
        row = (
            self.view.conversation.row_of_message(message_index)
            if message_index is not None
            else None
        )
        if row is None:
            return
        target = self.view.conversation.index(row)
        self.view.messages.setCurrentIndex(target)
        self.view.messages.scrollTo(target)

    def _include_typed(self) -> None:
        self._change_context(self.view.include.text().strip(), True)
        self.view.include.clear()

    def _change_context(self, label: str, included: bool) -> None:
        prefix, _, name = label.split(" ")[0].partition(":")
        item = ITEM_PREFIXES.get(prefix)
        if item is None or not name:
            self._say("Write rule:NAME, ref:NAME or tool:SERVER.TOOL")
            return
        chat = self.bridge.engine.session(self.session_id)
        self._spawn(self.bridge.call(chat.set_included(item, name, included)))
        self._say(f"{'Included' if included else 'Excluded'} {item} {name}")

    def _answer_approval(self, approved: bool) -> None:
        if self._pending_approval is None:
            return
        reasoning = self.view.approval.reasoning.text().strip() or None
        self._spawn(self._resolve(self._pending_approval, approved, reasoning))

    async def _resolve(self, approval_id: str, approved: bool, reasoning: str | None) -> None:
        approvals = self.bridge.engine.approvals
        outcome = await asyncio.to_thread(
            approvals.decide, approval_id, approved, human_resolver("gui"), reasoning
        )
        if outcome.conflict:
            self._say(f"Already {outcome.approval.status} by {outcome.approval.resolved_by}")

    # -- engine events --------------------------------------------------------------------------

    async def _catch_up(self) -> None:
        """Show what a new chat recorded before this view followed it (a tool server that
        failed as the chat opened, say); a reopened chat's history is loaded instead."""
        engine = self.bridge.engine
        stored = await self.bridge.call(engine.events(self.session_id))
        if self._history_loaded:
            return
        for event in stored:
            if event.seq not in self._shown:
                self.on_event(event)

    def load_history(self, events: list[Event]) -> None:
        """Show a reopened session as it was: its messages, decisions, context and stats."""
        self._history_loaded = True
        self.view.conversation.replay(events)
        self.view.timeline.replay(events)
        self._last_seq = events[-1].seq if events else 0
        for event in events:
            self._note(event, live=False)
            self._status.apply(event.body)
        self._set_busy(False)
        self.view.messages.scrollToBottom()

    def close(self) -> None:
        """Stop following the engine's events (the chat's tab is closing)."""
        self.bridge.event_arrived.disconnect(self.on_event)
        self._at_work_clock.stop()

    def on_event(self, event: Event) -> None:
        if event.session_id != self.session_id:
            return
        self._last_seq = max(self._last_seq, event.seq)
        self._shown.add(event.seq)
        self.view.conversation.apply(event)
        self.view.timeline.apply(event)
        self._note(event, live=True)
        self._at_work.apply(event.body)
        failed = dict(self._status.failed_servers)
        self._status.apply(event.body)
        if failed != self._status.failed_servers:
            self.servers_changed.emit()
        self._tick()

    def _tick(self) -> None:
        """Name the supervisors at work with their elapsed time and say what the model call
        waits for, ticking while either may change."""
        self.view.at_work.setText(self._at_work.line())
        waiting = self._status.answering and not self._status.writing
        self._status.model_wait = (
            self.bridge.engine.model_wait(self.session_id) if waiting else None
        )
        self._show_status()
        if (self._at_work or waiting) and not self._at_work_clock.isActive():
            self._at_work_clock.start()
        elif not (self._at_work or waiting):
            self._at_work_clock.stop()

    def _note(self, event: Event, live: bool) -> None:
        """What an event changes besides the two lists: context, stats, busy state, approvals."""
        body = event.body
        if isinstance(body, ContextSelected):
            self._show_context(body)
        elif isinstance(body, ModelCallFinished):
            self._add_stats(
                input=body.input_tokens, output=body.output_tokens, model_time=body.total_s
            )
        elif isinstance(body, TurnFinished):
            self._add_stats(turns=1)
            if live:
                self._set_busy(False)
        elif isinstance(body, AgentApplied):
            self.view.agent_bar.show_pending(body)
            if live:
                self.agent_saved.emit(body.agent_path)
        elif isinstance(body, SessionRestarted):
            self.view.agent_bar.hide()
        elif isinstance(body, AgentSave) and live:
            self._track_save(event)
        elif isinstance(body, TurnStarted) and live:
            self._set_busy(True)
        elif isinstance(body, ApprovalRequested) and live:
            self._show_approval(body)
        elif isinstance(body, ApprovalResolved):
            self._pending_approval = None
            self.view.approval.hide()

    def _show_context(self, body: ContextSelected) -> None:
        self.view.context.clear()
        self.view.context.show_hint(NO_CONTEXT)  # (shown only while the list is empty)
        short = {"rule": "rule", "reference": "ref", "tool": "tool"}
        for entry in body.entries:
            score = f", score {entry.score:.2f}" if entry.score is not None else ""
            self.view.context.addItem(f"{short[entry.item]}:{entry.name}  ({entry.reason}{score})")

    def _add_stats(self, **amounts: float) -> None:
        for key, amount in amounts.items():
            name = key.replace("_", " ")
            self._totals[name] += amount
            value = self._totals[name]
            shown = f"{value:.1f} s" if name == "model time" else str(int(value))
            self.view.stats[name].setText(shown)

    def _show_approval(self, body: ApprovalRequested) -> None:
        self._pending_approval = body.approval_id
        self.view.approval.text.setText(
            f"<b>{body.tool}</b> needs your approval ({body.level}): {body.reason}"
        )
        self.view.approval.text.setTextFormat(Qt.TextFormat.RichText)
        self.view.approval.show()


def _statistics_supervisors(bridge: EngineBridge, session_id: str) -> list[str]:
    """The agent's collection supervisors: their decisions are running counts (the timeline
    shows one line of them per turn)."""
    agent = bridge.engine.session(session_id).agent
    return [entry.id for entry in agent.supervisors if entry.type == "collection"]


def _failures(statuses: list[Any]) -> dict[str, str]:
    """The servers that failed to start, with why."""
    return {status.name: status.error or "" for status in statuses if status.state == "failed"}
