"""One session's results supervised, as the engine gives them to a chat, a gateway session or
the editor's Try-it: each result screened (supervision/results.py) and followed by the session's
rule of two (supervision/untrusted.py), whose concerns its gate applies."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from foundry.agent.document import AgentDocument
from foundry.agent.models import GuardianSupervisorEntry
from foundry.agent.secrets import resolved_secrets
from foundry.orchestration.tools import IN_PROCESS_KINDS
from foundry.session.events import EventBody, ToolConcernRaised
from foundry.supervision.concerns import FLAGGED_RESULT
from foundry.supervision.guardian import GuardianSupervisor
from foundry.supervision.outgoing import OutgoingMask
from foundry.supervision.paths import server_folders
from foundry.supervision.results import ResultScreen, ScreenedResult
from foundry.supervision.untrusted import UntrustedContent, tool_facts
from foundry.tools.host import ToolResult, content_text


class SessionResults:
    """Screens a session's results and keeps what they taught its rule of two."""

    def __init__(self, screen: ResultScreen, untrusted: UntrustedContent) -> None:
        self.screen = screen
        self.untrusted = untrusted

    def apply(self, body: EventBody) -> None:
        """Follow the session's events (its results taint it, a user message clears it)."""
        self.untrusted.apply(body)

    async def screened(
        self,
        call_id: str,
        tool: str,
        text: str,
        content: Sequence[dict[str, Any]] = (),
        structured: dict[str, Any] | None = None,
        meta: dict[str, Any] | None = None,
    ) -> tuple[ScreenedResult, ToolConcernRaised | None]:
        """The result as its reader may see it, and the event to record if it was flagged."""
        screened = await self.screen.screened(text, content, structured, meta)
        signal = screened.injection
        if signal is None:
            return screened, None
        flagged = ToolConcernRaised(
            tool=tool,
            concern=FLAGGED_RESULT,
            reason=f"its result reads like a prompt injection: {signal.describe()}",
            detail={"signal": signal.model_dump(mode="json")},
            call_id=call_id,
        )
        return screened, flagged

    async def shown(
        self, call_id: str, tool: str, result: ToolResult
    ) -> tuple[ToolResult, ToolConcernRaised | None]:
        """A result as its reader may see it: every string masked (secrets; personal data where
        the guardian says so), said in a note; withheld if the guardian blocks its text; and
        the event to record if it reads like an injection."""
        screened, flagged = await self.screened(
            call_id, tool, result.text, result.content, result.structured, result.meta
        )
        if screened.withheld:
            return ToolResult(text=screened.text, is_error=True), flagged
        shown: dict[str, Any] = {"text": screened.text, "content": screened.content}
        shown.update(meta=screened.meta, structured=screened.structured)
        if result.error is not None and result.error.data is not None:  # a server's error data
            data = self.screen.masked(result.error.data)
            shown["error"] = result.error.model_copy(update={"data": data})
        return result.model_copy(update=shown), flagged


def agent_guardian(document: AgentDocument) -> GuardianSupervisor | None:
    """The agent's first enabled guardian supervisor, if it has one."""
    assert document.agent is not None
    entries = document.agent.supervisors
    return next(
        (GuardianSupervisor(entry) for entry in entries
         if isinstance(entry, GuardianSupervisorEntry) and entry.enabled),
        None,
    )  # fmt: skip


def session_results(
    document: AgentDocument, tools: Any, guardian: GuardianSupervisor | None = None
) -> SessionResults:
    """The result supervision of a session of `document`'s agent calling `tools`: masking with
    the agent's own secrets (what its `env://` references resolve to now) and `guardian`'s, and
    its servers' kinds for telling what reads and sends outside. Reads files: not on a loop."""
    agent = document.agent
    assert agent is not None
    mask = OutgoingMask(resolved_secrets(document.data, document.base_dir))
    sites = server_folders(agent.mcp_servers, document.base_dir)
    kinds: dict[str, str | None] = {
        name: getattr(site, "kind", None) for name, site in sites.items()
    }
    kinds.update(IN_PROCESS_KINDS)
    untrusted = UntrustedContent(tool_facts(tools, kinds))
    return SessionResults(ResultScreen(mask, guardian, text_of=content_text), untrusted)
