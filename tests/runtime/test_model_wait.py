"""What a chat's model call waits behind, read from the model's queue, in words."""

from __future__ import annotations

from pathlib import Path

from foundry.llm.priority import ModelUse, Priority, QueueState, current_use
from foundry.runtime.engine import Engine

from .conftest import write_agent


class QueuedModel:
    """Stands for a provider whose model serves one call at a time (the embedded one)."""

    def __init__(self, state: QueueState) -> None:
        self.state = state

    def queue_state(self, model: str) -> QueueState:
        return self.state

    async def aclose(self) -> None:
        return None


def chat(session_id: str) -> ModelUse:
    return ModelUse(caller=f"chat {session_id}")


def test_a_chat_waiting_behind_another_chat_or_a_review_is_told_which(
    engine: Engine, tmp_path: Path
) -> None:
    agent = write_agent(tmp_path / "queued", {"turns": [{"text": "Hi."}]}, servers={})
    mine = engine.submit(engine.open_session(agent)).result(30)
    live = engine._sessions[mine]  # the provider swapped for one whose queue the test sets
    queued = QueuedModel(QueueState())
    live.provider = queued  # type: ignore[assignment]

    assert engine.model_wait(mine) is None  # nothing runs
    queued.state = QueueState(running=chat("other"), waiting=(chat(mine),))
    assert engine.model_wait(mine) == "another chat is using it"
    review = ModelUse(priority=Priority.REVIEW, caller="review by Conversation architect")
    queued.state = QueueState(running=review, waiting=(chat(mine),))
    assert engine.model_wait(mine) == "the review by Conversation architect is using it"
    queued.state = QueueState(running=chat(mine))
    assert engine.model_wait(mine) is None  # its own call runs


def test_a_turns_model_calls_are_the_chats_own(engine: Engine, tmp_path: Path) -> None:
    seen: list[ModelUse] = []
    agent = write_agent(tmp_path / "tagged", {"turns": [{"text": "Hi."}]}, servers={})
    session_id = engine.submit(engine.open_session(agent)).result(30)
    provider = engine._sessions[session_id].provider
    stream = provider.stream

    def noting(request):  # type: ignore[no-untyped-def]
        seen.append(current_use())
        return stream(request)

    provider.stream = noting  # type: ignore[method-assign]
    engine.submit(engine.send(session_id, "hi")).result(30)
    assert seen == [chat(session_id)]
