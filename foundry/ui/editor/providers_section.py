"""ProvidersSection: the widgets of the editor's model providers page (view only)."""

from __future__ import annotations

from PySide6.QtCore import QStringListModel, Qt
from PySide6.QtWidgets import (
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QMenu,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from foundry.ui.editor.provider_probe import KINDS
from foundry.ui.editor.sections import heading, hint, list_and_detail

ADDABLE = ("ollama", "openai", "embedded")


class ProvidersSection(QWidget):
    """Providers on the left; the selected one's settings, connection test and models."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.list_model = QStringListModel(self)
        self.providers = QListView()
        self.providers.setModel(self.list_model)
        self.providers.setToolTip("The model providers this agent configures")
        self.providers.setWordWrap(True)  # a long name wraps in the narrow list, never hidden
        self.providers.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.providers.setResizeMode(QListView.ResizeMode.Adjust)
        self.add = QPushButton("Add provider")
        self.add_menu = QMenu(self.add)
        self.add_actions = {kind: self.add_menu.addAction(KINDS[kind]) for kind in ADDABLE}
        self.add.setMenu(self.add_menu)
        self.remove = QPushButton("Remove")
        self.remove.setToolTip("Remove the selected provider (undo with Ctrl+Z)")
        self.title = QLabel()
        self.title.setStyleSheet("font-weight: bold; font-size: 12pt;")
        self.kind = hint("")
        self.name = QLineEdit()
        self.name.setToolTip("The name models are written with: name:model")
        self.host = QLineEdit()
        self.host.setPlaceholderText("http://127.0.0.1:11434 (or $OLLAMA_HOST)")
        self.base_url = QLineEdit()
        self.base_url.setPlaceholderText("https://api.openai.com/v1 or http://127.0.0.1:8080/v1")
        self.key_variable = QLineEdit()
        self.key_variable.setPlaceholderText("OPENAI_API_KEY")
        self.key_variable.setToolTip(
            "The environment variable (or .env entry beside the agent) that holds the API key; "
            "the key itself is never written into the agent's files"
        )
        self.address = hint("")
        self.form = QFormLayout()
        self.form.addRow("Name:", self.name)
        self.form.addRow("Ollama host:", self.host)
        self.form.addRow("Base URL:", self.base_url)
        self.form.addRow("API key from:", self.key_variable)
        self.form.addRow("Reached at:", self.address)
        self.test = QPushButton("Test connection")
        self.test.setToolTip("Ask the provider for its models (Ctrl+T)")
        self.test.setShortcut("Ctrl+T")
        self.progress = QProgressBar()
        self.progress.setRange(0, 0)
        self.progress.setMaximumWidth(120)
        self.progress.hide()
        self.result = QLabel("Not tested yet.")
        self.result.setWordWrap(True)
        self.models_model = QStringListModel(self)
        self.models = QListView()
        self.models.setModel(self.models_model)
        self.models.setToolTip("Double-click a model to use it for this agent")
        self.use = QPushButton("Use for this agent")
        self.use.setToolTip("Make the selected model the agent's model (Settings > Model)")
        self.current = QLabel()
        self.detail = QWidget()
        self.empty = hint("Add a provider, or select one on the left.")
        self._lay_out()

    def _lay_out(self) -> None:
        test_row = QHBoxLayout()
        test_row.addWidget(self.test)
        test_row.addWidget(self.progress)
        test_row.addStretch(1)
        use_row = QHBoxLayout()
        use_row.addWidget(self.current, 1)
        use_row.addWidget(self.use)
        detail = QVBoxLayout(self.detail)
        detail.setContentsMargins(0, 0, 0, 0)
        detail.addWidget(self.title)
        detail.addWidget(self.kind)
        detail.addLayout(self.form)
        detail.addLayout(test_row)
        detail.addWidget(self.result)
        detail.addWidget(QLabel("Models:"))
        detail.addWidget(self.models, 1)
        detail.addLayout(use_row)
        split = list_and_detail(self.providers, (self.add, self.remove), self.detail, self.empty)
        layout = QVBoxLayout(self)
        layout.addWidget(heading("Model providers"))
        layout.addWidget(split, 1)

    def show_kind(self, kind: str) -> None:
        self.form.setRowVisible(self.host, kind == "ollama")
        self.form.setRowVisible(self.base_url, kind == "openai")
        self.form.setRowVisible(self.key_variable, kind == "openai")
        self.name.setEnabled(kind == "openai")

    def show_detail(self, visible: bool) -> None:
        self.detail.setVisible(visible)
        self.empty.setVisible(not visible)
        self.remove.setEnabled(visible)
