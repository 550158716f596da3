"""Edit > Preferences: the theme, the key that sends a chat message, and the default model."""

from __future__ import annotations

from pydantic import ValidationError
from PySide6.QtCore import QSettings, Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QCompleter,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from foundry.agent.models import AgentSettings
from foundry.llm.registry import DEFAULT_MODEL_REFERENCE
from foundry.ui.session.send_key import SendKey, send_key, set_send_key
from foundry.ui.settings import DEFAULT_MODEL_SETTING, default_model
from foundry.ui.theme import THEME_SETTING, Theme, apply_theme, quiet, theme_setting

THEME_LABELS: dict[Theme, str] = {"system": "System", "light": "Light", "dark": "Dark"}
SEND_KEY_LABELS: dict[SendKey, str] = {
    "enter": "Enter (Shift+Enter for a new line)",
    "ctrl+enter": "Ctrl+Enter (Enter for a new line)",
}
MODEL_TIP = (
    "The model of new agents, and of chats with an agent that names none. Empty: the built-in "
    f"{DEFAULT_MODEL_REFERENCE}. Written provider:model, e.g. ollama:qwen2.5:7b"
)


def model_problem(reference: str) -> str:
    """Why `reference` cannot be an agent's model ("" when it can: as an agent file checks it)."""
    if not reference:
        return ""
    try:
        AgentSettings(model=reference)
    except ValidationError:
        return (
            f"{reference!r} is not a model reference: write provider:model, for example "
            "ollama:qwen2.5:7b or embedded:smollm2."
        )
    return ""


class PreferencesDialog(QDialog):
    """Non-modal (`open()`); OK stores the choices in `settings` and applies the theme, a model
    that is not a reference keeps the dialog open and says why. `saved` follows OK."""

    saved = Signal()

    def __init__(self, settings: QSettings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Preferences")
        self.settings = settings
        self.theme = QComboBox()
        for theme, label in THEME_LABELS.items():
            self.theme.addItem(label, theme)
        self.theme.setCurrentIndex(self.theme.findData(theme_setting(settings)))
        self.send_key = QComboBox()
        for key, label in SEND_KEY_LABELS.items():
            self.send_key.addItem(label, key)
        self.send_key.setCurrentIndex(self.send_key.findData(send_key(settings)))
        self.send_key.setToolTip("Which key sends a chat message; the other starts a new line")
        self.model = QLineEdit(default_model(settings))
        self.model.setPlaceholderText(f"{DEFAULT_MODEL_REFERENCE} (built in)")
        self.model.setToolTip(MODEL_TIP)
        self.error = QLabel()
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #d32f2f;")
        self.model.textEdited.connect(lambda _: self.error.clear())
        self.found = QLabel("Looking for Ollama and the model servers you named…")
        self.found.setWordWrap(True)
        quiet(self.found)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form = QFormLayout()
        form.addRow("&Theme:", self.theme)
        form.addRow("&Send a message with:", self.send_key)
        form.addRow("Default &model:", self.model)
        form.addRow("", self.found)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.error)
        layout.addWidget(buttons)
        self.resize(520, self.sizeHint().height())

    def offer_models(self, references: list[str]) -> None:
        """The models found on the servers that answered, offered as the field is typed in."""
        if not references:
            self.found.setText(
                "No model server answered (Ollama on this machine, or a server an agent "
                "names): the built-in model runs unless you name another."
            )
            return
        completer = QCompleter(references, self.model)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        completer.setFilterMode(Qt.MatchFlag.MatchContains)
        self.model.setCompleter(completer)
        shown = ", ".join(references[:4]) + (", …" if len(references) > 4 else "")
        self.found.setText(f"Found: {shown} (type to choose)")

    def accept(self) -> None:
        model = self.model.text().strip()
        problem = model_problem(model)
        if problem:
            self.error.setText(problem)
            self.model.setFocus()
            return
        theme: Theme = self.theme.currentData()
        self.settings.setValue(THEME_SETTING, theme)
        set_send_key(self.send_key.currentData(), self.settings)
        self.settings.setValue(DEFAULT_MODEL_SETTING, model)
        self.settings.sync()
        apply_theme(theme)
        self.saved.emit()
        super().accept()
