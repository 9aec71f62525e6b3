"""The metrics sink: a ``MeterProvider`` with one periodic OTLP/HTTP reader per endpoint."""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any, ClassVar

from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.sdk.metrics import (Counter, Histogram, MeterProvider, ObservableCounter, ObservableGauge,
                                       ObservableUpDownCounter, UpDownCounter)
from opentelemetry.sdk.metrics.export import AggregationTemporality, MetricReader, PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource

from ...export.events import ScopeEvent
from ..base import BaseSink
from .config import MetricsConfig
from .recorder import MetricsRecorder

logger = logging.getLogger("hermes_pipeline.sinks.otel_metrics")


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
                 readers: list[MetricReader] | None = None) -> None:
        self.config = config
        if readers is None:
            readers = [PeriodicExportingMetricReader(
                OTLPMetricExporter(endpoint=e.url, headers=dict(e.headers), timeout=10,
                                   preferred_temporality=_temporality(config.temporality)),
                export_interval_millis=config.export_interval_millis) for e in config.endpoints]
        self.provider = MeterProvider(metric_readers=readers,
                                      resource=Resource.create({"service.name": service_name}))
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
        """Export now."""
        return bool(self.provider.force_flush(timeout_millis=max(1, int(timeout * 1000))))

    def shutdown(self, deadline: float) -> bool:
        """Export what was counted and stop the readers."""
        start = time.monotonic()
        ok = self.flush(deadline)
        self.provider.shutdown(timeout_millis=max(1, int((deadline - (time.monotonic() - start)) * 1000)))
        return ok

    def stats(self) -> Mapping[str, Any]:
        """Counters for ``component.stats()``."""
        return {"metrics_count_errors": self.errors}

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
        """Flush both."""
        return bool(self.traces.flush(timeout)) & self.metrics.flush(timeout)

    def shutdown(self, deadline: float) -> bool:
        """Shut both down."""
        return bool(self.traces.shutdown(deadline)) & self.metrics.shutdown(deadline)

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
    from .config import parse_metrics_config

    metrics_table = section.get("metrics")
    if not isinstance(metrics_table, Mapping) or metrics_table.get("enabled") is not True \
            or section.get("enabled") is not True:
        return traces
    entries = section.get("endpoints", section.get("traces", []))
    base = None
    derivable = [e for e in entries if isinstance(e, Mapping) and e.get("derive_signals") is not False] \
        if isinstance(entries, list) else []
    if derivable and isinstance(derivable[0].get("endpoint"), str):
        base = str(derivable[0]["endpoint"]).rstrip("/").removesuffix("/v1/traces")
    names = [e.get("service_name") for e in entries if isinstance(e, Mapping)] if isinstance(entries, list) else []
    service = next((n for n in names if isinstance(n, str) and n), "hermes-agent")
    sink = build_metrics_sink(parse_metrics_config(metrics_table, base), service)
    return traces if sink is None else TracesAndMetrics(traces, sink)
