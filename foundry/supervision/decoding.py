"""Undoing the encodings a text can hide other text in, for the injection detector to read.

Each decoding is bounded: at most MAX_RUN_CHARS of an encoded run are decoded, compressed data
is inflated to at most MAX_INFLATED bytes (and INFLATION times its size), and bytes count as
text only when they read as printable UTF-8 or UTF-16. A run that decodes to an image, an
archive or a hash yields nothing.
"""

from __future__ import annotations

import base64
import binascii
import bz2
import html
import lzma
import re
import zlib
from collections.abc import Iterator
from urllib.parse import unquote_plus

MAX_RUN_CHARS = 8 * 1024
MAX_INFLATED = 16 * 1024
INFLATION = 16

Decoded = tuple[tuple[str, ...], str]
"""What a decoding found: the encodings undone, outermost first, and the text they hid."""

# A run may go on over line breaks, as MIME and PEM wrap base64 at 64 or 76 characters.
_BASE64_RUN = re.compile(
    r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{16,}(?:\r?\n[A-Za-z0-9+/_-]{4,})*={0,2}"
)
_LINE_BREAKS = re.compile(r"\r?\n")
_BASE32_RUN = re.compile(r"(?<![A-Za-z0-9+/=])[A-Z2-7]{16,}={0,6}(?![A-Za-z0-9+/])")
_HEX_RUN = re.compile(r"(?<![0-9A-Fa-f])[0-9A-Fa-f]{16,}(?![0-9A-Fa-f])|(?:\\x[0-9a-fA-F]{2}){4,}")
_SPACED_HEX = re.compile(
    r"(?<![0-9A-Za-z])(?:0x)?[0-9A-Fa-f]{2}(?:(?:,\s*|[ \t:;-])(?:0x)?[0-9A-Fa-f]{2}){7,}"
    r"(?![0-9A-Za-z])"
)
_PERCENT = re.compile(r"%[0-9a-fA-F]{2}")
_ENTITY = re.compile(r"&(?:#\d{2,7}|#x[0-9a-fA-F]{2,6}|[a-zA-Z]{2,8});")
_UNICODE_ESCAPE = re.compile(r"\\u[0-9a-fA-F]{4}")
# Unicode's tag block mirrors ASCII at U+E0000 and shows nothing: text written there is
# invisible to a person and read by a model.
_TAG_RUN = re.compile("[\U000e0020-\U000e007e]+")
_FROM_TAGS = {code: code - 0xE0000 for code in range(0xE0020, 0xE007F)}
# Variation selectors can carry a byte each (16 in U+FE00.., 240 in U+E0100..).
_SELECTOR_RUN = re.compile("[\ufe00-\ufe0f\U000e0100-\U000e01ef]{4,}")


def _selector_byte(char: str) -> int:
    code = ord(char)
    return code - 0xFE00 if code < 0xE0100 else code - 0xE0100 + 16


def _printable(text: str) -> bool:
    printable = sum(char.isprintable() or char in "\n\r\t" for char in text)
    return bool(text) and printable >= 0.95 * len(text) and any(c.isalpha() for c in text)


def _utf16(raw: bytes) -> str | None:
    """Bytes as UTF-16 text: with its byte-order mark, or ASCII-range text every other byte
    of which is zero."""
    if raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
        codec = "utf-16"
    elif len(raw) >= 8 and raw[1::2].count(0) >= 0.6 * (len(raw) // 2):
        codec = "utf-16-le"
    elif len(raw) >= 8 and raw[0::2].count(0) >= 0.6 * (len(raw) // 2):
        codec = "utf-16-be"
    else:
        return None
    try:
        return raw[: len(raw) // 2 * 2].decode(codec)
    except UnicodeDecodeError:
        return None


def _inflated(raw: bytes) -> tuple[str, bytes] | None:
    """(the compression, the bytes inflated) for gzip, zlib, bzip2 or xz: up to MAX_INFLATED,
    and to no more than INFLATION times the compressed size (text compresses some 3-10 times;
    a bomb a thousand), so that small bombs cannot use up a scan's budget."""
    most = min(MAX_INFLATED, INFLATION * len(raw) + 256)
    try:
        if raw[:2] == b"\x1f\x8b":
            return "gzip", zlib.decompressobj(31).decompress(raw, most)
        if len(raw) > 2 and raw[0] == 0x78 and (raw[0] * 256 + raw[1]) % 31 == 0:
            return "zlib", zlib.decompressobj().decompress(raw, most)
        if raw[:3] == b"BZh":
            return "bzip2", bz2.BZ2Decompressor().decompress(raw, most)
        if raw[:6] == b"\xfd7zXZ\x00":
            return "xz", lzma.LZMADecompressor().decompress(raw, most)
    except (zlib.error, OSError, EOFError, ValueError, lzma.LZMAError):
        return None
    return None


def text_of_bytes(raw: bytes, encodings: tuple[str, ...]) -> Decoded | None:
    """The text bytes hold, after the encodings that produced them: inflated first when they
    are compressed, read as UTF-8 or UTF-16; None for bytes that are not text."""
    inflated = _inflated(raw)
    if inflated is not None:
        compression, raw = inflated
        encodings = (*encodings, compression)
    if b"\x00" in raw:
        wide = _utf16(raw)
        return ((*encodings, "UTF-16"), wide) if wide is not None and _printable(wide) else None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return (encodings, text) if _printable(text) else None


def _from_base64(run: str) -> Decoded | None:
    body = _LINE_BREAKS.sub("", run).rstrip("=")
    if len(body) % 4 == 1 or body.lower() == body or body.upper() == body:
        return None  # base64 of anything has letters of both cases
    padded = body + "=" * (-len(body) % 4)
    try:
        raw = base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
    except (binascii.Error, ValueError):
        return None
    return text_of_bytes(raw, ("base64",))


def _from_base32(run: str) -> Decoded | None:
    body = run.rstrip("=")
    if len(body) % 8 in (1, 3, 6):
        return None
    try:
        raw = base64.b32decode(body + "=" * (-len(body) % 8))
    except (binascii.Error, ValueError):
        return None
    return text_of_bytes(raw, ("base32",))


def _from_hex(digits: str, encoding: str) -> Decoded | None:
    if len(digits) % 2:
        return None
    try:
        return text_of_bytes(bytes.fromhex(digits), (encoding,))
    except ValueError:
        return None


def _whole_forms(text: str) -> Iterator[Decoded]:
    """Encodings that run through a text rather than one run of it."""
    head = text[:MAX_RUN_CHARS]
    if _PERCENT.search(head):
        yield ("percent-encoding",), unquote_plus(head)
    if _ENTITY.search(text):
        yield ("HTML entities",), html.unescape(head)
    if _UNICODE_ESCAPE.search(text):
        unescaped = _UNICODE_ESCAPE.sub(lambda m: chr(int(m.group()[2:], 16)), head)
        yield ("\\u escapes",), unescaped
    tags = [run.translate(_FROM_TAGS) for run in _TAG_RUN.findall(text)]
    if tags:
        yield ("Unicode tag characters",), " ".join(tags)[:MAX_RUN_CHARS]
    for run in _SELECTOR_RUN.findall(text):
        raw = bytes(_selector_byte(char) for char in run[:MAX_RUN_CHARS])
        found = text_of_bytes(raw, ("variation selectors",))
        if found is not None:
            yield found


def decoded(text: str) -> Iterator[Decoded]:
    """What each encoded run or form in the text decodes to, when it decodes to text."""
    yield from _whole_forms(text)
    for run in _SPACED_HEX.finditer(text):
        digits = re.sub(r"0x|[^0-9A-Fa-f]", "", run.group()[:MAX_RUN_CHARS])
        found = _from_hex(digits, "spaced hex")
        if found is not None:
            yield found
    for run in _HEX_RUN.finditer(text):
        found = _from_hex(run.group()[:MAX_RUN_CHARS].replace("\\x", ""), "hex")
        if found is not None:
            yield found
    for run in _BASE32_RUN.finditer(text):
        found = _from_base32(run.group()[:MAX_RUN_CHARS])
        if found is not None:
            yield found
    for run in _BASE64_RUN.finditer(text):
        found = _from_base64(run.group()[:MAX_RUN_CHARS])
        if found is not None:
            yield found
