"""Asking a configured model provider for its models: the editor's "Test connection"."""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from foundry.llm.base import ProviderError
from foundry.llm.embedded import INSTALL_HINT, bundled_model_path
from foundry.llm.registry import OPENAI_URL, ModelChoice, open_provider

PROBE_TIMEOUT_S = 10.0
KINDS = {
    "ollama": "Ollama",
    "openai": "OpenAI-compatible",
    "embedded": "Embedded (in Foundry)",
    "scripted": "Scripted (replays a file)",
}


def provider_kind(name: str) -> str:
    """What serves a provider: ollama, embedded and scripted by name, else OpenAI-compatible."""
    return name if name in ("ollama", "embedded", "scripted") else "openai"


def provider_address(name: str, config: dict[str, Any]) -> str:
    """Where the provider is reached, as a person would say it."""
    kind = provider_kind(name)
    if kind == "ollama":  # its client (httpx, 5 MiB and more) is imported once Ollama is named
        from foundry.llm.ollama import DEFAULT_HOST

        return str(config.get("OLLAMA_HOST") or os.environ.get("OLLAMA_HOST") or DEFAULT_HOST)
    if kind == "openai":
        return str(config.get("BASE_URL") or (OPENAI_URL if name == "openai" else "(no URL)"))
    if kind == "embedded":
        path = bundled_model_path()
        return str(path) if path else f"no model installed: {INSTALL_HINT}"
    return "a file of recorded turns"


@dataclass(frozen=True)
class ProbeResult:
    """The models a provider listed, or why it could not, in plain words."""

    ok: bool
    message: str
    models: tuple[str, ...] = ()


async def probe_provider(
    name: str, providers: dict[str, dict[str, Any]], base_dir: Path
) -> ProbeResult:
    """List the provider's models within PROBE_TIMEOUT_S; never raises for a user's mistake."""
    where = provider_address(name, providers.get(name, {}))
    started = time.perf_counter()
    try:
        provider = open_provider(ModelChoice(name, ""), providers, base_dir)
    except (ProviderError, OSError) as error:
        return ProbeResult(False, f"Not configured: {error}.")
    try:
        async with asyncio.timeout(PROBE_TIMEOUT_S):
            models = tuple(await provider.list_models())
    except TimeoutError:
        return ProbeResult(False, f"No answer from {where} within {PROBE_TIMEOUT_S:g} s.")
    except ProviderError as error:
        return ProbeResult(False, f"Could not connect: {error}.")
    finally:
        await provider.aclose()
    seconds = time.perf_counter() - started
    if not models:
        return ProbeResult(True, f"Connected to {where} in {seconds:.2f} s, but it has no models.")
    count = f"{len(models)} model{'s' if len(models) != 1 else ''}"
    return ProbeResult(True, f"Connected to {where} in {seconds:.2f} s: {count}.", models)
