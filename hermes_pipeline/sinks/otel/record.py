"""Finished spans as plain records, without the OpenTelemetry SDK (spec 04 FMT-55..FMT-59).

The span builder turns scope events into :class:`SpanRecord` objects and the sink's own OTLP/HTTP
exporter (:mod:`.proto`) encodes them; neither needs ``opentelemetry-sdk``, whose import (trace
module, resources, ``psutil``: about 25 ms) a host would otherwise pay at start-up for every
process that exports traces.

A record reads like the SDK's ``ReadableSpan`` for everything an exporter reads (``name``,
``get_span_context()``, ``parent``, ``kind``, ``start_time``, ``end_time``, ``attributes``,
``events``, ``status``, ``resource``, ``instrumentation_scope``, ``links`` and the ``dropped_*``
counts), so the encoder serves both. An SDK ``SpanExporter`` (a custom
:data:`~.exporter.ExporterFactory`) receives real ``ReadableSpan`` objects: :func:`to_readable`
converts a record, importing the SDK only then. :class:`SpanKind` and :class:`StatusCode` have the
SDK enums' member names and values, which the conversion maps one to one.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan

__all__ = ["Event", "InstrumentationScope", "Resource", "SpanContext", "SpanKind", "SpanRecord", "Status",
           "StatusCode", "to_readable"]


class SpanKind(enum.Enum):
    """The span kinds (the SDK's ``opentelemetry.trace.SpanKind`` names and values; OTLP's are one higher)."""

    INTERNAL = 0
    SERVER = 1
    CLIENT = 2
    PRODUCER = 3
    CONSUMER = 4


class StatusCode(enum.Enum):
    """The span status codes (the SDK's names and values, which are OTLP's)."""

    UNSET = 0
    OK = 1
    ERROR = 2


class Status:
    """A span status; as in the SDK, only an ``ERROR`` status keeps a description."""

    __slots__ = ("description", "status_code")

    def __init__(self, status_code: StatusCode = StatusCode.UNSET, description: str | None = None) -> None:
        self.status_code = status_code
        self.description = description if status_code is StatusCode.ERROR else None

    def __repr__(self) -> str:
        return f"Status({self.status_code.name}, {self.description!r})"


class SpanContext:
    """A sampled span's identity (no trace state); ``is_remote`` for an application parent from another process."""

    __slots__ = ("is_remote", "span_id", "trace_id")
    trace_state = None

    def __init__(self, trace_id: int, span_id: int, is_remote: bool = False) -> None:
        self.trace_id = trace_id
        self.span_id = span_id
        self.is_remote = is_remote


class Event:
    """A span event: ``timestamp`` in nanoseconds."""

    __slots__ = ("attributes", "name", "timestamp")
    dropped_attributes = 0

    def __init__(self, name: str, attributes: Mapping[str, Any], timestamp: int) -> None:
        self.name = name
        self.attributes = attributes
        self.timestamp = timestamp


class Resource:
    """The resource of an endpoint's spans (FMT-59). ``readable`` caches its SDK form (:func:`to_readable`)."""

    __slots__ = ("attributes", "readable")
    schema_url = ""

    def __init__(self, attributes: Mapping[str, Any]) -> None:
        self.attributes = attributes
        self.readable: Any = None


class InstrumentationScope:
    """The instrumentation scope of an endpoint's spans. ``readable`` caches its SDK form."""

    __slots__ = ("name", "readable", "version")
    schema_url = None
    attributes = None

    def __init__(self, name: str, version: str | None) -> None:
        self.name = name
        self.version = version
        self.readable: Any = None


class SpanRecord:
    """One finished span (times in nanoseconds since the epoch)."""

    __slots__ = ("attributes", "context", "end_time", "events", "instrumentation_scope", "kind", "name", "parent",
                 "resource", "start_time", "status")
    links: tuple[()] = ()
    dropped_attributes = dropped_events = dropped_links = 0

    def __init__(self, name: str, context: SpanContext, parent: SpanContext | None, kind: SpanKind,
                 attributes: dict[str, Any], events: Sequence[Event], status: Status, start_time: int, end_time: int,
                 resource: Resource, instrumentation_scope: InstrumentationScope) -> None:
        self.name = name
        self.context = context
        self.parent = parent
        self.kind = kind
        self.attributes = attributes
        self.events = events
        self.status = status
        self.start_time = start_time
        self.end_time = end_time
        self.resource = resource
        self.instrumentation_scope = instrumentation_scope

    def get_span_context(self) -> SpanContext:
        return self.context

    def __repr__(self) -> str:
        return f"SpanRecord({self.name!r}, span_id={self.context.span_id:016x}, kind={self.kind.name})"


def to_readable(span: SpanRecord) -> ReadableSpan:
    """The SDK's ``ReadableSpan`` of ``span`` (for an SDK ``SpanExporter``; imports the SDK on first use)."""
    from opentelemetry import trace as api
    from opentelemetry.sdk import resources, trace
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope as SdkScope

    flags = api.TraceFlags(api.TraceFlags.SAMPLED)
    context = span.context
    parent = span.parent
    resource, scope = span.resource, span.instrumentation_scope
    if resource.readable is None:
        resource.readable = resources.Resource(dict(resource.attributes))
    if scope.readable is None:
        scope.readable = SdkScope(scope.name, scope.version)
    status = span.status
    return trace.ReadableSpan(
        name=span.name, context=api.SpanContext(context.trace_id, context.span_id, is_remote=False, trace_flags=flags),
        parent=None if parent is None else api.SpanContext(parent.trace_id, parent.span_id, is_remote=parent.is_remote,
                                                           trace_flags=flags),
        resource=resource.readable, attributes=span.attributes,
        events=[trace.Event(e.name, e.attributes, e.timestamp) for e in span.events],
        kind=api.SpanKind(span.kind.value), status=api.Status(api.StatusCode(status.status_code.value), status.description),
        start_time=span.start_time, end_time=span.end_time, instrumentation_scope=scope.readable)
