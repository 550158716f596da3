"""The inbox's strip of needless questions: how many questions a person approved as asked, and
how many the proposed rules would have settled; Review opens them in the agent's Policy page,
unsaved, for a person to save or not."""

from __future__ import annotations

import contextlib
import logging
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QWidget

from foundry.agent.problems import AgentError
from foundry.runtime.questions import QuestionsAsked
from foundry.supervision.needless import NeedlessReport, questions_sentence

log = logging.getLogger(__name__)
RECOUNT_AFTER_MS = 4000  # after an answer, the next answers of a burst are counted together
Reports = list[tuple[Path, NeedlessReport]]


class NeedlessStrip(QFrame):
    """A line above the inbox's lists: the figures, and Review."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("needless")
        self.setStyleSheet(
            "#needless { background: #eef5ff; border: 1px solid #b6d0f2; border-radius: 4px; }"
        )
        self.text = QLabel()
        self.text.setWordWrap(True)
        self.review = QPushButton("Review…")
        self.review.setToolTip(
            "Open the proposed rules in the agent's Policy page, unsaved, with what each would "
            "change among the recorded calls: save them, or not"
        )
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 4)
        layout.addWidget(self.text, 1)
        layout.addWidget(self.review)
        self.hide()

    def show_reports(self, reports: Reports) -> None:
        text = strip_text(reports)
        self.setVisible(text is not None)
        self.text.setText(text or "")
        self.review.setVisible(any(report.proposals for _, report in reports))


def strip_text(reports: Reports) -> str | None:
    """The strip's sentence over every agent's report, or None when no rule is proposed (the
    Policy page's Questions asked has the figures without one)."""
    rules = sum(len(report.proposals) for _, report in reports)
    if not rules:
        return None
    return questions_sentence(
        sum(report.asked for _, report in reports),
        sum(report.needless for _, report in reports),
        rules,
        sum(report.settled for _, report in reports),
        agents=sum(bool(report.proposals) for _, report in reports),
    )


class NeedlessQuestions(QObject):
    """Counts the questions of every agent on a worker thread of its own (never ahead of a
    person's answer on the inbox's), at the start and a little after answers, and shows them
    in the strip."""

    review_requested = Signal(object, object)  # the agent's file, its NeedlessReport
    _counted = Signal(object)  # the reports, from the worker thread

    def __init__(self, strip: NeedlessStrip, questions: QuestionsAsked) -> None:
        super().__init__(strip)
        self.strip = strip
        self.questions = questions
        self.reports: Reports = []
        self._closed = False
        self._worker = ThreadPoolExecutor(1, thread_name_prefix="foundry-questions")
        self._soon = QTimer(self)
        self._soon.setSingleShot(True)
        self._soon.setInterval(RECOUNT_AFTER_MS)
        self._soon.timeout.connect(self.count)
        self._counted.connect(self._show)
        strip.review.clicked.connect(self.review)

    def soon(self) -> None:
        self._soon.start()

    def count(self) -> None:
        if not self._closed:
            self._worker.submit(self._reports).add_done_callback(self._done)

    def stop(self) -> None:
        self._closed = True
        self._soon.stop()
        self._worker.shutdown(wait=False, cancel_futures=True)

    def _reports(self) -> Reports:
        reports = []
        for path in self.questions.agent_files():
            try:
                reports.append((path, self.questions.report(path)))
            except (AgentError, OSError) as error:  # moved or broken since: its own business
                log.info("the questions of %s were not counted: %s", path, error)
        return reports

    def _done(self, future: Future[Reports]) -> None:
        """On the worker thread: hand the reports to the GUI thread."""
        if self._closed or future.cancelled():
            return
        error = future.exception()
        if error is not None:
            log.error("the needless questions were not counted: %s", error, exc_info=error)
            return
        with contextlib.suppress(RuntimeError):  # the window was destroyed meanwhile
            self._counted.emit(future.result())

    def _show(self, reports: Reports) -> None:
        if not self._closed:
            self.reports = reports
            self.strip.show_reports(reports)

    def review(self) -> None:
        """Ask for the agent whose proposals settle the most questions."""
        offered = [(path, report) for path, report in self.reports if report.proposals]
        if offered:
            path, report = max(offered, key=lambda item: item[1].settled)
            self.review_requested.emit(path, report)
