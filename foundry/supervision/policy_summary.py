"""A policy in one plain sentence: what it does with the kinds of call people care about.

Each kind of call is one typical call ("reads inside the workspace": `files.read_file` of
`notes/todo.md`), decided by the policy's own rules through the real PolicyEngine (each as the
first call, every server taken to be of the kind a rule names), so the sentence follows the
rules as they are edited: "Reads inside the workspace run; writes outside it are denied; shell
commands ask you; …".
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from foundry.agent.models import PolicyConfig
from foundry.supervision.policy import PolicyEngine

WORKSPACE = Path("/workspace")  # any folder: the typical calls name paths relative to it
OUTSIDE = "/elsewhere/notes/todo.md"
VERBS = {
    "allow": ("run", "runs"),
    "deny": ("are denied", "is denied"),
    "human": ("ask you", "asks you"),
    "supervisor": ("go to the supervisor", "goes to the supervisor"),
}


@dataclass(frozen=True)
class TypicalCall:
    subject: str  # "reads inside the workspace"
    tool: str
    params: dict[str, Any]
    singular: bool = False  # "anything else asks", not "ask"


TYPICAL_CALLS = (
    TypicalCall("reads inside the workspace", "files.read_file", {"path": "notes/todo.md"}),
    TypicalCall("reads outside it", "files.read_file", {"path": OUTSIDE}),
    TypicalCall(
        "writes inside the workspace",
        "files.write_file",
        {"path": "notes/todo.md", "content": "Buy milk."},
    ),
    TypicalCall("writes outside it", "files.write_file", {"path": OUTSIDE, "content": "x"}),
    TypicalCall("shell commands", "shell.run", {"command": "make install"}),
    TypicalCall("reading a public web page", "web.fetch", {"url": "https://example.com/"}, True),
    TypicalCall("mail and messages", "mail.send_email", {"to": "ana@example.com", "body": "Hi"}),
    TypicalCall("database statements", "db.run_sql", {"sql": "UPDATE orders SET paid = 1"}),
    TypicalCall("anything else", "other.do_something", {}, singular=True),
)


@dataclass(frozen=True)
class SummaryClause:
    """What the policy does with one kind of call, and the rule that decides it (None: no rule
    matched, denied by default)."""

    subject: str
    action: str
    rule: str | None
    singular: bool = False

    def text(self) -> str:
        plural, singular = VERBS.get(self.action, (self.action, self.action))
        return f"{self.subject} {singular if self.singular else plural}"


def summarise_policy(config: PolicyConfig) -> list[SummaryClause]:
    """What `config` decides for each typical call, in TYPICAL_CALLS' order."""
    engine = PolicyEngine(config, WORKSPACE)
    clauses = []
    for call in TYPICAL_CALLS:
        decision = engine.fresh().decide("agent", call.tool, dict(call.params))
        clauses.append(SummaryClause(call.subject, decision.action, decision.rule, call.singular))
    return clauses


def plain_summary(clauses: list[SummaryClause]) -> str:
    """ "Reads inside the workspace run; reads outside it are denied; …; anything else asks
    you." """
    sentence = "; ".join(clause.text() for clause in clauses)
    return (sentence[:1].upper() + sentence[1:] + ".") if sentence else ""
