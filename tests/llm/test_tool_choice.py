"""Tool calls as schema-constrained JSON: the schema, the request, and reading the JSON back."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from foundry.llm.base import (
    ChatMessage,
    ChatRequest,
    Chunk,
    ProviderError,
    TextDelta,
    ToolCall,
    ToolCallChunk,
    ToolSpec,
    Usage,
)
from foundry.llm.tool_choice import (
    ChoiceReader,
    JsonStringStream,
    choice_request,
    choice_schema,
    offered_tools,
)

CLOCK = ToolSpec(
    name="time.get_current_time",
    description="Get current time in a specific timezone",
    parameters={
        "type": "object",
        "properties": {"timezone": {"type": "string", "description": "IANA timezone name"}},
        "required": ["timezone"],
    },
)
NOTE = ToolSpec(name="notes.add", parameters={"properties": {"text": {"type": "string"}}})


def request(*messages: ChatMessage, **options: Any) -> ChatRequest:
    return ChatRequest(model="m", messages=messages, tools=(CLOCK, NOTE), **options)


SYSTEM = ChatMessage(role="system", content="You are precise.")
ASK = ChatMessage(role="user", content="What time is it in Tokyo?")
CALL = ToolCall(id="c1", name=CLOCK.name, arguments={"timezone": "Asia/Tokyo"})
ASKED = ChatMessage(role="assistant", tool_calls=(CALL,))
RESULT = ChatMessage(
    role="tool", content='{"datetime": "21:00"}', tool_call_id="c1", name=CLOCK.name
)


def read(pieces: list[str], tools: tuple[ToolSpec, ...] = (CLOCK, NOTE)) -> list[Chunk]:
    """The chunks a reader makes of a model's text in these pieces, then its usage."""
    reader = ChoiceReader(tools)
    out: list[Chunk] = []
    for piece in pieces:
        out += reader.read(TextDelta(text=piece))
    return out + reader.read(Usage(output_tokens=9))


def text_of(chunks: list[Chunk]) -> str:
    return "".join(chunk.text for chunk in chunks if isinstance(chunk, TextDelta))


# -- the schema ---------------------------------------------------------------------------------


def test_the_schema_accepts_a_call_of_each_tool_or_a_reply_and_nothing_else() -> None:
    schema = choice_schema((CLOCK, NOTE))
    valid = jsonschema.Draft202012Validator(schema)
    assert valid.is_valid({"time.get_current_time": {"timezone": "Asia/Tokyo"}})
    assert valid.is_valid({"notes.add": {"text": "buy milk"}})
    assert valid.is_valid({"reply": "Hello."})
    assert not valid.is_valid({"time.get_current_time": {}})  # its required argument
    assert not valid.is_valid({"time.get_current_time": {"timezone": 9}})
    assert not valid.is_valid({"reply": 3})
    assert not valid.is_valid({})


def test_a_caller_schema_shapes_the_reply() -> None:
    verdict = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    valid = jsonschema.Draft202012Validator(choice_schema((CLOCK,), verdict))
    assert valid.is_valid({"reply": {"ok": True}})
    assert not valid.is_valid({"reply": "yes"})


def test_the_schema_adds_no_length_bounds() -> None:
    """maxLength and the like make llama.cpp's grammar very slow (FINDINGS)."""
    text = json.dumps(choice_schema((CLOCK, NOTE)))
    assert not any(bound in text for bound in ("maxLength", "minLength", "minItems", "maxItems"))


# -- the request --------------------------------------------------------------------------------


def test_a_question_offers_the_choice_with_the_tools_named_in_the_system_prompt() -> None:
    original = request(SYSTEM, ASK, temperature=0.2)
    assert offered_tools(original) == (CLOCK, NOTE)
    sent = choice_request(original)
    assert sent.tools == () and sent.response_schema == choice_schema((CLOCK, NOTE))
    system = sent.messages[0]
    assert system.role == "system" and system.content.startswith("You are precise.")
    assert "time.get_current_time: Get current time" in system.content
    assert "timezone: IANA timezone name" in system.content and "- notes.add" in system.content
    assert sent.messages[1:] == (ASK,) and sent.temperature == 0.2


def test_without_a_system_prompt_the_hint_becomes_one() -> None:
    sent = choice_request(request(ASK))
    assert sent.messages[0].role == "system" and "notes.add" in sent.messages[0].content


def test_after_a_tool_result_the_model_may_only_reply_with_the_round_written_out() -> None:
    original = request(SYSTEM, ASK, ASKED, RESULT)
    assert offered_tools(original) == ()
    sent = choice_request(original)
    assert sent.tools == () and sent.response_schema == choice_schema(())
    assert sent.messages[0] == SYSTEM  # no tools to name
    call, result = sent.messages[2:]
    assert call.role == "assistant" and not call.tool_calls
    assert json.loads(call.content) == {"time.get_current_time": {"timezone": "Asia/Tokyo"}}
    assert result == ChatMessage(
        role="user", content='Result of time.get_current_time: {"datetime": "21:00"}'
    )
    valid = jsonschema.Draft202012Validator(sent.response_schema)
    assert valid.is_valid({"reply": "It is 21:00."})
    assert not valid.is_valid({"time.get_current_time": {"timezone": "UTC"}})


def test_a_reply_only_choice_reads_a_call_as_an_error() -> None:
    with pytest.raises(ProviderError, match="not offered"):
        read(['{"time.get_current_time": {"timezone": "UTC"}}'], ())


# -- reading the JSON back ----------------------------------------------------------------------


def test_a_reply_streams_as_its_characters_arrive() -> None:
    reader = ChoiceReader((CLOCK,))
    assert reader.read(TextDelta(text='{\n  "re')) == []
    assert reader.read(TextDelta(text='ply": "It is')) == [TextDelta(text="It is")]
    assert reader.read(TextDelta(text=" late")) == [TextDelta(text=" late")]
    assert reader.read(TextDelta(text='."\n}')) == [TextDelta(text=".")]
    usage = Usage(output_tokens=7)
    assert reader.read(usage) == [usage]


def test_escapes_split_between_pieces_are_decoded_whole() -> None:
    pieces = ['{"reply": "Say \\', '"hi\\"', " \\u00e9\\u", "263A \\ud83d", "\\ude00 a\\\\b", '"}']
    chunks = read(pieces)
    assert text_of(chunks) == 'Say "hi" é☺ 😀 a\\b'
    assert not any(isinstance(chunk, ToolCallChunk) for chunk in chunks)


def test_a_reply_cut_off_by_the_token_limit_keeps_what_was_written() -> None:
    chunks = read(['{"reply": "The time in Tok'])
    assert text_of(chunks) == "The time in Tok" and isinstance(chunks[-1], Usage)


def test_a_tool_call_comes_whole_once_its_json_is_complete() -> None:
    chunks = read(['{ "time.get_current_time"', ': {"timezone": ', '"Asia/Tokyo"} }'])
    call, usage = chunks
    assert isinstance(call, ToolCallChunk) and isinstance(usage, Usage)
    assert call.call.name == "time.get_current_time"
    assert call.call.arguments == {"timezone": "Asia/Tokyo"}
    assert usage.stop_reason == "tool_calls" and usage.output_tokens == 9


def test_every_call_gets_its_own_id() -> None:
    pieces = ['{"notes.add": {"text": "a"}}']
    first, second = read(pieces)[0], read(pieces)[0]
    assert isinstance(first, ToolCallChunk) and isinstance(second, ToolCallChunk)
    assert first.call.id != second.call.id


def test_a_reply_under_a_caller_schema_is_its_json_text() -> None:
    chunks = read(['{"reply": {"ok": ', "true}}"])
    assert json.loads(text_of(chunks)) == {"ok": True}


@pytest.mark.parametrize(
    ("pieces", "message"),
    [
        (['{"time.get_current_time": {"timez'], "not complete JSON"),
        (["not json at all"], "not complete JSON"),
        (["[1, 2]"], "neither"),
        (['{"reply": 1, "notes.add": {}}'], "neither"),
        (['{"shell.run": {"command": "ls"}}'], "not offered: 'shell.run'"),
        (['{"time.get_current_time": {}}'], "time.get_current_time do not fit its schema"),
        (['{"time.get_current_time": {"timezone": 3}}'], "timezone: 3 is not of type"),
        (['{"notes.add": "buy milk"}'], "notes.add do not fit its schema"),
    ],
)
def test_a_bad_answer_is_a_clear_provider_error(pieces: list[str], message: str) -> None:
    with pytest.raises(ProviderError, match=message):
        read(pieces)


def test_an_unreadable_tool_schema_leaves_the_arguments_to_the_tool() -> None:
    odd = ToolSpec(name="odd.tool", parameters={"type": "object", "properties": {"a": {"type": 5}}})
    [call, _] = read(['{"odd.tool": {"a": 1}}'], (odd,))
    assert isinstance(call, ToolCallChunk) and call.call.arguments == {"a": 1}


def test_a_string_stream_keeps_characters_that_are_not_json_and_stops_at_the_quote() -> None:
    stream = JsonStringStream()
    assert stream.feed("a\\x") == "a\\x"
    assert stream.feed('b" and more') == "b" and stream.closed
    assert stream.feed("ignored") == ""


def test_a_lone_surrogate_becomes_a_replacement_character() -> None:
    stream = JsonStringStream()
    assert stream.feed("\\ud83d") == ""  # its low half may follow
    assert stream.feed('x"') == "\ufffdx"


def test_a_tool_schema_with_a_broken_reference_leaves_the_arguments_to_the_tool() -> None:
    odd = ToolSpec(name="odd.tool", parameters={"properties": {"a": {"$ref": "#/$defs/gone"}}})
    [call, _] = read(['{"odd.tool": {"a": 1}}'], (odd,))
    assert isinstance(call, ToolCallChunk) and call.call.arguments == {"a": 1}
