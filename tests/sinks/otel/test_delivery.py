"""OTLP delivery (spec 04 §4.7-§4.9, §5): headers, Langfuse, retries, a collector that is down or stuck, bounded queues,
concurrent sessions, sampling and one shared scope plugin. Every server binds 127.0.0.1 and stops with its test."""

from __future__ import annotations

import base64
import io
import logging
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import pytest
from opentelemetry.sdk.trace.export import SpanExportResult

from hermes_pipeline import Engine, Host
from hermes_pipeline.demo import otlp_receiver
from hermes_pipeline.demo.otlp_receiver import OTLPReceiver, ReceivedSpan
from hermes_pipeline.export import MemoryDestination, ScopePlugin
from hermes_pipeline.host import run_in_context
from hermes_pipeline.sinks.atof import build_atof_sink
from hermes_pipeline.sinks.otel.langfuse import build_langfuse_sink
from hermes_pipeline.sinks.otel import build_otel_sink
from hermes_pipeline.sinks.otel.spans import SpanBuilder, sampling_fraction

from hermes_pipeline.testing import closed_port
from tests.sinks.atof._support import decode
from tests.sinks.otel._support import GatedExporter, PathReceiver, by_name, finish, otel_plugin, run_scripted_session
from hermes_pipeline.testing import chat_response

SESSION = {"trace_grouping": "session"}
"""One trace per session (FMT-56 as written): the delivery tests count the session span too."""

SECRET = "tok-SECRET-value-42"


def simple_session(engine: Engine, session_id: str = "s", turns: int = 1, tools: int = 2) -> list[str]:
    """Turns with one LLM call and ``tools`` tool calls each; returns what the tools gave back to the agent."""
    host = Host(engine, platform="cli", model="m", provider="openai", base_url="http://127.0.0.1:9/v1",
                api_mode="chat_completions")
    results = []
    with host.session(session_id) as session:
        for t in range(turns):
            with session.turn(f"turn {t}") as turn:
                turn.call_llm({"model": "m", "messages": [{"role": "user", "content": "hi"}]},
                              lambda r: chat_response("ok"))
                for i in range(tools):
                    results.append(turn.call_tool("echo", {"i": i}, lambda i: f"r{i}", tool_call_id=f"c{t}-{i}"))
                turn.complete("done")
    return results


def test_fmt_41_82_headers_and_header_env_arrive_and_are_never_logged(
        engine: Engine, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """FMT-41 / FMT-72 / FMT-82: static and env headers reach the collector; the process-global OTLP header
    variables do not; no log line, counter or description ever contains a header value, even on failures."""
    monkeypatch.setenv("OTLP_TOKEN", SECRET)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-global=leaked")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "x-global-traces=leaked")
    with caplog.at_level(logging.DEBUG), OTLPReceiver(responses=[503]) as receiver:
        plugin = otel_plugin(engine, receiver.endpoint, endpoint_keys={
            "headers": {"x-tenant": "acme"}, "header_env": {"authorization": "OTLP_TOKEN"}})
        simple_session(engine)
        spans = finish(plugin, receiver)
        report = repr(plugin.stats()) + repr(plugin.counters()) + repr(plugin.destinations())
    assert spans and receiver.requests >= 2
    for headers in receiver.headers:
        assert headers["authorization"] == SECRET and headers["x-tenant"] == "acme"
        assert headers["content-type"] == "application/x-protobuf"
        assert "x-global" not in headers and "x-global-traces" not in headers
    assert SECRET not in caplog.text and SECRET not in report
    assert plugin.counters()["otel.export_failures[0]"] == 1  # the 503, retried by the exporter


def test_fmt_78_503_then_200_is_retried_and_nothing_is_lost(engine: Engine) -> None:
    """FMT-78: a 5xx answer is retried with backoff inside timeout_millis; the batch then succeeds."""
    with OTLPReceiver(responses=[503]) as receiver:
        plugin = otel_plugin(engine, receiver.endpoint, endpoint_keys={**SESSION, "max_export_batch_size": 512,
                                                                       "scheduled_delay_millis": 5000})
        simple_session(engine)
        spans = finish(plugin, receiver)
    stats = plugin.stats()
    assert len(spans) == stats["exported"] == 5 and stats["dropped"] == 0
    assert stats["failed"] == 1 and receiver.requests == 2
    assert plugin.counters()["otel.spans_dropped[0]"] == 0


def test_fmt_75_77_langfuse_path_basic_auth_and_session_grouping(monkeypatch: pytest.MonkeyPatch) -> None:
    """FMT-75..77: spans go to <host>/api/public/otel/v1/traces with Basic auth from the environment and the
    ingestion-version header; every span (subagent included) has session.id; user.id only with the gate open."""
    monkeypatch.setenv("LF_PK", "pk-lf-test")
    monkeypatch.setenv("LF_SK", "sk-lf-test")
    for gate in (False, True):
        engine = Engine()
        with PathReceiver() as receiver:
            sink = build_langfuse_sink({"host": receiver.endpoint, "public_key_env": "LF_PK", "secret_key_env": "LF_SK",
                                        "scheduled_delay_millis": 50}, enable_full_payloads=gate)
            scope_plugin = ScopePlugin((sink,), deferred=True, toolsets={"read_file": "file"})
            engine.add_plugin(scope_plugin, name="scopes")
            run_scripted_session(engine)
            assert scope_plugin.flush(10) and scope_plugin.shutdown(10)
            assert sink.flush(10) and sink.shutdown(10)
            spans = list(receiver.spans)
        assert spans and set(receiver.paths) == {"/api/public/otel/v1/traces"}
        expected = "Basic " + base64.b64encode(b"pk-lf-test:sk-lf-test").decode()
        assert all(h["authorization"] == expected and h["x-langfuse-ingestion-version"] == "4"
                   for h in receiver.headers)
        assert {s.attributes["session.id"] for s in spans} == {"sess-main"}
        assert {s.trace_id for s in spans} == {by_name(spans, "invoke_agent hermes")[0].trace_id}
        with_user = {s.name for s in spans if s.attributes.get("user.id") == "user-7"}
        if gate:  # one trace per turn (FMT-56a): the turn is the invoke_agent root, there is no session span
            assert "invoke_agent hermes" in with_user and "execute_tool read_file" in with_user
        else:
            assert not with_user
        assert "langfuse gen_ai" in sink.destinations()[0] and "sk-lf" not in repr(sink.destinations())


def _warnings(caplog: pytest.LogCaptureFixture, text: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.levelno >= logging.WARNING and text in r.getMessage()]


def test_fmt_81_83_collector_down_is_counted_warned_once_and_harmless(
        engine: Engine, caplog: pytest.LogCaptureFixture) -> None:
    """FMT-81 / FMT-83: connection refused — the agent's results are unchanged, each failed request is counted,
    each lost span is counted, one warning per endpoint and failure kind, none from the OTLP library."""
    with closed_port() as port, caplog.at_level(logging.DEBUG):
        plugin = otel_plugin(engine, f"http://127.0.0.1:{port}", endpoint_keys={**SESSION, "timeout_millis": 300,
                                                                                   "export_timeout_millis": 300})
        first = simple_session(engine, "a")
        assert plugin.flush(10)
        second = simple_session(engine, "b")
        assert plugin.flush(10)
        assert plugin.shutdown(5)
    assert first == second == ["r0", "r1"]
    stats = plugin.stats()
    assert stats["exported"] == 0 and stats["dropped"] == 10 and stats["failed"] >= 2
    counters = plugin.counters()
    assert counters["otel.spans_dropped[0]"] == 10 and counters["otel.export_failures[0]"] == stats["failed"]
    delivery = _warnings(caplog, "delivery failed")
    assert len(delivery) == 1 and "opentelemetry.endpoints[0]" in delivery[0].getMessage()
    assert str(port) not in caplog.text  # no URL in our messages, and the library's own records are silenced
    assert not [r for r in caplog.records if r.name.startswith("opentelemetry.exporter")]


@contextmanager
def silent_collector() -> Iterator[int]:
    """A 127.0.0.1 port that accepts connections and never answers (a stuck collector); closed on exit."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    try:
        yield sock.getsockname()[1]
    finally:
        sock.close()


def test_fmt_84_85_flush_and_shutdown_honour_deadlines_with_a_stuck_collector(engine: Engine) -> None:
    """FMT-84 / FMT-85: a collector that never answers cannot hold flush or shutdown past their deadlines; the
    spans still in flight are dropped and counted; the agent's calls are not slowed by export."""
    with silent_collector() as port:
        plugin = otel_plugin(engine, f"http://127.0.0.1:{port}", endpoint_keys={**SESSION, "timeout_millis": 20_000})
        calls_started = time.monotonic()
        assert simple_session(engine) == ["r0", "r1"]
        calls = time.monotonic() - calls_started
        started = time.monotonic()
        assert plugin.flush(0.5) is False
        flushed = time.monotonic() - started
        started = time.monotonic()
        assert plugin.shutdown(0.5) is False
        shut = time.monotonic() - started
    assert flushed < 3.0 and shut < 3.0 and calls < 3.0
    assert plugin.counters()["otel.spans_dropped[0]"] == 5
    assert plugin.shutdown(0.1) is True  # idempotent


def test_fmt_81_full_span_queue_drops_newest_and_counts(engine: Engine, caplog: pytest.LogCaptureFixture) -> None:
    """FMT-81: max_queue_size bounds the completed spans waiting for the exporter; beyond it spans are dropped,
    counted in otel.spans_dropped and warned about once; every span is either exported or counted."""
    gate = threading.Event()
    exporter = GatedExporter(gate)
    with caplog.at_level(logging.WARNING):
        sink = build_otel_sink({"enabled": True, "endpoints": [
            {**SESSION, "type": "gen_ai", "endpoint": "http://127.0.0.1:9", "max_queue_size": 2,
             "max_export_batch_size": 1,
             "scheduled_delay_millis": 50}]}, exporter_factory=lambda endpoint, session: exporter)
        plugin = ScopePlugin((sink,), deferred=True, max_queue_size=10_000)  # only the span queue is small
        engine.add_plugin(plugin, name="scopes")
        simple_session(engine, tools=20)
        assert plugin.flush(10)
        assert sink.flush(0.2) is False  # stuck exporter: the barrier times out
        gate.set()
        assert sink.flush(10)
    stats = sink.stats()
    exported = sum(len(b) for b in exporter.batches)
    assert stats["exported"] == exported and stats["exported"] + stats["dropped"] == 23
    assert stats["dropped"] >= 20 and sink.counters()["otel.spans_dropped[0]"] == stats["dropped"]
    assert len(_warnings(caplog, "queue full")) == 1
    assert exporter.threads == {"hermes-export:opentelemetry.endpoints[0]"}
    assert plugin.shutdown(5) and sink.shutdown(5) and exporter.shut


def test_fmt_79_spans_are_built_and_exported_off_the_callers_thread(engine: Engine,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """FMT-79: the caller's thread only enqueues; spans are built on the exporter's event thread."""
    built_on: set[int] = set()
    original = SpanBuilder._build

    def spy(self: SpanBuilder, scope: Any, end: Any) -> Any:
        built_on.add(threading.get_ident())
        return original(self, scope, end)

    monkeypatch.setattr(SpanBuilder, "_build", spy)
    exporter = GatedExporter()
    plugin = otel_plugin(engine, "http://127.0.0.1:9", exporter_factory=lambda endpoint, session: exporter,
                         endpoint_keys=SESSION)
    simple_session(engine)
    assert plugin.flush(10) and plugin.shutdown(10)
    assert built_on and threading.get_ident() not in built_on
    assert sum(len(b) for b in exporter.batches) == 5


def test_fmt_21_56_concurrent_sessions_never_mix_traces(engine: Engine) -> None:
    """FMT-21 / FMT-56: sessions run from several threads each get their own trace with only their own spans."""
    sessions = 6
    with OTLPReceiver() as receiver:
        plugin = otel_plugin(engine, receiver.endpoint, endpoint_keys=SESSION)
        with ThreadPoolExecutor(max_workers=sessions) as pool:
            futures = [pool.submit(run_in_context(simple_session), engine, f"thread-{i}", 2, 3) for i in range(sessions)]
            assert all(f.result() == ["r0", "r1", "r2"] * 2 for f in futures)
        spans = finish(plugin, receiver)
    traces: dict[str, list[ReceivedSpan]] = {}
    for span in spans:
        traces.setdefault(span.trace_id, []).append(span)
    assert len(traces) == sessions
    for members in traces.values():
        assert len(members) == 1 + 2 + 2 + 6
        ids = {s.span_id for s in members}
        assert all(s.parent_span_id in ids for s in members if s.parent_span_id)
        owners = {s.attributes.get("gen_ai.conversation.id") for s in members if "gen_ai.conversation.id" in s.attributes}
        assert len(owners) == 1
        turn_ids = {s.attributes["hermes.turn.id"] for s in members if "hermes.turn.id" in s.attributes}
        assert len(turn_ids) == 2


def test_fmt_74_book_46_turn_sampling(engine: Engine) -> None:
    """FMT-74 / BOOK-46: the decision is per agent.run, deterministic in its UUID (hashed: see sampling_fraction);
    unsampled turns export nothing, session spans always; sampled turns carry hermes.sampling_rate."""
    with OTLPReceiver() as receiver:
        plugin = otel_plugin(engine, receiver.endpoint, top={"sampling_rate": 0.5}, endpoint_keys=SESSION)
        simple_session(engine, turns=40, tools=1)
        spans = finish(plugin, receiver)
    turns = [s for s in spans if s.attributes["hermes.span_kind"] == "agent.run"]
    sessions = [s for s in spans if s.attributes["hermes.span_kind"] == "session"]
    assert 0 < len(turns) < 40 and len(sessions) == 1
    for turn in turns:  # the turn's trajectory id is its own UUID: the decision hashes it, not the random trace id
        uuid = int(turn.attributes["hermes.trajectory_id"].replace("-", ""), 16)
        assert sampling_fraction(uuid) < 0.5 and turn.attributes["hermes.sampling_rate"] == 0.5
    turn_ids = {t.span_id for t in turns}
    others = [s for s in spans if s.attributes["hermes.span_kind"] not in ("agent.run", "session")]
    assert len(others) == 2 * len(turns) and all(s.parent_span_id in turn_ids for s in others)
    assert plugin.stats()["builder"]["sampled_out"] == 3 * (40 - len(turns))


def test_fmt_74_always_sample_errors_exports_failed_unsampled_turns(engine: Engine) -> None:
    """FMT-74: with sampling_rate 0 and always_sample_errors, only the turn with an error is exported (all of it)."""
    host = Host(engine, model="m", provider="openai")
    with OTLPReceiver() as receiver:
        plugin = otel_plugin(engine, receiver.endpoint, top={"sampling_rate": 0.0, "always_sample_errors": True},
                             endpoint_keys=SESSION)
        with host.session("s") as session:
            with session.turn("fine") as turn:
                turn.call_tool("echo", {}, lambda: "ok", tool_call_id="ok")
                turn.complete("done")
            with session.turn("broken") as turn:
                turn.call_tool("echo", {}, lambda: "ok", tool_call_id="ok2")

                def boom() -> str:
                    raise RuntimeError("x")

                turn.call_tool("boom", {}, boom, tool_call_id="bad")
                turn.complete("done")
        spans = finish(plugin, receiver)
    assert sorted(s.name for s in spans) == ["execute_tool boom", "execute_tool echo",
                                             "invoke_agent hermes", "invoke_agent hermes"]  # session, turn
    [exported] = [s for s in spans if s.attributes["hermes.span_kind"] == "agent.run"]
    assert exported.attributes["hermes.input.preview"] == "broken"
    assert plugin.stats()["builder"]["sampled_out"] == 2


def test_fmt_1_56_one_scope_plugin_atof_and_otel_agree_on_ids() -> None:
    """FMT-1 / FMT-56: ATOF and OTel listeners on one ScopePlugin see the same scopes: with ids = "uuid" span id =
    low 8 bytes of the ATOF uuid, trace id = the session scope UUID, parent span id = low 8 bytes of parent_uuid;
    with the default random ids the parent links are the same and the UUIDs stay in attributes (FMT-56b)."""
    engine = Engine()
    memory = MemoryDestination()
    atof = build_atof_sink({"enabled": True, "sinks": [{"type": "file"}]}, destinations={0: memory})
    with OTLPReceiver() as receiver:
        otel = build_otel_sink({"enabled": True, "ids": "uuid",
                                "endpoints": [{"type": "full", "endpoint": receiver.endpoint,
                                               "scheduled_delay_millis": 50, **SESSION}]})
        scope_plugin = ScopePlugin((atof, otel), deferred=True)
        engine.add_plugin(scope_plugin, name="scopes")
        simple_session(engine)
        assert scope_plugin.shutdown(10) and atof.shutdown(10) and otel.flush(10) and otel.shutdown(10)
        spans = list(receiver.spans)
    events = [e for e in decode(memory) if e["kind"] == "scope" and e["scope_category"] == "start"]
    assert len(events) == len(spans) == 5
    session_uuid = [e for e in events if e["name"] == "hermes.session"][0]["uuid"].replace("-", "")
    by_uuid = {s.attributes["hermes_pipeline.uuid"]: s for s in spans}
    for event in events:
        span = by_uuid[event["uuid"]]
        assert span.span_id == event["uuid"].replace("-", "")[16:] and span.trace_id == session_uuid
        assert span.parent_span_id == (event["parent_uuid"].replace("-", "")[16:] if event["parent_uuid"] else "")
        assert span.name == event["name"]


# ---------------------------------------------------------------------- the default OTLP/HTTP exporter

class BodyReceiver(OTLPReceiver):
    """:class:`OTLPReceiver` that also keeps each request's raw body (``bodies``)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.bodies: list[bytes] = []
        receiver = self

        class Handler(otlp_receiver._Handler):
            def do_POST(self) -> None:  # noqa: N802 - stdlib naming
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with receiver._lock:
                    receiver.bodies.append(body)
                self.rfile = io.BytesIO(body)  # the receiver decodes it as usual
                super().do_POST()

        self._server.RequestHandlerClass = Handler

    def __enter__(self) -> BodyReceiver:
        return self


def _endpoint(url: str, timeout_millis: int = 5000) -> Any:
    from hermes_pipeline.sinks.otel.config import parse_otel_config

    config = parse_otel_config({"enabled": True, "endpoints": [{"type": "gen_ai", "endpoint": url,
                                                                "timeout_millis": timeout_millis}]})
    return config.endpoints[0]


def _batch() -> list[Any]:
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope
    from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

    context = SpanContext(7, 9, is_remote=False, trace_flags=TraceFlags(1))
    return [ReadableSpan(name=f"execute_tool t{i}", context=context, resource=Resource({"service.name": "hermes"}),
                         attributes={"gen_ai.tool.name": f"t{i}", "n": i}, kind=SpanKind.INTERNAL,
                         status=Status(StatusCode.UNSET), start_time=1, end_time=2,
                         instrumentation_scope=InstrumentationScope("hermes_pipeline", "0.1.0")) for i in range(3)]


def _sdk_exporter(endpoint: Any, session: Any) -> Any:
    """The SDK's own ``OTLPSpanExporter`` configured as ``default_exporter`` configures its exporter."""
    from opentelemetry.exporter.otlp.proto.http import Compression
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter(endpoint=endpoint.url, timeout=endpoint.timeout_millis / 1000,
                            compression=Compression.NoCompression, session=session)


def test_fmt_72_default_exporter_sends_what_the_sdk_exporter_sends(monkeypatch: pytest.MonkeyPatch) -> None:
    """The default exporter (the direct encoder on the SDK's HTTP client, without the SDK's exporter module)
    posts the same bytes with the same headers as the SDK's ``OTLPSpanExporter`` on the same session; with the
    SDK's internal exporter metrics switched on, the SDK's exporter (with the direct encoder) is used instead."""
    from hermes_pipeline.sinks.otel import proto
    from hermes_pipeline.sinks.otel.exporter import ObservedSession, default_exporter

    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "x-global=leaked")
    with BodyReceiver() as receiver:
        endpoint = _endpoint(f"{receiver.endpoint}/v1/traces")
        direct = default_exporter(endpoint, ObservedSession({"x-tenant": "acme"}))
        assert isinstance(direct, proto.DirectOTLPSpanExporter)
        sdk = _sdk_exporter(endpoint, ObservedSession({"x-tenant": "acme"}))
        assert direct.export(_batch()) is True  # the direct exporter reports delivery as a bool
        assert sdk.export(_batch()) is SpanExportResult.SUCCESS
        for exporter in (direct, sdk):
            exporter.shutdown()
        monkeypatch.setenv("OTEL_PYTHON_SDK_INTERNAL_METRICS_ENABLED", "true")
        fallback = default_exporter(endpoint, ObservedSession({}))
        assert isinstance(fallback, proto.OTLPSpanExporter) and not isinstance(fallback, proto.DirectOTLPSpanExporter)
        assert fallback.export(_batch()) is SpanExportResult.SUCCESS
        fallback.shutdown()
    assert receiver.requests == 3 and receiver.bodies[0] == receiver.bodies[1] == receiver.bodies[2]
    assert receiver.headers[0] == receiver.headers[1]
    assert receiver.headers[0]["content-type"] == "application/x-protobuf"
    assert receiver.headers[0]["user-agent"].startswith("OTel-OTLP-Exporter-Python/")
    assert receiver.headers[0]["x-tenant"] == "acme" and "x-global" not in receiver.headers[0]
    assert [s.name for s in receiver.spans] == ["execute_tool t0", "execute_tool t1", "execute_tool t2"] * 3


def test_fmt_72_default_exporter_applies_the_tls_variables_as_the_sdk_exporter_does(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """``OTEL_EXPORTER_OTLP[_TRACES]_CERTIFICATE`` / ``CLIENT_CERTIFICATE`` / ``CLIENT_KEY`` set the session's
    ``verify`` and ``cert`` exactly as for the SDK's exporter (traces variables first)."""
    import requests

    from hermes_pipeline.sinks.otel.exporter import default_exporter

    endpoint = _endpoint("https://collector.example:4318/v1/traces")
    cases: list[dict[str, str]] = [
        {},
        {"OTEL_EXPORTER_OTLP_CERTIFICATE": "/ca/all.pem"},
        {"OTEL_EXPORTER_OTLP_CERTIFICATE": "/ca/all.pem", "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE": "/ca/traces.pem",
         "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": "/c/cert.pem"},
        {"OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE": "/c/cert.pem", "OTEL_EXPORTER_OTLP_CLIENT_KEY": "/c/key.pem"},
    ]
    for case in cases:
        for name in ("CERTIFICATE", "CLIENT_CERTIFICATE", "CLIENT_KEY"):
            monkeypatch.delenv(f"OTEL_EXPORTER_OTLP_{name}", raising=False)
            monkeypatch.delenv(f"OTEL_EXPORTER_OTLP_TRACES_{name}", raising=False)
        for name, value in case.items():
            monkeypatch.setenv(name, value)
        ours, theirs = requests.Session(), requests.Session()
        default_exporter(endpoint, ours).shutdown()
        _sdk_exporter(endpoint, theirs).shutdown()
        assert (ours.verify, ours.cert) == (theirs.verify, theirs.cert), case
    assert (ours.verify, ours.cert) == (True, ("/c/cert.pem", "/c/key.pem"))


def test_fmt_72_78_default_exporter_refuses_after_shutdown_and_oversized_batches_and_encodes_links() -> None:
    """After ``shutdown`` nothing is sent (FAILURE, FMT-78); a batch above the request size limit is dropped
    unsent, as the SDK's exporter drops it; a batch with span links goes through the SDK's encoder."""
    from opentelemetry.trace import Link, SpanContext, TraceFlags

    from hermes_pipeline.sinks.otel.exporter import ObservedSession, default_exporter

    with OTLPReceiver() as receiver:
        endpoint = _endpoint(f"{receiver.endpoint}/v1/traces")
        exporter = default_exporter(endpoint, ObservedSession({}))
        linked = _batch()[0]
        linked._links = (Link(SpanContext(7, 10, is_remote=False, trace_flags=TraceFlags(1))),)
        assert exporter.export([linked]) is True
        exporter._max_request_size = 10
        assert exporter.export(_batch()) is False
        exporter.shutdown()
        assert exporter.export(_batch()) is False
        exporter.shutdown()  # a second call only warns
    assert receiver.requests == 1 and [s.name for s in receiver.spans] == ["execute_tool t0"]
