"""OTLP trace requests as protobuf bytes, written directly (spec 04 FMT-55..FMT-59, FMT-72).

Over 400 lines on purpose: the encoder and the exporter assembled from the SDK's parts are held byte-identical
to the SDK's together, and a test compares them as one.

The OTLP/HTTP exporter of opentelemetry-sdk turns each span into protobuf message objects,
attribute by attribute, before serializing them; with the twenty-odd attributes of a GenAI span
that is most of the CPU a span costs to export. :func:`encode_trace_request` writes the same
``ExportTraceServiceRequest`` wire bytes straight from the span objects (the sink's
:class:`~.record.SpanRecord`, or the SDK's ``ReadableSpan``, which read alike): the same grouping
(resources, then instrumentation scopes, in first-seen order), the same fields in field-number
order, proto3 defaults left out exactly where the SDK's encoder leaves them out. A test holds the
output byte-identical to the SDK encoder's.

Two exporters send these bytes:

- :class:`DirectOTLPSpanExporter` (the sink's default) takes span records and is assembled from the
  SDK exporter's own parts: its HTTP client (retries with backoff for 429/502/503/504 and connection
  errors inside the timeout, the shutdown that aborts a backoff), its transport (the ``requests``
  session, TLS certificate variables), its headers and its request size limit, with the same log
  records. It loads neither the SDK's trace module nor its ``OTLPSpanExporter`` module (protobuf and
  the generated OTLP message classes): the SDK encoder is imported only for a batch this one does
  not cover.
- :class:`FastOTLPSpanExporter` is the SDK's ``OTLPSpanExporter`` with this encoder (for an SDK
  without the parts above, or with the SDK's internal exporter metrics switched on); it is an SDK
  ``SpanExporter`` and receives ``ReadableSpan`` objects. It and ``OTLPSpanExporter`` load the SDK
  exporter module on first use (module attributes).

Whatever the encoder does not cover (span links, integers beyond 64 bits, text that is not valid
UTF-8) is encoded by the SDK's own encoder.
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Union, cast

from .record import SpanRecord, to_readable
from .wire import AttemptTimeout, protobuf_to_otlp_json

if TYPE_CHECKING:
    import requests
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

AnySpan = Union[SpanRecord, "ReadableSpan"]
"""What the encoder reads: the sink's span records or the SDK's finished spans."""

__all__ = ["DirectOTLPSpanExporter", "FastOTLPSpanExporter", "NotEncodable", "direct_exporter_available",
           "encode_trace_request"]

_pack_double: Final = struct.Struct("<d").pack
_pack_u64: Final = struct.Struct("<Q").pack
_pack_u32: Final = struct.Struct("<I").pack
_HAS_IS_REMOTE: Final = 0x100
_IS_REMOTE: Final = 0x200
_INT64_MIN: Final = -(1 << 63)
_INT64_MAX: Final = (1 << 63) - 1
_U64: Final = (1 << 64) - 1
_KEY_CACHE_MAX: Final = 4096


class NotEncodable(Exception):
    """The batch holds something only the SDK's encoder handles (the caller falls back to it)."""


def _varint(value: int) -> bytes:
    if value < 0x80:
        return bytes((value,))
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _head(tag: bytes, n: int) -> bytes:
    """The tag and length of a length-delimited field whose payload is ``n`` bytes long."""
    return tag + (bytes((n,)) if n < 0x80 else _varint(n))


def _field(tag: bytes, payload: bytes) -> bytes:
    """A length-delimited field: tag, length, payload (``_head(tag, len(payload)) + payload``, inlined: the encoder's
    most frequent call)."""
    n = len(payload)
    return tag + (bytes((n,)) if n < 0x80 else _varint(n)) + payload


def _text(value: str) -> bytes:
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError:
        raise NotEncodable("text that is not valid UTF-8") from None


def _any_value(value: Any) -> bytes:
    """An ``AnyValue`` message body, with the type order of the SDK's ``_encode_value``."""
    if value is None:
        return b""
    if isinstance(value, bool):
        return b"\x10\x01" if value else b"\x10\x00"
    if isinstance(value, str):
        return _field(b"\x0a", _text(value))
    if isinstance(value, int):
        if not _INT64_MIN <= value <= _INT64_MAX:
            raise NotEncodable("integer beyond 64 bits")
        return b"\x18" + _varint(value & _U64)
    if isinstance(value, float):
        return b"\x21" + _pack_double(value)
    if isinstance(value, bytes):
        return _field(b"\x3a", value)
    if isinstance(value, Sequence):
        return _field(b"\x2a", b"".join([_field(b"\x0a", _any_value(item)) for item in value]))
    if isinstance(value, Mapping):
        return _field(b"\x32", b"".join([_field(b"\x0a", _key_value(str(k), v)) for k, v in value.items()]))
    raise NotEncodable(f"attribute value of type {type(value).__name__}")


_key_cache: dict[str, bytes] = {}


def _key_value(key: str, value: Any) -> bytes:
    """A ``KeyValue`` message body (keys repeat on every span: their encoding is cached)."""
    head = _key_cache.get(key)
    if head is None:
        head = _field(b"\x0a", _text(key))
        if len(_key_cache) >= _KEY_CACHE_MAX:
            _key_cache.clear()
        _key_cache[key] = head
    if type(value) is str:  # the common case, inlined: AnyValue{string_value} inside KeyValue.value
        try:
            data = value.encode("utf-8")
        except UnicodeEncodeError:
            raise NotEncodable("text that is not valid UTF-8") from None
        n = len(data)
        if n < 126:
            return head + bytes((0x12, n + 2, 0x0A, n)) + data
        inner = b"\x0a" + _varint(n) + data
        return head + b"\x12" + _varint(len(inner)) + inner
    return head + _field(b"\x12", _any_value(value))


_fields: dict[bytes, dict[tuple[str, str | int], bytes]] = {}
"""Encoded attribute fields of text and integer values that recur (operation names, statuses, the ids of a session or
a turn, sizes): field tag -> ``(key, value)`` -> the field's bytes. The key is the pair an attribute mapping's
``items()`` yields, so a mapping whose values are all ``str`` or ``int`` is looked up whole in one C-level ``map``.
Only values of exactly those two types are held, and only such values look here: ``1`` equals ``True`` and ``1.0``
in Python, but none of those is ever taken for another."""
_bool_fields: dict[tuple[bytes, str, bool], bytes] = {}
"""Encoded attribute fields of boolean values, by ``(tag, key, value)``; only a ``bool`` looks here."""
_LOOKED_UP_WHOLE: Final = frozenset({str, int})
"""The value types of a mapping looked up whole in :data:`_fields`."""
_CACHE_MAX: Final = 8192
"""Fields both tables hold before they are emptied."""
_cached = [0]


def _remember(tag: bytes, key: str, value: Any, kind: type, field: bytes) -> None:
    if _cached[0] >= _CACHE_MAX:
        _fields.clear()
        _bool_fields.clear()
        _cached[0] = 0
    if kind is bool:
        _bool_fields[(tag, key, value)] = field
    else:
        _fields.setdefault(tag, {})[(key, value)] = field
    _cached[0] += 1


def _attributes(tag: bytes, attributes: Mapping[str, Any] | None) -> list[bytes]:
    """The encoded ``KeyValue`` fields of ``attributes`` under field ``tag``, in the mapping's order."""
    if not attributes:
        return []
    known = _fields.get(tag)
    out: list[bytes | None]
    if known is not None and _LOOKED_UP_WHOLE.issuperset(map(type, attributes.values())):
        out = list(map(known.get, attributes.items()))  # no Python frame per attribute
        if None not in out:
            return cast("list[bytes]", out)
        known = None  # the misses below were looked for already
    else:
        out = [None] * len(attributes)
    for index, (key, value) in enumerate(attributes.items()):
        if out[index] is not None:
            continue
        kind = type(value)
        field = None
        if kind is str or kind is int:
            field = known.get((key, value)) if known is not None else None
        elif kind is bool:
            field = _bool_fields.get((tag, key, value))
        if field is None:
            body = _key_value(key, value)
            n = len(body)
            field = tag + (bytes((n,)) if n < 0x80 else _varint(n)) + body
            if n <= 256 and (kind is str or kind is bool or kind is int):
                _remember(tag, key, value, kind, field)
        out[index] = field
    return cast("list[bytes]", out)


def _span(span: AnySpan) -> bytes:
    context = span.get_span_context()
    assert context is not None
    parent = span.parent
    parts = [b"\x0a\x10" + context.trace_id.to_bytes(16, "big"), b"\x12\x08" + context.span_id.to_bytes(8, "big")]
    state = context.trace_state
    if state is not None:
        text = ",".join([f"{key}={value}" for key, value in state.items()])
        if text:
            parts.append(_field(b"\x1a", _text(text)))
    if parent:
        parts.append(b"\x22\x08" + parent.span_id.to_bytes(8, "big"))
    if span.name:
        parts.append(_field(b"\x2a", _text(span.name)))
    parts.append(b"\x30" + _varint(span.kind.value + 1))  # SDK INTERNAL = 0 -> SPAN_KIND_INTERNAL = 1
    if span.start_time:
        parts.append(b"\x39" + _pack_u64(span.start_time))
    if span.end_time:
        parts.append(b"\x41" + _pack_u64(span.end_time))
    parts.extend(_attributes(b"\x4a", span.attributes))
    if span.dropped_attributes:
        parts.append(b"\x50" + _varint(span.dropped_attributes))
    for event in span.events:
        body = [b"\x09" + _pack_u64(event.timestamp)] if event.timestamp else []
        if event.name:
            body.append(_field(b"\x12", _text(event.name)))
        body.extend(_attributes(b"\x1a", event.attributes))
        if event.dropped_attributes:
            body.append(b"\x20" + _varint(event.dropped_attributes))
        parts.append(_field(b"\x5a", b"".join(body)))
    if span.dropped_events:
        parts.append(b"\x60" + _varint(span.dropped_events))
    if span.links:
        raise NotEncodable("span links")
    if span.dropped_links:
        parts.append(b"\x70" + _varint(span.dropped_links))
    status = span.status
    if status is not None:
        body = [_field(b"\x12", _text(status.description))] if status.description else []
        if status.status_code.value:
            body.append(b"\x18" + _varint(status.status_code.value))
        parts.append(_field(b"\x7a", b"".join(body)))
    flags = _HAS_IS_REMOTE | (_IS_REMOTE if parent and parent.is_remote else 0)
    parts.append(b"\x85\x01" + _pack_u32(flags))
    return b"".join(parts)


def encode_trace_request(spans: Sequence[AnySpan]) -> bytes:
    """The ``ExportTraceServiceRequest`` bytes of ``spans``, as the SDK's encoder writes them.

    Each nested message is a list of pieces whose length is summed, not a joined copy: the request is joined
    once, at the end (a batch is a few hundred KB, and each copy of it was fresh memory from the C allocator).

    Raises:
        NotEncodable: for span links, integers beyond 64 bits, text that is not UTF-8 or values
            of other types; the caller then uses the SDK's encoder.
    """
    groups: dict[int, tuple[Any, dict[Any, list[bytes]]]] = {}  # by id: a Resource hashes through JSON
    canonical: dict[int, int] = {}  # id of a span's resource -> id of the equal resource it is grouped under
    for span in spans:
        resource = span.resource
        group_id = canonical.get(id(resource))
        if group_id is None:
            group_id = next((gid for gid, (seen, _) in groups.items() if seen == resource), id(resource))
            canonical[id(resource)] = group_id
            if group_id not in groups:
                groups[group_id] = (resource, {})
        groups[group_id][1].setdefault(span.instrumentation_scope or None, []).append(_span(span))
    out: list[bytes] = []
    for resource, scopes in groups.values():
        body = [_field(b"\x0a", b"".join(_attributes(b"\x0a", resource.attributes)))]
        for scope, encoded in scopes.items():
            scope_body = b""
            if scope is not None:
                scope_parts = [_field(b"\x0a", _text(scope.name))] if scope.name else []
                if scope.version:
                    scope_parts.append(_field(b"\x12", _text(scope.version)))
                scope_parts.extend(_attributes(b"\x1a", scope.attributes))
                scope_body = b"".join(scope_parts)
            parts = [_field(b"\x0a", scope_body)]
            for item in encoded:
                parts.append(_head(b"\x12", len(item)))
                parts.append(item)
            if scope is not None and scope.schema_url:
                parts.append(_field(b"\x1a", _text(scope.schema_url)))
            body.append(_head(b"\x12", sum(map(len, parts))))
            body += parts
        if resource.schema_url:
            body.append(_field(b"\x1a", _text(resource.schema_url)))
        out.append(_head(b"\x0a", sum(map(len, body))))
        out += body
    return b"".join(out)


SDK_TRACE_LOGGER: Final = "opentelemetry.exporter.otlp.proto.http.trace_exporter"
"""The SDK trace exporter's logger: :class:`DirectOTLPSpanExporter` logs its records under the same name."""
_INTERNAL_METRICS_ENV: Final = "OTEL_PYTHON_SDK_INTERNAL_METRICS_ENABLED"

_logger: Final = logging.getLogger(SDK_TRACE_LOGGER)


def _sdk_encode(spans: Sequence[AnySpan]) -> bytes:
    """The SDK encoder's bytes (imports the SDK, protobuf and the OTLP message classes on first use)."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    readable = [to_readable(span) if isinstance(span, SpanRecord) else span for span in spans]
    data: bytes = encode_spans(readable).SerializePartialToString()
    return data


def direct_exporter_available() -> bool:
    """Whether :class:`DirectOTLPSpanExporter` can stand in for the SDK's exporter in this process: the SDK
    has the HTTP client parts it is assembled from, and the SDK's internal exporter metrics (which only
    the SDK's own exporter records) are not switched on."""
    import os

    if os.environ.get(_INTERNAL_METRICS_ENV, "").strip().lower() == "true":
        return False
    try:
        from opentelemetry.exporter.otlp.common import http
        from opentelemetry.exporter.otlp.proto.http import _common
    except ImportError:
        return False
    return all(callable(getattr(http, name, None)) for name in ("_OTLPHTTPClient", "Compression")) and all(
        hasattr(_common, name) for name in ("_DEFAULT_MAX_REQUEST_SIZE", "_build_transport", "_resolve_headers"))


class DirectOTLPSpanExporter:
    """OTLP/HTTP protobuf span export of :func:`encode_trace_request` bytes through the SDK's HTTP client.

    Not an SDK ``SpanExporter`` (that base class lives in the SDK's trace package, which this one does
    not load): :meth:`export` takes span records and returns whether the batch was delivered
    (:attr:`accepts_records`, which :class:`~.exporter.SpanExportDestination` reads).

    Built as ``OTLPSpanExporter(endpoint=..., timeout=..., compression=NoCompression, session=...)`` builds
    itself: the same transport (``session``, with the ``OTEL_EXPORTER_OTLP[_TRACES]_CERTIFICATE`` /
    ``CLIENT_KEY`` / ``CLIENT_CERTIFICATE`` variables applied to it), the same request headers, the
    default request size limit, the same client (retries, backoff, deadline) and the same log records.
    Only available when :func:`direct_exporter_available`.

    Args:
        endpoint: the full traces URL.
        timeout: seconds for one export, retries included.
        session: the ``requests`` session every request goes through.
        compression: ``gzip`` (body compressed, ``Content-Encoding: gzip``) or ``none``.
        attempt_timeout: seconds for one request; shorter than ``timeout``, a request that times out is
            retried (with the client's backoff) while the export's time lasts. ``None``: the whole ``timeout``.
        json: send OTLP/JSON (``transport = "http_json"``).
        transport: what sends each request (the SDK transport interface); ``None``: the SDK's, on ``session``.
    """

    def __init__(self, endpoint: str, timeout: float, session: requests.Session, *, compression: str = "none",
                 attempt_timeout: float | None = None, json: bool = False, transport: Any = None) -> None:
        from opentelemetry.exporter.otlp.common import http
        from opentelemetry.exporter.otlp.proto.http import _common
        from opentelemetry.sdk.environment_variables import (
            OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE, OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE,
            OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY, OTEL_EXPORTER_OTLP_TRACES_HEADERS,
        )

        self._endpoint = endpoint
        # ``transport`` (the plain-HTTP one, transport.py) or the SDK's; AttemptTimeout stands in for either
        if transport is None:
            transport = _common._build_transport(None, None, None, OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE,
                                                 OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY,
                                                 OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE, session=session)
        if attempt_timeout is not None:
            transport = AttemptTimeout(transport, attempt_timeout)
        self._max_request_size: int = _common._DEFAULT_MAX_REQUEST_SIZE
        self._json = json
        headers = _common._resolve_headers(None, OTEL_EXPORTER_OTLP_TRACES_HEADERS)
        if json:
            headers["content-type"] = "application/json"
        self._client = http._OTLPHTTPClient(
            transport=transport, endpoint=endpoint, kind="spans", timeout=timeout,
            compression=http.Compression.GZIP if compression == "gzip" else http.Compression.NONE,
            headers=headers, logger=_logger)
        self._shutdown = False

    accepts_records: Final = True
    """:meth:`export` takes :class:`~.record.SpanRecord` objects and returns a ``bool``."""

    def export(self, spans: Sequence[AnySpan]) -> bool:
        """Send one batch; ``True`` when the collector accepted it (after the client's retries)."""
        if self._shutdown:
            _logger.warning("Exporter already shutdown, ignoring batch")
            return False
        try:
            data = encode_trace_request(spans)
        except NotEncodable:
            try:
                data = _sdk_encode(spans)
            except Exception as error:  # what the SDK's exporter does with a batch it cannot encode
                _logger.error("Failed to encode span batch: %s", error)
                return False
        if self._json:
            data = protobuf_to_otlp_json(data)  # transport = "http_json"
        if 0 < self._max_request_size < len(data):
            _logger.warning("Dropping span batch: serialized size %d bytes exceeds max_request_size %d bytes.",
                            len(data), self._max_request_size)
            return False
        return bool(self._client.export(data).success)

    def shutdown(self) -> None:
        """Abort a retry backoff and close the session (as the SDK's exporter does)."""
        if self._shutdown:
            _logger.warning("Exporter already shutdown, ignoring call")
            return
        self._shutdown = True
        self._client.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Nothing is buffered here."""
        return True


def _fast_exporter_class() -> type[SpanExporter]:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import SpanExportResult

    class FastOTLPSpanExporter(OTLPSpanExporter):
        """The SDK's OTLP/HTTP protobuf span exporter, encoding with :func:`encode_trace_request`.

        Requests still go through the exporter's own HTTP client (its session, headers, compression,
        retries and timeout); batches the encoder does not cover, or an SDK whose exporter has no such
        client, use the SDK's ``export`` unchanged.
        """

        def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
            client = getattr(self, "_client", None)
            send = getattr(client, "export", None)
            limit = getattr(self, "_max_request_size", None)
            if getattr(self, "_shutdown", True) or not callable(send) or not isinstance(limit, int):
                return super().export(spans)
            try:
                data = encode_trace_request(spans)
            except NotEncodable:
                return super().export(spans)
            if len(data) > limit:
                return super().export(spans)  # the SDK refuses it with its own warning
            result = send(data)
            return SpanExportResult.SUCCESS if getattr(result, "success", False) else SpanExportResult.FAILURE

    FastOTLPSpanExporter.__module__ = __name__
    return FastOTLPSpanExporter


def __getattr__(name: str) -> Any:
    """``OTLPSpanExporter`` (the SDK's) and ``FastOTLPSpanExporter``, imported on first use."""
    if name == "OTLPSpanExporter":
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        value: Any = OTLPSpanExporter
    elif name == "FastOTLPSpanExporter":
        value = _fast_exporter_class()
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value
