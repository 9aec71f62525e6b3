"""ATIF trajectories read each end as a closed scope (``end.start``): the assembler keeps no table of open starts.

The steps (FMT-44, FMT-46: agent steps from LLM-call ends, observations from tool ends with the call's
arguments) come out the same whether or not the assembler saw the starts of the leaf scopes, because the
tracker pairs each scope once and hands the end with its start (FMT-6); such an end joins its parent's
trajectory whole. An assembler pairing on its own drops those ends as unrouted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline.sinks.atif.config import parse_atif_config
from hermes_pipeline.sinks.atif.trajectory import TrajectoryAssembler, TrajectoryFile
from tests.export._closed_support import leaf_starts_dropped, recorded_events


def _documents(events: list[Any], directory: Path, group_by: str) -> tuple[list[dict[str, Any]], dict[str, int]]:
    files: list[TrajectoryFile] = []
    assembler = TrajectoryAssembler(parse_atif_config({"enabled": True, "group_by": group_by}, base_dir=directory),
                                    files.append, version="test")
    for event in events:
        assembler.add(event)
    assembler.close()
    return [f.document for f in files], assembler.counts


@pytest.mark.parametrize("group_by", ["agent", "turn"])
def test_steps_come_from_closed_scopes(tmp_path: Path, group_by: str) -> None:
    """FMT-44, FMT-46, FMT-6: the same documents from the whole stream and from one whose LLM-call and tool
    starts never reached the assembler."""
    events = recorded_events(tmp_path)
    full, counts = _documents(events, tmp_path, group_by)
    assert full and counts["unrouted_events"] == 0
    observations = [r for d in full for s in d["steps"] for r in (s.get("observation") or {}).get("results", ())]
    assert len(observations) == 6
    calls = [c for d in full for s in d["steps"] for c in s.get("tool_calls") or ()]
    assert {c["function_name"] for c in calls} == {"read_file", "memory", "terminal"}
    filtered, counts = _documents(leaf_starts_dropped(events), tmp_path, group_by)
    assert counts["unrouted_events"] == 0
    assert filtered == full
