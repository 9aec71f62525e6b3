"""The OpenTelemetry sink: scope events → OTLP/HTTP spans (spec 04 §4, §5); Langfuse is one of its destinations.

Laid out as the OpenTelemetry SDK splits it, a processor builds and an exporter transports:

- :mod:`.config`: the one statement of the ``opentelemetry`` section (key tables, merge lists,
  defaults, ``validate_config``) and its parser (``parse_otel_config``); :mod:`.env` the standard
  ``OTEL_*`` variables, :mod:`.urls` the OTLP and Langfuse URL rules;
- :mod:`.sink`: :class:`OtelSink`, the ``opentelemetry`` entry point of the ``hermes_pipeline.sinks``
  group (the scope listener: one event writer feeding the span builder, one span writer per endpoint;
  ``OtelSink.from_config`` builds it from the section, metrics included) and :func:`build_otel_sink`
  (the trace sink with keyword options);
- :mod:`.spans`: the processor, :class:`~.spans.SpanBuilder` (open scopes, sampling, trace grouping,
  a finished scope becomes a span), with one module per projection: :mod:`.genai`, :mod:`.full`,
  :mod:`.openinference` (and :mod:`.attrs`, :mod:`.messages`, :mod:`.errors`, :mod:`.state` they share);
- :mod:`.exporter`: the per-endpoint OTLP/HTTP transport (retries, counters) and :mod:`.proto`, the
  direct protobuf encoder held byte-identical to the SDK's;
- :mod:`.metrics_sink`: the ``metrics`` table's OTLP metrics (:mod:`.metrics_recorder` counts the BOOK-2
  instruments from scope events, :mod:`.metrics_config` parses the table);
- :mod:`.quick_endpoint`: the profile's ``observability.otel_*`` shorthand, one ``gen_ai`` endpoint fed by the
  profile's shared stream (the ``quick_otel`` consumer);
- :mod:`.langfuse`: the Langfuse shorthand, an OTLP ``gen_ai`` endpoint with its credentials.

Stand-alone and worker-process use are the generic :class:`~hermes_pipeline.export.standalone.SinkPlugin`
and :mod:`hermes_pipeline.export.worker`; ``opentelemetry_builder``, ``OtelPlugin`` and
``build_otel_plugin`` are deprecated names kept for existing callers. Every name loads its module on first
use, so that importing the package (or validating a file without an ``opentelemetry`` section) imports
neither the sink nor the OpenTelemetry SDK.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .langfuse import build_langfuse_sink
    from .sink import (
        CAPTURE_ENV, ExportConfigError, OtelPlugin, OtelSink, build_otel_plugin, build_otel_sink, content_gate_open,
    )

    opentelemetry_builder = OtelSink

__all__ = ["CAPTURE_ENV", "ExportConfigError", "OtelPlugin", "OtelSink", "build_langfuse_sink",
           "build_otel_plugin", "build_otel_sink", "content_gate_open", "opentelemetry_builder"]

_LAZY = {"CAPTURE_ENV": ("sink", "CAPTURE_ENV"), "ExportConfigError": ("sink", "ExportConfigError"),
         "OtelPlugin": ("sink", "OtelPlugin"), "OtelSink": ("sink", "OtelSink"),
         "build_otel_plugin": ("sink", "build_otel_plugin"), "build_otel_sink": ("sink", "build_otel_sink"),
         "content_gate_open": ("sink", "content_gate_open"), "build_langfuse_sink": ("langfuse", "build_langfuse_sink"),
         "opentelemetry_builder": ("sink", "OtelSink")}
"""Name → (module, attribute); ``opentelemetry_builder`` (deprecated) was the entry point before :class:`OtelSink`."""


def __getattr__(name: str) -> Any:
    found = _LAZY.get(name)
    if found is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attribute = found
    value = getattr(importlib.import_module(f".{module}", __name__), attribute)
    globals()[name] = value
    return value
