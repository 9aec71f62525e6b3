"""Issue #12 item 3: host payload shapes that real plugins read.

``post_api_request.assistant_message`` (spec 01 §7.4, the legacy raw provider message) reads the
same as a mapping and by attribute whatever the provider returned (a dict, an SDK object, Hermes'
``NormalizedResponse``), and ``pre_api_request.conversation_history`` is the running message list
of that attempt (OBS-52: a shallow copy).
"""

from __future__ import annotations

import copy
import dataclasses
import json
import pickle
from typing import Any

import pytest

from hermes_pipeline import Engine, Host
from hermes_pipeline.engine.sanitize import sanitize
from hermes_pipeline.host import MessageView, message_view
from hermes_pipeline.testing import Recorder

from hermes_pipeline.testing import chat_response

CALL = {"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\": \"a.txt\"}"}}
EXPECTED = {"content": "Reading it.", "reasoning": None,
            "tool_calls": [{"id": "call_1", "type": "function", "name": "read_file",
                            "arguments": "{\"path\": \"a.txt\"}"}]}


def attribute_reader(message: Any) -> dict[str, Any]:
    """Reads like Hermes' bundled Langfuse plugin (``_serialize_assistant_message``): getattr only."""
    calls = []
    for call in getattr(message, "tool_calls", None) or []:
        fn = getattr(call, "function", None)
        calls.append({"id": getattr(call, "id", None), "type": getattr(call, "type", None) or "function",
                      "name": getattr(fn, "name", None) if fn else None,
                      "arguments": getattr(fn, "arguments", None) if fn else None})
    return {"content": getattr(message, "content", None), "reasoning": getattr(message, "reasoning", None),
            "tool_calls": calls}


def mapping_reader(message: Any) -> dict[str, Any]:
    """Reads like a ``register(ctx)`` plugin written against plain dicts."""
    calls = [{"id": c["id"], "type": c.get("type") or "function", "name": c["function"]["name"],
              "arguments": c["function"]["arguments"]} for c in message.get("tool_calls") or []]
    return {"content": message["content"], "reasoning": message.get("reasoning"), "tool_calls": calls}


def run_turn(response: Any) -> tuple[dict[str, Any], dict[str, Any], Any]:
    engine = Engine()
    seen: dict[str, Any] = {}
    engine.register_hook("post_api_request", lambda **kw: seen.update(attr=attribute_reader(kw["assistant_message"])))

    def dict_style(**kw: Any) -> None:
        seen["map"] = mapping_reader(kw["assistant_message"])
        seen["raw"] = kw["assistant_message"]

    engine.register_hook("post_api_request", dict_style)
    host = Host(engine, model="m", provider="p")
    with host.session() as session, session.turn("read a.txt") as turn:
        assert turn.call_llm({"model": "m", "messages": [{"role": "user", "content": "x"}]},
                             lambda req: response) is response  # the host still gets the provider's object
    return seen["attr"], seen["map"], seen["raw"]


def test_dict_response_reads_by_attribute_and_as_mapping() -> None:
    """#12.3: a dict-returning provider (this project's demo client): getattr consumers see the values too."""
    by_attr, by_key, raw = run_turn(chat_response("Reading it.", [CALL]))
    assert by_attr == by_key == EXPECTED
    assert raw.tool_calls[0].function.name == raw["tool_calls"][0]["function"]["name"] == "read_file"
    assert raw.role == raw["role"] == "assistant"


def test_sdk_object_response_reads_as_mapping_too() -> None:
    """#12.3: an openai SDK ``ChatCompletion``: dict consumers see the same values as getattr ones."""
    openai_types = pytest.importorskip("openai.types.chat", reason="the openai client is not installed")
    response = openai_types.ChatCompletion.model_validate({**chat_response("Reading it.", [CALL]), "created": 1,
                                                           "object": "chat.completion"})
    by_attr, by_key, raw = run_turn(response)
    assert by_attr == by_key == EXPECTED
    assert isinstance(raw, MessageView)


@dataclasses.dataclass
class _HermesToolCall:
    """The shape of Hermes' ``agent.transports.types.ToolCall``: flat, and its own ``function``."""

    id: str | None
    name: str
    arguments: str

    @property
    def type(self) -> str:
        return "function"

    @property
    def function(self) -> _HermesToolCall:
        return self


@dataclasses.dataclass
class _HermesResponse:
    """The shape of Hermes' ``NormalizedResponse`` (content, tool_calls, finish_reason, reasoning)."""

    content: str | None
    tool_calls: list[_HermesToolCall] | None
    finish_reason: str
    reasoning: str | None = None


def _hermes_types() -> tuple[Any, Any]:
    try:
        from agent.transports.types import NormalizedResponse, ToolCall  # hermes-agent, when installed
    except ImportError:
        return _HermesResponse, _HermesToolCall
    return NormalizedResponse, ToolCall


def test_hermes_normalized_response_reads_as_mapping() -> None:
    """#12.3: what Hermes passes (its ``NormalizedResponse``) wrapped by ``message_view``: both readers agree."""
    normalized, tool_call = _hermes_types()
    message = normalized(content="Reading it.", tool_calls=[tool_call("call_1", "read_file", "{\"path\": \"a.txt\"}")],
                         finish_reason="tool_calls", reasoning="the user wants a.txt")
    view = message_view(message)
    assert view is not None
    expected = {**EXPECTED, "reasoning": "the user wants a.txt"}
    assert attribute_reader(view) == mapping_reader(view) == attribute_reader(message) == expected
    assert view["role"] == view.role == "assistant"


def test_anthropic_response_without_chat_message_gets_openai_shaped_tool_calls() -> None:
    """#12.3: a Messages-API response (no ``choices``): role, content blocks and its ``tool_use`` blocks."""
    response = {"id": "msg_1", "model": "claude", "role": "assistant", "stop_reason": "tool_use",
                "content": [{"type": "text", "text": "Reading it."},
                            {"type": "tool_use", "id": "call_1", "name": "read_file", "input": {"path": "a.txt"}}]}
    by_attr, by_key, raw = run_turn(response)
    assert by_attr == by_key
    assert by_attr["tool_calls"] == [{"id": "call_1", "type": "function", "name": "read_file",
                                      "arguments": json.dumps({"path": "a.txt"})}]
    assert raw.content[0].text == raw["content"][0]["text"] == "Reading it."


def test_view_is_read_only_json_shaped_and_survives_copy_and_pickle() -> None:
    """#12.3: the sanitizer, json, pickle and deepcopy see plain JSON-shaped data; nothing mutates it."""
    source = {"role": "assistant", "content": "hi", "tool_calls": [CALL], "extra": {"n": 1}}
    view = message_view(source)
    assert view is not None and view == source
    assert sanitize(view) == source and type(sanitize(view)) is dict
    assert json.loads(json.dumps(view)) == source
    for clone in (pickle.loads(pickle.dumps(view)), copy.deepcopy(view), copy.copy(view)):
        assert clone == source and isinstance(clone, MessageView) and clone.tool_calls[0].function.name == "read_file"
    with pytest.raises(TypeError):
        view["content"] = "changed"
    with pytest.raises(TypeError):
        view.content = "changed"
    with pytest.raises(TypeError):
        view.tool_calls[0].function.update(name="x")
    with pytest.raises(TypeError):
        view.tool_calls.append("x")
    assert isinstance(view.tool_calls, list) and view.tool_calls is not source["tool_calls"]
    assert view.refusal is None and getattr(view, "unknown_field", "absent") == "absent"
    assert not hasattr(view, "model_dump")  # SDK-object probes stay honest
    assert message_view(None) is None and message_view(view) is view


def test_pre_api_request_history_is_the_running_message_list_of_the_attempt() -> None:
    """#12.3 / OBS-52: ``conversation_history`` is the attempt's effective messages (after ``llm_request``
    middleware), a shallow copy, and grows with the turn; not the turn-start history."""
    engine = Engine()
    rec = Recorder()
    engine.add_plugin(rec, name="rec")

    def add_reminder(**kw: Any) -> dict[str, Any]:
        request = dict(kw["request"])
        request["messages"] = [*request["messages"], {"role": "system", "content": "reminder"}]
        return {"request": request, "source": "test", "reason": "appended a reminder"}

    engine.register_middleware("llm_request", add_reminder)
    host = Host(engine, model="m")
    start = [{"role": "user", "content": "earlier"}, {"role": "assistant", "content": "before"}]
    sent: list[list[Any]] = []

    def provider(request: dict[str, Any]) -> Any:
        sent.append(request["messages"])
        return chat_response(None, [CALL]) if len(sent) == 1 else chat_response("done")

    with host.session() as session, session.turn("now", conversation_history=start) as turn:
        messages = [*start, {"role": "user", "content": "now"}]
        turn.call_llm({"model": "m", "messages": messages}, provider)
        messages += [{"role": "assistant", "content": None, "tool_calls": [CALL]},
                     {"role": "tool", "tool_call_id": "call_1", "content": "file text"}]
        turn.call_llm({"model": "m", "messages": messages}, provider)
    first, second = rec.of("pre_api_request")
    assert first["conversation_history"] == [*start, {"role": "user", "content": "now"},
                                             {"role": "system", "content": "reminder"}]
    assert second["conversation_history"] == [*messages, {"role": "system", "content": "reminder"}]
    assert second["conversation_history"] is not second["request_messages"]
    assert second["conversation_history"] is not sent[1]
    assert all(a is b for a, b in zip(second["conversation_history"], sent[1], strict=True))  # shallow, not deep
    assert rec.last("pre_llm_call")["conversation_history"] == start  # the turn-start history stays there
