"""The OpenAI wire format: tool names travel in the form those APIs accept, and come back."""

from __future__ import annotations

from foundry.llm.base import ChatMessage, ChatRequest, ToolCall, ToolCallChunk, ToolSpec
from foundry.llm.wire import ChunkReader, chat_completion_body, tool_names


def test_dotted_tool_names_are_sent_with_underscores_and_read_back() -> None:
    call = ToolCall(id="c1", name="time.get_current_time", arguments={"timezone": "UTC"})
    request = ChatRequest(
        model="m",
        messages=(
            ChatMessage(role="assistant", tool_calls=(call,)),
            ChatMessage(role="tool", content="12:00", tool_call_id="c1", name=call.name),
        ),
        tools=(ToolSpec(name="time.get_current_time"),),
    )
    body = chat_completion_body(request)
    assert body["tools"][0]["function"]["name"] == "time__get_current_time"
    assert body["messages"][0]["tool_calls"][0]["function"]["name"] == "time__get_current_time"
    assert body["messages"][1]["name"] == "time__get_current_time"
    reader = ChunkReader(0.0, tool_names(request))
    fragment = {
        "index": 0,
        "id": "c2",
        "function": {"name": "time__get_current_time", "arguments": "{}"},
    }
    reader.read({"choices": [{"delta": {"tool_calls": [fragment]}}]})
    chunk = reader.finish()[0]
    assert isinstance(chunk, ToolCallChunk) and chunk.call.name == "time.get_current_time"
