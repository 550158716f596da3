"""Which provider serves a `provider:model` reference, configured from the agent's providers."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from foundry.agent import secrets as agent_secrets
from foundry.agent.secrets import SecretError
from foundry.llm.base import FIRST_BYTE_TIMEOUT_S, ModelProvider, ProviderError
from foundry.llm.embedded import DEFAULT_MODEL, EmbeddedProvider

DEFAULT_MODEL_REFERENCE = f"embedded:{DEFAULT_MODEL}"
OPENAI_URL = "https://api.openai.com/v1"


@dataclass(frozen=True)
class ModelChoice:
    """A parsed `provider:model` reference; the model part may itself hold colons."""

    provider: str
    model: str

    @classmethod
    def parse(cls, reference: str | None) -> ModelChoice:
        text = (reference or DEFAULT_MODEL_REFERENCE).strip()
        provider, separator, model = text.partition(":")
        if not separator or not provider:
            raise ProviderError(
                f"model {text!r} must be written as provider:model "
                "(for example embedded:smollm2, ollama:qwen2.5:7b, scripted:turns.yaml)"
            )
        return cls(provider=provider.lower(), model=model)

    def __str__(self) -> str:
        return f"{self.provider}:{self.model}"


def resolve_secret(value: str | None, base_dir: Path) -> str | None:
    """`env://NAME` is read from the environment, then from a `.env` file beside the agent."""
    if value is None:
        return None
    try:
        return agent_secrets.resolve_secret(value, base_dir)
    except SecretError as exc:
        raise ProviderError(str(exc)) from exc


def open_provider(
    choice: ModelChoice, providers: dict[str, dict[str, Any]], base_dir: Path
) -> ModelProvider:
    """A new provider for `choice`, configured from the agent's `providers` section."""
    config = {key: str(value) for key, value in providers.get(choice.provider, {}).items()}
    if choice.provider == "embedded":
        return EmbeddedProvider()
    if choice.provider == "scripted":
        from foundry.llm.scripted import ScriptedProvider

        return ScriptedProvider((base_dir / choice.model).resolve())
    if choice.provider == "ollama":
        from foundry.llm.ollama import OllamaProvider

        return OllamaProvider(
            host=resolve_secret(config.get("OLLAMA_HOST"), base_dir),
            first_byte_timeout_s=first_byte_timeout(choice, config),
        )
    return _openai_compatible(choice, config, base_dir)


def first_byte_timeout(choice: ModelChoice, config: dict[str, str]) -> float:
    """The provider's FIRST_BYTE_TIMEOUT (seconds), or the default."""
    text = config.get("FIRST_BYTE_TIMEOUT")
    if text is None:
        return FIRST_BYTE_TIMEOUT_S
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds <= 3600:
        raise ProviderError(
            f"providers.{choice.provider}.FIRST_BYTE_TIMEOUT must be a number of seconds "
            f"between 0 and 3600, not {text!r}"
        )
    return seconds


def _openai_compatible(
    choice: ModelChoice, config: dict[str, str], base_dir: Path
) -> ModelProvider:
    from foundry.llm.openai_compat import OpenAICompatibleProvider

    base_url = config.get("BASE_URL") or (OPENAI_URL if choice.provider == "openai" else None)
    if base_url is None:
        raise ProviderError(
            f"unknown model provider {choice.provider!r}: use embedded, ollama, openai or "
            f"scripted, or give providers.{choice.provider}.BASE_URL of an OpenAI-compatible server"
        )
    key = config.get("API_KEY") or config.get("OPENAI_API_KEY")
    return OpenAICompatibleProvider(
        base_url=resolve_secret(base_url, base_dir) or base_url,
        api_key=resolve_secret(key, base_dir),
        name=choice.provider,
        first_byte_timeout_s=first_byte_timeout(choice, config),
    )
