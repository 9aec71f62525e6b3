"""Hooks → the profile's scope stream → counters, through the real engine, stream, accounting, subscriber and SQLite
store (spec 05 §4)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline import Engine, Host
from hermes_pipeline.shared_metrics import ManualClock, SharedMetrics, attach_shared_metrics

from .conftest import RESOURCE, TOOLSETS, response, rows, totals


def dispatch(engine: Engine, hook: str, **payload: Any) -> None:
    engine.dispatch(hook, payload)


def start_task(engine: Engine, task: str = "task-1", turn: str = "turn-1", session: str = "sess-1",
               platform: str = "cli") -> None:
    dispatch(engine, "pre_llm_call", session_id=session, task_id=task, turn_id=turn, platform=platform,
             user_message="PROMPT_CANARY", model="m")


def end_task(engine: Engine, task: str = "task-1", session: str = "sess-1", turn: str = "turn-1", **kw: Any) -> None:
    payload = {"completed": True, "interrupted": False, "failed": False, "turn_exit_reason": "completed", **kw}
    dispatch(engine, "on_session_end", session_id=session, task_id=task, turn_id=turn, **payload)


def finished(metrics: SharedMetrics) -> list[dict[str, Any]]:
    assert metrics.flush()
    return [r["dimensions"] for r in rows(metrics.store, "hermes.task_run.finished") for _ in range(r["value"])]


def tool_rows(metrics: SharedMetrics) -> list[dict[str, Any]]:
    assert metrics.flush()
    return [r["dimensions"] for r in rows(metrics.store, "hermes.tool_call.count") for _ in range(r["value"])]


# --------------------------------------------------------------------------- gate


def test_sm6_collection_disabled_by_default_leaves_no_trace(home: Path, clock: ManualClock) -> None:
    engine = Engine()
    assert attach_shared_metrics(engine, home, enabled=False, clock=clock) is None
    assert attach_shared_metrics(engine, home, enabled="true", clock=clock) is None  # type: ignore[arg-type]
    host = Host(engine)
    with host.session() as session, session.turn("hi") as turn:
        turn.complete("ok")
    assert not (home / "telemetry").exists()
    assert not engine.has_hook("pre_llm_call")


def test_sm11_send_without_enabled_warns_and_collects_nothing(home: Path, clock: ManualClock,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    from hermes_pipeline.shared_metrics import sender

    sender._warned.discard("send-without-enabled")
    with caplog.at_level("WARNING", logger="hermes_pipeline.shared_metrics"):
        assert attach_shared_metrics(Engine(), home, enabled=False, send=True, endpoint="https://x.test/",
                                     clock=clock) is None
        assert attach_shared_metrics(Engine(), home, enabled=False, send=True, clock=clock) is None
    assert [r.levelname for r in caplog.records if "send is true" in r.message] == ["WARNING"]
    assert not (home / "telemetry").exists()


def test_sm65_disabling_stops_collection_and_keeps_state(home: Path, clock: ManualClock) -> None:
    """SM-65: Disabling stops collection and keeps state."""
    engine = Engine().child()
    metrics = attach_shared_metrics(engine, home, enabled=True, clock=clock, resource=RESOURCE)
    assert metrics is not None
    start_task(engine)
    end_task(engine)
    metrics.export_due(force=True)
    metrics.close()
    before = {p.name: p.read_bytes() for p in metrics.store.directory.rglob("*") if p.is_file() and "sqlite" not in p.name}
    counts = rows(metrics.store)
    assert attach_shared_metrics(engine, home, enabled=False, clock=clock) is None
    start_task(engine, task="task-2")
    end_task(engine, task="task-2")
    assert rows(metrics.store) == counts
    after = {p.name: p.read_bytes() for p in metrics.store.directory.rglob("*") if p.is_file() and "sqlite" not in p.name}
    assert after == before


# --------------------------------------------------------------------------- one real turn


def test_sm17_sm18_sm19_sm22_sm24_one_turn_with_a_tool(mhost: Host, metrics: SharedMetrics) -> None:
    """SM-17 / SM-18 / SM-19 / SM-22 / SM-24: One turn with a tool."""
    with mhost.session() as session, session.turn("PROMPT_CANARY") as turn:
        first = turn.call_llm({"model": "x", "messages": []},
                              lambda r: response(None, [{"id": "TOOL_CALL_CANARY", "type": "function",
                                                         "function": {"name": "read_file", "arguments": "{}"}}]))
        assert first
        turn.call_tool("read_file", {"path": "a"}, lambda path: "TOOL_RESULT_CANARY", tool_call_id="TOOL_CALL_CANARY")
        turn.call_llm({"model": "x", "messages": []}, lambda r: response("RESPONSE_CANARY"))
        turn.complete("RESPONSE_CANARY")
    assert metrics.flush()
    store = metrics.store
    assert [r["dimensions"] for r in rows(store, "hermes.task_run.started")] == [
        {"entrypoint": "interactive", "execution_surface": "cli"}]
    (task,) = finished(metrics)
    assert task | {"duration_bucket": "x"} == {
        "duration_bucket": "x", "end_reason": "completed", "entrypoint": "interactive", "execution_surface": "cli",
        "model_call_count_bucket": "2", "outcome": "success", "retry_count_bucket": "0", "termination": "none",
        "tool_call_count_bucket": "1"}
    assert [(r["dimensions"], r["value"]) for r in rows(store, "hermes.model_route.count")] == [
        ({"model": "resp-model", "provider": "test-provider"}, 2)]
    (tool,) = tool_rows(metrics)
    assert tool == {"approval_outcome": "not_required", "latency_bucket": "lt_100ms", "outcome": "success",
                    "retry_count_bucket": "unknown", "tool_category": "file"}
    assert totals(store, "hermes.client.active") == 1
    assert totals(store, "hermes.client.first_usable") == 1
    assert totals(store, "hermes.client.first_successful_task") == 1
    assert "hermes.model_call.count" not in {r["metric_name"] for r in rows(store)}  # SM-23


def test_sm1_sm33_no_identifier_text_or_name_reaches_the_store(mhost: Host, metrics: SharedMetrics) -> None:
    """SM-1 / SM-33: No identifier text or name reaches the store."""
    canaries = ["PROMPT_CANARY", "RESPONSE_CANARY", "TOOL_CALL_CANARY", "TOOL_RESULT_CANARY", "read_file",
                "SESSION_CANARY", "TASK_CANARY", "TURN_CANARY", "127.0.0.1", "ERROR_CANARY", "APPROVAL_CANARY"]
    session = mhost.session("SESSION_CANARY")
    with session, session.turn("PROMPT_CANARY", task_id="TASK_CANARY", turn_id="TURN_CANARY") as turn:
        turn.call_llm({"model": "x", "messages": []}, lambda r: response("RESPONSE_CANARY"))
        with turn.approval("rm -rf APPROVAL_CANARY") as approval:
            approval.resolve("deny")

        def boom(**_: Any) -> str:
            raise RuntimeError("ERROR_CANARY")

        turn.call_tool("read_file", {"path": "TOOL_RESULT_CANARY"}, boom, tool_call_id="TOOL_CALL_CANARY")
        turn.complete("RESPONSE_CANARY")
    metrics.export_due(force=True)
    blob = b"".join(p.read_bytes() for p in metrics.store.directory.rglob("*") if p.is_file())
    for canary in canaries:
        assert canary.encode() not in blob, canary


# --------------------------------------------------------------------------- model calls and retries


class Flaky(Exception):
    status_code = 503


def test_sm20_retries_share_one_logical_call(mhost: Host, metrics: SharedMetrics) -> None:
    """SM-20: Retries share one logical call."""
    attempts = iter([Flaky("overloaded"), Flaky("overloaded"), None])

    def provider(request: dict[str, Any]) -> dict[str, Any]:
        failure = next(attempts)
        if failure is not None:
            raise failure
        return response("ok")

    with mhost.session() as session, session.turn("q") as turn:
        turn.call_llm({"model": "x", "messages": []}, provider, max_retries=3)
        turn.complete("ok")
    (task,) = finished(metrics)
    assert (task["model_call_count_bucket"], task["retry_count_bucket"]) == ("1", "2")
    assert totals(metrics.store, "hermes.model_route.count") == 1


def test_sm20_sm97_retry_counting_survives_a_fallback_that_resets_the_ordinal(
        profile_engine: Engine, metrics: SharedMetrics) -> None:
    """SM-20 / SM-97: Retry counting survives a fallback that resets the ordinal."""
    start_task(profile_engine)
    for request_id, ordinal in (("req-1", 0), ("req-1", 1), ("req-fallback", 2)):
        dispatch(profile_engine, "pre_api_request", session_id="sess-1", task_id="task-1", api_request_id=request_id,
                 retry_count=ordinal)
    dispatch(profile_engine, "post_api_request", session_id="sess-1", task_id="task-1", api_request_id="req-fallback",
             model="Primary", provider="p", response_model=None, api_duration=0.2)
    end_task(profile_engine)
    (task,) = finished(metrics)
    assert (task["model_call_count_bucket"], task["retry_count_bucket"]) == ("2", "2")
    assert [r["dimensions"] for r in rows(metrics.store, "hermes.model_route.count")] == [
        {"model": "primary", "provider": "p"}]


def test_sm22_route_once_per_logical_call_and_unclosed_calls_not_routed(
        profile_engine: Engine, metrics: SharedMetrics) -> None:
    """SM-22: Route once per logical call and unclosed calls not routed."""
    start_task(profile_engine)
    for request_id in ("a", "b"):
        dispatch(profile_engine, "pre_api_request", session_id="sess-1", task_id="task-1", api_request_id=request_id,
                 retry_count=0, model="Requested", provider="OpenRouter")
    for _ in range(2):  # a duplicate post for the same call is deduplicated
        dispatch(profile_engine, "post_api_request", session_id="sess-1", task_id="task-1", api_request_id="a",
                 model="Requested", provider="OpenRouter", response_model="NVIDIA/Nemotron-3-Ultra", api_duration=1.0)
    end_task(profile_engine)
    (task,) = finished(metrics)
    assert task["model_call_count_bucket"] == "2"
    assert [(r["dimensions"], r["value"]) for r in rows(metrics.store, "hermes.model_route.count")] == [
        ({"model": "nvidia/nemotron-3-ultra", "provider": "openrouter"}, 1)]


def test_sm22_invalid_response_model_falls_back_to_requested(profile_engine: Engine, metrics: SharedMetrics) -> None:
    """SM-22: Invalid response model falls back to requested."""
    start_task(profile_engine)
    dispatch(profile_engine, "post_api_request", session_id="sess-1", task_id="task-1", api_request_id="a",
             model="GPT-X", provider="bad provider!", response_model="not valid/ because spaces", api_duration=0.1)
    end_task(profile_engine)
    assert metrics.flush()
    assert [r["dimensions"] for r in rows(metrics.store, "hermes.model_route.count")] == [
        {"model": "gpt-x", "provider": "unknown"}]


# --------------------------------------------------------------------------- tools


def tool(engine: Engine, hook: str, call_id: str, request: str = "req-1", name: str = "read_file",
         **extra: Any) -> None:
    payload = {"tool_name": name, "args": {}, "task_id": "task-1", "session_id": "sess-1", "tool_call_id": call_id,
               "turn_id": "turn-1", "api_request_id": request, **extra}
    engine.dispatch(hook, payload)


def test_sm27_duplicate_terminal_result_is_ignored(profile_engine: Engine, metrics: SharedMetrics) -> None:
    """SM-27: Duplicate terminal result is ignored."""
    start_task(profile_engine)
    tool(profile_engine, "pre_tool_call", "c1")
    for _ in range(3):
        tool(profile_engine, "post_tool_call", "c1", status="ok", duration_ms=5)
    end_task(profile_engine)
    assert len(tool_rows(metrics)) == 1
    assert finished(metrics)[0]["tool_call_count_bucket"] == "1"


def test_sm27_sm97_tool_call_id_reused_under_another_request_counts_twice(
        profile_engine: Engine, metrics: SharedMetrics) -> None:
    """SM-27 / SM-97 / OBS-27: a tool_call_id reused under another request counts twice: tool calls are
    deduplicated on (api_request_id, turn_id, tool_call_id), never on tool_call_id alone."""
    start_task(profile_engine)
    for request in ("req-1", "req-2"):
        tool(profile_engine, "pre_tool_call", "call_0", request=request)
        tool(profile_engine, "post_tool_call", "call_0", request=request, status="ok", duration_ms=1)
    end_task(profile_engine)
    assert len(tool_rows(metrics)) == 2
    assert finished(metrics)[0]["tool_call_count_bucket"] == "2"


def test_sm27_calls_without_id_each_count_and_close_their_own_call(profile_engine: Engine,
                                                                   metrics: SharedMetrics) -> None:
    """SM-27: Calls without id each count; each result closes its own call (the stream pairs a call without
    ``tool_call_id`` by its turn and tool name: the oldest open one of that name)."""
    start_task(profile_engine)
    tool(profile_engine, "pre_tool_call", "", name="terminal")
    tool(profile_engine, "pre_tool_call", "", name="read_file")
    tool(profile_engine, "post_tool_call", "", name="terminal", status="ok", duration_ms=150)
    tool(profile_engine, "post_tool_call", "", name="read_file", status="error", duration_ms=1)
    end_task(profile_engine)
    got = sorted((t["tool_category"], t["outcome"], t["latency_bucket"]) for t in tool_rows(metrics))
    assert got == [("file", "failed", "lt_100ms"), ("terminal", "success", "100ms_to_250ms")]


def test_sm27_unmatched_terminal_result_is_a_new_completed_call(mhost: Host, metrics: SharedMetrics) -> None:
    """SM-27: Unmatched terminal result is a new completed call."""
    with mhost.session() as session, session.turn("q") as turn:
        turn.call_tool("read_file", {}, lambda: "x", tool_call_id="c9", deny="not allowed")  # no pre_tool_call
        turn.complete("ok")
    assert [(t["outcome"], t["tool_category"]) for t in tool_rows(metrics)] == [("blocked", "file")]


@pytest.mark.parametrize(("end", "leftover"), [
    ({"interrupted": True, "completed": False, "turn_exit_reason": "interrupted_by_user"}, "cancelled"),
    ({"completed": False, "turn_exit_reason": "timeout"}, "timed_out"),
    ({"completed": False, "failed": True, "turn_exit_reason": "error"}, "failed"),
])
def test_sm28_open_tools_closed_at_task_end(profile_engine: Engine, metrics: SharedMetrics,
                                            end: dict[str, Any], leftover: str) -> None:
    """SM-28: Open tools closed at task end."""
    start_task(profile_engine)
    tool(profile_engine, "pre_tool_call", "c1", name="my_tool")
    end_task(profile_engine, **end)
    (only,) = tool_rows(metrics)
    assert (only["outcome"], only["tool_category"]) == (leftover, "other")
    assert only["latency_bucket"] != "unknown"
    assert finished(metrics)[0]["tool_call_count_bucket"] == "1"


def test_sm25_category_from_registry_toolset_unknown_when_undeclared(
        profile_engine: Engine, metrics: SharedMetrics) -> None:
    start_task(profile_engine)
    for index, name in enumerate(("browse", "search", "my_tool", "undeclared_tool")):
        tool(profile_engine, "pre_tool_call", f"c{index}", name=name)
        tool(profile_engine, "post_tool_call", f"c{index}", name=name, status="ok", duration_ms=1)
    end_task(profile_engine)
    assert sorted(t["tool_category"] for t in tool_rows(metrics)) == ["browser", "mcp", "other", "unknown"]


# --------------------------------------------------------------------------- approvals


def test_sm29_sm30_attributed_and_unattributed_approvals(mhost: Host, metrics: SharedMetrics) -> None:
    """SM-29 / SM-30: Attributed and unattributed approvals."""
    def approve(tool_name: str, args: dict[str, Any]) -> bool:
        with mhost.approval("write", description="d") as approval:
            return approval.resolve("once")

    with mhost.session() as session, session.turn("q") as turn:
        turn.call_tool("write_file", {}, lambda: "ok", tool_call_id="w1", approve=approve)
        with turn.approval("outside any tool") as loose:
            loose.resolve("timeout")
        turn.complete("ok")
    assert metrics.flush()
    approvals = sorted((r["dimensions"]["attribution"], r["dimensions"]["outcome"])
                       for r in rows(metrics.store, "hermes.tool_approval.count"))
    assert approvals == [("tool_call", "approved"), ("unattributed", "timed_out")]
    (written,) = tool_rows(metrics)
    assert written["approval_outcome"] == "approved"


def test_sm29_denied_approval_marks_the_blocked_tool(mhost: Host, metrics: SharedMetrics) -> None:
    """SM-29: Denied approval marks the blocked tool."""
    def deny(tool_name: str, args: dict[str, Any]) -> bool:
        with mhost.approval("write") as approval:
            return approval.resolve("deny")

    with mhost.session() as session, session.turn("q") as turn:
        turn.call_tool("write_file", {}, lambda: "ok", tool_call_id="w1", approve=deny)
        turn.complete("ok")
    (written,) = tool_rows(metrics)
    assert (written["approval_outcome"], written["outcome"]) == ("denied", "blocked")


# --------------------------------------------------------------------------- task ownership and closing


def test_sm21_sm97_task_ownership_survives_session_id_rotation(profile_engine: Engine, metrics: SharedMetrics) -> None:
    """SM-21: Hooks after a compaction carry the new session id; tearing down the old identity mid-task
    does not abort the task, which keeps counting under its task_id and finishes normally."""
    start_task(profile_engine, session="old-session")
    dispatch(profile_engine, "pre_api_request", session_id="new-session", task_id="task-1", api_request_id="r1",
             retry_count=0)
    dispatch(profile_engine, "on_session_finalize", session_id="old-session", platform="cli",
             reason="session_boundary")
    dispatch(profile_engine, "post_api_request", session_id="new-session", task_id="task-1", api_request_id="r1",
             model="m", provider="p", response_model="m", api_duration=0.5)
    tool(profile_engine, "pre_tool_call", "c1")
    tool(profile_engine, "post_tool_call", "c1", status="ok", duration_ms=3)
    end_task(profile_engine, session="new-session")
    (task,) = finished(metrics)
    assert (task["outcome"], task["model_call_count_bucket"], task["tool_call_count_bucket"]) == ("success", "1", "1")


def test_sm21_rotating_compaction_reported_by_the_host_moves_open_tasks(profile_engine: Engine,
                                                                        metrics: SharedMetrics) -> None:
    """SM-21: Rotating compaction reported by the host moves open tasks."""
    start_task(profile_engine, session="old-session")
    dispatch(profile_engine, "on_compaction", session_id="old-session", new_session_id="new-session", rotated=True,
             platform="cli")
    dispatch(profile_engine, "on_session_finalize", session_id="old-session", platform="cli", reason="shutdown")
    end_task(profile_engine, session="new-session")
    (task,) = finished(metrics)
    assert task["outcome"] == "success"


def test_sm21_late_hooks_never_reopen_a_finished_task(profile_engine: Engine, metrics: SharedMetrics) -> None:
    """SM-21: Late hooks never reopen a finished task."""
    start_task(profile_engine)
    end_task(profile_engine)
    start_task(profile_engine)  # a late duplicate of the same task
    tool(profile_engine, "post_tool_call", "late", status="ok", duration_ms=1)
    end_task(profile_engine)
    assert metrics.flush()
    assert totals(metrics.store, "hermes.task_run.started") == 1
    assert totals(metrics.store, "hermes.task_run.finished") == 1
    assert totals(metrics.store, "hermes.tool_call.count") == 0


def test_sm19_session_finalize_and_reset_abort_open_tasks(profile_engine: Engine, metrics: SharedMetrics) -> None:
    start_task(profile_engine, task="t1", session="s1")
    start_task(profile_engine, task="t2", turn="turn-2", session="s2")
    dispatch(profile_engine, "on_session_finalize", session_id="s1", platform="cli", reason="shutdown")
    dispatch(profile_engine, "on_session_reset", session_id="s3", platform="cli", reason="new_session",
             old_session_id="s2", new_session_id="s3")
    assert [(t["outcome"], t["end_reason"], t["termination"]) for t in finished(metrics)] == [
        ("failed", "system_aborted", "system_aborted")] * 2


def test_sm19_finish_task_boundary(profile_engine: Engine, metrics: SharedMetrics) -> None:
    for task, error in (("t-ok", None), ("t-int", KeyboardInterrupt()), ("t-time", TimeoutError()),
                        ("t-err", RuntimeError("x"))):
        start_task(profile_engine, task=task, turn=f"turn-{task}")
        assert metrics.finish_task(task, error)
        assert not metrics.finish_task(task, error)  # no-op once finished
    start_task(profile_engine, task="t-done", turn="turn-done")
    end_task(profile_engine, task="t-done", turn="turn-done")  # on_session_end names the turn it ends
    assert not metrics.finish_task("t-done")
    got = sorted(t["outcome"] for t in finished(metrics))
    assert got == ["cancelled", "failed", "success", "timed_out", "unknown"]


def test_sm42_subagent_tasks_are_delegated_and_closed_with_the_child(mhost: Host, metrics: SharedMetrics) -> None:
    """SM-42: Subagent tasks are delegated and closed with the child."""
    with mhost.session() as session, session.turn("q") as turn:
        with turn.subagent(role="reviewer", goal="g") as run:
            run.session.turn("child work")  # never ended: subagent_stop closes it
            run.finish("completed")
        turn.complete("ok")
    assert metrics.flush()
    started = sorted(r["dimensions"]["entrypoint"] for r in rows(metrics.store, "hermes.task_run.started"))
    assert started == ["delegated", "interactive"]
    outcomes = sorted((t["entrypoint"], t["outcome"]) for t in finished(metrics))
    assert outcomes == [("delegated", "failed"), ("interactive", "success")]


def test_sm42_declared_entrypoint_wins(profile_engine: Engine, home: Path, clock: ManualClock) -> None:
    """SM-42: Declared entrypoint wins."""
    other = profile_engine.parent.child()  # type: ignore[union-attr]
    metrics = attach_shared_metrics(other, home, enabled=True, clock=clock, entrypoint="background",
                                    resource=RESOURCE)
    assert metrics is not None
    try:
        start_task(other, platform="telegram")
        assert metrics.flush()
        assert [r["dimensions"] for r in rows(metrics.store, "hermes.task_run.started")] == [
            {"entrypoint": "background", "execution_surface": "gateway"}]
    finally:
        metrics.close()


# --------------------------------------------------------------------------- client activity


def test_sm34_client_active_once_per_rolling_24h(mhost: Host, metrics: SharedMetrics, clock: ManualClock) -> None:
    def session_with_a_turn() -> None:
        with mhost.session() as session, session.turn("q") as turn:
            turn.complete("ok")

    start = clock.now()
    for hours in (0, 5, 23.99):  # all inside the rolling window of the first count
        clock.set(start + timedelta(hours=hours))
        session_with_a_turn()
    assert metrics.flush()
    assert totals(metrics.store, "hermes.client.active") == 1
    clock.set(start + timedelta(hours=24))
    session_with_a_turn()
    assert metrics.flush()
    assert totals(metrics.store, "hermes.client.active") == 2
    assert totals(metrics.store, "hermes.client.first_usable") == 1  # SM-36: latched per install


# --------------------------------------------------------------------------- isolation


def test_sm14_sm97_profiles_in_one_process_are_isolated(tmp_path: Path, clock: ManualClock) -> None:
    process = Engine()
    engines = {name: process.child() for name in ("alice", "bob")}
    handles = {name: attach_shared_metrics(engine, tmp_path / name, enabled=True, clock=clock, resource=RESOURCE,
                                           toolsets=TOOLSETS) for name, engine in engines.items()}
    try:
        for name, turns in (("alice", 3), ("bob", 1)):
            host = Host(engines[name], platform="cli", model="m", provider="p")
            with host.session() as session:
                for _ in range(turns):
                    with session.turn("q") as turn:
                        turn.complete("ok")
        for name, expected in (("alice", 3), ("bob", 1)):
            handle = handles[name]
            assert handle is not None and handle.flush()
            assert totals(handle.store, "hermes.task_run.finished") == expected
        alice, bob = handles["alice"], handles["bob"]
        assert alice is not None and bob is not None and alice.runtime_id != bob.runtime_id
        from hermes_pipeline.shared_metrics import events as ev

        foreign = ev.mark_event(ev.CLIENT_ACTIVE, clock.now(), bob.runtime_id)
        assert not alice.subscriber.submit(foreign)  # runtime-instance filtering
        assert alice.subscriber.stats.rejected_events == 1
    finally:
        for handle in handles.values():
            if handle is not None:
                handle.close()


def test_sm36_setup_counters(metrics: SharedMetrics) -> None:
    metrics.record_setup_started("QUICK")
    metrics.record_setup_finished("wizard", "success", "execution")
    metrics.record_setup_finished("full", "exploded", "somewhere")
    assert metrics.flush()
    assert [r["dimensions"] for r in rows(metrics.store, "hermes.setup.started")] == [{"mode": "quick"}]
    assert sorted((r["dimensions"]["mode"], r["dimensions"]["outcome"], r["dimensions"]["failure_stage"])
                  for r in rows(metrics.store, "hermes.setup.finished")) == [
        ("full", "failed", "unknown"), ("unknown", "success", "none")]


def test_sm5_other_plugins_never_change_what_is_collected(tmp_path: Path, clock: ManualClock) -> None:
    """SM-5: A failing process-wide plugin and a rich recorder on the parent engine leave the counters unchanged."""
    from hermes_pipeline.testing import Recorder

    def run(home: Path, noisy: bool) -> list[tuple[str, str, int]]:
        process = Engine()
        if noisy:
            process.add_plugin(Recorder(), name="rich-exporter")
            for hook in ("pre_llm_call", "post_tool_call", "on_session_end"):
                process.register_hook(hook, lambda **kw: 1 / 0, plugin="broken")
        engine = process.child()
        handle = attach_shared_metrics(engine, home, enabled=True, clock=clock, resource=RESOURCE, toolsets=TOOLSETS)
        assert handle is not None
        host = Host(engine, platform="cli", model="m", provider="p")
        with host.session() as session, session.turn("q") as turn:
            turn.call_tool("read_file", {}, lambda: "x", tool_call_id="c1")
            turn.complete("ok")
        handle.close()
        return sorted((r["metric_name"], r["dimensions_json"], r["value"]) for r in rows(handle.store)
                      if "duration" not in r["dimensions_json"])

    assert run(tmp_path / "quiet", False) == run(tmp_path / "noisy", True)


def test_sm19_sm28_ends_the_stream_synthesizes_finish_nothing(profile_engine: Engine, home: Path,
                                                              clock: ManualClock) -> None:
    """SM-19 / SM-28: the ends the stream makes up when it shuts down (``hermes.close_reason = shutdown`` on the
    open tool, turn and session) are not the host's: the task and its tool stay unfinished, as when the hooks
    simply stopped; only the task's start was counted."""
    metrics = attach_shared_metrics(profile_engine, home, enabled=True, clock=clock, toolsets=TOOLSETS,
                                    resource=RESOURCE)
    assert metrics is not None
    start_task(profile_engine)
    tool(profile_engine, "pre_tool_call", "c1")
    assert metrics.flush()
    metrics.close()  # its own stream shuts down: every open scope gets a synthesized end
    assert totals(metrics.store, "hermes.task_run.started") == 1
    assert totals(metrics.store, "hermes.task_run.finished") == 0
    assert totals(metrics.store, "hermes.tool_call.count") == 0
