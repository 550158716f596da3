"""The bar a chat shows when a capable model is found for supervisors that wait for one.

"Ollama is running with llama3.2. Use it for this agent's supervisors ...?" with the server's
models to choose from, "Use it" and "Not now" (remembered for that agent). Accepting writes the
model to the waiting supervisor agents (runtime/model_offer.py); they run from the next chat.
Attach it to a chat view with `offer_capable_model(view, bridge, agent_path)`.
"""

from __future__ import annotations

import asyncio
import logging
from html import escape
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QSettings, Qt, Signal
from PySide6.QtWidgets import (
    QBoxLayout,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from foundry.runtime.model_offer import ModelOffer, accept_model_offer, find_model_offer
from foundry.ui.bridge import EngineBridge
from foundry.ui.settings import foundry_settings
from foundry.ui.theme import is_dark

log = logging.getLogger(__name__)

DECLINED_SETTING = "first_run/declined_model_offer"  # agent paths whose offer was declined
LIGHT_STYLE = (
    "ModelOfferBar { background: #e8f1fd; border-bottom: 1px solid #9ec1ee; }"
    "ModelOfferBar QLabel { color: #0d3160; }"
)
DARK_STYLE = (
    "ModelOfferBar { background: #1d2f47; border-bottom: 1px solid #3d6494; }"
    "ModelOfferBar QLabel { color: #d6e6fb; }"
)


class ModelOfferBar(QWidget):
    """The offer, and then what came of it."""

    accepted = Signal(str)  # the model chosen, as the server names it
    declined = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.text = QLabel()
        self.text.setWordWrap(True)
        self.text.setTextFormat(Qt.TextFormat.RichText)
        self.models = QComboBox()
        self.models.setToolTip("The model the supervisors will run on")
        self.use = QPushButton("&Use it")
        self.use.setToolTip("Write this model to the supervisor agents (Alt+U)")
        self.use.clicked.connect(lambda: self.accepted.emit(self.models.currentText()))
        self.later = QPushButton("&Not now")
        self.later.setToolTip("Keep the supervisors off; not asked again for this agent (Alt+N)")
        self.later.clicked.connect(self.declined)
        self.dismiss = QPushButton("&Close")
        self.dismiss.setToolTip("Hide this bar")
        self.dismiss.clicked.connect(self.hide)
        self.dismiss.hide()
        self.models.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        choice = QHBoxLayout()
        choice.addWidget(self.models)
        choice.addWidget(self.use)
        choice.addWidget(self.later)
        choice.addWidget(self.dismiss)
        choice.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.text)
        layout.addLayout(choice)
        self.setStyleSheet(DARK_STYLE if is_dark() else LIGHT_STYLE)
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.hide()

    def show_offer(self, offer: ModelOffer) -> None:
        self.text.setText(f"<b>A capable model is here.</b> {escape(offer.question, quote=False)}")
        self.models.clear()
        self.models.addItems(list(offer.server.chat_models))
        self.use.setDefault(True)
        self.models.setVisible(len(offer.server.chat_models) > 1)
        self._choosing(True)
        self.show()

    def show_working(self) -> None:
        self._choosing(False)
        self.text.setText(f"Writing {escape(self.models.currentText())} to the supervisors…")

    def show_outcome(self, message: str) -> None:
        """What came of the offer, until the bar is closed."""
        self._choosing(False)
        self.text.setText(escape(message, quote=False))
        self.dismiss.show()

    def _choosing(self, choosing: bool) -> None:
        for widget in (self.use, self.later, self.models):
            widget.setEnabled(choosing)
        self.use.setVisible(choosing)
        self.later.setVisible(choosing)
        self.models.setVisible(choosing and self.models.count() > 1)


class ModelOfferController(QObject):
    """Looks for a capable model on the engine's loop, shows the offer, writes what is chosen."""

    def __init__(
        self,
        bar: ModelOfferBar,
        bridge: EngineBridge,
        agent_path: Path,
        settings: QSettings | None = None,
    ) -> None:
        super().__init__(bar)
        self.bar = bar
        self.bridge = bridge
        self.agent_path = agent_path
        self.settings = settings or foundry_settings()
        self.offer: ModelOffer | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        bar.accepted.connect(lambda model: self._spawn(self.accept(model)))
        bar.declined.connect(self.decline)

    def _spawn(self, work: Any) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def start(self) -> None:
        """Look for an offer in the background; the bar shows only if there is one."""
        self._spawn(self.look())

    async def look(self) -> ModelOffer | None:
        if str(self.agent_path) in self._declined():
            return None
        trust = self.bridge.engine.trust
        try:
            self.offer = await self.bridge.call(find_model_offer(self.agent_path, trust))
        except Exception:  # an offer is a convenience: its failure must not disturb the chat
            log.exception("looking for a capable model for %s failed", self.agent_path)
            return None
        if self.offer is not None:
            self.bar.show_offer(self.offer)
        return self.offer

    async def accept(self, model: str) -> None:
        if self.offer is None:
            return
        self.bar.show_working()
        reference = self.offer.server.reference(model)
        try:
            written = await accept_model_offer(self.offer, model)
        except Exception as error:  # said in the bar; the agents are left as they were
            self.bar.show_outcome(f"Could not write {reference}: {error}")
            return
        who = " and ".join(self.offer.waiting)
        runs = "runs" if len(self.offer.waiting) == 1 else "run"
        where = ", ".join(path.name for path in written)
        self.bar.show_outcome(
            f"Done: {who} {runs} on {reference} from this agent's next chat (written to the "
            f"supervisor agent{'s' if len(written) > 1 else ''} {where})."
        )

    def decline(self) -> None:
        declined = self._declined()
        self.settings.setValue(DECLINED_SETTING, [*declined, str(self.agent_path)])
        self.bar.hide()

    def _declined(self) -> list[str]:
        value = self.settings.value(DECLINED_SETTING, [])
        if isinstance(value, str):  # QSettings gives one item back as a string
            return [value]
        return [str(item) for item in value] if isinstance(value, list) else []


def offer_capable_model(
    view: QWidget, bridge: EngineBridge, agent_path: Path, settings: QSettings | None = None
) -> ModelOfferController:
    """Put the offer bar at the top of a chat view and start looking for a capable model."""
    bar = ModelOfferBar(view)
    layout = view.layout()
    if isinstance(layout, QBoxLayout):
        layout.insertWidget(0, bar)
    controller = ModelOfferController(bar, bridge, agent_path, settings)
    controller.start()
    return controller
