"""Hidden instructions in a tool's definition (tool poisoning): text meant for the model, not a
description of the tool.

A server's description and schema go into the model's context as they are, so a server can
tell the model what to do: read `~/.ssh/id_rsa` and pass it in a `sidenote` argument, keep that
from the user, call another tool first. Every string of the definition is read (the
description, the title, each property's description, title, default, enum and examples, the
annotations, the output schema), normalised as the injection detector reads text (look-alike
letters, invisible characters, case), and searched for:

- `secret-file`: a file that holds secrets or an agent's settings (`~/.ssh`, `id_rsa`, `.env`,
  `.aws/credentials`, `.netrc`, `/etc/passwd`, `mcp.json`, a wallet, a private key);
- `secret-in-argument`: a request to put secrets, file contents or the conversation into an
  argument ("include the contents of", "pass the token as `note`", a `sidenote`);
- `conceal`: telling the model to hide something from the user ("do not tell the user");
- `call-first`: telling the model to call or read something before using the tool;
- `hidden-tag`: markup that addresses the model (`<IMPORTANT>`, `<system>`, `<secret>`);
- and whatever the injection detector finds in the text (supervision/injection.py).

A heuristic, as the injection detector is: it sends the calls of a flagged tool to a person,
who sees the description and the part that was flagged. The real servers' descriptions in
bench/tool_definitions.py read clean.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel, ConfigDict

from foundry.supervision.injection import find_injection, normalise

EXCERPT_CHARS = 120
_NOT_TEXT = frozenset({"type", "$schema", "$ref", "$id", "format", "pattern"})

_SECRET_FILE = (
    r"~/\.ssh|\.ssh/|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|(?<![\w.])\.env\b|\.aws/|\.netrc\b"
    r"|\.npmrc\b|\.pypirc\b|\.git-credentials|\.docker/config|\.kube/config|/etc/(?:passwd|shadow)"
    r"|\bmcp\.json\b|claude_desktop_config|\bcredentials\.json\b|\bwallet\.dat\b|private key"
    r"|\bkeychain\b|\.gnupg"
)
_SECRETS = (
    r"(?:contents?|keys?|tokens?|secrets?|passwords?|credentials?|conversation|chat history"
    r"|previous messages|system prompt|environment variables?|api keys?|file)"
)
_PUT = r"(?:pass|put|send|provide|insert|add|include|append|embed|copy|paste)"
_INTO_ARGUMENT = (
    r"(?:as|in|into|inside|via|through|to) (?:the |this |a |an )?[`'\"]?[\w-]+[`'\"]? "
    r"(?:parameter|argument|field|param)\b"
)
_SECRET_IN_ARGUMENT = (
    r"\bside ?note\b"
    r"|\binclude (?:the )?(?:full |entire |complete |exact )?(?:contents?|text|body) of\b"
    rf"|\b{_PUT} (?:the |all |any |its |your )?(?:\w+ ){{0,4}}{_SECRETS}\b[^.\n]{{0,60}}?\b"
    + _INTO_ARGUMENT
)
_CONCEAL = (
    r"\b(?:do not|don't|dont|never|without) (?:tell|telling|mention|mentioning|inform|informing"
    r"|reveal|revealing|show|showing|notify|notifying|alert|alerting|let)\b[^.\n]{0,40}?\buser\b"
    r"|\b(?:hide|conceal|keep)\b[^.\n]{0,40}?\b(?:from|secret from) (?:the )?user\b"
    r"|\buser (?:must|should|need) not (?:know|see|be told|notice)\b"
    r"|\bdo not (?:mention|disclose|reveal) (?:this|that|it)\b"
)
_CALL_FIRST = (
    r"\bbefore (?:using|calling|invoking|running) (?:this|the) tool,? (?:you )?(?:must |should "
    r"|need to |always |have to )?(?:first )?(?:call|use|read|run|invoke|fetch|get|open|load)\b"
    r"|\b(?:must|always) (?:first )?(?:call|invoke|run|read) [^.\n]{1,60}? (?:first|beforehand)\b"
    r"|\bfirst (?:call|invoke|read) (?:the )?[`'\"]?[\w./~-]+[`'\"]? (?:tool |file )?(?:and|then)\b"
)
_HIDDEN_TAG = (
    r"<\s*/?\s*(?:important|critical|hidden|secret|mandatory|override|instructions?|system"
    r"|note to (?:the )?(?:ai|model|assistant))\b[^<>]{0,40}>"
)
_SIGNALS = tuple(
    (name, re.compile(pattern))
    for name, pattern in (
        ("secret-file", _SECRET_FILE),
        ("secret-in-argument", _SECRET_IN_ARGUMENT),
        ("conceal", _CONCEAL),
        ("call-first", _CALL_FIRST),
        ("hidden-tag", _HIDDEN_TAG),
    )
)


class DescriptionFlag(BaseModel):
    """Why a tool's definition reads like instructions to the model, and where."""

    model_config = ConfigDict(frozen=True)

    signal: str  # one of the signals above, or the injection detector's
    where: str  # `description`, `inputSchema.properties.note.description`
    excerpt: str  # the flagged part, as written

    def describe(self) -> str:
        return f"{self.signal} in its {self.where}: {self.excerpt!r}"


def judge_definition(definition: dict[str, Any]) -> DescriptionFlag | None:
    """The first hidden instruction in a tool's definition, or None when it reads as a
    description of the tool."""
    for where, text in definition_texts(definition):
        flag = judge_text(text, where)
        if flag is not None:
            return flag
    signal = find_injection({"description": _all_text(definition)})
    if signal is None:
        return None
    return DescriptionFlag(signal=signal.signal, where="definition", excerpt=signal.excerpt)


def judge_text(text: str, where: str) -> DescriptionFlag | None:
    """The first of this module's signals in one string of a definition."""
    read = normalise(text)
    for name, pattern in _SIGNALS:
        found = pattern.search(read)
        if found is not None:
            return DescriptionFlag(signal=name, where=where, excerpt=_excerpt(text, read, found))
    return None


def definition_texts(value: Any, where: str = "") -> Iterator[tuple[str, str]]:
    """(where, text) for every string of a definition a model reads (not its JSON types)."""
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, dict):
        for key, item in value.items():
            if key not in _NOT_TEXT:
                yield from definition_texts(item, f"{where}.{key}" if where else str(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from definition_texts(item, f"{where}[{index}]")


def _all_text(definition: dict[str, Any]) -> str:
    """The definition's strings as one text, so that an instruction split across fields is
    read whole by the injection detector."""
    return "\n".join(text for _, text in definition_texts(definition))


def _excerpt(text: str, read: str, found: re.Match[str]) -> str:
    """The flagged part with some of what surrounds it; from the original text when
    normalising kept its length, else from the normalised one."""
    source = text if len(text) == len(read) else read
    start = max(0, found.start() - 30)
    return " ".join(source[start : found.end() + 60].split())[:EXCERPT_CHARS]
