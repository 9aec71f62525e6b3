"""The public test helper for sink authors (``hermes_pipeline.testing``): the project's own ATOF and ATIF
sinks tested through it, and a sink that is not installed, given as a builder, beside them."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jsonschema

from hermes_pipeline.export.events import ScopeEvent
from hermes_pipeline.schemas import load_schema
from hermes_pipeline.sinks.base import BaseSink, SinkContext
from hermes_pipeline.testing import MemorySink, capture_export, scripted_session

ATOF = jsonschema.Draft202012Validator(load_schema("atof-0.1"))
ATIF = jsonschema.Draft202012Validator(load_schema("atif-1.7"))

CONFIG: dict[str, Any] = {
    "version": 4,
    "atof": {"enabled": True, "sinks": [{"type": "file", "filename": "events.jsonl", "mode": "overwrite"}]},
    "atif": {"enabled": True, "filename_template": "atif-{session_id}.json"},
}


class Names(BaseSink):
    """A sink of another distribution: the names of the scopes it saw, one line each."""

    def __init__(self, config: Mapping[str, Any], ctx: SinkContext) -> None:
        self.path = Path(config["path"])
        self.names: list[str] = []

    def __call__(self, event: ScopeEvent) -> None:
        if event.phase == "start":
            self.names.append(event.name)

    def shutdown(self, deadline: float) -> bool:
        self.path.write_text("\n".join(self.names), encoding="utf-8")
        return True


def test_fmt_atof_lines_are_the_projected_events_in_order(tmp_path: Path) -> None:
    """Every ATOF line is one event the scope plugin published (same UUID, phase and order), and valid."""
    run = capture_export(CONFIG, tmp_path)
    lines = run.jsonl("events.jsonl")
    for line in lines:
        ATOF.validate(line)
    assert [(line["uuid"], line["scope_category"]) for line in lines] == \
        [(run.uuid(event), event.phase) for event in run.events]
    assert [line["name"] for line in lines if line["scope_category"] == "start"] == \
        ["hermes.session", "agent.run", "llm.call", "read_file", "read_file"]
    assert "atof" in run.stats and "atif" in run.stats


def test_fmt_one_atif_trajectory_per_session_named_by_its_first_run(tmp_path: Path) -> None:
    """One file per session; its id is its first run's (issue #27: one run, one id in every output)."""
    run = capture_export(CONFIG, tmp_path, session=lambda host: [scripted_session(host) for _ in range(2)])
    trajectories = run.documents(".json")
    assert len(trajectories) == 2
    roots = {event.uuid for event in run.events if event.parent_uuid is None and event.phase == "start"}
    first_runs = {run.uuid(event) for event in run.events
                  if event.phase == "start" and event.name == "agent.run" and event.parent_uuid in roots}
    assert {doc["session_id"] for doc in trajectories} == first_runs
    for doc in trajectories:
        ATIF.validate(doc)
        assert [step["source"] for step in doc["steps"]] == ["user", "agent"]
        assert [call["function_name"] for call in doc["steps"][1]["tool_calls"]] == ["read_file", "read_file"]


def test_a_sink_given_as_a_builder_sees_the_same_events_as_the_builtin_ones(tmp_path: Path) -> None:
    config = {**CONFIG, "names": {"enabled": True, "path": str(tmp_path / "names.txt")}}
    run = capture_export(config, tmp_path, builders={"names": Names})
    starts = [event.name for event in run.events if event.phase == "start"]
    assert run.files["names.txt"].decode().split("\n") == starts
    assert [line["name"] for line in run.jsonl("events.jsonl") if line["scope_category"] == "start"] == starts


def test_memory_sink_is_a_builder_too(tmp_path: Path) -> None:
    sink = MemorySink({}, SinkContext(name="memory", base_dir=tmp_path))
    assert sink.stats() == {"events": 0} and sink.flush(1.0) and sink.shutdown(1.0) and sink.closed
