"""The status line's supervisors at work: named with their elapsed time, the ones a message
waits for first, gone when they decide or are deferred."""

from __future__ import annotations

from foundry.session.events import SupervisorDecided, SupervisorDeferred, SupervisorStarted
from foundry.ui.session.at_work import SupervisorsAtWork


def started(name: str, direction: str, holds: bool) -> SupervisorStarted:
    return SupervisorStarted(
        supervisor_id=name.lower(),
        supervisor=name,
        direction=direction,  # type: ignore[arg-type]
        message_index=1,
        holds=holds,
    )


def test_the_line_names_each_supervisor_at_work_with_its_elapsed_time() -> None:
    at_work = SupervisorsAtWork()
    at_work.apply(started("Architect", "response", holds=False), now=10.0)
    at_work.apply(started("Guardian", "request", holds=True), now=11.0)
    assert at_work.line(now=13.2) == "Guardian reviewing… 2.2 s · Architect reviewing… 3.2 s"


def test_a_decision_or_a_deferral_ends_the_review() -> None:
    at_work = SupervisorsAtWork()
    at_work.apply(started("Architect", "response", holds=False), now=0.0)
    at_work.apply(started("Curator", "request", holds=True), now=0.0)
    at_work.apply(
        SupervisorDecided(
            supervisor_id="architect",
            supervisor="Architect",
            direction="response",
            message_index=1,
            action="allow",
        )
    )
    assert at_work.line(now=1.0) == "Curator reviewing… 1.0 s"
    at_work.apply(
        SupervisorDeferred(
            supervisor_id="curator",
            supervisor="Curator",
            direction="request",
            message_index=1,
            reason="over its budget",
        )
    )
    assert not at_work and at_work.line() == ""
