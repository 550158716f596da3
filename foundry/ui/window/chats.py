"""The window's chat tabs: a new chat with the current agent, a persisted session reopened."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QWidget

from foundry.ui.settings import default_model
from foundry.ui.window.agent_dock import agent_name
from foundry.ui.window.repair import AgentRepair
from foundry.ui.window.tabs import short_title

if TYPE_CHECKING:
    from foundry.agent.document import AgentDocument
    from foundry.session.events import Event
    from foundry.ui.session.controller import SessionController
    from foundry.ui.session.view import SessionView
    from foundry.ui.window.main_window import MainWindow


log = logging.getLogger(__name__)


def chat_model(agent: AgentDocument) -> str | None:
    """The model a new chat runs: the agent's, or the default set in Preferences (None: the
    built-in one)."""
    if agent.agent is not None and agent.agent.settings.model_reference:
        return None
    return default_model() or None


def reopened_title(history: list[Event], agent_name: str) -> str:
    """A reopened chat's tab: its first message, as the session list titles it."""
    from foundry.session.events import MessageAdded
    from foundry.session.titles import session_title

    first = next(
        (
            event.body.message.content
            for event in history
            if isinstance(event.body, MessageAdded) and event.body.message.role == "user"
        ),
        None,
    )
    return session_title(first, agent_name)


class ChatTabs:
    """Each chat tab's controller and agent (for the Agent panel), in `window`'s tabs."""

    def __init__(self, window: MainWindow) -> None:
        self.window = window
        self.controllers: list[SessionController] = []
        self.agents: dict[QWidget, AgentDocument] = {}  # the agent of each chat tab
        self.repair = AgentRepair(window)  # the agent shown as broken, once repaired

    def new_chat(self) -> None:
        """A chat with the current agent; without one, New Chat says why (see repair.py)."""
        if self.window.agent is not None:
            self.window.spawn(self.start_chat())
        else:
            self.repair.new_chat_without_agent()

    async def start_chat(self) -> str | None:
        from foundry.agent import AgentError
        from foundry.ui.first_run import offer_capable_model

        window = self.window
        agent = window.agent
        assert agent is not None
        window.busy("Starting the agent's tools and supervisors…")
        try:
            engine = window.bridge.engine
            session_id = await window.bridge.call(
                engine.open_session(agent.path, model=chat_model(agent), hold_untrusted=True)
            )
            trust = await window.bridge.call(engine.trust_check(session_id))
        except AgentError as error:  # the agent was changed on disk since it was opened
            await window.show_problems(agent.path, error.problems)
            return None
        except Exception as error:  # shown to the user, the window goes on
            window.statusBar().showMessage(f"Could not start a chat: {error}")
            return None
        finally:
            window.progress.hide()
        title = self._chat_title(agent)
        controller = self._add_tab(session_id, title, title)
        self.agents[controller.view] = agent
        controller.show_trust(trust)
        offer_capable_model(controller.view, window.bridge, agent.path)
        window.statusBar().showMessage("Ready.", 3000)
        # What packaging/check-linux.sh waits for before it types into the chat.
        log.info("chat %s is ready for input (agent %s)", session_id, agent.path)
        return session_id

    def _add_tab(self, session_id: str, title: str, agent_label: str) -> SessionController:
        from foundry.ui.session.controller import SessionController
        from foundry.ui.session.view import SessionView

        tabs = self.window.tabs
        view = SessionView()
        controller = SessionController(view, self.window.bridge, session_id)
        controller.servers_changed.connect(lambda: self._servers_changed(controller))
        controller.agent_saved.connect(lambda path: self.window.spawn(self._reread(Path(path))))
        self.controllers.append(controller)
        index = tabs.addTab(view, "")
        self._retitle(view, title, agent_label)
        self._title_by_first_message(view, agent_label)
        tabs.setCurrentIndex(index)
        view.input.setFocus()
        return controller

    def _retitle(self, view: QWidget, title: str, agent_label: str) -> None:
        tabs = self.window.tabs
        index = tabs.indexOf(view)
        if index >= 0:
            tabs.setTabText(index, short_title(title))
            tabs.setTabToolTip(index, title if title == agent_label else f"{title} — {agent_label}")

    def _title_by_first_message(self, view: SessionView, agent_label: str) -> None:
        """The tab takes the chat's first message as its title once it is sent, as the list
        of sessions titles it; the agent's name stays in its tip."""
        from foundry.session.titles import session_title

        conversation = view.conversation
        titled = False

        def retitle(*_: object) -> None:
            nonlocal titled
            first = next((row.text for row in conversation.rows if row.kind == "user"), None)
            if titled or first is None:
                return
            titled = True
            self._retitle(view, session_title(first, agent_label), agent_label)

        conversation.rowsInserted.connect(retitle)
        conversation.modelReset.connect(retitle)

    def failed_servers_shown(self) -> dict[str, str]:
        """The tool servers that failed in the chat whose tab is shown (none if no chat is)."""
        shown = self.window.tabs.currentWidget()
        chat = next((c for c in self.controllers if c.view is shown), None)
        return chat.failed_servers if chat is not None else {}

    def _servers_changed(self, controller: SessionController) -> None:
        window = self.window
        if window.tabs.currentWidget() is controller.view and window.agent is not None:
            window.show_agent(window.agent)

    async def _reread(self, path: Path) -> None:
        """A chat's agent was saved (perhaps by another program): the panels follow it."""
        from foundry.agent import read_agent

        document = await asyncio.to_thread(read_agent, path)
        self.window.follow_saved_agent(document)

    def follow_saved_agent(self, document: AgentDocument) -> None:
        """The chats of the agent saved as `document` stand for it as saved."""
        for view, shown in list(self.agents.items()):
            if shown.path == document.path:
                self.agents[view] = document

    def _chat_title(self, document: AgentDocument) -> str:
        """The agent's name, numbered from its second chat: "Assistant", "Assistant 2"."""
        name = agent_name(document)
        chats = sum(1 for shown in self.agents.values() if shown.path == document.path)
        return name if chats == 0 else f"{name} {chats + 1}"

    def choose_session(self) -> None:
        self.window.spawn(self._choose_session())

    async def _choose_session(self) -> None:
        from foundry.ui.session.picker import SessionPicker

        window = self.window
        sessions = window.bridge.engine.stored_sessions
        records = await asyncio.to_thread(sessions.recent, 200)  # not on the GUI thread
        ids = [record.id for record in records]
        firsts = await asyncio.to_thread(sessions.first_messages, ids)

        async def search(words: list[str]) -> set[str]:
            return await asyncio.to_thread(sessions.mentioning, words, ids)

        dialog = SessionPicker(records, window, first_messages=firsts, search_messages=search)
        dialog.chosen.connect(lambda session_id: window.spawn(self.reopen_session(session_id)))
        dialog.open()

    async def reopen_session(self, session_id: str) -> None:
        """Show a persisted session where it was; an interrupted turn is finished."""
        window = self.window
        existing = next((c for c in self.controllers if c.session_id == session_id), None)
        if existing is not None:
            window.tabs.setCurrentWidget(existing.view)
            return
        window.busy("Reopening the session…")
        engine = window.bridge.engine
        try:
            history = await window.bridge.call(engine.events(session_id))
            chat = await window.bridge.call(
                engine.reopen_session(session_id, history=history, hold_untrusted=True)
            )
            trust = await window.bridge.call(engine.trust_check(session_id))
        except Exception as error:  # shown to the user, the window goes on
            window.statusBar().showMessage(f"Could not reopen the session: {error}")
            return
        finally:
            window.progress.hide()
        name = chat.agent.metadata.name
        controller = self._add_tab(session_id, reopened_title(history, name), name)
        window.spawn(self._remember_agent(controller.view, session_id))
        controller.load_history(history)
        controller.show_trust(trust)
        status = window.statusBar().showMessage
        if engine.is_answering(session_id):  # a task's agent at work: follow it, do not resume
            status("This session is answering now; its reply streams in.")
        elif await window.bridge.call(engine.running_elsewhere(session_id)):
            status("Another Foundry process is running this session's turn; it is followed here.")
            controller.follow()
        elif chat.needs_resume and chat.owes_reply and not trust.trusted:
            status("The last turn was interrupted; it finishes once you decide about the tools.")
        elif chat.needs_resume:
            status("The last turn was interrupted; finishing it…")
            controller.resume()
        else:
            window.statusBar().clearMessage()  # "Reopening the session…" is over

    async def _remember_agent(self, view: QWidget, session_id: str) -> None:
        """A reopened chat's agent, read off the GUI thread, for the Agent panel."""
        from foundry.agent import AgentError, read_agent

        window = self.window
        record = await asyncio.to_thread(window.bridge.engine.stored_sessions.get, session_id)
        try:
            document = await asyncio.to_thread(read_agent, Path(record.agent_path))
        except AgentError:
            return  # the agent is gone or broken: the panel keeps what it shows
        if window.tabs.indexOf(view) >= 0:
            self.agents[view] = document
            if window.tabs.currentWidget() is view and document.agent is not None:
                window.show_agent(document)

    def release(self, view: QWidget | None) -> SessionController | None:
        """Forget a closed tab; its chat, closed, if it was one."""
        if view is not None:
            self.agents.pop(view, None)
        chat = next((c for c in self.controllers if c.view is view), None)
        if chat is not None:
            self.controllers.remove(chat)
            chat.close()
        return chat
