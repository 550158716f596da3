"""The window's tab widget and the closing of its tabs (an editor with unsaved edits asks first)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QSize, Qt
from PySide6.QtGui import QHelpEvent
from PySide6.QtWidgets import QTabBar, QTabWidget, QToolTip, QWidget

if TYPE_CHECKING:
    from foundry.ui.session.controller import SessionController
    from foundry.ui.window.main_window import MainWindow

TAB_TITLE_CHARACTERS = 32
LEAST_CHARACTERS = 12  # a crowded tab keeps this much of its title before the "…"
KEEP_WHOLE = "keep-whole"  # the tab data of a tab never elided (Approvals and its count)


def short_title(title: str, ending: str = "") -> str:
    """A tab's title cut to a width a tab bar can hold, keeping `ending` whole (what tells it
    apart from another tab); the whole title goes in its tip."""
    room = max(TAB_TITLE_CHARACTERS - len(ending), LEAST_CHARACTERS)
    if len(title) <= room:
        return title + ending
    return title[: room - 1].rstrip() + "…" + ending


class WindowTabBar(QTabBar):
    """Tabs that narrow down to LEAST_CHARACTERS of their title, then scroll; a tab marked
    KEEP_WHOLE never narrows; every tab's tip is its whole title unless it has a tip of its own."""

    def minimumTabSizeHint(self, index: int) -> QSize:
        whole = self.tabSizeHint(index)
        if self.tabData(index) == KEEP_WHOLE:
            return whole
        text = self.tabText(index)
        if len(text) <= LEAST_CHARACTERS:
            return whole
        metrics = self.fontMetrics()
        cut = metrics.horizontalAdvance(text) - metrics.horizontalAdvance(
            text[:LEAST_CHARACTERS] + "…"
        )
        return QSize(max(whole.width() - cut, 0), whole.height())

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            index = self.tabAt(event.pos())
            if index >= 0 and not self.tabToolTip(index):
                QToolTip.showText(event.globalPos(), self.tabText(index), self)
                return True
        return super().event(event)


def window_tabs() -> QTabWidget:
    """The central tab widget: closable tabs in document mode that elide, then scroll."""
    tabs = QTabWidget()
    tabs.setTabBar(WindowTabBar())
    tabs.setTabsClosable(True)
    tabs.setDocumentMode(True)
    tabs.setElideMode(Qt.TextElideMode.ElideRight)
    tabs.setUsesScrollButtons(True)
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
        window.editors.retitle()  # an editor named after its folder may not need it any more
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
