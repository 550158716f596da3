"""The approval inbox: every L2 escalation of every session (and of every Foundry sharing the
store), its detail, and the decisions on it."""

from foundry.ui.inbox.alerts import ApprovalAlerts, system_tray
from foundry.ui.inbox.controller import InboxController
from foundry.ui.inbox.view import InboxView

__all__ = ["ApprovalAlerts", "InboxController", "InboxView", "system_tray"]
