"""The ATIF writer's documents stay byte for byte what they were before the writer-thread work (issue #29): the
step mapper's tool paths against the earlier ones (``_reference.ReferenceStepMapper``), on varied generated
streams (tool calls with and without ids, arguments that are not JSON objects, statuses, exit codes, errors,
annotations, toolsets, approvals inside tools, delegated subagents, failed attempts, equal and out-of-order
timestamps) and the ``atif`` options that change the mapping (FMT-43, FMT-44, FMT-46, FMT-52)."""

from __future__ import annotations

import json
from typing import Any
from unittest import mock

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_pipeline.export import MemoryDestination
from hermes_pipeline.export.events import SCOPE, START, ScopeEvent
from hermes_pipeline.sinks.atif import trajectory
from hermes_pipeline.sinks.atif.config import parse_atif_config
from hermes_pipeline.sinks.atif.sink import AtifSink
from hermes_pipeline.sinks.atif.trajectory import TrajectoryAssembler, TrajectoryFile

from tests.sinks._streams import build_stream
from tests.sinks.atif._support import Stream, assistant
from tests.sinks.atif._reference import ReferenceStepMapper

OPTIONS = st.fixed_dictionaries({
    "group_by": st.sampled_from(("agent", "turn")), "include_llm_payloads": st.booleans(),
    "include_system_prompt": st.booleans(), "include_observed_events": st.booleans(),
    "llm_history": st.sampled_from(("full", "delta")),
})


def written(events: list[Any], options: dict[str, Any]) -> list[tuple[str, bytes]]:
    """The trajectory files an assembler writes for ``events`` (name and bytes, in order)."""
    files: list[TrajectoryFile] = []
    config = parse_atif_config({"enabled": True, "output_directory": "/nonexistent/atif", **options})
    assembler = TrajectoryAssembler(config, files.append, version="0.0-test")
    for event in events:
        assembler.add(event)
    assembler.close()
    assert assembler.counts["build_errors"] == 0
    return [(f.name, f.content) for f in files]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), options=OPTIONS)
def test_fmt_46_documents_are_the_reference_mappers_bytes(data: st.DataObject, options: dict[str, Any]) -> None:
    """FMT-43, FMT-44, FMT-46, FMT-52: the same documents, bytes and file names, as with the earlier tool paths."""
    events = build_stream(lambda choices: data.draw(st.sampled_from(choices)))
    current = written(events, options)
    with mock.patch.object(trajectory, "StepMapper", ReferenceStepMapper):
        reference = written(events, options)
    assert current == reference
    assert current  # the session (or its turns) made files


def _late_subagents() -> list[Any]:
    """Tools whose delegated subagents start, by timestamp, after the tool ended (a host clock stepping back): a
    matched call that already holds a reference (one in time, one late), a matched call with only a late one, a
    call the model never issued (an unmatched result) and a tool of a turn without an LLM call (a synthetic step)."""
    events: list[Any] = []
    s = Stream(events.append)
    session = s.start("hermes.session", "agent", None, 1_000, data={"model": "m"})
    run = s.start("agent.run", "function", session.uuid, 2_000, data={"user_message": "go"})
    llm = s.start("llm.call", "llm", run.uuid, 3_000, profile={"model_name": "m"})
    s.end(llm, 4_000, data=assistant("", [("call_a", "read_file", "{}"), ("call_b", "read_file", "{}")]))
    for n, (call_id, in_time) in enumerate((("call_a", True), ("call_b", False), ("call_x", False))):
        base = 10_000 * (n + 1)
        tool = s.start("read_file", "tool", run.uuid, base, profile={"tool_call_id": call_id})
        if in_time:
            s.end(s.start("hermes.session", "agent", tool.uuid, base + 1, data={"model": "m"}), base + 2)
        late = s.start("hermes.session", "agent", tool.uuid, base + 9_000, data={"model": "m"})
        s.end(late, base + 9_001)
        s.end(tool, base + 5, data={"result": "r"})
    s.end(run, 50_000)
    bare = s.start("agent.run", "function", session.uuid, 60_000, data={"user_message": "again"})
    tool = s.start("terminal", "tool", bare.uuid, 61_000, profile={"tool_call_id": "call_t"})
    s.end(s.start("hermes.session", "agent", tool.uuid, 69_000, data={"model": "m"}), 69_001)
    s.end(tool, 61_005, data={"result": "r"})
    s.end(bare, 70_000)
    s.end(session, 80_000)
    return events


def test_fmt_44_late_subagent_references_are_the_reference_mappers() -> None:
    """FMT-44, FMT-46: a subagent that starts (by timestamp) after its delegating tool ended is referenced where the
    earlier mapper put it: on a result that already holds references and on an unmatched result, not on a call's
    result without one. Fails if the mapper keeps the late reference on a different result dict."""
    events = _late_subagents()
    for options in ({}, {"group_by": "turn"}):
        current = written(events, options)
        with mock.patch.object(trajectory, "StepMapper", ReferenceStepMapper):
            assert current == written(events, options)
    doc = json.loads(written(events, {})[0][1])
    refs = {r.get("source_call_id"): len(r.get("subagent_trajectory_ref", [])) for step in doc["steps"]
            for r in step.get("observation", {}).get("results", [])}
    assert refs == {"call_a": 2, "call_b": 0, None: 1, "call_t": 0}


def _routed(events: list[Any], batch: bool) -> list[tuple[str, bytes]]:
    files: list[TrajectoryFile] = []
    config = parse_atif_config({"enabled": True, "output_directory": "/nonexistent/atif"})
    assembler = TrajectoryAssembler(config, files.append, version="0.0-test")
    if batch:
        failures: list[Exception] = []
        for start in range(0, len(events), 7):  # as a writer hands them over: batches of any size
            assembler.add_all(events[start:start + 7], failures.append)
        assert not failures
    else:
        for event in events:
            assembler.add(event)
    assembler.close()
    return [(f.name, f.content) for f in files]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_fmt_46_a_batch_is_routed_as_one_event_at_a_time(data: st.DataObject) -> None:
    """FMT-46: the writer's batch routing (``add_all``) writes the files routing each event with ``add`` writes."""
    events = build_stream(lambda choices: data.draw(st.sampled_from(choices)))
    assert _routed(events, batch=True) == _routed(events, batch=False)


def test_fmt_83_an_event_that_cannot_be_routed_is_counted_and_the_batch_goes_on() -> None:
    """FMT-83: an event whose routing raises is counted (``routing_failures``) and the events after it in the same
    batch are still routed: the session is written whole."""
    events = build_stream(lambda choices: choices[0])
    odd = ScopeEvent(SCOPE, START, 1, [], 1, "odd", "tool", (), None, None, {}, 1, 1)  # type: ignore[arg-type]

    def files(batch: list[Any]) -> tuple[int, list[tuple[str, bytes]]]:
        destination = MemoryDestination()
        sink = AtifSink(parse_atif_config({"enabled": True, "output_directory": "/nonexistent/atif"}),
                        destinations={"local": destination})
        sink._events.write(batch)  # the writer thread's call, made here directly
        sink._events.close()
        return sink.stats()["routing_failures"], [(f.name, f.content) for f in destination.items]

    failures, with_odd = files([events[0], odd, *events[1:]])
    assert failures == 1
    assert files(events) == (0, with_odd) and with_odd
