"""Attacks on grants (the inbox's Approve + grant, the API's POST /grants): a grant must cover
exactly what the person allowed, never a wider call, another agent or another server's tool.

Each case is labelled with what must happen: ASKS (the grant does not cover the call: it goes on
to a person) or COVERED (the grant covers it: no one is asked again). Calls are routed by the
real gate over a real SQLite store and a real project folder with real links.
"""

from __future__ import annotations

import asyncio
import glob
import json
import os
import shutil
import unicodedata
from collections.abc import Awaitable, Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from foundry.agent.models import PolicyConfig, PolicyRule
from foundry.agent.trust import trust_key
from foundry.api import create_app
from foundry.api.views import approval_detail
from foundry.llm.scripted import ScriptedProvider
from foundry.runtime.approvals import Approvals
from foundry.store import ApprovalRecord, GrantRecord, Store
from foundry.store.tables import utc_now
from foundry.supervision.hierarchy import SupervisedGate
from foundry.supervision.l1 import CallUnderReview, L1Supervisor, Verdict
from tests.api.records import AUTH, TOKEN, agent_folder
from tests.supervision.test_hierarchy import Recorder, call

pytestmark = pytest.mark.usefixtures("judged_both_ways")  # rules on the loop and off it
ASKS, COVERED = "asks a person", "covered by the grant"

TO_A_PERSON = PolicyConfig.model_validate(
    {
        "rules": [
            {"name": "no-deletes", "tool": "*.delete*", "action": "deny"},
            {"name": "ask", "tool": "*", "action": "human"},
        ],
        "loopDetection": False,
        "approvalTimeoutSeconds": 5,
    }
)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(f"sqlite:///{tmp_path / 'grants.sqlite3'}") as opened:
        yield opened


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    for folder in ("src/sub", "srcx", "docs", "data[1]", "data1", "café"):
        (root / folder).mkdir(parents=True)
    (root / "src" / "to-docs").symlink_to(root / "docs")
    (root / "src" / "to-outside").symlink_to(tmp_path)
    return root


def gate(store: Store, project: Path, agent: str = "worker") -> SupervisedGate:
    return SupervisedGate(store, TO_A_PERSON, agent, "s1", project, Recorder(), poll_s=0.02)


def grant(
    store: Store,
    tools: str = "files.read_file",
    path_scope: str | None = "src",
    agent: str = "worker",
    minutes: float = 15,
) -> str:
    """A grant as the inbox's Approve + grant makes it: the agent's name escaped."""
    expires = utc_now() + timedelta(minutes=minutes)
    made = store.grants.add(
        tools, expires, "human:ana", agent_glob=glob.escape(agent), path_scope=path_scope
    )
    return made.id


async def route(
    store: Store, project: Path, tool: str, agent: str = "worker", **params: Any
) -> str:
    decided = await gate(store, project, agent).route(call(tool, **params))
    return COVERED if decided.grant is not None else ASKS


NFD_CAFE = unicodedata.normalize("NFD", "café")

# (case, grant's tools, grant's folder, the call's tool, its path, expected)
CASES: list[tuple[str, str, str | None, str, str, str]] = [
    (
        "the granted read in its folder",
        "files.read_file",
        "src",
        "files.read_file",
        "src/a.txt",
        COVERED,
    ),
    (
        "a read deeper in the folder",
        "files.read_file",
        "src",
        "files.read_file",
        "src/sub/a.txt",
        COVERED,
    ),
    (
        "the folder written as ./src",
        "files.read_file",
        "src",
        "files.read_file",
        "./src/a.txt",
        COVERED,
    ),
    (
        "a write with a read's grant",
        "files.read_file",
        "src",
        "files.write_file",
        "src/a.txt",
        ASKS,
    ),
    (
        "the same tool on another server",
        "files.read_file",
        "src",
        "other.read_file",
        "src/a.txt",
        ASKS,
    ),
    (
        "a tool whose name starts the same",
        "files.read_file",
        "src",
        "files.read_file_and_delete_it",
        "src/a.txt",
        ASKS,
    ),
    (
        "a sibling folder sharing the prefix",
        "files.read_file",
        "src",
        "files.read_file",
        "srcx/a.txt",
        ASKS,
    ),
    ("the parent folder", "files.read_file", "src", "files.read_file", "a.txt", ASKS),
    ("out through ..", "files.read_file", "src", "files.read_file", "src/../docs/a.txt", ASKS),
    (
        "out through a link inside the folder",
        "files.read_file",
        "src",
        "files.read_file",
        "src/to-docs/a.txt",
        ASKS,
    ),
    (
        "out of the workspace through a link",
        "files.read_file",
        None,
        "files.read_file",
        "src/to-outside/x",
        ASKS,
    ),
    (
        "the folder in capitals (another folder here)",
        "files.read_file",
        "src",
        "files.read_file",
        "SRC/a.txt",
        ASKS,
    ),
    (
        "a look-alike folder (Cyrillic s)",
        "files.read_file",
        "src",
        "files.read_file",
        "\u0455rc/a.txt",
        ASKS,
    ),
    (
        "the folder in another Unicode form",
        "files.read_file",
        "café",
        "files.read_file",
        f"{NFD_CAFE}/a",
        ASKS,
    ),
    (
        "a folder named like a glob, literal",
        "files.read_file",
        "data[1]",
        "files.read_file",
        "data1/a",
        ASKS,
    ),
    (
        "a folder named like a glob, itself",
        "files.read_file",
        "data[1]",
        "files.read_file",
        "data[1]/a",
        COVERED,
    ),
    ("a tool name in capitals", "files.read_file", "src", "files.READ_FILE", "src/a.txt", ASKS),
    (
        "a server's wildcard covers its tools",
        "files.*",
        "src",
        "files.write_file",
        "src/a.txt",
        COVERED,
    ),
    (
        "a server's wildcard, another server",
        "files.*",
        "src",
        "filesx.write_file",
        "src/a.txt",
        ASKS,
    ),
    ("a delete the policy denies, even under *", "*", None, "files.delete_file", "src/a.txt", ASKS),
]


@pytest.mark.parametrize(
    ("case", "tools", "scope", "tool", "path", "expected"), CASES, ids=[c[0] for c in CASES]
)
async def test_a_grant_covers_exactly_what_was_granted(
    store: Store,
    project: Path,
    case: str,
    tools: str,
    scope: str | None,
    tool: str,
    path: str,
    expected: str,
) -> None:
    grant(store, tools, scope)
    assert await route(store, project, tool, path=path) == expected, case


AGENTS = [
    ("the granted agent", "worker", COVERED),
    ("another agent", "worker2", ASKS),
    ("the agent's name in capitals", "Worker", ASKS),
]


@pytest.mark.parametrize(("case", "agent", "expected"), AGENTS, ids=[c[0] for c in AGENTS])
async def test_a_grant_is_the_agents_it_was_made_for(
    store: Store, project: Path, case: str, agent: str, expected: str
) -> None:
    grant(store)
    assert await route(store, project, "files.read_file", agent, path="src/a") == expected, case


async def test_an_agent_named_like_a_glob_lends_its_grant_to_no_other(
    store: Store, project: Path
) -> None:
    grant(store, agent="work*")
    assert await route(store, project, "files.read_file", "work*", path="src/a") == COVERED
    assert await route(store, project, "files.read_file", "worker", path="src/a") == ASKS


@pytest.mark.parametrize("ended", ["expired", "revoked"])
async def test_a_grant_that_ended_covers_nothing(store: Store, project: Path, ended: str) -> None:
    made = grant(store, minutes=-1 if ended == "expired" else 15)
    if ended == "revoked":
        store.grants.revoke(made)
    assert await route(store, project, "files.read_file", path="src/a") == ASKS, ended


def pending(store: Store, tool: str = "files.read_file", agent: str = "worker") -> ApprovalRecord:
    return store.approvals.create(
        ApprovalRecord(agent_id=agent, session_id="s1", tool=tool, params={"path": "src/a"})
    )


@pytest.mark.parametrize("first", ["denied", "approved"])
async def test_a_grant_made_on_an_approval_someone_else_resolved_is_revoked(
    store: Store, project: Path, first: str
) -> None:
    """Two reviewers: one resolves, the other answers the same approval with a grant later."""
    approval = pending(store)
    assert not Approvals(store).decide(approval.id, first == "approved", "human:bob").conflict
    made = Approvals(store).approve_with_grant
    outcome = made(approval, "human:ana", "files.*", timedelta(hours=1), "src")
    assert outcome.conflict and outcome.grant is None
    assert await route(store, project, "files.write_file", path="src/a") == ASKS


async def test_the_inbox_grant_is_the_approvals_agent_whatever_its_name(
    store: Store, project: Path
) -> None:
    approval = pending(store, agent="w[o]rker")
    outcome = Approvals(store).approve_with_grant(
        approval, "human:ana", "files.read_file", timedelta(hours=1), "src"
    )
    assert outcome.grant is not None
    assert await route(store, project, "files.read_file", "worker", path="src/a") == ASKS
    assert await route(store, project, "files.read_file", "w[o]rker", path="src/a") == COVERED


# -- whose grant it is: the agent's file, not its name ---------------------------------------


def agent_gate(store: Store, agent: Path, name: str = "worker") -> SupervisedGate:
    """The gate of the agent at `agent` (however that path is written), as the engine builds
    it: the agent is known by its resolved path, as trust knows it, and works in its folder."""
    workspace = agent if agent.is_dir() else agent.parent
    identity = trust_key(agent)
    return SupervisedGate(
        store, TO_A_PERSON, name, "s1", workspace, Recorder(), poll_s=0.02, agent_path=identity
    )


async def asked(store: Store, asking: SupervisedGate) -> tuple[Awaitable[Any], ApprovalRecord]:
    """The agent asks a person to let it read src/a: its review, waiting, and its approval."""
    review = asyncio.create_task(asking.review(call("files.read_file", path="src/a"), True))
    for _ in range(500):
        pending = await asyncio.to_thread(store.approvals.list, "pending")
        if pending:
            break
        await asyncio.sleep(0.01)
    (approval,) = pending
    return review, approval


async def grant_from_the_inbox(store: Store, asking: SupervisedGate) -> ApprovalRecord:
    """The agent asks a person, who approves with a grant of files.read_file in src (the
    inbox's Approve + grant); returns the approval it was made on."""
    review, approval = await asked(store, asking)
    outcome = await asyncio.to_thread(
        Approvals(store).approve_with_grant,
        approval,
        "human:ana",
        "files.read_file",
        timedelta(hours=1),
        "src",
    )
    assert outcome.grant is not None and (await review).allowed
    return approval


def api_client(store: Store) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=create_app(store, TOKEN))
    return httpx.AsyncClient(transport=transport, base_url="http://t", headers=AUTH)


async def grant_through_the_api(
    store: Store, first: Path, binding: Callable[[ApprovalRecord], dict[str, str]]
) -> ApprovalRecord:
    """The agent at `first` asks; a supervisor grants files.read_file for an hour through
    POST /grants, bound by `binding`, then approves (the grant first, as the inbox makes it,
    so that the agent's next call finds it); returns the approval."""
    review, approval = await asked(store, agent_gate(store, first))
    async with api_client(store) as api:
        shown = (await api.get(f"/approvals/{approval.id}")).json()
        assert shown["agent_path"] == trust_key(first)  # which file asked: what a client sees
        body = {"tools": "files.read_file", "duration": "1h", **binding(approval)}
        made = await api.post("/grants", json=body)
        approved = await api.post(f"/approvals/{approval.id}/approve")
    assert made.status_code == 201 and approved.status_code == 200, made.text
    assert (await review).allowed
    return approval


async def by_the_inbox(store: Store, first: Path) -> ApprovalRecord:
    return await grant_from_the_inbox(store, agent_gate(store, first))


async def by_approval_id(store: Store, first: Path) -> ApprovalRecord:
    return await grant_through_the_api(store, first, lambda approval: {"approval_id": approval.id})


async def by_agent_path(store: Store, first: Path) -> ApprovalRecord:
    """The agent's path as a client may know it: not normalised, `..` and all."""
    written = str(first / ".." / first.name)
    return await grant_through_the_api(store, first, lambda _: {"agent_path": written})


GRANTERS = {
    "the inbox's Approve + grant": by_the_inbox,
    "POST /grants with the approval's id": by_approval_id,
    "POST /grants with the agent's path": by_agent_path,
}


async def covered(store: Store, agent: Path, name: str = "worker") -> str:
    decided = await agent_gate(store, agent, name).route(call("files.read_file", path="src/a"))
    return COVERED if decided.grant is not None else ASKS


async def test_two_agents_sharing_a_name_do_not_share_grants(store: Store, tmp_path: Path) -> None:
    first = agent_folder(tmp_path / "one")
    copy = Path(shutil.copytree(first, tmp_path / "downloads" / "one"))
    approval = await grant_from_the_inbox(store, agent_gate(store, first))
    assert approval.agent_path == str(first.resolve())
    assert await covered(store, first) == COVERED
    assert await covered(store, copy) == ASKS


def _symlink(tmp_path: Path, first: Path) -> Path:
    (tmp_path / "link").symlink_to(first, target_is_directory=True)
    return tmp_path / "link"


def _relative(tmp_path: Path, first: Path) -> Path:
    return Path(os.path.relpath(first, Path.cwd()))


def _yaml_beside(tmp_path: Path, first: Path) -> Path:
    (first / "other.yaml").write_text("metadata:\n  name: worker\n")
    return first / "other.yaml"


def _copied(tmp_path: Path, first: Path) -> Path:
    return Path(shutil.copytree(first, tmp_path / "downloads" / first.name))


def _renamed(tmp_path: Path, first: Path) -> Path:
    (first / "tsagent.json").write_text(json.dumps({"metadata": {"name": "renamed"}}))
    return first


# (case, the agent that calls after the grant, as which name, expected)
WHOSE: list[tuple[str, Callable[[Path, Path], Path], str, str]] = [
    ("the granted agent itself (no one asked again)", lambda _, first: first, "worker", COVERED),
    ("the same folder through a symbolic link", _symlink, "worker", COVERED),
    ("the same folder by a relative path", _relative, "worker", COVERED),
    ("another agent file of the same name in its folder", _yaml_beside, "worker", ASKS),
    ("a copy of the agent elsewhere, of the same name", _copied, "worker", ASKS),
    # the grant said "worker": a renamed agent may meet other rules, and is asked once again
    ("the same folder with the agent renamed", _renamed, "renamed", ASKS),
]


@pytest.mark.parametrize("granted_by", GRANTERS)
@pytest.mark.parametrize(("case", "reached", "name", "expected"), WHOSE, ids=[c[0] for c in WHOSE])
async def test_a_bound_grant_is_the_agent_files_it_was_made_for(
    store: Store,
    tmp_path: Path,
    case: str,
    reached: Callable[[Path, Path], Path],
    name: str,
    expected: str,
    granted_by: str,
) -> None:
    first = agent_folder(tmp_path / "one")
    await GRANTERS[granted_by](store, first)
    agent = reached(tmp_path, first)
    assert await covered(store, agent, name) == expected, case
    if expected == COVERED:  # covered at review too: allowed by the grant, no one asked
        decision = await agent_gate(store, agent, name).review(
            call("files.read_file", path="src/b"), True
        )
        assert decision.allowed and decision.by.startswith("grant:"), case
        assert len(store.approvals.list()) == 1, case


async def make_old_grant(store: Store) -> None:
    """A grant row as Foundry stored it before grants named their agent file (no agent_path)."""
    expires = utc_now() + timedelta(hours=1)
    with store.engine.begin() as connection:
        connection.execute(
            GrantRecord.__table__.insert().values(  # type: ignore[attr-defined]
                id="g_old", agent_glob="worker", tool_glob="files.read_file",
                granted_by="human:ana", expires_at=expires,
            )
        )  # fmt: skip


async def make_api_grant(store: Store) -> None:
    """A grant made through the API's POST /grants by a glob of names only, bound to no file."""
    async with api_client(store) as api:
        body = {"tools": "files.read_file", "agent": "worker", "duration": "1h"}
        made = await api.post("/grants", json=body)
    assert made.status_code == 201 and "agent_path" not in made.json(), made.text


@pytest.mark.parametrize("make", [make_api_grant, make_old_grant], ids=["by the API", "old row"])
async def test_a_grant_by_name_covers_every_agent_of_that_name_as_documented(
    store: Store, tmp_path: Path, make: Callable[[Store], Awaitable[None]]
) -> None:
    """docs/policy.md: a grant that names no agent file (made through the API, whose `agent`
    is a glob of names, or stored before grants named their file) keeps meaning every agent
    whose name matches; only the name glob decides."""
    first = agent_folder(tmp_path / "one")
    copy = Path(shutil.copytree(first, tmp_path / "two"))
    other = agent_folder(tmp_path / "three", name="other")
    await make(store)
    assert await covered(store, first) == COVERED
    assert await covered(store, copy) == COVERED
    assert await covered(store, other, "other") == ASKS


async def test_a_bound_grant_with_a_wide_glob_still_covers_its_file_only(
    store: Store, tmp_path: Path
) -> None:
    """`agent: "*"` with a path: any name the agent at that file takes (the client's explicit
    choice), and still no other file, be it a copy of the agent under the same name."""
    first = agent_folder(tmp_path / "one")
    copy = Path(shutil.copytree(first, tmp_path / "two"))
    async with api_client(store) as api:
        body = {"tools": "files.read_file", "duration": "1h", "agent": "*"}
        made = await api.post("/grants", json={**body, "agent_path": str(first)})
    assert made.status_code == 201, made.text
    assert await covered(store, first) == COVERED
    assert await covered(store, _renamed(tmp_path, first), "renamed") == COVERED
    assert await covered(store, copy) == ASKS


async def test_the_inbox_and_the_api_show_the_grants_the_gate_applies(
    store: Store, tmp_path: Path
) -> None:
    """Beside an approval, the inbox and GET /approvals/{id} list the grants that would cover
    its agent: the same ones the gate applies (a bound grant for its own file only)."""
    first = agent_folder(tmp_path / "one")
    copy = Path(shutil.copytree(first, tmp_path / "two"))
    await grant_from_the_inbox(store, agent_gate(store, first))
    await make_api_grant(store)
    for agent in (first, copy):
        asking = ApprovalRecord(
            agent_id="worker", agent_path=trust_key(agent), tool="files.read_file"
        )
        gate_grants = store.grants.covering("worker", "files.read_file", None, trust_key(agent))
        shown = Approvals(store).context(asking).grants
        listed = approval_detail(asking, False, utc_now(), [], store.grants.active())
        assert {g.id for g in shown} == {g.id for g in gate_grants}, agent
        assert {g.id for g in listed.active_grants or []} == {g.id for g in gate_grants}, agent
    assert len(store.grants.covering("worker", "files.read_file", None, trust_key(first))) == 2
    assert len(store.grants.covering("worker", "files.read_file", None, trust_key(copy))) == 1


class Watched(L1Supervisor):
    """A scripted L1 supervisor that keeps what it is shown of each call."""

    def __init__(self, folder: Path) -> None:
        verdict = {"decision": "escalate", "confidence": 0.5, "reasoning": "ask"}
        (folder / "verdict.json").write_text(json.dumps({"turns": [{"json": verdict}]}))
        super().__init__(ScriptedProvider(folder / "verdict.json"), "x")
        self.shown: list[CallUnderReview] = []

    async def review(self, call: CallUnderReview) -> Verdict:
        self.shown.append(call)
        return await super().review(call)


async def test_the_supervisor_is_shown_only_the_grants_of_the_agent_it_judges(
    store: Store, tmp_path: Path
) -> None:
    first = agent_folder(tmp_path / "one")
    copy = Path(shutil.copytree(first, tmp_path / "two"))
    expires = utc_now() + timedelta(hours=1)
    store.grants.add("files.*", expires, "human:ana", "worker", agent_path=trust_key(first))
    store.grants.add("mail.*", expires, "api:bot", "worker")  # by name: every "worker"
    store.grants.add("web.*", expires, "api:bot", "other")
    to_supervisor = TO_A_PERSON.model_copy(
        update={"rules": [PolicyRule(name="judge", tool="*", action="supervisor")]}
    )
    watched = Watched(tmp_path)
    gate = SupervisedGate(
        store, to_supervisor, "worker", "s1", copy, Recorder(), supervisor=watched,
        agent_path=trust_key(copy),
    )  # fmt: skip
    await gate.route(call("shell.run", command="ls"))
    (shown,) = watched.shown
    assert shown.active_grants == ("worker mail.*",)


async def test_a_tool_cannot_pass_for_another_servers_tool(tmp_path: Path) -> None:
    """Server `a` names its tool `b.read`; the agent also has a server `a.b` with a tool `read`.
    Both would be `a.b.read`: what a person approves or grants by that name must be one tool,
    the one whose server the name says (as paths are judged: the longest server name wins)."""
    from foundry.agent.models import StdioServer
    from foundry.tools import ToolHost

    script = str(Path(__file__).parents[1] / "tools" / "named_tool_server.py")

    def server(tool: str, identity: str) -> StdioServer:
        return StdioServer(command="python", args=[script, tool, identity])

    servers = {"a": server("b.read", "server a"), "a.b": server("read", "server a.b")}
    async with ToolHost(dict(servers), tmp_path) as host:  # type: ignore[arg-type]
        assert [(tool.name, tool.server) for tool in host.tools()] == [("a.b.read", "a.b")]
        result = await host.call("a.b.read", {})
        assert result.text == "server a.b"


PARAM_SCOPED = [
    ("the path the grant names", {"path": "src/a"}, COVERED),
    ("a second path elsewhere", {"path": "src/a", "destination": "docs/b"}, ASKS),
    ("a list with a path elsewhere", {"path": ["src/a", "docs/b"]}, ASKS),
    ("another parameter's path elsewhere", {"source": "docs/x", "path": "src/a"}, ASKS),
]


@pytest.mark.parametrize(
    ("case", "params", "expected"), PARAM_SCOPED, ids=[c[0] for c in PARAM_SCOPED]
)
async def test_a_grant_with_a_condition_on_a_path_does_not_cover_other_paths(
    store: Store, project: Path, case: str, params: dict[str, Any], expected: str
) -> None:
    """A grant made through the API (`params`: path within src) covers no call that also
    names a path outside src under another name."""
    store.grants.add(
        "files.*",
        utc_now() + timedelta(minutes=5),
        "http:127.0.0.1",
        agent_glob="worker",
        param_scope=[{"param": "path", "op": "within", "value": "src"}],
    )
    decided = await gate(store, project).route(call("files.move_file", **params))
    assert (COVERED if decided.grant is not None else ASKS) == expected, case
