"""The tabs of the services every agent shares, opened from the View menu: Approvals, Gateway."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QLabel

from foundry.ui.window.tabs import KEEP_WHOLE

if TYPE_CHECKING:
    from foundry.ui.gateway_view import GatewayView
    from foundry.ui.inbox import ApprovalAlerts, InboxController, InboxView
    from foundry.ui.window.main_window import MainWindow


def approvals_waiting(count: int) -> str:
    return f"{count} approval{'' if count == 1 else 's'} waiting"


class ApprovalsTab:
    """The inbox follows approvals from the start; its tab opens with Ctrl+Shift+I."""

    def __init__(self, window: MainWindow) -> None:
        from foundry.ui.inbox import ApprovalAlerts, InboxController, InboxView, system_tray

        self.window = window
        self.view: InboxView = InboxView()
        self.controller: InboxController = InboxController(self.view, window.bridge)
        self.controller.open_session_requested.connect(
            lambda session_id: window.spawn(window.reopen_session(session_id))
        )
        self.controller.make_rule_requested.connect(
            lambda record: window.spawn(window.editors.make_rule(record))
        )
        self.controller.needless.review_requested.connect(
            lambda path, report: window.spawn(window.editors.review_proposals(path, report))
        )
        self.alerts: ApprovalAlerts = ApprovalAlerts(
            window, window.tabs, self.view, system_tray(window)
        )
        self.controller.pending_changed.connect(self.alerts.show_pending)
        self.controller.arrived.connect(self.alerts.announce)
        self.waiting = QLabel()  # in the status bar, whichever tab is shown
        self.waiting.setToolTip("Open the approval inbox (Ctrl+Shift+I)")
        self.waiting.linkActivated.connect(lambda _: self.show())
        self.waiting.hide()
        window.statusBar().addPermanentWidget(self.waiting)
        self.controller.pending_changed.connect(self.show_waiting)

    def show_waiting(self, count: int) -> None:
        """ "3 approvals waiting" in the status bar, a link to the inbox; nothing while none."""
        self.waiting.setText(f"<a href='inbox'>{approvals_waiting(count)}</a>")
        self.waiting.setVisible(count > 0)

    def show(self) -> None:
        tabs = self.window.tabs
        if tabs.indexOf(self.view) < 0:
            index = tabs.addTab(self.view, "Approvals")
            tabs.tabBar().setTabData(index, KEEP_WHOLE)
            self.alerts.show_on_tab()
        tabs.setCurrentWidget(self.view)
        self.view.current_table().setFocus()


class GatewayTab:
    """The Gateway view, made on first use; its client configuration names the current agent."""

    def __init__(self, window: MainWindow) -> None:
        self.window = window
        self.view: GatewayView | None = None

    def show(self) -> None:
        from foundry.ui.gateway_view import GatewayView, engine_clients

        tabs = self.window.tabs
        if self.view is None:
            self.view = GatewayView(engine_clients(self.window.bridge.engine))
        self.follow_agent()
        if tabs.indexOf(self.view) < 0:
            tabs.addTab(self.view, "Gateway")
        tabs.setCurrentWidget(self.view)

    def follow_agent(self) -> None:
        """The current agent, or none while the one shown is broken."""
        if self.view is not None:
            agent = self.window.agent
            self.view.set_agent(agent.path if agent is not None else None)
