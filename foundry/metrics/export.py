"""`foundry metrics export`: one CSV per dashboard series, written as the store's rows stream in.

The database reads the points' fields out of the events' JSON; no event is validated as its
pydantic type (over a million events, that took most of a minute). An event whose fields do not
have the JSON types its type writes (a count written as 3.0, a default left out) is read by its
type, as every event was before, and one its type cannot read is left out and reported, as the
aggregates leave it out. Who is who (a chat's agent and task, a task's name and agents) and the
tasks' iterations and phase times come from the aggregates the writers keep in the store
(stored.py); the points of the other series from the events of their kind, in time order.
Memory stays flat whatever the number of events.
"""

from __future__ import annotations

import csv
import errno
import heapq
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from foundry.metrics.rows import StoreRows, open_rows, store_error
from foundry.metrics.terms import (
    MetricsFilter,
    phase_shares,
    question_outcome,
    resolution_level,
    verdict_agreement,
    waited_for_a_person,
)

Fields = tuple[Any, ...]
TASK_COLUMNS = ("time", "task_id", "task")  # of every point
CHAT_COLUMNS = (*TASK_COLUMNS, "session_id", "agent")  # of a point from a chat's event
_NO_CHAT = ("", "")  # the agent and task of a chat nothing is known of
LEFT_OUT: Fields = ("(not a point of the series)",)  # of its kind, but not of the series


@dataclass(frozen=True)
class PointSeries:
    """A series with a point per event of `kind`: the time, the task (and the chat, for a
    chat's event), then `columns` made of the payload's `fields` (dotted paths)."""

    name: str
    kind: str
    fields: tuple[str, ...]
    types: frozenset[tuple[type, ...]]  # of the fields, as the event type writes them
    columns: tuple[str, ...] = ()  # the fields' names unless given
    make: Callable[[Fields], Fields | None] | None = None  # the columns from the fields
    keeps: Callable[[Fields], bool] | None = None  # which events (by fields) are the series'
    of_chat: bool = True

    @property
    def header(self) -> tuple[str, ...]:
        first = CHAT_COLUMNS if self.of_chat else TASK_COLUMNS
        return (*first, *(self.columns or self.fields))

    def columns_of(self, fields: Fields) -> Fields | None:
        """None for fields that are not as the event type writes them, LEFT_OUT for an event
        that is no point of the series."""
        if tuple(map(type, fields)) not in self.types:
            return None
        if self.keeps is not None and not self.keeps(fields):
            return LEFT_OUT
        return fields if self.make is None else self.make(fields)


def _decision(fields: Fields) -> Fields | None:
    tool, allowed, by = fields
    if allowed not in (0, 1):  # SQLite reads true and false as 1 and 0
        return None
    return (tool, resolution_level(by), bool(allowed), by)


CONFIDENCE = PointSeries(
    "confidence",
    "criterion_scored",
    ("criterion", "iteration", "score", "level", "by"),
    frozenset({(str, int, float, str, str)}),
    of_chat=False,
)
MODEL_CALLS = PointSeries(
    "model_calls",
    "model_call",
    ("model", "input_tokens", "output_tokens", "first_token_s", "total_s"),
    frozenset({(str, int, int, float, float), (str, int, int, type(None), float)}),
)
RESOLUTIONS = PointSeries(
    "resolutions",
    "tool_call_decided",
    ("call.name", "allowed", "by"),
    frozenset({(str, bool, str), (str, int, str)}),
    columns=("tool", "level", "allowed", "by"),
    make=_decision,
)
HUMAN_WAITS = PointSeries(
    "human_waits",
    "approval_resolved",
    ("approval_id", "status", "resolved_by", "waited_s"),
    frozenset({(str, str, str, float)}),
    keeps=lambda fields: waited_for_a_person(fields[2]),  # resolved_by
)
_FLAGS = (bool, int)  # a JSON boolean, as PostgreSQL and SQLite read it
_NONE = type(None)  # a field an event written before it existed lacks (read as its default)
QUESTIONS = PointSeries(
    "questions",
    "approval_resolved",
    ("approval_id", "tool", "status", "edited", "flagged", "resolved_by", "waited_s"),
    frozenset(
        {(str, str, str, flag, flag, str, float) for flag in _FLAGS}
        | {(str, _NONE, str, _NONE, _NONE, str, float)}  # written before migration 0012
    ),
    columns=("approval_id", "tool", "outcome", "waited_s"),
    make=lambda f: (f[0], f[1] or "", question_outcome(f[2], bool(f[3]), bool(f[4])), f[6]),
    keeps=lambda fields: waited_for_a_person(fields[5]),
)
AGREEMENT_COLUMNS = ("approval_id", "tool", "shadow", "person", "edited", "agreement")


def _agreement(approval_id: str, tool: str, shadow: str, person: str, edited: int) -> Fields:
    agreement = verdict_agreement(shadow, person, bool(edited))
    return (approval_id, tool, shadow, person, bool(edited), agreement)


# the agreements of shadow verdicts carried by a person's resolution, and of verdicts given after
# it (terms.verdict_agreement)
RESOLVED_WITH_VERDICT = PointSeries(
    "agreements",
    "approval_resolved",
    ("approval_id", "tool", "shadow", "status", "edited", "resolved_by"),
    frozenset(
        {(str, str, shadow, str, flag, str) for shadow in (str, _NONE) for flag in _FLAGS}
        | {(str, _NONE, _NONE, str, _NONE, str)}  # written before migration 0012: no verdict
    ),
    columns=AGREEMENT_COLUMNS,
    make=lambda f: _agreement(*f[:5]),
    keeps=lambda f: waited_for_a_person(f[5]) and verdict_agreement(*f[2:5]) is not None,
)
LATE_VERDICTS = PointSeries(
    "agreements",
    "shadow_verdict",
    ("approval_id", "tool", "decision", "person", "edited"),
    frozenset((str, str, str, person, flag) for person in (str, _NONE) for flag in _FLAGS),
    columns=AGREEMENT_COLUMNS,
    make=lambda f: _agreement(*f),
    keeps=lambda f: verdict_agreement(*f[2:5]) is not None,
)
ITERATIONS_HEADER = (*TASK_COLUMNS, "iterations", "status")
PHASE_SHARES_HEADER = (*TASK_COLUMNS, "phase", "seconds", "share")
SERIES = (
    "confidence",
    "iterations",
    "phase_shares",
    "model_calls",
    "resolutions",
    "human_waits",
    "questions",
    "agreements",
)


@dataclass(frozen=True)
class Written:
    path: Path
    rows: int


@dataclass
class Export:
    """One export: the store's rows, who is who, the filter, what was written and left out."""

    rows: StoreRows
    where: MetricsFilter
    chats: dict[str, tuple[str, str]] = field(default_factory=dict)  # session: agent, task
    task_names: dict[str, str] = field(default_factory=dict)
    task_agents: dict[str, tuple[str, ...]] = field(default_factory=dict)
    written: list[Written] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # "KIND SESSION#SEQ: why"
    filtered: bool = field(init=False)

    def __post_init__(self) -> None:
        self.filtered = self.where != _EVERYTHING

    def read_who_is_who(self) -> None:
        sessions = "SELECT session_id, agent, task_id FROM metric_sessions"
        for session_id, agent, task_id in self.rows.rows(sessions):
            self.chats[session_id] = (agent, task_id)
        for task_id, name, agents in self.rows.rows(
            "SELECT task_id, name, agents FROM metric_tasks"
        ):
            self.task_names[task_id] = name
            self.task_agents[task_id] = tuple(self.rows.document(agents))

    def write(self, directory: Path) -> None:
        if directory.exists() and not directory.is_dir():
            why = "a file, not a folder: the export writes one CSV file per series into a folder"
            raise NotADirectoryError(errno.ENOTDIR, why, str(directory))
        directory.mkdir(parents=True, exist_ok=True)
        tables = {
            "confidence": (CONFIDENCE.header, self.points(CONFIDENCE)),
            "iterations": (ITERATIONS_HEADER, self.iterations()),
            "phase_shares": (PHASE_SHARES_HEADER, self.phase_shares()),
            "model_calls": (MODEL_CALLS.header, self.points(MODEL_CALLS)),
            "resolutions": (RESOLUTIONS.header, self.points(RESOLUTIONS)),
            "human_waits": (HUMAN_WAITS.header, self.points(HUMAN_WAITS)),
            "questions": (QUESTIONS.header, self.points(QUESTIONS)),
            "agreements": (RESOLVED_WITH_VERDICT.header, self.agreements()),
        }
        for name in SERIES:
            self.written.append(write_csv(directory / f"{name}.csv", *tables[name]))

    def admits(self, time: str, task_id: str, agents: Sequence[str]) -> bool:
        return self.where.admits(datetime.fromisoformat(time), task_id, agents)

    # -- the tasks' series, from the aggregates ------------------------------------------------

    def _tasks(self) -> Iterator[tuple[str, str, str, str, int, Any]]:
        """The started tasks the filter admits, by start time: time, id, name, status,
        iterations, phase seconds."""
        query = (
            f"SELECT {self.rows.iso_time('started_at')}, task_id, name, status, iterations, "
            "phase_seconds FROM metric_tasks WHERE started_at IS NOT NULL "
            "ORDER BY started_at, task_id"
        )
        for task in self.rows.rows(query):
            if not self.filtered or self.admits(
                task[0], task[1], self.task_agents.get(task[1], ())
            ):
                yield task

    def iterations(self) -> Iterator[Fields]:
        for time, task_id, name, status, iterations, _ in self._tasks():
            yield time, task_id, name, iterations, status

    def phase_shares(self) -> Iterator[Fields]:
        for time, task_id, name, _, _, phases in self._tasks():
            for phase, seconds, share in phase_shares(self.rows.document(phases)):
                yield time, task_id, name, phase, seconds, share

    # -- the series of points, from the events ---------------------------------------------------

    def agreements(self) -> Iterator[Fields]:
        """The points of both kinds that carry a shadow verdict and a person's decision, in the
        order of time, then of storing."""
        both = (self.points(RESOLVED_WITH_VERDICT, True), self.points(LATE_VERDICTS, True))
        for point in heapq.merge(*both, key=lambda point: (_moment(point[0]), point[-1])):
            yield point[:-1]

    def points(self, series: PointSeries, with_id: bool = False) -> Iterator[Fields]:
        """The series' points, by time then id (the event's row id last, if `with_id`)."""
        query = (
            f"SELECT {self.rows.iso_time('time')}, session_id, id, "
            f"{self.rows.json_fields('payload', series.fields)} "
            "FROM events WHERE kind = ? ORDER BY time, id"
        )
        admits = self.admits if self.filtered else None
        columns_of, fields = series.columns_of, self.rows.fields
        for row in self.rows.rows(query, series.kind):  # the loop of a million rows: lean
            time, session_id = row[0], row[1]
            columns = columns_of(fields(row[3:])) or self._read_as_typed(series, row[2])
            if columns is None or columns is LEFT_OUT:
                continue
            if with_id:
                columns = (*columns, row[2])
            if series.of_chat:
                agent, task_id = self.chats.get(session_id, _NO_CHAT)
                if admits is None or admits(time, task_id, (agent,)):
                    task = self.task_names.get(task_id, "")
                    yield (time, task_id, task, session_id, agent, *columns)
            elif admits is None or admits(time, session_id, self.task_agents.get(session_id, ())):
                yield (time, session_id, self.task_names.get(session_id, ""), *columns)

    def _read_as_typed(self, series: PointSeries, row_id: int) -> Fields | None:
        """The columns of an event whose fields are not as its type writes them, read by its
        type (a count written as 3.0, a default left out); None, reported, if it cannot."""
        from pydantic import ValidationError

        import foundry.orchestration.events  # noqa: F401  (the task kinds' types)
        from foundry.session.events import event_body

        query = "SELECT session_id, seq, payload FROM events WHERE id = ?"
        [(session_id, seq, payload)] = self.rows.rows(query, row_id)
        try:
            typed = event_body(series.kind, self.rows.document(payload)).model_dump(mode="json")
            columns = series.columns_of(tuple(_at(typed, path) for path in series.fields))
        except (ValidationError, TypeError, KeyError) as error:
            self.skipped.append(f"{series.kind} {session_id}#{seq}: {_why(error)}")
            return None
        if columns is None:  # not even as its type wrote it: this export does not know the type
            self.skipped.append(f"{series.kind} {session_id}#{seq}: fields of other types")
        return columns


_EVERYTHING = MetricsFilter()


def _moment(time: str) -> datetime:
    return datetime.fromisoformat(time)


def _at(document: Any, path: str) -> Any:
    for key in path.split("."):
        document = document[key]
    return document


def _why(error: Exception) -> str:
    """What is wrong with an event's fields, in one line."""
    from pydantic import ValidationError

    if isinstance(error, ValidationError):
        return "; ".join(
            f"{'.'.join(map(str, problem['loc']))}: {problem['msg']}" for problem in error.errors()
        )
    return f"{type(error).__name__} {error}".strip()


def write_csv(path: Path, header: Sequence[str], rows: Iterable[Fields]) -> Written:
    """Write `rows` under `header` to `path`, by way of a file beside it: an export that fails
    leaves the file it would have replaced as it was."""
    partial = path.with_name(f".{path.name}.partial")
    count = 0
    try:
        with partial.open("w", newline="", encoding="utf-8") as file:
            write = csv.writer(file).writerow  # None is written as an empty cell
            write(header)
            for count, row in enumerate(rows, 1):  # noqa: B007  (the count is the loop's)
                write(row)
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    return Written(path, count)


def export_csv(directory: Path, url: str, where: MetricsFilter | None = None) -> Export:
    """Write one CSV per series (SERIES) of the store at `url` into `directory` (created if
    missing); the Export returned says which files it `written` and which events it `skipped`.

    Raises StoreError if the store cannot be read or its aggregates are not complete."""
    with open_rows(url) as rows:
        _check_aggregates(rows)
        export = Export(rows, where or _EVERYTHING)
        export.read_who_is_who()
        export.write(directory)
    return export


def _check_aggregates(rows: StoreRows) -> None:
    if "metrics_state" not in rows.tables():
        raise store_error(
            "the store has no metric aggregates yet (it was last opened by an older Foundry): "
            "run `foundry metrics rebuild`, then export again"
        )
    for (complete,) in rows.rows("SELECT complete FROM metrics_state"):
        if not complete:
            raise store_error(
                "the store's metric aggregates are not complete (events from before they were "
                "kept, or a writer failed to fold some): run `foundry metrics rebuild`, then "
                "export again"
            )
