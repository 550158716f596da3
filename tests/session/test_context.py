"""Context selection: include modes, mentions, exclusions and relevance ranking."""

from __future__ import annotations

from foundry.agent.models import AgentSettings, IncludeMode
from foundry.session.context import (
    Candidate,
    ContextState,
    bm25_scores,
    mentions,
    select_context,
)
from foundry.session.events import ContextChanged

RULES = [
    Candidate("rule", "be-concise", IncludeMode.ALWAYS, "keep answers short"),
    Candidate("rule", "formal-tone", IncludeMode.MANUAL, "formal business tone"),
    Candidate("reference", "time-zones", IncludeMode.AGENT, "time zones tokyo london asia"),
    Candidate("reference", "recipes", IncludeMode.AGENT, "pasta sauce tomato basil cooking"),
    Candidate("reference", "trains", IncludeMode.AGENT, "train timetable tokyo station"),
    Candidate("tool", "time.convert_time", IncludeMode.AGENT, "convert time between zones"),
]


def chosen(entries) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {entry.name: entry.reason for entry in entries}


def test_always_items_are_in_and_manual_items_are_out_by_default() -> None:
    entries = select_context(RULES, ContextState(), "hello", AgentSettings())
    assert chosen(entries) == {"be-concise": "always"}


def test_agent_items_are_chosen_by_relevance_with_their_score() -> None:
    entries = select_context(RULES, ContextState(), "What time is it in Tokyo?", AgentSettings())
    ranked = [(e.name, e.score) for e in entries if e.reason == "agent"]
    assert ranked[0] == ("time-zones", 1.0)
    assert {name for name, _ in ranked} == {"time-zones", "trains", "time.convert_time"}
    assert all(score is not None and 0 < score <= 1 for _, score in ranked)
    assert "recipes" not in chosen(entries)


def test_context_top_n_limits_ranked_items_unless_they_score_high() -> None:
    query = "What time is it in Tokyo?"
    only_best = AgentSettings(context_top_n=1, context_include_score=1.0)
    assert [
        e.name
        for e in select_context(RULES, ContextState(), query, only_best)
        if e.reason == "agent"
    ] == ["time-zones"]
    generous = AgentSettings(context_top_n=1, context_include_score=0.01)
    assert (
        len(
            [
                e
                for e in select_context(RULES, ContextState(), query, generous)
                if e.reason == "agent"
            ]
        )
        == 3
    )
    top_k = AgentSettings(context_top_k=1, context_top_n=5, context_include_score=0.0)
    assert (
        len([e for e in select_context(RULES, ContextState(), query, top_k) if e.reason == "agent"])
        == 1
    )


def test_mentions_include_items_and_exclusions_remove_even_always_items() -> None:
    state = ContextState()
    state.apply(ContextChanged(item="rule", name="formal-tone", included=True, by="mention"))
    state.apply(ContextChanged(item="rule", name="be-concise", included=False, by="user"))
    entries = select_context(RULES, state, "hello", AgentSettings())
    assert chosen(entries) == {"formal-tone": "mention"}


def test_mentions_are_found_in_text() -> None:
    assert mentions("use @rule:formal-tone and @ref:time-zones, not @foo:bar") == [
        ("rule", "formal-tone"),
        ("reference", "time-zones"),
    ]


def test_bm25_prefers_rare_matching_words() -> None:
    scores = bm25_scores("tokyo pasta", ["tokyo tokyo city", "pasta", "nothing here"])
    assert scores[2] == 0
    assert scores[0] > 0 and scores[1] > 0
