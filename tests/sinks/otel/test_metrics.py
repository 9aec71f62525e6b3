"""OTLP metrics of spec 06 BOOK-2: with [components.config.opentelemetry.metrics] enabled, the derived
instruments are counted from the event stream and exported over OTLP/HTTP through the SDK's metrics
pipeline, checked by a real loopback receiver decoding ExportMetricsServiceRequest."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline.demo.otlp_metrics_receiver import OTLPMetricsReceiver, ReceivedPoint
from hermes_pipeline.demo.otlp_receiver import OTLPReceiver
from hermes_pipeline.export.errors import ExportConfigError
from hermes_pipeline.sink_testing import capture_export, scripted_session
from hermes_pipeline.sinks.otel.config import parse_otel_config
from hermes_pipeline.sinks.otel.metrics_config import parse_metrics_config


def _latest(points: list[ReceivedPoint]) -> dict[tuple[tuple[str, Any], ...], ReceivedPoint]:
    """Cumulative points: the last export of each attribute set holds the totals."""
    out: dict[tuple[tuple[str, Any], ...], ReceivedPoint] = {}
    for p in points:
        out[tuple(sorted(p.attributes.items()))] = p
    return out


def _config(traces_url: str, metrics: dict[str, Any]) -> dict[str, Any]:
    return {"version": 4, "opentelemetry": {"enabled": True, "endpoints": [
        {"type": "gen_ai", "endpoint": traces_url, "service_name": "hermes-test"}], "metrics": metrics}}


def test_book2_instruments_exported_over_otlp_http(tmp_path: Path) -> None:
    """BOOK-2: hermes.agent.tasks {outcome}, gen_ai.client.token.usage {gen_ai.token.type, ...} and
    gen_ai.client.operation.duration (s) reach a real receiver; traces still go to their endpoint."""
    with OTLPReceiver() as traces, OTLPMetricsReceiver() as metrics:
        config = _config(traces.endpoint, {"enabled": True, "endpoints": [{"endpoint": metrics.url}]})
        capture_export(config, tmp_path, session=lambda host: scripted_session(host, turns=3, tools=()))
        tasks = _latest(metrics.named("hermes.agent.tasks"))
        assert {k: p.value for k, p in tasks.items()} == {(("outcome", "success"),): 3.0}
        tokens = _latest(metrics.named("gen_ai.client.token.usage"))
        by_type = {dict(k)["gen_ai.token.type"]: p for k, p in tokens.items()}
        assert by_type["input"].value == 36.0 and by_type["input"].kind == "histogram"
        assert by_type["output"].value == 24.0 and by_type["output"].count == 3
        assert dict(next(iter(tokens)))["gen_ai.request.model"] == "test-model"
        assert {"gen_ai.operation.name", "gen_ai.provider.name"} <= set(dict(next(iter(tokens))))
        duration = list(_latest(metrics.named("gen_ai.client.operation.duration")).values())
        assert duration[0].unit == "s" and duration[0].count == 3 and duration[0].kind == "histogram"
        assert metrics.points[0].resource["service.name"] == "hermes-test"
        assert traces.spans  # the trace sink was not displaced


def test_book2_metrics_go_to_the_trace_endpoints_base_by_default(tmp_path: Path) -> None:
    """Without metrics endpoints, metrics go to /v1/metrics of the first trace endpoint's base URL."""
    with OTLPMetricsReceiver() as metrics:
        config = _config(metrics.url + "/v1/traces", {"enabled": True, "temporality": "delta"})
        capture_export(config, tmp_path, session=lambda host: scripted_session(host, turns=1, tools=()))
        assert metrics.named("hermes.agent.tasks")


def test_metrics_table_no_longer_refused_and_validated() -> None:
    """The metrics table was refused as "not implemented by this build"; now it is validated."""
    parsed = parse_otel_config({"enabled": True, "endpoints": [{"type": "gen_ai", "endpoint": "http://127.0.0.1:1"}],
                                "metrics": {"enabled": True}})
    assert parsed.enabled and not parsed.skipped
    with pytest.raises(ExportConfigError, match="temporality"):
        parse_metrics_config({"enabled": True, "temporality": "sometimes"})
    assert parse_metrics_config({"enabled": True, "endpoints": [{"endpoint": "http://h:4318/"}]}).endpoints[0].url == \
        "http://h:4318/v1/metrics"


def test_book2_memory_skill_and_cost_instruments(tmp_path: Path) -> None:
    """BOOK-2: hermes.agent.memory.writes {actor, change_type}, hermes.agent.skill.changes {change_type},
    hermes.agent.skill.runs {outcome} (no skill name unless include_skill_names) and hermes.agent.cost (USD)."""
    from tests.sinks.observability_store._support import memory_tool

    tool = memory_tool(tmp_path)
    response = {"id": "c", "object": "chat.completion", "model": "test-model", "usage": {
        "prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7, "cost_usd": 0.25},
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}]}

    def session(host: Any) -> None:
        with host.session() as s, s.turn("hi") as turn:
            host.skill_lifecycle("created", "pdf", provenance="agent_created")
            host.skill_lifecycle("patched", "pdf", reason="fix")
            turn.call_llm({"model": "test-model", "messages": [{"role": "user", "content": "hi"}]}, lambda r: response)
            turn.call_tool("memory", {"action": "add", "content": "likes tea", "target": "memory"}, tool)
            host.skill_lifecycle("loaded", "pdf")
            turn.call_tool("memory", {"action": "replace", "old_text": "likes tea", "content": "coffee"}, tool)
            turn.complete("done")

    for names in (False, True):
        with OTLPMetricsReceiver() as metrics:
            config = _config(metrics.url, {"enabled": True, "include_skill_names": names})
            capture_export(config, tmp_path / str(names), session=session)
            writes = {tuple(sorted(k)): p.value for k, p in _latest(metrics.named("hermes.agent.memory.writes")).items()}
            assert writes == {(("actor", "agent-reflection"), ("change_type", "add")): 1.0,
                              (("actor", "skill-execution"), ("change_type", "modify")): 1.0}
            changes = {dict(k)["change_type"]: p.value for k, p in _latest(metrics.named("hermes.agent.skill.changes")).items()}
            assert changes == {"create": 1.0, "refine": 1.0}
            runs = list(_latest(metrics.named("hermes.agent.skill.runs")))
            assert len(runs) == 1 and ("hermes.skill.name" in dict(runs[0])) is names
            cost = list(_latest(metrics.named("hermes.agent.cost")).values())
            assert cost[0].unit == "USD" and cost[0].value == 0.25


def test_genai_metrics_buckets_operations_and_attributes(tmp_path: Path) -> None:
    """Issue #30 / GenAI semantic conventions: the exported histograms carry the advised explicit bucket
    boundaries; gen_ai.client.operation.duration has chat, execute_tool and invoke_agent points; LLM points
    carry gen_ai.response.model and server.address / server.port of the provider's base URL."""
    from hermes_pipeline.sinks.otel.metrics_recorder import DURATION_BUCKETS, TOKEN_BUCKETS

    with OTLPReceiver() as traces, OTLPMetricsReceiver() as metrics:
        config = _config(traces.endpoint, {"enabled": True, "endpoints": [{"endpoint": metrics.url}]})
        capture_export(config, tmp_path, session=lambda host: scripted_session(host, turns=2, tools=("read_file",)))
        durations = _latest(metrics.named("gen_ai.client.operation.duration"))
        tokens = _latest(metrics.named("gen_ai.client.token.usage"))
    assert {p.bounds for p in durations.values()} == {DURATION_BUCKETS}
    assert {p.bounds for p in tokens.values()} == {tuple(float(b) for b in TOKEN_BUCKETS)}
    by_op = {dict(k)["gen_ai.operation.name"]: (dict(k), p) for k, p in durations.items()}
    assert set(by_op) == {"chat", "execute_tool", "invoke_agent"}
    assert by_op["execute_tool"][1].count == 2 and by_op["invoke_agent"][1].count == 2
    chat = by_op["chat"][0]
    assert chat["gen_ai.response.model"] == "test-model" and chat["gen_ai.request.model"] == "test-model"


def test_time_to_first_chunk_of_streamed_calls() -> None:
    """gen_ai.client.operation.time_to_first_chunk: from an LLM call's start to its first llm.chunk mark, once per
    call, with the call's attributes; an unstreamed call records none."""
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader

    from hermes_pipeline.export.events import ScopeEvent
    from hermes_pipeline.sinks.otel.metrics_recorder import DURATION_BUCKETS, MetricsRecorder

    reader = InMemoryMetricReader()
    recorder = MetricsRecorder(MeterProvider(metric_readers=[reader]).get_meter("t"))
    meta = {"hermes.session_id": "s", "hermes.provider": "openai", "hermes.base_url": "https://api.example/v1",
            "hermes.api_mode": "chat_completions"}

    starts: dict[int, ScopeEvent] = {}

    def scope(phase: str, uuid: int, ts: int) -> ScopeEvent:  # an end is a closed scope: it carries its start
        event = ScopeEvent("scope", phase, uuid, None, ts, "llm.call", "llm", ("streaming",), {"model_name": "m"},
                           {}, dict(meta), 0, 0, starts.pop(uuid, None))
        if phase == "start":
            starts[uuid] = event
        return event

    def chunk(uuid: int, parent: int, ts: int) -> ScopeEvent:
        return ScopeEvent("mark", None, uuid, parent, ts, "llm.chunk", None, (), None, {"delta": "x"}, dict(meta), 0, 0)

    for event in (scope("start", 1, 1_000_000), chunk(10, 1, 1_250_000), chunk(11, 1, 1_400_000),
                  scope("end", 1, 2_000_000), scope("start", 2, 3_000_000), scope("end", 2, 3_500_000)):
        recorder(event)
    data = reader.get_metrics_data()
    [metric] = [m for rm in data.resource_metrics for sm in rm.scope_metrics for m in sm.metrics
                if m.name == "gen_ai.client.operation.time_to_first_chunk"]
    [point] = metric.data.data_points
    assert point.count == 1 and point.sum == pytest.approx(0.25) and tuple(point.explicit_bounds) == DURATION_BUCKETS
    assert point.attributes["server.address"] == "api.example" and point.attributes["server.port"] == 443
    assert point.attributes["gen_ai.operation.name"] == "chat"


def test_one_rule_for_headers_and_service_name_across_traces_and_metrics(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/backends.md "Headers and service name": OTEL_SERVICE_NAME names the metrics resource as it names the
    trace resource; OTEL_EXPORTER_OTLP_HEADERS reaches no endpoint listed in the file (metrics included); a
    metrics endpoint derived from a trace endpoint sends that trace endpoint's own headers."""
    monkeypatch.setenv("OTEL_SERVICE_NAME", "svc-from-env")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-global=leak")
    monkeypatch.setenv("METRICS_TEST_TOKEN", "tok")
    with OTLPMetricsReceiver() as metrics:
        config = {"version": 4, "opentelemetry": {"enabled": True, "endpoints": [
            {"type": "gen_ai", "endpoint": metrics.url + "/v1/traces", "header_env": {"x-token": "METRICS_TEST_TOKEN"}}],
            "metrics": {"enabled": True}}}
        capture_export(config, tmp_path, session=lambda host: scripted_session(host, turns=1, tools=()))
    assert metrics.points and {p.resource["service.name"] for p in metrics.points} == {"svc-from-env"}
    assert metrics.headers and all(h.get("x-token") == "tok" and "x-global" not in h for h in metrics.headers)


def test_a_404_from_the_metrics_path_is_reported_once(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A backend answering 404 on /v1/metrics (MLflow): one warning naming the endpoint, not one per interval;
    the failures are counted; the SDK exporter's own per-export errors are not logged."""
    import logging

    from hermes_pipeline.sinks.otel.metrics_config import MetricsConfig, MetricsEndpoint
    from hermes_pipeline.sinks.otel.metrics_sink import OtelMetricsSink

    with OTLPMetricsReceiver(status=404) as metrics, caplog.at_level(logging.INFO):
        sink = OtelMetricsSink(MetricsConfig(enabled=True, endpoints=(MetricsEndpoint(metrics.url + "/v1/metrics"),)))
        sink.recorder.tasks.add(1, {"outcome": "success"})
        for _ in range(4):
            sink.flush(5)
        sink.shutdown(5)
    assert metrics.requests >= 4 and sink.stats()["metrics_export_failures"] >= 4
    warned = [r for r in caplog.records if "HTTP 404" in r.getMessage()]
    assert len(warned) == 1 and "opentelemetry.metrics.endpoints[0]" in warned[0].getMessage()
    assert not [r for r in caplog.records if r.name.startswith("opentelemetry.exporter")]
