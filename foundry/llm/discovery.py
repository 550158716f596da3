"""Finding a model server that can do more than the embedded model: Ollama, or an
OpenAI-compatible server the agent names.

Only the servers a person configured are asked, and Ollama on its default port on loopback:
Ollama at `providers.ollama.OLLAMA_HOST`, else at `OLLAMA_HOST`, else at 127.0.0.1:11434, and the
agent's OpenAI-compatible providers (those with a `BASE_URL`) that the caller passes (the app
passes the trusted ones). Each is asked for its models once, with a short timeout, on the
caller's event loop: a server that is not there costs at most PROBE_TIMEOUT_S, never the GUI.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from foundry.llm.base import ModelProvider, ProviderError
from foundry.llm.registry import ModelChoice, open_provider

PROBE_TIMEOUT_S = 1.5
LOCAL_PROVIDERS = ("embedded", "scripted")
_NOT_FOR_CHAT = re.compile(r"embed|\bbge\b|minilm|rerank", re.IGNORECASE)


class ServerToAsk(BaseModel):
    """A model server to look for: the provider's name and the settings that reach it (what an
    agent's `providers` section would hold for it)."""

    model_config = ConfigDict(frozen=True)

    provider: str
    settings: dict[str, str] = Field(default_factory=dict)

    @property
    def url(self) -> str:
        if self.provider == "ollama":
            return ollama_host(self.settings)
        return self.settings.get("BASE_URL", "")


class FoundServer(BaseModel):
    """A model server that answered, and the models it offers, as it listed them."""

    model_config = ConfigDict(frozen=True)

    provider: str
    url: str
    models: tuple[str, ...]
    settings: dict[str, str] = Field(default_factory=dict)  # for the agent's `providers`

    @property
    def chat_models(self) -> tuple[str, ...]:
        """The models that can chat (embedding and reranking models left out)."""
        return tuple(model for model in self.models if not _NOT_FOR_CHAT.search(model))

    @property
    def suggested(self) -> str | None:
        """The model to offer first: the first one that can chat (Ollama lists the most
        recently used first)."""
        return next(iter(self.chat_models), None)

    def reference(self, model: str) -> str:
        """`ollama:llama3.2`: the model as an agent's settings name it."""
        return f"{self.provider}:{model}"

    @property
    def label(self) -> str:
        """How a person knows the server: "Ollama", or the provider's name and where it is."""
        if self.provider == "ollama":
            return "Ollama" if not self.settings else f"Ollama at {self.url}"
        return f"{self.provider} at {self.url}"


def ollama_host(settings: Mapping[str, str] | None = None) -> str:
    """Where Ollama is: the provider's OLLAMA_HOST, else the environment's, else loopback."""
    from foundry.llm.ollama import DEFAULT_HOST

    configured = (settings or {}).get("OLLAMA_HOST")
    return configured or os.environ.get("OLLAMA_HOST") or DEFAULT_HOST


def servers_to_ask(providers: Mapping[str, Mapping[str, Any]] | None = None) -> list[ServerToAsk]:
    """Ollama (as the agent's settings, the environment or the default place it), then each of
    `providers` that names an OpenAI-compatible server (a BASE_URL)."""
    from foundry.llm.ollama import DEFAULT_HOST

    providers = providers or {}
    ollama = {key: str(value) for key, value in providers.get("ollama", {}).items()}
    host = ollama_host(ollama)
    asked = [ServerToAsk(provider="ollama", settings=ollama or _host_setting(host, DEFAULT_HOST))]
    for name, config in providers.items():
        settings = {key: str(value) for key, value in config.items()}
        if name not in (*LOCAL_PROVIDERS, "ollama") and settings.get("BASE_URL"):
            asked.append(ServerToAsk(provider=name, settings=settings))
    return asked


def _host_setting(host: str, default: str) -> dict[str, str]:
    """Nothing for the default place (so nothing new needs trusting), else the host."""
    return {} if host.rstrip("/") == default else {"OLLAMA_HOST": host}


async def find_model_servers(
    asked: list[ServerToAsk] | None = None,
    base_dir: Path | None = None,
    timeout_s: float = PROBE_TIMEOUT_S,
) -> list[FoundServer]:
    """The servers that answered with at least one model that can chat, in the order asked;
    `base_dir` is the agent's folder, where an `env://` key may come from a `.env` file."""
    asked = asked if asked is not None else servers_to_ask()
    probes = (_probe(server, base_dir or Path.cwd(), timeout_s) for server in asked)
    found = await asyncio.gather(*probes)
    return [server for server in found if server is not None and server.suggested]


async def _probe(server: ServerToAsk, base_dir: Path, timeout_s: float) -> FoundServer | None:
    try:
        provider = _provider(server, base_dir, timeout_s)
    except ProviderError:
        return None  # a setting it cannot use: the editor says why
    try:
        async with asyncio.timeout(timeout_s):
            models = await provider.list_models()
    except (ProviderError, TimeoutError, OSError):
        return None
    finally:
        await provider.aclose()
    return FoundServer(
        provider=server.provider, url=server.url, models=tuple(models), settings=server.settings
    )


def _provider(server: ServerToAsk, base_dir: Path, timeout_s: float) -> ModelProvider:
    if server.provider == "ollama":
        from foundry.llm.ollama import OllamaProvider

        return OllamaProvider(host=server.url, timeout_s=timeout_s, first_byte_timeout_s=timeout_s)
    settings = {**server.settings, "FIRST_BYTE_TIMEOUT": str(timeout_s)}
    choice = ModelChoice(provider=server.provider, model="")
    return open_provider(choice, {server.provider: settings}, base_dir)
