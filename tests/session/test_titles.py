"""Session titles from the first message, and text made readable on screen."""

from __future__ import annotations

from foundry.session.readable import readable
from foundry.session.titles import TITLE_LENGTH, session_title


def test_a_short_first_message_is_the_title() -> None:
    assert session_title("What time is it in Tokyo?", "Assistant") == "What time is it in Tokyo?"


def test_a_long_first_message_is_cut_at_a_word_with_an_ellipsis() -> None:
    message = (
        "Please read the quarterly report in notes/q3.md and tell me which of the "
        "regional figures changed the most since the last quarter"
    )
    title = session_title(message)
    assert len(title) <= TITLE_LENGTH and title.endswith("…")
    assert title == "Please read the quarterly report in notes/q3.md and tell me…"


def test_lines_markup_and_escapes_become_one_plain_line() -> None:
    assert session_title("# Plan\n\n  the   trip\\nto Kyoto") == "Plan the trip to Kyoto"


def test_a_session_with_no_message_is_a_new_chat_with_its_agent() -> None:
    assert session_title(None, "Assistant") == "New chat with Assistant"
    assert session_title("   ", "") == "New chat"


def test_one_long_word_is_cut_where_it_must_be() -> None:
    title = session_title("x" * 200)
    assert title == "x" * (TITLE_LENGTH - 1) + "…"


def test_written_escapes_are_decoded() -> None:
    written = 'first line\\nsecond\\tcolumn \\"quoted\\" caf\\u00e9 C:\\\\temp'
    assert readable(written) == 'first line\nsecond\tcolumn "quoted" café C:\\temp'


def test_terminal_sequences_are_dropped_and_controls_shown() -> None:
    coloured = "\x1b[31mred\x1b[0m \x1b]0;title\x07name\x00\x08 \u202eevil"
    assert readable(coloured) == "red name␀␈ [U+202E]evil"


def test_plain_text_is_left_as_it_is() -> None:
    text = "Reads inside the workspace run; a path like notes/todo.md stays."
    assert readable(text) == text
