"""The dashboards' tab, loaded ahead of View > Dashboards: pyqtgraph imported off the GUI thread,
the charts drawn hidden, one loading shared by the preload and the opening."""

from __future__ import annotations

import asyncio
import importlib
import logging
from types import ModuleType
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QSize
from PySide6.QtWidgets import QWidget

if TYPE_CHECKING:
    from foundry.ui.dashboards import DashboardController, DashboardView
    from foundry.ui.window.main_window import MainWindow

log = logging.getLogger(__name__)


def import_dashboards() -> ModuleType:
    """foundry.ui.dashboards, with pyqtgraph and numpy: about a second (run off the GUI thread)."""
    return importlib.import_module("foundry.ui.dashboards")


def _failed(task: asyncio.Task[Any]) -> bool:
    return task.done() and (task.cancelled() or task.exception() is not None)


def _log_failed_preload(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("preloading the dashboards failed", exc_info=task.exception())


class DashboardsTab:
    """The dashboards of `window`, built once (`view` and `controller` are None until then)."""

    def __init__(self, window: MainWindow) -> None:
        self.window = window
        self.view: DashboardView | None = None
        self.controller: DashboardController | None = None
        self._loading: asyncio.Task[None] | None = None

    async def open(self) -> None:
        window = self.window
        first = self.view is None
        if first:  # busy until the charts are drawn: the import, then the first read
            window.busy("Loading the dashboards…")
        try:
            await self._show_tab()
        except Exception as error:  # e.g. pyqtgraph missing: said, the window goes on
            window.statusBar().showMessage(f"Could not load the dashboards: {error}")
            return
        finally:
            window.progress.hide()
        if first:
            window.statusBar().clearMessage()

    def preload(self) -> asyncio.Task[None]:
        """Import pyqtgraph, build the dashboards and draw their charts, hidden, so that View >
        Dashboards only has to show them (the app calls it once the first chat is ready). A
        failure is logged; opening the dashboards then tries again and says why it fails."""
        loading = self._load()
        loading.add_done_callback(_log_failed_preload)
        return loading

    def close(self) -> None:
        if self._loading is not None:
            self._loading.cancel()
        if self.controller is not None:
            self.controller.close()

    def _load(self) -> asyncio.Task[None]:
        """The one loading of the dashboards, shared by the preload and View > Dashboards (a
        new one after a failure)."""
        if self._loading is None or _failed(self._loading):
            self._loading = asyncio.ensure_future(self._build())
        return self._loading

    async def _build(self) -> None:
        # pyqtgraph takes about a second to import: not at start-up, not on the GUI thread
        module = await asyncio.to_thread(import_dashboards)
        view = await module.build_view()
        controller = module.DashboardController(view, self.window.bridge)
        await controller.update_before_shown()  # read and drawn while hidden
        size = self._size_as_tab(view)
        if size is not None:
            await view.lay_out_hidden(size)
        self.view, self.controller = view, controller

    def _size_as_tab(self, view: QWidget) -> QSize | None:
        """The size `view` will have as a tab: that of the open tabs, or wider if it needs more
        (its least width and the tab widget's frame around its pages: the window then makes
        room, the Agent panel narrows). None while no tab is open to tell."""
        tabs = self.window.tabs
        page = tabs.currentWidget()
        if page is None:
            return None
        pages = page.parentWidget()  # the tab widget's stack of pages
        assert pages is not None
        frame = tabs.minimumSizeHint().width() - pages.minimumSizeHint().width()
        width = max(page.width(), view.minimumSizeHint().width() + frame)
        return QSize(width, page.height())

    async def _show_tab(self) -> None:
        await asyncio.shield(self._load())  # (a cancelled opening leaves it loading)
        view, controller = self.view, self.controller
        assert view is not None and controller is not None
        tabs = self.window.tabs
        if tabs.indexOf(view) < 0:
            await controller.update_before_shown()  # drawn, then painted once
            if tabs.indexOf(view) < 0:  # (not added meanwhile by a second request)
                tabs.addTab(view, "Dashboards")
        tabs.setCurrentWidget(view)
