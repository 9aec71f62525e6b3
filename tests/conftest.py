"""Shared fixtures: a fresh engine, a host on it, and an in-memory recorder."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from hermes_pipeline import Engine, Host
from hermes_pipeline.testing import Recorder


@pytest.fixture(autouse=True)
def _fresh_call_context() -> Iterator[None]:
    """Each test starts outside any session or turn, whatever earlier tests left open."""
    from hermes_pipeline.host.context import EMPTY_CONTEXT, current

    token = current.set(EMPTY_CONTEXT)
    yield
    current.reset(token)


@pytest.fixture
def engine() -> Engine:
    return Engine()


@pytest.fixture
def host(engine: Engine) -> Host:
    return Host(engine, platform="cli", model="test-model", provider="test-provider",
                base_url="http://127.0.0.1:9/v1", api_mode="chat_completions")


@pytest.fixture
def rec(engine: Engine) -> Iterator[Recorder]:
    recorder = Recorder()
    engine.add_plugin(recorder, name="recorder")
    yield recorder


def chat_response(content: str | None = "done", tool_calls: list[dict[str, Any]] | None = None,
                  model: str = "test-model") -> dict[str, Any]:
    """A minimal OpenAI chat-completions response."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {"id": "r1", "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if tool_calls else "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}
