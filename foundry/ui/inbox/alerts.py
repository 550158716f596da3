"""The pending count where a person sees it: the inbox tab, the window title, the tray icon and
the application badge; a desktop notification when one arrives while Foundry is in the back."""

from __future__ import annotations

import re

from PySide6.QtCore import QObject, QRect, Qt
from PySide6.QtGui import QColor, QFont, QGuiApplication, QIcon, QPainter
from PySide6.QtWidgets import (
    QApplication,
    QMainWindow,
    QStyle,
    QSystemTrayIcon,
    QTabWidget,
    QWidget,
)

from foundry.runtime.approvals import ApprovalRecord

COUNT_PREFIX = re.compile(r"^\(\d+\) ")
NOTIFICATION_MS = 8000


def app_or_standard_icon() -> QIcon:
    icon = QApplication.windowIcon()
    if icon.isNull():
        icon = QApplication.style().standardIcon(QStyle.StandardPixmap.SP_ComputerIcon)
    return icon


def badged(icon: QIcon, count: int, size: int = 64) -> QIcon:
    """`icon` with the count in a red disc at its top right (nothing drawn for 0)."""
    pixmap = icon.pixmap(size, size)
    if count <= 0:
        return QIcon(pixmap)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    disc = QRect(size // 3, 0, size * 2 // 3, size * 2 // 3)
    painter.setBrush(QColor("#d32f2f"))
    painter.setPen(Qt.PenStyle.NoPen)
    painter.drawEllipse(disc)
    font = QFont()
    font.setBold(True)
    font.setPixelSize(size // 3)
    painter.setFont(font)
    painter.setPen(QColor("white"))
    painter.drawText(disc, Qt.AlignmentFlag.AlignCenter, str(count) if count < 100 else "99+")
    painter.end()
    return QIcon(pixmap)


def system_tray(parent: QObject) -> QSystemTrayIcon | None:
    """A tray icon, when the desktop has a tray to put it in."""
    if not QSystemTrayIcon.isSystemTrayAvailable():
        return None
    tray = QSystemTrayIcon(app_or_standard_icon(), parent)
    tray.setToolTip("Foundry")
    tray.show()
    return tray


class ApprovalAlerts(QObject):
    """Shows the count of pending approvals and announces new ones."""

    def __init__(
        self,
        window: QMainWindow,
        tabs: QTabWidget,
        inbox: QWidget,
        tray: QSystemTrayIcon | None = None,
    ) -> None:
        super().__init__(window)
        self.window = window
        self.tabs = tabs
        self.inbox = inbox
        self.tray = tray
        self.pending = 0
        self.last_notification: tuple[str, str] | None = None
        self._icon = app_or_standard_icon()
        window.windowTitleChanged.connect(lambda _: self._show_in_title())
        if tray is not None:
            tray.activated.connect(lambda _: self._bring_forward())
            tray.messageClicked.connect(self._bring_forward)

    def show_pending(self, count: int) -> None:
        self.pending = count
        self.show_on_tab()
        self._show_in_title()
        application = QGuiApplication.instance()
        if isinstance(application, QGuiApplication):
            application.setBadgeNumber(count)  # macOS, Windows, KDE; ignored elsewhere
        if self.tray is not None:
            waiting = f"{count} approval{'s' if count != 1 else ''} waiting" if count else "idle"
            self.tray.setToolTip(f"Foundry: {waiting}")
            self.tray.setIcon(badged(self._icon, count))

    def show_on_tab(self) -> None:
        index = self.tabs.indexOf(self.inbox)
        if index >= 0:
            self.tabs.setTabText(
                index, f"Approvals ({self.pending})" if self.pending else "Approvals"
            )

    def _show_in_title(self) -> None:
        bare = COUNT_PREFIX.sub("", self.window.windowTitle())
        titled = f"({self.pending}) {bare}" if self.pending else bare
        if titled != self.window.windowTitle():
            self.window.setWindowTitle(titled)

    def announce(self, records: list[ApprovalRecord]) -> None:
        """A desktop notification for approvals that arrived while the window is not active."""
        if not records or self.window.isActiveWindow():
            return
        first = records[0]
        title = (
            f"{first.agent_id} asks to run {first.tool}"
            if len(records) == 1
            else f"{len(records)} new approvals are waiting"
        )
        text = f"{self.pending} waiting in Foundry's approval inbox (Ctrl+Shift+I)."
        self.last_notification = (title, text)
        if self.tray is not None:
            icon = QSystemTrayIcon.MessageIcon.Information
            self.tray.showMessage(title, text, icon, NOTIFICATION_MS)

    def _bring_forward(self) -> None:
        self.window.showNormal()
        self.window.raise_()
        self.window.activateWindow()
        if self.tabs.indexOf(self.inbox) >= 0:
            self.tabs.setCurrentWidget(self.inbox)
