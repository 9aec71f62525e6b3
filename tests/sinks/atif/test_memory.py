"""A written trajectory lets its events go at once (FMT-49's bounded memory, issue #29 item 5: fewer allocations
per event): a root node refers to itself, and without the assembler releasing a forgotten trajectory's events
they would wait for the cyclic garbage collector, promoted through every generation on the way."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from hermes_pipeline.export import MemoryDestination, ScopeEvent
from hermes_pipeline.sinks.atif import build_atif_sink

from tests.sinks.atif._support import Stream, assistant, documents

SESSION_ID = "released-session"


def alive() -> list[str]:
    """Names of the ScopeEvents of :data:`SESSION_ID` still alive (the collector is off: only reference counts
    free them)."""
    return sorted(obj.name for obj in gc.get_objects() if type(obj) is ScopeEvent
                  and isinstance(obj.metadata, dict) and obj.metadata.get("hermes.session_id") == SESSION_ID)


@pytest.fixture
def no_collector() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def feed_session(sink: object, subagent: bool) -> None:
    s = Stream(sink, SESSION_ID)
    t0 = 1_788_257_700_000_000
    session = s.start("hermes.session", "agent", None, t0)
    turn = s.start("agent.run", "function", session.uuid, t0 + 5, data={"user_message": "hi"})
    llm = s.start("llm.call", "llm", turn.uuid, t0 + 10, data={"request": {"body": {"messages": []}}})
    s.end(llm, t0 + 20, data=assistant(calls=[("c1", "read_file", '{"path": "a"}')]))
    tool = s.start("read_file", "tool", turn.uuid, t0 + 30, data={"arguments": {"path": "a"}},
                   profile={"tool_call_id": "c1"})
    if subagent:
        child = s.start("hermes.session", "agent", tool.uuid, t0 + 31)
        child_turn = s.start("agent.run", "function", child.uuid, t0 + 32, data={"user_message": "look"})
        s.end(child_turn, t0 + 33, data={"final_response": "seen"})
        s.end(child, t0 + 34, data={"reason": "completed"})
    s.end(tool, t0 + 40, data={"result": "contents"}, meta={"hermes.tool.status": "ok"})
    s.end(turn, t0 + 50, data={"final_response": "done"})
    s.end(session, t0 + 60, data={"reason": "completed"})


@pytest.mark.parametrize("subagent", [False, True])
def test_a_written_trajectory_holds_none_of_its_events(no_collector: None, subagent: bool) -> None:
    dest = MemoryDestination()
    sink = build_atif_sink({"enabled": True}, destinations={"local": dest})
    sink.assembler.recent_roots = 0  # a root embedding a subagent is not remembered: its whole tree goes
    feed_session(sink, subagent)
    assert sink.flush(10.0)
    assert len(documents(dest)) == 1
    # only the trajectory roots' own start and end (their nodes wait for the collector); none of the turn's,
    # LLM call's or tool call's events, and none held by the idle writer thread
    assert alive() == ["hermes.session"] * (4 if subagent else 2)
    assert sink.shutdown(10.0)
