"""Record lanes on the provider-attempt path: ``pre_api_request`` / ``post_api_request`` without payload or dispatch.

When every listener of the hook is a deferred-projection recorder, ``LLMRequest`` hands each one the hook's fields
as one tuple in hookspec order (FMT-79: the caller's thread only timestamps and enqueues). OBS-19: the fields are,
value for value, the payload a dict listener gets; the scope events are the same as through the dispatch; a
listener that is not a recorder switches the lanes off.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from hermes_pipeline import Engine, Host
from hermes_pipeline.contract.hooks import OBSERVER_HOOKS
from hermes_pipeline.contract.hookspecs import hookimpl
from hermes_pipeline.engine.callbacks import RECORD_LANE
from hermes_pipeline.export import ScopePlugin
from hermes_pipeline.host import MessageView

from tests.host._lanes import lanes_and_dispatch

LLM_HOOKS = ("pre_api_request", "post_api_request")
SECRET = "sk-ZX0123456789ABCDEFGHIJ"
CLOCKS = frozenset({"started_at", "ended_at", "api_duration"})
CALLS = [{"id": f"call_{k}", "type": "function", "function": {"name": "read_file",
                                                               "arguments": f'{{"path": "{k}", "key": "{SECRET}"}}'}}
         for k in range(3)]
RESPONSE = {"id": "chatcmpl-1", "model": "m", "provider": "upstream", "choices": [
    {"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": "", "tool_calls": CALLS}}],
    "usage": {"prompt_tokens": 12, "completion_tokens": 8, "prompt_tokens_details": {"cached_tokens": 2}}}
REQUEST = {"model": "m", "system": f"be brief {SECRET}", "max_tokens": 64, "timeout": 30,
           "messages": [{"role": "user", "content": f"hi, my key is {SECRET}"}],
           "tools": [{"type": "function", "function": {"name": "read_file"}}]}


def _turn(engine: Engine) -> None:
    session = Host(engine, model="m", provider="p", base_url="http://127.0.0.1/v1").session("s1")
    turn = session.turn("go", task_id="k1", turn_id="u1")
    turn.call_llm(dict(REQUEST), lambda request: RESPONSE)
    turn.call_llm({"model": "m", "input": [{"role": "user", "content": "again"}]}, lambda request: {
        "id": "r2", "model": "m", "choices": [{"index": 0, "finish_reason": "stop",
                                               "message": {"role": "assistant", "content": "done"}}]})
    turn.end()
    session.finalize()


def test_obs19_lane_fields_are_the_dispatched_payloads() -> None:
    """OBS-19 / FMT-79: the fields handed to the lanes, zipped with the hookspec's names, are the payload a dict
    listener gets for the same calls (clock readings aside), ``assistant_message`` the same read-only view."""
    lanes_engine = Engine()
    received: list[tuple[str, tuple[Any, ...]]] = []
    for hook in LLM_HOOKS:
        def callback(*a: Any, _hook: str = hook, **k: Any) -> None:
            raise AssertionError(f"{_hook} dispatched although every listener offers a lane")

        def bind(plugin: Any, _hook: str = hook) -> Any:
            return lambda fields: received.append((_hook, fields))

        setattr(callback, RECORD_LANE, bind)
        lanes_engine.register_hook(hook, callback)
    _turn(lanes_engine)
    dict_engine = Engine()
    payloads: list[tuple[str, dict[str, Any]]] = []
    for hook in LLM_HOOKS:
        dict_engine.register_hook(hook, lambda _hook=hook, **payload: payloads.append((_hook, payload)))
    _turn(dict_engine)
    assert [hook for hook, _ in received] == [hook for hook, _ in payloads] == list(LLM_HOOKS) * 2
    for (hook, fields), (_, payload) in zip(received, payloads, strict=True):
        named = dict(zip(OBSERVER_HOOKS[hook].fields, fields, strict=True))
        assert payload.pop("telemetry_schema_version")
        assert set(named) == set(payload)
        assert {k: v for k, v in named.items() if k not in CLOCKS} == \
            {k: v for k, v in payload.items() if k not in CLOCKS}
        assert all(type(named[k]) is type(payload[k]) for k in named)
        if hook == "post_api_request":  # the clocks in their places: duration = end - start
            assert named["started_at"] <= named["ended_at"]
            assert named["api_duration"] == max(named["ended_at"] - named["started_at"], 0.0)
        if hook == "post_api_request" and named["assistant_message"].get("tool_calls"):
            assert type(named["assistant_message"]) is MessageView
            assert named["assistant_message"].tool_calls[0].function.name == "read_file"
        sanitized = named["request"] if hook == "pre_api_request" else named["response"]
        assert SECRET not in json.dumps(sanitized)  # OBS-55: the sanitized fields are scrubbed on the lanes too



@pytest.mark.parametrize("deferred", [True, False])
def test_fmt79_llm_lanes_give_the_scope_events_of_the_dispatch(deferred: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """The scope projection sees the same LLM scopes through the lanes as through the dispatch."""
    runs, used = lanes_and_dispatch(_turn, deferred=deferred, monkeypatch=monkeypatch)
    assert used == {*LLM_HOOKS, "pre_llm_call", "on_session_end"}  # the first run went through the lanes
    assert len([e for e in runs[0] if e[5] == "llm"]) == 4
    assert runs[0] == runs[1]


class Answering:
    """A plugin listener (not a recorder): the dispatch is needed."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    @hookimpl
    def post_api_request(self, response: Any) -> None:
        self.seen.append(response["id"])


def test_a_listener_that_is_no_recorder_gets_the_payload() -> None:
    engine = Engine()
    engine.add_plugin(ScopePlugin(deferred=True), name="scopes")
    answering = Answering()
    engine.add_plugin(answering, name="answering")
    assert engine.record_lanes("post_api_request", engine.hook_listeners["post_api_request"]) is None
    assert engine.record_lanes("pre_api_request", engine.hook_listeners["pre_api_request"]) is not None
    _turn(engine)
    assert answering.seen == ["chatcmpl-1", "r2"]
