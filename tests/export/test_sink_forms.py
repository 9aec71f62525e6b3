"""One sink, three ways to run it, one output (issue #29 item 4; spec 04 FMT-55..FMT-59, FMT-79..FMT-85).

Each built-in sink (ATOF, ATIF, OpenTelemetry) is built from its entry point's class with the same section
table three times, all fed by the same scripted session on one engine:

- in process, on the ``observability`` component's shared scope plugin (``worker = "thread"``);
- in a worker process (``worker = "process"``), the child building it through the same class entry;
- stand-alone, on a scope plugin of its own: the generic :meth:`SinkPlugin.build` given the class.

Apart from the ids and timestamps each scope plugin mints (replaced by their order of appearance, and a
placeholder), the three write the same ATOF lines, the same ATIF trajectories and the same OTLP spans.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline import Engine
from hermes_pipeline.components.observability_sinks import AttachedSinks, attach_sinks
from hermes_pipeline.demo.otlp_receiver import OTLPReceiver, ReceivedSpan
from hermes_pipeline.export.sink import SinkContext
from hermes_pipeline.export.standalone import SinkPlugin
from hermes_pipeline.export.worker import ProcessSink
from hermes_pipeline.sinks.atif import AtifSink
from hermes_pipeline.sinks.atof import AtofSink
from hermes_pipeline.sinks.otel.sink import OtelSink

from tests.sinks.otel._support import run_scripted_session

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)")
FORMS = ("thread", "process", "standalone")


def _normalised(value: Any, seen: dict[str, str]) -> Any:
    """``value`` with every UUID replaced by its order of first appearance and every timestamp by ``<ts>``."""
    if isinstance(value, dict):
        return {_normalised(k, seen): _normalised(v, seen) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_normalised(v, seen) for v in value]
    if isinstance(value, str):
        text = UUID.sub(lambda m: seen.setdefault(m.group(0), f"<uuid {len(seen)}>"), value)
        return TIMESTAMP.sub("<ts>", text)
    return value


def _run(tmp_path: Path, kind: str, cls: type, section: dict[str, Any]) -> None:
    """The section ``kind`` of ``cls`` in the three forms, each with its own ``section(form)`` table, fed by one
    scripted session."""
    engine = Engine()
    attached: list[AttachedSinks] = []
    for form in ("thread", "process"):
        found = attach_sinks({"version": 4, kind: {**section_for(section, form), "worker": form}},
                             base_dir=tmp_path, default_dir=tmp_path,
                             register=lambda plugin, form=form: engine.add_plugin(plugin, name=f"{kind}-{form}"))
        assert found is not None
        assert isinstance(found.sinks[kind], ProcessSink) == (form == "process")
        attached.append(found)
    ctx = SinkContext(name=kind, base_dir=tmp_path, default_dir=tmp_path, on_invalid="raise",
                      ignore_unknown_keys=False)
    plugin = SinkPlugin.build(cls, section_for(section, "standalone"), ctx)
    assert plugin.enabled and isinstance(plugin.sink, cls)
    engine.add_plugin(plugin, name=f"{kind}-standalone")
    run_scripted_session(engine)
    for one in attached:
        assert one.flush(30.0)
        assert one.shutdown(30.0)
    assert plugin.flush(30.0)
    assert plugin.shutdown(30.0)


def section_for(section: dict[str, Any], form: str) -> dict[str, Any]:
    """The table with every ``{form}`` placeholder of its string values filled in."""
    def fill(value: Any) -> Any:
        if isinstance(value, str):
            return value.replace("{form}", form)
        if isinstance(value, list):
            return [fill(v) for v in value]
        if isinstance(value, dict):
            return {k: fill(v) for k, v in value.items()}
        return value
    return fill(section)  # type: ignore[no-any-return]


def test_atof_lines_are_the_same_in_process_in_a_worker_and_stand_alone(tmp_path: Path) -> None:
    """FMT-79/FMT-81: the ATOF sink built from ``AtofSink`` writes the same lines in all three forms."""
    _run(tmp_path, "atof", AtofSink, {"enabled": True, "sinks": [
        {"type": "file", "output_directory": str(tmp_path), "filename": "{form}.jsonl", "mode": "overwrite"}]})
    outputs = {form: _lines(tmp_path / f"{form}.jsonl") for form in FORMS}
    assert len(outputs["thread"]) > 20
    assert outputs["process"] == outputs["thread"]
    assert outputs["standalone"] == outputs["thread"]


def _lines(path: Path) -> list[Any]:
    """The ATOF lines of ``path``, UUIDs numbered across the whole file (so parent links are compared too)."""
    seen: dict[str, str] = {}
    return [_normalised(json.loads(line), seen) for line in path.read_text(encoding="utf-8").splitlines()]


def _documents(directory: Path) -> list[str]:
    docs = []
    for path in directory.glob("*.json"):
        docs.append(json.dumps(_normalised(json.loads(path.read_text(encoding="utf-8")), {}), sort_keys=True))
    return sorted(docs)


def test_atif_trajectories_are_the_same_in_process_in_a_worker_and_stand_alone(tmp_path: Path) -> None:
    """FMT-46/FMT-79: the ATIF sink built from ``AtifSink`` writes the same trajectories (raw observed events
    included) in all three forms."""
    _run(tmp_path, "atif", AtifSink, {"enabled": True, "output_directory": str(tmp_path / "{form}"),
                                      "include_observed_events": True})
    documents = {form: _documents(tmp_path / form) for form in FORMS}
    assert documents["thread"] and '"observed_events"' in documents["thread"][0]
    assert documents["process"] == documents["thread"]
    assert documents["standalone"] == documents["thread"]


def _spans(spans: list[ReceivedSpan]) -> list[str]:
    """Each span without its ids and times: name, kind, status, its parent's name, attributes, events."""
    by_id = {s.span_id: s for s in spans}
    out = []
    for s in spans:
        seen: dict[str, str] = {}
        attributes = {k: v for k, v in s.attributes.items()
                      if not k.endswith(("_id", ".id", "sha256")) and k != "gen_ai.conversation.id"}
        parent = by_id[s.parent_span_id].name if s.parent_span_id in by_id else None
        out.append(json.dumps(_normalised([s.name, s.kind, s.status_code, s.status_message, parent, attributes,
                                           [list(e) for e in s.events]], seen), sort_keys=True, default=str))
    return sorted(out)


@pytest.mark.parametrize("metrics", [False, True])
def test_otlp_spans_are_the_same_in_process_in_a_worker_and_stand_alone(tmp_path: Path, metrics: bool) -> None:
    """FMT-55..FMT-59: the OTel sink built from ``OtelSink`` sends the same spans in all three forms (with a
    ``metrics`` table too: the metrics sink stays in this process, the traces go to the worker)."""
    receivers = {form: OTLPReceiver() for form in FORMS}
    for receiver in receivers.values():
        receiver.__enter__()
    try:
        endpoints = {form: receiver.endpoint for form, receiver in receivers.items()}
        section: dict[str, Any] = {"enabled": True, "endpoints": [
            {"type": "gen_ai", "endpoint": "{form}", "scheduled_delay_millis": 50}]}
        if metrics:
            section["metrics"] = {"enabled": True}  # to the trace endpoint's receiver (it takes /v1/metrics too)

        def with_endpoint(form: str) -> dict[str, Any]:
            table = section_for(section, form)
            table["endpoints"][0]["endpoint"] = endpoints[form]
            return table

        engine = Engine()
        attached = []
        for form in ("thread", "process"):
            found = attach_sinks({"version": 4, "opentelemetry": {**with_endpoint(form), "worker": form}},
                                 base_dir=tmp_path, default_dir=tmp_path,
                                 register=lambda plugin, form=form: engine.add_plugin(plugin, name=f"otel-{form}"))
            assert found is not None
            sink = found.sinks["opentelemetry"]
            traces = getattr(sink, "traces", sink)  # with metrics: the metrics sink beside the traces, here
            assert hasattr(sink, "metrics") is metrics
            assert isinstance(traces, ProcessSink) == (form == "process")
            attached.append(found)
        ctx = SinkContext(name="opentelemetry", base_dir=tmp_path, on_invalid="raise", ignore_unknown_keys=False)
        plugin = SinkPlugin.build(OtelSink, with_endpoint("standalone"), ctx)
        engine.add_plugin(plugin, name="otel-standalone")
        run_scripted_session(engine)
        for one in attached:
            assert one.flush(30.0)
        assert plugin.flush(30.0)
        for one in attached:
            one.shutdown(30.0)
        plugin.shutdown(30.0)
        spans = {form: _spans(list(receiver.spans)) for form, receiver in receivers.items()}
    finally:
        for receiver in receivers.values():
            receiver.__exit__(None, None, None)
    assert len(spans["thread"]) > 10
    assert spans["process"] == spans["thread"]
    assert spans["standalone"] == spans["thread"]


def test_any_sink_class_runs_in_a_worker_process_through_its_class_entry(tmp_path: Path) -> None:
    """FMT-79/FMT-83: the worker wrapper is generic: a sink class with only the sink shape (no counters, no queue
    size of its own) runs in a child built by ``BaseSink.from_config`` and writes what the same class writes in
    process; its stats come back from the child."""
    from hermes_pipeline.export.worker import process_sink

    from tests.export._line_sink import LineSink

    engine = Engine()
    ctx = SinkContext(name="lines", base_dir=tmp_path)
    worker = process_sink("process", LineSink, {"path": str(tmp_path / "process.txt")}, ctx)
    assert isinstance(worker, ProcessSink) and worker.enabled
    in_worker = SinkPlugin(worker)
    in_process = SinkPlugin.build(LineSink, {"path": str(tmp_path / "thread.txt")}, ctx)
    engine.add_plugin(in_worker, name="lines-process")
    engine.add_plugin(in_process, name="lines-thread")
    run_scripted_session(engine)
    assert in_worker.flush(30.0) and in_process.flush(30.0)
    stats = worker.stats()
    assert in_worker.shutdown(30.0) and in_process.shutdown(30.0)
    written = (tmp_path / "thread.txt").read_text(encoding="utf-8")
    assert written.count("\n") > 20
    assert (tmp_path / "process.txt").read_text(encoding="utf-8") == written
    assert stats["seen"] == written.count("\n") and stats["section"] == "lines"
    assert worker.counters() == {}
