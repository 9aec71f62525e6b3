"""The metrics sink: a ``MeterProvider`` with one periodic OTLP/HTTP reader per endpoint.

OTLP metrics of spec 06 BOOK-2, counted from the event stream (no store needed) and exported through the
OpenTelemetry SDK's metrics pipeline when ``[components.config.opentelemetry.metrics]`` is enabled:
``hermes.agent.tasks``, ``gen_ai.client.token.usage``, ``gen_ai.client.operation.duration``, ``hermes.agent.cost``,
``hermes.agent.memory.writes``, ``hermes.agent.skill.changes`` and ``hermes.agent.skill.runs``. Part of the
``opentelemetry`` sink (its ``metrics`` table), wrapped around the trace sink by :mod:`.builder`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, ClassVar

from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.sdk.metrics import (Counter, Histogram, MeterProvider, ObservableCounter, ObservableGauge,
                                       ObservableUpDownCounter, UpDownCounter)
from opentelemetry.sdk.metrics.export import (AggregationTemporality, MetricExportResult, MetricReader,
                                              PeriodicExportingMetricReader)
from opentelemetry.sdk.resources import Resource
import requests

from ...engine.deadline import run_all
from ...export.events import ScopeEvent
from ..base import BaseSink
from .env import read_otlp_env
from .metrics_config import MetricsConfig, metrics_url
from .metrics_recorder import MetricsRecorder

logger = logging.getLogger("hermes_pipeline.sinks.otel_metrics")

_PASS_THROUGH = frozenset({"content-type", "content-encoding", "user-agent"})
_SDK_LOGGERS = ("opentelemetry.exporter.otlp.proto.http.metric_exporter", "opentelemetry.exporter.otlp.common.http")
_quiet = threading.local()


class _QuietWhileExporting(logging.Filter):
    """Drops the SDK exporter's records emitted inside this sink's own exports (it logs one error per interval;
    the sink reports each failure kind once itself). Other metric exporters of the process keep theirs."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not getattr(_quiet, "active", False)


_FILTER = _QuietWhileExporting()


class EndpointSession(requests.Session):
    """Sends exactly the endpoint's resolved headers (plus content headers): the process-global
    ``OTEL_EXPORTER_OTLP_*HEADERS`` variables, which the SDK exporter would add, never reach an endpoint of the
    pipeline file (the same rule as trace endpoints); keeps the last status code."""

    def __init__(self, headers: Mapping[str, str]) -> None:
        super().__init__()
        self._fixed = dict(headers)
        self.last_status: int | None = None
        self.last_failure: str | None = None

    def request(self, method: Any, url: Any, **kwargs: Any) -> requests.Response:  # type: ignore[override]
        given = kwargs.get("headers") or {}
        sent = {k: v for k, v in given.items() if str(k).lower() in _PASS_THROUGH}
        sent.update(self._fixed)
        kwargs["headers"] = sent
        try:
            response = super().request(method, url, **kwargs)
        except Exception as exc:
            self.last_status, self.last_failure = None, type(exc).__name__
            raise
        self.last_status = response.status_code
        self.last_failure = None if 200 <= response.status_code < 400 else f"HTTP {response.status_code}"
        return response


class ReportingMetricExporter(OTLPMetricExporter):
    """The SDK's OTLP/HTTP metric exporter whose failures are counted and warned once per endpoint and kind
    (a backend without OTLP metrics answers 404 at every interval: one warning, then counted silently)."""

    def __init__(self, label: str, session: EndpointSession, **kwargs: Any) -> None:
        super().__init__(session=session, **kwargs)
        self.label = label
        self.observed = session
        self.failures = 0
        self._warned: set[str] = set()

    def export(self, metrics_data: Any, timeout_millis: float | None = 10000, **kwargs: Any) -> Any:
        _quiet.active = True
        try:
            result = super().export(metrics_data, timeout_millis=timeout_millis, **kwargs)
        finally:
            _quiet.active = False
        if result is not MetricExportResult.SUCCESS:
            self.failures += 1
            kind = self.observed.last_failure or "export failed"
            if kind not in self._warned:
                self._warned.add(kind)
                hint = " (the backend does not accept OTLP metrics at this path)" if kind == "HTTP 404" else ""
                logger.warning("hermes_pipeline: OTLP metrics to %s failed: %s%s; later failures of this kind are "
                               "counted silently (metrics_export_failures)", self.label, kind, hint)
        return result


def _temporality(name: str) -> dict[type, AggregationTemporality]:
    chosen = AggregationTemporality.DELTA if name in ("delta", "low_memory") else AggregationTemporality.CUMULATIVE
    return {Counter: chosen, Histogram: chosen, ObservableCounter: chosen,
            UpDownCounter: AggregationTemporality.CUMULATIVE, ObservableUpDownCounter: AggregationTemporality.CUMULATIVE,
            ObservableGauge: AggregationTemporality.CUMULATIVE}


class OtelMetricsSink(BaseSink):
    """Counts events into the BOOK-2 instruments and exports them every ``export_interval_millis``."""

    never_blocks: ClassVar[bool] = True
    """``__call__`` only queues on this sink's own bounded writers (or counts in memory): it is called on
    the publication thread directly (:mod:`hermes_pipeline.export.isolation`)."""

    def __init__(self, config: MetricsConfig, service_name: str = "hermes-agent",
                 readers: list[MetricReader] | None = None, resource: Mapping[str, str] | None = None) -> None:
        self.config = config
        self.exporters: list[ReportingMetricExporter] = []
        if readers is None:
            for name in _SDK_LOGGERS:
                if _FILTER not in logging.getLogger(name).filters:
                    logging.getLogger(name).addFilter(_FILTER)
            readers = []
            for index, e in enumerate(config.endpoints):
                exporter = ReportingMetricExporter(f"opentelemetry.metrics.endpoints[{index}]",
                                                   EndpointSession(dict(e.headers)), endpoint=e.url, timeout=10,
                                                   preferred_temporality=_temporality(config.temporality))
                self.exporters.append(exporter)
                readers.append(PeriodicExportingMetricReader(exporter,
                                                             export_interval_millis=config.export_interval_millis))
        self.provider = MeterProvider(metric_readers=readers, resource=Resource.create(
            {**dict(resource or {}), "service.name": service_name}))
        self.recorder = MetricsRecorder(self.provider.get_meter("hermes_pipeline"), config.include_skill_names)
        self.errors = 0

    def __call__(self, event: ScopeEvent) -> None:
        """Count one event (an exception in counting is logged once per kind, never raised)."""
        try:
            self.recorder(event)
        except Exception as exc:  # the host's loop never breaks for a metric
            self.errors += 1
            if self.errors == 1:
                logger.warning("hermes_pipeline: OTLP metrics could not count an event: %s", exc)

    def flush(self, timeout: float) -> bool:
        """Export what was counted now, within ``timeout`` seconds (FMT-84); ``True`` only when the export
        finished in time and no endpoint failed.

        The SDK's exporter waits for its own HTTP timeout (10 s) whatever timeout the flush is given, so the
        export runs on a daemon thread that is left behind at the deadline (it ends with its HTTP timeout)."""
        failures = self._failures()
        done = threading.Event()
        flushed: list[bool] = []

        def export() -> None:
            try:
                flushed.append(bool(self.provider.force_flush(timeout_millis=max(1, int(timeout * 1000)))))
            except Exception:  # noqa: BLE001 - reported as not flushed, never raised
                flushed.append(False)
            finally:
                done.set()

        threading.Thread(target=export, name="hermes-otel-metrics-flush", daemon=True).start()
        return done.wait(max(timeout, 0.0)) and flushed == [True] and self._failures() == failures

    def _failures(self) -> int:
        return sum(exporter.failures for exporter in self.exporters)

    def shutdown(self, deadline: float) -> bool:
        """Export what was counted and stop the readers."""
        start = time.monotonic()
        ok = self.flush(deadline)
        self.provider.shutdown(timeout_millis=max(1, int((deadline - (time.monotonic() - start)) * 1000)))
        return ok

    def stats(self) -> Mapping[str, Any]:
        """Counters for ``component.stats()``."""
        return {"metrics_count_errors": self.errors, "metrics_export_failures": self._failures()}

    def destinations(self) -> list[str]:
        """The metrics URLs."""
        return [e.url for e in self.config.endpoints]


def build_metrics_sink(config: MetricsConfig, service_name: str = "hermes-agent") -> OtelMetricsSink | None:
    """The sink for an enabled table, else ``None``."""
    return OtelMetricsSink(config, service_name) if config.enabled and config.endpoints else None


class TracesAndMetrics(BaseSink):
    """The trace sink and the metrics sink of one ``opentelemetry`` section, as one sink."""

    never_blocks: ClassVar[bool] = True
    """``__call__`` only queues on this sink's own bounded writers (or counts in memory): it is called on
    the publication thread directly (:mod:`hermes_pipeline.export.isolation`)."""

    def __init__(self, traces: Any, metrics: OtelMetricsSink) -> None:
        self.traces = traces
        self.metrics = metrics

    def __call__(self, event: ScopeEvent) -> None:
        """Give the event to both."""
        self.traces(event)
        self.metrics(event)

    def flush(self, timeout: float) -> bool:
        """Flush both side by side, within ``timeout`` seconds in all (a stuck trace endpoint never takes the
        metrics' time, nor the other way round)."""
        return run_all([self.traces.flush, self.metrics.flush], timeout, name="hermes-otel-flush")

    def shutdown(self, deadline: float) -> bool:
        """Shut both down side by side, within ``deadline`` seconds in all."""
        return run_all([self.traces.shutdown, self.metrics.shutdown], deadline, name="hermes-otel-shutdown")

    def stats(self) -> Mapping[str, Any]:
        """Both sinks' counters."""
        return {**dict(self.traces.stats()), **dict(self.metrics.stats())}

    def destinations(self) -> list[str]:
        """Both sinks' destinations."""
        return [*self.traces.destinations(), *self.metrics.destinations()]


def with_metrics(traces: Any, section: Mapping[str, Any]) -> Any:
    """``traces`` alone, or with the metrics sink when the section's ``metrics`` table is enabled.

    Metrics go to the table's endpoints, else to the base URL of the section's first trace endpoint.
    """
    from .metrics_config import parse_metrics_config

    metrics_table = section.get("metrics")
    if not isinstance(metrics_table, Mapping) or metrics_table.get("enabled") is not True \
            or section.get("enabled") is not True:
        return traces
    endpoints = _trace_endpoints(traces, section)
    base, headers = None, {}
    derivable = [e for e in endpoints if e.derive_signals]
    if derivable:  # a derived metrics endpoint keeps its trace endpoint's own headers (credentials included)
        base = derivable[0].url.rstrip("/").removesuffix("/v1/traces")
        headers = dict(derivable[0].headers)
    # service.name and resource attributes: the first trace endpoint's, already resolved by the trace rule
    # (its service_name, else OTEL_SERVICE_NAME, else service.name of OTEL_RESOURCE_ATTRIBUTES, else hermes-agent)
    first = endpoints[0] if endpoints else None
    service = first.service_name if first is not None else (read_otlp_env().service() or "hermes-agent")
    resource = dict(first.resource_attributes) if first is not None else {}
    config = parse_metrics_config(metrics_table, base)
    if headers:
        config = replace(config, endpoints=tuple(
            replace(e, headers=tuple(sorted({**headers, **dict(e.headers)}.items())))
            if e.url == metrics_url(base or "") else e for e in config.endpoints))
    sink = OtelMetricsSink(config, service, resource=resource) if config.enabled and config.endpoints else None
    return traces if sink is None else TracesAndMetrics(traces, sink)


def _trace_endpoints(traces: Any, section: Mapping[str, Any]) -> tuple[Any, ...]:
    """The section's resolved trace endpoints: the trace sink's, else the section parsed again (never raises)."""
    endpoints = getattr(getattr(traces, "config", None), "endpoints", None)
    if isinstance(endpoints, tuple):
        return endpoints
    try:
        from .config import parse_otel_config

        table = {k: v for k, v in section.items() if k != "worker"}
        return parse_otel_config(table, on_invalid="skip", ignore_unknown_keys=True).endpoints
    except Exception:
        return ()
