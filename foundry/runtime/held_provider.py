"""A model provider left unopened until the person trusts where it sends: no key is resolved."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

from foundry.llm.base import ChatRequest, Chunk, ModelProvider, ProviderError


class HeldProvider:
    """Stands for a provider whose server the agent chose and the person has not trusted:
    every call fails, saying how to trust it, until `release` opens the real one (only then are
    its `env://` references resolved)."""

    def __init__(self, name: str, reason: str, opener: Callable[[], ModelProvider]) -> None:
        self.name = name
        self._reason = reason
        self._open = opener
        self._provider: ModelProvider | None = None

    def release(self) -> None:
        """Opens the real provider; if it cannot be opened (a key not set), each call says why."""
        if self._provider is not None:
            return
        try:
            self._provider = self._open()
        except ProviderError as error:
            self._reason = str(error)

    async def stream(self, request: ChatRequest) -> AsyncIterator[Chunk]:
        async for chunk in self._opened().stream(request):
            yield chunk

    async def list_models(self) -> list[str]:
        return await self._opened().list_models()

    async def aclose(self) -> None:
        if self._provider is not None:
            await self._provider.aclose()

    def _opened(self) -> ModelProvider:
        if self._provider is None:
            raise ProviderError(self._reason)
        return self._provider
