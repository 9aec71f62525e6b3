"""FMT-9 / FMT-21 / FMT-6: every tool scope that overlaps another carries ``parallel``, on start and end.

Two tool calls run at the same moment (both have started before either ends, enforced by a
barrier inside the tools), then one runs alone. The ATOF stream, the ATIF trajectory and the
OTel ``full`` projection all show the flag for both concurrent calls and not for the lone one.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from hermes_pipeline import Engine, Host
from hermes_pipeline.demo.otlp_receiver import OTLPReceiver
from hermes_pipeline.host import run_in_context

from tests.sinks.atif._support import Pipeline, agent_steps
from tests.sinks.atof._support import ends, starts
from tests.sinks.otel._support import finish, otel_plugin, tool_span
from hermes_pipeline.testing import chat_response

CALLS = [{"id": c, "type": "function", "function": {"name": "work", "arguments": "{}"}} for c in ("a", "b")]


def _session(engine: Engine, *, first_waits_for_marks: bool = False) -> None:
    host = Host(engine, model="m")
    with host.session("s1") as session, session.turn("go") as turn:
        turn.call_llm({"model": "m", "messages": []}, lambda r: chat_response(None, CALLS))
        barrier = threading.Barrier(2)

        def work(i: int) -> str:
            barrier.wait(10)  # both calls are open at the same time
            return f"done {i}"

        with ThreadPoolExecutor(2) as pool:
            futures = [pool.submit(run_in_context(turn.call_tool), "work", {"i": i}, work, tool_call_id=c)
                       for i, c in enumerate(("a", "b"))]
            assert [f.result() for f in futures] == ["done 0", "done 1"]
        turn.call_llm({"model": "m", "messages": []},
                      lambda r: chat_response(None, [{"id": "c", "type": "function",
                                                      "function": {"name": "work", "arguments": "{}"}}]))
        assert turn.call_tool("work", {"i": 2}, lambda i: "alone", tool_call_id="c") == "alone"
        turn.complete("ok")


def _flags(events: list[dict[str, Any]], call_id: str) -> tuple[list[str], list[str]]:
    [start] = [e for e in starts(events, "work") if e["category_profile"]["tool_call_id"] == call_id]
    [end] = [e for e in ends(events, "work") if e["uuid"] == start["uuid"]]
    return start["attributes"], end["attributes"]


def test_fmt_9_both_overlapping_tool_scopes_carry_parallel_in_atof_and_atif(engine: Engine) -> None:
    """FMT-9 / FMT-21: both concurrent tool scopes carry ``parallel`` on start and end (FMT-6); ATIF shows it."""
    pipeline = Pipeline(engine)
    _session(engine)
    pipeline.flush()
    pipeline.shutdown()
    events = pipeline.events()
    assert _flags(events, "a") == (["parallel"], ["parallel"])
    assert _flags(events, "b") == (["parallel"], ["parallel"])
    assert _flags(events, "c") == ([], [])
    [doc] = pipeline.documents()
    calls = {c["tool_call_id"]: c for step in agent_steps(doc) for c in step.get("tool_calls", [])}
    assert calls["a"]["extra"]["parallel"] is True
    assert calls["b"]["extra"]["parallel"] is True
    assert "parallel" not in calls["c"]["extra"]


def test_fmt_9_both_overlapping_tool_spans_carry_parallel_in_otel_full(engine: Engine) -> None:
    """FMT-9 / FMT-69: ``hermes_pipeline.attributes`` of both concurrent tool spans lists ``parallel``."""
    with OTLPReceiver() as receiver:
        plugin = otel_plugin(engine, receiver.endpoint, projection="full")
        _session(engine)
        spans = finish(plugin, receiver)
    assert tool_span(spans, "a").attributes["hermes_pipeline.attributes"] == '["parallel"]'
    assert tool_span(spans, "b").attributes["hermes_pipeline.attributes"] == '["parallel"]'
    assert tool_span(spans, "c").attributes["hermes_pipeline.attributes"] == "[]"


def test_fmt_9_start_of_a_lone_tool_reaches_the_sinks_at_flush(engine: Engine) -> None:
    """A tool start held back until its overlap is known is still handed to the sinks by ``flush`` (FMT-84)."""
    pipeline = Pipeline(engine)
    host = Host(engine, model="m")
    seen: list[list[dict[str, Any]]] = []

    def tool() -> str:
        pipeline.flush()
        seen.append(starts(pipeline.events(), "work"))
        return "r"

    with host.session("s1") as session, session.turn("go") as turn:
        turn.call_tool("work", {}, tool, tool_call_id="x")
        turn.complete("ok")
    pipeline.shutdown()
    assert [e["category_profile"]["tool_call_id"] for e in seen[0]] == ["x"]
    assert _flags(pipeline.events(), "x") == ([], [])


def test_fmt_9_a_call_that_raised_an_approval_before_its_sibling_started_is_flagged_too(engine: Engine) -> None:
    """FMT-9 / FMT-6: call ``a`` asks for an approval (a mark under it), only then ``b`` starts: both flagged."""
    pipeline = Pipeline(engine)
    host = Host(engine, model="m")
    asked = threading.Event()
    both_running = threading.Barrier(2)

    def work_a() -> str:
        with host.approval("rm -rf /tmp/x") as approval:
            approval.resolve("once")
        asked.set()
        both_running.wait(10)
        return "a"

    def work_b() -> str:
        both_running.wait(10)
        return "b"

    with host.session("s1") as session, session.turn("go") as turn:
        turn.call_llm({"model": "m", "messages": []}, lambda r: chat_response(None, CALLS))
        with ThreadPoolExecutor(2) as pool:
            first = pool.submit(run_in_context(turn.call_tool), "work", {}, work_a, tool_call_id="a")
            assert asked.wait(10)
            second = pool.submit(run_in_context(turn.call_tool), "work", {}, work_b, tool_call_id="b")
            assert (first.result(), second.result()) == ("a", "b")
        turn.complete("ok")
    pipeline.flush()
    pipeline.shutdown()
    events = pipeline.events()
    assert _flags(events, "a") == (["parallel"], ["parallel"])
    assert _flags(events, "b") == (["parallel"], ["parallel"])
    [a_start] = [e for e in starts(events, "work") if e["category_profile"]["tool_call_id"] == "a"]
    approvals = [e for e in events if e["kind"] == "mark" and e["parent_uuid"] == a_start["uuid"]]
    assert approvals, "the approval marks stay under call a"
    order = [e["uuid"] for e in events]
    assert all(order.index(a_start["uuid"]) < order.index(m["uuid"]) for m in approvals)  # parent first


# ---------------------------------------------------------------------------- generated interleavings

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from hermes_pipeline.export import ScopePlugin  # noqa: E402

_STEP = st.tuples(st.sampled_from(["start", "end", "mark", "flush"]), st.integers(0, 1), st.integers(0, 2))
"""(action, session index, tool index)."""


@settings(max_examples=200, deadline=None)
@given(steps=st.lists(_STEP, max_size=40))
def test_fmt_9_generated_interleavings_flag_exactly_the_overlapping_calls(steps: list[tuple[str, int, int]]) -> None:
    """FMT-9 / FMT-6 / FMT-7, generated: in two sessions, tool calls start, end, raise approvals and
    flushes happen in any order. Every published start precedes its end and its marks; start and end
    flags agree; a call carries ``parallel`` exactly when another call of its session was open at
    some point of its life, unless it had already been published alone when the overlap began."""
    seen: list[Any] = []
    plugin = ScopePlugin((seen.append,))
    open_calls: dict[tuple[int, int], str] = {}
    overlapped: set[str] = set()
    published_alone: set[str] = set()
    counter = 0
    for s in range(2):
        plugin.on_session_start(session_id=f"s{s}", model="m", platform="cli")
        plugin.pre_llm_call(session_id=f"s{s}", task_id="t", turn_id=f"turn{s}", user_message="u", is_first_turn=True,
                            model="m", platform="cli", sender_id=None, agent_version=None)
    for action, s, i in steps:
        key = (s, i)
        sid, turn = f"s{s}", f"turn{s}"
        if action == "start" and key not in open_calls:
            counter += 1
            call = open_calls[key] = f"c{counter}"
            siblings = [c for (ss, _), c in open_calls.items() if ss == s and c != call]
            if siblings:
                overlapped.update([call, *siblings])
            plugin.pre_tool_call(tool_name="work", args={}, task_id="t", session_id=sid, tool_call_id=call,
                                 turn_id=turn, api_request_id="", middleware_trace=[])
        elif action == "end" and key in open_calls:
            call = open_calls.pop(key)
            plugin.post_tool_call(tool_name="work", args={}, task_id="t", session_id=sid, tool_call_id=call,
                                  turn_id=turn, api_request_id="", result="r", duration_ms=1, status="ok",
                                  error_type=None, error_message=None)
        elif action == "mark" and key in open_calls:
            plugin.pre_approval_request(command="x", description="", pattern_keys=[], surface="cli", turn_id=turn,
                                        tool_call_id=open_calls[key], session_id=sid)
        elif action == "flush":
            plugin.flush(1.0)
            published_alone.update(c for (ss, _), c in open_calls.items()
                                   if len([1 for (s2, _) in open_calls if s2 == ss]) == 1)
    plugin.shutdown(1.0)
    order = {(e.uuid, e.phase): n for n, e in enumerate(seen)}
    tool_starts = {e.profile["tool_call_id"]: e for e in seen if e.category == "tool" and e.phase == "start"}
    for call, start in tool_starts.items():
        [end] = [e for e in seen if e.uuid == start.uuid and e.phase == "end"]
        assert order[(start.uuid, "start")] < order[(end.uuid, "end")]
        assert start.attributes == end.attributes
        for mark in (e for e in seen if e.kind == "mark" and e.parent_uuid == start.uuid):
            assert order[(start.uuid, "start")] < order[(mark.uuid, None)]
        if call in overlapped and call not in published_alone:
            assert "parallel" in start.attributes, call
        if call not in overlapped:
            assert "parallel" not in start.attributes, call
