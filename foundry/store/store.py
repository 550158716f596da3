"""The store: sessions, messages, the event log, approvals, grants and traces in one database.

Every method is synchronous and short; the engine calls them from a worker thread, never from
an event loop's thread. Each call uses its own database session, so threads may share a Store.
"""

from __future__ import annotations

import fnmatch
import functools
import itertools
import threading
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, SQLModel, col, select

from foundry.home import FoundryHome
from foundry.store.changes import ApprovalChanges
from foundry.store.database import (
    StoreError,
    create_database_engine,
    database_url,
    migrate,
    normalise_url,
)
from foundry.store.tables import (
    ApprovalRecord,
    EventRecord,
    GrantRecord,
    MessageRecord,
    SessionRecord,
    TaskRecord,
    TraceRecord,
    utc_now,
)

Record = TypeVar("Record", bound=SQLModel)
SEQUENCE_RETRIES = 20
# Called with the database session and the new records inside the transaction that appends
# events, so that what it writes (the metric aggregates) commits or rolls back with them.
AppendHook = Callable[[Session, list[EventRecord]], None]
_APPROVALS: sa.Table = ApprovalRecord.__table__  # type: ignore[attr-defined]
_TRACES: sa.Table = TraceRecord.__table__  # type: ignore[attr-defined]
_GRANTS: sa.Table = GrantRecord.__table__  # type: ignore[attr-defined]
# the statements of the supervision's hot paths, built once (building one costs more than
# SQLite takes to run it)
_APPROVAL_BY_ID = sa.select(_APPROVALS).where(_APPROVALS.c.id == sa.bindparam("approval_id"))
_RESOLVE = (  # its SET clause: the columns named by the parameters it is run with
    sa.update(_APPROVALS)
    .where(_APPROVALS.c.id == sa.bindparam("approval_id"), _APPROVALS.c.status == "pending")
    .returning(*_APPROVALS.c)
)
_ASKED_PARAMS = sa.select(_APPROVALS.c.params).where(
    _APPROVALS.c.id == sa.bindparam("approval_id"), _APPROVALS.c.status == "pending"
)
_KEEP_SHADOW = (
    sa.update(_APPROVALS)
    .where(_APPROVALS.c.id == sa.bindparam("approval_id"))
    .values(shadow_verdict=sa.bindparam("verdict", type_=sa.JSON))
)
_ADD_TRACE = sa.insert(_TRACES)
_ADD_EVENT = sa.insert(EventRecord.__table__)  # type: ignore[attr-defined]
_ACTIVE_GRANTS = (
    sa.select(_GRANTS)
    .where(_GRANTS.c.revoked_at.is_(None), _GRANTS.c.expires_at > sa.bindparam("now"))
    .order_by(_GRANTS.c.expires_at)
)


class NotFound(LookupError):
    """No record has the id asked for."""


class AlreadyResolved(Exception):
    """An approval was resolved before this resolution reached the store."""

    def __init__(self, approval: ApprovalRecord) -> None:
        self.approval = approval
        super().__init__(
            f"approval {approval.id} was already {approval.status} by {approval.resolved_by}"
        )


@dataclass(frozen=True, slots=True)
class Row:
    """A record as its table's values (each column with a default in Python given): written
    without making an ORM object of it, which takes longer than the insert (a trace, say, of a
    decision that took less)."""

    table: sa.Table
    values: dict[str, Any]

    @classmethod
    def of(cls, record: SQLModel) -> Row:
        """A record's row; an id the database numbers is left out."""
        values = record.model_dump()
        if values.get("id", 0) is None:
            del values["id"]
        return cls(type(record).__table__, values)  # type: ignore[attr-defined]


class _Repository:
    def __init__(self, store: Store) -> None:
        self._store = store

    @contextmanager
    def _session(self) -> Iterator[Session]:
        with Session(self._store.engine, expire_on_commit=False) as session:
            yield session

    def insert(self, records: Sequence[SQLModel | Row]) -> None:
        """Store records, in order, in one transaction."""
        with self._session() as session:
            _insert(session, records)
            session.commit()

    def _add(self, record: Record) -> Record:
        with self._session() as session:
            session.add(record)
            session.commit()
            return record

    def _get(self, model: type[Record], record_id: str) -> Record:
        with self._session() as session:
            record = session.get(model, record_id)
        if record is None:
            raise NotFound(
                f"no {model.__name__.removesuffix('Record').lower()} with id {record_id!r}"
            )
        return record

    def _update(self, model: type[Record], record_id: str, changes: dict[str, Any]) -> Record:
        """Change fields of a record that has an `updated_at`, which is set to now."""
        with self._session() as session:
            record = session.get(model, record_id)
            if record is None:
                raise NotFound(
                    f"no {model.__name__.removesuffix('Record').lower()} with id {record_id!r}"
                )
            for name, value in {**changes, "updated_at": utc_now()}.items():
                setattr(record, name, value)
            session.add(record)
            session.commit()
            return record

    def _append_numbered(
        self, build: Callable[[Session], list[Record]], keys: set[str]
    ) -> list[Record]:
        """Add the records `build` makes (numbered with `self._store.numbers`) in one transaction,
        retrying with fresh numbers if another writer used them first.

        The last number used is remembered per session, so a single writer (the usual case) does
        not query for it; the unique constraints catch a writer in another process.
        """
        for _ in range(SEQUENCE_RETRIES):
            with self._store.write_lock, self._session() as session:
                try:
                    records = build(session)
                    session.commit()
                except IntegrityError:
                    session.rollback()
                    self._store.numbers.forget(keys)
                    continue
                except BaseException:
                    self._store.numbers.forget(keys)
                    raise
                return records
        raise RuntimeError(f"could not number records of {sorted(keys)} after retries")


class SequenceNumbers:
    """The last sequence number used per (table, session), read from the database when unknown."""

    def __init__(self) -> None:
        self._last: dict[tuple[str, str], int] = {}

    def next(self, session: Session, model: type[Any], key: str) -> int:
        slot = (model.__tablename__, key)
        if slot not in self._last:
            query = select(sa.func.max(model.seq)).where(model.session_id == key)
            self._last[slot] = int(session.exec(query).one() or 0)
        self._last[slot] += 1
        return self._last[slot]

    def forget(self, keys: set[str]) -> None:
        for slot in [slot for slot in self._last if slot[1] in keys]:
            del self._last[slot]


RUNNING = "running:"  # the status of a session whose turn a process is running


class SessionRepository(_Repository):
    def create(
        self,
        agent_path: str,
        agent_name: str = "",
        title: str = "",
        settings_overrides: dict[str, Any] | None = None,
    ) -> SessionRecord:
        return self._add(
            SessionRecord(
                agent_path=agent_path,
                agent_name=agent_name,
                title=title,
                settings_overrides=settings_overrides or {},
            )
        )

    def get(self, session_id: str) -> SessionRecord:
        return self._get(SessionRecord, session_id)

    def list(self, limit: int = 100) -> Sequence[SessionRecord]:
        with self._session() as session:
            query = select(SessionRecord).order_by(col(SessionRecord.updated_at).desc())
            return session.exec(query.limit(limit)).all()

    def update(self, session_id: str, **changes: Any) -> SessionRecord:
        return self._update(SessionRecord, session_id, changes)

    # A turn in progress: the session's status names the process running it ("running:ID"),
    # and its updated_at is that process's last heartbeat. A turn whose heartbeat is older than
    # `stale_after_s` belongs to a process that stopped; anyone may take it over.

    def claim_turn(
        self, session_id: str, runner: str, stale_after_s: float, stopped: str | None = None
    ) -> str | None:
        """Mark the session as running a turn in `runner` (taking it over from `stopped`, a
        runner known to have stopped); of several processes racing, one wins. None if claimed,
        else the runner that holds it."""
        now = utc_now()
        mine = RUNNING + runner
        taken_over = RUNNING + (stopped or runner)
        with self._session() as session:
            result = session.execute(
                sa.update(SessionRecord)
                .where(col(SessionRecord.id) == session_id)
                .where(
                    sa.or_(
                        ~col(SessionRecord.status).startswith(RUNNING),
                        col(SessionRecord.status).in_((mine, taken_over)),
                        col(SessionRecord.updated_at) < now - timedelta(seconds=stale_after_s),
                    )
                )
                .values(status=mine, updated_at=now)
            )
            session.commit()
        if result.rowcount:  # type: ignore[attr-defined]
            return None
        return self.runner_of(self.get(session_id), stale_after_s) or "another process"

    def heartbeat(self, session_id: str, runner: str) -> None:
        """The runner is still at work on the session's turn."""
        self._set_if_running(session_id, runner, {"updated_at": utc_now()})

    def release_turn(self, session_id: str, runner: str) -> None:
        """The runner's turn has ended (a turn taken over by another process stays theirs)."""
        self._set_if_running(session_id, runner, {"status": "active", "updated_at": utc_now()})

    def runner_of(self, record: SessionRecord, stale_after_s: float) -> str | None:
        """The process running the session's turn now, if its heartbeat is fresh."""
        if not record.status.startswith(RUNNING):
            return None
        if record.updated_at < utc_now() - timedelta(seconds=stale_after_s):
            return None
        return record.status.removeprefix(RUNNING)

    def _set_if_running(self, session_id: str, runner: str, values: dict[str, Any]) -> None:
        with self._session() as session:
            session.execute(
                sa.update(SessionRecord)
                .where(col(SessionRecord.id) == session_id)
                .where(col(SessionRecord.status) == RUNNING + runner)
                .values(**values)
            )
            session.commit()


class MessageRepository(_Repository):
    def add(
        self, session_id: str, role: str, content: str, data: dict[str, Any] | None = None
    ) -> MessageRecord:
        def build(session: Session) -> list[MessageRecord]:
            seq = self._store.numbers.next(session, MessageRecord, session_id)
            record = MessageRecord(
                session_id=session_id, seq=seq, role=role, content=content, data=data or {}
            )
            session.add(record)
            return [record]

        return self._append_numbered(build, {session_id})[0]

    def list(self, session_id: str) -> Sequence[MessageRecord]:
        with self._session() as session:
            query = select(MessageRecord).where(MessageRecord.session_id == session_id)
            return session.exec(query.order_by(col(MessageRecord.seq))).all()

    def first_user_messages(self, session_ids: Collection[str]) -> dict[str, str]:
        """The first user message of each session that has one, in one query (for titles)."""
        if not session_ids:
            return {}
        first = (
            select(MessageRecord.session_id, sa.func.min(MessageRecord.seq).label("seq"))
            .where(MessageRecord.role == "user", col(MessageRecord.session_id).in_(session_ids))
            .group_by(col(MessageRecord.session_id))
            .subquery()
        )
        query = select(MessageRecord.session_id, MessageRecord.content).join(
            first,
            sa.and_(
                col(MessageRecord.session_id) == first.c.session_id,
                col(MessageRecord.seq) == first.c.seq,
            ),
        )
        with self._session() as session:
            return {session_id: content for session_id, content in session.exec(query).all()}

    def sessions_mentioning(self, words: Sequence[str], session_ids: Collection[str]) -> set[str]:
        """The sessions among `session_ids` where every word appears (any case) in something
        the user or the agent wrote, in one query (for the session search)."""
        if not words or not session_ids:
            return set()
        content = col(MessageRecord.content)
        mentions = [
            sa.func.max(sa.case((content.icontains(word, autoescape=True), 1), else_=0)) == 1
            for word in words
        ]
        query = (
            select(MessageRecord.session_id)
            .where(col(MessageRecord.session_id).in_(session_ids))
            .where(col(MessageRecord.role).in_(("user", "assistant")))
            .group_by(col(MessageRecord.session_id))
            .having(sa.and_(*mentions))
        )
        with self._session() as session:
            return set(session.exec(query).all())


@dataclass(frozen=True)
class NewEvent:
    """An event to append: its session, kind and payload, and the message it adds, if any."""

    session_id: str
    kind: str
    payload: dict[str, Any]
    message: MessageRecord | None = None


class EventLog(_Repository):
    """The append-only log of everything that happened, numbered per session."""

    def __init__(self, store: Store) -> None:
        super().__init__(store)
        self.hooks: list[AppendHook] = []

    def add_hook(self, hook: AppendHook) -> None:
        """Run `hook` in every later append's transaction (once, however often it is added)."""
        if hook not in self.hooks:
            self.hooks.append(hook)

    def append(
        self,
        session_id: str,
        kind: str,
        payload: dict[str, Any],
        message: MessageRecord | None = None,
    ) -> EventRecord:
        """Append an event; a `message` given with it is stored in the same transaction."""
        return self.append_many([NewEvent(session_id, kind, payload, message)])[0]

    def append_many(
        self, events: Sequence[NewEvent], also: Sequence[SQLModel | Row] = ()
    ) -> list[EventRecord]:
        """Append several events, in order, in one transaction (a group commit), with `also`
        (records that go with them, a decision's trace say) added in the same transaction."""

        def build(session: Session) -> list[EventRecord]:
            _insert(session, also)
            rows: list[dict[str, Any]] = []
            messages: list[MessageRecord] = []
            for event in events:
                seq = self._store.numbers.next(session, EventRecord, event.session_id)
                rows.append(
                    {
                        "session_id": event.session_id,
                        "seq": seq,
                        "kind": event.kind,
                        "time": utc_now(),
                        "payload": event.payload,
                    }
                )
                if event.message is not None:
                    message = event.message
                    message.seq = self._store.numbers.next(
                        session, MessageRecord, message.session_id
                    )
                    messages.append(message)
            if rows:  # an empty list would run the INSERT once, with no values
                session.execute(_ADD_EVENT, rows)
            _insert(session, messages)
            # the records as stored (their ids are not read back): made without the ORM's
            # bookkeeping, which cost more than the inserts
            records = [EventRecord.model_construct(**row) for row in rows]
            for hook in self.hooks:
                hook(session, records)
            return records

        return self._append_numbered(build, {event.session_id for event in events})

    def list(
        self, session_id: str, after_seq: int = 0, kinds: Sequence[str] = ()
    ) -> Sequence[EventRecord]:
        with self._session() as session:
            query = select(EventRecord).where(
                EventRecord.session_id == session_id, EventRecord.seq > after_seq
            )
            if kinds:
                query = query.where(col(EventRecord.kind).in_(kinds))
            return session.exec(query.order_by(col(EventRecord.seq))).all()

    def last_seq(self, session_id: str) -> int:
        with self._session() as session:
            query = select(sa.func.max(EventRecord.seq)).where(EventRecord.session_id == session_id)
            return int(session.exec(query).one() or 0)


class ApprovalRepository(_Repository):
    """The approvals. A call waiting for a person, the approvals API and the inbox go through
    these methods, so they use SQLAlchemy Core: the ORM's unit of work and identity map cost
    several times what the statements do."""

    def create(self, approval: ApprovalRecord) -> ApprovalRecord:
        with self._session() as session:
            session.execute(sa.insert(_APPROVALS), approval.model_dump())
            self._store.approval_changes.commit(session)
        return approval

    def get(self, approval_id: str) -> ApprovalRecord:
        with self._session() as session:
            approval = _find_approval(session, approval_id)
        if approval is None:
            raise NotFound(f"no approval with id {approval_id!r}")
        return approval

    def ids_starting(self, prefix: str, limit: int = 2) -> list[str]:
        """The ids of up to `limit` approvals whose id starts with `prefix` (agent-mesh's
        clients name an approval by a prefix of its id)."""
        query = sa.select(_APPROVALS.c.id).where(
            _APPROVALS.c.id.startswith(prefix, autoescape=True)
        )
        with self._session() as session:
            return list(session.execute(query.limit(limit)).scalars())

    def list(
        self, status: str | None = None, tool_glob: str | None = None, limit: int | None = None
    ) -> list[ApprovalRecord]:
        """Approvals, newest first; `tool_glob` filters like the agent-mesh API (`fs.*`)."""
        query = sa.select(_APPROVALS).order_by(_APPROVALS.c.created_at.desc())
        if status:
            query = query.where(_APPROVALS.c.status == status)
        with self._session() as session:
            rows = session.execute(query.limit(limit) if limit else query).all()
        records = [_approval(row) for row in rows]
        if tool_glob:
            return [r for r in records if fnmatch.fnmatchcase(r.tool, tool_glob)]
        return records

    def pending_ids(self) -> set[str]:
        """The ids of every pending approval: a cheap question (the status index answers it)
        that tells a poller what arrived and what was resolved since it last asked."""
        with self._session() as session:
            query = select(ApprovalRecord.id).where(ApprovalRecord.status == "pending")
            return set(session.exec(query).all())

    def count(self) -> int:
        with self._session() as session:
            return int(session.exec(select(sa.func.count()).select_from(ApprovalRecord)).one())

    def many(self, approval_ids: Collection[str]) -> Sequence[ApprovalRecord]:
        """The approvals with these ids (unknown ids are skipped), in no particular order."""
        wanted = sorted(approval_ids)
        chunks = [wanted[start : start + 500] for start in range(0, len(wanted), 500)]
        with self._session() as session:  # 500 ids a query: well under any bound-parameter limit
            return [
                record
                for chunk in chunks
                for record in session.exec(
                    select(ApprovalRecord).where(col(ApprovalRecord.id).in_(chunk))
                ).all()
            ]

    def resolve(
        self,
        approval_id: str,
        status: str,
        resolved_by: str,
        reasoning: str | None = None,
        confidence: float | None = None,
        params: dict[str, Any] | None = None,
        trace: Callable[[ApprovalRecord], Row] | None = None,
        committed: Callable[[ApprovalRecord], None] | None = None,
    ) -> ApprovalRecord:
        """Resolve a pending approval; exactly one of several racing resolvers succeeds.

        `params`, when given, replaces the call's parameters (edit, then approve; `edited` says
        whether they differ); what `trace` makes of the resolved approval is added in the same
        transaction; `committed` is given the resolved approval once committed, before the
        store's subscribers are told.
        """
        values: dict[str, Any] = {
            "approval_id": approval_id,
            "status": status,
            "resolved_by": resolved_by,
            "reasoning": reasoning,
            "confidence": confidence,
            "resolved_at": utc_now(),
        }
        with self._session() as session:
            if params is not None:
                values["params"] = params
                values["edited"] = params != _asked_params(session, approval_id)
            row = session.execute(_RESOLVE, values).first()
            if row is None:
                raise self._unresolvable(session, approval_id)
            approval = _approval(row)
            if trace is not None:
                session.execute(_ADD_TRACE, trace(approval).values)
            self._store.approval_changes.commit(
                session, committed and functools.partial(committed, approval)
            )
        return approval

    def keep_shadow_verdict(self, approval_id: str, verdict: dict[str, Any]) -> None:
        """Keep the verdict the L1 supervisor gave unseen on this approval (shadow mode),
        whether or not a person has decided it yet."""
        with self._session() as session:
            session.execute(_KEEP_SHADOW, {"approval_id": approval_id, "verdict": verdict})
            session.commit()

    @staticmethod
    def _unresolvable(session: Session, approval_id: str) -> Exception:
        """Why an approval could not be resolved: it does not exist, or someone came first."""
        approval = _find_approval(session, approval_id)
        if approval is None:
            return NotFound(f"no approval with id {approval_id!r}")
        return AlreadyResolved(approval)


def _insert(session: Session, records: Sequence[SQLModel | Row]) -> None:
    """Insert records with SQLAlchemy Core, in order: each run of rows of one table with the
    same columns in one statement."""
    rows = [record if isinstance(record, Row) else Row.of(record) for record in records]
    for (table, _), run in itertools.groupby(rows, key=_table_and_columns):
        session.execute(sa.insert(table), [row.values for row in run])


def _table_and_columns(row: Row) -> tuple[sa.Table, frozenset[str]]:
    return row.table, frozenset(row.values)


def _approval(row: sa.Row[Any]) -> ApprovalRecord:
    # as the ORM loads a record: what the store holds is taken, not validated again (a row a
    # newer Foundry wrote must not break the inbox)
    return ApprovalRecord(**row._mapping)


def _asked_params(session: Session, approval_id: str) -> Any:
    """The parameters a pending approval's call asked for (None: no such pending approval)."""
    return session.execute(_ASKED_PARAMS, {"approval_id": approval_id}).scalar()


def _find_approval(session: Session, approval_id: str) -> ApprovalRecord | None:
    row = session.execute(_APPROVAL_BY_ID, {"approval_id": approval_id}).first()
    return None if row is None else _approval(row)


class GrantRepository(_Repository):
    def add(
        self,
        tool_glob: str,
        expires_at: datetime,
        granted_by: str,
        agent_glob: str = "*",
        param_scope: list[dict[str, Any]] | None = None,
        path_scope: str | None = None,
        agent_path: str | None = None,
    ) -> GrantRecord:
        """A grant; `param_scope` (policy conditions, all of which must hold) and `path_scope`
        (a folder every path of a covered call must lie in; relative: to the workspace) narrow
        it, and `agent_path` binds it to one agent file (see GrantRecord). However wide, a grant
        never covers a path outside the workspace."""
        return self._add(
            GrantRecord(
                agent_glob=agent_glob,
                agent_path=agent_path,
                tool_glob=tool_glob,
                param_scope=param_scope,
                path_scope=path_scope,
                expires_at=expires_at,
                granted_by=granted_by,
            )
        )

    def active(self, now: datetime | None = None) -> list[GrantRecord]:
        """The grants neither revoked nor expired, soonest to expire first (asked before every
        call the rules leave to a person: in SQLAlchemy Core)."""
        with self._session() as session:
            rows = session.execute(_ACTIVE_GRANTS, {"now": now or utc_now()}).all()
        return [GrantRecord(**row._mapping) for row in rows]

    def matching(
        self,
        agent_id: str,
        tool: str,
        now: datetime | None = None,
        agent_path: str | None = None,
    ) -> GrantRecord | None:
        """The first active grant that covers the agent `agent_id` (of the file `agent_path`)
        calling `tool`, if any."""
        return next(iter(self.covering(agent_id, tool, now, agent_path)), None)

    def covering(
        self,
        agent_id: str,
        tool: str,
        now: datetime | None = None,
        agent_path: str | None = None,
    ) -> list[GrantRecord]:
        """Every active grant that covers the agent `agent_id`, whose file is `agent_path`
        (None: unknown, so no grant bound to a file covers it), calling `tool` (scopes not
        checked)."""
        return [
            grant
            for grant in self.active(now)
            if grant.covers_agent(agent_id, agent_path)
            and fnmatch.fnmatchcase(tool, grant.tool_glob)
        ]

    def revoke(self, grant_id: str) -> GrantRecord:
        with self._session() as session:
            grant = session.get(GrantRecord, grant_id)
            if grant is None:
                raise NotFound(f"no grant with id {grant_id!r}")
            grant.revoked_at = utc_now()
            session.add(grant)
            session.commit()
            return grant


class TraceRepository(_Repository):
    def add(self, trace: TraceRecord) -> TraceRecord:
        return self._add(trace)

    def list(
        self, agent_id: str | None = None, limit: int = 100, tool: str | None = None
    ) -> Sequence[TraceRecord]:
        with self._session() as session:
            query = select(TraceRecord)
            if agent_id:
                query = query.where(TraceRecord.agent_id == agent_id)
            if tool:
                query = query.where(TraceRecord.tool == tool)
            query = query.order_by(col(TraceRecord.created_at).desc()).limit(limit)
            return session.exec(query).all()


class TaskRepository(_Repository):
    def create(self, name: str, task_file: str, workspace: str) -> TaskRecord:
        return self._add(TaskRecord(name=name, task_file=task_file, workspace=workspace))

    def get(self, task_id: str) -> TaskRecord:
        return self._get(TaskRecord, task_id)

    def list(self, limit: int = 100) -> Sequence[TaskRecord]:
        with self._session() as session:
            query = select(TaskRecord).order_by(col(TaskRecord.created_at).desc())
            return session.exec(query.limit(limit)).all()

    def latest(self, task_file: str) -> TaskRecord | None:
        """The most recent run of a task file."""
        with self._session() as session:
            query = select(TaskRecord).where(TaskRecord.task_file == task_file)
            return session.exec(query.order_by(col(TaskRecord.created_at).desc())).first()

    def update(self, task_id: str, **changes: Any) -> TaskRecord:
        return self._update(TaskRecord, task_id, changes)


class Store:
    """Foundry's persistence; open it with `Store.open()`, which also migrates the schema."""

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine
        self.write_lock = threading.Lock()
        self.numbers = SequenceNumbers()
        self.sessions = SessionRepository(self)
        self.messages = MessageRepository(self)
        self.events = EventLog(self)
        self.approvals = ApprovalRepository(self)
        self.grants = GrantRepository(self)
        self.traces = TraceRepository(self)
        self.tasks = TaskRepository(self)
        self.approval_changes = ApprovalChanges(engine)

    @classmethod
    def open(cls, url: str | None = None, home: FoundryHome | None = None) -> Store:
        engine = create_database_engine(normalise_url(url) if url else database_url(home))
        try:
            migrate(engine)
        except sa.exc.DatabaseError as error:  # unreachable, or a file that is no database
            engine.dispose()
            where = engine.url.render_as_string(hide_password=True)
            reason = str(error.orig).strip().splitlines()[0] if error.orig else str(error)
            raise StoreError(f"cannot open the store at {where}: {reason}") from None
        return cls(engine)

    @property
    def url(self) -> str:
        return self.engine.url.render_as_string(hide_password=True)

    def close(self) -> None:
        self.approval_changes.close()
        self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
