"""Middleware semantics of hermes.middleware.v1 (spec 02), one test per rule, named by MW id."""

from __future__ import annotations

import logging
import threading
from typing import Any

import pytest

from hermes_pipeline import Engine, LLMExecutionBlocked, NextCallReusedError, hookimpl
from hermes_pipeline.engine.middleware import RequestMiddlewareResult


@pytest.fixture
def engine() -> Engine:
    return Engine()


def ctx(**extra: Any) -> dict[str, Any]:
    return {"session_id": "s", "task_id": "t", "turn_id": "u", "api_request_id": "u:api:1", **extra}


# ---------------------------------------------------------------- registration


def test_mw_2_register_middleware_appends_in_order(engine: Engine) -> None:
    """MW-2: each register_middleware call appends to the kind's list."""
    seen: list[str] = []
    engine.register_middleware("llm_request", lambda **kw: seen.append("a"))
    engine.register_middleware("llm_request", lambda **kw: seen.append("b"))
    engine.apply_llm_request_middleware({"model": "m"}, **ctx())
    assert seen == ["a", "b"]


def test_mw_3_unknown_kind_stored_with_warning_and_never_invoked(engine: Engine, caplog: Any) -> None:
    """MW-3: an unknown kind is stored with a WARNING naming plugin, kind and valid kinds."""
    called: list[int] = []
    with caplog.at_level(logging.WARNING):
        engine.register_middleware("outbound_message", lambda **kw: called.append(1), plugin="p1")
    assert "outbound_message" in caplog.text and "p1" in caplog.text and "tool_execution" in caplog.text
    assert engine.has_middleware("outbound_message")
    engine.apply_llm_request_middleware({"x": 1}, **ctx())
    assert called == []


def test_mw_4_hookimpls_share_registry_with_tryfirst_and_trylast(engine: Engine) -> None:
    """MW-4: middleware hookimpls and register_middleware callbacks share one ordered registry."""
    order: list[str] = []

    class Last:
        @hookimpl(trylast=True)
        def middleware_llm_request(self, request: dict[str, Any]) -> None:
            order.append("trylast")

    class First:
        @hookimpl(tryfirst=True)
        def middleware_llm_request(self, request: dict[str, Any], original_request: dict[str, Any]) -> None:
            order.append("tryfirst")

    engine.add_plugin(Last(), name="last")
    engine.register_middleware("llm_request", lambda **kw: order.append("normal1"))
    engine.add_plugin(First(), name="first")
    engine.register_middleware("llm_request", lambda **kw: order.append("normal2"))
    engine.apply_llm_request_middleware({"m": 1}, **ctx())
    assert order == ["tryfirst", "normal1", "normal2", "trylast"]


def test_mw_4_wrapper_hookimpl_rejected(engine: Engine) -> None:
    """MW-4 / OBS-13: wrapper-style middleware hookimpls are rejected at registration."""
    from hermes_pipeline import WrapperHookimplError

    class Wrapper:
        @hookimpl(wrapper=True)
        def middleware_tool_execution(self, args: dict[str, Any]) -> Any:
            return (yield)

    with pytest.raises(WrapperHookimplError, match="wrapper"):
        engine.add_plugin(Wrapper(), name="wrap")
    assert not engine.has_middleware("tool_execution")
    assert "wrap" not in engine.plugins.names()


def test_mw_5_removing_plugin_removes_its_middleware(engine: Engine) -> None:
    """MW-5: disabling a plugin removes its middleware."""

    def register(ctx: Any) -> None:
        ctx.register_middleware("tool_request", lambda **kw: {"args": {"x": 2}})

    name = engine.add_plugin(register, name="p")
    assert engine.has_middleware("tool_request")
    engine.remove_plugin(name)
    assert not engine.has_middleware("tool_request")


def test_mw_6_has_middleware(engine: Engine) -> None:
    """MW-6: has_middleware is True iff at least one callback is registered for the kind."""
    assert not engine.has_middleware("llm_execution")
    engine.register_middleware("llm_execution", lambda **kw: kw["next_call"]())
    assert engine.has_middleware("llm_execution")
    assert not engine.has_middleware("tool_execution")


# ---------------------------------------------------------------- request middleware


def test_mw_9_schema_versions_injected(engine: Engine) -> None:
    """MW-9: every middleware call carries both schema versions."""
    calls: list[dict[str, Any]] = []
    engine.register_middleware("llm_request", lambda **kw: calls.append(kw))
    engine.register_middleware("llm_execution", lambda **kw: calls.append(kw) or kw["next_call"]())
    engine.register_middleware("tool_request", lambda **kw: calls.append(kw))
    engine.register_middleware("tool_execution", lambda **kw: calls.append(kw) or kw["next_call"]())
    engine.apply_llm_request_middleware({"a": 1}, **ctx())
    engine.run_llm_execution_middleware({"a": 1}, lambda r: "resp", **ctx())
    engine.apply_tool_request_middleware("t", {"a": 1}, **ctx())
    engine.run_tool_execution_middleware("t", {"a": 1}, lambda a: "res", **ctx())
    assert len(calls) == 4
    for call in calls:
        assert call["telemetry_schema_version"] == "hermes.observer.v1"
        assert call["middleware_schema_version"] == "hermes.middleware.v1"


def test_mw_10_signature_adaptation(engine: Engine) -> None:
    """MW-10 / OBS-8: a callback without **kwargs receives only its named parameters."""
    got: list[tuple[Any, Any]] = []

    def narrow(request: dict[str, Any], turn_id: str, missing: str = "default") -> None:
        got.append((request, turn_id, missing))

    engine.register_middleware("llm_request", narrow)
    engine.apply_llm_request_middleware({"a": 1}, **ctx())
    assert got == [({"a": 1}, "u", "default")]


def test_mw_11_no_listener_no_copy(engine: Engine) -> None:
    """MW-11: with no callback the very same object comes back, unchanged, with an empty trace."""
    request = {"messages": [{"role": "user", "content": "hi"}]}
    result = engine.apply_llm_request_middleware(request, **ctx())
    assert result.payload is request and result.original_payload is request
    assert result.changed is False and result.trace == []


def test_mw_12_two_deep_copies(engine: Engine) -> None:
    """MW-12: original and current are deep copies, distinct from the input and from each other."""
    seen: dict[str, Any] = {}

    def cb(**kw: Any) -> None:
        seen.update(kw)

    engine.register_middleware("llm_request", cb)
    request = {"messages": [{"content": "x"}]}
    engine.apply_llm_request_middleware(request, **ctx())
    assert seen["request"] == request and seen["original_request"] == request
    assert seen["request"] is not request and seen["original_request"] is not request
    assert seen["request"] is not seen["original_request"]
    assert seen["request"]["messages"] is not request["messages"]


def test_mw_13_non_deep_copyable_falls_back_to_shallow(engine: Engine) -> None:
    """MW-13: a payload that cannot be deep-copied is shallow-copied; nested objects are shared."""
    lock = threading.Lock()  # not deep-copyable
    seen: dict[str, Any] = {}
    engine.register_middleware("llm_request", lambda **kw: seen.update(kw))
    request = {"http_client": lock, "model": "m"}
    result = engine.apply_llm_request_middleware(request, **ctx())
    assert seen["request"]["http_client"] is lock
    assert seen["request"] is not request
    assert result.payload == request


def test_mw_14_every_callback_sees_the_same_input(engine: Engine) -> None:
    """MW-14: callbacks receive the same current object; none sees another's output."""
    seen: list[dict[str, Any]] = []

    def first(**kw: Any) -> dict[str, Any]:
        seen.append(kw["request"])
        return {"request": {"model": "changed"}}

    def second(**kw: Any) -> None:
        seen.append(kw["request"])

    engine.register_middleware("llm_request", first)
    engine.register_middleware("llm_request", second)
    engine.apply_llm_request_middleware({"model": "orig"}, **ctx())
    assert seen[0] is seen[1]
    assert seen[1] == {"model": "orig"}


def test_mw_15_last_valid_result_wins_and_invalid_ignored(engine: Engine) -> None:
    """MW-15: valid results apply in registration order; the last valid one wins; others ignored."""
    engine.register_middleware("llm_request", lambda **kw: {"request": {"model": "a"}})
    engine.register_middleware("llm_request", lambda **kw: {"request": "not a dict"})
    engine.register_middleware("llm_request", lambda **kw: {"request": {"model": "b"}, "source": "s2"})
    engine.register_middleware("llm_request", lambda **kw: ["garbage"])
    engine.register_middleware("llm_request", lambda **kw: {"args": {"x": 1}})
    returned = {"model": "c"}
    engine.register_middleware("llm_request", lambda **kw: {"request": returned, "reason": "r3"})
    result = engine.apply_llm_request_middleware({"model": "orig"}, **ctx())
    assert result.payload == {"model": "c"}
    assert result.payload is not returned  # applied as a deep copy
    assert len(result.trace) == 3


def test_mw_16_result_shape_when_no_valid_result(engine: Engine) -> None:
    """MW-16: callbacks but no valid result → payload equal to, but not the same as, the input."""
    engine.register_middleware("tool_request", lambda **kw: None)
    args = {"path": "a"}
    result = engine.apply_tool_request_middleware("read_file", args, **ctx())
    assert isinstance(result, RequestMiddlewareResult)
    assert result.payload == args and result.payload is not args
    assert result.changed is False and result.trace == []
    assert result.original_payload == args


def test_mw_17_trace_entries(engine: Engine) -> None:
    """MW-17: trace keeps non-empty str source/reason/name; otherwise exactly {"source": "plugin"}."""
    engine.register_middleware("tool_request", lambda **kw: {"args": {"a": 1}, "source": "s", "reason": "r",
                                                             "name": "n", "extra": "x"})
    engine.register_middleware("tool_request", lambda **kw: {"args": {"a": 2}, "source": "", "reason": 5})
    engine.register_middleware("tool_request", lambda **kw: {"args": {"a": 3}, "name": "only-name"})
    result = engine.apply_tool_request_middleware("t", {"a": 0}, **ctx())
    assert result.trace == [{"source": "s", "reason": "r", "name": "n"}, {"source": "plugin"}, {"name": "only-name"}]
    assert result.changed is True and result.payload == {"a": 3}


def test_mw_18_raising_request_middleware_isolated(engine: Engine, caplog: Any) -> None:
    """MW-18: a raising callback contributes nothing, is warned once, and others still run."""

    def boom(**kw: Any) -> None:
        raise ValueError("bad middleware")

    engine.register_middleware("llm_request", boom, plugin="broken")
    engine.register_middleware("llm_request", lambda **kw: {"request": {"ok": True}})
    with caplog.at_level(logging.DEBUG, logger="hermes_pipeline"):
        first = engine.apply_llm_request_middleware({"ok": False}, **ctx())
        second = engine.apply_llm_request_middleware({"ok": False}, **ctx())
    assert first.payload == {"ok": True} and second.payload == {"ok": True}
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING and "bad middleware" in r.getMessage()]
    assert len(warnings) == 1 and "broken" in warnings[0].getMessage()


def test_mw_18_base_exception_propagates(engine: Engine) -> None:
    """MW-18 / OBS-17: a BaseException that is not an Exception propagates."""

    def interrupt(**kw: Any) -> None:
        raise KeyboardInterrupt

    engine.register_middleware("tool_request", interrupt)
    with pytest.raises(KeyboardInterrupt):
        engine.apply_tool_request_middleware("t", {}, **ctx())


# ---------------------------------------------------------------- execution middleware


def test_mw_25_no_listener_calls_terminal_directly(engine: Engine) -> None:
    """MW-25: no callback → the terminal is called with the very payload object."""
    request = {"m": 1}
    got: list[Any] = []
    assert engine.run_llm_execution_middleware(request, lambda r: got.append(r) or "resp", **ctx()) == "resp"
    assert got[0] is request


def test_mw_26_first_registered_is_outermost(engine: Engine) -> None:
    """MW-26: nesting in registration order; the innermost next_call invokes the terminal."""
    trail: list[str] = []

    def make(name: str) -> Any:
        def mw(**kw: Any) -> Any:
            trail.append(f"{name}>")
            result = kw["next_call"]()
            trail.append(f"<{name}")
            return result

        return mw

    engine.register_middleware("tool_execution", make("outer"))
    engine.register_middleware("tool_execution", make("inner"))
    result = engine.run_tool_execution_middleware("t", {"a": 1}, lambda a: trail.append("tool") or "r", **ctx())
    assert result == "r"
    assert trail == ["outer>", "inner>", "tool", "<inner", "<outer"]


def test_mw_27_each_frame_receives_payload_original_trace_context(engine: Engine) -> None:
    """MW-27: payload, original, middleware_trace, context and its own next_call for every frame."""
    frames: list[dict[str, Any]] = []

    def mw(**kw: Any) -> Any:
        frames.append(kw)
        return kw["next_call"]({**kw["args"], "depth": len(frames)})

    engine.register_middleware("tool_execution", mw)
    engine.register_middleware("tool_execution", mw)
    original = {"orig": True}
    trace = [{"source": "x"}]
    got: list[Any] = []
    engine.run_tool_execution_middleware("read_file", {"a": 1}, lambda a: got.append(a), original_args=original,
                                         middleware_trace=trace, **ctx(tool_call_id="c1"))
    assert frames[0]["args"] == {"a": 1} and frames[1]["args"] == {"a": 1, "depth": 1}
    assert got == [{"a": 1, "depth": 2}]
    for frame in frames:
        assert frame["original_args"] is original
        assert frame["middleware_trace"] == trace
        assert frame["tool_name"] == "read_file" and frame["tool_call_id"] == "c1" and frame["turn_id"] == "u"
    assert frames[0]["next_call"] is not frames[1]["next_call"]


def test_mw_28_next_call_none_forwards_received_payload(engine: Engine) -> None:
    """MW-28: next_call() and next_call(None) forward the frame's payload; a value replaces it."""
    got: list[Any] = []
    engine.register_middleware("llm_execution", lambda **kw: kw["next_call"](None))
    engine.register_middleware("llm_execution", lambda **kw: kw["next_call"]({"replaced": True}))
    engine.register_middleware("llm_execution", lambda **kw: kw["next_call"]())
    engine.run_llm_execution_middleware({"orig": 1}, lambda r: got.append(r), **ctx())
    assert got == [{"replaced": True}]


def test_mw_29_next_call_is_single_use(engine: Engine) -> None:
    """MW-29: a second next_call raises NextCallReusedError (a RuntimeError) and runs nothing again."""
    runs: list[int] = []
    errors: list[BaseException] = []

    def twice(**kw: Any) -> Any:
        first = kw["next_call"]()
        try:
            kw["next_call"]()
        except NextCallReusedError as exc:
            errors.append(exc)
        return first

    engine.register_middleware("tool_execution", twice)
    assert engine.run_tool_execution_middleware("t", {}, lambda a: runs.append(1) or "r", **ctx()) == "r"
    assert runs == [1]
    assert len(errors) == 1 and isinstance(errors[0], RuntimeError)


def test_mw_30_downstream_error_reaches_caller_unchanged(engine: Engine) -> None:
    """MW-30: next_call re-raises the original exception object; a middleware can catch it by type."""

    class ProviderDown(Exception):
        pass

    original = ProviderDown("down")
    caught: list[BaseException] = []

    def catcher(**kw: Any) -> Any:
        try:
            return kw["next_call"]()
        except ProviderDown as exc:
            caught.append(exc)
            raise

    def terminal(_: Any) -> Any:
        raise original

    engine.register_middleware("llm_execution", catcher)
    engine.register_middleware("llm_execution", lambda **kw: kw["next_call"]())
    with pytest.raises(ProviderDown) as info:
        engine.run_llm_execution_middleware({}, terminal, **ctx())
    assert info.value is original and caught == [original]


def test_mw_32_raise_before_next_call_fails_open(engine: Engine, caplog: Any) -> None:
    """MW-32 row 2 / MW-47: raising before next_call skips that middleware with the payload it received."""
    got: list[Any] = []

    def broken(**kw: Any) -> Any:
        raise RuntimeError("broken before next_call")

    engine.register_middleware("tool_execution", lambda **kw: kw["next_call"]({"from": "outer"}))
    engine.register_middleware("tool_execution", broken, plugin="broken-plugin")
    with caplog.at_level(logging.WARNING):
        result = engine.run_tool_execution_middleware("t", {"a": 1}, lambda a: got.append(a) or "ran", **ctx())
    assert result == "ran" and got == [{"from": "outer"}]
    assert "broken before next_call" in caplog.text and "broken-plugin" in caplog.text


def test_mw_32_raise_after_successful_next_call_keeps_result(engine: Engine) -> None:
    """MW-32 row 3: raising after a successful next_call returns the downstream result; no re-run."""
    runs: list[int] = []

    def after(**kw: Any) -> Any:
        kw["next_call"]()
        raise ValueError("post-processing failed")

    engine.register_middleware("tool_execution", after)
    assert engine.run_tool_execution_middleware("t", {}, lambda a: runs.append(1) or "result", **ctx()) == "result"
    assert runs == [1]


def test_mw_32_downstream_failure_propagates_translation(engine: Engine) -> None:
    """MW-32 row 4: after a failed next_call, the middleware's own (translated) exception propagates."""

    class Translated(Exception):
        pass

    def translate(**kw: Any) -> Any:
        try:
            return kw["next_call"]()
        except OSError as exc:
            raise Translated("tool unavailable") from exc

    def terminal(_: Any) -> Any:
        raise OSError("disk gone")

    engine.register_middleware("tool_execution", translate)
    with pytest.raises(Translated):
        engine.run_tool_execution_middleware("t", {}, terminal, **ctx())


def test_mw_32_short_circuit_and_caught_error_return_value(engine: Engine) -> None:
    """MW-32 row 1: a returned value is the frame result (short-circuit, or a handled downstream error)."""
    runs: list[int] = []
    engine.register_middleware("llm_execution", lambda **kw: {"cached": True})
    assert engine.run_llm_execution_middleware({}, lambda r: runs.append(1), **ctx()) == {"cached": True}
    assert runs == []

    other = Engine()

    def recover(**kw: Any) -> Any:
        try:
            return kw["next_call"]()
        except ValueError:
            return "fallback"

    other.register_middleware("llm_execution", recover)
    assert other.run_llm_execution_middleware({}, lambda r: (_ for _ in ()).throw(ValueError("x")), **ctx()) \
        == "fallback"


def test_mw_32_base_exception_propagates_immediately(engine: Engine) -> None:
    """MW-32 row 5: BaseException that is not an Exception is never swallowed."""

    def stop(**kw: Any) -> Any:
        raise KeyboardInterrupt

    engine.register_middleware("tool_execution", stop)
    runs: list[int] = []
    with pytest.raises(KeyboardInterrupt):
        engine.run_tool_execution_middleware("t", {}, lambda a: runs.append(1), **ctx())
    assert runs == []


def test_mw_33_downstream_failure_never_becomes_none(engine: Engine) -> None:
    """MW-33: a failed downstream with a middleware that swallows nothing never yields None."""

    def careless(**kw: Any) -> Any:
        kw["next_call"]()  # raises; nothing caught
        return None

    def terminal(_: Any) -> Any:
        raise ConnectionError("refused")

    engine.register_middleware("llm_execution", careless)
    with pytest.raises(ConnectionError):
        engine.run_llm_execution_middleware({}, terminal, **ctx())


def test_mw_34_reused_next_call_after_success_returns_stored_result(engine: Engine) -> None:
    """MW-34: NextCallReusedError escaping a frame whose first next_call succeeded → stored result."""
    runs: list[int] = []

    def retrying(**kw: Any) -> Any:
        kw["next_call"]()
        return kw["next_call"]()  # illegal retry, escapes

    engine.register_middleware("tool_execution", retrying)
    assert engine.run_tool_execution_middleware("t", {}, lambda a: runs.append(1) or "once", **ctx()) == "once"
    assert runs == [1]


def test_mw_34_reused_next_call_after_failure_propagates_with_cause(engine: Engine) -> None:
    """MW-34: if the first next_call failed, NextCallReusedError propagates, chained to that failure."""
    failure = TimeoutError("slow provider")

    def retrying(**kw: Any) -> Any:
        try:
            return kw["next_call"]()
        except TimeoutError:
            return kw["next_call"]()

    def terminal(_: Any) -> Any:
        raise failure

    engine.register_middleware("llm_execution", retrying)
    with pytest.raises(NextCallReusedError) as info:
        engine.run_llm_execution_middleware({}, terminal, **ctx())
    assert info.value.__cause__ is failure


def test_mw_35_llm_execution_blocked_always_propagates(engine: Engine) -> None:
    """MW-35: LLMExecutionBlocked is never handled fail-open; checked_by is filled in."""
    runs: list[int] = []

    def guard(**kw: Any) -> Any:
        raise LLMExecutionBlocked("budget exceeded", metadata={"limit": 10})

    engine.register_middleware("llm_execution", guard)
    with pytest.raises(LLMExecutionBlocked) as info:
        engine.run_llm_execution_middleware({}, lambda r: runs.append(1), **ctx())
    assert runs == []
    assert info.value.metadata["checked_by"].endswith("guard") and info.value.metadata["limit"] == 10


def test_mw_38_awaitable_return_is_a_failure(engine: Engine) -> None:
    """MW-38: an async middleware is a contract violation: closed and treated as a failure (fail-open)."""
    closed: list[bool] = []

    async def async_mw(**kw: Any) -> Any:
        closed.append(False)
        return "never"

    engine.register_middleware("tool_execution", async_mw)
    assert engine.run_tool_execution_middleware("t", {}, lambda a: "tool ran", **ctx()) == "tool ran"
    assert closed == []  # the coroutine was closed without running
