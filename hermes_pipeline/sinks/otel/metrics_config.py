"""The ``[components.config.opentelemetry.metrics]`` table.

Keys: ``enabled`` (default false), ``endpoints`` (tables with ``endpoint`` — an OTLP/HTTP base URL,
``/v1/metrics`` appended unless the URL already ends with it — and optional ``headers``),
``export_interval_millis`` (default 60000), ``temporality`` (``cumulative``, the default,
``delta``, or ``low_memory``: delta for counters and histograms), ``include_skill_names`` (default false: skill names are left out of
``hermes.agent.skill.runs`` because they may be private), ``max_instruments`` and
``cardinality_limit`` (accepted; the SDK's own limits apply).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit

from ...export.errors import ExportConfigError

DEFAULT_INTERVAL_MS: Final = 60_000
TEMPORALITIES: Final = ("cumulative", "delta", "low_memory")


@dataclass(frozen=True)
class MetricsEndpoint:
    """One OTLP/HTTP metrics destination."""

    url: str
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class MetricsConfig:
    """The parsed ``metrics`` table."""

    enabled: bool = False
    endpoints: tuple[MetricsEndpoint, ...] = ()
    export_interval_millis: int = DEFAULT_INTERVAL_MS
    temporality: str = "cumulative"
    include_skill_names: bool = False


def metrics_url(base: str) -> str:
    """The ``/v1/metrics`` URL of an OTLP/HTTP base URL (kept when it already names it)."""
    url = base.rstrip("/")
    return url if url.endswith("/v1/metrics") else url + "/v1/metrics"


def parse_metrics_config(section: Mapping[str, Any] | None, default_endpoint: str | None = None) -> MetricsConfig:
    """Validate the ``metrics`` table; ``default_endpoint`` (a base URL) is used when it lists none.

    Raises:
        ExportConfigError: naming the offending key.
    """
    if not section:
        return MetricsConfig()
    path = "opentelemetry.metrics"
    enabled = section.get("enabled", False)
    if not isinstance(enabled, bool):
        raise ExportConfigError(f"{path}.enabled", "expected true or false")
    interval = section.get("export_interval_millis", DEFAULT_INTERVAL_MS)
    if isinstance(interval, bool) or not isinstance(interval, int) or interval <= 0:
        raise ExportConfigError(f"{path}.export_interval_millis", "expected an integer > 0 (milliseconds)")
    temporality = section.get("temporality", "cumulative")
    if temporality not in TEMPORALITIES:
        raise ExportConfigError(f"{path}.temporality", "expected 'cumulative', 'delta' or 'low_memory'")
    names = section.get("include_skill_names", False)
    if not isinstance(names, bool):
        raise ExportConfigError(f"{path}.include_skill_names", "expected true or false")
    raw = section.get("endpoints", [])
    if not isinstance(raw, list | tuple):
        raise ExportConfigError(f"{path}.endpoints", "expected an array of tables")
    endpoints: list[MetricsEndpoint] = []
    for index, entry in enumerate(raw):
        where = f"{path}.endpoints[{index}]"
        if not isinstance(entry, Mapping) or not isinstance(entry.get("endpoint"), str):
            raise ExportConfigError(f"{where}.endpoint", "expected a table with an http(s) 'endpoint'")
        parts = urlsplit(entry["endpoint"])
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ExportConfigError(f"{where}.endpoint", "expected an http:// or https:// URL")
        if entry.get("transport", "http_binary") != "http_binary":
            raise ExportConfigError(f"{where}.transport", "only http_binary (OTLP/HTTP protobuf) is exported")
        headers = dict(entry.get("headers", {}))
        header_env = entry.get("header_env", {})
        if not isinstance(header_env, Mapping):
            raise ExportConfigError(f"{where}.header_env", "expected a table of header name to variable name")
        for name, variable in header_env.items():  # secrets stay in the environment
            if os.environ.get(str(variable)):
                headers[str(name)] = os.environ[str(variable)]
        if any(not isinstance(v, str) for v in headers.values()):
            raise ExportConfigError(f"{where}.headers", "expected a table of string values")
        endpoints.append(MetricsEndpoint(metrics_url(entry["endpoint"]),
                                         tuple(sorted((str(k), v) for k, v in headers.items()))))
    if enabled and not endpoints and default_endpoint:
        endpoints.append(MetricsEndpoint(metrics_url(default_endpoint)))
    if enabled and not endpoints:
        raise ExportConfigError(f"{path}.endpoints", "enabled metrics need at least one endpoint, e.g. "
                                "[[components.config.opentelemetry.metrics.endpoints]] endpoint = "
                                "\"http://localhost:4318\"")
    return MetricsConfig(enabled, tuple(endpoints), interval, str(temporality), names)
