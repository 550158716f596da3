"""ProvidersBinding: the providers section <-> the working agent's providers and model."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QItemSelection, QObject

from foundry.agent.models import Agent
from foundry.agent.names import free_name
from foundry.llm.base import ProviderError
from foundry.llm.registry import DEFAULT_MODEL_REFERENCE, ModelChoice
from foundry.ui.bridge import EngineBridge
from foundry.ui.editor.provider_probe import (
    KINDS,
    ProbeResult,
    probe_provider,
    provider_address,
    provider_kind,
)
from foundry.ui.editor.providers_section import ProvidersSection
from foundry.ui.editor.sections import set_line

if TYPE_CHECKING:
    from foundry.ui.editor.controller import EditorController

ENV_PREFIX = "env://"
VARIABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
FIXED_NAMES = ("ollama", "embedded", "scripted")
ERROR_STYLE = "color: #c62828;"
OK_STYLE = "color: #2e7d32;"


class ProvidersBinding(QObject):
    """Lists the agent's providers (and the one its model names); tests them off the GUI thread."""

    def __init__(
        self, section: ProvidersSection, editor: EditorController, bridge: EngineBridge | None
    ) -> None:
        super().__init__(section)
        self.section = section
        self.editor = editor
        self.bridge = bridge
        self.names: list[str] = []
        self.current: str | None = None
        self._tested: tuple[str, str] | None = None  # the provider (and config) the result is of
        section.providers.selectionModel().selectionChanged.connect(self._selected)
        for kind, action in section.add_actions.items():
            action.triggered.connect(lambda _=False, kind=kind: self.add(kind))
        section.remove.clicked.connect(self.remove)
        section.host.textEdited.connect(lambda text: self._set("OLLAMA_HOST", text.strip()))
        section.base_url.textEdited.connect(lambda text: self._set("BASE_URL", text.strip()))
        section.key_variable.textEdited.connect(self._key_typed)
        section.name.editingFinished.connect(self._rename)
        section.test.clicked.connect(self.test)
        section.use.clicked.connect(self.use_selected_model)
        section.models.doubleClicked.connect(lambda _index: self.use_selected_model())
        section.show_detail(False)

    # -- showing --------------------------------------------------------------------------------

    def configs(self) -> dict[str, dict[str, Any]]:
        return dict(self.editor.working.providers) if self.editor.working else {}

    def show(self, agent: Agent) -> None:
        in_use = _provider_in_use(agent)
        self.names = [*agent.providers, *([in_use] if in_use not in agent.providers else [])]
        labels = [f"{name}  ·  {KINDS[provider_kind(name)]}" for name in self.names]
        self.section.list_model.setStringList(labels)
        if self.current not in self.names:
            self.current = in_use if in_use in self.names else next(iter(self.names), None)
        if self.current is not None:
            index = self.section.list_model.index(self.names.index(self.current))
            self.section.providers.setCurrentIndex(index)
        model = agent.settings.model_reference
        self.section.current.setText(
            f"This agent's model: {model}"
            if model
            else f"This agent's model: default ({DEFAULT_MODEL_REFERENCE})"
        )
        self._show_provider()

    def _show_provider(self) -> None:
        section, name = self.section, self.current
        section.show_detail(name is not None)
        if name is None:
            return
        config = self.configs().get(name, {})
        self._forget_result_unless_of(name, config)
        kind = provider_kind(name)
        section.title.setText(name)
        section.kind.setText(KINDS[kind] + ("" if name in self.configs() else " · not configured"))
        section.show_kind(kind)
        with self.editor.refresh_guard():
            set_line(section.name, name)
            set_line(section.host, str(config.get("OLLAMA_HOST", "")))
            set_line(section.base_url, str(config.get("BASE_URL", "")))
            set_line(section.key_variable, _variable_of(config))
        section.address.setText(provider_address(name, config))
        if _clear_key(config):
            self._report(
                False,
                "This provider's API key is written in the agent's file in clear: put it in an "
                "environment variable and write the variable's name above.",
            )

    def _forget_result_unless_of(self, name: str, config: dict[str, Any]) -> None:
        """The result shown goes once it is another provider's, or of other settings."""
        if self._tested != _tested(name, config):
            self._tested = None
            self.section.models_model.setStringList([])
            self._report(True, "Not tested yet.", style="")

    def _selected(self, _selected: QItemSelection, _deselected: QItemSelection) -> None:
        rows = self.section.providers.selectionModel().selectedRows()
        if not rows or self.editor.refreshing:
            return
        name = self.names[rows[0].row()]
        if name != self.current:
            self.current = name
            self._show_provider()

    # -- testing --------------------------------------------------------------------------------

    def test(self) -> None:
        name, base_dir = self.current, self.editor.base_dir
        if name is None or base_dir is None:
            return
        self.section.test.setEnabled(False)
        self.section.progress.show()
        self._report(True, f"Asking {provider_address(name, self.configs().get(name, {}))}…", "")
        self.editor.spawn(self._test(name, self.configs(), base_dir))

    async def _test(self, name: str, configs: dict[str, dict[str, Any]], base_dir: Path) -> None:
        try:
            result = await self._probe(name, configs, base_dir)
        finally:
            self.section.test.setEnabled(True)
            self.section.progress.hide()
        if name != self.current or configs.get(name, {}) != self.configs().get(name, {}):
            return  # another provider is shown now, or this one was changed since
        self._tested = _tested(name, configs.get(name, {}))
        self._report(result.ok, result.message)
        self.section.models_model.setStringList(list(result.models))

    async def _probe(
        self, name: str, configs: dict[str, dict[str, Any]], base_dir: Path
    ) -> ProbeResult:
        """On the engine's loop when there is one, else on a worker thread: never the GUI's."""
        if self.bridge is not None:
            return await self.bridge.call(probe_provider(name, configs, base_dir))
        return await asyncio.to_thread(asyncio.run, probe_provider(name, configs, base_dir))

    def _report(self, ok: bool, message: str, style: str | None = None) -> None:
        self.section.result.setText(message)
        self.section.result.setStyleSheet(
            style if style is not None else OK_STYLE if ok else ERROR_STYLE
        )

    def use_selected_model(self) -> None:
        rows = self.section.models.selectionModel().selectedRows()
        if self.current is None or not rows:
            self._report(False, "Select a model in the list first (Test connection lists them).")
            return
        reference = f"{self.current}:{self.section.models_model.stringList()[rows[0].row()]}"
        if self.editor.edit(
            ("settings", "model"), lambda agent: setattr(agent.settings, "model", reference), False
        ):
            self._refresh_agent()
            self._report(True, f"The agent now uses {reference}; save to keep it.")

    # -- editing --------------------------------------------------------------------------------

    def _set(self, key: str, value: str) -> None:
        name = self.current
        if name is None or self.editor.refreshing:
            return
        configs = self.configs()
        config = {k: v for k, v in configs.get(name, {}).items() if k != key}
        if value:
            config[key] = value
        self.editor.edit(
            ("providers", name, key),
            lambda agent: setattr(agent, "providers", {**configs, name: config}),
        )
        self.section.address.setText(provider_address(name, config))
        self._forget_result_unless_of(name, self.configs().get(name, {}))

    def _key_typed(self, text: str) -> None:
        variable = text.strip()
        if variable and not VARIABLE.match(variable):
            self._report(
                False,
                "Write the name of the environment variable that holds the key (like "
                "OPENAI_API_KEY), not the key itself: keys are never written into agent files.",
            )
            return
        self._report(True, "Not tested yet.", "")
        self._set("API_KEY", f"{ENV_PREFIX}{variable}" if variable else "")

    def _rename(self) -> None:
        old, new = self.current, self.section.name.text().strip()
        if old is None or self.editor.refreshing or new == old or provider_kind(old) != "openai":
            return
        if not new or ":" in new or new in FIXED_NAMES or new in self.configs():
            self._report(
                False,
                f"{new!r} cannot name this provider: it is empty, has a colon, "
                "or is taken. The name stays.",
            )
            return
        renamed = {(new if key == old else key): value for key, value in self.configs().items()}

        def change(agent: Agent) -> None:
            agent.providers = renamed
            model = agent.settings.model or ""
            if model.startswith(f"{old}:"):
                agent.settings.model = f"{new}:{model.removeprefix(f'{old}:')}"

        self.current = new
        if self.editor.edit(("providers",), change, False):
            self._refresh_agent()

    def add(self, kind: str) -> None:
        configs = self.configs()
        name = kind if kind not in configs else None
        if kind == "openai" and name is None:
            name = free_name("local", set(configs))
        if name is None:
            self.current = kind
            self._refresh_agent()
            return
        config = (
            {"BASE_URL": "http://127.0.0.1:8080/v1"}
            if name != "openai" and kind == "openai"
            else {}
        )
        self.current = name
        if self.editor.edit(
            ("providers",),
            lambda agent: setattr(agent, "providers", {**configs, name: config}),
            False,
        ):
            self._refresh_agent()

    def remove(self) -> None:
        name = self.current
        if name is None:
            return
        kept = {key: value for key, value in self.configs().items() if key != name}
        self.current = None
        if self.editor.edit(("providers",), lambda agent: setattr(agent, "providers", kept), False):
            self._refresh_agent()

    def _refresh_agent(self) -> None:
        agent = self.editor.working
        if agent is not None:
            with self.editor.refresh_guard():
                self.show(agent)
                self.editor.settings.show(agent.settings)


def _tested(name: str, config: dict[str, Any]) -> tuple[str, str]:
    """What a test's result is of: the provider and its settings as they were tested."""
    return name, json.dumps(config, sort_keys=True, default=str)


def _provider_in_use(agent: Agent) -> str:
    try:
        return ModelChoice.parse(agent.settings.model_reference).provider
    except ProviderError:
        return "embedded"


def _variable_of(config: dict[str, Any]) -> str:
    key = str(config.get("API_KEY") or config.get("OPENAI_API_KEY") or "")
    return key.removeprefix(ENV_PREFIX) if key.startswith(ENV_PREFIX) else ""


def _clear_key(config: dict[str, Any]) -> bool:
    key = str(config.get("API_KEY") or config.get("OPENAI_API_KEY") or "")
    return bool(key) and not key.startswith(ENV_PREFIX)
