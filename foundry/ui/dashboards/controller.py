"""Connects the dashboards to the metric aggregates: reads off the GUI thread, follows the store."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Coroutine
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QFileDialog

from foundry.metrics import (
    DashboardFigures,
    MetricsFilter,
    MetricsState,
    metrics_state,
    read_figures,
)
from foundry.ui.background import BackgroundTasks
from foundry.ui.bridge import EngineBridge
from foundry.ui.dashboards.chart import Chart
from foundry.ui.dashboards.view import DashboardView

log = logging.getLogger(__name__)
INCOMPLETE = "some events are not counted: run `foundry metrics rebuild` (with Foundry closed)"
POLL_MS = 250  # how often the store is asked whether the figures changed, while in view


def _log_failure(work: asyncio.Task[None]) -> None:
    if not work.cancelled() and work.exception() is not None:
        log.error("showing the metrics failed", exc_info=work.exception())


def chart_file_name(chart: Chart) -> str:
    return re.sub(r"[^a-z0-9]+", "-", chart.title.lower()).strip("-")


class DashboardController(QObject):
    """Shows the figures of the store's metric aggregates. While the dashboards are in view it
    asks the store four times a second for the aggregates' version (one row), so that events of
    every process sharing the store show up without Refresh; a change, a filter or Refresh reads
    the figures again, off the GUI thread."""

    updated = Signal()  # the charts show new figures
    exported = Signal(list)  # the files an export wrote

    def __init__(self, view: DashboardView, bridge: EngineBridge, poll_ms: int = POLL_MS) -> None:
        super().__init__(view)
        self.view = view
        self.bridge = bridge
        self.figures = DashboardFigures()
        self.version: int | None = None  # of the aggregates last read
        self.shown_for: MetricsFilter | None = None  # the filter of the figures on screen
        self._tasks_seen: int | None = None  # how many tasks the task list was read with
        self._again = False
        self._polling = False
        self._filters = 0  # filter changes so far: figures read for older filters are not shown
        self._exports = BackgroundTasks("a metrics export", view.status.setText)
        self._work: asyncio.Task[None] | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(poll_ms)
        self._timer.timeout.connect(self._poll)
        view.filters_changed.connect(self._on_filters_changed)
        view.refresh_requested.connect(self.schedule)
        view.shown.connect(self._on_shown)
        view.export_all_requested.connect(self.choose_export_folder)
        for chart in view.charts():
            chart.save_requested.connect(partial(self.choose_chart_file, chart))

    # -- loading --------------------------------------------------------------------------------

    def _on_filters_changed(self) -> None:
        self._filters += 1
        self.schedule()

    def _on_shown(self) -> None:
        self._timer.start()
        if self._outdated():
            self.schedule()
        else:  # the charts are up to date unless the aggregates' version moved on
            self._poll()

    def _outdated(self) -> bool:
        return self.shown_for is None or self.view.current_filter() != self.shown_for

    async def update_before_shown(self) -> None:
        """Bring the charts up to date while the dashboards are hidden, so that showing them
        paints each chart once, with its figures; nothing is read again if the aggregates'
        version and the filter are those of the charts."""
        if not self._outdated():
            try:
                state = await asyncio.to_thread(metrics_state, self.bridge.engine.store)
            except Exception:  # the poll asks again once they are shown
                log.warning("asking the metrics' version failed", exc_info=True)
                return
            if state.version == self.version:
                return
        await self.refresh()

    def _poll(self) -> None:
        if not self.view.isVisible():
            self._timer.stop()  # started again when shown
            return
        if not self._polling:
            self._polling = True
            task = asyncio.ensure_future(self._check_version())
            task.add_done_callback(_log_failure)

    async def _check_version(self) -> None:
        try:
            state = await asyncio.to_thread(metrics_state, self.bridge.engine.store)
        except Exception:  # the next poll asks again; a read shows the problem
            log.warning("asking the metrics' version failed", exc_info=True)
            return
        finally:
            self._polling = False
        if state.version != self.version:
            self.schedule()

    def schedule(self) -> asyncio.Task[None]:
        """Read the figures and show them; one read at a time (a request meanwhile reads again)."""
        if self._work is None or self._work.done():
            self._work = asyncio.ensure_future(self._run())
            self._work.add_done_callback(_log_failure)
        else:
            self._again = True
        return self._work

    async def refresh(self) -> None:
        """Read the figures and show them; returns when they are shown."""
        await self.schedule()

    async def _run(self) -> None:
        while True:
            self._again = False
            where, filters = self.view.current_filter(), self._filters
            try:
                state, figures = await asyncio.to_thread(self._read, where)
            except Exception as error:  # shown; the dashboards keep their last figures
                log.exception("reading the metrics failed")
                self.view.show_problem(f"Could not read the metrics: {error}")
                self.shown_for = None  # read again when shown again
                return
            if filters != self._filters:
                continue  # read for filters no longer chosen: read again at once
            self.version = state.version
            if state.tasks == self._tasks_seen:  # the list of tasks as last read
                figures = figures.model_copy(update={"tasks": self.figures.tasks})
            self._tasks_seen = state.tasks
            status = f"{figures.events:,} events · updated {datetime.now():%H:%M:%S}"
            self.view.show_overview(figures, status)
            if not state.complete:
                self.view.show_problem(f"{status} · {INCOMPLETE}")
            for chart in self.view.charts():
                chart.show_figures(figures)
                await asyncio.sleep(0)  # the GUI breathes between two charts
            self.figures, self.shown_for = figures, where  # what the charts show
            self.updated.emit()
            if not self._again:
                return

    def _read(self, where: MetricsFilter) -> tuple[MetricsState, DashboardFigures]:
        """The aggregates' state and the figures, in one trip to a worker thread (the list of
        tasks only grows with them: read when their count changed)."""
        store = self.bridge.engine.store
        state = metrics_state(store)
        return state, read_figures(store, where, state.tasks != self._tasks_seen)

    def close(self) -> None:
        self._timer.stop()
        if self._work is not None:
            self._work.cancel()

    # -- exports --------------------------------------------------------------------------------

    def choose_chart_file(self, chart: Chart, kind: str) -> None:
        dialog = QFileDialog(self.view, f"Save “{chart.title}” as {kind.upper()}")
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setDefaultSuffix(kind)
        dialog.setNameFilter(f"{kind.upper()} files (*.{kind})")
        dialog.selectFile(f"{chart_file_name(chart)}.{kind}")
        dialog.fileSelected.connect(
            lambda path: self._spawn(self.save_chart(chart, kind, Path(path)))
        )
        dialog.open()

    def _spawn(self, export: Coroutine[Any, Any, Any]) -> None:
        self._exports.spawn(export)

    async def save_chart(self, chart: Chart, kind: str, path: Path) -> Path:
        """A PNG is drawn on the GUI thread (Qt paints there); a CSV is written off it."""
        if kind == "png":
            saved = chart.export_png(path)
        else:
            saved = await asyncio.to_thread(chart.export_csv, path)
        self.exported.emit([saved])
        return saved

    def choose_export_folder(self) -> None:
        dialog = QFileDialog(self.view, "Export every chart and series into a folder")
        dialog.setFileMode(QFileDialog.FileMode.Directory)
        dialog.fileSelected.connect(lambda path: self._spawn(self.export_all(Path(path))))
        dialog.open()

    async def export_all(self, folder: Path) -> list[Path]:
        """A PNG and a CSV of what each chart plots."""
        await asyncio.to_thread(folder.mkdir, parents=True, exist_ok=True)
        written: list[Path] = []
        for chart in self.view.charts():
            name = chart_file_name(chart)
            written.append(await asyncio.to_thread(chart.export_csv, folder / f"{name}.csv"))
            written.append(chart.export_png(folder / f"{name}.png"))
        self.view.status.setText(f"Exported {len(written)} files to {folder}")
        self.exported.emit(written)
        return written
