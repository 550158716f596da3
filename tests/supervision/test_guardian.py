"""The guardian masks real phone numbers only, and nothing it masks is streamed, stored or shown."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from foundry.agent.models import Agent, GuardianSupervisorEntry
from foundry.cli import main
from foundry.llm.base import ChatMessage, ChatRequest, Chunk, TextDelta
from foundry.llm.registry import ModelChoice
from foundry.session.chain import SupervisionChain
from foundry.session.chat import ChatSession
from foundry.session.events import EventBody
from foundry.session.gate import PermissionGate
from foundry.session.supervisors import SupervisionResult
from foundry.supervision import guardian as guardian_module
from foundry.supervision.guardian import GuardianSupervisor, ReplyMasker, mask_pii
from tests.killing import edited
from tests.runtime.conftest import write_agent

PHONES = [
    "+1 415 555 2671",
    "(415) 555-2671",
    "+44 20 7946 0958",
    "+33 1 23 45 67 89",
    "415-555-2671",
    "415.555.2671",
    "+1 (415) 555-0199",
    "+49 30 901820",
    "+1 415 555 2671 ext. 12",
]
NOT_PHONES = [
    "2025-04-07",  # ISO date
    "07/04/2025",  # day/month/year
    "12.03.2024",  # dotted date
    "10:30",  # time
    "14:05:59",
    "2025-04-07T10:30:00Z",  # ISO timestamp
    "2025-04-07 10:30",
    "1.2.3",  # versions
    "v2.10.0",
    "10.4.1.2",
    "192.168.100.200",  # an address
    "$1,234.56",  # prices
    "EUR 1 299,00",
    "42",  # plain numbers
    "1000000",
    "1234567890",
    "3.14159265358979",
    "order 55512345",  # ids
    "INC-20250407-001",
    "550e8400-e29b-41d4-a716-446655440000",
    "12:30:45.123456",
]


@pytest.mark.parametrize("number", PHONES)
def test_a_real_phone_number_is_masked(number: str) -> None:
    assert mask_pii(f"call {number} today", ("phone",)) == ("call [phone] today", {"phone": 1})


@pytest.mark.parametrize("text", NOT_PHONES)
def test_dates_versions_prices_and_ids_are_not_phones(text: str) -> None:
    sentence = f"The day of the week is {text} on Monday"
    assert mask_pii(sentence, ("phone",)) == (sentence, {})


def test_cards_and_national_ids_keep_their_own_placeholders() -> None:
    text = "card 4111 1111 1111 1111, ssn 123-45-6789, mail a.b@example.org"
    masked, counts = mask_pii(text, ("email", "card", "national_id", "phone"))
    assert masked == "card [card number], ssn [national id], mail [email]"
    assert counts == {"email": 1, "card": 1, "national_id": 1}


REPLY = (
    "Sure! Call +1 415 555 2671 or (415) 555-2671 ext. 7, write to ana.lopez@example.com, "
    "pay with 4111-1111-1111-1111 (ssn 123-45-6789) before 2025-04-07 10:30; we run v2.10.0."
)
KINDS = ("email", "card", "national_id", "phone")


def streamed(text: str, size: int) -> list[str]:
    masker = ReplyMasker(KINDS)
    pieces = [masker.feed(text[at : at + size]) for at in range(0, len(text), size)]
    return [*pieces, masker.finish()]


@pytest.mark.parametrize("size", [1, 2, 3, 5, 8, 13, 40, len(REPLY)])
def test_a_streamed_reply_is_released_exactly_as_the_whole_reply_is_masked(size: int) -> None:
    pieces = streamed(REPLY, size)
    assert "".join(pieces) == mask_pii(REPLY, KINDS)[0]
    shown = ""
    for piece in pieces:  # at no point has anything shown been part of a raw value
        shown += piece
        assert not any(raw in shown for raw in ("2671", "ana.lopez", "4111", "6789"))


def test_prose_is_released_while_it_streams() -> None:
    masker = ReplyMasker(KINDS)
    assert masker.feed("Hello there, ") == "Hello there, "
    assert masker.feed("call +1 415 ") == "call "
    assert masker.feed("555 2671 when ") == ""  # a digit is still too near
    assert masker.feed("you like. Bye") == "[phone] when you like. "
    assert masker.finish() == "Bye"


async def test_a_blocked_message_is_masked_too() -> None:
    entry = GuardianSupervisorEntry.model_validate(
        {"type": "guardian", "id": "g", "config": {"blockKeywords": ["secret"]}}
    )
    message = ChatMessage(role="user", content="the secret is at ana@example.com")
    result = await GuardianSupervisor(entry).review(None, "request", message)  # type: ignore[arg-type]
    assert (result.action, result.content) == ("block", "the secret is at [email]")


class StallingModel:
    """Streams the start of a phone number, then waits until it is cancelled."""

    name = "stalling"

    async def stream(self, request: ChatRequest) -> AsyncIterator[Chunk]:
        for piece in ("Call ", "+1 ", "415 ", "555 ", "2671"):
            yield TextDelta(text=piece)
        await asyncio.Event().wait()

    async def list_models(self) -> list[str]:
        return []

    async def aclose(self) -> None:
        return None


async def test_a_cancelled_reply_keeps_only_its_masked_text() -> None:
    events: list[EventBody] = []

    async def sink(body: EventBody) -> None:
        events.append(body)

    agent = Agent.model_validate({"metadata": {"name": "t"}})
    entry = GuardianSupervisorEntry.model_validate({"type": "guardian", "id": "g"})
    chat = ChatSession(
        "s1",
        agent,
        ModelChoice("stalling", "x"),
        StallingModel(),
        PermissionGate(agent.settings.tool_permission),
        sink,
        chain=SupervisionChain([GuardianSupervisor(entry)]),
    )
    turn = asyncio.ensure_future(chat.send("hi"))
    await asyncio.sleep(0.05)
    turn.cancel()
    result = await turn
    assert (result.ended_by, result.reply) == ("cancelled", "Call [phone]")
    assert not any("2671" in event.model_dump_json() for event in events)


GUARDIAN = {"type": "guardian", "id": "guardian", "name": "PII guardian"}
MESSAGE = "Hello, my address is ana.lopez@example.com, reach me there."
RAW = ("ana.lopez", "example.com", "415 555 2671", "555-2671", "7946 0958")


def everything_stored(database: Path) -> str:
    """Every row of every table of the store, as text."""
    with edited(database) as connection:
        listed = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        tables = [row[0] for row in listed]
        rows = [
            repr(row)
            for table in tables
            if table.isidentifier()
            for row in connection.execute(f'SELECT * FROM "{table}"')
        ]
    return "\n".join(rows)


def test_nothing_masked_is_streamed_stored_or_shown(
    tmp_path: Path, foundry_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reply = "Call +1 415 555 2671 or (415) 555-2671 on 2025-04-07, or +44 20 7946 0958."
    turns = {"turns": [{"text": reply}]}
    agent = write_agent(tmp_path / "guarded", turns, servers={}, supervisors=[GUARDIAN])
    assert main(["run", str(agent), "--message", MESSAGE]) == 0
    shown = capsys.readouterr()
    database = next(foundry_home.rglob("foundry.sqlite3"))
    stored = everything_stored(database)
    for raw in RAW:
        assert raw not in shown.out + shown.err
        assert raw not in stored
        for file in database.parent.rglob("*"):  # the database, its WAL, the log, ...
            assert not file.is_file() or raw.encode() not in file.read_bytes()
    assert shown.out.strip() == "Call [phone] or [phone] on 2025-04-07, or [phone]."
    assert "Hello, my address is [email], reach me there." in stored
    assert "masked personal data: 3 phone" in stored


# --- blocked words: the ways a word is hidden, and the ordinary words that must still pass --------


def wide(text: str) -> str:
    """The text in full-width letters (U+FF01 to U+FF5E)."""
    return "".join(chr(ord(char) + 0xFEE0) if "!" <= char <= "~" else char for char in text)


BLOCKED = ["password", "Drop Table", "Projekt Zebra", "Straße", "秘密", "ヒミツ"]
HIDDEN = [
    # (the trick, the text, the configured word it holds)
    ("as it is", "the password is", "password"),
    ("another case", "the PassWord is", "password"),
    ("a zero-width space", "pass\u200bword", "password"),
    ("a zero-width joiner and non-joiner", "pa\u200dss\u200cword", "password"),
    ("a word joiner and BOM", "pass\u2060wo\ufeffrd", "password"),
    ("a soft hyphen", "pass\u00adword", "password"),
    ("a direction mark", "pass\u200eword", "password"),
    ("a Unicode tag character", "pass\U000e0041word", "password"),
    ("full-width letters", wide("password"), "password"),
    ("mathematical bold letters", "\U0001d429\U0001d41a\U0001d42c\U0001d42cword", "password"),
    ("a ligature", "Projekt Ze\ufb00ra", None),  # "ff" is not "bb": not the word
    ("circled letters", "\u24df\u24d0\u24e2\u24e2\u24e6\u24de\u24e1\u24d3", "password"),
    ("a non-breaking space", "drop\u00a0table", "Drop Table"),
    ("an ideographic space", "drop\u3000table", "Drop Table"),
    ("full-width and case", wide("DROP table"), "Drop Table"),
    ("German sharp s, case-folded", "STRASSE", "Straße"),
    ("sharp s as written", "die straße", "Straße"),
    ("a CJK word among Latin", "it is 秘密", "秘密"),
    ("half-width katakana", "\uff8b\uff90\uff82", "ヒミツ"),
    ("bold HTML inside the word", "pass<b>word</b>", "password"),
    ("an empty tag inside the word", "pass<span class='x'></span>word", "password"),
    ("an HTML comment inside the word", "pass<!-- nothing -->word", "password"),
    ("Markdown bold inside the word", "pass**word**", "password"),
    ("Markdown code inside the word", "pass`word`", "password"),
    ("Markdown strike-through inside the word", "pa~~ss~~word", "password"),
    ("markup between the words", "drop <b>table</b>", "Drop Table"),
    ("Markdown between the words", "drop **table**", "Drop Table"),
    ("a soft-hyphen entity", "pass&shy;word", "password"),
    ("a numeric entity", "pass&#119;ord", "password"),
    ("a zero-width entity", "pass&#x200b;word", "password"),
    ("everything at once", wide("PASS") + "\u200b<i></i>&shy;**" + wide("word") + "**", "password"),
]
ORDINARY = [
    # (why it is not the word, the text)
    ("a space", "pass word"),
    ("a line break", "pass\nword"),
    ("a hyphen", "pass-word"),
    ("an underscore, which Markdown shows", "pass_word"),
    ("paragraphs", "<p>pass</p><p>word</p>"),
    ("a line-break tag", "pass<br>word"),
    ("a list", "* pass\n* word"),
    ("a non-breaking space entity", "pass&nbsp;word"),
    ("other words", "compass wording"),
    ("words in two values", '{"a": "pass", "b": "word"}'),
    ("a table that is not dropped", "drop the table"),
    ("a zebra project spelt apart", "Projekt-Zebra"),
    ("another CJK word", "秘书"),
    ("a Greek question mark, a sign once folded", "pass\u037eword"),
]


def blocking(words: list[str]) -> GuardianSupervisor:
    entry = GuardianSupervisorEntry.model_validate(
        {"type": "guardian", "id": "g", "config": {"blockKeywords": words}}
    )
    return GuardianSupervisor(entry)


@pytest.mark.parametrize(("trick", "text", "word"), HIDDEN, ids=[h[0] for h in HIDDEN])
def test_a_blocked_word_is_found_however_it_is_hidden(
    trick: str, text: str, word: str | None
) -> None:
    assert blocking(BLOCKED).blocked_words(text) == ([word] if word else [])


@pytest.mark.parametrize(("why", "text"), ORDINARY, ids=[o[0] for o in ORDINARY])
def test_ordinary_text_is_not_blocked(why: str, text: str) -> None:
    assert blocking(BLOCKED).blocked_words(text) == []


@pytest.mark.parametrize(
    "word", ["pass\u200bword", wide("PASSWORD"), "pass<b></b>word", "PASS&shy;WORD"]
)
def test_a_blocked_word_is_read_as_the_text_is(word: str) -> None:
    """The configured word is folded as the text is, and reported as configured."""
    assert blocking([word]).blocked_words("your password") == [word]


def test_a_word_of_only_invisible_characters_blocks_nothing() -> None:
    assert blocking(["\u200b\u200d", " ", "\u00ad"]).blocked_words("any text at all") == []


async def test_the_guardian_blocks_a_message_with_a_hidden_word_naming_the_word() -> None:
    message = ChatMessage(role="user", content="the " + wide("pass") + "\u200bword is hunter2")
    result = await blocking(BLOCKED).review(None, "request", message)  # type: ignore[arg-type]
    assert result.action == "block" and result.reasons == ("contains blocked text 'password'",)


def _threads_folding(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The threads `folded` runs on from now on, in order."""
    threads: list[int] = []
    fold = guardian_module.folded

    def recorded(text: str) -> str:
        threads.append(threading.get_ident())
        return fold(text)

    monkeypatch.setattr(guardian_module, "folded", recorded)
    return threads


async def _review_ticking(guardian: GuardianSupervisor, text: str) -> tuple[SupervisionResult, int]:
    """Review `text` while another task ticks on the loop: how many ticks it got meanwhile."""
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0)
            ticks += 1

    ticker = asyncio.create_task(tick())
    message = ChatMessage(role="tool", content=text)
    result = await guardian.review(None, "response", message)  # type: ignore[arg-type]
    ticked = ticks
    ticker.cancel()
    return result, ticked


async def test_a_large_text_is_screened_off_the_loop_and_its_blocked_word_found(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    guardian = blocking(BLOCKED)
    threads = _threads_folding(monkeypatch)
    text = "Grüße aus Köln, ligne ﬁnale numéro 7. " * (256 * 1024 // 38) + wide("pass") + "word"
    result, ticks = await _review_ticking(guardian, text)
    assert result.action == "block" and result.reasons == ("contains blocked text 'password'",)
    assert threads and threading.get_ident() not in threads
    assert ticks > 0  # the loop ran other tasks while the text was screened


async def test_a_short_text_is_screened_inline(monkeypatch: pytest.MonkeyPatch) -> None:
    guardian = blocking(BLOCKED)
    threads = _threads_folding(monkeypatch)
    result, ticks = await _review_ticking(guardian, "Grüße, the " + wide("pass") + "word")
    assert result.action == "block"
    assert set(threads) == {threading.get_ident()} and ticks == 0


# what folding may join or reorder across a cut: combining marks, format characters between a
# letter and its mark, Hangul jamo, compatibility forms, final sigma, ASCII and not
TRICKY = "aeAE \n~\u0301\u0316\u0327\u200b\u00ad\u1100\u1161\u11a8\ufb01\uff41\u03a3\u00df\u2460é"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=TRICKY, max_size=60))
def test_a_long_text_folded_in_pieces_folds_as_the_whole_does(text: str) -> None:
    pieces = list(guardian_module.pieces(text, guardian_module._BEFORE_ASCII, 3))
    assert "".join(pieces) == text and all(piece[0].isascii() for piece in pieces[1:])
    in_pieces = "".join(map(guardian_module._folded, pieces))
    assert in_pieces == guardian_module._folded(text)


PII_LINES = [
    "mail ana@example.com or bob.smith+x@mail.example.org now",
    "card 4111 1111 1111 1111, or 4111-1111-1111-1111",
    "ssn 123-45-6789 and NI AB123456C",
    "",
    "call +1 415 555 2671 or (415) 555-0199",
    "ana@example.com",
    "4111111111111111",
]


@pytest.mark.parametrize("size", [1, 7, 50, 64 * 1024])
def test_a_long_text_masked_in_pieces_is_masked_as_the_whole_is(
    monkeypatch: pytest.MonkeyPatch, size: int
) -> None:
    text = "\n".join(PII_LINES[n % len(PII_LINES)] + " x" * (n % 5) for n in range(60))
    text += " ".join(PII_LINES) + ";" + "|".join(PII_LINES)  # no line break
    whole = mask_pii(text, KINDS)
    monkeypatch.setattr(guardian_module, "PIECE", size)
    assert mask_pii(text, KINDS) == whole
    assert set(whole[1]) == set(KINDS)  # each kind found, some at a cut
