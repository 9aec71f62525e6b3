"""OTLP wire details the SDK's HTTP client does not have (issue #30): the OTLP/JSON encoding of a trace request
(``transport = "http_json"``) and a per-request timeout below the export's, so that a timed-out request is
retried with the client's backoff instead of using up the whole export."""

from __future__ import annotations

from typing import Any, Final

__all__ = ["AttemptTimeout", "protobuf_to_otlp_json"]


_ID_FIELDS: Final = frozenset({"traceId", "spanId", "parentSpanId"})


def _hex_ids(node: Any) -> Any:
    """OTLP/JSON writes trace and span ids as hex strings, where the protobuf JSON mapping writes base64."""
    import base64

    if isinstance(node, dict):
        return {k: (base64.b64decode(v).hex() if k in _ID_FIELDS and isinstance(v, str) else _hex_ids(v))
                for k, v in node.items()}
    if isinstance(node, list):
        return [_hex_ids(v) for v in node]
    return node


def protobuf_to_otlp_json(data: bytes) -> bytes:
    """An ``ExportTraceServiceRequest`` in the OTLP/JSON encoding (``transport = "http_json"``): the protobuf JSON
    mapping with lowerCamelCase keys, enums as integers, and hex trace / span ids, as the OTLP specification
    asks."""
    import json

    from google.protobuf import json_format
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    request = ExportTraceServiceRequest()
    request.ParseFromString(data)
    tree = json_format.MessageToDict(request, use_integers_for_enums=True)
    return json.dumps(_hex_ids(tree), separators=(",", ":")).encode("utf-8")


class AttemptTimeout:
    """The SDK transport with each request's timeout capped: the SDK client gives a request all the export's
    remaining time, so a timed-out request could never be retried (issue #30: a slow first export to a fresh
    backend was dropped although the backend stored it)."""

    def __init__(self, transport: Any, attempt: float) -> None:
        self._transport = transport
        self._attempt = attempt

    def request(self, method: str, url: str, *, headers: Any = None, timeout: float | None = None,
                data: bytes | None = None) -> Any:
        limit = self._attempt if timeout is None else min(timeout, self._attempt)
        return self._transport.request(method, url, headers=headers, timeout=limit, data=data)

    def is_connection_error(self, exception: Exception | None) -> bool:
        return bool(self._transport.is_connection_error(exception))

    def close(self) -> None:
        self._transport.close()
