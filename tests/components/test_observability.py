"""The ``observability`` component wires the enabled sinks to one shared scope plugin (spec 04 §1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_pipeline import Engine, Host
from hermes_pipeline.components.observability import ObservabilityComponent
from hermes_pipeline.schemas import load_schema


def run_session(engine: Engine) -> None:
    host = Host(engine, model="m", platform="cli")
    with host.session() as session, session.turn("hello") as turn:
        turn.call_llm({"model": "m", "messages": [{"role": "user", "content": "hello"}]},
                      lambda r: {"model": "m", "choices": [{"message": {"role": "assistant", "content": "hi"},
                                                            "finish_reason": "stop"}]})
        turn.call_tool("read_file", {"path": "a"}, lambda path: "text", tool_call_id="c1")
        turn.complete("done")


def test_fmt_atof_sink_attached_through_the_component(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The component's activate() attaches the ATOF file sink; shutdown writes everything; removal unhooks."""
    import jsonschema

    monkeypatch.chdir(tmp_path)
    engine = Engine()
    config = {"version": 4, "atof": {"enabled": True, "sinks": [
        {"type": "file", "output_directory": "out", "filename": "events.jsonl", "mode": "overwrite"}]}}
    name = engine.add_plugin(ObservabilityComponent, config=config)
    component = engine.plugins.get(name).instance  # type: ignore[union-attr]
    assert engine.has_hook("post_tool_call")
    run_session(engine)
    assert component.flush(5.0)
    engine.remove_plugin(name)
    assert not engine.has_hook("post_tool_call")
    events = [json.loads(line) for line in (tmp_path / "out" / "events.jsonl").read_text().splitlines()]
    schema = load_schema("atof-0.1")
    for event in events:
        jsonschema.validate(event, schema)
    names = [(e["scope_category"] if e.get("kind") == "scope" else "mark", e["name"]) for e in events]
    assert ("start", "hermes.session") in names and ("end", "read_file") in names


def test_no_enabled_section_registers_nothing() -> None:
    """With every section disabled the component listens to nothing (no caller cost)."""
    engine = Engine()
    engine.add_plugin(ObservabilityComponent, config={"version": 4, "atof": {"enabled": False}})
    assert not engine.has_hook("post_tool_call") and not engine.has_hook("pre_llm_call")


def test_fmt_80_max_queue_bytes_bounds_the_publication_and_sink_queues(tmp_path: Path) -> None:
    """FMT-80: the component's ``max_queue_bytes`` is the byte bound of the publication queue (the default when
    absent) and, when set, of each ATOF and ATIF writer queue and the OTel sink's event queue; byte refusals are part of the drop counters."""
    from hermes_pipeline.export.writer import DEFAULT_MAX_QUEUE_BYTES

    def writers(config: dict[str, object]) -> list[int | None]:
        engine = Engine()
        name = engine.add_plugin(ObservabilityComponent, config=config)
        component = engine.plugins.get(name).instance  # type: ignore[union-attr]
        attached = component.exporters
        out = [attached.scope_plugin._publication.byte_capacity]
        out += [route.writer.byte_capacity for route in attached.sinks["atof"]._routes]
        out.append(attached.sinks["atif"]._writer.byte_capacity)
        out.append(attached.sinks["opentelemetry"]._events.byte_capacity)  # the span builder's event queue
        stats = attached.stats()
        assert stats["publication"]["pipeline.events_dropped_bytes"] == 0
        assert all(sink["dropped_queue_bytes"] == 0 for sink in stats["atof"]["sinks"])
        engine.remove_plugin(name)
        return out

    sections = {"atof": {"enabled": True, "sinks": [{"type": "file", "output_directory": str(tmp_path)}]},
                "atif": {"enabled": True, "output_directory": str(tmp_path)},
                "opentelemetry": {"enabled": True, "endpoints": [{"type": "gen_ai",
                                                                  "endpoint": "http://127.0.0.1:9/v1/traces"}]}}
    # unset: the publication queue has the default byte bound, the built-in writers their event count only
    assert writers({"version": 4, **sections}) == [DEFAULT_MAX_QUEUE_BYTES, None, None, None]
    assert writers({"version": 4, "max_queue_bytes": 8 * 2**20, **sections}) == [8 * 2**20] * 4


def test_former_projection_names_are_the_scope_plugin_and_warn_once(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue #29 item 6 (one word per concept): ``component.projection`` and ``component.exporters.projection``
    (documented in docs/sinks.md) still answer the scope plugin the sinks listen to, with one
    ``DeprecationWarning`` each per process."""
    import warnings

    from hermes_pipeline import _deprecated

    monkeypatch.setattr(_deprecated, "_WARNED", set())
    engine = Engine()
    config = {"version": 4, "atof": {"enabled": True, "sinks": [
        {"type": "file", "output_directory": str(tmp_path), "filename": "events.jsonl", "mode": "overwrite"}]}}
    name = engine.add_plugin(ObservabilityComponent, config=config)
    component = engine.plugins.get(name).instance  # type: ignore[union-attr]
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for _ in range(2):
                assert component.projection is component.scope_plugin is component.exporters.scope_plugin
                assert component.exporters.projection is component.scope_plugin
        assert [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)] == [
            "ObservabilityComponent.projection is deprecated; use ObservabilityComponent.scope_plugin",
            "AttachedSinks.projection is deprecated; use AttachedSinks.scope_plugin"]
    finally:
        engine.remove_plugin(name)
