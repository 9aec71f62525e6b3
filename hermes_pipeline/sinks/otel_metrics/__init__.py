"""OTLP metrics of spec 06 BOOK-2, counted from the event stream (no store needed) and exported
through the OpenTelemetry SDK's metrics pipeline when ``[components.config.opentelemetry.metrics]``
is enabled: ``hermes.agent.tasks``, ``gen_ai.client.token.usage``, ``gen_ai.client.operation.duration``,
``hermes.agent.cost``, ``hermes.agent.memory.writes``, ``hermes.agent.skill.changes`` and
``hermes.agent.skill.runs``."""

from .config import MetricsConfig, parse_metrics_config
from .recorder import MetricsRecorder
from .sink import OtelMetricsSink, build_metrics_sink

__all__ = ["MetricsConfig", "MetricsRecorder", "OtelMetricsSink", "build_metrics_sink", "parse_metrics_config"]
