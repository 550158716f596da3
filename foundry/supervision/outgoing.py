"""Secrets masked in what leaves Foundry (the sessions export, `foundry sessions show`): their
telling shapes (see secrets.py) and the values the agent's `env://` references resolve to, which
a server may echo back in a result though they have no telling shape."""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from foundry.agent.document import read_agent
from foundry.agent.secrets import resolved_secrets
from foundry.supervision.secrets import SECRET, mask_secrets


class OutgoingMask:
    """Masks the secrets of one agent's sessions in events and text on their way out."""

    def __init__(self, known: frozenset[str] = frozenset()) -> None:
        self._known = sorted(known, key=len, reverse=True)  # a longer secret first

    @classmethod
    def for_agent(cls, agent_path: str | Path) -> OutgoingMask:
        """The mask for the agent a session was started with; its shapes alone when the agent
        cannot be read any more (moved, deleted, broken)."""
        document = read_agent(Path(agent_path))
        if not document.data:
            return cls()
        return cls(resolved_secrets(document.data, document.base_dir))

    def payload(self, value: Any) -> Any:
        """A copy of an event's payload with every secret masked."""
        return self._known_masked(mask_secrets(value))

    def stream(self, chunks: Sequence[str]) -> list[str]:
        """The chunks of one streamed reply (its token events), each masked, and every chunk a
        secret spans when they are read one after the other masked whole."""
        masked: list[str] = self._known_masked(mask_secrets(list(chunks)))
        starts = list(itertools.accumulate((len(chunk) for chunk in chunks), initial=0))
        joined = "".join(chunks)
        for secret in self._known:
            at = joined.find(secret)
            while at != -1:
                first = bisect.bisect_right(starts, at) - 1
                last = bisect.bisect_left(starts, at + len(secret)) - 1
                for index in range(first, last + 1):
                    masked[index] = SECRET
                at = joined.find(secret, at + 1)
        return masked

    def text(self, text: str) -> str:
        masked = self._known_masked(mask_secrets(text))
        return masked if isinstance(masked, str) else text

    def _known_masked(self, value: Any) -> Any:
        if isinstance(value, str):
            for secret in self._known:
                value = value.replace(secret, SECRET)
            return value
        if isinstance(value, dict):
            return {key: self._known_masked(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self._known_masked(item) for item in value]
        return value
