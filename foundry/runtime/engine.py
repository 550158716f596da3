"""The engine: its own asyncio loop on a background thread, owning sessions and the event log.

Callers on other threads (the GUI, the CLI) use `submit()` to run a coroutine on the engine's
loop; an event is written to the store on the engine's writer thread before the bus sees it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import threading
import weakref
from collections.abc import Coroutine
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from foundry.agent.document import AgentDocument, load_agent
from foundry.agent.models import Agent, PolicyConfig
from foundry.agent.problems import AgentError
from foundry.agent.trust import TrustCheck, TrustStore, trust_key
from foundry.llm.base import ModelProvider, ToolCall
from foundry.llm.priority import as_chat
from foundry.llm.registry import ModelChoice, open_provider
from foundry.metrics.stored import keep_aggregates
from foundry.orchestration.journal import StepJournal
from foundry.orchestration.runner import TaskOutcome, TaskRunner
from foundry.orchestration.taskfile import load_task
from foundry.orchestration.tools import IN_PROCESS_KINDS, CombinedTools
from foundry.runtime.agent_changes import (
    Stamp,
    agent_stamp,
    applied,
    in_force,
    waiting_for_restart,
    with_guardians,
)
from foundry.runtime.approvals import Approvals
from foundry.runtime.bus import EventBus
from foundry.runtime.concerns import SessionPlace, session_concerns
from foundry.runtime.held_provider import HeldProvider
from foundry.runtime.journal import EventJournal
from foundry.runtime.policy_records import PolicyRecords
from foundry.runtime.questions import QuestionsAsked
from foundry.runtime.results import SessionResults, agent_guardian, session_results
from foundry.runtime.runners import new_runner, runner_stopped
from foundry.runtime.sessions import StoredSessions
from foundry.session.chain import HumanReview, ReviewTimes, SupervisionChain
from foundry.session.chat import RETRY_DELAYS_S, ChatSession, TurnResult
from foundry.session.events import (
    AgentApplied,
    AgentSave,
    ErrorOccurred,
    Event,
    EventBody,
    SessionRestarted,
    SessionStarted,
    ToolServerChanged,
    event_body,
)
from foundry.session.gate import ApprovalGate, AskUser, GateDecision, PermissionGate
from foundry.session.supervisors import Direction
from foundry.store import Store
from foundry.supervision.concern_gate import ConcernGate
from foundry.supervision.factory import message_supervisors
from foundry.supervision.hierarchy import SupervisedGate, policy_entry_config
from foundry.supervision.inbox import HumanInbox
from foundry.supervision.l1 import open_l1_supervisor
from foundry.supervision.paths import ServerSite, server_folders
from foundry.supervision.policy import offered_definition
from foundry.supervision.results import guarding_results
from foundry.supervision.shadow import ShadowReviews
from foundry.supervision.tool_definitions import observe_on
from foundry.supervision.tracing import KeepTrace, TracedGate
from foundry.telemetry.live import LiveExport, live_export

if TYPE_CHECKING:
    from foundry.runtime.tool_session import ToolSession

T = TypeVar("T")
NOT_TRUSTED = (
    "held: its command or connection is not trusted yet (Trust and start, or `foundry trust`)"
)
TURN_HEARTBEAT_S = 5.0  # how often a running turn says so in the store
TURN_STALE_S = 30.0  # a turn not heard of for this long belongs to a process that stopped
FOLLOW_POLL_S = 0.25  # how often a turn running in another process is read from the store
AGENT_LOOK_S = 1.0  # how often the files of the open sessions' agents are looked at


def _chat_caller(session_id: str) -> str:
    """Whose a chat's model calls are, as the model's queue names them."""
    return f"chat {session_id}"


class SessionNotFound(LookupError):
    pass


class SessionRunningElsewhere(RuntimeError):
    """Another process (a `foundry run`, another app) is running a turn of this session."""


class TaskNotFound(LookupError):
    pass


@dataclass
class _Live:
    """A session the engine has open: the chat, its model provider and its tools."""

    chat: ChatSession
    provider: ModelProvider
    tools: Any
    document: AgentDocument  # the agent as the session runs it (see agent_changes.py)
    host: Any  # the ToolHost of the agent's MCP servers (`tools` may add a task's own)
    gate_place: _GatePlace
    turn: asyncio.Task[TurnResult] | None = None
    pending: tuple[str, ...] = ()  # what of the saved agent waits for a restart


@dataclass
class _Gateway:
    """A gateway's session (no chat): the agent as it decides its calls, to apply a save."""

    session: weakref.ref[ToolSession]
    document: AgentDocument
    identity: str


@dataclass(frozen=True)
class _Restart:
    """What opens again a session a restart closed: its agent, its gate's place, and the
    model it chose for itself (None: its agent's)."""

    agent_path: Path
    place: _GatePlace
    own_model: str | None


@dataclass(frozen=True)
class _GatePlace:
    """What a session's approval gate is built from besides its agent: to build it again when
    the agent's policy is saved."""

    identity: str
    ask: AskUser | None
    project_root: Path
    extra_tools: Any
    results: SessionResults


class Engine:
    """Start with `Engine(store).start()`; stop with `stop()` (or use it as a context manager)."""

    def __init__(
        self,
        store: Store | None = None,
        retry_delays_s: tuple[float, ...] = RETRY_DELAYS_S,
        trust: TrustStore | None = None,
    ) -> None:
        self._store = store
        self._owns_store = store is None  # opened by start(), so closed by stop()
        self.trust = trust or TrustStore.default()
        self._retry_delays_s = retry_delays_s
        self.bus = EventBus()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run_loop, name="foundry-engine", daemon=True)
        self._writer = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="foundry-store")
        self._sessions: dict[str, _Live] = {}
        self._background: set[asyncio.Task[Any]] = set()
        self._journal: EventJournal | None = None
        self._task_runs: dict[str, asyncio.Task[TaskOutcome]] = {}
        self._review_times = ReviewTimes()  # which context supervisors are worth waiting for
        self._failed_restarts: dict[str, _Restart] = {}  # closed by a restart, not open again
        self._agent_watch: asyncio.Task[None] | None = None  # see `_follow_agent_files`
        self._applying = asyncio.Lock()  # one save applied at a time (the editor's, the watch's)
        self._gateways: dict[str, _Gateway] = {}  # the gateway's sessions, while they live
        self._shadows: dict[str, ShadowReviews] = {}  # each session's shadow reviews (shadow.py)
        self.runner = new_runner()  # this engine, as the store names a turn's runner
        self._telemetry: LiveExport | None = None

    # -- lifecycle ------------------------------------------------------------------------------

    def _run_loop(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_forever()
        finally:  # a stopped engine holds no threads or descriptors (a test suite starts many)
            self._loop.run_until_complete(self._loop.shutdown_asyncgens())
            self._loop.run_until_complete(self._loop.shutdown_default_executor())
            self._loop.close()

    def start(self) -> Engine:
        self._thread.start()
        if self._store is None:
            self._store = self.submit(self._in_writer(Store.open)).result()
        keep_aggregates(self._store)  # the dashboards' figures, in each append's transaction
        self._journal = EventJournal(self._store, self.bus, self._loop, self._writer)
        self._telemetry = live_export(self._store, self.bus.subscribe)  # OTEL_EXPORTER_OTLP_*
        return self

    @property
    def store(self) -> Store:
        assert self._store is not None, "the engine is not started"
        return self._store

    @property
    def approvals(self) -> Approvals:
        """The approvals of every session sharing the store: read, followed, decided."""
        return Approvals(self.store)

    @property
    def stored_sessions(self) -> StoredSessions:
        """The sessions in the store (every Foundry's), to list and reopen."""
        return StoredSessions(self.store)

    @property
    def policy_records(self) -> PolicyRecords:
        """What agents' sessions recorded, to try an edited policy against."""
        return PolicyRecords(self.store)

    @property
    def questions(self) -> QuestionsAsked:
        """The questions agents' calls asked a person, and rules that would settle the needless."""
        return QuestionsAsked(self.store)

    def stop(self, timeout_s: float = 10.0) -> None:
        if not self._thread.is_alive():
            return
        self.submit(self._close_all()).result(timeout_s)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout_s)
        self._writer.shutdown(wait=True)
        if self._telemetry is not None:
            self._telemetry.close()  # its last spans sent
        if self._owns_store and self._store is not None:
            self._store.close()

    def __enter__(self) -> Engine:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def submit(self, coroutine: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Run `coroutine` on the engine's loop from any thread."""
        if self._loop.is_closed():  # said in the future, where waiting would never end
            coroutine.close()  # never to run: no "never awaited" warning
            refused: concurrent.futures.Future[T] = concurrent.futures.Future()
            refused.set_exception(RuntimeError("The engine has stopped: its loop is closed."))
            return refused
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop)

    async def _in_writer(self, function: Any, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._writer, function, *args)

    async def _close_all(self) -> None:
        if self._agent_watch is not None:
            self._agent_watch.cancel()
            await asyncio.gather(self._agent_watch, return_exceptions=True)
        for task_id in list(self._task_runs):
            await self.cancel_task(task_id)
        for session_id in list(self._sessions):
            await self.close_session(session_id)
        for shadows in list(self._shadows.values()):  # the gateway's sessions'
            await shadows.aclose()
        if self._journal is not None:
            await self._journal.drain()

    # -- events ---------------------------------------------------------------------------------

    async def record(self, session_id: str, body: EventBody) -> Event:
        """Persist an event, then publish it; returns it with its number and time."""
        return await self._emit(session_id, body)

    def _emit(self, session_id: str, body: EventBody) -> asyncio.Future[Event]:
        assert self._journal is not None, "the engine is not started"
        return self._journal.record(session_id, body)

    async def events(self, session_id: str, after_seq: int = 0) -> list[Event]:
        records = await self._in_writer(self.store.events.list, session_id, after_seq)
        return [
            Event(
                session_id=r.session_id, seq=r.seq, time=r.time, body=event_body(r.kind, r.payload)
            )
            for r in records
        ]

    # -- sessions -------------------------------------------------------------------------------

    async def open_session(
        self,
        agent_path: Path,
        model: str | None = None,
        settings_overrides: dict[str, Any] | None = None,
        ask: AskUser | None = None,
        title: str = "",
        extra_tools: Any = None,
        project_root: Path | None = None,
        hold_untrusted: bool = False,
    ) -> str:
        """Start a new session with the agent at `agent_path`; returns its id. A task gives its
        agents `extra_tools` (its workspace, a team) and its workspace as `project_root`.

        An agent whose commands are not trusted raises UntrustedAgent before anything starts,
        unless `hold_untrusted`: then its untrusted servers stay stopped until
        `start_held_servers`."""
        document = await self._in_writer(load_agent, Path(agent_path))
        assert document.agent is not None
        if not hold_untrusted:
            await self._in_writer(self.trust.require, document)
        choice = ModelChoice.parse(model or document.agent.settings.model_reference)
        record = await self._in_writer(
            self.store.sessions.create,
            str(document.path),
            document.agent.metadata.name,
            title,
            settings_overrides or {},
        )
        await self.record(
            record.id,
            SessionStarted(
                agent_path=str(document.path.resolve()),
                agent_name=document.agent.metadata.name,
                model=str(choice),
                settings_overrides=settings_overrides or {},
            ),
        )
        live = await self._start(
            record.id, document, choice, settings_overrides or {}, ask, extra_tools, project_root
        )
        self._sessions[record.id] = live
        return record.id

    async def open_tool_session(
        self, agent_path: Path, title: str, host: Any = None
    ) -> ToolSession:
        """A session without a model, for the MCP gateway: the agent's trusted MCP servers
        behind its approval gate, every call and decision recorded as a chat's are. Sessions
        of one gateway may share the `host` of the first (it stays the first one's to close)."""
        from foundry.runtime.tool_session import ToolSession

        document = await self._in_writer(load_agent, Path(agent_path))
        assert document.agent is not None
        await self._in_writer(self.trust.require, document)
        name = document.agent.metadata.name
        session_id = await self._open_record(document, title, "gateway")
        owns_host = host is None
        if owns_host:
            host = await self._start_tools(session_id, document)
        assert self._journal is not None, "the engine is not started"
        guardian = agent_guardian(document)
        results = await asyncio.to_thread(
            session_results, document, host, guarding_results(guardian, "response")
        )
        # decided before each call is forwarded; the call and its trace are recorded off its
        # path, gathered with the session's next events (the inbox's events are written at once)
        gate = await self._gate(
            session_id,
            document,
            await self._in_writer(trust_key, document.path),
            None,
            document.base_dir,
            keep_trace=self._journal.keep,
            tools=host,
            results=results,
        )
        emit = functools.partial(self._journal.record_later, session_id)
        tool_session = ToolSession(
            session_id,
            host,
            gate,
            emit,
            owns_host=owns_host,
            guardian=guardian,
            results=results,
            agent_id=name,
            keep_trace=self._journal.keep,
        )
        identity = await self._in_writer(trust_key, document.path)
        self._gateways[session_id] = _Gateway(weakref.ref(tool_session), document, identity)
        self._watch_agent_files()
        return tool_session

    async def open_try_session(self, document: AgentDocument, title: str) -> str:
        """A stored session without a model for the calls a person tries by hand on
        `document`'s agent (the editor's Try-it: runtime/tool_servers.py); returns its id."""
        return await self._open_record(document, title, "editor")

    async def _open_record(self, document: AgentDocument, title: str, model: str) -> str:
        """A new stored session of `document`'s agent with no model of its own (`model` says
        what drives it), started; its id."""
        assert document.agent is not None
        name = document.agent.metadata.name
        record = await self._in_writer(
            self.store.sessions.create, str(document.path), name, title, {}
        )
        started = SessionStarted(
            agent_path=str(document.path.resolve()), agent_name=name, model=model
        )
        await self.record(record.id, started)
        return record.id

    async def tool_gate(
        self,
        session_id: str,
        document: AgentDocument,
        tools: Any,
        results: SessionResults | None = None,
    ) -> ApprovalGate:
        """The approval gate a chat of `document`'s agent has, for calls of `tools` recorded in
        the session `session_id`: a call that needs a person waits in the inbox (no one at a
        terminal is asked); each decision is traced before it returns. The session's `results`
        hold what sends data out once it has read untrusted content, as a chat's do."""
        identity = await self._in_writer(trust_key, document.path)
        return await self._gate(
            session_id, document, identity, None, document.base_dir, tools=tools, results=results
        )

    async def reopen_session(
        self,
        session_id: str,
        ask: AskUser | None = None,
        history: list[Event] | None = None,
        extra_tools: Any = None,
        project_root: Path | None = None,
        hold_untrusted: bool = False,
        model: str | None = None,
    ) -> ChatSession:
        """Open a persisted session where it was, rebuilt from its events (`history`, when the
        caller has already read them), on `model` if given; untrusted commands as in
        `open_session`."""
        if session_id in self._sessions:
            return self._sessions[session_id].chat
        if history is None:
            history = await self.events(session_id)
        started = next((e.body for e in history if isinstance(e.body, SessionStarted)), None)
        if started is None:
            raise SessionNotFound(f"no session with id {session_id!r}")
        document = await self._in_writer(load_agent, Path(started.agent_path))
        if not hold_untrusted:
            await self._in_writer(self.trust.require, document)
        restarts = [e.body.model for e in history if isinstance(e.body, SessionRestarted)]
        choice = ModelChoice.parse(model or (restarts[-1] if restarts else started.model))
        live = await self._start(
            session_id, document, choice, started.settings_overrides, ask, extra_tools, project_root
        )
        live.chat.replay(event.body for event in history)
        self._sessions[session_id] = live
        return live.chat

    async def _start(
        self,
        session_id: str,
        document: AgentDocument,
        choice: ModelChoice,
        overrides: dict[str, Any],
        ask: AskUser | None,
        extra_tools: Any = None,
        project_root: Path | None = None,
    ) -> _Live:
        agent = document.agent
        assert agent is not None
        check = await self._in_writer(self.trust.check, document)
        provider = self._open_provider(document, choice, check)
        host, supervisors = await asyncio.gather(
            self._start_tools(session_id, document, project_root or document.base_dir),
            message_supervisors(agent, document.base_dir, held=check.untrusted_supervisors),
        )
        tools = host if extra_tools is None else CombinedTools(host, extra_tools)
        identity = await self._in_writer(trust_key, document.path)
        review = self._human_review(session_id, agent, identity, ask)
        chain = SupervisionChain(supervisors, review, self._review_times)
        results = await asyncio.to_thread(session_results, document, tools)
        place = _GatePlace(identity, ask, project_root or document.base_dir, extra_tools, results)
        chat = ChatSession(
            session_id,
            agent,
            choice,
            provider,
            await self._gate_of(session_id, document, tools, place),
            lambda body: self._emit(session_id, body),
            tools=tools,
            settings_overrides=overrides,
            retry_delays_s=self._retry_delays_s,
            chain=chain,
            results=results,
        )
        self._watch_agent_files()
        return _Live(
            chat=chat,
            provider=provider,
            tools=tools,
            document=document,
            host=host,
            gate_place=place,
        )

    async def _gate_of(
        self, session_id: str, document: AgentDocument, tools: Any, place: _GatePlace
    ) -> ApprovalGate:
        """The approval gate of a chat of `document`'s agent (see `_gate`)."""
        return await self._gate(
            session_id,
            document,
            place.identity,
            place.ask,
            place.project_root,
            place.extra_tools,
            tools=tools,
            results=place.results,
        )

    # -- saved agents ---------------------------------------------------------------------------

    async def apply_saved_agent(self, agent_path: Path) -> list[str]:
        """The agent at `agent_path` was saved: each open session of it decides its next tool
        call by the saved policy and reviews its next message with the saved guardians; what
        else changed waits for `restart_session`. Each session is told in an `agent_applied`
        event. Returns the ids of the sessions of that agent."""
        async with self._applying:
            saved = await self._in_writer(load_agent, Path(agent_path))
            identity = await self._in_writer(trust_key, saved.path)
            touched = []
            for session_id, live in list(self._sessions.items()):
                if live.gate_place.identity == identity:
                    await self._apply_saved(session_id, live, saved)
                    touched.append(session_id)
            for session_id, gateway in list(self._gateways.items()):
                if gateway.identity == identity and await self._apply_to_gateway(
                    session_id, gateway, saved
                ):
                    touched.append(session_id)
            return touched

    async def _apply_to_gateway(
        self, session_id: str, gateway: _Gateway, saved: AgentDocument
    ) -> bool:
        """A gateway's session decides its next call by the saved policy and screens it with
        the saved guardian; its servers stay as they run. False if the session is gone."""
        tool_session = gateway.session()
        if tool_session is None:
            del self._gateways[session_id]
            return False
        running, wanted = gateway.document.agent, saved.agent
        assert running is not None and wanted is not None
        agent = in_force(running, wanted)
        document = replace(gateway.document, agent=agent)
        changed = applied(running, agent)
        if not changed:
            return True
        tool_session.gate = await self._gate(
            session_id,
            document,
            gateway.identity,
            None,
            document.base_dir,
            keep_trace=tool_session.keep_trace,
            tools=tool_session.host,
            results=tool_session.results,
        )
        tool_session.guardian = agent_guardian(document)
        gateway.document = document
        pending = waiting_for_restart(agent, wanted)
        body = AgentApplied(agent_path=str(saved.path), applied=changed, pending=pending)
        await self.record(session_id, body)
        return True

    def _watch_agent_files(self) -> None:
        """Start looking at the open sessions' agent files (see `_follow_agent_files`)."""
        if self._agent_watch is None or self._agent_watch.done():
            self._agent_watch = asyncio.create_task(self._follow_agent_files())

    async def _apply_saved(self, session_id: str, live: _Live, saved: AgentDocument) -> None:
        running, wanted = live.document.agent, saved.agent
        assert running is not None and wanted is not None
        agent = in_force(running, wanted)
        document = replace(live.document, agent=agent)
        changed = applied(running, agent)
        pending = waiting_for_restart(agent, wanted)
        if not changed and pending == live.pending:
            return
        if changed:
            gate = await self._gate_of(session_id, document, live.tools, live.gate_place)
            live.chat.use_gate(gate)
            live.chat.chain.supervisors = with_guardians(live.chat.chain.supervisors, agent)
        live.document, live.pending = document, pending
        body = AgentApplied(agent_path=str(saved.path), applied=changed, pending=pending)
        await self.record(session_id, body)

    async def _follow_agent_files(self) -> None:
        """An agent's files written by another program (a text editor, `foundry` in a
        terminal, another Foundry) are applied to its open sessions as a save in the editor
        is; files that do not load yet are left until they change again."""
        seen: dict[Path, Stamp] = {}
        while True:
            paths = {live.document.path for live in self._sessions.values()}
            paths.update(gateway.document.path for gateway in self._gateways.values())
            for path in paths:
                stamp = await asyncio.to_thread(agent_stamp, path)
                if seen.setdefault(path, stamp) != stamp:
                    seen[path] = stamp
                    await self._apply_if_it_loads(path)
            for gone in set(seen) - paths:
                del seen[gone]
            await asyncio.sleep(AGENT_LOOK_S)

    async def _apply_if_it_loads(self, path: Path) -> None:
        try:
            await self.apply_saved_agent(path)
        except AgentError:
            return  # half written, or broken: its sessions go on as they run

    async def undo_agent_save(self, session_id: str, seq: int) -> None:
        """Take back what the agent of an open session saved to its files (its event `seq`: a
        rule, a reference or a tool's include mode): the files and the session get it as it
        was. Not while a turn runs; raises UndoRefused, saying why, and leaves the files."""
        from foundry.runtime.internal_tools import UndoRefused, undo_save

        live = self._sessions.get(session_id)
        if live is None:
            raise SessionNotFound(f"session {session_id!r} is not open")
        if self.is_answering(session_id):
            raise UndoRefused("The chat is answering; undo once the reply is done.")
        events = await self.events(session_id, after_seq=seq - 1)
        saved = events[0].body if events and events[0].seq == seq else None
        if not isinstance(saved, AgentSave):
            raise UndoRefused("Only a change the agent saved to its files can be undone here.")
        if any(isinstance(e.body, AgentSave) and e.body.undoes == seq for e in events):
            raise UndoRefused("That change of the agent's was undone already.")
        await undo_save(live, saved, seq)

    async def restart_session(self, session_id: str) -> ChatSession:
        """Run the open session on its agent as saved now, its history kept: its servers,
        model and supervisors start again (held while their commands are not trusted, as
        `hold_untrusted`). The agent is read first: one that does not load raises AgentError
        and the session goes on as it was. Not while a turn runs. A session that could not
        open again (its new model would not open, say) is tried again by the next call."""
        restart = self._failed_restarts.pop(session_id, None)
        live = self._sessions.get(session_id)
        if live is not None:
            if self.is_answering(session_id):
                raise RuntimeError("the chat is answering; restart it once the reply is done")
            restart = _Restart(live.document.path, live.gate_place, self._own_model(live))
        if restart is None:
            raise SessionNotFound(f"session {session_id!r} is not open")
        try:
            saved = await self._in_writer(load_agent, restart.agent_path)
        except BaseException:
            if live is None:
                self._failed_restarts[session_id] = restart
            raise
        assert saved.agent is not None
        model = restart.own_model or str(ModelChoice.parse(saved.agent.settings.model_reference))
        await self.close_session(session_id)
        try:
            chat = await self.reopen_session(
                session_id,
                ask=restart.place.ask,
                extra_tools=restart.place.extra_tools,
                project_root=restart.place.project_root,
                hold_untrusted=True,
                model=model,
            )
        except BaseException:
            self._failed_restarts[session_id] = restart
            raise
        await self.record(session_id, SessionRestarted(model=model))
        return chat

    def _own_model(self, live: _Live) -> str | None:
        """The model the session chose for itself, if not the one its agent names."""
        agent = live.document.agent
        assert agent is not None
        default = ModelChoice.parse(agent.settings.model_reference)
        return None if live.chat.model == default else str(live.chat.model)

    def _open_provider(
        self, document: AgentDocument, choice: ModelChoice, check: TrustCheck
    ) -> ModelProvider:
        """The session's provider; held, its `env://` key unread, while the server it sends to
        is not trusted (an agent opened with `hold_untrusted`)."""
        agent = document.agent
        assert agent is not None

        def opener() -> ModelProvider:
            return open_provider(choice, agent.providers, document.base_dir)

        if choice.provider not in check.untrusted_providers:
            return opener()
        reason = (
            f"the model provider {choice.provider!r} is held: the server it sends to is not "
            f"trusted yet (Trust and start, or `foundry trust {check.agent_path}`)"
        )
        return HeldProvider(choice.provider, reason, opener)

    def _l1_supervisor(self, document: AgentDocument, config: PolicyConfig) -> Any:
        """The policy's L1 supervisor agent, unless a provider of its is not trusted yet: then
        none, and what it would have judged goes to a person (blocking: it reads files)."""
        named = config.supervisor_agent_path
        if named and named in self.trust.check(document).untrusted_supervisors:
            return None
        return open_l1_supervisor(document.base_dir, config)

    def _inbox(
        self, session_id: str, agent: Agent, identity: str, ask: AskUser | None
    ) -> HumanInbox:
        """The approval inbox of a session: the app's inbox, the API, `foundry approvals` and
        the person at this terminal (`ask`) race to answer; the policy's timeout applies. Its
        approvals name the agent's file (`identity`), which a grant made on one is bound to."""
        config = policy_entry_config(agent.supervisors) or PolicyConfig()
        return HumanInbox(
            self.store,
            agent.metadata.name,
            session_id,
            lambda body: self._emit(session_id, body),
            timeout_s=float(config.approval_timeout_seconds),
            on_timeout=config.on_timeout,
            ask=ask,
            agent_path=identity,
        )

    def _human_review(
        self, session_id: str, agent: Agent, identity: str, ask: AskUser | None
    ) -> HumanReview:
        """A message a supervisor wants a human to see goes to the approval inbox."""
        inbox = self._inbox(session_id, agent, identity, ask)

        async def review(direction: Direction, content: str, reason: str) -> GateDecision:
            call = ToolCall(
                id=f"review-{direction}",
                name=f"supervision.review_{direction}",
                arguments={"content": content, "reason": reason},
            )
            return await inbox.decide(call, level="supervisor", reason=reason)

        return review

    async def _start_tools(
        self, session_id: str, document: AgentDocument, workspace: Path | None = None
    ) -> Any:
        """The agent's tool servers, confined to `workspace` (the agent's folder if None)."""
        from foundry.runtime.internal_tools import InternalServers
        from foundry.tools import ToolHost

        assert document.agent is not None
        loop = asyncio.get_running_loop()

        def on_status(status: Any) -> None:
            schemas = {tool.name: tool.parameters for tool in status.tools}
            body = ToolServerChanged(
                name=status.name, state=status.state, error=status.error, tools=schemas
            )
            self._own(loop.create_task(self._record_status(session_id, body)))
            observe_on(host)  # a changed, new or removed tool is told as it is listed

        def untrusted() -> list[str]:
            return self.trust.check(document).untrusted_servers

        # tsagent's internal servers act on this session once its chat is open
        internal = InternalServers(document, lambda: self._sessions.get(session_id))
        host = ToolHost(
            document.agent.mcp_servers,
            document.base_dir,
            on_status=on_status,
            untrusted=untrusted,
            workspace=workspace,
            internal=internal,
        )
        internal.offering(host.tools)
        check = await self._in_writer(self.trust.check, document)
        host.hold(check.untrusted_servers, NOT_TRUSTED)
        await host.start()
        return host

    async def _record_status(self, session_id: str, body: ToolServerChanged) -> None:
        """A server's new status; one that failed is said in the conversation too."""
        await self.record(session_id, body)
        if body.state == "failed":
            why = (body.error or "it stopped").rstrip(".")
            notice = (
                f"The tool server {body.name!r} failed: {why}{'' if why.endswith('?') else '.'} "
                "Its tools are not offered until it starts (Edit Agent > Tools shows its output)."
            )
            await self.record(session_id, ErrorOccurred(message=notice, where="tools"))

    def tool_statuses(self, session_id: str) -> list[Any]:
        """Where each of the open session's MCP servers stands (`ServerStatus`), in order."""
        return list(self._live(session_id).host.statuses())

    def model_wait(self, session_id: str) -> str | None:
        """What the open session's model call waits behind, in words ("another chat is using
        it"), while the model it runs on serves one call at a time and is busy with another's;
        None when it does not wait (or its model does not say)."""
        live = self._sessions.get(session_id)
        queue_state = getattr(live.provider, "queue_state", None) if live else None
        if live is None or queue_state is None:
            return None
        state = queue_state(live.chat.model.model)
        running, mine = state.running, _chat_caller(session_id)
        if running is None or running.caller == mine:
            return None
        if not any(use.caller == mine for use in state.waiting):
            return None
        if running.is_review:
            return f"the {running.caller} is using it"
        return "another chat is using it"

    async def trust_check(self, session_id: str) -> TrustCheck:
        """Whether the open session's agent commands are trusted, as the session holds them."""
        return await self._in_writer(self.trust.check, self._live(session_id).document)

    async def start_held_servers(
        self, session_id: str, trust: bool = False, shown: TrustCheck | None = None
    ) -> None:
        """Start the servers held because their commands were not trusted; `trust` first trusts
        them (remembered): the commands `shown` to the person, when given, so that a script or
        `.env` changed since is not trusted unseen. Raises UntrustedAgent if they are still not
        trusted (its check lists them as they are now)."""
        live = self._live(session_id)
        if trust:
            commands = shown.commands if shown is not None else None
            await self._in_writer(self.trust.grant, live.document, True, commands)
        await self._in_writer(self.trust.require, live.document)
        if isinstance(live.provider, HeldProvider):
            live.provider.release()
        await live.host.release()

    def _live(self, session_id: str) -> _Live:
        if session_id not in self._sessions:
            raise SessionNotFound(f"session {session_id!r} is not open")
        return self._sessions[session_id]

    async def _gate(
        self,
        session_id: str,
        document: AgentDocument,
        identity: str,
        ask: AskUser | None,
        project_root: Path,
        extra_tools: Any = None,
        keep_trace: KeepTrace | None = None,
        tools: Any = None,
        results: SessionResults | None = None,
    ) -> ApprovalGate:
        """The approval hierarchy if the agent has a policy supervisor, else its toolPermission,
        for the agent whose file is `identity` (its resolved path, as trust keys it: grants are
        bound to it). It judges paths where each server runs: the agent's MCP servers in their
        working folders, a task's in-process tools (`extra_tools`) in the workspace (the
        workspace's files as a filesystem server's, for the rules written for one), and knows
        the schemas of the `tools` on offer. Its traces are stored before each decision
        returns, or handed to `keep_trace`. The session's `results` hold, as its other sources
        of concerns do, what sends data out once it has read untrusted content."""
        agent = document.agent
        assert agent is not None
        config = policy_entry_config(agent.supervisors)
        record = functools.partial(self.record, session_id)
        concerns = session_concerns(
            SessionPlace(self.store, session_id, document, identity, tools or extra_tools, record)
        )
        if results is not None:  # the session's rule of two (supervision/untrusted.py)
            concerns.append(results.untrusted)
        if config is None:
            inbox = self._inbox(session_id, agent, identity, ask)
            permission = PermissionGate(agent.settings.tool_permission, inbox.ask_permission)
            gate = ConcernGate(permission, inbox, concerns)
            return TracedGate(gate, self.store, agent.metadata.name, session_id, keep_trace)
        supervisor = await self._in_writer(self._l1_supervisor, document, config)
        folders = server_folders(agent.mcp_servers, document.base_dir)
        for tool in extra_tools.tools() if extra_tools is not None else ():
            kind = IN_PROCESS_KINDS.get(tool.server)
            folders.setdefault(tool.server, ServerSite((project_root,), kind))
        return SupervisedGate(
            self.store,
            config,
            agent_id=agent.metadata.name,
            agent_path=identity,
            session_id=session_id,
            project_root=project_root,
            notify=lambda body: self._emit(session_id, body),
            supervisor=supervisor,
            ask=ask,
            server_folders=folders,
            keep_trace=keep_trace,
            tool_definitions=None
            if tools is None
            else lambda name: offered_definition(tools.tools(), name),
            concerns=concerns,
            shadows=self._shadows.setdefault(session_id, ShadowReviews()),
        )

    def _own(self, task: asyncio.Task[Any]) -> None:
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def is_open(self, session_id: str) -> bool:
        return session_id in self._sessions

    def is_answering(self, session_id: str) -> bool:
        """Whether a turn of the session is running now (a task's agent at work, say)."""
        live = self._sessions.get(session_id)
        return live is not None and live.turn is not None and not live.turn.done()

    def session(self, session_id: str) -> ChatSession:
        return self._live(session_id).chat

    async def send(
        self, session_id: str, text: str, response_schema: dict[str, Any] | None = None
    ) -> TurnResult:
        """Run one user turn; `cancel` stops it and keeps what was generated."""
        turn = self.session(session_id).send(text, response_schema)
        return await self._run_turn(session_id, turn)

    async def resume(self, session_id: str) -> TurnResult:
        """Finish the turn a crash interrupted (does nothing if the last turn completed)."""
        return await self._run_turn(session_id, self.session(session_id).resume())

    async def _run_turn(self, session_id: str, turn: Coroutine[Any, Any, TurnResult]) -> TurnResult:
        """Run a turn, claimed in the store for this engine, so that no other process runs a
        turn of the session (or resumes this one) at the same time."""
        live = self._sessions[session_id]
        if live.turn is not None and not live.turn.done():
            turn.close()
            raise RuntimeError("this session is already answering; wait or cancel it first")
        sessions = self.store.sessions
        holder = await self._in_writer(sessions.claim_turn, session_id, self.runner, TURN_STALE_S)
        if holder is not None and runner_stopped(holder):  # killed mid-turn: take it over now
            claim = functools.partial(sessions.claim_turn, stopped=holder)
            holder = await self._in_writer(claim, session_id, self.runner, TURN_STALE_S)
        if holder is not None:
            turn.close()
            raise SessionRunningElsewhere(
                f"session {session_id} is answering in another Foundry process ({holder}); "
                "follow it there or wait until its turn ends"
            )
        with as_chat(_chat_caller(session_id)):  # its model calls say whose they are
            live.turn = asyncio.create_task(turn)
        heartbeat = asyncio.create_task(self._beat(session_id))
        try:
            return await live.turn
        finally:
            heartbeat.cancel()
            await self._in_writer(sessions.release_turn, session_id, self.runner)

    async def _beat(self, session_id: str) -> None:
        while True:
            await asyncio.sleep(TURN_HEARTBEAT_S)
            await self._in_writer(self.store.sessions.heartbeat, session_id, self.runner)

    async def running_elsewhere(self, session_id: str) -> bool:
        """Whether another process is running a turn of the session now."""
        record = await self._in_writer(self.store.sessions.get, session_id)
        runner = self.store.sessions.runner_of(record, TURN_STALE_S)
        return runner is not None and runner != self.runner and not runner_stopped(runner)

    async def follow(self, session_id: str, after_seq: int) -> None:
        """Follow the turn another process is running: each event it stores after `after_seq`
        is applied to the session here and published on the bus, until that turn ends (or its
        process stops: the session may then need resuming)."""
        chat = self.session(session_id)
        shown: set[int] = set()  # this engine's own events meanwhile (a context change)
        unsubscribe = self.bus.subscribe(
            lambda event: shown.add(event.seq) if event.session_id == session_id else None
        )
        try:
            while True:
                running = await self.running_elsewhere(session_id)
                for event in await self.events(session_id, after_seq):  # read after: none missed
                    after_seq = event.seq
                    if event.seq not in shown:
                        chat.apply(event.body)
                        self.bus.publish(event)
                if not running:
                    return
                await asyncio.sleep(FOLLOW_POLL_S)
        finally:
            unsubscribe()

    async def later_reviewers(self, session_id: str) -> list[str]:
        """The supervisors of the session still reviewing after a reply (see `settle`)."""
        return self._live(session_id).chat.chain.later_reviewers

    async def settle(self, session_id: str, timeout_s: float | None = None) -> None:
        """Wait for the session's supervisor reviews that run after replies (the ones still
        running after `timeout_s` stop, recorded with their fallbacks)."""
        await self._live(session_id).chat.chain.settle(timeout_s)

    async def cancel(self, session_id: str) -> None:
        live = self._sessions.get(session_id)
        if live and live.turn and not live.turn.done():
            live.turn.cancel()

    # -- tasks ----------------------------------------------------------------------------------

    async def run_task(
        self, path: Path, replay: bool = False, new: bool = False, ask: AskUser | None = None
    ) -> TaskOutcome:
        """Run the task file at `path` to its end (see `start_task`)."""
        task_id = await self.start_task(path, replay, new, ask)
        return await self.task_outcome(task_id)

    async def start_task(
        self, path: Path, replay: bool = False, new: bool = False, ask: AskUser | None = None
    ) -> str:
        """Start the task file at `path`; returns the run's id at once. An unfinished earlier
        run of it is resumed (unless `new`); `replay` re-runs its last run from the journal
        without calling any model."""
        task = await self._in_writer(load_task, Path(path))
        latest = await self._in_writer(self.store.tasks.latest, str(task.path))
        if latest is not None and self.is_running(latest.id):
            if replay:
                raise TaskNotFound(f"{task.path} is running now; replay it once it has finished")
            if not new:
                return latest.id  # already under way here: follow it rather than run it twice
        if replay:
            if latest is None:
                raise TaskNotFound(f"{task.path} has not run yet, so there is nothing to replay")
            journal = StepJournal(await self.events(latest.id), replay=True)
            runner = TaskRunner(self, task, latest.id, journal)
            self._task_runs[latest.id] = asyncio.create_task(runner.run(resuming=True))
            return latest.id
        resuming = latest is not None and latest.status == "running" and not new
        if latest is not None and resuming:
            task_id, history = latest.id, await self.events(latest.id)
        else:
            created = await self._in_writer(
                self.store.tasks.create, task.spec.name, str(task.path), str(task.workspace)
            )
            task_id, history = created.id, []
        runner = TaskRunner(self, task, task_id, StepJournal(history), ask)
        self._task_runs[task_id] = asyncio.create_task(self._run_task(runner, resuming))
        return task_id

    async def _run_task(self, runner: TaskRunner, resuming: bool) -> TaskOutcome:
        """Run to the end and store how it ended. A run that is stopped stays `running`, so
        that it resumes; one that fails with an error is `failed`, so that it does not."""
        try:
            outcome = await runner.run(resuming=resuming)
        except Exception as error:
            failed = {"status": "failed", "output": f"the run stopped with an error: {error}"}
            await self._in_writer(lambda: self.store.tasks.update(runner.task_id, **failed))
            raise
        finally:
            for session_id in runner.desk.sessions.values():
                await self.close_session(session_id)
        finished = {"status": outcome.status, "output": outcome.output}
        await self._in_writer(lambda: self.store.tasks.update(runner.task_id, **finished))
        return outcome

    async def task_runs(self, limit: int = 100) -> list[Any]:
        """The task runs in the store, newest first."""
        return list(await self._in_writer(self.store.tasks.list, limit))

    def is_running(self, task_id: str) -> bool:
        run = self._task_runs.get(task_id)
        return run is not None and not run.done()

    async def task_outcome(self, task_id: str) -> TaskOutcome:
        """Wait for a task this engine started; cancelling it stops the wait, not the task."""
        return await asyncio.shield(self._task_runs[task_id])

    async def cancel_task(self, task_id: str) -> None:
        """Stop a running task; it stays resumable from its last completed phase."""
        run = self._task_runs.get(task_id)
        if run is not None and not run.done():
            run.cancel()
            await asyncio.gather(run, return_exceptions=True)

    async def close_session(self, session_id: str) -> None:
        live = self._sessions.pop(session_id, None)
        if live is None:
            return
        if live.turn and not live.turn.done():
            live.turn.cancel()
            await asyncio.gather(live.turn, return_exceptions=True)
        shadows = self._shadows.pop(session_id, None)
        if shadows is not None:
            await shadows.aclose()
        await live.chat.chain.settle(timeout_s=0)
        await live.tools.aclose()
        await live.provider.aclose()
        for supervisor in live.chat.chain.supervisors:
            await supervisor.aclose()
        await asyncio.gather(*self._background, return_exceptions=True)
