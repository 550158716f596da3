"""The window's tab widget and the closing of its tabs (an editor with unsaved edits asks first)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTabWidget, QWidget

if TYPE_CHECKING:
    from foundry.ui.session.controller import SessionController
    from foundry.ui.window.main_window import MainWindow

TAB_TITLE_CHARACTERS = 32


def short_title(title: str) -> str:
    """A tab's title cut to a width a tab bar can hold; the whole one goes in its tip."""
    if len(title) <= TAB_TITLE_CHARACTERS:
        return title
    return title[: TAB_TITLE_CHARACTERS - 1] + "…"


def window_tabs() -> QTabWidget:
    """The central tab widget: closable tabs in document mode."""
    tabs = QTabWidget()
    tabs.setTabsClosable(True)
    tabs.setDocumentMode(True)
    tabs.setElideMode(Qt.TextElideMode.ElideRight)
    return tabs


class TabClosing:
    """Closes `window`'s tabs, stopping what each runs."""

    def __init__(self, window: MainWindow) -> None:
        self.window = window

    def close_current(self) -> None:
        tabs = self.window.tabs
        if tabs.count():
            self.close(tabs.currentIndex())

    def close(self, index: int) -> None:
        from foundry.ui.unsaved import unsaved_editors

        view = self.window.tabs.widget(index)
        if view is not None and unsaved_editors([view]):
            self.window.spawn(self._close_when_settled(view))
            return
        self._close_now(index)

    async def _close_when_settled(self, view: QWidget) -> None:
        """An editor with unsaved edits closes after they are saved or discarded."""
        from foundry.ui.unsaved import UnsavedQuestion, saved, unsaved_editors

        editors = unsaved_editors([view])
        answer = await UnsavedQuestion(editors, self.window).answer()
        if answer == "cancel" or (answer == "save" and not await saved(editors)):
            return
        if self.window.tabs.indexOf(view) >= 0:
            self._close_now(self.window.tabs.indexOf(view))

    def _close_now(self, index: int) -> None:
        window = self.window
        view = window.tabs.widget(index)
        chat = self.release(view)
        if chat is not None:
            window.spawn(window.bridge.call(window.bridge.engine.close_session(chat.session_id)))
        window.tabs.removeTab(index)
        if view is not None and view not in (window.inbox, window.dashboards, window.gateway):
            view.deleteLater()  # (those three come back with their View action)

    def release(self, view: QWidget | None) -> SessionController | None:
        """Stop what a tab runs (an editor's tool servers, a task's updates); its chat, if any."""
        window = self.window
        window.editors.release(view)
        window.task_runs.forget(view)
        return window.chats.release(view)

    def release_all(self) -> None:
        tabs = self.window.tabs
        for index in range(tabs.count()):
            self.release(tabs.widget(index))
