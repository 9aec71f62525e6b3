"""The OTLP transport of the OTel sink: the OTLP/HTTP exporter behind a bounded-writer destination (spec 04 FMT-72, FMT-78, FMT-81..FMT-83).

- :class:`ObservedSession` is the ``requests.Session`` handed to the OTLP exporter (:func:`default_exporter`). It sends
  exactly the endpoint's configured headers plus the exporter's content headers, so the
  process-global ``OTEL_EXPORTER_OTLP_*HEADERS`` variables are never applied (FMT-72), and it
  counts every failed HTTP request (``otel.export_failures``), keeping only the status code or
  exception class (never the URL, a header or a body).
- :class:`SpanExportDestination` adapts ``SpanExporter.export`` to the
  :class:`~hermes_pipeline.export.writer.BoundedWriter` destination seam: a batch the exporter
  could not deliver (after its own retries with backoff for 429/502/503/504 and connection
  errors, all within ``timeout_millis``, FMT-78) raises a non-retryable
  :class:`~hermes_pipeline.export.errors.DeliveryError`, so the writer drops and counts it and
  warns once per failure kind.
- The OTLP exporter's (and urllib3's debug) log records are silenced on the sink's worker threads
  (they repeat on every failure and contain the endpoint URL, query included); the sink reports
  failures itself.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Protocol, Union, cast

import requests

from ...export.errors import DeliveryError
from .config import TraceEndpoint
from .record import SpanRecord, to_readable
from .transport import PlainHttpTransport, plain_http_target

if TYPE_CHECKING:
    from opentelemetry.sdk.trace.export import SpanExporter

THREAD_PREFIX: Final = "hermes-export:opentelemetry"
"""Worker-thread name prefix of the OTel sink's writers (``BoundedWriter`` names its thread ``hermes-export:<name>``)."""

_PASS_THROUGH: Final = frozenset({"content-type", "content-encoding", "user-agent"})
_SDK_LOGGERS: Final = ("opentelemetry.exporter.otlp.proto.http.trace_exporter", "opentelemetry.exporter.otlp.common.http",
                       "opentelemetry.exporter.otlp.proto.http._common", "urllib3.connectionpool")

class RecordExporter(Protocol):
    """An exporter of the sink's span records (the default, :class:`~.proto.DirectOTLPSpanExporter`):
    ``export`` returns whether the batch was delivered."""

    @property
    def accepts_records(self) -> bool: ...

    def export(self, spans: Sequence[SpanRecord]) -> bool: ...

    def shutdown(self) -> None: ...


AnyExporter = Union[RecordExporter, "SpanExporter"]
"""What a trace endpoint exports through: a :class:`RecordExporter` or an SDK ``SpanExporter``."""

ExporterFactory = Callable[[TraceEndpoint, requests.Session], "SpanExporter"]
"""``factory(endpoint, session) -> SpanExporter``; the session observes and shapes every request. The
exporter is an OpenTelemetry SDK ``SpanExporter`` and receives the SDK's ``ReadableSpan`` objects
(:func:`~.record.to_readable`)."""


class _QuietOnSinkThreads(logging.Filter):
    """Drops the OTLP exporter's records emitted on this sink's worker threads (other users keep theirs)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not threading.current_thread().name.startswith(THREAD_PREFIX)


_FILTER: Final = _QuietOnSinkThreads()


def quiet_sdk_logs() -> None:
    """Install the filter on the OTLP exporter loggers (idempotent)."""
    for name in _SDK_LOGGERS:
        target = logging.getLogger(name)
        if _FILTER not in target.filters:
            target.addFilter(_FILTER)


class ObservedSession(requests.Session):
    """A ``requests.Session`` that sends only the configured headers and counts failed requests.

    Args:
        headers: the endpoint's resolved headers (``headers`` + ``header_env`` + ``basic_auth_env``).
    """

    def __init__(self, headers: Mapping[str, str]) -> None:
        super().__init__()
        self._fixed = dict(headers)
        self.requests_sent = 0
        self.failures = 0
        self.last_failure: str | None = None
        self.last_status: int | None = None

    def request_headers(self, given: Mapping[str, str] | None) -> dict[str, str]:
        """What a request sends of the exporter's headers ``given``: its content headers and the configured ones."""
        sent = {k: v for k, v in (given or {}).items() if str(k).lower() in _PASS_THROUGH}
        sent.update(self._fixed)
        return sent

    def observe_error(self, exc: BaseException) -> None:
        """A request failed before a response (only the exception class is kept)."""
        self.failures += 1
        self.last_failure, self.last_status = type(exc).__name__, None

    def observe_status(self, status: int) -> None:
        """A response came: a status outside 200-399 (what the OTLP exporter treats as success) is a failure."""
        if not 200 <= status < 400:
            self.failures += 1
            self.last_failure, self.last_status = f"HTTP {status}", status

    def request(self, method: Any, url: Any, **kwargs: Any) -> requests.Response:  # type: ignore[override]
        kwargs["headers"] = self.request_headers(kwargs.get("headers"))
        self.requests_sent += 1
        try:
            response = super().request(method, url, **kwargs)
        except Exception as exc:
            self.observe_error(exc)
            raise
        self.observe_status(response.status_code)
        return response


def default_exporter(endpoint: TraceEndpoint, session: requests.Session) -> AnyExporter:
    """The real OTLP/HTTP protobuf exporter for ``endpoint`` (each request ``timeout_millis``, the batch with its
    retries ``export_timeout_millis``; ``compression``; a plain-HTTP collector through
    :class:`~.transport.PlainHttpTransport` on ``session``'s rules), with the
    direct protobuf encoder of :mod:`~hermes_pipeline.sinks.otel.proto`: its
    :class:`~.proto.DirectOTLPSpanExporter` (span records through the SDK's HTTP client, without loading
    the SDK's trace module or protobuf), or, where that is not available, the SDK's ``OTLPSpanExporter``
    with the same encoder."""
    from . import proto

    attempt = endpoint.timeout_millis / 1000
    budget = max(endpoint.export_timeout_millis, endpoint.timeout_millis) / 1000
    if endpoint.transport == "grpc":
        return grpc_exporter(endpoint)
    if proto.direct_exporter_available():
        transport = None
        if isinstance(session, ObservedSession) and (target := plain_http_target(endpoint.url)) is not None:
            transport = PlainHttpTransport(target, session)
        return proto.DirectOTLPSpanExporter(endpoint.url, budget, session, compression=endpoint.compression,
                                            attempt_timeout=attempt, json=endpoint.transport == "http_json",
                                            transport=transport)
    from opentelemetry.exporter.otlp.proto.http import Compression

    exporter: SpanExporter = proto.FastOTLPSpanExporter(
        endpoint=endpoint.url, timeout=attempt, session=session,
        compression=Compression.Gzip if endpoint.compression == "gzip" else Compression.NoCompression)
    return exporter


def grpc_exporter(endpoint: TraceEndpoint) -> SpanExporter:
    """The SDK's OTLP/gRPC span exporter (the ``grpc`` extra): plaintext for ``http://``, TLS for ``https://``, the
    endpoint's resolved headers as metadata (never the process-global header variables), gzip when asked; it
    retries UNAVAILABLE and the other retryable codes with backoff inside ``export_timeout_millis``."""
    from grpc import Compression
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcSpanExporter

    headers = tuple((k.lower(), v) for k, v in endpoint.headers.items()) or (("user-agent", "hermes-pipeline"),)
    exporter: SpanExporter = GrpcSpanExporter(
        endpoint=endpoint.url, insecure=endpoint.url.startswith("http://"), headers=headers,
        timeout=max(endpoint.export_timeout_millis, endpoint.timeout_millis) / 1000,
        compression=Compression.Gzip if endpoint.compression == "gzip" else Compression.NoCompression)
    return exporter


def _sdk_export(exporter: SpanExporter) -> Callable[[Sequence[SpanRecord]], bool]:
    """``export(records) -> delivered`` through an SDK ``SpanExporter`` (which reads ``ReadableSpan`` objects)."""
    from opentelemetry.sdk.trace.export import SpanExportResult

    def export(batch: Sequence[SpanRecord]) -> bool:
        return exporter.export([to_readable(span) for span in batch]) is SpanExportResult.SUCCESS

    return export


class SpanExportDestination:
    """``write(batch)`` → ``exporter.export(batch)``; a failed batch raises a non-retryable ``DeliveryError``.

    Args:
        exporter: the span exporter (normally :func:`default_exporter`'s, on ``session``): one that
            ``accepts_records`` (returns whether the batch was delivered), or an SDK ``SpanExporter``.
        session: the observing session, or ``None`` when a factory built an exporter without it.
        label: ``opentelemetry.endpoints[i]`` for :meth:`describe`.
    """

    def __init__(self, exporter: AnyExporter, session: ObservedSession | None, label: str) -> None:
        self.exporter = exporter
        self._export = (cast(RecordExporter, exporter).export if getattr(exporter, "accepts_records", False)
                        else _sdk_export(cast("SpanExporter", exporter)))
        self.session = session
        self.label = label
        self.unobserved_failures = 0
        """Failed ``export`` calls the session did not see (custom exporters)."""
        self.batches = 0

    @property
    def export_failures(self) -> int:
        """``otel.export_failures``: failed HTTP requests (retries included) plus unobserved failed exports."""
        return (self.session.failures if self.session is not None else 0) + self.unobserved_failures

    def write(self, batch: Sequence[SpanRecord]) -> None:
        session = self.session
        before = session.failures if session is not None else 0
        try:
            delivered = self._export(batch)
        except Exception as exc:
            self.unobserved_failures += 1
            raise DeliveryError(type(exc).__name__, retryable=False) from None
        self.batches += 1
        if delivered:
            return
        if session is None or session.failures == before:
            self.unobserved_failures += 1
            raise DeliveryError("export failed", retryable=False)
        status = session.last_status
        raise DeliveryError(session.last_failure or "export failed", retryable=False, status=status)

    def close(self) -> None:
        """Called by the writer's worker after the last batch; the sink shuts the exporter down itself."""

    def shutdown(self) -> None:
        """Shut the exporter down: aborts its retry backoff and closes the session (FMT-78: no retry after shutdown)."""
        try:
            self.exporter.shutdown()
        except Exception:
            pass

    def describe(self) -> str:
        return self.label
