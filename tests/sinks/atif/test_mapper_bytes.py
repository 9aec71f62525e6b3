"""The ATIF writer's documents stay byte for byte what they were before the writer-thread work (issue #29): the
step mapper's tool paths against the earlier ones (``_reference.ReferenceStepMapper``), on varied generated
streams (tool calls with and without ids, arguments that are not JSON objects, statuses, exit codes, errors,
annotations, toolsets, approvals inside tools, delegated subagents, failed attempts, equal and out-of-order
timestamps) and the ``atif`` options that change the mapping (FMT-43, FMT-44, FMT-46, FMT-52)."""

from __future__ import annotations

from typing import Any
from unittest import mock

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_pipeline.sinks.atif import trajectory
from hermes_pipeline.sinks.atif.config import parse_atif_config
from hermes_pipeline.sinks.atif.trajectory import TrajectoryAssembler, TrajectoryFile

from tests.sinks._streams import build_stream
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
