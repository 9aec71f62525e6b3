"""The tool-call path of the host API (spec 01 §5, §7.5; spec 02 §8.2)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from hermes_pipeline import Engine, Host
from hermes_pipeline.testing import Recorder

from hermes_pipeline.testing import chat_response


def read_file(path: str) -> str:
    return f"contents of {path}"


def run_one(host: Host, fn: Any = read_file, args: dict[str, Any] | None = None, **kw: Any) -> str:
    with host.session() as session, session.turn("go") as turn:
        turn.call_llm({"model": "m", "messages": []}, lambda r: chat_response())
        return turn.call_tool("read_file", args or {"path": "a.txt"}, fn, tool_call_id="call_1", **kw)


def test_obs_33_order_and_mw_42_full_tool_path(engine: Engine, host: Host, rec: Recorder) -> None:
    """OBS-33 / MW-42: tool_request → pre_tool_call → tool_execution → tool → post_tool_call → transform."""
    trail: list[str] = []
    engine.register_middleware("tool_request", lambda **kw: trail.append("tool_request"))
    engine.register_hook("pre_tool_call", lambda **kw: trail.append("pre_tool_call"))
    engine.register_middleware("tool_execution", lambda **kw: trail.append("tool_execution") or kw["next_call"]())
    engine.register_hook("post_tool_call", lambda **kw: trail.append("post_tool_call"))
    engine.register_hook("transform_tool_result", lambda **kw: trail.append("transform_tool_result"))
    result = run_one(host, lambda path: trail.append("tool") or "ok")
    assert result == "ok"
    assert trail == ["tool_request", "pre_tool_call", "tool_execution", "tool", "post_tool_call",
                     "transform_tool_result"]
    post = rec.last("post_tool_call")
    assert post["api_request_id"] == rec.last("post_api_request")["api_request_id"]
    assert post["tool_call_id"] == "call_1" and post["status"] == "ok" and post["error_type"] is None


def test_obs_37_38_ok_and_error_results(host: Host, rec: Recorder) -> None:
    """OBS-37 / OBS-38: status derived after the gate from the result text."""
    run_one(host)
    run_one(host, lambda path: json.dumps({"error": "file not found"}))
    run_one(host, lambda path: {"error": ""})  # falsy error member → ok
    statuses = [(e["status"], e["error_type"], e["error_message"]) for e in rec.of("post_tool_call")]
    assert statuses == [("ok", None, None), ("error", "tool_error", "file not found"), ("ok", None, None)]
    assert [e["result"] for e in rec.of("post_tool_call")][0] == "contents of a.txt"
    assert all(e["duration_ms"] >= 0 for e in rec.of("post_tool_call"))


def test_obs_39_raising_tool_still_reports_error_and_skips_transform(host: Host, rec: Recorder) -> None:
    """OBS-39 / OBS-41: a raising execution chain gives status error with a scrubbed message; no transform."""

    def broken(path: str) -> str:
        raise PermissionError("denied; token=ghp_abcdefghijklmnopqrstuvwxyz0123456789")

    result = run_one(host, broken)
    assert json.loads(result)["error"].startswith("PermissionError")
    post = rec.last("post_tool_call")
    assert post["status"] == "error" and post["error_type"] == "tool_error"
    assert "ghp_abcdefghijklmnopqrstuvwxyz0123456789" not in post["error_message"]
    assert post["result"] == result
    assert rec.of("transform_tool_result") == []


def test_obs_40_block_first_valid_wins_and_modify_before_block_merges(engine: Engine, host: Host,
                                                                     rec: Recorder) -> None:
    """§5 / OBS-40: modify directives before the winning block merge; a block without message is ignored."""
    ran: list[Any] = []
    engine.register_hook("pre_tool_call", lambda **kw: {"action": "modify", "args": {"path": "b.txt"}})
    engine.register_hook("pre_tool_call", lambda **kw: {"action": "block", "message": ""})
    engine.register_hook("pre_tool_call", lambda **kw: {"action": "approve"})
    engine.register_hook("pre_tool_call", lambda **kw: {"action": "block", "message": "no reading today"})
    engine.register_hook("pre_tool_call", lambda **kw: {"action": "block", "message": "second block"})
    result = run_one(host, lambda path: ran.append(path))
    assert ran == []
    assert json.loads(result) == {"error": "no reading today"}
    post = rec.last("post_tool_call")
    assert (post["status"], post["error_type"], post["error_message"], post["duration_ms"]) == (
        "blocked", "plugin_block", "no reading today", 0)
    assert post["args"] == {"path": "b.txt"} and post["result"] == result
    assert rec.of("transform_tool_result") == []


def test_pre_tool_call_modify_shallow_merges_in_order(engine: Engine, host: Host) -> None:
    """§5: modify directives shallow-merge in dispatch order over the effective args."""
    got: list[dict[str, Any]] = []
    engine.register_hook("pre_tool_call", lambda **kw: {"action": "modify", "args": {"path": "x", "a": 1}})
    engine.register_hook("pre_tool_call", lambda **kw: {"action": "modify", "args": {"path": "y"}})
    engine.register_hook("pre_tool_call", lambda **kw: {"action": "modify", "args": {}})  # empty: ignored
    run_one(host, lambda **a: got.append(a), args={"path": "orig", "b": 2})
    assert got == [{"path": "y", "a": 1, "b": 2}]


def test_obs_30_pre_tool_call_fires_exactly_once(engine: Engine, host: Host, rec: Recorder) -> None:
    """OBS-30: single-fire, even with tool middleware present."""
    engine.register_middleware("tool_execution", lambda **kw: kw["next_call"]())
    run_one(host)
    assert len(rec.of("pre_tool_call")) == 1 and len(rec.of("post_tool_call")) == 1


def test_obs_31_allowlist_denial_skips_pre_tool_call(host: Host, rec: Recorder) -> None:
    """OBS-31: refused before hooks → no pre_tool_call; post_tool_call still fires blocked."""
    result = run_one(host, deny="tool not in this session's allowlist")
    assert rec.of("pre_tool_call") == []
    post = rec.last("post_tool_call")
    assert post["status"] == "blocked" and post["error_type"] == "tool_scope_block"
    assert json.loads(result)["error"] == "tool not in this session's allowlist"


def test_guardrail_and_approval_gates_block(host: Host, rec: Recorder) -> None:
    """§8.2 step 3: host guardrail and approval refusals report blocked."""
    run_one(host, guardrail=lambda name, args: "path outside sandbox")
    run_one(host, approve=lambda name, args: False)
    assert [(e["status"], e["error_type"]) for e in rec.of("post_tool_call")] == [
        ("blocked", "guardrail_block"), ("blocked", "approval_denied")]


def test_mw_43_pre_tool_call_and_policy_see_rewritten_args(engine: Engine, host: Host, rec: Recorder) -> None:
    """MW-43 / MW-40: tool_request rewrites reach pre_tool_call, guardrails, execution and post_tool_call."""
    engine.register_middleware("tool_request", lambda **kw: {"args": {"path": "/safe/" + kw["args"]["path"]},
                                                             "source": "sandbox"})
    seen: dict[str, Any] = {}

    def mw(**kw: Any) -> Any:
        seen["exec"] = (kw["args"], kw["original_args"], kw["middleware_trace"], kw["tool_call_id"])
        return kw["next_call"]()

    engine.register_middleware("tool_execution", mw)
    run_one(host, guardrail=lambda name, args: seen.setdefault("guardrail", args) and None)
    assert seen["guardrail"] == {"path": "/safe/a.txt"}
    assert seen["exec"] == ({"path": "/safe/a.txt"}, {"path": "a.txt"}, [{"source": "sandbox"}], "call_1")
    assert rec.last("pre_tool_call")["args"] == {"path": "/safe/a.txt"}
    assert rec.last("pre_tool_call")["middleware_trace"] == [{"source": "sandbox"}]
    assert rec.last("post_tool_call")["middleware_trace"] == [{"source": "sandbox"}]
    assert "middleware_trace" not in rec.last("transform_tool_result").payload


def test_transform_tool_result_first_str_wins(engine: Engine, host: Host) -> None:
    """§5: the first str return of transform_tool_result replaces the result."""
    engine.register_hook("transform_tool_result", lambda **kw: 42)
    engine.register_hook("transform_tool_result", lambda **kw: "[redacted by plugin]")
    engine.register_hook("transform_tool_result", lambda **kw: "too late")
    assert run_one(host) == "[redacted by plugin]"


def test_keyboard_interrupt_reports_cancelled_and_propagates(host: Host, rec: Recorder) -> None:
    """OBS-37: the cancelled path still fires post_tool_call, then the interrupt propagates."""

    def interrupted(path: str) -> str:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_one(host, interrupted)
    post = rec.last("post_tool_call")
    assert post["status"] == "cancelled" and post["error_type"] == "keyboard_interrupt"
    end = rec.last("on_session_end")
    assert end["interrupted"] is True and end["completed"] is False
    assert rec.of("transform_tool_result") == []


def test_asyncio_cancellation_reports_cancelled(host: Host, rec: Recorder) -> None:
    """Cancelling a task mid-tool reports status cancelled and closes the turn as interrupted."""
    started = asyncio.Event()

    async def slow_tool(path: str) -> str:
        started.set()
        await asyncio.Event().wait()
        return "never"

    async def main() -> None:
        async def agent() -> None:
            with host.session() as session, session.turn("go") as turn:
                await turn.acall_tool("read_file", {"path": "a"}, slow_tool, tool_call_id="c9")

        task = asyncio.create_task(agent())
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    post = rec.last("post_tool_call")
    assert (post["status"], post["error_type"], post["tool_call_id"]) == ("cancelled", "cancelled", "c9")
    assert rec.last("on_session_end")["interrupted"] is True


def test_async_tool_with_sync_middleware_chain(engine: Engine, host: Host, rec: Recorder) -> None:
    """acall_tool accepts async and sync tools; middleware runs with the async terminal bridged."""

    async def atool(path: str) -> str:
        await asyncio.sleep(0)
        return f"async {path}"

    engine.register_middleware("tool_execution", lambda **kw: kw["next_call"]({"path": "rewritten"}))

    async def main() -> list[str]:
        with host.session() as session, session.turn("go") as turn:
            return [await turn.acall_tool("t", {"path": "a"}, atool),
                    await turn.acall_tool("t", {"path": "b"}, read_file)]

    assert asyncio.run(main()) == ["async rewritten", "contents of rewritten"]
    assert [e["status"] for e in rec.of("post_tool_call")] == ["ok", "ok"]


def test_obs_66_no_listener_no_status_derivation(engine: Engine, host: Host,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """OBS-66 / OBS-69: with only an unrelated listener, status is never derived, nothing is built."""
    import hermes_pipeline.host.tools as tools

    def forbidden(*a: Any, **k: Any) -> Any:
        raise AssertionError("derived without a listener")

    monkeypatch.setattr(tools, "derive_status", forbidden)
    monkeypatch.setattr(tools, "history_entry", forbidden)
    engine.register_hook("on_session_start", lambda **kw: None)
    assert run_one(host, lambda path: json.dumps({"error": "x"})) == '{"error": "x"}'


def test_no_plugin_fast_path_matches_instrumented_results(host: Host) -> None:
    """With no plugins at all the tool runs directly, with the same result text contract."""
    assert run_one(host) == "contents of a.txt"
    assert run_one(host, lambda path: {"n": 1}) == '{"n": 1}'
    assert json.loads(run_one(host, lambda path: 1 / 0))["error"].startswith("ZeroDivisionError")


def test_bad_plugins_never_break_the_tool_path(engine: Engine, host: Host, rec: Recorder) -> None:
    """Bad input: raising, garbage-returning and wrong-signature plugins leave the loop intact."""
    engine.register_hook("pre_tool_call", lambda **kw: 1 / 0, plugin="raiser")
    engine.register_hook("pre_tool_call", lambda **kw: object(), plugin="garbage")
    engine.register_hook("pre_tool_call", lambda a, b, c: None, plugin="wrong-signature")
    engine.register_hook("transform_tool_result", lambda **kw: ["not", "a", "str"], plugin="garbage2")
    engine.register_middleware("tool_request", lambda **kw: {"args": "not a dict"}, plugin="garbage3")
    engine.register_middleware("tool_execution", lambda **kw: 1 / 0, plugin="mw-raiser")
    assert run_one(host) == "contents of a.txt"
    assert rec.last("post_tool_call")["status"] == "ok"
    stats = engine.failure_stats().by_plugin
    assert stats["raiser"] == 1 and stats["wrong-signature"] == 1 and stats["mw-raiser"] == 1


def _interrupted(path: str) -> str:
    raise KeyboardInterrupt


def _hook_interrupt(**kw: Any) -> None:
    raise KeyboardInterrupt


_SCENARIOS: dict[str, tuple[Any, dict[str, Any]]] = {
    "ok": (read_file, {}),
    "non-str result": (lambda path: {"n": [1, 2]}, {}),
    "error text": (lambda path: '  {"error": "no such file"}', {}),
    "raising tool": (lambda path: 1 / 0, {}),
    "plugin block": (read_file, {"pre_tool_call": lambda **kw: {"action": "block", "message": "no"}}),
    "plugin modify": (read_file, {"pre_tool_call": lambda **kw: {"action": "modify", "args": {"path": "b"}}}),
    "transform": (read_file, {"transform_tool_result": lambda **kw: "replaced"}),
    "interrupted tool": (_interrupted, {}),
    "interrupting pre_tool_call": (read_file, {"pre_tool_call": _hook_interrupt}),
    "interrupting post_tool_call": (read_file, {"post_tool_call": _hook_interrupt}),
}


@pytest.mark.parametrize("scenario", sorted(_SCENARIOS))
def test_hooks_only_path_reports_like_the_gated_path(scenario: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tool call with hook listeners but no middleware and no host gate runs from locals in
    ``call_tool`` (no :class:`ToolCall` unless handed over): it fires the same hooks with the same payloads
    (key order included), returns the same text and raises the same way as the gated path
    (``call_gated``), which an allow-all guardrail takes."""
    import hermes_pipeline.host.tools as tools_module

    fn, hooks = _SCENARIOS[scenario]
    gated_calls: list[str] = []
    original = tools_module.call_gated

    def counted(*args: Any) -> str:
        gated_calls.append(args[1])
        return original(*args)

    monkeypatch.setattr(tools_module, "call_gated", counted)

    def run(gated: bool) -> tuple[list[tuple[str, list[tuple[str, Any]]]], Any]:
        engine = Engine()
        rec = Recorder()
        engine.add_plugin(rec, name="recorder")
        for hook, callback in hooks.items():
            engine.register_hook(hook, callback)
        host = Host(engine, model="m", provider="p", toolsets={"read_file": "file"})
        outcome: Any
        try:
            with host.session("s") as session, session.turn("go") as turn:
                outcome = turn.call_tool("read_file", {"path": "a"}, fn, tool_call_id="call_1",
                                         guardrail=(lambda name, args: None) if gated else None)
        except BaseException as exc:  # noqa: BLE001 - compared below
            outcome = type(exc)
        varying = {"duration_ms", "task_id", "turn_id"}  # a clock reading and per-turn random IDs
        events = [(e.hook, [(k, None if k in varying else v) for k, v in e.payload.items()]) for e in rec.events]
        return events, outcome

    assert run(gated=False) == run(gated=True)
    assert gated_calls == ["read_file"]  # the gated run only


def test_hooks_only_path_keeps_the_tool_call_context_and_subagent_records() -> None:
    """Inside the tool, the current context carries the call's ID on the hooks-only path too; a
    subagent session still keeps its metadata-only tool history for ``subagent_stop``."""
    from hermes_pipeline.host import current_context

    engine = Engine()
    rec = Recorder()
    engine.add_plugin(rec, name="recorder")
    host = Host(engine, model="m")
    seen: list[str] = []

    def tool(path: str) -> str:
        seen.append(current_context().tool_call_id)
        return "ok"

    with host.session("parent") as session, session.turn("go") as turn:
        with turn.subagent(role="r", goal="g") as run:
            with run.session.turn("child") as child_turn:
                child_turn.call_tool("read_file", {"path": "a"}, tool, tool_call_id="call_9")
            run.finish("completed")
        assert current_context().tool_call_id == ""
    assert seen == ["call_9"]
    history = rec.last("subagent_stop")["tool_call_history"]
    assert [h["tool_name"] for h in history] == ["read_file"]
