"""Key tables of the ``observability`` component (spec 03 §7, spec 04 FMT-3, §2.16, §3.12, §4.7)."""

from __future__ import annotations

from typing import Any, Final

from ..config.checks import (
    Check, array, boolean, integer, nonblank, number, one_of, str_list, str_map, string, table,
)
from ..config.policy import LEVELS
from ..export.worker import check_worker


def basic_auth(value: Any) -> str | None:
    """``{username = "<ENV>", password = "<ENV>"}``."""
    if isinstance(value, dict) and set(value) == {"username", "password"} and \
            all(isinstance(v, str) and v.strip() for v in value.values()):
        return None
    return "expected a table with the environment variable names 'username' and 'password'"


def attribute_mappings(value: Any) -> str | None:
    """An array of ``{key, alias}`` string tables."""
    if isinstance(value, list) and all(
            isinstance(m, dict) and set(m) == {"key", "alias"} and all(isinstance(v, str) for v in m.values())
            for m in value):
        return None
    return "expected an array of {key, alias} tables of strings"


_PROJECTION: Final = one_of("full", "gen_ai", "openinference")


def trace_type(value: Any) -> str | None:
    """The projection of a trace endpoint; the natural guess ``langfuse`` says how Langfuse is configured."""
    if value == "langfuse":
        return ("expected one of 'full', 'gen_ai', 'openinference'; Langfuse is a 'gen_ai' endpoint whose endpoint "
                "is '<host>/api/public/otel/v1/traces', with basic_auth_env = {username = \"LANGFUSE_PUBLIC_KEY\", "
                "password = \"LANGFUSE_SECRET_KEY\"} (hermes-pipeline config init --template langfuse)")
    return _PROJECTION(value)


TOP: Final[dict[str, Check]] = {
    "version": integer(), "enable_full_payloads": boolean, "content_summary": one_of("preview", "digest", "off"),
    "atof": table, "atif": table, "opentelemetry": table, "policy": table,
    "redact_credentials": boolean,
}
"""Top-level keys. ``redact_credentials`` (hermes_pipeline extension, default true) is the one switch that turns
the exporters' credential scrubber off (spec 04 FMT-33a); every activation with it false logs a WARNING."""
POLICY: Final[dict[str, Check]] = {"unknown_field": one_of(*LEVELS), "unsupported_value": one_of(*LEVELS)}

WORKER: Final = check_worker
"""A section's ``worker`` key (hermes_pipeline extension): export on threads, in a child process of its
own (``process``) or in one shared by the sections naming it (``process:NAME``)."""
OTEL: Final[dict[str, Check]] = {
    "enabled": boolean, "sampling_rate": number(0, 1), "always_sample_errors": boolean, "endpoints": array,
    "traces": array, "logs": table, "metrics": table, "file_sinks": array, "worker": WORKER,
}
SIGNAL_ENDPOINT: Final[dict[str, Check]] = {
    "endpoint": nonblank, "transport": one_of("http_binary", "http_json", "grpc"), "headers": str_map,
    "header_env": str_map, "resource_attributes": str_map, "service_name": string, "service_namespace": string,
    "service_version": string, "instrumentation_scope": string, "timeout_millis": integer(1),
}
TRACE_ENDPOINT: Final[dict[str, Check]] = {
    **SIGNAL_ENDPOINT, "type": trace_type, "agent_name": string,
    "max_queue_size": integer(1), "max_export_batch_size": integer(1), "scheduled_delay_millis": integer(1),
    "basic_auth_env": basic_auth, "derive_signals": boolean, "mark_projection": one_of("inherit", "event", "tool"),
    "mark_exclude_names": str_list, "attribute_mappings": attribute_mappings, "promote_metadata_prefixes": str_list,
    "trace_grouping": one_of("turn", "session"),
}
LOGS: Final[dict[str, Check]] = {
    "enabled": boolean, "endpoints": array,
    "minimum_severity": one_of("trace", "debug", "info", "warn", "warning", "error"),
    "max_queue_size": integer(1), "max_export_batch_size": integer(1), "scheduled_delay_millis": integer(1),
}
METRICS: Final[dict[str, Check]] = {
    "enabled": boolean, "endpoints": array, "export_interval_millis": integer(1),
    "temporality": one_of("cumulative", "delta", "low_memory"), "max_instruments": integer(1),
    "cardinality_limit": integer(1), "include_skill_names": boolean,
}
OTEL_FILE_SINK: Final[dict[str, Check]] = {
    "type": one_of("file"), "output_directory": string, "filename": nonblank, "format": one_of("json_lines"),
    "retention_days": integer(1),
}

BSP_ENV: Final = {
    "max_queue_size": ("OTEL_BSP_MAX_QUEUE_SIZE", 10000),
    "max_export_batch_size": ("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512),
    "scheduled_delay_millis": ("OTEL_BSP_SCHEDULE_DELAY", 5000),
}
"""Batch settings: key → (environment variable, default) (04 FMT-73)."""

OTLP_HEADER_VARS: Final = (
    "OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
    "OTEL_EXPORTER_OTLP_LOGS_HEADERS", "OTEL_EXPORTER_OTLP_METRICS_HEADERS",
)
"""Process-global header variables that are never applied (04 FMT-72)."""
