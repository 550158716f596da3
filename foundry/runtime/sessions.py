"""The stored-sessions service: the chats the window lists, searches, restores and reopens.

Its values are the store's SessionRecords, handed out read-only. Every method blocks on the
database: call it off the GUI thread (a worker thread, `asyncio.to_thread`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from foundry.store import NotFound, SessionRecord, Store

__all__ = ["NotFound", "SessionRecord", "StoredSessions"]

RECENT = 200


class StoredSessions:
    """The sessions of every Foundry sharing one store, newest first."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def recent(self, limit: int = RECENT) -> list[SessionRecord]:
        """The sessions last active, newest first."""
        return list(self._store.sessions.list(limit))

    def get(self, session_id: str) -> SessionRecord:
        """The session with this id; NotFound if there is none."""
        return self._store.sessions.get(session_id)

    def first_messages(self, session_ids: Collection[str]) -> dict[str, str]:
        """The first user message of each of these sessions that has one (their titles)."""
        return self._store.messages.first_user_messages(session_ids)

    def mentioning(self, words: Sequence[str], session_ids: Collection[str]) -> set[str]:
        """Those of these sessions where the user or the agent wrote every one of `words`."""
        return self._store.messages.sessions_mentioning(words, session_ids)
