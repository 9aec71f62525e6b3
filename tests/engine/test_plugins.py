"""The three plugin styles on one engine, including plugins written only from the seed documents."""

from __future__ import annotations

import logging
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline import Engine, Host, PluginError, PluginLoadError, hookimpl

from hermes_pipeline.testing import chat_response

# The observer example of the seed documents (000 / 001), as a plugin author would write it.
SEED_OBSERVER = '''
EVENTS = []

def start_llm_span(**kw):
    EVENTS.append(("start_llm_span", kw))

def finish_llm_span(**kw):
    EVENTS.append(("finish_llm_span", kw))

def start_tool_span(**kw):
    EVENTS.append(("start_tool_span", kw))

def finish_tool_span(**kw):
    EVENTS.append(("finish_tool_span", kw))

def register(ctx):
    ctx.register_hook("pre_api_request", on_pre_api_request)
    ctx.register_hook("post_api_request", on_post_api_request)
    ctx.register_hook("pre_tool_call", on_pre_tool_call)
    ctx.register_hook("post_tool_call", on_post_tool_call)

def on_pre_api_request(**kwargs):
    start_llm_span(
        request_id=kwargs.get("api_request_id"),
        turn_id=kwargs.get("turn_id"),
        request=kwargs.get("request"),
        model=kwargs.get("model"),
    )

def on_post_api_request(**kwargs):
    finish_llm_span(
        request_id=kwargs.get("api_request_id"),
        response=kwargs.get("response"),
        usage=kwargs.get("usage"),
        duration=kwargs.get("api_duration"),
    )

def on_pre_tool_call(**kwargs):
    start_tool_span(
        call_id=kwargs.get("tool_call_id"),
        name=kwargs.get("tool_name"),
        args=kwargs.get("args"),
    )

def on_post_tool_call(**kwargs):
    finish_tool_span(
        call_id=kwargs.get("tool_call_id"),
        result=kwargs.get("result"),
        status=kwargs.get("status"),
        duration_ms=kwargs.get("duration_ms"),
    )
'''

# The middleware examples of the seed document (002), unchanged.
SEED_MIDDLEWARE = '''
import time

LOG = []

def register(ctx):
    ctx.register_middleware("llm_request", tag_llm_request)
    ctx.register_middleware("tool_request", normalize_terminal_workdir)
    ctx.register_middleware("llm_execution", time_llm_execution)
    ctx.register_middleware("tool_execution", annotate_tool_execution)


def tag_llm_request(**kwargs):
    request = dict(kwargs["request"])
    extra_body = dict(request.get("extra_body") or {})
    extra_body.setdefault("metadata", {})["hermes_middleware_demo"] = True
    request["extra_body"] = extra_body
    return {
        "request": request,
        "source": "middleware-demo",
        "reason": "tagged provider request",
    }


def normalize_terminal_workdir(**kwargs):
    if kwargs.get("tool_name") != "terminal":
        return None
    args = dict(kwargs["args"])
    args.setdefault("workdir", "/tmp/hermes-middleware-demo")
    return {
        "args": args,
        "source": "middleware-demo",
        "reason": "defaulted terminal workdir",
    }


def time_llm_execution(**kwargs):
    started = time.monotonic()
    response = kwargs["next_call"](kwargs["request"])
    elapsed_ms = int((time.monotonic() - started) * 1000)
    LOG.append(f"llm_execution elapsed_ms={elapsed_ms}")
    return response


def annotate_tool_execution(**kwargs):
    result = kwargs["next_call"](kwargs["args"])
    # Metrics, logging, or external routing can happen here.
    return result
'''


@pytest.fixture
def plugin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in [m for m in sys.modules if m.startswith(("seed_", "ep_"))]:
        sys.modules.pop(name, None)


def test_obs_2_seed_observer_plugin_loads_unchanged(engine: Engine, host: Host, plugin_dir: Path) -> None:
    """OBS-2 / OBS-3 / OBS-7: the seed's observer example loads via register(ctx) and gets its fields in order."""
    (plugin_dir / "seed_observer.py").write_text(SEED_OBSERVER)
    name = engine.load_plugin("seed_observer")
    module = sys.modules["seed_observer"]
    with host.session() as session, session.turn("read it") as turn:
        turn.call_llm({"model": "test-model", "messages": [{"role": "user", "content": "read it"}]},
                      lambda r: chat_response(tool_calls=[{"id": "call_1", "type": "function",
                                                           "function": {"name": "read_file",
                                                                        "arguments": "{\"path\": \"a\"}"}}]))
        turn.call_tool("read_file", {"path": "a"}, lambda path: "text", tool_call_id="call_1")
    events = module.EVENTS
    assert [e[0] for e in events] == ["start_llm_span", "finish_llm_span", "start_tool_span", "finish_tool_span"]
    start, finish, tool_start, tool_finish = (e[1] for e in events)
    assert start["request_id"] == finish["request_id"] != "" and start["turn_id"] == turn.turn_id
    assert start["model"] == "test-model" and start["request"]["method"] == "POST"
    assert finish["usage"]["total_tokens"] == 15 and finish["duration"] >= 0 and finish["response"]["model"]
    assert tool_start == {"call_id": "call_1", "name": "read_file", "args": {"path": "a"}}
    assert tool_finish["result"] == "text" and tool_finish["status"] == "ok" and tool_finish["duration_ms"] >= 0
    assert engine.plugins.get(name).style == "register"  # type: ignore[union-attr]


def test_mw_2_seed_middleware_examples_load_unchanged(engine: Engine, host: Host, plugin_dir: Path) -> None:
    """MW-2: the seed's four middleware examples load via register(ctx) and behave as documented."""
    (plugin_dir / "seed_middleware.py").write_text(SEED_MIDDLEWARE)
    engine.load_plugin("seed_middleware")
    module = sys.modules["seed_middleware"]
    seen: dict[str, Any] = {}
    with host.session() as session, session.turn("x") as turn:
        turn.call_llm({"model": "m", "messages": []}, lambda r: seen.setdefault("request", r) and chat_response())
        out = turn.call_tool("terminal", {"command": "ls"}, lambda **a: seen.setdefault("args", a) and "ok")
    assert seen["request"]["extra_body"] == {"metadata": {"hermes_middleware_demo": True}}
    assert seen["args"] == {"command": "ls", "workdir": "/tmp/hermes-middleware-demo"}
    assert out == "ok" and len(module.LOG) == 1 and module.LOG[0].startswith("llm_execution elapsed_ms=")


def test_register_only_module_and_bare_function_are_plugins(engine: Engine) -> None:
    """A module (or function) that only defines register(ctx) is accepted wherever a plugin is."""
    calls: list[str] = []

    def register(ctx: Any) -> None:
        assert ctx.plugin_name == "fn-plugin" and ctx.config == {"level": 2}
        ctx.register_hook("on_session_start", lambda **kw: calls.append("fn"))

    engine.add_plugin(register, name="fn-plugin", config={"level": 2})
    engine.dispatch("on_session_start", {})
    assert calls == ["fn"]


def test_hookimpl_module_and_object_plugins(engine: Engine, plugin_dir: Path) -> None:
    """OBS-10: pluggy-style plugins as modules and as objects, mixed with register(ctx) in one module."""
    (plugin_dir / "ep_hookimpls.py").write_text(textwrap.dedent('''
        from hermes_pipeline import hookimpl
        SEEN = []

        @hookimpl
        def on_session_start(session_id):
            SEEN.append(("impl", session_id))

        def register(ctx):
            ctx.register_hook("on_session_start", lambda **kw: SEEN.append(("cb", kw["session_id"])))
    '''))
    engine.load_plugin("ep_hookimpls")
    engine.dispatch("on_session_start", {"session_id": "s1"})
    assert sorted(sys.modules["ep_hookimpls"].SEEN) == [("cb", "s1"), ("impl", "s1")]


def test_component_class_lifecycle(engine: Engine) -> None:
    """Spec 03 §15.2: constructor(ctx), activate(), hookimpls after activation, flush+shutdown on removal."""
    trail: list[str] = []

    class Component:
        kind = "audit_trail"

        def __init__(self, ctx: Any) -> None:
            self.ctx = ctx
            trail.append(f"init {ctx.kind} {dict(ctx.config)} {ctx.logger.name}")

        def activate(self) -> None:
            trail.append("activate")
            self.ctx.register_hook("on_session_end", lambda **kw: trail.append("cb"))

        @hookimpl
        def on_session_end(self, session_id: str) -> None:
            trail.append(f"impl {session_id}")

        def flush(self, timeout: float) -> None:
            trail.append("flush")

        def shutdown(self) -> None:
            trail.append("shutdown")

    name = engine.add_plugin(Component, config={"x": 1})
    assert name == "component:audit_trail"
    engine.dispatch("on_session_end", {"session_id": "s"})
    engine.remove_plugin(name)
    assert trail == ["init audit_trail {'x': 1} hermes_pipeline.component.audit_trail", "activate", "cb",
                     "impl s", "flush", "shutdown"]
    assert not engine.has_hook("on_session_end")


def test_failing_register_leaves_nothing_behind(engine: Engine) -> None:
    """A plugin whose register(ctx) raises is not loaded and none of its callbacks stay."""

    def register(ctx: Any) -> None:
        ctx.register_hook("post_tool_call", lambda **kw: None)
        raise RuntimeError("half-way")

    with pytest.raises(RuntimeError):
        engine.add_plugin(register, name="half")
    assert not engine.has_hook("post_tool_call") and engine.plugins.names() == []


def test_plugin_errors_are_typed_and_clear(engine: Engine, caplog: Any) -> None:
    """Bad plugins: nothing to load, duplicate names, hookimpl args outside the spec, unknown hookimpls."""
    with pytest.raises(PluginError, match="nothing to load"):
        engine.add_plugin(object(), name="empty")

    class BadArgs:
        @hookimpl
        def post_tool_call(self, not_a_field: str) -> None:
            pass

    with pytest.raises(PluginError, match="not_a_field"):
        engine.add_plugin(BadArgs(), name="bad-args")

    class Future:
        @hookimpl
        def on_new_hook(self) -> None:
            pass

    with caplog.at_level(logging.WARNING):
        engine.add_plugin(Future(), name="future")
    assert "on_new_hook" in caplog.text and "future" in caplog.text
    with pytest.raises(PluginError, match="already loaded"):
        engine.add_plugin(Future(), name="future")
    with pytest.raises(PluginLoadError, match="failed to import"):
        engine.load_plugin("no_such_module_anywhere")
    with pytest.raises(PluginLoadError, match="not found"):
        engine.load_plugin("json:no_such_attribute")


def _dist(root: Path, name: str, entry_points: str) -> None:
    info = root / f"{name}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(entry_points)


def test_entry_point_plugin_loaded_by_name_only(engine: Engine, plugin_dir: Path) -> None:
    """§15: a plugin published in hermes_pipeline.components loads by name; others are never imported."""
    (plugin_dir / "ep_good.py").write_text(textwrap.dedent('''
        SEEN = []
        def register(ctx):
            ctx.register_hook("on_session_start", lambda **kw: SEEN.append(dict(ctx.config)))
    '''))
    (plugin_dir / "ep_never.py").write_text("raise RuntimeError('must never be imported')\n")
    _dist(plugin_dir, "good_dist", "[hermes_pipeline.components]\ngood = ep_good\nnever = ep_never\n")
    assert engine.load_entry_point("good", config={"k": "v"}) == "good"
    engine.dispatch("on_session_start", {})
    assert sys.modules["ep_good"].SEEN == [{"k": "v"}] and "ep_never" not in sys.modules
    with pytest.raises(PluginLoadError, match="failed to import"):
        engine.load_entry_point("never")
    with pytest.raises(PluginLoadError, match="installed: .*good"):
        engine.load_entry_point("missing")


def test_entry_point_published_twice_is_an_error(engine: Engine, plugin_dir: Path) -> None:
    """CFG-81: the same entry-point name from two distributions names both."""
    (plugin_dir / "ep_dup.py").write_text("def register(ctx):\n    pass\n")
    _dist(plugin_dir, "dist_one", "[hermes_pipeline.components]\ndup = ep_dup\n")
    _dist(plugin_dir, "dist_two", "[hermes_pipeline.components]\ndup = ep_dup\n")
    with pytest.raises(PluginLoadError, match="dist_one.*dist_two"):
        engine.load_entry_point("dup")


def test_component_registers_helper_objects_removed_with_it(engine: Engine) -> None:
    """§15.2: a component can delegate hooks to helper objects via ctx.register_plugin."""
    seen: list[str] = []

    class Helper:
        @hookimpl
        def post_tool_call(self, tool_name: str) -> None:
            seen.append(tool_name)

    class Component:
        kind = "delegating"

        def __init__(self, ctx: Any) -> None:
            self.ctx = ctx

        def activate(self) -> None:
            self.ctx.register_plugin(Helper())

    name = engine.add_plugin(Component)
    engine.dispatch("post_tool_call", {"tool_name": "t"})
    assert seen == ["t"]
    engine.remove_plugin(name)
    assert not engine.has_hook("post_tool_call")
