"""``worker = "process"``: a section's sink run by a child process (FMT-55..FMT-59, FMT-79..FMT-85).

Real processes, a real OTLP receiver and real files: the same scripted session gives the same
spans, ATOF lines and ATIF trajectories as the in-process sinks; a dead worker never reaches the
agent; bad configuration fails activation with the usual typed error.
"""

from __future__ import annotations

import json
import os
import signal
from typing import Any

import pytest

from hermes_pipeline import Engine, Host
from hermes_pipeline.demo.otlp_receiver import OTLPReceiver
from hermes_pipeline.export.errors import ExportConfigError
from hermes_pipeline.sinks.otel import build_otel_plugin
from hermes_pipeline.export.sink import SinkContext
from hermes_pipeline.export.worker import ProcessSink

from tests.sinks.otel._support import run_scripted_session

OTEL_SINK = "hermes_pipeline.sinks.otel.sink:OtelSink"


def _ctx(section: str, base_dir: Any = ".") -> SinkContext:
    from pathlib import Path

    return SinkContext(name=section, base_dir=Path(base_dir), on_invalid="raise", ignore_unknown_keys=False,
                       environment="development")


def _plugin(endpoint: str, worker: str) -> Any:
    return build_otel_plugin({"enabled": True, "worker": worker,
                              "endpoints": [{"type": "gen_ai", "endpoint": endpoint, "scheduled_delay_millis": 50}]})


def _shape(spans: list[Any]) -> list[tuple[Any, ...]]:
    by_id = {s.span_id: s for s in spans}
    return sorted((s.name, s.kind, s.status_code, by_id[s.parent_span_id].name if s.parent_span_id in by_id else None,
                   tuple(sorted(k for k in s.attributes if not k.endswith(("_id", ".id", "sha256", "preview"))
                                and k not in ("hermes.duration_ms", "gen_ai.conversation.id"))))
                  for s in spans)


def test_fmt55_59_worker_process_exports_the_same_spans_as_the_thread_worker() -> None:
    """FMT-55..FMT-59: the scripted session (retries, tool errors, blocks, approval, human input, a subagent,
    a cancelled tool) reaches a real receiver with the same spans whichever worker built them."""
    shapes = {}
    for worker in ("thread", "process"):
        with OTLPReceiver() as receiver:
            engine = Engine()
            plugin = _plugin(receiver.endpoint, worker)
            assert isinstance(plugin.sink, ProcessSink) == (worker == "process")
            engine.add_plugin(plugin, name="otel")
            run_scripted_session(engine)
            assert plugin.flush(30.0)
            stats = plugin.sink.stats()
            assert plugin.shutdown(30.0)
            shapes[worker] = _shape(list(receiver.spans))
            assert stats["exported"] == len(receiver.spans) > 10
    assert shapes["process"] == shapes["thread"]


def test_fmt83_a_killed_worker_never_reaches_the_agent(caplog: pytest.LogCaptureFixture) -> None:
    """FMT-83: kill -9 the worker mid-session: the agent's calls still return, flush reports False without
    waiting out its deadline, lost events are counted in otel.spans_dropped, shutdown completes."""
    with OTLPReceiver() as receiver:
        engine = Engine()
        plugin = _plugin(receiver.endpoint, "process")
        sink = plugin.sink
        assert isinstance(sink, ProcessSink)
        engine.add_plugin(plugin, name="otel")
        host = Host(engine, platform="cli", model="m", provider="openai")
        os.kill(sink.worker_pid, signal.SIGKILL)
        with host.session() as session:
            for _ in range(3):
                with session.turn("hi") as turn:
                    assert turn.call_tool("read_file", {"path": "x"}, lambda path: "ok", tool_call_id="c") == "ok"
                    turn.complete("done")
        assert plugin.flush(10.0) is False
        assert sink.stats()["worker"]["alive"] is False
        plugin.shutdown(5.0)
        # session start/end + 3 x (turn start/end + tool start/end): every event the worker never took
        assert sink.counters()["otel.spans_dropped[0]"] == 2 + 3 * 4
        assert receiver.spans == []


def test_fmt73_worker_key_is_validated_before_any_process_starts() -> None:
    """FMT-73: an unknown worker kind is a typed error naming the key; no child is started for it."""
    with pytest.raises(ExportConfigError) as info:
        build_otel_plugin({"enabled": True, "worker": "fork", "endpoints": [{"type": "gen_ai",
                                                                               "endpoint": "http://127.0.0.1:9"}]})
    assert info.value.path == "opentelemetry.worker"


def test_fmt85_shutdown_ends_the_worker_and_is_idempotent() -> None:
    """FMT-85: after shutdown the child exits on its own; a second shutdown is a no-op."""
    with OTLPReceiver() as receiver:
        plugin = _plugin(receiver.endpoint, "process")
        sink = plugin.sink
        assert isinstance(sink, ProcessSink)
        assert "worker process" in sink.destinations()[0]
        assert plugin.shutdown(10.0)
        assert plugin.shutdown(10.0)
        sink.worker._process.wait(15.0)
        assert sink.worker._process.returncode == 0


def test_fmt83_a_worker_that_cannot_start_fails_activation_with_a_typed_error(tmp_path: Any) -> None:
    """CFG-48/FMT-83: when the child cannot start (here: an interpreter that exits at once) the sink is not
    built, and the error names the key that asked for the worker process."""
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\nexit 3\n")
    fake.chmod(0o755)
    with pytest.raises(ExportConfigError) as info:
        ProcessSink("opentelemetry", OTEL_SINK,
                    {"enabled": True, "endpoints": [{"type": "gen_ai", "endpoint": "http://127.0.0.1:9"}]},
                    _ctx("opentelemetry"), python=str(fake))
    assert info.value.path == "opentelemetry.worker"
    assert "did not start" in info.value.message


def test_fmt73_a_bad_endpoint_found_by_the_worker_comes_back_as_the_same_typed_error() -> None:
    """FMT-73: configuration the child refuses is reported with the child's key path and reason."""
    with pytest.raises(ExportConfigError) as info:
        ProcessSink("opentelemetry", OTEL_SINK,
                    {"enabled": True, "endpoints": [{"type": "gen_ai", "endpoint": "ftp://example"}]},
                    _ctx("opentelemetry"))
    assert info.value.path.startswith("opentelemetry.endpoints[0]")


def _atof_shape(path: Any) -> list[tuple[Any, ...]]:
    events = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [(e["kind"], e.get("scope_category"), e.get("category"), e["name"], e["uuid"], e["parent_uuid"],
             e["timestamp"], json.dumps(e["data"], sort_keys=True), json.dumps(e["metadata"], sort_keys=True))
            for e in events]


@pytest.mark.parametrize("worker", ["process", "process:exporters"])
def test_fmt79_81_atof_and_atif_in_worker_processes_write_what_the_threads_write(tmp_path: Any, worker: str) -> None:
    """FMT-56/FMT-79/FMT-81: with the scope plugin shared in this process, ATOF and ATIF sinks run by worker
    processes (one each, or one shared by both) write exactly the same ATOF lines (UUIDs and timestamps
    included) as thread-run sinks fed by the same scope plugin, and the same ATIF trajectories; both pass
    their JSON Schemas."""
    from hermes_pipeline.components.observability import ObservabilityComponent

    from tests.sinks.atif._support import ATIF_VALIDATOR, ATOF_VALIDATOR

    def section(worker: str, out: Any) -> dict[str, Any]:
        return {"atof": {"enabled": True, "worker": worker, "sinks": [
                    {"type": "file", "output_directory": str(out), "filename": "events.jsonl", "mode": "overwrite"}]},
                "atif": {"enabled": True, "worker": worker, "output_directory": str(out / "atif"),
                         "filename_template": "atif-{session_id}.json"}}

    engine = Engine()
    threads, processes = tmp_path / "threads", tmp_path / "processes"
    config = {"version": 4, **section(worker, processes)}
    name = engine.add_plugin(ObservabilityComponent, config=config)
    component = engine.plugins.get(name).instance
    sinks = component.exporters.sinks
    assert all(isinstance(sinks[k], ProcessSink) for k in ("atof", "atif"))
    shared = worker == "process:exporters"
    assert (sinks["atof"].worker_pid == sinks["atif"].worker_pid) == shared
    listeners = component.exporters.scope_plugin.tracker._listeners
    assert len(listeners) == (1 if shared else 2)  # a shared worker is fed (and each batch pickled) once
    from hermes_pipeline.sinks.atif import build_atif_sink
    from hermes_pipeline.sinks.atof import build_atof_sink

    twin_atof = build_atof_sink(section("thread", threads)["atof"])
    twin_atif = build_atif_sink(section("thread", threads)["atif"])
    component.exporters.scope_plugin.add_listener(twin_atof)
    component.exporters.scope_plugin.add_listener(twin_atif)
    run_scripted_session(engine)
    assert component.flush(30.0)
    stats = component.stats()
    engine.remove_plugin(name)
    assert twin_atof.shutdown(10.0) and twin_atif.shutdown(10.0)
    assert stats["atof"]["worker"]["alive"] and stats["atif"]["worker"]["written"] > 0
    ours = _atof_shape(processes / "events.jsonl")
    assert ours and ours == _atof_shape(threads / "events.jsonl")
    for line in (processes / "events.jsonl").read_text(encoding="utf-8").splitlines():
        ATOF_VALIDATOR.validate(json.loads(line))
    documents = {}
    for root in (threads, processes):
        files = sorted((root / "atif").glob("*.json"))
        assert files
        documents[root.name] = [json.loads(f.read_text(encoding="utf-8")) for f in files]
    assert documents["processes"] == documents["threads"]
    for document in documents["processes"]:
        ATIF_VALIDATOR.validate(document)


def test_fmt84_an_answer_that_comes_too_late_is_discarded_not_mistaken_for_the_next() -> None:
    """FMT-84: a request that gives up waiting (here: no time at all) leaves the worker running; its late
    answer is discarded, and the next requests get their own answers."""
    from hermes_pipeline.export.worker.protocol import STATS, WorkerDied

    with OTLPReceiver() as receiver:
        plugin = _plugin(receiver.endpoint, "process")
        sink = plugin.sink
        assert isinstance(sink, ProcessSink)
        with sink.worker._answered:  # the reply reader cannot file the answer before the request gives up
            with pytest.raises(WorkerDied):
                sink.worker._request((STATS,), timeout=0.0)
        assert plugin.flush(15.0) is True  # a (bool, count) answer, not the stale stats tuple
        assert sink.stats()["worker"]["alive"] is True
        assert "otel.spans_dropped[0]" in sink.counters()
        assert plugin.shutdown(15.0)


def _shared_sections(out: Any, worker: str = "process:exporters") -> dict[str, Any]:
    return {"version": 4,
            "atof": {"enabled": True, "worker": worker, "sinks": [
                {"type": "file", "output_directory": str(out), "filename": "events.jsonl", "mode": "overwrite"}]},
            "atif": {"enabled": True, "worker": worker, "output_directory": str(out / "atif"),
                     "filename_template": "atif-{session_id}.json"}}


def _one_turn_session(engine: Engine) -> None:
    host = Host(engine, platform="cli", model="m", provider="openai")
    with host.session() as session:
        with session.turn("hi") as turn:
            assert turn.call_tool("read_file", {"path": "x"}, lambda path: "ok", tool_call_id="c") == "ok"
            turn.complete("done")


def test_fmt83_a_killed_shared_worker_counts_the_lost_events_in_every_section(tmp_path: Any) -> None:
    """FMT-81/FMT-83: kill -9 the worker shared by ATOF and ATIF: the agent is unaffected, flush reports False,
    and each section's drop counter counts every event the child never took (session + turn + tool: 6)."""
    from hermes_pipeline.components.observability import ObservabilityComponent

    engine = Engine()
    name = engine.add_plugin(ObservabilityComponent, config=_shared_sections(tmp_path))
    component = engine.plugins.get(name).instance
    sinks = component.exporters.sinks
    os.kill(sinks["atof"].worker_pid, signal.SIGKILL)
    _one_turn_session(engine)
    assert component.flush(10.0) is False
    assert sinks["atif"].stats()["worker"]["alive"] is False
    engine.remove_plugin(name)
    assert sinks["atof"].counters()["atof.file.events_dropped[0]"] == 6
    assert sinks["atif"].counters()["atif.events_dropped"] == 6


def test_fmt85_closing_one_section_keeps_the_shared_worker_serving_the_other(tmp_path: Any) -> None:
    """FMT-85: shutting the ATOF section down writes its file and leaves ATIF running in the same child; the
    child exits (status 0) only after its last section is shut down."""
    from hermes_pipeline.components.observability import ObservabilityComponent

    engine = Engine()
    name = engine.add_plugin(ObservabilityComponent, config=_shared_sections(tmp_path))
    component = engine.plugins.get(name).instance
    atof, atif = component.exporters.sinks["atof"], component.exporters.sinks["atif"]
    _one_turn_session(engine)
    assert component.exporters.scope_plugin.flush(10.0)
    assert atof.shutdown(10.0) and atof.shutdown(10.0)  # idempotent
    assert (tmp_path / "events.jsonl").read_text(encoding="utf-8").count("\n") == 6
    assert atof.join(0.5) is False  # still serving ATIF
    _one_turn_session(engine)
    engine.remove_plugin(name)
    assert atif.join(15.0) and atif.worker._process.returncode == 0
    assert len(list((tmp_path / "atif").glob("*.json"))) == 2
    assert (tmp_path / "events.jsonl").read_text(encoding="utf-8").count("\n") == 6  # closed: nothing more


@pytest.mark.parametrize("value", ["process:", "process:two words", "processes", "thread:x", 1])
def test_fmt73_a_bad_worker_value_is_a_typed_error_naming_the_key(value: Any) -> None:
    """FMT-73: ``worker`` must be ``thread``, ``process`` or ``process:NAME``; anything else names the key."""
    from hermes_pipeline.sinks.atof import build_atof_sink

    with pytest.raises(ExportConfigError) as info:
        build_atof_sink({"enabled": True, "worker": value, "sinks": [{"type": "file", "output_directory": "."}]})
    assert info.value.path == "atof.worker"
    assert "process:NAME" in info.value.message


def test_fmt73_a_section_the_shared_worker_refuses_fails_the_whole_pool_cleanly(tmp_path: Any) -> None:
    """FMT-73/CFG-48: one bad section in a shared child comes back as its own typed error; the child is gone."""
    from hermes_pipeline.export.worker import WorkerPool

    pool = WorkerPool()
    good = pool.plan("shared", "atof", "hermes_pipeline.sinks.atof:AtofSink",
                     {"enabled": True, "sinks": [{"type": "file", "output_directory": str(tmp_path)}]},
                     _ctx("atof", tmp_path))
    pool.plan("shared", "opentelemetry", OTEL_SINK,
              {"enabled": True, "endpoints": [{"type": "gen_ai", "endpoint": "ftp://example"}]}, _ctx("opentelemetry"))
    with pytest.raises(ExportConfigError) as info:
        pool.start()
    assert info.value.path.startswith("opentelemetry.endpoints[0]")
    assert pool.workers == []
    assert good.shutdown(1.0)  # never attached: a no-op


def test_fmt81_atof_and_otlp_sharing_one_worker_each_export_everything(tmp_path: Any) -> None:
    """FMT-79/FMT-81: ATOF and OTLP sections sharing one child (``process:mixed``): one process serves both,
    every ATOF line is written, the receiver decodes one trace per session with both tool spans, and each
    section reports its own counters only."""
    from hermes_pipeline.components.observability import ObservabilityComponent

    with OTLPReceiver() as receiver:
        engine = Engine()
        config = {"version": 4,
                  "atof": {"enabled": True, "worker": "process:mixed", "sinks": [
                      {"type": "file", "output_directory": str(tmp_path), "filename": "events.jsonl"}]},
                  "opentelemetry": {"enabled": True, "worker": "process:mixed", "endpoints": [
                      {"type": "gen_ai", "endpoint": receiver.endpoint, "scheduled_delay_millis": 50}]}}
        name = engine.add_plugin(ObservabilityComponent, config=config)
        component = engine.plugins.get(name).instance
        sinks = component.exporters.sinks
        assert sinks["atof"].worker_pid == sinks["opentelemetry"].worker_pid
        _one_turn_session(engine)
        _one_turn_session(engine)
        assert component.flush(30.0)
        stats = component.stats()
        engine.remove_plugin(name)
        assert stats["atof"]["worker"]["sections"] == ["atof", "opentelemetry"]
        assert "otel.spans_dropped[0]" in sinks["opentelemetry"].counters()
        assert "atof.file.events_dropped[0]" in sinks["atof"].counters()
        assert "otel.spans_dropped[0]" not in sinks["atof"].counters()
        lines = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text(encoding="utf-8").splitlines()]
        assert len(lines) == 12
        spans = list(receiver.spans)
        assert len({s.trace_id for s in spans}) == 2  # one trace per session
        assert sorted(s.name for s in spans if s.name.startswith("execute_tool")) == ["execute_tool read_file"] * 2


def test_fmt80_the_forwarding_queue_takes_the_component_byte_bound(tmp_path: Any) -> None:
    """FMT-80: the parent's forwarding queue to a worker process is bounded by the component's
    ``max_queue_bytes`` as well as by events (the default when absent)."""
    from hermes_pipeline.components.observability import ObservabilityComponent
    from hermes_pipeline.export.writer import DEFAULT_MAX_QUEUE_BYTES

    for config, expected in ((_shared_sections(tmp_path), DEFAULT_MAX_QUEUE_BYTES),
                             ({**_shared_sections(tmp_path), "max_queue_bytes": 5 * 2**20}, 5 * 2**20)):
        engine = Engine()
        name = engine.add_plugin(ObservabilityComponent, config=config)
        sink = engine.plugins.get(name).instance.exporters.sinks["atof"]
        assert sink.worker._writer.byte_capacity == expected
        engine.remove_plugin(name)
