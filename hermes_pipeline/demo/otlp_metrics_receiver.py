"""A loopback OTLP/HTTP receiver for ``/v1/metrics``: decodes each ``ExportMetricsServiceRequest``
(protobuf) into :class:`ReceivedPoint` records, for tests and demos (binds 127.0.0.1 only)."""

from __future__ import annotations

import http.server
import threading
from dataclasses import dataclass
from typing import Any

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest


@dataclass(frozen=True)
class ReceivedPoint:
    """One data point: the metric's name and unit, its attributes, and its value (sum or count/sum)."""

    name: str
    unit: str
    kind: str
    attributes: dict[str, Any]
    value: float
    count: int
    resource: dict[str, Any]
    bounds: tuple[float, ...] = ()
    """A histogram's explicit bucket boundaries."""


def _value(any_value: Any) -> Any:
    field = any_value.WhichOneof("value")
    return getattr(any_value, field) if field else None


def _attrs(items: Any) -> dict[str, Any]:
    return {kv.key: _value(kv.value) for kv in items}


def decode(body: bytes) -> list[ReceivedPoint]:
    """The points of one request body."""
    request = ExportMetricsServiceRequest()
    request.ParseFromString(body)
    points: list[ReceivedPoint] = []
    for rm in request.resource_metrics:
        resource = _attrs(rm.resource.attributes)
        for sm in rm.scope_metrics:
            for metric in sm.metrics:
                kind = metric.WhichOneof("data")
                if kind is None:  # a metric without data (only its name and unit) has no point
                    continue
                data = getattr(metric, kind)
                for p in data.data_points:
                    if kind == "histogram":
                        points.append(ReceivedPoint(metric.name, metric.unit, kind, _attrs(p.attributes), p.sum,
                                                    p.count, resource, tuple(p.explicit_bounds)))
                    elif kind in ("exponential_histogram", "summary"):  # a sum and a count, no single value
                        points.append(ReceivedPoint(metric.name, metric.unit, kind, _attrs(p.attributes), p.sum,
                                                    p.count, resource))
                    else:
                        value = p.as_double if p.WhichOneof("value") == "as_double" else p.as_int
                        points.append(ReceivedPoint(metric.name, metric.unit, kind, _attrs(p.attributes),
                                                    float(value), 1, resource))
    return points


class OTLPMetricsReceiver:
    """``with OTLPMetricsReceiver() as r:`` serves ``r.url`` until the block ends; ``r.points`` fills up."""

    def __init__(self, status: int = 200) -> None:
        self.points: list[ReceivedPoint] = []
        self.requests = 0
        self.status = status
        """What ``/v1/metrics`` answers (e.g. 404: a backend without OTLP metrics)."""
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - stdlib naming
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                ok = self.path == "/v1/metrics"
                if ok:
                    decoded = decode(body) if receiver.status == 200 else []
                    with receiver._lock:
                        receiver.points.extend(decoded)
                        receiver.requests += 1
                        receiver.headers.append({k.lower(): v for k, v in self.headers.items()})
                self.send_response(receiver.status if ok else 200)  # other signals are accepted and ignored
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The base URL (``/v1/metrics`` is the path it answers)."""
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> OTLPMetricsReceiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def named(self, name: str) -> list[ReceivedPoint]:
        """The points of one metric, as last exported (cumulative: the latest request holds the totals)."""
        with self._lock:
            return [p for p in self.points if p.name == name]
