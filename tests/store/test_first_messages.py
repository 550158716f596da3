"""The first user message of many sessions, read in one query (for their titles)."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from foundry.store import Store


def test_each_session_gives_its_first_user_message_in_one_query(store: Store) -> None:
    asked = store.sessions.create("a/tsagent.json", "A")
    told = store.sessions.create("b/tsagent.json", "B")
    silent = store.sessions.create("c/tsagent.json", "C")
    store.messages.add(asked.id, "user", "What time is it in Tokyo?")
    store.messages.add(asked.id, "assistant", "It is 10:00.")
    store.messages.add(asked.id, "user", "And in Paris?")
    store.messages.add(told.id, "assistant", "Hello, how can I help?")
    store.messages.add(told.id, "user", "Summarise my notes")
    statements: list[str] = []

    def count(*arguments: Any) -> None:
        statements.append(str(arguments[2]))

    sa.event.listen(store.engine, "before_cursor_execute", count)
    try:
        firsts = store.messages.first_user_messages([asked.id, told.id, silent.id])
    finally:
        sa.event.remove(store.engine, "before_cursor_execute", count)
    assert firsts == {asked.id: "What time is it in Tokyo?", told.id: "Summarise my notes"}
    assert len(statements) == 1


def test_no_sessions_ask_nothing(store: Store) -> None:
    assert store.messages.first_user_messages([]) == {}


def test_sessions_are_found_by_every_word_anyone_wrote_in_them(store: Store) -> None:
    trip = store.sessions.create("a/tsagent.json", "A")
    store.messages.add(trip.id, "user", "Plan my trip")
    store.messages.add(trip.id, "assistant", "Day one: the Fushimi Inari shrine in KYOTO.")
    time = store.sessions.create("b/tsagent.json", "B")
    store.messages.add(time.id, "user", "What time is it in Kyoto?")
    store.messages.add(time.id, "tool", "shrine")  # what a tool gave back is not searched
    percent = store.sessions.create("c/tsagent.json", "C")
    store.messages.add(percent.id, "user", "A 100% sure answer")
    ids = [trip.id, time.id, percent.id]
    assert store.messages.sessions_mentioning(["kyoto"], ids) == {trip.id, time.id}
    assert store.messages.sessions_mentioning(["kyoto", "shrine"], ids) == {trip.id}
    assert store.messages.sessions_mentioning(["0%"], ids) == {percent.id}  # no wildcard
    assert store.messages.sessions_mentioning(["_"], ids) == set()
    assert store.messages.sessions_mentioning(["kyoto"], [time.id]) == {time.id}
    assert store.messages.sessions_mentioning([], ids) == set()
