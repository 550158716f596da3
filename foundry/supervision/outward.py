"""Which tool calls reach outside the machine: whose results come from outside, which send out.

The rule of two (untrusted.py) asks a person before a call that sends data out or acts outside
once the session has read content from outside; this module tells which calls are which from
what is known of the tool: its server's kind (tools/identity.py), its name, its annotations and
its arguments. A known local kind (filesystem, git, time, memory, sqlite, ...) is closed-world
whatever its tools claim; a known networked one (fetch, github, slack, browsers, search) is
open-world whatever they claim. For a server of no known kind MCP's defaults hold: a tool is
open-world and not read-only unless its annotations say otherwise. Annotations never outweigh a
name: a tool named `post_message` sends whatever its annotations say.

A call sends data out when its name says it does (post, send, create, comment, push, ...), when a
URL among its arguments carries data (a query, credentials, a path or host name beyond a plain
page's: the fetch that exfiltrates), when it hands a body to send (`body`, `data`, a `method`
other than GET), when it types, fills or uploads in a browser, or when it is an open-world tool
of an unknown server that neither reads by its name nor is declared read-only.
"""

from __future__ import annotations

import functools
import re
import urllib.parse
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

BROWSER_KINDS = frozenset({"playwright", "puppeteer"})
# what a browser tool does that carries data into a page (a click or a snapshot does not)
BROWSER_SENDING = frozenset(
    {"type", "fill", "press", "upload", "evaluate", "run", "select", "drop", "paste"}
)
SENDING_WORDS = frozenset(
    {
        "send", "post", "reply", "comment", "create", "update", "edit", "write", "push",
        "merge", "publish", "upload", "share", "invite", "email", "mail", "tweet", "submit",
        "fork", "delete", "remove", "assign", "add", "react", "notify", "transfer", "deploy",
        "dispatch", "trigger", "run", "exec", "execute", "set", "put", "patch", "close",
        "reopen", "approve", "star", "follow", "dm", "broadcast", "forward", "schedule",
        "invoke", "move", "rename", "lock", "archive", "label", "resolve", "dismiss", "mark",
        "subscribe", "install", "sync", "upsert", "insert", "save", "store", "pay", "order",
    }
)  # fmt: skip
READING_WORDS = frozenset(
    {
        "get", "list", "search", "read", "find", "fetch", "view", "show", "describe",
        "lookup", "snapshot", "screenshot", "diff", "status", "history", "info", "count",
        "navigate", "hover", "wait", "tabs", "console", "back", "inspect", "retrieve",
        "browse", "scrape", "crawl", "extract", "preview", "download", "whoami",
    }
)  # fmt: skip
# arguments whose value a tool sends on as it is: what a read by name must not carry
SENT_ARGUMENTS = frozenset(
    {"body", "data", "payload", "json", "form", "headers", "files", "attachment", "attachments"}
)
READING_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
MAX_PLAIN_SEGMENTS = 8  # a page's path is seldom deeper
MAX_PLAIN_WORD = 24  # a word of a page's path or host name; a longer run is data
MAX_PLAIN_SEGMENT = 64
_NAME_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]{0,15}://")
_PLAIN_SEGMENT = re.compile(r"^[A-Za-z0-9._~-]*$")
_WORD_SPLIT = re.compile(r"[._~-]+")


@dataclass(frozen=True)
class ToolFacts:
    """What is known of a tool for telling its reach."""

    name: str  # as the model calls it: `server.tool`
    tool: str  # as its server names it
    kind: str | None = None  # its server's kind (tools/identity.py), None when unknown
    annotations: Mapping[str, Any] = field(default_factory=dict)  # the server's claims
    own: bool = False  # one of Foundry's own tools (a task's workspace, a team): local


def reads_outside(tool: ToolFacts) -> bool:
    """Whether the tool's results may come from outside (open-world): untrusted content."""
    if tool.own:
        return False
    known = _kind_network(tool.kind)
    if known is not None:
        return known
    return tool.annotations.get("openWorldHint") is not False


def sends_out(tool: ToolFacts, arguments: Mapping[str, Any]) -> str | None:
    """Why the call sends data out or acts outside (a clause: "its name says it posts"); None
    when it does neither."""
    if tool.own or _kind_network(tool.kind) is False:
        return None
    for text in _strings(arguments):
        carried = data_in_url(text)
        if carried is not None:
            return f"its URL carries data to {_host(text)} ({carried})"
    words = name_words(tool.tool)
    if tool.kind in BROWSER_KINDS:
        typed = next((word for word in words if word in BROWSER_SENDING), None)
        return None if typed is None else f"it puts data into a web page ({typed!r})"
    sending = next((word for word in words if word in SENDING_WORDS), None)
    if sending is not None:
        return f"its name says it acts outside ({sending!r})"
    handed = _handed_on(arguments)
    if handed is not None:
        return handed
    return _by_annotations(tool, words)


def _by_annotations(tool: ToolFacts, words: list[str]) -> str | None:
    """What a tool that names no sending tells by its annotations (MCP's defaults when absent)."""
    claims = tool.annotations
    open_world = _kind_network(tool.kind) or claims.get("openWorldHint") is not False
    if not open_world:
        return None
    if claims.get("destructiveHint") is True and claims.get("readOnlyHint") is not True:
        return "it is declared destructive and reaches outside"
    if any(word in READING_WORDS for word in words) or _kind_network(tool.kind):
        return None  # a read by its name, or a known server's tool that names no sending
    if claims.get("readOnlyHint") is True:
        return None
    return "it is not declared read-only and may reach outside (MCP's defaults)"


def _handed_on(arguments: Mapping[str, Any]) -> str | None:
    """A body or an HTTP method among the arguments: what a read by name must not carry."""
    method = arguments.get("method")
    if isinstance(method, str) and method.strip().upper() not in READING_METHODS:
        return f"it sends an HTTP {method.strip().upper()}"
    given = sorted(
        key for key, value in arguments.items() if key.lower() in SENT_ARGUMENTS and value
    )
    return f"it sends {', '.join(given)} on" if given else None


def data_in_url(text: str) -> str | None:
    """What data a URL carries to the server it names (None for a plain page, or not a URL):
    a query, credentials, or a path or host name that reads as data rather than words."""
    stripped = text.strip()
    if not _SCHEME.match(stripped):
        return None
    try:
        parts = urllib.parse.urlsplit(stripped)
        host = parts.hostname or ""
    except ValueError:
        return "a URL that does not parse"
    if parts.query:
        return "a query"
    if parts.username or parts.password:
        return "credentials"
    if any(_data_like(label) for label in host.split(".")):
        return "data in its host name"
    segments = [segment for segment in parts.path.split("/") if segment]
    if len(segments) > MAX_PLAIN_SEGMENTS:
        return "a long path"
    if any(_data_like(segment) for segment in segments):
        return "data in its path"
    return None


def _data_like(segment: str) -> bool:
    """Whether a path segment or host label reads as data (encoded, random, long) not words."""
    if len(segment) > MAX_PLAIN_SEGMENT or not _PLAIN_SEGMENT.match(segment):
        return True  # percent-encoded, or characters a page's name does not use
    return any(_random_word(word) for word in _WORD_SPLIT.split(segment))


def _random_word(word: str) -> bool:
    """A run that reads as an encoding or a token: long, letters mixed with digits, or capitals
    scattered through it (base64) rather than starting words (`getElementById`)."""
    if len(word) > MAX_PLAIN_WORD:
        return True
    has_digit = any(char.isdigit() for char in word)
    has_letter = any(char.isalpha() for char in word)
    if len(word) >= 8 and has_digit and has_letter:
        return True
    capitals = sum(char.isupper() for char in word[1:])
    return len(word) >= 12 and capitals * 4 >= len(word)


def name_words(name: str) -> list[str]:
    """A tool's name as lower-case words: `slack_post_message`, `createIssue`."""
    return [word.lower() for word in _NAME_WORDS.findall(name)]


def _host(url: str) -> str:
    try:
        return urllib.parse.urlsplit(url.strip()).hostname or "an unnamed host"
    except ValueError:
        return "an unreadable host"


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


@functools.cache
def _network_kinds() -> dict[str, bool]:
    """Each known kind of server and whether it reaches the network (tools/identity.py)."""
    from foundry.tools.identity import KINDS  # the tools package: the MCP SDK, when needed

    return {kind.name: kind.network for kind in KINDS}


def _kind_network(kind: str | None) -> bool | None:
    """Whether a kind of server reaches outside; None for an unknown or no kind."""
    return None if kind is None else _network_kinds().get(kind)
