"""Connects the dashboards to the event log: loads off the GUI thread, follows events live."""

from __future__ import annotations

import asyncio
import gc
import logging
import re
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QFileDialog

from foundry.metrics import METRIC_KINDS, DashboardSeries, MetricsLog, dashboard_series, export_csv
from foundry.session.events import Event
from foundry.ui.background import BackgroundTasks
from foundry.ui.bridge import EngineBridge
from foundry.ui.dashboards.chart import Chart
from foundry.ui.dashboards.view import DashboardView

log = logging.getLogger(__name__)
THROTTLE_MS = 500  # live updates at most twice a second
_KINDS = frozenset(METRIC_KINDS)


@contextmanager
def collections_paused() -> Iterator[None]:
    """No garbage collection while the metrics load. A full collection walks every object of the
    process holding the GIL: loading 100,000 events, that stalled the GUI thread for half a
    second at a time and took two thirds of the load's time."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _log_failure(work: asyncio.Task[None]) -> None:
    if not work.cancelled() and work.exception() is not None:
        log.error("showing the metrics failed", exc_info=work.exception())


def chart_file_name(chart: Chart) -> str:
    return re.sub(r"[^a-z0-9]+", "-", chart.title.lower()).strip("-")


class DashboardController(QObject):
    """Reads new metric events when they arrive (throttled) and recomputes the series off the GUI
    thread; a filter change recomputes from the events already read."""

    updated = Signal()  # the charts show new figures
    exported = Signal(list)  # the files an export wrote

    def __init__(
        self, view: DashboardView, bridge: EngineBridge, throttle_ms: int = THROTTLE_MS
    ) -> None:
        super().__init__(view)
        self.view = view
        self.bridge = bridge
        self.log = MetricsLog()
        self.series = DashboardSeries()
        self._reload = False
        self._again = False
        self._stale = True
        self._frozen = False
        self._exports = BackgroundTasks("a metrics export", view.status.setText)
        self._work: asyncio.Task[None] | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(throttle_ms)
        self._timer.timeout.connect(lambda: self.schedule(reload=True))
        bridge.event_arrived.connect(self._on_event)
        view.filters_changed.connect(lambda: self.schedule(reload=False))
        view.refresh_requested.connect(lambda: self.schedule(reload=True))
        view.shown.connect(self._on_shown)
        view.export_all_requested.connect(self.choose_export_folder)
        for chart in view.charts():
            chart.save_requested.connect(partial(self.choose_chart_file, chart))

    # -- loading --------------------------------------------------------------------------------

    def _on_event(self, event: Event) -> None:
        if event.kind not in _KINDS:
            return
        self._stale = True
        if self.view.isVisible() and not self._timer.isActive():
            self._timer.start()

    def _on_shown(self) -> None:
        if self._stale:
            self.schedule(reload=True)

    def schedule(self, reload: bool) -> asyncio.Task[None]:
        """Recompute the series (after reading new events, with `reload`); one run at a time."""
        self._reload = self._reload or reload
        if self._work is None or self._work.done():
            self._work = asyncio.ensure_future(self._run())
            self._work.add_done_callback(_log_failure)
        else:
            self._again = True
        return self._work

    async def refresh(self) -> None:
        """Read new events and show the figures; returns when they are shown."""
        await self.schedule(reload=True)

    async def _run(self) -> None:
        while True:
            self._again = False
            reload, self._reload = self._reload, False
            where = self.view.current_filter()
            try:
                with collections_paused():
                    if reload:
                        self._stale = False
                        await asyncio.to_thread(self.log.read_new, self.bridge.engine.store)
                        self._freeze_once()
                    series = await asyncio.to_thread(dashboard_series, self.log.events, where)
            except Exception as error:  # shown; the dashboards keep their last figures
                self._stale = self._stale or reload  # the next show reads again
                log.exception("reading the metrics failed")
                self.view.show_problem(f"Could not read the metrics: {error}")
                return
            status = f"{len(self.log.events):,} events · updated {datetime.now():%H:%M:%S}"
            self.view.show_overview(series, status)
            for chart in self.view.charts():
                chart.show_series(series)
                await asyncio.sleep(0)  # the GUI breathes between two charts
            self.series = series  # what the charts show
            self.updated.emit()
            if not self._again:
                return

    def _freeze_once(self) -> None:
        """After the first full load its events live as long as the dashboards (as in app.py):
        collections need not walk them. Once, as freezing walks the whole heap itself."""
        if not self._frozen:
            gc.freeze()
            self._frozen = True

    def close(self) -> None:
        self._timer.stop()
        self.bridge.event_arrived.disconnect(self._on_event)
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
        """A PNG per chart and a CSV per series (as `foundry metrics export` writes them)."""
        written: list[Any] = await asyncio.to_thread(export_csv, folder, self.series)
        for chart in self.view.charts():
            written.append(chart.export_png(folder / f"{chart_file_name(chart)}.png"))
        self.view.status.setText(f"Exported {len(written)} files to {folder}")
        self.exported.emit(written)
        return written
