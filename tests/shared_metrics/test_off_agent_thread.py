"""Shared metrics does its work off the agent's thread (issue #29 item 3; SM-12, SM-17, SM-47).

A hook on the agent's thread only captures its fields and its time and hands them to the writer thread;
pairing, matching, validation against the closed contract and counting run there. The counters stay those
of the hooks (their time, their order), and a full queue drops and counts, never blocks.
"""

from __future__ import annotations

import functools
import inspect
import threading
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hermes_pipeline import Engine
from hermes_pipeline.shared_metrics import ManualClock, SharedMetrics, attach_shared_metrics
from hermes_pipeline.shared_metrics import events as ev
from hermes_pipeline.shared_metrics.clock import HookClock, SystemClock
from hermes_pipeline.shared_metrics.projection import Projector
from hermes_pipeline.shared_metrics.subscriber import Subscriber

from .conftest import RESOURCE, TOOLSETS, rows, totals


def dispatch(engine: Engine, hook: str, **payload: Any) -> None:
    engine.dispatch(hook, payload)


def tool(engine: Engine, hook: str, call_id: str, **extra: Any) -> None:
    dispatch(engine, hook, tool_name="read_file", args={}, task_id="task-1", session_id="sess-1",
             tool_call_id=call_id, turn_id="turn-1", api_request_id="req-1", **extra)


def one_task(engine: Engine) -> None:
    """A session with one task: a model call, an approved tool call and a failed one, then its end."""
    dispatch(engine, "on_session_start", session_id="sess-1")
    dispatch(engine, "pre_llm_call", session_id="sess-1", task_id="task-1", turn_id="turn-1", platform="cli",
             user_message="hi", model="m")
    dispatch(engine, "pre_api_request", session_id="sess-1", task_id="task-1", api_request_id="req-1", retry_count=0)
    dispatch(engine, "post_api_request", session_id="sess-1", task_id="task-1", api_request_id="req-1",
             model="M", provider="p", response_model=None, api_duration=0.5)
    tool(engine, "pre_tool_call", "c1")
    dispatch(engine, "post_approval_response", session_id="sess-1", turn_id="turn-1", tool_call_id="c1",
             choice="once")
    tool(engine, "post_tool_call", "c1", status="ok", duration_ms=5)
    tool(engine, "pre_tool_call", "c2")
    tool(engine, "post_tool_call", "c2", status="error", duration_ms=40)
    dispatch(engine, "on_session_end", session_id="sess-1", task_id="task-1", turn_id="turn-1", completed=True,
             interrupted=False, failed=False, turn_exit_reason="completed")
    dispatch(engine, "on_session_finalize", session_id="sess-1")


@pytest.fixture
def threads_seen(monkeypatch: pytest.MonkeyPatch) -> dict[str, set[int]]:
    """Spies recording the thread of every projector method, of event validation and of the subscriber's
    hand-in (the work a hook used to do on the agent's thread)."""
    seen: dict[str, set[int]] = {}

    def spy(name: str, fn: Any) -> Any:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            seen.setdefault(name, set()).add(threading.get_ident())
            return fn(*args, **kwargs)
        return wrapper

    for name, fn in inspect.getmembers(Projector, inspect.isfunction):
        if not name.startswith("__"):
            monkeypatch.setattr(Projector, name, spy(f"Projector.{name}", fn))
    monkeypatch.setattr(Subscriber, "submit", spy("Subscriber.submit", Subscriber.submit))
    monkeypatch.setattr(ev, "check_event", spy("check_event", ev.check_event))
    return seen


def test_projection_and_counting_never_run_on_the_agents_thread(threads_seen: dict[str, set[int]], home: Path,
                                                                clock: ManualClock) -> None:
    """SM-17 / SM-12: every hook of a task is projected, validated and counted, none of it on the caller's thread."""
    engine = Engine().child()
    metrics = attach_shared_metrics(engine, home, enabled=True, clock=clock, toolsets=TOOLSETS, resource=RESOURCE)
    assert metrics is not None
    try:
        caller = threading.get_ident()
        one_task(engine)
        assert metrics.flush()
        for hot in ("Projector.task_started", "Projector.tool_started", "Projector.tool_finished",
                    "Projector.approval_resolved", "Projector.api_request_succeeded", "Projector.task_ended",
                    "Subscriber.submit", "check_event"):
            assert threads_seen.get(hot), f"{hot} never ran"
        on_caller = sorted(name for name, idents in threads_seen.items() if caller in idents)
        assert on_caller == [], f"shared metrics ran on the agent's thread: {on_caller}"
        assert totals(metrics.store, "hermes.tool_call.count") == 2
        assert totals(metrics.store, "hermes.task_run.finished") == 1
        assert totals(metrics.store, "hermes.tool_approval.count") == 1
        assert totals(metrics.store, "hermes.model_route.count") == 1
        (approved,) = [r["dimensions"] for r in rows(metrics.store, "hermes.tool_call.count")
                       if r["dimensions"]["outcome"] == "success"]
        assert approved["approval_outcome"] != "not_required"  # the approval was paired with its tool call
    finally:
        metrics.close()


def hold_writer(metrics: SharedMetrics) -> threading.Event:
    """Keep the writer thread busy until the returned event is set (what it has not taken yet waits)."""
    gate = threading.Event()
    taken = threading.Event()

    def wait() -> None:
        taken.set()
        gate.wait()

    assert metrics.subscriber.call_soon(wait)
    assert taken.wait(30)
    return gate


def test_counters_carry_each_hooks_own_time_not_the_time_it_was_projected(home: Path, clock: ManualClock) -> None:
    """SM-48 / SM-38: a task's duration and its counter period are those of its hooks, even when the writer
    projects them a day later."""
    engine = Engine().child()
    metrics = attach_shared_metrics(engine, home, enabled=True, clock=clock, toolsets=TOOLSETS, resource=RESOURCE)
    assert metrics is not None
    try:
        gate = hold_writer(metrics)
        day = clock.now().date().isoformat()
        dispatch(engine, "pre_llm_call", session_id="sess-1", task_id="task-1", turn_id="turn-1", platform="cli",
                 user_message="hi", model="m")
        tool(engine, "pre_tool_call", "c1")
        clock.advance(2.5)
        tool(engine, "post_tool_call", "c1", status="ok")  # no duration_ms: the latency is the hooks' distance
        dispatch(engine, "on_session_end", session_id="sess-1", task_id="task-1", turn_id="turn-1", completed=True,
                 interrupted=False, failed=False, turn_exit_reason="completed")
        clock.advance(86_400 * 2)  # the writer only gets to them two days later
        gate.set()
        assert metrics.flush()
        (finished,) = rows(metrics.store, "hermes.task_run.finished")
        (tool_row,) = rows(metrics.store, "hermes.tool_call.count")
        assert {finished["period_start"], tool_row["period_start"]} == {day}
        assert finished["dimensions"]["duration_bucket"] == "1s_to_5s", finished
        assert tool_row["dimensions"]["latency_bucket"] == "2s_to_5s", tool_row
    finally:
        metrics.close()


def test_a_full_queue_drops_and_counts_without_blocking_the_agent(home: Path, clock: ManualClock) -> None:
    """SM-47: with the writer stuck, hooks past the queue's bound are dropped and counted; the agent goes on."""
    engine = Engine().child()
    metrics = attach_shared_metrics(engine, home, enabled=True, clock=clock, toolsets=TOOLSETS, resource=RESOURCE,
                                    queue_size=4)
    assert metrics is not None
    try:
        gate = hold_writer(metrics)
        for i in range(10):
            tool(engine, "pre_tool_call", f"c{i}")
        dropped = metrics.status()["runtime"]["dropped"]
        assert dropped >= 6, metrics.status()
        gate.set()
        assert metrics.flush()
        assert metrics.status()["runtime"]["dropped"] == dropped
    finally:
        metrics.close()


def test_finish_task_sees_the_hooks_queued_before_it(home: Path, clock: ManualClock) -> None:
    """SM-19: the host's boundary call answers after the task's hooks were projected, whatever the queue holds."""
    engine = Engine().child()
    metrics = attach_shared_metrics(engine, home, enabled=True, clock=clock, toolsets=TOOLSETS, resource=RESOURCE)
    assert metrics is not None
    try:
        for i in range(200):
            tool(engine, "pre_tool_call", f"x{i}")  # queued work ahead of the task
        dispatch(engine, "pre_llm_call", session_id="sess-9", task_id="task-9", turn_id="turn-9", platform="cli",
                 user_message="hi", model="m")
        assert metrics.finish_task("task-9", RuntimeError("boom"))
        assert not metrics.finish_task("task-9")
        assert metrics.flush()
        assert totals(metrics.store, "hermes.task_run.finished") == 1
    finally:
        metrics.close()


@given(wall=st.floats(min_value=0, max_value=4_102_444_800), mono=st.floats(min_value=0, max_value=1e9))
def test_hook_clock_replays_a_captured_system_time(wall: float, mono: float) -> None:
    """SM-48: the system clock's capture (two floats on the agent's thread) replays as the same UTC instant
    and monotonic reading while a hook is projected."""
    hook_clock = HookClock(SystemClock())
    captured = hook_clock.capture()
    assert isinstance(captured[0], float) and isinstance(captured[1], float)
    hook_clock.enter((wall, mono))
    try:
        replayed = hook_clock.now()
        assert replayed.utcoffset() == timedelta(0)
        assert abs(replayed.timestamp() - wall) <= 1e-6 * max(1.0, wall)
        assert hook_clock.monotonic() == mono
    finally:
        hook_clock.leave()
    assert isinstance(hook_clock.now(), datetime)


def test_hook_clock_replays_only_on_the_projecting_thread(clock: ManualClock) -> None:
    """A host call on another thread (setup and skill marks) reads the live clock, not a hook's replayed time."""
    hook_clock = HookClock(clock)
    hook_clock.enter((clock.now() - timedelta(days=3), 1.0))
    try:
        seen: list[tuple[datetime, float]] = []
        worker = threading.Thread(target=lambda: seen.append((hook_clock.now(), hook_clock.monotonic())))
        worker.start()
        worker.join()
        assert seen == [(clock.now(), clock.monotonic())]
        assert hook_clock.now() == clock.now() - timedelta(days=3)
    finally:
        hook_clock.leave()
    assert (hook_clock.now(), hook_clock.monotonic()) == (clock.now(), clock.monotonic())
