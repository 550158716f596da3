"""A chat's status line, derived from its events and what its model call waits for."""

from __future__ import annotations

from dataclasses import dataclass, field

from foundry.session.events import (
    ApprovalRequested,
    ApprovalResolved,
    EventBody,
    TokenDelta,
    ToolServerChanged,
    TurnFinished,
    TurnStarted,
)

ENDINGS = {
    "reply": "Ready.",
    "cancelled": "Stopped; what was written is kept.",
    "blocked": "A supervisor blocked this turn (see the timeline).",
    "max_turns": "Stopped at the agent's maxChatTurns.",
    "error": "The model failed (the conversation says why).",
}
FAILED = "The model failed: "


@dataclass
class ChatStatus:
    """Fed with a session's events (`apply`); `line()` says where the chat stands now. An
    action's own outcome (`say`) shows until the next event changes the state."""

    answering: bool = False
    elsewhere: bool = False  # the turn runs in another Foundry process
    writing: bool = False  # the reply's first token has arrived
    ended: str = ""  # how the last turn ended, in words
    approvals: dict[str, str] = field(default_factory=dict)  # id -> the tool it waits for
    failed_servers: dict[str, str] = field(default_factory=dict)  # name -> why
    model_wait: str | None = None  # what the model call waits behind, in words
    said: str = ""

    def apply(self, body: EventBody) -> None:
        if isinstance(body, TurnStarted):
            self.answering, self.writing, self.said, self.ended = True, False, "", ""
        elif isinstance(body, TokenDelta):
            self.writing, self.model_wait = True, None
        elif isinstance(body, TurnFinished):
            self.answering = self.elsewhere = False
            self.said, self.model_wait = "", None
            if not (body.ended_by == "error" and self.ended.startswith(FAILED)):
                self.ended = ENDINGS.get(body.ended_by, "")
            self.approvals.clear()
        elif isinstance(body, ApprovalRequested):
            self.approvals[body.approval_id] = body.tool
        elif isinstance(body, ApprovalResolved):
            self.approvals.pop(body.approval_id, None)
        elif isinstance(body, ToolServerChanged):
            self._server(body)

    def _server(self, body: ToolServerChanged) -> None:
        if body.state == "failed":
            self.failed_servers[body.name] = body.error or "it stopped"
        else:
            self.failed_servers.pop(body.name, None)

    def say(self, text: str) -> None:
        """What an action did (or why it did not), until the next change of state."""
        self.said = text

    def failed(self, error: str) -> None:
        """The turn ended with `error` (its text comes with the turn's result)."""
        self.answering, self.ended = False, f"{FAILED}{error}"

    def line(self) -> str:
        servers = "; ".join(
            f"Tool server {name!r} failed: {why}" for name, why in self.failed_servers.items()
        )
        return " · ".join(part for part in (self._main(), servers) if part)

    def _main(self) -> str:
        if self.approvals:
            what = ", ".join(dict.fromkeys(_asked(tool) for tool in self.approvals.values()))
            return f"Waiting for your approval: {what} — answer below or in Approvals."
        if self.elsewhere:
            return "Answering in another Foundry process…"
        if self.answering and self.model_wait:
            return f"Waiting for the model: {self.model_wait}."
        if self.answering:
            return "The agent is writing…" if self.writing else "The agent is answering…"
        return self.said or self.ended


def _asked(tool: str) -> str:
    """What an approval asks about: a tool call, or a message a supervisor holds for review."""
    if tool.startswith("supervision.review_"):
        which = "reply" if tool.endswith("response") else "message"
        return f"the {which} a supervisor holds for your review"
    return tool
