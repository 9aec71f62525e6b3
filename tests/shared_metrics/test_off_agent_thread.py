"""Shared metrics is a listener of the profile's scope stream, off the agent's thread (issue #29 item 3; SM-12,
SM-17, SM-47).

Shared metrics registers no hook implementation: the stream's scope plugin stamps and enqueues each hook on the
agent's thread, and shared metrics hears the scope events on the stream's publication thread, hands them to
its writer thread and counts there. The counters stay those of the hooks (their time, their order), and a full
queue drops and counts, never blocks.
"""

from __future__ import annotations

import functools
import inspect
import sys
import threading
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import hermes_pipeline.shared_metrics as shared_metrics_package
from hermes_pipeline import Engine, Host
from hermes_pipeline.shared_metrics import ManualClock, SharedMetrics, attach_shared_metrics
from hermes_pipeline.shared_metrics import events as ev
from hermes_pipeline.shared_metrics.accounting import Accounting
from hermes_pipeline.shared_metrics.clock import HookClock, SystemClock
from hermes_pipeline.shared_metrics.scope_listener import ScopeListener
from hermes_pipeline.shared_metrics.subscriber import Subscriber

from .conftest import RESOURCE, TOOLSETS, response, rows, totals

SHARED_METRICS_DIR = str(Path(shared_metrics_package.__file__).resolve().parent)


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
    """Spies recording the thread of every accounting method, of the stream listener, of event validation and
    of the subscriber's hand-in."""
    seen: dict[str, set[int]] = {}

    def spy(name: str, fn: Any) -> Any:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            seen.setdefault(name, set()).add(threading.get_ident())
            return fn(*args, **kwargs)
        return wrapper

    for name, fn in inspect.getmembers(Accounting, inspect.isfunction):
        if not name.startswith("__"):
            monkeypatch.setattr(Accounting, name, spy(f"Accounting.{name}", fn))
    monkeypatch.setattr(ScopeListener, "__call__", spy("ScopeListener.__call__", ScopeListener.__call__))
    monkeypatch.setattr(Subscriber, "submit", spy("Subscriber.submit", Subscriber.submit))
    monkeypatch.setattr(Subscriber, "defer", spy("Subscriber.defer", Subscriber.defer))
    monkeypatch.setattr(ev, "check_event", spy("check_event", ev.check_event))
    return seen


def test_scope_plugin_and_counting_never_run_on_the_agents_thread(threads_seen: dict[str, set[int]], home: Path,
                                                                clock: ManualClock) -> None:
    """SM-17 / SM-12: every hook of a task reaches shared metrics through the stream and is counted, validated
    and written, none of it on the caller's thread (not even the hand-over to the writer)."""
    engine = Engine().child()
    metrics = attach_shared_metrics(engine, home, enabled=True, clock=clock, toolsets=TOOLSETS, resource=RESOURCE)
    assert metrics is not None
    try:
        caller = threading.get_ident()
        one_task(engine)
        assert metrics.flush()
        for hot in ("Accounting.task_started", "Accounting.tool_started", "Accounting.tool_finished",
                    "Accounting.approval_resolved", "Accounting.api_request_succeeded", "Accounting.task_ended",
                    "ScopeListener.__call__", "Subscriber.defer", "Subscriber.submit", "check_event"):
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


def shared_metrics_calls_on_this_thread(run: Any) -> list[str]:
    """Run ``run()`` and return every function of the shared-metrics package that was called on this thread
    while it ran (``sys.setprofile`` watches the calling thread only)."""
    called: list[str] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code.co_filename.startswith(SHARED_METRICS_DIR):
            called.append(f"{Path(frame.f_code.co_filename).name}:{frame.f_code.co_name}")

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return called


def test_no_shared_metrics_code_runs_on_the_agents_thread_per_hook(home: Path) -> None:
    """Issue #29 item 3 / SM-12: with shared metrics on, a host's session (a model call, a tool call through the
    host's tool path, an approval, the turn's end) and dispatched hooks run no function of the shared-metrics
    package on the caller's thread; the counts still arrive (the stream's thread hands them over). The system
    clock: a manual clock's reads would be the test's own calls into the package."""
    engine = Engine().child()
    metrics = attach_shared_metrics(engine, home, enabled=True, clock=SystemClock(), toolsets=TOOLSETS,
                                    resource=RESOURCE)
    assert metrics is not None
    host = Host(engine, platform="cli", model="m", provider="p")

    def session() -> None:
        with host.session() as sess, sess.turn("q") as turn:
            turn.call_llm({"model": "x", "messages": []}, lambda request: response("ok"))
            turn.call_tool("read_file", {"path": "a"}, lambda path: "x", tool_call_id="c1")
            with turn.approval("rm x") as approval:
                approval.resolve("once")
            turn.complete("ok")
        one_task(engine)

    try:
        assert shared_metrics_calls_on_this_thread(session) == []
        assert metrics.flush()
        assert totals(metrics.store, "hermes.tool_call.count") == 3
        assert totals(metrics.store, "hermes.task_run.finished") == 2
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
    """SM-48 / SM-38: a task's duration and its counter period are those of its hooks (the stream's event times),
    even when the writer counts them two days later."""
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
    """SM-47: with the writer stuck, events past the queue's bound are dropped and counted (on the stream's
    thread); the agent goes on."""
    engine = Engine().child()
    metrics = attach_shared_metrics(engine, home, enabled=True, clock=clock, toolsets=TOOLSETS, resource=RESOURCE,
                                    queue_size=4)
    assert metrics is not None
    try:
        gate = hold_writer(metrics)
        for i in range(10):
            tool(engine, "pre_tool_call", f"c{i}")
        assert metrics.stream.flush()  # the stream handed every event over (or dropped it): the writer is stuck
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
    """SM-48: the system clock's capture (two floats, in the frame of the events' times) replays as the same UTC
    instant and reading while a fact is counted."""
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
    """A host call on another thread (setup and skill marks) reads the live clock, not an event's replayed time."""
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
