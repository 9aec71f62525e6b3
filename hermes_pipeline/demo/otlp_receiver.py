"""A small OTLP/HTTP receiver on 127.0.0.1: decodes what a real OTLP exporter sends.

Used by the demo (so traces have somewhere to go without a collector) and by the tests (so the
real ``opentelemetry-exporter-otlp-proto-http`` output is decoded with ``opentelemetry-proto``,
not trusted). ``POST /v1/traces`` takes ``application/x-protobuf`` bodies, gzip or not, and keeps
each span as a plain :class:`ReceivedSpan`. ``responses`` scripts failure codes for failure
injection; ``discard=True`` only counts (for benchmarks).
"""

from __future__ import annotations

import gzip
import ipaddress
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class ReceivedSpan:
    """One decoded span."""

    name: str
    kind: int
    trace_id: str
    span_id: str
    parent_span_id: str
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    resource: dict[str, Any]
    status_code: int
    status_message: str
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    scope_name: str = ""


def _value(any_value: Any) -> Any:
    kind = any_value.WhichOneof("value")
    if kind is None:
        return None
    value = getattr(any_value, kind)
    if kind == "array_value":
        return [_value(v) for v in value.values]
    if kind == "kvlist_value":
        return {kv.key: _value(kv.value) for kv in value.values}
    if kind == "bytes_value":
        return bytes(value)
    return value


def _attrs(items: Iterable[Any]) -> dict[str, Any]:
    return {kv.key: _value(kv.value) for kv in items}


def decode_traces(body: bytes) -> list[ReceivedSpan]:
    """Decode an OTLP ``ExportTraceServiceRequest`` protobuf into spans."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    spans = []
    for resource_spans in request.resource_spans:
        resource = _attrs(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                spans.append(ReceivedSpan(
                    name=span.name, kind=int(span.kind), trace_id=span.trace_id.hex(), span_id=span.span_id.hex(),
                    parent_span_id=span.parent_span_id.hex(), start_ns=span.start_time_unix_nano,
                    end_ns=span.end_time_unix_nano, attributes=_attrs(span.attributes), resource=resource,
                    status_code=int(span.status.code), status_message=span.status.message,
                    events=[(e.name, _attrs(e.attributes)) for e in span.events],
                    scope_name=scope_spans.scope.name,
                ))
    return spans


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        return None

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        owner = self.server.owner
        status = owner._next_status()
        with owner._lock:
            owner.requests += 1
            owner.headers.append({k.lower(): v for k, v in self.headers.items()})
        if status == 200 and self.path.rstrip("/").endswith("/v1/traces"):
            if self.headers.get("Content-Encoding", "").lower() == "gzip":
                body = gzip.decompress(body)
            if owner.discard:
                with owner._lock:
                    owner.bytes_received += len(body)
            else:
                try:
                    spans = decode_traces(body)
                except Exception:
                    status = 400
                else:
                    with owner._lock:
                        owner.spans.extend(spans)
        self.send_response(status)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128
    owner: OTLPReceiver


class OTLPReceiver:
    """An OTLP/HTTP receiver bound to a loopback address; a context manager.

    Args:
        responses: HTTP status codes to answer with, in order, before answering 200 (e.g.
            ``[503, 503]`` for two failures then success). ``None`` always answers 200.
        discard: count bytes only, decode nothing (benchmarks).
    """

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0, responses: Iterable[int] | None = None,
                 discard: bool = False) -> None:
        if not ipaddress.ip_address(host).is_loopback:
            raise ValueError(f"OTLPReceiver binds to loopback addresses only, not {host!r}")
        self.discard = discard
        self.spans: list[ReceivedSpan] = []
        self.headers: list[dict[str, str]] = []
        self.requests = 0
        self.bytes_received = 0
        self._responses = list(responses or [])
        self._lock = threading.Lock()
        self._server = _Server((host, port), _Handler)
        self._server.owner = self
        self._thread = threading.Thread(target=self._server.serve_forever, name="otlp-receiver", daemon=True)
        self._thread.start()

    @property
    def endpoint(self) -> str:
        """Base URL, e.g. ``http://127.0.0.1:4318``; traces go to ``{endpoint}/v1/traces``."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}" if isinstance(host, str) else f"http://{host.decode()}:{port}"

    def _next_status(self) -> int:
        with self._lock:
            return self._responses.pop(0) if self._responses else 200

    def spans_named(self, prefix: str) -> list[ReceivedSpan]:
        """Received spans whose name starts with ``prefix``."""
        with self._lock:
            return [s for s in self.spans if s.name.startswith(prefix)]

    def close(self) -> None:
        """Stop serving and release the port."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> OTLPReceiver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
