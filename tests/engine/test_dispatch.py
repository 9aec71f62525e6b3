"""Observer registration and dispatch (spec 01 §2, §3, §11)."""

from __future__ import annotations

import asyncio
import inspect
import logging
import threading
from typing import Any

import pluggy
import pytest

import hermes_pipeline
from hermes_pipeline import Engine, InvalidCallbackError, WrapperHookimplError, hookimpl, hookspec
from hermes_pipeline.contract import hookspecs
from hermes_pipeline.contract.hooks import MIDDLEWARE_KINDS, OBSERVER_HOOKS
from hermes_pipeline.engine.hang import MAX_ABANDONED, parse_timeout


@pytest.fixture
def engine() -> Engine:
    return Engine()


def test_obs_9_markers_and_one_hookspec_per_hook() -> None:
    """OBS-9 / MW-4: project markers are exported; every hook and middleware kind has one hookspec."""
    assert isinstance(hookspec, pluggy.HookspecMarker) and hookspec.project_name == "hermes_pipeline"
    assert isinstance(hookimpl, pluggy.HookimplMarker) and hookimpl.project_name == "hermes_pipeline"
    specs = {name for name, fn in vars(hookspecs).items() if inspect.isfunction(fn)
             and hasattr(fn, "hermes_pipeline_spec")}
    assert specs == set(OBSERVER_HOOKS) | {f"middleware_{k}" for k in MIDDLEWARE_KINDS}
    for name in specs:
        fn = getattr(hookspecs, name)
        opts = fn.hermes_pipeline_spec
        assert not opts.get("firstresult") and not opts.get("historic")
        assert "telemetry_schema_version" in inspect.signature(fn).parameters
        assert fn.__doc__, name
        if not name.startswith("middleware_"):
            assert "Fields" in fn.__doc__, name


def test_obs_9_catalogue_has_all_nineteen_hooks() -> None:
    """OBS-9: the catalogue of spec 01 §7.0 (19 hooks) plus the extension hooks (segments, compaction, skills,
    the context snapshot of BOOK-29) and the seven Hermes Agent hooks outside the catalogue."""
    from hermes_pipeline.contract.hooks import V1_HOOKS

    assert len(V1_HOOKS) == 19 and len(OBSERVER_HOOKS) == 30
    assert {h for h, i in OBSERVER_HOOKS.items() if i.family == "hermes"} == {
        "pre_verify", "transform_terminal_output", "pre_gateway_dispatch", "post_gateway_dispatch",
        "kanban_task_claimed", "kanban_task_completed", "kanban_task_blocked"}
    assert {h for h, i in OBSERVER_HOOKS.items() if i.family == "extension"} == {"on_session_segment",
                                                                                 "on_compaction",
                                                                                 "on_skill_lifecycle",
                                                                                 "on_context_snapshot"}
    assert OBSERVER_HOOKS["pre_tool_call"].hang_class == "C"
    assert {h for h, i in OBSERVER_HOOKS.items() if i.must_gate} == {
        "pre_api_request", "post_api_request", "api_request_error", "post_tool_call", "transform_tool_result"}


def test_obs_3_same_callable_twice_runs_twice(engine: Engine) -> None:
    """OBS-3: no deduplication."""
    calls: list[int] = []

    def cb(**kw: Any) -> None:
        calls.append(1)

    engine.register_hook("post_tool_call", cb)
    engine.register_hook("post_tool_call", cb)
    engine.dispatch("post_tool_call", {})
    assert calls == [1, 1]


def test_obs_4_unknown_hook_stored_with_warning_and_fires(engine: Engine, caplog: Any) -> None:
    """OBS-4: unknown hook names are accepted with one WARNING naming plugin, hook, valid hooks."""
    calls: list[dict[str, Any]] = []
    with caplog.at_level(logging.WARNING):
        engine.register_hook("pre_tts_synthesis", lambda **kw: calls.append(kw), plugin="future-plugin")
    text = caplog.text
    assert "pre_tts_synthesis" in text and "future-plugin" in text and "post_tool_call" in text
    engine.dispatch("pre_tts_synthesis", {"x": 1})
    assert calls and calls[0]["x"] == 1


def test_non_callable_rejected_at_registration(engine: Engine) -> None:
    """A non-callable is rejected with a typed error naming plugin and hook."""
    with pytest.raises(InvalidCallbackError, match="plugin 'p'.*post_tool_call"):
        engine.register_hook("post_tool_call", "not callable", plugin="p")  # type: ignore[arg-type]
    with pytest.raises(InvalidCallbackError):
        engine.register_middleware("llm_request", None)  # type: ignore[arg-type]
    assert not engine.has_hook("post_tool_call")


def test_obs_6_and_obs_8_kwargs_only_and_signature_adaptation(engine: Engine) -> None:
    """OBS-6 / OBS-8: keyword-only calls; narrow signatures get matching keys; defaults kept."""
    got: list[Any] = []

    def narrow(tool_name: str, status: str = "default", *, extra: str = "kw-default") -> None:
        got.append((tool_name, status, extra))

    def positional_only(x, /):  # type: ignore[no-untyped-def]
        got.append(x)

    engine.register_hook("post_tool_call", narrow)
    engine.register_hook("post_tool_call", positional_only)  # receives nothing → TypeError → fail-open
    engine.dispatch("post_tool_call", {"tool_name": "t", "result": "r"})
    assert got == [("t", "default", "kw-default")]


def test_obs_8_missing_required_parameter_is_a_callback_failure(engine: Engine, caplog: Any) -> None:
    """OBS-8: a required parameter missing from the payload raises TypeError, handled fail-open."""
    after: list[int] = []
    engine.register_hook("post_tool_call", lambda required_field: None, plugin="wrong-signature")
    engine.register_hook("post_tool_call", lambda **kw: after.append(1))
    with caplog.at_level(logging.WARNING):
        engine.dispatch("post_tool_call", {"tool_name": "t"})
    assert after == [1]
    assert "TypeError" in caplog.text and "wrong-signature" in caplog.text


def test_obs_10_hookimpl_receives_fields_and_none_for_absent(engine: Engine) -> None:
    """OBS-10: hookimpl parameters get same-named fields; absent declared fields arrive as None."""
    got: list[tuple[Any, ...]] = []

    class Plugin:
        @hookimpl
        def post_tool_call(self, tool_name: str, status: str, error_type: str | None) -> None:
            got.append((tool_name, status, error_type))

    engine.add_plugin(Plugin(), name="p")
    engine.dispatch("post_tool_call", {"tool_name": "t", "status": "ok"})
    assert got == [("t", "ok", None)]


def test_obs_11_dispatch_order(engine: Engine) -> None:
    """OBS-11: tryfirst hookimpls, then normal entries in registration order, then trylast."""
    order: list[str] = []

    def plugin(label: str, **opts: bool) -> object:
        class P:
            @hookimpl(**opts)
            def on_session_start(self) -> None:
                order.append(label)

        return P()

    engine.add_plugin(plugin("trylast", trylast=True), name="a")
    engine.register_hook("on_session_start", lambda **kw: order.append("cb1"))
    engine.add_plugin(plugin("normal-impl"), name="b")
    engine.add_plugin(plugin("tryfirst", tryfirst=True), name="c")
    engine.register_hook("on_session_start", lambda **kw: order.append("cb2"))
    engine.dispatch("on_session_start", {})
    assert order == ["tryfirst", "cb1", "normal-impl", "cb2", "trylast"]


def test_obs_12_raising_hookimpl_does_not_stop_others(engine: Engine) -> None:
    """OBS-12: the engine iterates implementations itself, so one raising hookimpl stops nothing."""
    reached: list[str] = []

    class Bad:
        @hookimpl(tryfirst=True)
        def pre_llm_call(self) -> None:
            raise RuntimeError("bad plugin")

    class Good:
        @hookimpl
        def pre_llm_call(self, user_message: str) -> str:
            reached.append(user_message)
            return "ctx"

    engine.add_plugin(Bad(), name="bad")
    engine.add_plugin(Good(), name="good")
    assert engine.dispatch("pre_llm_call", {"user_message": "hi"}) == ["ctx"]
    assert reached == ["hi"]


def test_obs_13_wrapper_hookimpls_rejected(engine: Engine) -> None:
    """OBS-13: wrapper / hookwrapper hookimpls are refused, naming plugin and hook."""

    class W:
        @hookimpl(hookwrapper=True)
        def post_tool_call(self) -> Any:
            yield

    with pytest.raises(WrapperHookimplError, match="'w'.*post_tool_call"):
        engine.add_plugin(W(), name="w")
    assert not engine.has_hook("post_tool_call")


def test_obs_14_schema_version_set_if_absent(engine: Engine) -> None:
    """OBS-14: telemetry_schema_version injected into every payload, without overwriting."""
    got: list[Any] = []
    engine.register_hook("on_session_start", lambda **kw: got.append(kw["telemetry_schema_version"]))
    engine.dispatch("on_session_start", {})
    engine.dispatch("on_session_start", {"telemetry_schema_version": "hermes.observer.v9"})
    assert got == ["hermes.observer.v1", "hermes.observer.v9"]
    assert hermes_pipeline.TELEMETRY_SCHEMA_VERSION == "hermes.observer.v1"


def test_obs_15_fail_open_warning_names_everything(engine: Engine, caplog: Any) -> None:
    """OBS-15 / OBS-5: an exception is caught; the WARNING names hook, callback, type and ≤200 chars of message,
    and the plugin that registered the callback (the registry records it)."""

    def explode(**kw: Any) -> None:
        raise ValueError("x" * 500)

    engine.register_hook("post_llm_call", explode, plugin="exploder")
    engine.register_hook("post_llm_call", lambda **kw: "still ran")
    with caplog.at_level(logging.WARNING):
        assert engine.dispatch("post_llm_call", {}) == ["still ran"]
    message = caplog.records[-1].getMessage()
    assert "post_llm_call" in message and "explode" in message and "ValueError" in message and "exploder" in message
    assert "x" * 200 in message and "x" * 201 not in message


def test_obs_16_warn_once_then_debug(engine: Engine, caplog: Any) -> None:
    """OBS-16: the first failure per (plugin, hook, exception type) is a WARNING, repeats are DEBUG, whatever
    their messages (hermes_pipeline keys without the message); counters keep counting."""

    def flaky(**kw: Any) -> None:
        raise KeyError(kw.get("n"))

    engine.register_hook("pre_tool_call", flaky, plugin="flaky")
    with caplog.at_level(logging.DEBUG, logger="hermes_pipeline"):
        for _ in range(5):
            engine.dispatch("pre_tool_call", {"n": 1})
        engine.dispatch("pre_tool_call", {"n": 2})  # a different message: still the same key
    levels = [r.levelno for r in caplog.records if "flaky" in r.getMessage()]
    assert levels.count(logging.WARNING) == 1 and levels.count(logging.DEBUG) == 5
    assert engine.failure_stats().by_plugin["flaky"] == 6


def test_obs_17_base_exceptions_propagate(engine: Engine) -> None:
    """OBS-17: KeyboardInterrupt, SystemExit and CancelledError are not swallowed."""
    for exc in (KeyboardInterrupt(), SystemExit(3), asyncio.CancelledError()):
        e = Engine()

        def raiser(exc: BaseException = exc, **kw: Any) -> None:
            raise exc

        e.register_hook("on_session_end", raiser)
        with pytest.raises(type(exc)):
            e.dispatch("on_session_end", {})


def test_obs_18_non_none_results_in_order(engine: Engine) -> None:
    """OBS-18: dispatch returns the non-None results in dispatch order."""
    for value in ("a", None, {"b": 1}, None, 0):
        engine.register_hook("transform_tool_result", lambda value=value, **kw: value)
    assert engine.dispatch("transform_tool_result", {}) == ["a", {"b": 1}, 0]


def test_obs_19_same_payload_object_for_every_callback(engine: Engine) -> None:
    """OBS-19: one payload object shared by all callbacks (no per-callback copy)."""
    seen: list[dict[str, Any]] = []
    engine.register_hook("post_tool_call", lambda **kw: seen.append(kw["args"]))
    engine.register_hook("post_tool_call", lambda **kw: seen.append(kw["args"]))
    args = {"path": "a"}
    engine.dispatch("post_tool_call", {"args": args})
    assert seen[0] is args and seen[1] is args


def test_obs_20_async_callbacks_awaited_without_and_with_running_loop(engine: Engine) -> None:
    """OBS-20: an awaitable result is awaited on the engine's own loop when the caller runs no loop; under a
    running loop the callback still runs to completion (off that loop) but is not waited for."""
    ran = threading.Event()

    async def ctx(**kw: Any) -> str:
        await asyncio.sleep(0)
        ran.set()
        return "async context"

    engine.register_hook("pre_llm_call", ctx)
    assert engine.dispatch("pre_llm_call", {}) == ["async context"]
    ran.clear()

    async def inside_loop() -> list[Any]:
        return engine.dispatch("pre_llm_call", {})

    assert asyncio.run(inside_loop()) == []
    assert ran.wait(10)


def test_obs_21_dispatch_while_registering_from_threads(engine: Engine) -> None:
    """OBS-21: concurrent dispatch and registration: snapshots, no lost or duplicate calls per dispatch."""
    counts: list[int] = []
    lock = threading.Lock()
    engine.register_hook("post_tool_call", lambda **kw: None)
    start = threading.Barrier(5)

    def dispatcher() -> None:
        start.wait()
        for _ in range(300):
            with lock:
                counts.append(len(engine.dispatch("post_tool_call", {"x": 1})))

    def registrar() -> None:
        start.wait()
        for _ in range(100):
            engine.register_hook("post_tool_call", lambda **kw: 1)

    threads = [threading.Thread(target=dispatcher) for _ in range(4)] + [threading.Thread(target=registrar)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(counts) == 1200 and all(0 <= c <= 100 for c in counts)
    assert len(engine.dispatch("post_tool_call", {})) == 100


def test_obs_22_has_hook(engine: Engine) -> None:
    """OBS-22: has_hook is True iff a consumer listens; removal turns it back off."""
    assert not engine.has_hook("post_tool_call")
    name = engine.add_plugin(lambda ctx: ctx.register_hook("post_tool_call", lambda **kw: None), name="p")
    assert engine.has_hook("post_tool_call") and not engine.has_hook("pre_tool_call")
    engine.remove_plugin(name)
    assert not engine.has_hook("post_tool_call")
    assert engine.dispatch("post_tool_call", {}) == []


def test_dispatch_with_no_listener_touches_nothing(engine: Engine) -> None:
    """OBS-66: with no listener the payload is not even modified (no schema injection)."""
    payload: dict[str, Any] = {}
    assert engine.dispatch("post_tool_call", payload) == []
    assert payload == {}


# ---------------------------------------------------------------- hang protection (§11)


def test_obs_71_timeout_parsing() -> None:
    """§11 table: 0 disables, >600 clamps, negative and junk give the default 0."""
    assert parse_timeout(0) == 0 and parse_timeout("2.5") == 2.5 and parse_timeout(601) == 600
    assert parse_timeout(-1) == 0 and parse_timeout("abc") == 0 and parse_timeout(None) == 0
    assert parse_timeout(float("nan")) == 0 and parse_timeout(True) == 0
    assert Engine().hook_callback_timeout == 0


def test_obs_71_callbacks_run_in_copy_of_callers_context() -> None:
    """OBS-71: bounded callbacks run on a worker thread inside a copy of the caller's contextvars."""
    import contextvars

    var: contextvars.ContextVar[str] = contextvars.ContextVar("var", default="unset")
    engine = Engine(hook_callback_timeout=5)
    seen: list[tuple[str, bool]] = []
    engine.register_hook("on_session_start",
                         lambda **kw: seen.append((var.get(), threading.current_thread() is threading.main_thread())))
    var.set("caller value")
    engine.dispatch("on_session_start", {})
    assert seen == [("caller value", False)]


def test_obs_72_timed_out_observer_abandoned_and_loop_goes_on(caplog: Any) -> None:
    """OBS-72: a hung observer is abandoned with a WARNING; later callbacks still run; late result dropped."""
    engine = Engine(hook_callback_timeout=0.05)
    release = threading.Event()
    finished = threading.Event()

    def hang(**kw: Any) -> str:
        release.wait(10)
        finished.set()
        return "late"

    engine.register_hook("post_llm_call", hang, plugin="hanger")
    engine.register_hook("post_llm_call", lambda **kw: "fast")
    with caplog.at_level(logging.WARNING):
        assert engine.dispatch("post_llm_call", {}) == ["fast"]
    assert "timed out" in caplog.text and "hanger" in caplog.text
    assert engine.failure_stats().timeouts["hanger"] == 1
    release.set()
    assert finished.wait(5)


def test_obs_73_timed_out_pre_tool_call_blocks() -> None:
    """OBS-73: a timed-out pre_tool_call callback becomes a block directive (fail closed)."""
    engine = Engine(hook_callback_timeout=0.05)
    release = threading.Event()
    engine.register_hook("pre_tool_call", lambda **kw: release.wait(10))
    try:
        assert engine.dispatch("pre_tool_call", {}) == [
            {"action": "block", "message": "pre_tool_call plugin callback timed out or is still running"}]
    finally:
        release.set()


def test_obs_73_exception_in_pre_tool_call_stays_fail_open() -> None:
    """OBS-73 choice: an exception in pre_tool_call is fail-open even with hang protection on."""
    engine = Engine(hook_callback_timeout=1)

    def boom(**kw: Any) -> None:
        raise RuntimeError("x")

    engine.register_hook("pre_tool_call", boom)
    assert engine.dispatch("pre_tool_call", {}) == []


def test_obs_76_abandoned_worker_cap(caplog: Any) -> None:
    """OBS-76: at most 3 abandoned workers per callback; at the cap it is not started again."""
    engine = Engine(hook_callback_timeout=0.02)
    release = threading.Event()
    started: list[int] = []

    def hang(**kw: Any) -> None:
        started.append(1)
        release.wait(10)

    engine.register_hook("on_session_end", hang)
    entry = engine.hooks.get("on_session_end")[0]
    try:
        for _ in range(MAX_ABANDONED + 2):
            engine.dispatch("on_session_end", {})
        assert len(started) == MAX_ABANDONED
        assert engine._guard is not None and engine._guard.abandoned(entry) == MAX_ABANDONED
    finally:
        release.set()


def test_obs_75_timeout_warnings_suppressed_for_a_minute(caplog: Any) -> None:
    """OBS-75: after one timeout WARNING for a (hook, callback), repeats within 60 s are DEBUG."""
    engine = Engine(hook_callback_timeout=0.02)
    release = threading.Event()
    engine.register_hook("subagent_stop", lambda **kw: release.wait(10), plugin="slow")
    try:
        with caplog.at_level(logging.DEBUG, logger="hermes_pipeline"):
            engine.dispatch("subagent_stop", {})
            engine.dispatch("subagent_stop", {})
        levels = [r.levelno for r in caplog.records if "slow" in r.getMessage()]
        assert levels == [logging.WARNING, logging.DEBUG]
    finally:
        release.set()


def test_obs_77_middleware_not_subject_to_timeout() -> None:
    """OBS-77 / MW-37: middleware runs synchronously on the caller's thread even with timeouts on."""
    engine = Engine(hook_callback_timeout=0.01)
    threads: list[bool] = []

    def mw(**kw: Any) -> Any:
        threads.append(threading.current_thread() is threading.main_thread())
        return kw["next_call"]()

    engine.register_middleware("tool_execution", mw)
    assert engine.run_tool_execution_middleware("t", {}, lambda a: "r", session_id="s") == "r"
    assert threads == [True]


def test_child_engine_inherits_parent_plugins_in_registration_order() -> None:
    """Spec 03 §11: a profile engine shares process plugins, keeps its own; order stays OBS-11."""
    parent = Engine(hook_callback_timeout=2)
    order: list[str] = []
    parent.register_hook("post_tool_call", lambda **kw: order.append("parent-1"))
    child = parent.child()
    other = parent.child()
    child.register_hook("post_tool_call", lambda **kw: order.append("child"))
    parent.register_hook("post_tool_call", lambda **kw: order.append("parent-2"))
    assert child.hook_callback_timeout == 2
    child.dispatch("post_tool_call", {})
    assert order == ["parent-1", "child", "parent-2"]
    order.clear()
    other.dispatch("post_tool_call", {})
    parent.dispatch("post_tool_call", {})
    assert order == ["parent-1", "parent-2", "parent-1", "parent-2"]
    name = parent.add_plugin(lambda ctx: ctx.register_hook("on_session_start", lambda **kw: None), name="p")
    assert child.has_hook("on_session_start")
    parent.remove_plugin(name)
    assert not child.has_hook("on_session_start") and child.has_hook("post_tool_call")
    child.plugins.remove_all()
    assert len(child.hooks.get("post_tool_call")) == 3  # child's own callback was not a plugin


def test_obs_10_payload_mapping_hookimpl_gets_the_dispatch_dict(engine: Engine) -> None:
    """OBS-10/OBS-19: a hookimpl marked TAKES_PAYLOAD is called with the dispatch's payload dict itself
    (one positional argument), while ordinary hookimpls of the same hook still get keyword arguments
    (absent declared fields as None); pluggy validates the marked one against the signature it wraps."""
    import functools

    from hermes_pipeline.engine.callbacks import TAKES_PAYLOAD

    seen: dict[str, Any] = {}

    def declared(tool_name: str, session_id: str) -> None:
        """The signature pluggy validates."""

    class Recorder:
        @hookimpl
        @functools.wraps(declared)
        def pre_tool_call(self, payload: Any) -> None:
            seen["raw"] = payload

    setattr(Recorder.pre_tool_call, TAKES_PAYLOAD, True)

    class Plain:
        @hookimpl
        def pre_tool_call(self, tool_name: str, session_id: str, turn_id: str) -> None:
            seen["plain"] = (tool_name, session_id, turn_id)

    engine.add_plugin(Recorder(), name="recorder")
    engine.add_plugin(Plain(), name="plain")
    payload = {"tool_name": "t", "session_id": "s", "args": {}}
    engine.dispatch("pre_tool_call", payload)
    assert seen["raw"] is payload
    assert seen["plain"] == ("t", "s", None)


def test_obs_10_declared_fields_bind_the_same_by_position_or_by_name(engine: Engine) -> None:
    """OBS-10: a hookimpl's declared fields are passed by position only when that binds exactly as by
    name (its own leading positional-or-keyword parameters, in order); defaults, keyword-only
    parameters and decorators that accept ``**kwargs`` only keep working."""
    import functools

    from hermes_pipeline.engine.callbacks import _positional

    seen: list[Any] = []

    def keywords_only_wrapper(fn: Any) -> Any:
        @functools.wraps(fn)
        def wrapper(self: Any, **kw: Any) -> Any:  # takes no positional argument after self
            return fn(self, **kw)

        return wrapper

    class Plain:
        @hookimpl
        def pre_tool_call(self, tool_name: str, session_id: str, turn_id: str = "default") -> None:
            seen.append(("plain", tool_name, session_id, turn_id))

    class Wrapped:
        @hookimpl
        @keywords_only_wrapper
        def pre_tool_call(self, tool_name: str, session_id: str) -> None:
            seen.append(("wrapped", tool_name, session_id))

    engine.add_plugin(Plain(), name="plain")
    engine.add_plugin(Wrapped(), name="wrapped")
    engine.dispatch("pre_tool_call", {"session_id": "s", "tool_name": "t"})
    assert seen == [("plain", "t", "s", None), ("wrapped", "t", "s")]
    assert engine.failure_stats().by_plugin == {}
    assert _positional(Plain().pre_tool_call, ("tool_name", "session_id", "turn_id"))
    assert not _positional(Plain().pre_tool_call, ("session_id", "tool_name"))
    assert not _positional(Wrapped().pre_tool_call, ("tool_name", "session_id"))


def test_obs_10_takes_payload_marker_may_name_the_function_to_call(engine: Engine) -> None:
    """OBS-10/OBS-19: a TAKES_PAYLOAD marker that is a function is called instead of the hookimpl, with
    the plugin object and the dispatch's payload dict; the hookimpl keeps its keyword signature."""
    import functools

    from hermes_pipeline.engine.callbacks import TAKES_PAYLOAD

    seen: list[Any] = []

    def declared(tool_name: str, session_id: str) -> None:
        """The signature pluggy validates."""

    def record(self: Any, payload: dict[str, Any]) -> None:
        seen.append((self, payload))

    class Recorder:
        @hookimpl
        @functools.wraps(declared)
        def pre_tool_call(self, **fields: Any) -> None:
            record(self, fields)

    setattr(Recorder.pre_tool_call, TAKES_PAYLOAD, record)
    plugin = Recorder()
    engine.add_plugin(plugin, name="recorder")
    payload = {"tool_name": "t", "session_id": "s"}
    engine.dispatch("pre_tool_call", payload)
    plugin.pre_tool_call(tool_name="direct", session_id="s")
    assert seen[0][0] is plugin and seen[0][1] is payload
    assert seen[1] == (plugin, {"tool_name": "direct", "session_id": "s"})


def test_obs_14_dispatch_to_listeners_a_host_read(engine: Engine) -> None:
    """OBS-14/OBS-18: ``dispatch(hook, payload, entries)`` calls the entries a host read from
    ``hook_listeners`` (no second lookup) and collects their results like a plain dispatch."""
    engine.register_hook("pre_tool_call", lambda **kw: {"action": "modify", "args": {"x": 1}})
    engine.register_hook("pre_tool_call", lambda **kw: 1 / 0, plugin="raiser")
    entries = engine.hook_listeners["pre_tool_call"]
    payload = {"tool_name": "t", "telemetry_schema_version": "v"}
    assert engine.dispatch("pre_tool_call", payload, entries) == [{"action": "modify", "args": {"x": 1}}]
    assert engine.failure_stats().by_plugin == {"raiser": 1}
