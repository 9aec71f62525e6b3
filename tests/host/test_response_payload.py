"""``post_api_request``'s ``response`` and ``assistant_message`` made from one walk of the tool calls equal the
general path value for value (issue #29; spec 01 §7.4, §8.2.2).

OBS-51 / OBS-55 / OBS-56: ``response`` is sanitized (credentials redacted, long strings cut, sensitive keys
redacted) exactly as ``sanitize`` gives it; ``assistant_message`` is the provider's raw message as a read-only
:class:`MessageView` (nested tool calls are views, sequences :class:`FrozenList`), exactly as ``message_view``
gives it. Generated responses carry odd types, secrets, long strings, nested arguments, Anthropic blocks and
calls that are not dicts, so both the shared walk and its fall-backs are compared.
"""

from __future__ import annotations

import string
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hermes_pipeline.host.llm as llm
from hermes_pipeline import Engine, Host
from hermes_pipeline.engine.sanitize import sanitize
from hermes_pipeline.engine.usage import normalize_usage
from hermes_pipeline.host import MessageView
from hermes_pipeline.host.facts import response_facts
from hermes_pipeline.host.message import FrozenList
from hermes_pipeline.testing import Recorder

from tests._payloads import same

SECRET = "sk-ZX0123456789ABCDEFGHIJ"

text = st.one_of(st.text(alphabet=string.ascii_letters + string.digits + ' {}":,=é', max_size=30),
                 st.sampled_from([SECRET, f'{{"token": "{SECRET}"}}', "z" * 8500, "w" * 300, "", "\ud800"]))
leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.integers(min_value=2**63, max_value=2**70),
                 st.floats(allow_nan=True, allow_infinity=True), text)
odd = st.recursive(leaf, lambda inner: st.one_of(st.lists(inner, max_size=3), st.tuples(inner),
                                                 st.dictionaries(st.sampled_from(["a", "api_key", "x_tokens", "b"]),
                                                                 inner, max_size=3)), max_leaves=8)
function = st.fixed_dictionaries({"name": text, "arguments": st.one_of(text, odd)},
                                 optional={"api_key": text, "extra": odd})
call = st.one_of(
    st.fixed_dictionaries({"id": text, "type": st.sampled_from(["function", "custom"]), "function": function},
                          optional={"index": st.integers(0, 3), "password": odd}),
    st.fixed_dictionaries({"type": st.just("tool_use"), "id": text, "name": text, "input": odd}),  # Anthropic block
    text, st.none(), odd,
)
plain_call = st.fixed_dictionaries(  # the common case: the shared walk applies unless a value is not plain JSON
    {"id": text, "type": st.just("function"), "function": st.fixed_dictionaries({"name": text, "arguments": text})},
    optional={"index": st.integers(0, 3), "api_key": text})
message = st.fixed_dictionaries(
    {"role": st.sampled_from(["assistant", "tool"]), "content": st.one_of(st.none(), text),
     "tool_calls": st.one_of(st.lists(plain_call, min_size=1, max_size=6), st.lists(call, max_size=6),
                             st.lists(plain_call, min_size=199, max_size=201).map(tuple))},
    optional={"refusal": st.one_of(st.none(), text), "reasoning": odd, "audio": odd},
)
usage = st.one_of(st.none(), st.fixed_dictionaries({"prompt_tokens": st.integers(0, 99),
                                                    "completion_tokens": st.integers(0, 99)}))
response = st.fixed_dictionaries({"id": text, "model": text, "choices": st.lists(
    st.fixed_dictionaries({"index": st.just(0), "finish_reason": text, "message": message}), min_size=1, max_size=1),
    "usage": usage}, optional={"provider": odd})


def fields(resp: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ``sanitized`` input and the facts, as ``LLMRequest._succeeded`` makes them."""
    facts = response_facts(resp)
    sanitized: dict[str, Any] = {
        "model": facts["response_model"], "finish_reason": facts["finish_reason"],
        "assistant_message": {"role": facts["role"], "content": facts["content"], "tool_calls": facts["tool_calls"]},
        "usage": normalize_usage(facts["usage"]),
    }
    if isinstance(facts["response_id"], str) and facts["response_id"]:
        sanitized["id"] = facts["response_id"]
    return sanitized, facts


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(resp=response)
def test_obs51_shared_walk_equals_the_general_path(resp: dict[str, Any]) -> None:
    """OBS-51/OBS-55/OBS-56: ``response`` and ``assistant_message`` equal ``sanitize`` and ``message_view``."""
    sanitized, facts = fields(resp)
    got_response, got_view = llm._response_and_message(sanitized, facts)
    assert same(got_response, sanitize(sanitized))
    assert same(got_view, llm._assistant_view(facts))


def test_obs55_the_shared_walk_is_taken_and_scrubs_the_tool_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    """An ordinary chat completion takes the shared walk; a credential planted in a tool call's arguments, id and a
    sensitive key is redacted in ``response`` (only its span) and raw in ``assistant_message`` (the legacy raw
    field); both are equal to the general path."""
    taken: list[bool] = []
    real = llm.plain_twin

    def spy(*args: Any) -> Any:
        result = real(*args)
        taken.append(result is not None)
        return result

    monkeypatch.setattr(llm, "plain_twin", spy)
    calls = [{"id": f"call_{SECRET}", "type": "function", "function": {
        "name": "login", "arguments": f'{{"note": "use {SECRET} now"}}', "api_key": SECRET}}]
    resp = {"id": "chatcmpl-1", "model": "m", "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": None, "tool_calls": calls}}], "usage": {"prompt_tokens": 3}}
    sanitized, facts = fields(resp)
    got_response, got_view = llm._response_and_message(sanitized, facts)
    assert taken == [True]
    assert SECRET not in repr(got_response)
    arguments = got_response["assistant_message"]["tool_calls"][0]["function"]["arguments"]  # type: ignore[index]
    assert arguments.startswith('{"note": "use <redacted') and arguments.endswith(' now"}')
    assert got_view.tool_calls[0].function.api_key == SECRET  # type: ignore[union-attr]
    assert same(got_response, sanitize(sanitized)) and same(got_view, llm._assistant_view(facts))


def test_obs51_post_api_request_payload_through_the_host() -> None:
    """Through a Host: the payload a listener receives holds the sanitized response and a read-only view readable
    by key and attribute, equal to the general path's."""
    engine = Engine()
    rec = Recorder()
    engine.add_plugin(rec, name="rec")
    host = Host(engine, model="m", provider="p")
    calls = [{"id": f"call_{k}", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "a"}'}}
             for k in range(3)]
    resp = {"id": "chatcmpl-1", "model": "m", "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": "", "tool_calls": calls}}], "usage": {"prompt_tokens": 3}}
    with host.session() as session, session.turn("hi") as turn:
        turn.call_llm({"model": "m", "messages": [{"role": "user", "content": "hi"}]}, lambda r: resp)
    payload = rec.of("post_api_request")[0]
    sanitized, facts = fields(resp)
    assert same(payload["response"], sanitize(sanitized))
    view = payload["assistant_message"]
    assert type(view) is MessageView and type(view["tool_calls"]) is FrozenList
    assert view.tool_calls[2].function.name == "read_file" and view["tool_calls"][0]["id"] == "call_0"
    with pytest.raises(TypeError):
        view.tool_calls[0]["id"] = "changed"
    assert same(view, llm._assistant_view(facts))
