"""The ``opentelemetry`` entry point of the ``hermes_pipeline.sinks`` group.

The OTel sink's own modules (``otel*.py``) keep their ``build_otel_sink`` keyword interface; this
adapter gives it the sink contract's ``builder(config, ctx)`` shape. It moves into the OTel sink's
package when that sink becomes one (``sinks/otel/``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .base import Sink, SinkContext

__all__ = ["opentelemetry_builder"]


def opentelemetry_builder(config: Mapping[str, Any], ctx: SinkContext) -> Sink:
    """``build_otel_sink`` with the options the ``observability`` component shares (no local files)."""
    from .otel import build_otel_sink

    sink: Sink = build_otel_sink(config, **ctx.builder_options())
    return sink
