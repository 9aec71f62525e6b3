"""Middleware rules (spec 02) that no other test file names: the host side of the request and
execution chains, the guidance the shipped plugins follow, and composition.

Each test names the requirement it proves; the rule is restated in its docstring.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_pipeline import Engine, Host
from hermes_pipeline.components.request_defaults import RequestDefaultsComponent
from hermes_pipeline.contract.hooks import MIDDLEWARE_KINDS
from hermes_pipeline.host.llm import ErrorInfo
from hermes_pipeline.testing import capture

from tests.sinks.atif._support import memory_atif_plugin
from tests.sinks.atof._support import memory_plugin
from hermes_pipeline.testing import chat_response

FULL_REQUEST: dict[str, Any] = {
    "model": "test-model", "messages": [{"role": "user", "content": "hi"}],
    "tools": [{"type": "function", "function": {"name": "read_file", "parameters": {"type": "object"}}}],
    "temperature": 0.3, "stream": False, "stream_options": {"include_usage": True},
    "extra_body": {"provider": {"order": ["a", "b"]}}, "max_tokens": 64,
}


def make_host(engine: Engine) -> Host:
    return Host(engine, platform="cli", model="test-model", provider="test-provider",
                base_url="http://127.0.0.1:9/v1", api_mode="chat_completions")


class Flaky(Exception):
    """A retryable provider error."""


def test_mw_1_shipped_telemetry_uses_observer_hooks_only() -> None:
    """MW-1: read-only telemetry uses observer hooks, never middleware: the shipped ATOF and ATIF
    consumers register no middleware of any kind, and a turn they observe reaches the provider with
    the request the host built."""
    engine = Engine()
    memory_plugin(engine)
    memory_atif_plugin(engine)
    assert not any(engine.has_middleware(kind) for kind in MIDDLEWARE_KINDS)
    assert engine.has_hook("post_tool_call")
    got: list[dict[str, Any]] = []
    with make_host(engine).session() as session, session.turn("x") as turn:
        turn.call_llm(dict(FULL_REQUEST), lambda req: got.append(req) or chat_response())
    assert got == [FULL_REQUEST]


def test_mw_7_request_is_the_full_provider_argument_dictionary() -> None:
    """MW-7: ``request`` given to request and execution middleware is the whole provider argument
    dictionary: messages, model settings, tool definitions, streaming and provider options."""
    engine = Engine()
    seen: dict[str, Any] = {}
    engine.register_middleware("llm_request", lambda request, **kw: seen.setdefault("request", request) and None)

    def execution(request: dict[str, Any], next_call: Any, **kw: Any) -> Any:
        seen["execution"] = request
        return next_call()

    engine.register_middleware("llm_execution", execution)
    with make_host(engine).session() as session, session.turn("x") as turn:
        turn.call_llm(dict(FULL_REQUEST), lambda req: chat_response())
    assert seen["request"] == FULL_REQUEST and seen["execution"] == FULL_REQUEST


def test_mw_8_execution_middleware_result_reaches_the_host_unwrapped() -> None:
    """MW-8: an execution middleware returns exactly the shape the provider adapter or tool
    dispatcher expects, and the engine adds no envelope: the object a middleware returns is the
    object ``call_llm`` returns, and a tool middleware's value becomes the tool result text."""
    engine = Engine()
    own = chat_response("from middleware")
    engine.register_middleware("llm_execution", lambda **kw: own)
    engine.register_middleware("tool_execution", lambda **kw: "tool text from middleware")
    with make_host(engine).session() as session, session.turn("x") as turn:
        assert turn.call_llm(dict(FULL_REQUEST), lambda req: chat_response("provider")) is own
        assert turn.call_tool("t", {}, lambda: "tool") == "tool text from middleware"


@pytest.mark.parametrize("kind", ["llm", "tool"])
def test_mw_19_runner_failure_continues_with_unmodified_payload(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """MW-19: if the request-middleware runner itself fails unexpectedly, the host continues with the
    unmodified payload, an original equal to it and an empty trace (fail-open)."""
    engine = Engine()
    engine.register_middleware(f"{kind}_request", lambda **kw: {"request": {"model": "x"}, "args": {"p": "x"}})

    def broken(*a: Any, **k: Any) -> Any:
        raise RuntimeError("runner broke")

    monkeypatch.setattr(engine, f"apply_{kind}_request_middleware", broken)
    seen: dict[str, Any] = {}

    def execution(**kw: Any) -> Any:
        seen.update(kw)
        return kw["next_call"]()

    engine.register_middleware(f"{kind}_execution", execution)
    with make_host(engine).session() as session, session.turn("x") as turn:
        if kind == "llm":
            got: list[dict[str, Any]] = []
            turn.call_llm(dict(FULL_REQUEST), lambda req: got.append(req) or chat_response())
            assert got == [FULL_REQUEST]
            assert seen["request"] == FULL_REQUEST and seen["original_request"] == FULL_REQUEST
        else:
            assert turn.call_tool("t", {"p": "a"}, lambda p: f"ran {p}") == "ran a"
            assert seen["args"] == {"p": "a"} and seen["original_args"] == {"p": "a"}
    assert seen["middleware_trace"] == []


def test_mw_20_partial_result_replaces_the_whole_request() -> None:
    """MW-20: a request middleware returns a complete replacement; a partial dict replaces the whole
    request (no merge with the original)."""
    engine = Engine()
    engine.register_middleware("llm_request", lambda **kw: {"request": {"temperature": 0.9}})
    got: list[dict[str, Any]] = []
    with make_host(engine).session() as session, session.turn("x") as turn:
        turn.call_llm(dict(FULL_REQUEST), lambda req: got.append(req) or chat_response())
    assert got == [{"temperature": 0.9}]


def test_mw_21_and_mw_49_in_place_mutation_never_reaches_the_host() -> None:
    """MW-21 / MW-49: callbacks must not mutate their inputs in place, and nothing may rely on it: a
    callback that mutates ``request`` / ``args`` in place works on the runner's copy, so the host's own
    objects stay as they were, and the mutation leaves no trace entry (its effect on the effective
    payload is undefined by the spec and not checked here)."""
    engine = Engine()

    def mutate_request(request: dict[str, Any], **kw: Any) -> None:
        request["model"] = "mutated"
        request["messages"].append({"role": "user", "content": "injected"})

    def mutate_args(args: dict[str, Any], **kw: Any) -> None:
        args["path"] = "/etc/shadow"

    engine.register_middleware("llm_request", mutate_request)
    engine.register_middleware("tool_request", mutate_args)
    request = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    args = {"path": "a.txt"}
    with capture(engine) as rec, make_host(engine).session() as session, session.turn("x") as turn:
        turn.call_llm(request, lambda req: chat_response())
        turn.call_tool("read_file", args, lambda path: "ok")
    assert request == {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    assert args == {"path": "a.txt"}
    assert rec.last("pre_api_request")["middleware_trace"] == []
    assert rec.last("post_tool_call")["middleware_trace"] == []


def test_mw_22_and_mw_49_request_middlewares_do_not_compose() -> None:
    """MW-22 / MW-49: every callback sees the same input and the last valid result wins, so two
    request middlewares that change different fields do not compose; neither sees the other's output."""
    engine = Engine()
    engine.register_middleware("llm_request", lambda request, **kw: {"request": {**request, "temperature": 0}})
    engine.register_middleware("llm_request", lambda request, **kw: {"request": {**request, "max_tokens": 5}})
    got: list[dict[str, Any]] = []
    with make_host(engine).session() as session, session.turn("x") as turn:
        turn.call_llm({"model": "m", "messages": []}, lambda req: got.append(req) or chat_response())
    assert got == [{"model": "m", "messages": [], "max_tokens": 5}]


_json = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
                     max_leaves=8)


@settings(max_examples=80, deadline=None)
@given(defaults=st.dictionaries(st.sampled_from(["temperature", "top_p", "seed", "model"]), _json, max_size=4),
       request=st.dictionaries(st.sampled_from(["temperature", "model", "messages", "stream"]), _json, max_size=4))
def test_mw_23_and_mw_46_shipped_middleware_is_deterministic_and_complete(defaults: dict[str, Any],
                                                                          request: dict[str, Any]) -> None:
    """MW-23 / MW-46 / MW-20: the shipped ``request_defaults`` middleware gives the same output for the
    same input, returns a complete replacement (every original key kept, only missing keys added) and
    never mutates its input."""

    class Ctx:
        config = {"llm": defaults}

    component = RequestDefaultsComponent(Ctx())  # type: ignore[arg-type]
    before = repr(request)
    first = component.llm_request(request)
    second = component.llm_request(request)
    assert first == second and repr(request) == before
    if first is None:
        assert set(defaults) <= set(request)
    else:
        out = first["request"]
        assert {k: out[k] for k in request} == request
        assert set(out) == set(request) | set(defaults)


def test_mw_31_and_mw_46_short_circuit_without_next_call() -> None:
    """MW-31 / MW-46: an execution middleware calls ``next_call`` once, or deliberately short-circuits
    by returning its own result without calling it; then the provider is not called at all."""
    engine = Engine()
    calls: list[str] = []

    def once(next_call: Any, **kw: Any) -> Any:
        calls.append("mw")
        return next_call()

    engine.register_middleware("llm_execution", once)
    with make_host(engine).session() as session, session.turn("x") as turn:
        turn.call_llm(dict(FULL_REQUEST), lambda req: calls.append("provider") or chat_response())
    assert calls == ["mw", "provider"]
    short = Engine()
    short.register_middleware("llm_execution", lambda **kw: chat_response("cached"))
    calls.clear()
    with make_host(short).session() as session, session.turn("x") as turn:
        response = turn.call_llm(dict(FULL_REQUEST), lambda req: calls.append("provider") or chat_response())
    assert calls == [] and response["choices"][0]["message"]["content"] == "cached"


def test_mw_36_execution_middleware_runs_once_per_attempt_inside_the_retry_loop() -> None:
    """MW-36: execution middleware runs inside the host's retry loop, once per provider attempt; the
    retries are the host's (same ``api_request_id``), not the middleware's."""
    engine = Engine()
    attempts: list[str] = []

    def count(api_request_id: str, next_call: Any, **kw: Any) -> Any:
        attempts.append(api_request_id)
        return next_call()

    engine.register_middleware("llm_execution", count)
    failures = [Flaky("busy"), Flaky("busy")]

    def provider(request: dict[str, Any]) -> Any:
        if failures:
            raise failures.pop()
        return chat_response()

    with capture(engine) as rec, make_host(engine).session() as session, session.turn("x") as turn:
        turn.call_llm(dict(FULL_REQUEST), provider, max_retries=2,
                      classify=lambda exc: ErrorInfo("server_error", True, 503), retry_delay=lambda n: 0.0)
    assert len(attempts) == 3 and len(set(attempts)) == 1
    assert [e["retry_count"] for e in rec.of("pre_api_request")] == [0, 1, 2]


def test_mw_39_auxiliary_calls_through_the_host_pass_middleware_again() -> None:
    """MW-39 (informative): a middleware that makes its own provider call through the host goes
    through middleware again, so it must guard against recursion; with a guard, it runs twice."""
    engine = Engine()
    seen: list[Any] = []
    state = {"inner": False}
    holder: dict[str, Any] = {}

    def auxiliary(request: dict[str, Any], next_call: Any, **kw: Any) -> Any:
        seen.append(request.get("purpose", "main"))
        if not state["inner"]:
            state["inner"] = True
            try:
                holder["turn"].call_llm({"model": "aux", "messages": [], "purpose": "aux"},
                                        lambda req: chat_response("aux"))
            finally:
                state["inner"] = False
        return next_call()

    engine.register_middleware("llm_execution", auxiliary)
    with make_host(engine).session() as session, session.turn("x") as turn:
        holder["turn"] = turn
        turn.call_llm(dict(FULL_REQUEST), lambda req: chat_response())
    assert seen == ["main", "aux"]


def test_mw_45_process_middleware_runs_for_every_profile() -> None:
    """MW-45: middleware is behaviour-changing code that runs for every managed call of every profile
    hosted by the process: middleware on the process engine rewrites the calls of two profiles'
    (child) engines alike."""
    process = Engine()
    process.register_middleware("llm_request", lambda request, **kw: {"request": {**request, "tag": "process"}})
    got: list[dict[str, Any]] = []
    for profile in (process.child(), process.child()):
        with make_host(profile).session() as session, session.turn("x") as turn:
            turn.call_llm({"model": "m", "messages": []}, lambda req: got.append(req) or chat_response())
    assert got == [{"model": "m", "messages": [], "tag": "process"}] * 2


def test_mw_48_tool_request_runs_before_policy_and_approval() -> None:
    """MW-48 / MW-43: ``tool_request`` runs before approval and policy checks: ``pre_tool_call``, the
    guardrail, the approval gate (and its prompt) and the tool all see the rewritten argument."""
    engine = Engine()
    engine.register_middleware("tool_request", lambda args, **kw: {"args": {**args, "path": "/safe/" + args["path"]}})
    seen: dict[str, Any] = {}
    engine.register_hook("pre_tool_call", lambda args, **kw: seen.setdefault("pre_tool_call", dict(args)) and None)
    with capture(engine) as rec, make_host(engine).session() as session, session.turn("x") as turn:

        def guardrail(name: str, args: dict[str, Any]) -> str | None:
            seen["guardrail"] = dict(args)
            return None

        def approve(name: str, args: dict[str, Any]) -> bool:
            seen["approve"] = dict(args)
            with turn.approval("cat " + args["path"]) as approval:
                return approval.resolve("once")

        result = turn.call_tool("read_file", {"path": "notes.txt"}, lambda path: f"read {path}",
                                guardrail=guardrail, approve=approve)
    rewritten = {"path": "/safe/notes.txt"}
    assert seen == {"pre_tool_call": rewritten, "guardrail": rewritten, "approve": rewritten}
    assert rec.last("pre_approval_request")["command"] == "cat /safe/notes.txt"
    assert result == "read /safe/notes.txt"
