"""A task run's events as spans: `invoke_agent {task}` for its coordinator, a span per phase, and
under each phase the agents it consulted (`invoke_agent {agent}`); scores and retries as span
events."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from opentelemetry.trace import Span

from foundry.orchestration.events import (
    AgentConsulted,
    CriterionScored,
    PhaseFinished,
    PhaseStarted,
    RescueDecided,
    RetryDecided,
    TaskFinished,
    TaskResumed,
    TaskStarted,
    WorkerFinished,
)
from foundry.session.events import Event
from foundry.telemetry.builder import Attributes, SpanBuilder, before


class TaskSpans(SpanBuilder):
    """The spans of one task run; `feed` its events in order, then `finish`."""

    name = "task"
    _task: Span | None = None
    _started_at: datetime | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._phases: dict[tuple[str, int], Span] = {}
        self.handlers = {
            TaskStarted: self._task_started,
            TaskResumed: self._resumed,
            PhaseStarted: self._phase_started,
            PhaseFinished: self._phase_finished,
            AgentConsulted: self._consulted,
            WorkerFinished: self._worker,
            CriterionScored: self._scored,
            RetryDecided: self._retry,
            RescueDecided: self._rescue,
            TaskFinished: self._task_finished,
        }

    def finish(self, at: datetime) -> None:
        self._finish_phases(at)
        if self._task is not None:
            self.end(self._task, at, "unfinished")
        self._task = None

    def common(self) -> Attributes:
        return {"foundry.task.id": self.session_id, "session.id": self.session_id}

    def _current(self) -> Span | None:
        """The latest phase still open, else the task's own span."""
        return next(reversed(self._phases.values()), None) or self._task

    def _task_started(self, event: Event, body: TaskStarted) -> None:
        self.name, self._started_at = body.name, event.time
        attributes = {
            **self.common(),
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": body.name,
            "gen_ai.conversation.id": self.session_id,
            "foundry.task.file": body.task_file,
            "foundry.task.type": body.task_type,
            "foundry.task.complexity": body.complexity,
            "openinference.span.kind": "CHAIN",
        }
        self._task = self.start(f"invoke_agent {body.name}", event.time, attributes)

    def _resumed(self, event: Event, body: TaskResumed) -> None:
        if self._task is not None:
            self.note(self._task, "foundry.task_resumed", event, {"from_step": body.from_step})

    def _phase_started(self, event: Event, body: PhaseStarted) -> None:
        attributes = {
            **self.common(),
            "foundry.phase": body.phase,
            "foundry.phase.iteration": body.iteration,
            "foundry.phase.step": body.step,
            "foundry.phase.label": body.label,
        }
        span = self.start(f"phase {body.phase}", event.time, attributes, self._task)
        self._phases[(body.phase, body.iteration)] = span

    def _phase_finished(self, event: Event, body: PhaseFinished) -> None:
        span = self._phases.pop((body.phase, body.iteration), None)
        if span is None:
            return
        self.set(span, {"foundry.phase.ok": body.ok, "foundry.phase.summary": body.summary})
        self.end(span, event.time, None if body.ok else "phase_failed")

    def _consulted(self, event: Event, body: AgentConsulted) -> None:
        attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": body.agent,
            "gen_ai.conversation.id": body.session_id,
            "gen_ai.usage.input_tokens": body.input_tokens,
            "gen_ai.usage.output_tokens": body.output_tokens,
            "foundry.task.id": self.session_id,
            "foundry.task.role": body.role,
            "foundry.consult.model_calls": body.model_calls,
            "foundry.consult.prompt_chars": body.prompt_chars,
            "foundry.consult.response_chars": body.response_chars,
            "foundry.consult.ended_by": body.ended_by,
            "openinference.span.kind": "AGENT",
        }
        failed = None if body.ended_by == "reply" else body.ended_by
        start = before(event.time, body.seconds)
        self.span(
            f"invoke_agent {body.agent}", start, event.time, attributes, self._current(), failed
        )

    def _worker(self, event: Event, body: WorkerFinished) -> None:
        started = self._started_at or event.time
        attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": body.worker,
            "gen_ai.conversation.id": body.session_id or None,
            "foundry.task.id": self.session_id,
            "foundry.task.role": "worker",
            "foundry.task.step": body.step,
        }
        start = started + timedelta(seconds=body.started_s)
        end = started + timedelta(seconds=body.finished_s)
        name = f"invoke_agent {body.worker}"
        self.span(name, start, end, attributes, self._current(), body.error)

    def _scored(self, event: Event, body: CriterionScored) -> None:
        span = self._current()
        if span is not None:
            attributes = {
                "foundry.criterion": body.criterion,
                "foundry.criterion.score": body.score,
                "foundry.criterion.level": body.level,
                "foundry.criterion.by": body.by,
                "foundry.criterion.cached": body.cached,
                "foundry.phase.iteration": body.iteration,
            }
            self.note(span, "foundry.criterion_scored", event, attributes)

    def _retry(self, event: Event, body: RetryDecided) -> None:
        if self._task is not None:
            attributes = {
                "foundry.retry": body.retry,
                "foundry.retry.approach": body.approach,
                "foundry.retry.reason": body.reason,
                "foundry.phase.iteration": body.iteration,
            }
            self.note(self._task, "foundry.retry_decided", event, attributes)

    def _rescue(self, event: Event, body: RescueDecided) -> None:
        if self._task is not None:
            attributes = {
                "foundry.rescue.action": body.action,
                "foundry.rescue.operator": body.operator,
                "foundry.rescue.analysis": body.analysis,
            }
            self.note(self._task, "foundry.rescue_decided", event, attributes)

    def _task_finished(self, event: Event, body: TaskFinished) -> None:
        self._finish_phases(event.time)
        if self._task is None:
            return
        attributes = {
            "foundry.task.status": body.status,
            "foundry.task.iterations": body.iterations,
            "foundry.task.reason": body.reason,
            "output.value": body.output,
        }
        self.set(self._task, attributes)
        self.end(self._task, event.time, None if body.status == "succeeded" else body.status)
        self._task = None

    def _finish_phases(self, at: datetime) -> None:
        for phase in self._phases.values():
            self.end(phase, at, "unfinished")
        self._phases = {}
