"""TryPanel: the Policy page's panel to try a call, or the agent's recorded calls, before saving.

The widgets only; TryBinding decides the calls under the policy as edited.
"""

from __future__ import annotations

from PySide6.QtCore import QStringListModel, Qt
from PySide6.QtGui import QFontDatabase, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QCompleter,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSpinBox,
    QTableWidget,
    QVBoxLayout,
    QWidget,
)

from foundry.ui.editor.code_editor import CodeEditor

CHANGED_COLUMNS = ("Tool", "Parameters", "Was", "Now", "Why now")
WARNING_STYLE = "color: #8d4e00; background: #fff3e0; padding: 4px; border-radius: 3px;"


class TryPanel(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._call_part()
        self._replay_part()
        self._lay_out()

    def _call_part(self) -> None:
        self.try_tool = QLineEdit()
        self.try_tool.setPlaceholderText("server.tool, e.g. time.get_current_time")
        self.tool_names = QStringListModel(self)
        completer = QCompleter(self.tool_names, self.try_tool)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        completer.setFilterMode(Qt.MatchFlag.MatchContains)
        self.try_tool.setCompleter(completer)
        self.try_tool.setToolTip("The tools of the agent's servers complete as you type")
        self.offer = QLabel()  # which server offers the tool, when none does
        self.offer.setWordWrap(True)
        self.offer.setStyleSheet(WARNING_STYLE)
        self.offer.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        self.offer.hide()
        self.try_params = CodeEditor()
        self.try_params.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.try_params.setPlaceholderText('{"path": "/etc/passwd"}')
        self.try_params.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.try_params.setMaximumHeight(64)
        self.workspace = QLineEdit()
        self.workspace.setToolTip(
            "The folder the call's relative paths are judged in, as a chat of this agent "
            "would (empty: the agent's folder, as its chats use it)"
        )
        self.choose_workspace = QPushButton("Choose…")
        self.choose_workspace.setToolTip("Choose the workspace folder")
        self.recorded = QComboBox()
        self.recorded.setToolTip("Fill the call from one this agent made in a session")
        self.recorded.setMinimumContentsLength(20)
        self.recorded.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.decide = QPushButton("Decide")
        self.decide.setToolTip("Decide the call under the policy as edited (Ctrl+Return)")
        self.decide_shortcut = QShortcut(QKeySequence("Ctrl+Return"), self)
        self.decide_shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.verdict = QLabel("Type a call and press Decide: nothing runs, nothing is recorded.")
        self.verdict.setWordWrap(True)
        self.verdict.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

    def _replay_part(self) -> None:
        self.replay_count = QSpinBox()
        self.replay_count.setRange(1, 10000)
        self.replay_count.setValue(200)
        self.replay_count.setToolTip("How many of this agent's latest recorded calls")
        self.replay = QPushButton("Test against recorded calls")
        self.replay.setToolTip(
            "Decide this agent's recorded calls under the policy as edited, each at the time "
            "it was made, and list each decision that would change"
        )
        self.replay_summary = QLabel()
        self.replay_summary.setWordWrap(True)
        self.changed = QTableWidget(0, len(CHANGED_COLUMNS))
        self.changed.setHorizontalHeaderLabels(list(CHANGED_COLUMNS))
        self.changed.verticalHeader().hide()
        self.changed.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.changed.setWordWrap(False)  # one line a call; the whole reason in its tip
        header = self.changed.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(4, QHeaderView.ResizeMode.Stretch)
        header.resizeSection(1, 120)

    def _lay_out(self) -> None:
        workspace = QHBoxLayout()
        workspace.addWidget(self.workspace, 1)
        workspace.addWidget(self.choose_workspace)
        tool = QHBoxLayout()
        tool.addWidget(self.try_tool, 1)
        tool.addWidget(self.decide)
        form = QFormLayout()
        form.addRow("Tool:", tool)
        form.addRow("", self.offer)
        form.addRow("Parameters:", self.try_params)
        form.addRow("Workspace:", workspace)
        form.addRow("Recorded:", self.recorded)
        replay = QHBoxLayout()
        for widget in (self.replay, QLabel("last"), self.replay_count):
            replay.addWidget(widget)
        replay.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(QLabel("<b>Try it before it decides</b>"))
        layout.addLayout(form)
        layout.addWidget(self.verdict)
        layout.addLayout(replay)
        layout.addWidget(self.replay_summary)
        layout.addWidget(self.changed, 1)

    def show_verdict(self, text: str) -> None:
        """The verdict, scrolled into view when the panel scrolls."""
        self.verdict.setText(text)
        self._scroll_to(self.verdict)

    def show_replayed(self, text: str) -> None:
        """What the replay found, and the list of changes, scrolled into view."""
        self.replay_summary.setText(text)
        self._scroll_to(self.changed)

    def _scroll_to(self, widget: QWidget) -> None:
        area = self.parentWidget()
        while area is not None and not isinstance(area, QScrollArea):
            area = area.parentWidget()
        if area is not None:
            area.ensureWidgetVisible(widget)

    def show_offer(self, warning: str | None) -> None:
        """Say that no server of the agent offers the tool typed (None: one does)."""
        self.offer.setText(warning or "")
        self.offer.setVisible(warning is not None)
