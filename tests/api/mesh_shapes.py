"""agent-mesh 0.8.6's own request shapes, and how two servers' answers to them are compared.

The requests are the ones agent-mesh's handlers read (its proxy/handler.go): approve and deny
take an optional `resolveRequest{resolved_by, reasoning, confidence}`, decoded with errors
ignored; grants a `grantRequest{agent, tools, duration}`, the duration read by Go's
`time.ParseDuration`; ids may be a prefix; `status=pending` filters the list. They are data
here, so that bench/mesh_protocol.py can send them to agent-mesh and to Foundry and print the
differences, and tests/api/test_mesh_protocol.py can hold Foundry to agent-mesh's answers as the
bench recorded them (mesh_answers.json).

A request's `target` is the record it is about, made fresh for it: a pending approval, an
approved one, one that timed out, a grant, or none. In its path, {id} is that record's id and
{prefix} the id's first 8 characters (4 for a grant: agent-mesh's shortest grant prefix).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

Target = Literal["none", "pending", "resolved", "timed_out", "grant"]
AGENT = "claude"
TOOL = "files.write"
PARAMS = {"path": "/home/user/project/main.go"}
RULE = "writes"  # the policy that asks for approval: agent-mesh names a rule by its policy
ANSWERS = Path(__file__).with_name("mesh_answers.json")
# Values that differ from run to run and server to server: compared by their JSON type only.
VARYING = frozenset(
    {
        "id",
        "trace_id",
        "approval_id",
        "created_at",
        "resolved_at",
        "expires_at",
        "timestamp",
        "remaining",
        "latency_ms",
        "approval_ms",
        "resolved_by",
        "granted_by",
        "approved_by",
        "commit",
        "date",
        "version",
        "content_sha256",
        "attempt",  # the bench's count of calls: agent-mesh refuses a call repeated too often
    }
)
# Foundry's own fields, which agent-mesh has not: not differences while they hold something
# (agent-mesh's clients ignore fields they do not know); sent empty, they are.
FOUNDRY_FIELDS = frozenset(
    {"agent_path", "decision", "resolved_level", "resolved_by", "reasoning", "confidence"}
    | {"decided_ms", "params", "detail"}
)
SUPERVISOR = {
    "resolved_by": "supervisor:agent7",
    "reasoning": "inside the project",
    "confidence": 0.9,
}


@dataclass(frozen=True)
class MeshRequest:
    name: str
    method: str
    path: str
    target: Target = "none"
    json_body: Any = None
    form_body: dict[str, str] | None = None
    agent: str = AGENT

    def url(self, record_id: str = "") -> str:
        prefix = record_id[: 4 if self.target == "grant" else 8]
        return self.path.replace("{id}", record_id).replace("{prefix}", prefix)

    def body(self) -> dict[str, Any]:
        """The keyword arguments for httpx that send this request's body as agent-mesh's
        clients do: JSON with its content type, or a form."""
        if self.json_body is not None:
            return {"content": json.dumps(self.json_body), "headers": JSON}
        if self.form_body is not None:
            return {"data": self.form_body}
        return {}


JSON = {"Content-Type": "application/json"}
GRANT = {"agent": AGENT, "tools": "files.*", "duration": "30m"}


def _approve(name: str, target: Target = "pending", **body: Any) -> MeshRequest:
    return MeshRequest(name, "POST", "/approvals/{id}/approve", target, json_body=body or None)


def _grant(name: str, body: Any) -> MeshRequest:
    return MeshRequest(name, "POST", "/grants", json_body=body)


REQUESTS: list[MeshRequest] = [
    MeshRequest("list pending", "GET", "/approvals?status=pending", "pending"),
    MeshRequest("list all", "GET", "/approvals", "pending"),
    MeshRequest("list by tool glob", "GET", "/approvals?tool=files.*", "pending"),
    MeshRequest("list by an unknown tool", "GET", "/approvals?tool=nothing.*", "pending"),
    MeshRequest("list timed out", "GET", "/approvals?status=timeout", "timed_out", agent="late"),
    MeshRequest("one approval", "GET", "/approvals/{id}", "pending"),
    MeshRequest("one approval by prefix", "GET", "/approvals/{prefix}", "pending"),
    MeshRequest("one approved approval", "GET", "/approvals/{id}", "resolved"),
    MeshRequest("one timed out approval", "GET", "/approvals/{id}", "timed_out", agent="late"),
    MeshRequest("an unknown approval", "GET", "/approvals/0000000000000000"),
    MeshRequest("approve without a body", "POST", "/approvals/{id}/approve", "pending"),
    _approve("approve with a body", **SUPERVISOR),
    _approve("approve with an unknown field", resolved_by="ops", comment="fine"),
    _approve("approve with an empty resolved_by", resolved_by=""),
    _approve("approve with a numeric resolved_by", resolved_by=42),
    _approve("approve with a text confidence", confidence="0.5"),
    _approve("approve with a true confidence", confidence=True),
    MeshRequest(
        "approve with a form",
        "POST",
        "/approvals/{id}/approve",
        "pending",
        form_body={"resolved_by": "ops", "reasoning": "fine"},
    ),
    MeshRequest("approve by prefix", "POST", "/approvals/{prefix}/approve", "pending"),
    MeshRequest("deny as a supervisor", "POST", "/approvals/{id}/deny", "pending", SUPERVISOR),
    MeshRequest("approve twice", "POST", "/approvals/{id}/approve", "resolved"),
    MeshRequest("approve an unknown approval", "POST", "/approvals/0000000000000000/approve"),
    MeshRequest("list grants", "GET", "/grants", "grant"),
    _grant("grant for 30m", GRANT),
    _grant("grant for 500ms", {**GRANT, "duration": "500ms"}),
    _grant("grant for 1h30m", {**GRANT, "duration": "1h30m"}),
    _grant("grant for 7d", {**GRANT, "duration": "7d"}),
    _grant("grant with an unknown field", {**GRANT, "note": "for the demo"}),
    _grant("grant without an agent", {"tools": "files.*", "duration": "30m"}),
    _grant("grant without a duration", {"agent": AGENT, "tools": "files.*"}),
    MeshRequest("grant with a form", "POST", "/grants", form_body=GRANT),
    MeshRequest("revoke a grant", "DELETE", "/grants/{id}", "grant"),
    MeshRequest("revoke a grant by prefix", "DELETE", "/grants/{prefix}", "grant"),
    MeshRequest("revoke an unknown grant", "DELETE", "/grants/0000000000000000"),
    MeshRequest("traces of an agent", "GET", "/traces?agent=tracer", "resolved", agent="tracer"),
    MeshRequest("traces of a tool", "GET", "/traces?tool=files.write", "resolved"),
    MeshRequest("version", "GET", "/version"),
]


def shape(status: int, body: Any) -> dict[str, Any]:
    """What is compared of an answer: its status, and its body with the values that vary
    replaced by their JSON type; of a list, its first element only (or that it is empty)."""
    return {"status": status, "body": _shape_value(body, top=True)}


def _shape_value(value: Any, top: bool = False, key: str = "") -> Any:
    if isinstance(value, list):
        if not value:
            return []
        return [_shape_value(value[0], key=key)] if top or key else [_shape_value(value[0])]
    if isinstance(value, dict):
        return {name: _shape_value(item, key=name) for name, item in value.items()}
    if key in VARYING:
        return f"<{type(value).__name__}>"
    return value


def differences(mesh: Mapping[str, Any], foundry: Mapping[str, Any]) -> list[str]:
    """Where Foundry's answer shape differs from agent-mesh's: the status, a field missing,
    left in where agent-mesh leaves it out, or of another value, one line each."""
    found: list[str] = []
    if mesh["status"] != foundry["status"]:
        found.append(f"status {foundry['status']}, agent-mesh {mesh['status']}")
    _diff(mesh["body"], foundry["body"], "body", found)
    return found


def _diff(mesh: Any, foundry: Any, where: str, found: list[str]) -> None:
    if isinstance(mesh, dict) and isinstance(foundry, dict):
        for key in sorted(mesh.keys() - foundry.keys()):
            found.append(f"{where}.{key} missing (agent-mesh: {_short(mesh[key])})")
        for key in sorted(foundry.keys() - mesh.keys()):
            if key not in FOUNDRY_FIELDS or foundry[key] in (None, "", [], {}, False):
                found.append(f"{where}.{key} sent, agent-mesh leaves it out")
        for key in sorted(mesh.keys() & foundry.keys()):
            _diff(mesh[key], foundry[key], f"{where}.{key}", found)
    elif isinstance(mesh, list) and isinstance(foundry, list) and mesh and foundry:
        _diff(mesh[0], foundry[0], f"{where}[0]", found)
    elif mesh != foundry:
        found.append(f"{where} is {_short(foundry)}, agent-mesh {_short(mesh)}")


def _short(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


def recorded_answers() -> dict[str, dict[str, Any]]:
    """agent-mesh's answer shapes, by request name, as bench/mesh_protocol.py --record saved
    them."""
    answers: dict[str, dict[str, Any]] = json.loads(ANSWERS.read_text())
    return answers
