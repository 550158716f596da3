"""Connects the InboxView to the approvals service: follows approvals, acts on them."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from html import escape
from typing import Any, TypeVar

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QMessageBox, QTableView

from foundry.runtime.approvals import ApprovalContext, ApprovalRecord, Resolution
from foundry.runtime.grant_scopes import describe_scope
from foundry.session.events import ApprovalRequested, ApprovalResolved, Event
from foundry.supervision.resolution import human_resolver
from foundry.ui.bridge import EngineBridge
from foundry.ui.clock import local_time
from foundry.ui.inbox.model import RECORD_ROLE, Column
from foundry.ui.inbox.needless import NeedlessQuestions
from foundry.ui.inbox.params import (
    ParamNode,
    ParamsError,
    param_tree,
    params_text,
    parse_edited_params,
)
from foundry.ui.inbox.view import InboxView

log = logging.getLogger(__name__)
POLL_MS = 2000  # the fallback: changes to approvals are pushed (the store's change watch)
AGE_FILTER_REFRESH_TICKS = 5
LATEST_ON_HISTORY = 200
INFO_SHOWN_MS = 6000
# Another process may store a session's request (which says why it asks) after its approval:
# while the reason is missing, the context is read again after each of these waits.
CONTEXT_RETRY_MS = (250, 500, 1000, 2000, 4000)

T = TypeVar("T")
Job = Callable[[], list[Resolution]]


class InboxController(QObject):
    """Looks at the approvals (pending ids only) as soon as they change in any process sharing
    the store (its change watch), when a local session asks or is answered, and every two
    seconds in case a change went unseen; resolves through the approvals service, where the first
    resolver wins, so another Foundry, the API or the CLI may have answered first.

    Every call of the service runs on the inbox's own worker thread, one at a time, and hands
    its result back to the GUI thread through a queued signal. (Not as asyncio tasks: a task
    stepped by a nested Qt event loop inside another coroutine is abandoned, which would stop the
    polling.)
    """

    pending_changed = Signal(int)
    arrived = Signal(list)  # approvals that came in since the last look
    open_session_requested = Signal(str)
    make_rule_requested = Signal(object)  # the ApprovalRecord a rule is to be made from
    _delivered = Signal(object)  # a callable to run on the GUI thread
    _changed = Signal()  # approvals changed in the store (emitted on the change watch's thread)

    def __init__(
        self,
        view: InboxView,
        bridge: EngineBridge,
        poll_ms: int = POLL_MS,
        resolver: str | None = None,
    ) -> None:
        super().__init__(view)
        self.view = view
        self.bridge = bridge
        self.approvals = bridge.engine.approvals
        self.resolver = resolver or human_resolver("gui")
        self.feed = self.approvals.feed()
        self.loaded = False
        self.pending_count = 0
        self.confirmation: QMessageBox | None = None
        self._worker = ThreadPoolExecutor(1, thread_name_prefix="foundry-inbox")
        self._last_error: str | None = None
        self._delivered.connect(self._run_delivered)
        self._changed.connect(self.poll)
        self._watch = contextlib.ExitStack()
        self._watch_lock = threading.Lock()
        self._polling = False
        self._poll_again = False
        self._closed = False
        self._ticks = 0
        self._params_asked = 0  # trees of parameters asked so far: only the newest is shown
        self._poll_timer = QTimer(self)
        self._poll_timer.setInterval(poll_ms)
        self._poll_timer.timeout.connect(self.poll)
        self._clock = QTimer(self)
        self._clock.setInterval(1000)
        self._clock.timeout.connect(self._tick)
        self._info_timer = QTimer(self)
        self._info_timer.setSingleShot(True)
        self._info_timer.timeout.connect(self.view.banner.hide)
        bridge.event_arrived.connect(self._on_event)
        self.needless = NeedlessQuestions(view.needless, bridge.engine.questions)
        self._connect_view()
        self.poll()
        self.needless.count()
        self._poll_timer.start()
        self._clock.start()
        # subscribing may connect to the database (PostgreSQL's LISTEN): not on the GUI thread
        self._worker.submit(self._follow_changes)

    def _follow_changes(self) -> None:
        with self._watch_lock:
            if not self._closed:
                changes = self.approvals.watching(self._changed.emit)
                self._watch.enter_context(changes)

    def _connect_view(self) -> None:
        view, detail = self.view, self.view.detail
        for combo in (view.status_filter, view.agent_filter, view.level_filter, view.age_filter):
            combo.currentIndexChanged.connect(self.apply_filters)
        view.tool_filter.textChanged.connect(self.apply_filters)
        view.tool_filter.returnPressed.connect(lambda: view.current_table().setFocus())
        view.lists.currentChanged.connect(self._list_switched)
        for table in (view.pending_table, view.history_table):
            table.selectionModel().currentRowChanged.connect(self._current_changed)
            table.selectionModel().selectionChanged.connect(self._selection_changed)
        detail.approve.clicked.connect(self.approve)
        detail.deny.clicked.connect(self.deny)
        detail.edit.clicked.connect(self.edit)
        detail.grant.clicked.connect(self.grant)
        detail.apply_edit.clicked.connect(self.apply_edit)
        detail.editor.submitted.connect(self.apply_edit)
        detail.cancel_edit.clicked.connect(self.cancel_edit)
        detail.editor.cancelled.connect(self.cancel_edit)
        detail.editor.textChanged.connect(self._check_edit)
        detail.reasoning.returnPressed.connect(self.deny)
        detail.reasoning.cancelled.connect(self._focus_list)
        detail.show_content.toggled.connect(lambda _: self._build_params())
        detail.open_session.connect(self.open_session_requested.emit)
        detail.make_rule.clicked.connect(self.make_rule)
        view.approve_selected.clicked.connect(lambda: self.confirm_bulk(True))
        view.deny_selected.clicked.connect(lambda: self.confirm_bulk(False))
        keys: dict[str, Callable[[], None]] = {
            "next": lambda: self.move(1),
            "previous": lambda: self.move(-1),
            "approve": self.approve,
            "deny": self.focus_reasoning,
            "edit": self.edit,
            "grant": self.grant,
            "open": self.open_session,
            "rule": self.make_rule,
            "filter": self.focus_filter,
            "approve_selected": lambda: self.confirm_bulk(True),
            "deny_selected": lambda: self.confirm_bulk(False),
        }
        for name, action in keys.items():
            view.shortcuts[name].activated.connect(action)

    def _off_gui(
        self,
        job: Callable[[], T],
        then: Callable[[T], None],
        failed: Callable[[], None] | None = None,
    ) -> None:
        """Run `job` on the worker thread, then `then(result)` on the GUI thread (or `failed()`
        after the error is shown)."""
        if self._closed:
            return
        future = self._worker.submit(job)
        future.add_done_callback(lambda done: self._deliver(lambda: self._hand(done, then, failed)))

    def _deliver(self, callback: Callable[[], None]) -> None:
        """On the worker thread: queue `callback` for the GUI thread, unless the inbox is gone."""
        if self._closed:
            return
        with contextlib.suppress(RuntimeError):  # the window was destroyed meanwhile
            self._delivered.emit(callback)

    def _run_delivered(self, callback: Callable[[], None]) -> None:
        if not self._closed:
            callback()

    def _hand(
        self, done: Future[T], then: Callable[[T], None], failed: Callable[[], None] | None
    ) -> None:
        error = None if done.cancelled() else done.exception()
        if error is None and not done.cancelled():
            self._last_error = None
            then(done.result())
            return
        if error is not None and str(error) != self._last_error:
            self._last_error = str(error)
            log.error("the approval inbox could not reach the store: %s", error, exc_info=error)
            self.view.show_banner(f"Cannot read or write approvals: {escape(str(error))}", "error")
        if failed is not None:
            failed()

    def close(self) -> None:
        """Stop following the store (the window is closing)."""
        with self._watch_lock:
            self._closed = True
            self._watch.close()
        self._poll_timer.stop()
        self._clock.stop()
        self.needless.stop()
        self.bridge.event_arrived.disconnect(self._on_event)
        self._worker.shutdown(wait=False, cancel_futures=True)

    # -- following the store --------------------------------------------------------------------

    def poll(self) -> None:
        """Look for new and resolved approvals (one look at a time; a request made during a
        look starts another right after it)."""
        if self._polling:
            self._poll_again = True
            return
        self._polling = True
        self._poll_again = False
        look = self.feed.changes if self.loaded else self.feed.load
        self._off_gui(look, self._polled, self._poll_failed)

    def _poll_failed(self) -> None:
        self._polling = False  # the next tick tries again

    def _polled(self, records: list[ApprovalRecord]) -> None:
        self._polling = False
        if self.loaded:
            self._apply(records)
        else:
            self._load(records)
        if self._poll_again:
            self.poll()

    def _on_event(self, event: Event) -> None:
        if isinstance(event.body, ApprovalRequested | ApprovalResolved):
            self.poll()
        if isinstance(event.body, ApprovalRequested):
            self._reload_context_of(event.body.approval_id)
        if isinstance(event.body, ApprovalResolved):
            self.needless.soon()

    def _reload_context_of(self, approval_id: str) -> None:
        """Why a session asks is in its log, which may be stored after the approval is in view
        (the bus publishes an event once it is stored): then its context is loaded again."""
        record = self.view.detail.record
        if record is not None and record.id == approval_id:
            self._load_context(record)

    def _load_context(self, record: ApprovalRecord, retries: int = 0) -> None:
        """Load the context of the approval in view; while a pending one's session has not
        stored why it asks (another process's bus does not reach this one), look again later."""

        def shown(context: ApprovalContext) -> None:
            self.view.detail.show_context(context)
            missing = context.request_reason is None and record.session_id is not None
            if missing and record.status == "pending" and retries < len(CONTEXT_RETRY_MS):
                wait_ms = CONTEXT_RETRY_MS[retries]
                QTimer.singleShot(wait_ms, self, lambda: self._retry_context(record, retries + 1))

        self._off_gui(lambda: self.approvals.context(record), shown)

    def _retry_context(self, record: ApprovalRecord, retries: int) -> None:
        shown = self.view.detail.record
        if not self._closed and shown is not None and shown.id == record.id:
            self._load_context(shown, retries)

    def _load(self, records: list[ApprovalRecord]) -> None:
        if self._closed:
            return
        self.view.model.reset(records)
        self.view.history_model.reset(records)
        self.view.add_agents({record.agent_id for record in records})
        self.loaded = True
        self._count()
        self._keep_a_current_row(self.view.pending_table, 0)
        self._keep_a_current_row(self.view.history_table, 0)
        self._show_current()

    def _apply(self, records: list[ApprovalRecord]) -> None:
        if self._closed or not records:
            return
        table = self.view.current_table()
        before_row = table.currentIndex().row()
        before_id = self._id_at(table, before_row)
        added = self.view.model.merge(records)
        self.view.history_model.merge(records)
        self.view.add_agents({record.agent_id for record in records})
        self._count()
        if before_id is not None and self._id_at(table, table.currentIndex().row()) != before_id:
            # the approval in view left the list (resolved): the one taking its place is next
            self._select(table, before_row)
        for each in (self.view.pending_table, self.view.history_table):
            self._keep_a_current_row(each, 0)
        self._show_current()
        arrivals = [record for record in added if record.status == "pending"]
        if arrivals:
            self.arrived.emit(arrivals)

    def _count(self) -> None:
        count = self.view.model.pending_count()
        self.view.lists.setTabText(0, f"Inbox ({count})" if count else "Inbox")
        if count != self.pending_count:
            self.pending_count = count
            self.pending_changed.emit(count)

    def _tick(self) -> None:
        """Ages and countdowns move on: repaint their columns, re-apply age filters now and then."""
        table = self.view.current_table()
        for column in (Column.WAITED, Column.EXPIRES):
            left = table.columnViewportPosition(column)
            if left >= 0:
                table.viewport().update(
                    left, 0, table.columnWidth(column), table.viewport().height()
                )
        self._ticks += 1
        if self._ticks % AGE_FILTER_REFRESH_TICKS == 0:
            self.view.pending.refresh_ages()
            self.view.history.refresh_ages()

    # -- lists, selection, filters --------------------------------------------------------------

    def apply_filters(self) -> None:
        """Filter the list in view now, the other one when it comes into view."""
        history = self.view.lists.currentIndex() == 1
        self.view.current_filter().set_spec(self.view.filter_spec(history))
        self._keep_a_current_row(self.view.current_table(), 0)
        self._show_current()

    def _list_switched(self, index: int) -> None:
        inbox = index == 0
        for widget in (
            self.view.status_filter,
            self.view.approve_selected,
            self.view.deny_selected,
        ):
            widget.setVisible(inbox)  # the history holds resolved approvals only
        spec = self.view.filter_spec(history=index == 1)
        if self.view.current_filter().spec != spec:
            self.view.current_filter().set_spec(spec)
            self._keep_a_current_row(self.view.current_table(), 0)
        self._show_current()
        self._selection_changed()
        if index == 1:
            # the feed finds those asked and answered between two looks by their count; the
            # newest are read again anyway, in case someone deleted rows meanwhile
            self._off_gui(lambda: self.feed.latest(LATEST_ON_HISTORY), self._apply)

    def _keep_a_current_row(self, table: QTableView, near_row: int) -> None:
        if self._id_at(table, table.currentIndex().row()) is None:
            self._select(table, near_row)

    @staticmethod
    def _select(table: QTableView, row: int) -> None:
        rows = table.model().rowCount()
        if rows:
            table.selectRow(max(0, min(row, rows - 1)))

    @staticmethod
    def _id_at(table: QTableView, row: int) -> str | None:
        if not 0 <= row < table.model().rowCount():
            return None
        record = table.model().index(row, 0).data(RECORD_ROLE)
        return record.id if isinstance(record, ApprovalRecord) else None

    def current_record(self) -> ApprovalRecord | None:
        index = self.view.current_table().currentIndex()
        record = index.data(RECORD_ROLE) if index.isValid() else None
        return record if isinstance(record, ApprovalRecord) else None

    def selected_records(self) -> list[ApprovalRecord]:
        table = self.view.current_table()
        rows = table.selectionModel().selectedRows()
        records = [index.data(RECORD_ROLE) for index in rows]
        return [record for record in records if isinstance(record, ApprovalRecord)]

    def _current_changed(self) -> None:
        self._show_current()

    def _show_current(self) -> None:
        record = self.current_record()
        shown = self.view.detail.record
        if record is not None and record is shown:
            return  # nothing changed in it
        if record is None:
            self.view.detail.show_nothing(self._nothing_to_show())
            return
        self.view.detail.show_approval(record)
        if shown is None or shown.id != record.id:
            self._load_context(record)
        if shown is None or shown.id != record.id or shown.params != record.params:
            self._build_params()

    def _build_params(self) -> None:
        """Build the parameters' tree of the approval in view on the worker thread (masking the
        secrets in a megabyte of shown content takes about half a second); the tree says
        "Loading…" meanwhile, and a tree that arrives after the approval in view or the choice
        to show content changed is dropped."""
        detail = self.view.detail
        record = detail.record
        if record is None:
            return
        self._params_asked += 1
        asked, show_content = self._params_asked, detail.show_content.isChecked()
        detail.show_params_loading()
        self._off_gui(
            lambda: param_tree(record.params, show_content),
            lambda nodes: self._params_built(asked, record.id, nodes),
        )

    def _params_built(self, asked: int, approval_id: str, nodes: list[ParamNode]) -> None:
        shown = self.view.detail.record
        if asked == self._params_asked and shown is not None and shown.id == approval_id:
            self.view.detail.show_params(nodes)

    def _nothing_to_show(self) -> str:
        if self.view.current_filter().rowCount():
            return "Select an approval to see it here."
        if self.view.lists.currentIndex() == 0 and self.pending_count == 0:
            return "Nothing is waiting for you. New approvals appear here as agents ask."
        return "No approval matches the filters."

    def _selection_changed(self) -> None:
        pending = [r for r in self.selected_records() if r.status == "pending"]
        self.view.summary.setText(f"{len(pending)} pending selected" if len(pending) > 1 else "")
        for button in (self.view.approve_selected, self.view.deny_selected):
            button.setEnabled(bool(pending))

    def move(self, step: int) -> None:
        """J/K: the next or previous approval of the list in view."""
        table = self.view.current_table()
        rows = table.model().rowCount()
        if not rows:
            return
        row = table.currentIndex().row()
        table.selectRow(0 if row < 0 else max(0, min(rows - 1, row + step)))
        table.setFocus()

    def focus_filter(self) -> None:
        self.view.tool_filter.setFocus()
        self.view.tool_filter.selectAll()

    def _focus_list(self) -> None:
        self.view.current_table().setFocus()

    def make_rule(self) -> None:
        record = self.current_record()
        if record is not None:
            self.make_rule_requested.emit(record)

    def open_session(self) -> None:
        record = self.current_record()
        if record is not None and record.session_id:
            self.open_session_requested.emit(record.session_id)

    # -- decisions ------------------------------------------------------------------------------

    def _actionable(self) -> ApprovalRecord | None:
        record = self.current_record()
        if record is None or record.status != "pending":
            return None
        if not self.view.detail.approve.isEnabled():  # a decision on it is on its way
            return None
        return record

    def approve(self) -> None:
        record = self._actionable()
        if record is not None:
            reasoning = self.view.detail.reasoning.text().strip()
            self._settle(self._decision(record.id, True, reasoning))

    def deny(self) -> None:
        record = self._actionable()
        if record is not None:
            reasoning = self.view.detail.reasoning.text().strip()
            self._settle(self._decision(record.id, False, reasoning))
            self._focus_list()

    def _decision(
        self, approval_id: str, approved: bool, reasoning: str, params: dict[str, Any] | None = None
    ) -> Job:
        return lambda: [
            self.approvals.decide(approval_id, approved, self.resolver, reasoning, params)
        ]

    def focus_reasoning(self) -> None:
        """D: write why (the agent reads it), then Enter denies."""
        if self._actionable() is not None:
            self.view.detail.reasoning.setFocus()

    def edit(self) -> None:
        record = self._actionable()
        if record is not None:
            self.view.detail.begin_edit(params_text(record.params))

    def cancel_edit(self) -> None:
        self.view.detail.end_edit()
        self._focus_list()

    def _check_edit(self) -> None:
        if self.view.detail.editing:
            self.view.detail.show_edit_problem(self._edit_problem())

    def _edit_problem(self) -> str | None:
        try:
            parse_edited_params(self.view.detail.editor.toPlainText())
        except ParamsError as problem:
            return str(problem)
        return None

    def apply_edit(self) -> None:
        record = self._actionable()
        if record is None or not self.view.detail.editing:
            return
        try:
            params = parse_edited_params(self.view.detail.editor.toPlainText())
        except ParamsError as problem:
            self.view.detail.show_edit_problem(str(problem))
            return
        reasoning = self.view.detail.reasoning.text().strip() or "approved with edited parameters"
        self.view.detail.end_edit()
        self._settle(self._decision(record.id, True, reasoning, params))
        self._focus_list()

    def grant(self) -> None:
        record = self._actionable()
        if record is None:
            return
        tool_glob, duration, scope = self.view.detail.grant_choice()
        if not tool_glob:
            self.view.show_banner("Write the tools the grant covers, e.g. time.*", "error")
            return
        self._settle(
            lambda: [
                self.approvals.approve_with_grant(record, self.resolver, tool_glob, duration, scope)
            ]
        )

    def confirm_bulk(self, approved: bool) -> None:
        """Ctrl+Shift+A / Ctrl+Shift+D: resolve the selection, once confirmed."""
        records = [record for record in self.selected_records() if record.status == "pending"]
        if not records:
            self.view.show_banner("Select pending approvals first (Shift or Ctrl + click).", "info")
            self._info_timer.start(INFO_SHOWN_MS)
            return
        verb = "Approve" if approved else "Deny"
        tools = sorted({record.tool for record in records})
        box = QMessageBox(
            QMessageBox.Icon.Question,
            f"{verb} {len(records)} approvals?",
            f"{verb} {len(records)} pending approvals of {', '.join(tools)}?",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            self.view,
        )
        box.setDefaultButton(QMessageBox.StandardButton.Yes)
        box.buttonClicked.connect(
            lambda button: self._bulk_confirmed(box, button, records, approved)
        )
        self.confirmation = box
        box.open()  # never exec(): a nested loop would break qasync

    def _bulk_confirmed(
        self, box: QMessageBox, button: Any, records: list[ApprovalRecord], approved: bool
    ) -> None:
        self.confirmation = None
        if box.standardButton(button) != QMessageBox.StandardButton.Yes:
            return
        ids = [record.id for record in records]
        reasoning = self.view.detail.reasoning.text().strip()
        self._settle(lambda: self.approvals.decide_many(ids, approved, self.resolver, reasoning))

    def _settle(self, job: Job) -> None:
        self.view.detail.set_busy(True)
        self._off_gui(job, self._settled, lambda: self.view.detail.set_busy(False))

    def _settled(self, outcomes: list[Resolution]) -> None:
        self.view.detail.set_busy(False)
        self._apply([outcome.approval for outcome in outcomes])
        self._report(outcomes)

    def _report(self, outcomes: list[Resolution]) -> None:
        conflicts = [outcome.approval for outcome in outcomes if outcome.conflict]
        done = [outcome for outcome in outcomes if not outcome.conflict]
        if conflicts:
            self.view.show_banner(_conflict_text(conflicts, len(outcomes)), "conflict")
            return
        first = done[0].approval
        grant = done[0].grant
        what = (
            f"{first.status.capitalize()} {escape(first.tool)}"
            if len(done) == 1
            else f"{first.status.capitalize()} {len(done)} approvals"
        )
        if grant is not None:
            where = escape(describe_scope(grant.path_scope))
            until = local_time(grant.expires_at)
            what += f"; {escape(grant.tool_glob)} granted {where} until {until}"
        self.view.show_banner(what + ".", "info")
        self._info_timer.start(INFO_SHOWN_MS)


def _conflict_text(conflicts: list[ApprovalRecord], attempted: int) -> str:
    """Who won each approval that someone else resolved first."""
    winners = "; ".join(
        f"<b>{escape(record.tool)}</b> was already {record.status.replace('_', ' ')} by "
        f"<b>{escape(record.resolved_by or 'unknown')}</b> at {local_time(record.resolved_at)}"
        for record in conflicts[:5]
    )
    more = f" (and {len(conflicts) - 5} more)" if len(conflicts) > 5 else ""
    lead = (
        "Someone else decided first: "
        if attempted == 1
        else f"{len(conflicts)} of {attempted} were decided by someone else first: "
    )
    return f"{lead}{winners}{more}. Your decision was not applied; the inbox is up to date."
