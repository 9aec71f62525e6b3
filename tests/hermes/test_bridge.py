"""The bridge inside Hermes' own plugin manager: returns as Hermes consumes them, middleware, fail-open.

The bridge is attached to a fresh Hermes ``PluginManager`` through Hermes' ``PluginContext``; the
hooks and middleware are then driven through Hermes' real entry points (``invoke_hook``,
``resolve_pre_tool_block``, ``hermes_cli.middleware``), so what is checked is what Hermes does with
the bridge's results. Skipped when hermes-agent is not installed.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline import Engine
from hermes_pipeline.hermes import register
from hermes_pipeline.hermes.bridge import Bridge
from hermes_pipeline.hermes.normalise import BRIDGE_TRACE_NAME
from hermes_pipeline.testing import capture

hplugins = pytest.importorskip("hermes_cli.plugins", reason="hermes-agent is not installed: pip install '.[hermes]'")
hmiddleware = pytest.importorskip("hermes_cli.middleware")

CTX = {"task_id": "t1", "turn_id": "s1:t1:x", "api_request_id": "s1:t1:x:api:1", "session_id": "s1",
       "platform": "cli", "model": "m", "provider": "custom", "base_url": "http://127.0.0.1:1/v1",
       "api_mode": "chat_completions", "api_call_count": 1}


@pytest.fixture
def manager(monkeypatch: pytest.MonkeyPatch) -> Any:
    """A fresh Hermes plugin manager installed as Hermes' global one for the test."""
    pm = hplugins.PluginManager()
    monkeypatch.setattr(hplugins, "_plugin_manager", pm)
    return pm


def attach(engine: Engine, manager: Any) -> Bridge:
    bridge = Bridge(engine)
    bridge.attach(hplugins.PluginContext(hplugins.PluginManifest(name="hermes_pipeline"), manager))
    return bridge


def test_nothing_is_registered_when_nothing_listens(manager: Any) -> None:
    """No consumer in the engine: Hermes' manager has no hook and no middleware from the bridge."""
    assert attach(Engine(), manager).hooks_to_register() == []
    assert manager._hooks == {} and manager._middleware == {}


def test_pre_llm_call_context_is_joined_for_hermes(manager: Any) -> None:
    engine = Engine()
    engine.register_hook("pre_llm_call", lambda **kw: "recalled: milk")
    engine.register_hook("pre_llm_call", lambda **kw: {"context": "policy: be brief"})
    engine.register_hook("pre_llm_call", lambda **kw: {"context": ""})
    attach(engine, manager)
    results = hplugins.invoke_hook("pre_llm_call", session_id="s1", task_id="t1", turn_id="s1:t1:x",
                                   user_message="hi", conversation_history=[], is_first_turn=True, model="m",
                                   platform="cli", sender_id="")
    assert results == [{"context": "recalled: milk\n\npolicy: be brief"}]


def test_pre_tool_call_block_reaches_hermes_and_modify_is_not_applied(manager: Any,
                                                                       caplog: pytest.LogCaptureFixture) -> None:
    engine = Engine()
    engine.register_hook("pre_tool_call", lambda **kw: {"action": "modify", "args": {"path": "/elsewhere"}})
    engine.register_hook("pre_tool_call",
                         lambda tool_name, **kw: {"action": "block", "message": "no writes"} if tool_name == "write_file"
                         else None)
    attach(engine, manager)
    assert hplugins.resolve_pre_tool_block("write_file", {"path": "x"}, session_id="s1", tool_call_id="c1") \
        == "no writes"
    with caplog.at_level(logging.WARNING, logger="hermes_pipeline.hermes"):
        assert hplugins.resolve_pre_tool_block("read_file", {"path": "x"}, session_id="s1", tool_call_id="c2") is None
    from hermes_pipeline.hermes import returns

    assert "modify" in returns._warned  # said once: Hermes applies only block from pre_tool_call


def test_transform_returns_first_string(manager: Any) -> None:
    engine = Engine()
    engine.register_hook("transform_tool_result", lambda **kw: None)
    engine.register_hook("transform_tool_result", lambda **kw: "shortened")
    engine.register_hook("transform_llm_output", lambda **kw: "")
    engine.register_hook("transform_llm_output", lambda **kw: "Polished.")
    engine.register_hook("transform_terminal_output", lambda **kw: "<trimmed>")
    attach(engine, manager)
    assert hplugins.invoke_hook("transform_tool_result", tool_name="read_file", args={}, result="long",
                                session_id="s1", tool_call_id="c1") == ["shortened"]
    assert hplugins.invoke_hook("transform_llm_output", response_text="raw", session_id="s1", model="m",
                                platform="cli") == ["Polished."]
    assert hplugins.invoke_hook("transform_terminal_output", command="ls", output="a b", returncode=0,
                                task_id="t1", env_type="local") == ["<trimmed>"]


def test_observer_failures_never_reach_hermes(manager: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    engine = Engine()

    def broken(**kw: Any) -> None:
        raise RuntimeError("plugin bug")

    engine.register_hook("pre_llm_call", broken)
    bridge = attach(engine, manager)
    assert hplugins.invoke_hook("pre_llm_call", session_id="s1", turn_id="x") == []
    monkeypatch.setattr(bridge.normaliser, "adapt", lambda hook, payload: 1 / 0)  # the bridge itself breaks
    assert hplugins.invoke_hook("pre_llm_call", session_id="s1", turn_id="x") == []


def test_llm_request_middleware_rewrites_and_its_trace_reaches_pre_api_request(manager: Any) -> None:
    """The engine's request middleware result reaches the provider request; the trace Hermes passes on
    carries the engine's own entries in place of the bridge's."""
    engine = Engine()
    engine.register_middleware("llm_request", lambda request, **kw: {
        "request": {**request, "temperature": 0.2}, "source": "request_defaults", "reason": "filled temperature"})
    attach(engine, manager)
    request = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    result = hmiddleware.apply_llm_request_middleware(request, **CTX)
    assert result.payload["temperature"] == 0.2 and "temperature" not in request
    assert result.trace == [{"source": "hermes_pipeline", "reason": "filled temperature", "name": BRIDGE_TRACE_NAME}]
    with capture(engine) as rec:
        hplugins.invoke_hook("pre_api_request", **CTX, started_at=1.0, middleware_trace=list(result.trace),
                             request_messages=[], request={"method": "POST", "body": result.payload})
    assert rec.last("pre_api_request")["middleware_trace"] == [{"source": "request_defaults",
                                                                 "reason": "filled temperature"}]


class ProviderDown(Exception):
    pass


def test_llm_execution_sees_the_original_provider_error_and_hermes_gets_it_back(manager: Any) -> None:
    seen: list[type[BaseException]] = []
    engine = Engine()

    def guard(next_call: Any, **kw: Any) -> Any:
        try:
            return next_call()
        except ProviderDown as exc:  # catchable by its own type, although Hermes wraps it in transit
            seen.append(type(exc))
            raise

    engine.register_middleware("llm_execution", guard)
    attach(engine, manager)

    def provider(request: Any) -> Any:
        raise ProviderDown("503")

    with pytest.raises(ProviderDown):
        hmiddleware.run_llm_execution_middleware({"model": "m"}, provider, **CTX)
    assert seen == [ProviderDown]


def test_execution_middleware_wraps_the_real_call(manager: Any) -> None:
    engine = Engine()
    engine.register_middleware("tool_execution", lambda next_call, args, **kw: next_call({**args, "limit": 5}) + "!")
    engine.register_middleware("llm_execution", lambda next_call, **kw: {"wrapped": next_call()})
    attach(engine, manager)
    calls: list[Any] = []
    out = hmiddleware.run_tool_execution_middleware("read_file", {"path": "a"}, lambda a: calls.append(a) or "ok",
                                                    session_id="s1", tool_call_id="c1", task_id="t1", turn_id="x",
                                                    api_request_id="r")
    assert out == "ok!" and calls == [{"path": "a", "limit": 5}]
    assert hmiddleware.run_llm_execution_middleware({"model": "m"}, lambda r: "resp", **CTX) == {"wrapped": "resp"}


def test_register_refuses_beside_nemo_relay_on_the_same_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             caplog: pytest.LogCaptureFixture) -> None:
    """One exporter per destination: the bridge registers nothing and says which plugins and what to do."""
    (tmp_path / "config.yaml").write_text("plugins:\n  enabled: [hermes_pipeline, observability/nemo_relay]\n",
                                          encoding="utf-8")
    monkeypatch.setenv("HERMES_HOME", str(tmp_path))
    monkeypatch.setenv("HERMES_NEMO_RELAY_PLUGINS_TOML", str(tmp_path / "plugins.toml"))

    class Ctx:
        registered: list[str] = []

        def register_hook(self, name: str, cb: Any) -> None:
            self.registered.append(name)

        def register_middleware(self, kind: str, cb: Any) -> None:
            self.registered.append(kind)

    ctx = Ctx()
    with caplog.at_level(logging.ERROR, logger="hermes_pipeline.hermes"):
        register(ctx)
    assert ctx.registered == []
    message = " ".join(r.getMessage() for r in caplog.records)
    assert "observability/nemo_relay" in message and "hermes_pipeline" in message
    assert "hermes plugins disable observability/nemo_relay" in message


def test_register_does_nothing_without_a_pipeline_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No pipeline file and shared metrics off: no hook, no middleware, so Hermes behaves as without it."""
    (tmp_path / "config.yaml").write_text("plugins:\n  enabled: [hermes_pipeline]\n", encoding="utf-8")
    monkeypatch.setenv("HERMES_HOME", str(tmp_path))
    monkeypatch.delenv("HERMES_NEMO_RELAY_PLUGINS_TOML", raising=False)
    registered: list[str] = []
    ctx = type("Ctx", (), {"register_hook": lambda self, name, cb: registered.append(name),
                           "register_middleware": lambda self, kind, cb: registered.append(kind)})()
    register(ctx)
    assert registered == []
    assert not (tmp_path / "telemetry").exists()
