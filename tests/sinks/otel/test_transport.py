"""OTLP transport settings as the SDK's exporters have them (issue #30 deliverable 3; spec 04 FMT-72, FMT-78):
gzip compression (a key and the variables), the specification's 10 s request timeout, retry with exponential
backoff on 429/502/503/504 and on timeouts within ``export_timeout_millis`` (``OTEL_BSP_EXPORT_TIMEOUT``),
``Retry-After`` honoured. Every test talks to a real OTLP/HTTP receiver on 127.0.0.1."""

from __future__ import annotations

import gzip
import threading
from typing import Any

from hermes_pipeline import Engine, Host
from hermes_pipeline.demo import otlp_receiver
from hermes_pipeline.demo.otlp_receiver import OTLPReceiver, decode_traces
from hermes_pipeline.sinks.otel.config import parse_otel_config
from hermes_pipeline.sinks.otel.env import read_otlp_env

from tests.sinks.otel._support import finish, otel_plugin


class ScriptedReceiver(OTLPReceiver):
    """A receiver that answers the first requests from a script, then 200, and keeps raw bodies and headers.

    ``script`` items: ``(status, retry_after)`` to answer at once, or ``"stall"`` to hold the request until the
    client gave up (``release`` is set when the test ends, so the server thread never outlives it).
    """

    def __init__(self, script: list[Any]) -> None:
        super().__init__()
        self.script = list(script)
        self.bodies: list[bytes] = []
        self.release = threading.Event()
        receiver = self

        class Handler(otlp_receiver._Handler):
            def do_POST(self) -> None:  # noqa: N802 - stdlib naming
                with receiver._lock:
                    step = receiver.script.pop(0) if receiver.script else None
                    receiver.requests += 1
                    receiver.headers.append({k.lower(): v for k, v in self.headers.items()})
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                if step == "stall":
                    receiver.release.wait(10)  # a slow backend: the client's attempt timeout fires first
                    return
                if step is not None:
                    status, retry_after = step
                    self.send_response(status)
                    if retry_after is not None:
                        self.send_header("Retry-After", retry_after)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if self.headers.get("Content-Encoding", "").lower() == "gzip":
                    body = gzip.decompress(body)
                with receiver._lock:
                    receiver.bodies.append(body)
                    receiver.spans.extend(decode_traces(body))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self._server.RequestHandlerClass = Handler

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        super().__exit__(*exc)


def turns(engine: Engine, count: int = 3) -> None:
    host = Host(engine, platform="api", model="m", provider="openai")
    with host.session() as session:
        for index in range(count):
            with session.turn(f"q{index}") as turn:
                turn.complete("a")


def test_fmt_78_gzip_on_the_wire_from_the_key_and_the_variable(monkeypatch: Any) -> None:
    """compression = "gzip" (or OTEL_EXPORTER_OTLP_COMPRESSION / ..._TRACES_COMPRESSION = gzip): the request
    says Content-Encoding: gzip and its body is a gzip stream of a decodable ExportTraceServiceRequest."""
    for keys, variables in (({"compression": "gzip"}, {}), ({}, {"OTEL_EXPORTER_OTLP_COMPRESSION": "gzip"}),
                            ({}, {"OTEL_EXPORTER_OTLP_COMPRESSION": "none",
                                  "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION": "GZIP"})):
        for name, value in variables.items():
            monkeypatch.setenv(name, value)
        engine = Engine()
        with ScriptedReceiver([]) as receiver:
            plugin = otel_plugin(engine, receiver.endpoint, endpoint_keys=keys)
            turns(engine)
            spans = finish(plugin, receiver)
        assert len(spans) == 3 and receiver.headers
        assert all(h.get("content-encoding") == "gzip" for h in receiver.headers)
        for name in variables:
            monkeypatch.delenv(name)
    engine = Engine()
    with ScriptedReceiver([]) as receiver:  # the default: no compression
        plugin = otel_plugin(engine, receiver.endpoint)
        turns(engine)
        finish(plugin, receiver)
    assert all("content-encoding" not in h for h in receiver.headers)
    assert decode_traces(receiver.bodies[0])


def test_fmt_78_retry_on_503_honours_retry_after_and_drops_nothing() -> None:
    """A backend answering 503 (Retry-After: 0) twice, then 429, then 200: every span arrives, none is counted as
    dropped; the failed requests are counted as export failures."""
    engine = Engine()
    with ScriptedReceiver([(503, "0"), (503, "0"), (429, "0")]) as receiver:
        plugin = otel_plugin(engine, receiver.endpoint)
        turns(engine, 4)
        spans = finish(plugin, receiver)
    stats = plugin.stats()
    # three answers refused, then each batch accepted once (the spans may leave in more than one batch)
    assert len(spans) == 4 and receiver.requests == 3 + len(receiver.bodies)
    assert stats["dropped"] == 0 and stats["failed"] == 3


def test_fmt_78_a_timed_out_request_is_retried_within_the_export_timeout() -> None:
    """A request the backend holds past timeout_millis is retried (backoff) while export_timeout_millis lasts:
    the spans arrive, nothing is dropped."""
    engine = Engine()
    with ScriptedReceiver(["stall"]) as receiver:
        plugin = otel_plugin(engine, receiver.endpoint, endpoint_keys={"timeout_millis": 300,
                                                                       "export_timeout_millis": 3000})
        turns(engine, 2)
        spans = finish(plugin, receiver)
    assert len(spans) == 2 and receiver.requests == 2 and plugin.stats()["dropped"] == 0


def test_fmt_73_timeouts_and_compression_defaults_and_variables() -> None:
    """The specification's defaults (10 s per request, 30 s per export, no compression) and the variables that
    set them; a bad value is ignored with a warning naming the variable; the file's keys win."""
    [endpoint] = parse_otel_config({"enabled": True, "endpoints": [{"type": "gen_ai", "endpoint": "http://h"}]},
                                   env=read_otlp_env({})).endpoints
    assert (endpoint.timeout_millis, endpoint.export_timeout_millis, endpoint.compression) == (10_000, 30_000, "none")
    env = read_otlp_env({"OTEL_EXPORTER_OTLP_TIMEOUT": "2500", "OTEL_BSP_EXPORT_TIMEOUT": "7000",
                         "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION": "gzip"})
    [endpoint] = parse_otel_config({"enabled": True, "endpoints": [{"type": "gen_ai", "endpoint": "http://h"}]},
                                   env=env).endpoints
    assert (endpoint.timeout_millis, endpoint.export_timeout_millis, endpoint.compression) == (2500, 7000, "gzip")
    [endpoint] = parse_otel_config({"enabled": True, "endpoints": [{
        "type": "gen_ai", "endpoint": "http://h", "timeout_millis": 100, "export_timeout_millis": 200,
        "compression": "none"}]}, env=env).endpoints
    assert (endpoint.timeout_millis, endpoint.export_timeout_millis, endpoint.compression) == (100, 200, "none")
    bad = read_otlp_env({"OTEL_BSP_EXPORT_TIMEOUT": "soon", "OTEL_EXPORTER_OTLP_COMPRESSION": "zstd"})
    assert (bad.export_timeout_millis, bad.compression) == (30_000, "none")
    assert any("OTEL_BSP_EXPORT_TIMEOUT" in w for w in bad.warnings)
    assert any("OTEL_EXPORTER_OTLP_COMPRESSION" in w for w in bad.warnings)


class JSONReceiver(ScriptedReceiver):
    """Keeps the raw request bodies of an OTLP/HTTP JSON exporter (the protobuf decoding is not attempted)."""

    def __init__(self) -> None:
        super().__init__([])
        receiver = self

        class Handler(otlp_receiver._Handler):
            def do_POST(self) -> None:  # noqa: N802 - stdlib naming
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with receiver._lock:
                    receiver.headers.append({k.lower(): v for k, v in self.headers.items()})
                    receiver.bodies.append(body)
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self._server.RequestHandlerClass = Handler


def test_fmt_71_http_json_transport_from_the_key_and_the_variable(monkeypatch: Any) -> None:
    """transport = "http_json" (or OTEL_EXPORTER_OTLP_PROTOCOL=http/json for the env endpoint): Content-Type
    application/json, lowerCamelCase OTLP/JSON with hex trace and span ids that name the same spans as the
    protobuf encoding would."""
    import json

    from google.protobuf import json_format
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    for keys, variables in (({"transport": "http_json"}, {}), ({}, {"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"})):
        engine = Engine()
        with JSONReceiver() as receiver:
            if variables:
                monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint)
                monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
                from hermes_pipeline.sinks.otel import build_otel_plugin

                plugin = build_otel_plugin({"enabled": True})
                engine.add_plugin(plugin, name="otel")
            else:
                plugin = otel_plugin(engine, receiver.endpoint, endpoint_keys=keys)
            turns(engine, 2)
            finish(plugin, receiver)
        assert receiver.bodies and all(h["content-type"] == "application/json" for h in receiver.headers)
        spans = []
        for body in receiver.bodies:
            tree = json.loads(body)
            for rs in tree["resourceSpans"]:
                for ss in rs["scopeSpans"]:
                    spans.extend(ss["spans"])
        assert len(spans) == 2
        for span in spans:
            assert len(span["traceId"]) == 32 and int(span["traceId"], 16)
            assert len(span["spanId"]) == 16 and span["kind"] in (1, 3)
        # the same document with base64 ids is a valid protobuf JSON request
        import base64

        first = json.loads(receiver.bodies[0])
        for rs in first["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                for span in ss["spans"]:
                    for key in ("traceId", "spanId", "parentSpanId"):
                        if key in span:
                            span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
        assert json_format.ParseDict(first, ExportTraceServiceRequest()).resource_spans
        for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL"):
            monkeypatch.delenv(name, raising=False)


def test_fmt_71_grpc_transport_to_a_real_grpc_receiver(monkeypatch: Any) -> None:
    """transport = "grpc" (the grpc extra; also OTEL_EXPORTER_OTLP_PROTOCOL=grpc for the env endpoint): spans reach
    an in-process OTLP gRPC TraceService on 127.0.0.1 with the endpoint's headers as metadata, never the
    process-global header variables."""
    from concurrent import futures

    import grpc
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

    class Collector(trace_service_pb2_grpc.TraceServiceServicer):
        def __init__(self) -> None:
            self.requests: list[Any] = []
            self.metadata: list[dict[str, str]] = []

        def Export(self, request: Any, context: Any) -> Any:  # noqa: N802 - gRPC naming
            self.requests.append(request)
            self.metadata.append({k: v for k, v in context.invocation_metadata()})
            return trace_service_pb2.ExportTraceServiceResponse()

    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-global=leak")
    collector = Collector()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(collector, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        engine = Engine()
        plugin = otel_plugin(engine, f"http://127.0.0.1:{port}", endpoint_keys={
            "transport": "grpc", "headers": {"x-tenant": "acme"}, "compression": "gzip"})
        turns(engine, 3)
        assert plugin.flush(15) and plugin.shutdown(15)
        spans = [s for r in collector.requests for rs in r.resource_spans for ss in rs.scope_spans for s in ss.spans]
        assert len(spans) == 3 and plugin.stats()["dropped"] == 0
        assert all(m.get("x-tenant") == "acme" and "x-global" not in m for m in collector.metadata)
        assert plugin.sink._routes[0].destination.exporter._compression == grpc.Compression.Gzip  # compression = "gzip"
        env = read_otlp_env({"OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{port}",
                             "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"})
        [endpoint] = parse_otel_config({"enabled": True}, env=env).endpoints
        assert (endpoint.transport, endpoint.url) == ("grpc", f"http://127.0.0.1:{port}")
    finally:
        server.stop(0)
