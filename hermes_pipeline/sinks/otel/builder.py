"""The ``opentelemetry`` entry point of the ``hermes_pipeline.sinks`` group.

:func:`.sink.build_otel_sink` keeps its keyword interface; this adapter gives it the sink contract's
``builder(config, ctx)`` shape and carries the section's statement from :mod:`.config`
(``validate_config``, the merge lists). It imports the sink (and with it the OpenTelemetry SDK) only when a
section is built, so finding the entry point and validating a file stay cheap.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from ..base import Sink, SinkContext
from . import config as statement

__all__ = ["OpenTelemetryBuilder", "opentelemetry_builder"]


class OpenTelemetryBuilder:
    """``build_otel_sink`` with the options the ``observability`` component shares (no local files)."""

    list_paths: Final = statement.LIST_PATHS
    """Lists that concatenate (higher layer first) when pipeline files are layered (from :mod:`.config`)."""
    clearable_paths: Final = statement.CLEARABLE_PATHS
    """Of those, the lists an explicitly empty higher-layer value clears."""
    validate_config: Final = staticmethod(statement.validate_config)
    """The section's config statement (:func:`.config.validate_config`)."""

    def __call__(self, config: Mapping[str, Any], ctx: SinkContext) -> Sink:
        from .sink import build_otel_sink

        sink: Sink = build_otel_sink(config, **ctx.builder_options(), environment=profile_environment(ctx))
        if _metrics_enabled(config):  # the metrics SDK is imported only for a section that exports metrics
            from .metrics_sink import with_metrics

            sink = with_metrics(sink, config)
        return sink


def _metrics_enabled(config: Mapping[str, Any]) -> bool:
    """Whether ``with_metrics`` would add the metrics sink (its own test, without importing it)."""
    table = config.get("metrics")
    return isinstance(table, Mapping) and table.get("enabled") is True and config.get("enabled") is True


opentelemetry_builder: Final = OpenTelemetryBuilder()
"""The ``opentelemetry`` entry point."""


def profile_environment(ctx: SinkContext) -> str:
    """The activating profile's ``observability.environment`` (its ``telemetry`` directory is ``ctx.default_dir``):
    the default ``sampling_rate`` of trace endpoints is 1.0 in ``development`` and 0.1 in ``production`` (BOOK-46)."""
    if ctx.default_dir is None:
        return "development"
    from ...config.observability_settings import read_observability

    return read_observability(Path(ctx.default_dir).parent).environment
