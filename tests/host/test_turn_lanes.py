"""Record lanes on the turn's hooks: ``pre_llm_call``, ``post_llm_call`` and ``on_session_end`` without dispatch.

When every listener of one of these hooks is a deferred-projection recorder, the turn hands each one the hook's
fields as one tuple in hookspec order (FMT-79: the caller's thread only timestamps and enqueues), as the tool and
LLM hooks already do. OBS-19: the fields are, value for value and type for type, the payload a dict listener gets
(a key the payload leaves out, such as ``reason`` or ``agent_version``, is a ``None`` field, which is what the
recorder reads for an absent key); the scope events are the same as through the dispatch; a listener that is not
a recorder (``pre_llm_call`` may answer with context) switches the lanes off.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_pipeline import Engine, Host
from hermes_pipeline.contract.hooks import OBSERVER_HOOKS
from hermes_pipeline.contract.hookspecs import hookimpl
from hermes_pipeline.engine.callbacks import RECORD_LANE
from hermes_pipeline.export import ScopePlugin

from tests._payloads import same
from tests.host._lanes import lanes_and_dispatch

TURN_HOOKS = ("pre_llm_call", "post_llm_call", "on_session_end")
SECRET = "sk-ZX0123456789ABCDEFGHIJ"
OUTCOMES = ("complete", "fail", "interrupt", "interrupt_inflight", "end")

_text = st.one_of(st.text(max_size=40), st.just(f"my key is {SECRET}"), st.sampled_from(["x" * 400, "é" * 9_000]))
_leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), _text)
_json = st.recursive(_leaf, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                    st.dictionaries(st.text(max_size=8), inner, max_size=3)),
                     max_leaves=12)
_history = st.lists(st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant", "tool"]),
                                           "content": _json}), max_size=4)
_case = st.fixed_dictionaries({
    "user": _text, "answer": _text, "history": st.one_of(st.none(), _history),
    "sender": st.one_of(st.none(), _text), "version": st.one_of(st.none(), st.just("0.19.0")),
    "outcome": st.sampled_from(OUTCOMES), "reason": st.one_of(st.none(), st.just(""), _text),
})


def _run(engine: Engine, case: dict[str, Any]) -> None:
    session = Host(engine, model="m", platform="cli", agent_version=case["version"]).session("s1")
    outcome = case["outcome"]
    expected = KeyboardInterrupt if outcome.startswith("interrupt") else RuntimeError if outcome == "fail" else None
    with pytest.raises(expected) if expected is not None else _nothing():
        with session.turn(case["user"], conversation_history=case["history"], task_id="k1", turn_id="u1",
                          sender_id=case["sender"]) as turn:
            if outcome == "interrupt_inflight":  # the provider stopped: the end names the request in flight
                turn.call_llm({"model": "m", "messages": []}, _interrupted)
            if outcome == "interrupt":
                raise KeyboardInterrupt
            if outcome == "fail":
                raise RuntimeError(f"boom {SECRET}")
            turn.complete(case["answer"])
            if outcome == "end":
                turn.end(exit_reason="budget", reason=case["reason"])


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


def _interrupted(request: dict[str, Any]) -> Any:
    raise KeyboardInterrupt


def _lane_engine(received: list[tuple[str, tuple[Any, ...]]]) -> Engine:
    engine = Engine()
    for hook in TURN_HOOKS:
        def callback(*a: Any, _hook: str = hook, **k: Any) -> None:
            raise AssertionError(f"{_hook} dispatched although every listener offers a lane")

        def bind(plugin: Any, _hook: str = hook) -> Any:
            return lambda fields: received.append((_hook, fields))

        setattr(callback, RECORD_LANE, bind)
        engine.register_hook(hook, callback)
    return engine


def _dict_engine(payloads: list[tuple[str, dict[str, Any]]]) -> Engine:
    engine = Engine()
    for hook in TURN_HOOKS:
        engine.register_hook(hook, lambda _hook=hook, **payload: payloads.append((_hook, payload)))
    return engine


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=_case)
def test_obs19_turn_lane_fields_are_the_dispatched_payloads(case: dict[str, Any]) -> None:
    """OBS-19 / FMT-79: each turn hook's fields, zipped with the hookspec's names, are the payload a dict listener
    gets for the same turn (odd values, secrets, long strings, nested history; every way a turn ends), each value
    of the same type; the fields of keys the payload leaves out are ``None``, what a recorder reads for them."""
    received: list[tuple[str, tuple[Any, ...]]] = []
    _run(_lane_engine(received), case)
    payloads: list[tuple[str, dict[str, Any]]] = []
    _run(_dict_engine(payloads), case)
    assert [hook for hook, _ in received] == [hook for hook, _ in payloads]
    assert {hook for hook, _ in received} >= {"pre_llm_call", "on_session_end"}
    for (hook, fields), (_, payload) in zip(received, payloads, strict=True):
        named = dict(zip(OBSERVER_HOOKS[hook].fields, fields, strict=True))
        assert payload.pop("telemetry_schema_version")
        assert set(payload) <= set(named)
        assert all(named[k] is None for k in set(named) - set(payload)), hook
        assert all(same(named[k], payload[k]) for k in payload), hook
        if "conversation_history" in payload:  # a copy each, as the payload's: the host's list is never shared
            assert named["conversation_history"] is not case["history"]



@pytest.mark.parametrize("deferred", [True, False])
@pytest.mark.parametrize("outcome", OUTCOMES)
def test_fmt79_turn_lanes_give_the_scope_events_of_the_dispatch(deferred: bool, outcome: str,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The scope projection sees the same turn scopes (start, final response, end and its status) through the
    lanes as through the dispatch."""
    case = {"user": f"go {SECRET}", "answer": "done", "history": [{"role": "user", "content": "before"}],
            "sender": "u-1", "version": "0.19.0", "outcome": outcome, "reason": "why"}
    runs, used = lanes_and_dispatch(lambda engine: _run(engine, case), deferred=deferred, monkeypatch=monkeypatch)
    assert used >= {"pre_llm_call", "on_session_end"}  # the first run really went through the lanes
    assert [e for e in runs[0] if e[5] == "agent" or e[4] == "agent.run"]
    assert runs[0] == runs[1]


class Answering:
    """A plugin listener (not a recorder) answering ``pre_llm_call`` with context."""

    @hookimpl
    def pre_llm_call(self, user_message: str) -> dict[str, str]:
        return {"context": f"context for {user_message}"}


def test_a_listener_that_answers_gets_the_payload_and_its_context_is_kept() -> None:
    engine = Engine()
    engine.add_plugin(ScopePlugin(deferred=True), name="scopes")
    host = Host(engine, model="m")
    assert engine.record_lanes("pre_llm_call", engine.hook_listeners["pre_llm_call"]) is not None
    engine.add_plugin(Answering(), name="answering")
    assert engine.record_lanes("pre_llm_call", engine.hook_listeners["pre_llm_call"]) is None
    with host.session("s1").turn("hi") as turn:
        assert turn.context == "context for hi"
        assert turn.user_content == "hi\n\ncontext for hi"
        turn.complete("ok")
