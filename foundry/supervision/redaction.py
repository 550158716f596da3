"""What a supervisor may see of a tool call's parameters: secrets masked, content redacted, and
the injection flag.

Secrets (see `secrets.py`) are masked always, content shown or not: nobody who reviews a call
needs a password to judge it, and traces keep what reviewers see.

Content isolation: unless content is exposed, the values under content-like keys and every long
string become their length, SHA-256 and detected type, so a supervisor judges the structure of a
call and never reads (or obeys) the text inside it.

The injection flag is `foundry.supervision.injection`'s detector, named here too for the callers
that show it beside the redacted parameters (the API, the CLI, the inbox).
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from foundry.supervision.injection import injection_risk
from foundry.supervision.secrets import mask_secrets

__all__ = ["content_metadata", "detect_content_type", "injection_risk", "redact_params"]

CONTENT_KEYS = frozenset({"content", "body", "data", "file_content", "text"})
MAX_PLAIN_BYTES = 256

HTML_START = re.compile(
    r"<(?:!doctype\s+html|html|head|body|div|span|p|a|table|script|style|meta|link|title|h[1-6]"
    r"|ul|ol|li|form|img|br|iframe|b|i|em|strong|pre|code|section|article|header|footer|nav"
    r"|main)\b",
    re.IGNORECASE,
)
XML_START = re.compile(r"<(?:\?xml|!doctype|!--|[A-Za-z_][\w.:-]*[\s/>])", re.IGNORECASE)


def redact_params(params: dict[str, Any], expose_content: bool = False) -> dict[str, Any]:
    """A copy of `params` with secrets masked and content replaced by its metadata, unless
    content is exposed."""
    if expose_content:
        shown = dict(params)
    else:  # content's metadata is that of the content itself: its true size, its own hash
        shown = {key: _redact(key, value) for key, value in params.items()}
    masked: dict[str, Any] = mask_secrets(shown)
    return masked


def _redact(key: str | None, value: Any) -> Any:
    if key is not None and key.lower() in CONTENT_KEYS and isinstance(value, str | bytes):
        return content_metadata(value)
    if key is not None and key.lower() in CONTENT_KEYS and isinstance(value, dict | list):
        return content_metadata(json.dumps(value, ensure_ascii=False, sort_keys=True))
    if isinstance(value, dict):
        return {name: _redact(str(name), item) for name, item in value.items()}
    if isinstance(value, list | tuple):
        return [_redact(None, item) for item in value]
    if isinstance(value, bytes) or (
        isinstance(value, str) and len(value.encode("utf-8", "surrogatepass")) > MAX_PLAIN_BYTES
    ):
        return content_metadata(value)
    return value


def content_metadata(value: str | bytes) -> dict[str, Any]:
    """What is shown of content instead of the content: its size in bytes, hash and type."""
    raw = value if isinstance(value, bytes) else value.encode("utf-8", "surrogatepass")
    return {
        "content_length": len(raw),
        "content_sha256": hashlib.sha256(raw).hexdigest(),
        "content_type_detected": detect_content_type(raw),
    }


def detect_content_type(raw: bytes) -> str:
    """JSON (an object or array that parses), XML or HTML (by the leading tag), binary (NUL
    bytes or not UTF-8), else plain text."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return "application/octet-stream"
    if "\x00" in text:
        return "application/octet-stream"
    start = text.lstrip("\ufeff \t\r\n")
    if start[:1] in ("{", "[") and _parses_as_json(start):
        return "application/json"
    if HTML_START.match(start):
        return "text/html"
    if XML_START.match(start):
        return "text/xml"
    return "text/plain"


def _parses_as_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True
