"""Text from models and tools made readable on screen: written escapes decoded, controls shown."""

from __future__ import annotations

import re

# escapes a model or a repr() writes out as text: "\n" (two characters) and the like
_WRITTEN_ESCAPE = re.compile(r"\\(?:r\\n|[ntr\"'\\/]|u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2})")
_SIMPLE = {"n": "\n", "t": "\t", "r": "\n", '"': '"', "'": "'", "\\": "\\", "/": "/"}
# terminal colour and cursor sequences, and terminal titles (OSC ... BEL or ST)
_TERMINAL = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]")
# characters that would reorder or hide the text around them (bidirectional overrides)
_REORDERING = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def readable(text: str) -> str:
    """`text` as a person should read it: "\\n" written out as two characters is a line break,
    "\\u00e9" is é, terminal escape sequences are dropped, and the other control characters
    are shown as symbols (␀, ␛, [U+202E]) instead of acting on the display."""
    if "\\" in text:
        text = _WRITTEN_ESCAPE.sub(_decoded, text)
    if "\x1b" in text:
        text = _TERMINAL.sub("", text)
    return "".join(_shown(char) for char in text)


def _decoded(match: re.Match[str]) -> str:
    escape = match.group(0)[1:]
    if escape == "r\\n":
        return "\n"
    if escape[0] in "ux":
        character = chr(int(escape[1:], 16))
        return character if character.isprintable() or character in "\n\t" else match.group(0)
    return _SIMPLE[escape]


def _shown(char: str) -> str:
    code = ord(char)
    if char in "\n\t":
        return char
    if code < 0x20:
        return chr(0x2400 + code)  # the Control Pictures block: ␀ ␁ ... ␟
    if code == 0x7F:
        return "␡"
    if 0x80 <= code < 0xA0 or char in _REORDERING:
        return f"[U+{code:04X}]"
    return char
