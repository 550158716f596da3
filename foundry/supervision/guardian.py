"""The guardian supervisor: masks personal data and blocks messages with forbidden keywords."""

from __future__ import annotations

import asyncio
import functools
import html
import re
import unicodedata
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Literal, NamedTuple

import phonenumbers

from foundry.agent.models import GuardianSupervisorEntry
from foundry.llm.base import ChatMessage
from foundry.session.supervisors import Direction, Reach, SupervisionResult

if TYPE_CHECKING:
    from foundry.session.chat import ChatSession

GUARDIAN_BUDGET_S = 10.0  # its checks take milliseconds; this only bounds a pathological text
DEFAULT_REGION = "US"  # how numbers written without a country code are read
# a longer text is screened on a worker thread: the loop it would hold runs the chat engine and
# the gateway. Measured on 4 KiB: 1 ms (prose) to 5 ms (digits, read as possible phones) to mask
# and match, against 0.1 ms for the thread hop; a megabyte holds the loop for seconds.
OFF_LOOP_CHARS = 4096


def _luhn_valid(digits: str) -> bool:
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char)
        if position % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def _card(match: re.Match[str]) -> bool:
    digits = re.sub(r"\D", "", match.group())
    return 13 <= len(digits) <= 19 and _luhn_valid(digits)


def _always(match: re.Match[str]) -> bool:
    return True


# kind -> (pattern, what replaces it, extra check on a match); phones are found by phonenumbers.
# They take word characters, ". + @ -" and spaces only (see PIECE).
PII_PATTERNS: dict[str, tuple[re.Pattern[str], str, Callable[[re.Match[str]], bool]]] = {
    "email": (re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"), "[email]", _always),
    "card": (re.compile(r"\b(?:\d[ -]?){12,18}\d\b"), "[card number]", _card),
    "national_id": (
        re.compile(r"\b\d{3}-\d{2}-\d{4}\b|\b[A-CEGHJ-PR-TW-Z]{2}\d{6}[A-D]\b"),
        "[national id]",
        _always,
    ),
}
PHONE_PLACEHOLDER = "[phone]"
MASK_ORDER = ("email", "card", "national_id", "phone")  # cards before phones: both are digits
# shapes a valid number of some region can take that a person means as a date, a version or an
# address (phonenumbers already leaves them alone for the default region)
NOT_A_PHONE = re.compile(r"\d{1,4}([./-])\d{1,2}\1\d{1,4}|\d+(?:\.\d+){3,}")


# A long text is worked on a piece at a time: one call of `re` or `unicodedata` over a megabyte
# holds the GIL for 50 to 100 ms, and with it the event loop of a guardian screening on a worker
# thread. Folding may cut before an ASCII character, a starter that no composition takes second
# (nothing before the cut composes or is reordered with anything after it); masking may cut after
# a character that none of the PII patterns takes (a line break, a comma, a quote, ...).
PIECE = 64 * 1024
_BEFORE_ASCII = re.compile(r"[\x00-\x7f]")
_AFTER_NO_PII = re.compile(r"(?<=[^\w.+@ -])")


def pieces(text: str, cut: re.Pattern[str], size: int) -> Iterator[str]:
    """`text` in pieces of about `size` characters, each cut where `cut` first matches."""
    start = 0
    while start < len(text):
        found = cut.search(text, start + size)
        end = found.start() if found else len(text)
        yield text[start:end]
        start = end


def _mask_pattern(text: str, kind: str, counts: dict[str, int]) -> str:
    pattern, placeholder, check = PII_PATTERNS[kind]

    def replace(match: re.Match[str]) -> str:
        if not check(match):
            return match.group()
        counts[kind] = counts.get(kind, 0) + 1
        return placeholder

    return "".join(pattern.sub(replace, piece) for piece in pieces(text, _AFTER_NO_PII, PIECE))


def _mask_phones(text: str, region: str, counts: dict[str, int]) -> str:
    """Valid numbers only (phonenumbers' VALID leniency): dates, versions and ids stay."""
    leniency = phonenumbers.Leniency.VALID
    spans = [
        (match.start, match.end)
        for match in phonenumbers.PhoneNumberMatcher(text, region, leniency=leniency)
        if not NOT_A_PHONE.fullmatch(match.raw_string)
    ]
    for start, end in reversed(spans):
        text = text[:start] + PHONE_PLACEHOLDER + text[end:]
    if spans:
        counts["phone"] = counts.get("phone", 0) + len(spans)
    return text


def mask_pii(
    text: str, kinds: tuple[str, ...], region: str = DEFAULT_REGION
) -> tuple[str, dict[str, int]]:
    """The text with each kind of personal data replaced by a placeholder, and how many of each."""
    counts: dict[str, int] = {}
    for kind in MASK_ORDER:
        if kind not in kinds:
            continue
        if kind == "phone":
            text = _mask_phones(text, region, counts)
        else:
            text = _mask_pattern(text, kind, counts)
    return text, counts


# A match can only run past a cut through a digit or a phone's opening "(", "[" or "+": between
# two digits of one phone number lie at most ten characters besides spaces, commas and dashes
# (an extension word like "extensión:"). So no match crosses a cut that follows a space and has
# more such characters than that since the last digit or opening sign, whatever text follows.
RISKY = re.compile("[\\d(\\[\uff08\uff3b+\uff0b]")  # digits; ( [ + and full-width forms
SEPARATORS = re.compile(r"[\s,\-]")
QUIET_CHARACTERS = 11


def safe_cut(text: str) -> int:
    """The length of the longest prefix of `text` that no match can run past."""
    for cut in range(len(text), 0, -1):
        if text[cut - 1].isspace() and _quiet_before(text, cut):
            return cut
    return 0


def _quiet_before(text: str, cut: int) -> bool:
    quiet = 0
    for index in range(cut - 1, -1, -1):
        char = text[index]
        if RISKY.match(char):
            return False
        if not SEPARATORS.match(char):
            quiet += 1
            if quiet >= QUIET_CHARACTERS:
                return True
    return True


class ReplyMasker:
    """Masks a reply while it streams: it holds back the tail a match could still grow into and
    releases the text before it masked, so what it releases is the mask of the whole reply."""

    def __init__(self, kinds: tuple[str, ...], region: str = DEFAULT_REGION) -> None:
        self._kinds = kinds
        self._region = region
        self._held = ""

    def feed(self, text: str) -> str:
        """The masked text that can be shown now that `text` has arrived ("" while held)."""
        self._held += text
        cut = safe_cut(self._held)
        released, self._held = self._held[:cut], self._held[cut:]
        return mask_pii(released, self._kinds, self._region)[0] if released else ""

    def finish(self) -> str:
        """The rest of the reply, masked: the stream has ended."""
        rest, self._held = self._held, ""
        return mask_pii(rest, self._kinds, self._region)[0] if rest else ""


# Inline markup that is not seen where text is shown, so a word split by it reads whole:
# inline HTML tags and comments (`pass<b></b>word`, `drop <b>table</b>`), and Markdown emphasis,
# strike-through and code before a letter (`pass**word**`, `drop **table**`). A block tag
# (`</p><p>`), a space or a `_` (which Markdown shows inside a word) separates, and stays.
INLINE_TAGS = (
    "a|abbr|b|bdi|bdo|cite|code|del|dfn|em|font|i|ins|kbd|mark|q|s|samp|small|span|strike|"
    "strong|sub|sup|tt|u|var|wbr"
)
_INLINE_TAG = re.compile(rf"<(?:/?(?:{INLINE_TAGS})\b[^<>]{{0,200}}|!--.{{0,200}}?--)>", re.DOTALL)
# its first character, then (looking back) no sign before it: a fast scan for that character
_EMPHASIS = re.compile(r"[*~`](?<![^\w\s].)[*~`]*(?=\w)", re.DOTALL)
_MARKUP = "*~`<&"


@functools.cache
def format_characters() -> tuple[str, ...]:
    """Unicode's format characters (Cf: zero-width spaces and joiners, soft hyphens, direction
    marks, tags); there are none outside planes 0, 1 and 14 (read once: 20 ms)."""
    codes = (*range(0x20000), *range(0xE0000, 0xE1000))
    return tuple(char for code in codes if unicodedata.category(char := chr(code)) == "Cf")


def folded(text: str) -> str:
    """`text` as blocked words are looked for in it: without format characters, in Unicode
    compatibility form (NFKC: full-width and styled letters, ligatures), case-folded."""
    if text.isascii():
        return text.lower()
    return "".join(map(_folded, pieces(text, _BEFORE_ASCII, PIECE)))


def _folded(text: str) -> str:
    formats = [char for char in format_characters() if char in text]
    if formats:
        text = text.translate(dict.fromkeys(map(ord, formats)))
    text = unicodedata.normalize("NFKC", text).casefold()
    return text if unicodedata.is_normalized("NFKC", text) else unicodedata.normalize("NFKC", text)


def unmarked(text: str) -> str:
    """Folded text as it reads once shown: entities read (`pa&shy;ss`, `&#115;`), inline markup
    dropped."""
    if "&" in text:
        text = html.unescape(text)
    return _EMPHASIS.sub("", _INLINE_TAG.sub("", folded(text)))


class Screening(NamedTuple):
    """What the guardian finds in a text: the blocked words, and the text masked."""

    blocked: list[str]
    masked: str
    counts: dict[str, int]


class GuardianSupervisor:
    """Runs no model: regular expressions, phonenumbers and keyword lists, so it is fast and
    predictable."""

    def __init__(self, entry: GuardianSupervisorEntry, region: str = DEFAULT_REGION) -> None:
        self.id = entry.id
        self.name = entry.name or "Guardian"
        self.fallback_behavior: Literal["allow", "block"] = "block"
        self._kinds = tuple(entry.config.mask_pii)
        self._region = region
        self._keywords = [
            (word, folded(word), unmarked(word))
            for word in entry.config.block_keywords
            if folded(word).strip()
        ]
        self.directions: frozenset[Direction] = frozenset(entry.config.apply_to)
        self.reach: Reach = "message"
        self.budget_s = GUARDIAN_BUDGET_S

    def reply_masker(self) -> ReplyMasker | None:
        """What masks a reply as it streams, if this guardian masks replies."""
        if "response" not in self.directions or not self._kinds:
            return None
        return ReplyMasker(self._kinds, self._region)

    def blocked_words(self, text: str) -> list[str]:
        """The blocked keywords `text` contains, as configured: matched on both folded (see
        `folded`), and on the text as it reads once shown when it holds markup (`unmarked`)."""
        plain = folded(text)
        shown = unmarked(text) if any(char in text for char in _MARKUP) else plain
        return [
            word
            for word, in_plain, in_shown in self._keywords
            if in_plain in plain or in_shown in shown
        ]

    def mask(self, text: str) -> tuple[str, dict[str, int]]:
        """The text with the personal data this guardian masks replaced, and the counts."""
        return mask_pii(text, self._kinds, self._region)

    def screen(self, text: str, masking: bool = True) -> Screening:
        """The blocked words in `text`, and `text` with its personal data masked (as it is
        when not `masking`)."""
        masked, counts = self.mask(text) if masking else (text, {})
        return Screening(self.blocked_words(text), masked, counts)

    async def screened(self, text: str, masking: bool = True) -> Screening:
        """`screen`, on a worker thread when the text is long (see OFF_LOOP_CHARS)."""
        if len(text) < OFF_LOOP_CHARS:
            return self.screen(text, masking)
        return await asyncio.to_thread(self.screen, text, masking)

    async def review(
        self, session: ChatSession, direction: Direction, message: ChatMessage
    ) -> SupervisionResult:
        found, masked, counts = await self.screened(message.content)
        if found:
            listed = ", ".join(repr(word) for word in found)
            reason = f"contains blocked text {listed}"
            return SupervisionResult(
                action="block", content=masked, reasons=(reason,), confidence=1.0
            )
        if not counts:
            return SupervisionResult(action="allow", confidence=1.0)
        what = ", ".join(f"{count} {kind.replace('_', ' ')}" for kind, count in counts.items())
        return SupervisionResult(
            action="modify",
            content=masked,
            confidence=1.0,
            reasons=(f"masked personal data: {what}",),
        )

    async def aclose(self) -> None:
        return None
