"""The OpenTelemetry sink: scope events → OTLP/HTTP spans (spec 04 §4, §5); Langfuse is one of its destinations.

Laid out as the OpenTelemetry SDK splits it, a processor builds and an exporter transports:

- :mod:`.config`: the one statement of the ``opentelemetry`` section (key tables, merge lists,
  defaults, ``validate_config``) and its parser (``parse_otel_config``); :mod:`.env` the standard
  ``OTEL_*`` variables, :mod:`.urls` the OTLP and Langfuse URL rules;
- :mod:`.sink`: :class:`OtelSink` (the scope listener: one event writer feeding the span builder,
  one span writer per endpoint), :class:`OtelPlugin` (stand-alone use), the builders;
- :mod:`.spans`: the processor, :class:`~.spans.SpanBuilder` (open scopes, sampling, trace grouping,
  a finished scope becomes a span), with one module per projection: :mod:`.genai`, :mod:`.full`,
  :mod:`.openinference` (and :mod:`.attrs`, :mod:`.messages`, :mod:`.errors`, :mod:`.state` they share);
- :mod:`.exporter`: the per-endpoint OTLP/HTTP transport (retries, counters) and :mod:`.proto`, the
  direct protobuf encoder held byte-identical to the SDK's;
- :mod:`.metrics_sink`: the ``metrics`` table's OTLP metrics (:mod:`.metrics_recorder` counts the BOOK-2
  instruments from scope events, :mod:`.metrics_config` parses the table);
- :mod:`.quick_endpoint`: the profile's ``observability.otel_*`` shorthand, one ``gen_ai`` endpoint fed by the
  profile's shared stream (the ``quick_otel`` consumer);
- :mod:`.langfuse`: the Langfuse shorthand, an OTLP ``gen_ai`` endpoint with its credentials;
- :mod:`.builder`: :data:`opentelemetry_builder`, the ``opentelemetry`` entry point of the
  ``hermes_pipeline.sinks`` group.

Only the builder is imported with the package; the other names load their module (and the
OpenTelemetry SDK) on first use, so that validating a file without an ``opentelemetry`` section never
imports the SDK.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .builder import OpenTelemetryBuilder, opentelemetry_builder

if TYPE_CHECKING:
    from .langfuse import build_langfuse_sink
    from .sink import (
        CAPTURE_ENV, ExportConfigError, OtelPlugin, OtelSink, build_otel_plugin, build_otel_sink, content_gate_open,
    )

__all__ = ["CAPTURE_ENV", "ExportConfigError", "OpenTelemetryBuilder", "OtelPlugin", "OtelSink",
           "build_langfuse_sink", "build_otel_plugin", "build_otel_sink", "content_gate_open",
           "opentelemetry_builder"]

_LAZY = {"CAPTURE_ENV": "sink", "ExportConfigError": "sink", "OtelPlugin": "sink", "OtelSink": "sink",
         "build_otel_plugin": "sink", "build_otel_sink": "sink", "content_gate_open": "sink",
         "build_langfuse_sink": "langfuse"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
