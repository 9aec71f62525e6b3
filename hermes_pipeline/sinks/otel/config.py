"""The one statement of the ``opentelemetry`` section and its parser (spec 04 §4.7-§4.9, FMT-57, FMT-71..FMT-78).

Over 400 lines for a reason: like ``sinks/atof/config.py`` and ``sinks/atif/config.py`` this module is the
section's whole statement in one place (key tables, merge lists, defaults, the parser activation runs and
:func:`validate_config`, which ``config validate`` runs), so that nothing else states an OTel key.

:func:`parse_otel_config` turns a plain mapping into a typed :class:`OtelConfig` or raises
:class:`~hermes_pipeline.export.errors.ExportConfigError` naming the key path. Structural problems
(a table of the wrong type, unknown keys, two trace endpoints of different ``type`` on one
destination) always raise. An invalid value inside one ``endpoints[]`` entry (bad URL, unsupported
``transport``, unusable header reference, ``max_export_batch_size`` above ``max_queue_size``)
raises too, unless ``on_invalid = "skip"``, which skips only that entry with the warning
``observability.endpoint_skipped`` (FMT-73).

This build exports traces over OTLP/HTTP protobuf (``transport = "http_binary"``), and metrics
through :mod:`.metrics_sink` when the ``metrics`` table is enabled. The ``logs`` and
``file_sinks`` tables are validated but refused when they would export something, with an error
saying so. Messages name keys, header names and environment-variable names, never
a URL, a header value or a credential. The standard ``OTEL_*`` variables fill in what the table leaves
unset (:mod:`.env` states the precedence).
"""

from __future__ import annotations

import base64
import logging
import os
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

from ...export.config_checks import EntryError as _EntryError
from ...export.config_checks import entry_headers
from ...export.config_checks import is_int as _is_int
from ...export.errors import ExportConfigError
from ...export.config_checks import check_on_invalid, check_table, destination_key, refuse_entry
from ...config.checks import (
    Check, array, boolean, check_keys, integer, nonblank, number, one_of, str_list, str_map, string, table, url,
)
from ...config.keypath import KeyPath
from ...config.policy import ValidationContext
from ...export.entry_checks import check_entry, table_entries
from ...export.worker.protocol import check_worker
from .env import OtlpEnv, read_otlp_env, warn_once
from .urls import URLError, is_langfuse_url, traces_url

logger: Final = logging.getLogger("hermes_pipeline.sinks.otel")

# ----------------------------------------------------------------- the one statement of the opentelemetry keys
# The validator (validate_config), the parser below, the layer merge (LIST_PATHS, CLEARABLE_PATHS) and the docs
# generator all read these tables; tests/test_layering.py fails if a second copy appears anywhere else.


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


PROJECTIONS: Final = ("gen_ai", "full", "openinference")
_PROJECTION: Final = one_of("full", "gen_ai", "openinference")


def trace_type(value: Any) -> str | None:
    """The projection of a trace endpoint; the natural guess ``langfuse`` says how Langfuse is configured."""
    if value == "langfuse":
        return ("expected one of 'full', 'gen_ai', 'openinference'; Langfuse is a 'gen_ai' endpoint whose endpoint "
                "is '<host>/api/public/otel/v1/traces', with basic_auth_env = {username = \"LANGFUSE_PUBLIC_KEY\", "
                "password = \"LANGFUSE_SECRET_KEY\"} (hermes-pipeline config init --template langfuse)")
    return _PROJECTION(value)


KEYS: Final[dict[str, Check]] = {
    "enabled": boolean, "sampling_rate": number(0, 1), "always_sample_errors": boolean, "endpoints": array,
    "traces": array, "logs": table, "metrics": table, "file_sinks": array, "worker": check_worker,
    "ids": one_of("random", "uuid"), "propagate_traceparent": boolean,
}
"""The ``opentelemetry`` table's keys and their checks (``traces``: an alias of ``endpoints``; ``worker``: a
hermes_pipeline extension, see :mod:`hermes_pipeline.export.worker`)."""
REMOVED_KEYS: Final[tuple[str, ...]] = ()
"""Keys of earlier versions that are refused: none for this section."""
SIGNAL_ENDPOINT: Final[dict[str, Check]] = {
    "endpoint": nonblank, "transport": one_of("http_binary", "http_json", "grpc"), "headers": str_map,
    "header_env": str_map, "resource_attributes": str_map, "service_name": string, "service_namespace": string,
    "service_version": string, "instrumentation_scope": string, "timeout_millis": integer(1),
}
"""Keys of a ``logs.endpoints[]`` / ``metrics.endpoints[]`` entry."""
TRACE_ENDPOINT: Final[dict[str, Check]] = {
    **SIGNAL_ENDPOINT, "type": trace_type, "agent_name": string,
    "max_queue_size": integer(1), "max_export_batch_size": integer(1), "scheduled_delay_millis": integer(1),
    "basic_auth_env": basic_auth, "derive_signals": boolean, "mark_projection": one_of("inherit", "event", "tool"),
    "mark_exclude_names": str_list, "attribute_mappings": attribute_mappings, "promote_metadata_prefixes": str_list,
    "trace_grouping": one_of("turn", "session"), "compression": one_of("none", "gzip"),
    "export_timeout_millis": integer(1),
}
"""Keys of an ``endpoints[]`` entry (a trace endpoint, Langfuse included)."""
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
FILE_SINK: Final[dict[str, Check]] = {
    "type": one_of("file"), "output_directory": string, "filename": nonblank, "format": one_of("json_lines"),
    "retention_days": integer(1),
}
"""Keys of a ``file_sinks[]`` entry (validated, refused when enabled: not implemented by this build)."""
LIST_PATHS: Final = (("endpoints",), ("logs", "endpoints"), ("metrics", "endpoints"))
"""Lists that concatenate (higher layer first) when pipeline files are layered; other lists replace."""
CLEARABLE_PATHS: Final = (("logs", "endpoints"), ("metrics", "endpoints"))
"""Of those, the lists an explicitly empty higher-layer value clears."""

TOP_KEYS: Final = frozenset(KEYS) - {"worker"}
"""What the parser accepts (``worker`` is taken off by the builder before parsing)."""
ENDPOINT_KEYS: Final = frozenset(TRACE_ENDPOINT)
SIGNAL_KEYS: Final = {"logs": frozenset(LOGS), "metrics": frozenset(METRICS)}
LANGFUSE_VERSION_HEADER: Final = "x-langfuse-ingestion-version"
TRACE_GROUPINGS: Final = ("turn", "session")
"""``trace_grouping``: one trace per turn (the default; backends show a trace as one exchange) or one per
session (NeMo Relay's shape)."""
SUPPORTED_TRANSPORTS: Final = ("http_binary", "http_json")
BSP_ENV: Final = {
    "max_queue_size": ("OTEL_BSP_MAX_QUEUE_SIZE", 10_000),
    "max_export_batch_size": ("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512),
    "scheduled_delay_millis": ("OTEL_BSP_SCHEDULE_DELAY", 5000),
}
"""Batch settings: key → (environment variable, default); precedence key > environment > default (FMT-73)."""

GLOBAL_HEADER_VARS: Final = ("OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
                             "OTEL_EXPORTER_OTLP_LOGS_HEADERS", "OTEL_EXPORTER_OTLP_METRICS_HEADERS")
"""Process-global header variables, never applied to the endpoints a pipeline file lists (FMT-72)."""
SAMPLING_DEFAULTS: Final = {"development": 1.0, "production": 0.1}
_warned_global_headers = False


@dataclass(frozen=True)
class TraceEndpoint:
    """One resolved ``endpoints[]`` entry; ``headers`` already hold the ``header_env`` / ``basic_auth_env`` values."""

    index: int
    type: str
    url: str
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    transport: str = "http_binary"
    service_name: str = "hermes-agent"
    service_namespace: str | None = None
    service_version: str | None = None
    instrumentation_scope: str = "hermes_pipeline"
    agent_name: str = "hermes"
    timeout_millis: int = 10_000
    """One request's timeout (the OTLP exporter specification's default, 10 s; ``OTEL_EXPORTER_OTLP_TIMEOUT``)."""
    export_timeout_millis: int = 30_000
    """One batch's export, retries included (``OTEL_BSP_EXPORT_TIMEOUT``, default 30 s): a request that times out
    or gets 429/502/503/504 is retried with exponential backoff (``Retry-After`` honoured) within it."""
    compression: str = "none"
    """``gzip`` or ``none`` (``OTEL_EXPORTER_OTLP_[TRACES_]COMPRESSION``)."""
    max_queue_size: int = 10_000
    max_export_batch_size: int = 512
    scheduled_delay_millis: int = 5000
    resource_attributes: Mapping[str, str] = field(default_factory=dict)
    derive_signals: bool = True
    mark_projection: str = "event"
    mark_exclude_names: tuple[str, ...] = ("llm.chunk",)
    attribute_mappings: tuple[tuple[str, str], ...] = ()
    promote_metadata_prefixes: tuple[str, ...] = ()
    trace_grouping: str = "turn"
    """``turn``: one trace per turn rooted at its ``agent.run`` span, no session span; ``session``: one trace
    per session segment rooted at the session span."""
    langfuse: bool = False
    """The URL is a Langfuse OTLP ingestion path (FMT-77: ``session.id`` on every span)."""
    source: str | None = None
    """The environment variable the endpoint came from, when the pipeline file lists none."""

    @property
    def label(self) -> str:
        """``opentelemetry.endpoints[i]`` (or the ``OTEL_*`` variable it came from): how logs name this
        endpoint (never the URL)."""
        return self.source or f"opentelemetry.endpoints[{self.index}]"

    def describe(self) -> str:
        """``gen_ai → http://host:port/path`` without userinfo, query or fragment (for humans, not logs)."""
        parts = urlsplit(self.url)
        netloc = parts.hostname or ""
        if parts.port is not None:
            netloc = f"{netloc}:{parts.port}"
        kind = "langfuse " if self.langfuse else ""
        return f"{kind}{self.type} → {urlunsplit((parts.scheme, netloc, parts.path, '', ''))}"


@dataclass(frozen=True)
class OtelConfig:
    """The validated ``opentelemetry`` table."""

    enabled: bool = False
    sampling_rate: float = 1.0
    always_sample_errors: bool = False
    endpoints: tuple[TraceEndpoint, ...] = ()
    skipped: tuple[tuple[str, str], ...] = ()
    """``(key path, reason)`` of entries skipped with ``on_invalid = "skip"``."""
    disabled_by: str | None = None
    """``OTEL_SDK_DISABLED`` when that variable switched an enabled section off (nothing is exported)."""
    ids: str = "random"
    """``random`` (default): random trace and span ids, as W3C Trace Context and the SDK want (FMT-56b as
    decided in issue #30); ``uuid``: derived from the scope UUIDs (FMT-56 as written, reproducible ids)."""
    propagate_traceparent: bool = True
    """Hosts add ``traceparent`` to their provider requests (``Turn.trace_headers()``), so provider-side and
    HTTP-client spans join the turn's trace."""
    parent_based: bool = True
    """A turn inside the application's trace follows the parent's sampled flag (the SDK's default sampler is
    ``parentbased_always_on``); ``False`` when ``OTEL_TRACES_SAMPLER`` names ``always_on``, ``always_off`` or
    ``traceidratio``, which ignore the parent."""


def _int(entry: Mapping[str, Any], key: str, default: int) -> int:
    if key not in entry:
        return default
    value = entry[key]
    if not _is_int(value) or value < 1:
        raise _EntryError(key, "expected an integer >= 1")
    return int(value)


def _bsp(entry: Mapping[str, Any], key: str) -> int:
    """Endpoint key, else the ``OTEL_BSP_*`` variable (malformed → default), else the default (FMT-73)."""
    name, default = BSP_ENV[key]
    if key in entry:
        return _int(entry, key, default)
    try:
        value = int(os.environ.get(name, "").strip())
    except ValueError:
        return default
    return value if value >= 1 else default


def _string(entry: Mapping[str, Any], key: str, default: str | None) -> str | None:
    value = entry.get(key, default)
    if value is not None and not isinstance(value, str):
        raise _EntryError(key, "expected a string")
    return value


def _string_map(entry: Mapping[str, Any], key: str) -> dict[str, str]:
    value = entry.get(key, {})
    if not isinstance(value, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise _EntryError(key, "expected a table of strings")
    return dict(value)


def _string_list(entry: Mapping[str, Any], key: str, default: tuple[str, ...]) -> tuple[str, ...]:
    value = entry.get(key, default)
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise _EntryError(key, "expected an array of strings")
    return tuple(value)


def _basic_auth(entry: Mapping[str, Any]) -> str | None:
    spec = entry.get("basic_auth_env")
    if spec is None:
        return None
    if not isinstance(spec, Mapping) or set(spec) != {"username", "password"} or \
            not all(isinstance(v, str) and v.strip() for v in spec.values()):
        raise _EntryError("basic_auth_env", "expected {username = \"<ENV VAR>\", password = \"<ENV VAR>\"} naming "
                                            "two environment variables")
    values = []
    for part in ("username", "password"):
        variable = spec[part]
        value = os.environ.get(variable, "")
        if not value.strip():
            raise _EntryError(f"basic_auth_env.{part}", f"environment variable {variable!r} is unset or blank")
        values.append(value)
    token = base64.b64encode(f"{values[0]}:{values[1]}".encode()).decode("ascii")
    return f"Basic {token}"


def _headers(entry: Mapping[str, Any], langfuse: bool, extra: Mapping[str, str]) -> dict[str, str]:
    headers = _string_map(entry, "headers")
    header_env = _string_map(entry, "header_env")
    if langfuse and any(k.lower() == "authorization" for k in headers):  # FMT-76: credentials only from env
        raise _EntryError("headers", "Langfuse credentials must come from the environment: use basic_auth_env = "
                                     "{username = \"LANGFUSE_PUBLIC_KEY\", password = \"LANGFUSE_SECRET_KEY\"} "
                                     "or header_env, never a literal Authorization header")
    resolved = {**extra, **entry_headers(headers, header_env)}
    auth = _basic_auth(entry)
    if auth is not None:
        if any(k.lower() == "authorization" for k in resolved):
            raise _EntryError("basic_auth_env", "an Authorization header is also set in 'headers' or 'header_env'; "
                                                "keep only one of them")
        resolved["Authorization"] = auth
    if langfuse:
        if not any(k.lower() == "authorization" for k in resolved):
            raise _EntryError("basic_auth_env", "a Langfuse endpoint needs credentials: basic_auth_env = "
                                                "{username = \"LANGFUSE_PUBLIC_KEY\", password = \"LANGFUSE_SECRET_KEY\"}")
        if not any(k.lower() == LANGFUSE_VERSION_HEADER for k in resolved):  # FMT-77: default version header
            resolved[LANGFUSE_VERSION_HEADER] = "4"
    return resolved


def _mappings(entry: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    value = entry.get("attribute_mappings", [])
    if not isinstance(value, list | tuple) or not all(
            isinstance(m, Mapping) and set(m) == {"key", "alias"} and all(isinstance(v, str) and v for v in m.values())
            for m in value):
        raise _EntryError("attribute_mappings", "expected an array of {key, alias} tables of non-empty strings")
    return tuple((m["key"], m["alias"]) for m in value)


def _compression(entry: Mapping[str, Any], env: OtlpEnv) -> str:
    value = entry.get("compression", env.compression)
    if value not in ("none", "gzip"):
        raise _EntryError("compression", "expected 'gzip' or 'none'")
    return str(value)


def grpc_available() -> bool:
    """Whether the OTLP gRPC exporter (the ``grpc`` extra) is installed."""
    import importlib.util

    try:
        return importlib.util.find_spec("opentelemetry.exporter.otlp.proto.grpc") is not None
    except (ImportError, ValueError):
        return False


def _grpc_url(entry: Mapping[str, Any]) -> str:
    """A gRPC endpoint: ``http(s)://host:port`` used as given (no path is appended; ``http`` = plaintext)."""
    _url(entry)  # the same URL checks (scheme, host, no credentials)
    return str(entry["endpoint"]).strip().rstrip("/")


def _url(entry: Mapping[str, Any]) -> str:
    try:
        return traces_url(entry.get("endpoint"))
    except URLError as exc:
        raise _EntryError(exc.key, exc.message) from None


def _endpoint(index: int, entry: Mapping[str, Any], env: OtlpEnv, extra_headers: Mapping[str, str] | None = None,
              source: str | None = None) -> TraceEndpoint:
    kind = entry.get("type")
    if kind not in PROJECTIONS:
        raise _EntryError("type", "is required: 'gen_ai', 'full' or 'openinference'")
    transport = entry.get("transport", "http_binary")
    if transport not in ("http_binary", "http_json", "grpc"):
        raise _EntryError("transport", "expected 'http_binary', 'http_json' or 'grpc'")
    if transport == "grpc" and not grpc_available():
        raise _EntryError("transport", "transport 'grpc' needs the OTLP gRPC exporter: pip install "
                                       "'hermes_pipeline[grpc]' (opentelemetry-exporter-otlp-proto-grpc)")
    url = _url(entry) if transport != "grpc" else _grpc_url(entry)
    langfuse = is_langfuse_url(url)
    if langfuse and kind != "gen_ai":
        raise _EntryError("type", "Langfuse ingests the gen_ai projection; set type = 'gen_ai' (FMT-75)")
    derive = entry.get("derive_signals", not langfuse)
    if not isinstance(derive, bool):
        raise _EntryError("derive_signals", "expected true or false")
    queue = _bsp(entry, "max_queue_size")
    batch = _bsp(entry, "max_export_batch_size")
    if batch > queue:
        raise _EntryError("max_export_batch_size", "must not exceed max_queue_size")
    grouping = entry.get("trace_grouping", "turn")
    if grouping not in TRACE_GROUPINGS:
        raise _EntryError("trace_grouping", "expected 'turn' (one trace per turn) or 'session' (one trace per "
                                            "session)")
    marks = entry.get("mark_projection", "inherit")
    if marks not in ("inherit", "event", "tool"):
        raise _EntryError("mark_projection", "expected 'inherit', 'event' or 'tool'")
    # the file's resource attributes win one by one over OTEL_RESOURCE_ATTRIBUTES, its service_name over
    # OTEL_SERVICE_NAME, which wins over the service.name of OTEL_RESOURCE_ATTRIBUTES
    resource = {**{k: v for k, v in env.resource_attributes.items() if k != "service.name"},
                **_string_map(entry, "resource_attributes")}
    service = env.service() or "hermes-agent"
    return TraceEndpoint(
        index=index, type=str(kind), url=url, headers=_headers(entry, langfuse, extra_headers or {}),
        transport=str(transport), source=source,
        service_name=_string(entry, "service_name", service) or service,
        service_namespace=_string(entry, "service_namespace", None),
        service_version=_string(entry, "service_version", None),
        instrumentation_scope=_string(entry, "instrumentation_scope", "hermes_pipeline") or "hermes_pipeline",
        agent_name=_string(entry, "agent_name", "hermes") or "hermes",
        timeout_millis=_int(entry, "timeout_millis", env.timeout_millis), max_queue_size=queue,
        max_export_batch_size=batch, compression=_compression(entry, env),
        export_timeout_millis=_int(entry, "export_timeout_millis", env.export_timeout_millis),
        scheduled_delay_millis=_bsp(entry, "scheduled_delay_millis"), resource_attributes=resource,
        derive_signals=derive, mark_projection="event" if marks == "inherit" else str(marks),
        mark_exclude_names=_string_list(entry, "mark_exclude_names", ("llm.chunk",)),
        attribute_mappings=_mappings(entry),
        promote_metadata_prefixes=_string_list(entry, "promote_metadata_prefixes", ()), langfuse=langfuse,
        trace_grouping=str(grouping),
    )


def _refuse_signal(config: Mapping[str, Any], signal: str, ignore_unknown_keys: bool) -> str | None:
    """Validate the ``logs`` / ``metrics`` table; the reason it cannot run here, or ``None`` when it is off."""
    section = config.get(signal)
    if section is None:
        return None
    section = check_table(section, f"opentelemetry.{signal}", SIGNAL_KEYS[signal],
                          ignore_unknown_keys=ignore_unknown_keys)
    enabled = section.get("enabled", False)
    if not isinstance(enabled, bool):
        raise ExportConfigError(f"opentelemetry.{signal}.enabled", "expected true or false")
    if enabled and signal == "metrics":  # exported by the metrics sink (metrics_sink.py), not refused
        from .metrics_config import parse_metrics_config

        parse_metrics_config(section, "http://localhost:4318")
        return None
    if enabled:
        return (f"OTLP {signal} export is not implemented by this build (traces only); set "
                f"opentelemetry.{signal}.enabled = false or remove the table")
    return None


def warn_global_headers(applied: Collection[str] = ()) -> None:
    """FMT-72: one warning per process when the process-global OTLP header variables are set but not used.

    They never apply to the endpoints listed in a pipeline file (they cannot be scoped to one endpoint),
    only to the endpoint taken from ``OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT`` when the file lists none;
    ``applied`` names the variables that endpoint used. The ``observability`` component already warns
    at activation; stand-alone builders call this.
    """
    global _warned_global_headers
    names = [name for name in GLOBAL_HEADER_VARS if os.environ.get(name) and name not in applied]
    if names and not _warned_global_headers:
        _warned_global_headers = True
        logger.warning("hermes_pipeline: %s set in the environment but never applied to the OTLP endpoints of the "
                       "pipeline file (they cannot be scoped to one endpoint; they apply only to the endpoint of "
                       "OTEL_EXPORTER_OTLP_ENDPOINT when the file lists none); use the endpoint's 'headers' or "
                       "'header_env' instead", ", ".join(names))


def _ids(value: Any) -> str:
    if value not in ("random", "uuid"):
        raise ExportConfigError("opentelemetry.ids", "expected 'random' (random trace and span ids, the default) or "
                                "'uuid' (ids derived from the scope UUIDs)")
    return str(value)


def parse_otel_config(config: Mapping[str, Any], *, on_invalid: str = "raise", ignore_unknown_keys: bool = False,
                      environment: str = "development", env: OtlpEnv | None = None) -> OtelConfig:
    """Validate and resolve an ``opentelemetry`` table (see the module docstring).

    Args:
        config: the ``[components.config.opentelemetry]`` mapping.
        on_invalid: ``"raise"`` (default) or ``"skip"`` for invalid values inside one endpoint entry
            and for sections this build cannot run.
        ignore_unknown_keys: accept unknown keys (the caller applied its own unknown-field policy).
        environment: ``development`` or ``production``: the default ``sampling_rate`` (BOOK-46).
        env: the ``OTEL_*`` variables (:func:`~.env.read_otlp_env` of the process by default);
            the file wins where both set something (see :mod:`.env` for the precedence).

    Raises:
        ExportConfigError: naming the offending key path.
    """
    check_on_invalid(on_invalid)
    env = read_otlp_env() if env is None else env
    if environment not in SAMPLING_DEFAULTS:
        raise ValueError("environment must be 'development' or 'production'")
    config = check_table(config, "opentelemetry", TOP_KEYS, ignore_unknown_keys=ignore_unknown_keys)
    enabled = config.get("enabled", False)
    if not isinstance(enabled, bool):
        raise ExportConfigError("opentelemetry.enabled", "expected true or false")
    # sampling_rate in the file, else the OTEL_TRACES_SAMPLER choice, else the profile environment's default
    rate = config.get("sampling_rate", SAMPLING_DEFAULTS[environment] if env.sampling_rate is None
                      else env.sampling_rate)
    if isinstance(rate, bool) or not isinstance(rate, int | float) or not 0.0 <= rate <= 1.0:
        raise ExportConfigError("opentelemetry.sampling_rate", "expected a number between 0 and 1")
    always = config.get("always_sample_errors", False)
    if not isinstance(always, bool):
        raise ExportConfigError("opentelemetry.always_sample_errors", "expected true or false")
    ids = _ids(config.get("ids", "random"))
    propagate = config.get("propagate_traceparent", True)
    if not isinstance(propagate, bool):
        raise ExportConfigError("opentelemetry.propagate_traceparent", "expected true or false")
    if "traces" in config and "endpoints" in config:
        raise ExportConfigError("opentelemetry.traces", "'traces' is an alias of 'endpoints'; use only one of them")
    key = "traces" if "traces" in config else "endpoints"
    entries = config.get(key, [])
    if not isinstance(entries, list | tuple):
        raise ExportConfigError(f"opentelemetry.{key}", "expected an array of tables")
    skipped: list[tuple[str, str]] = []

    for signal in ("logs", "metrics"):
        reason = _refuse_signal(config, signal, ignore_unknown_keys)
        if reason is not None and enabled:
            refuse_entry(logger, f"opentelemetry.{signal}", reason, on_invalid, skipped)
    file_sinks = config.get("file_sinks", [])
    if not isinstance(file_sinks, list | tuple):
        raise ExportConfigError("opentelemetry.file_sinks", "expected an array of tables")
    if file_sinks and enabled:
        refuse_entry(logger, "opentelemetry.file_sinks", "OTLP JSON file sinks are not implemented by this build; "
                     "use an ATOF file sink for local files, or remove opentelemetry.file_sinks", on_invalid, skipped)
    if enabled:
        for warning in env.warnings:
            warn_once(warning)
    env_disabled = None
    if enabled and not entries and env.endpoint_problem is not None:
        # a bad OTEL_* value disables only the OTLP destination it configures, never the section's load nor the
        # other sinks of the pipeline: warned, named by its variable, and the section exports nothing
        variable = str(env.endpoint_variable)
        if on_invalid == "raise":
            raise ExportConfigError(variable, env.endpoint_problem)
        skipped.append((variable, env.endpoint_problem))
        warn_once(f"{env.endpoint_problem}; the OTLP destination from the environment is disabled (the other "
                  "sinks are not affected)")
        env_disabled = variable
    elif enabled and not entries and env.endpoint is None:
        if on_invalid == "raise":
            raise ExportConfigError(f"opentelemetry.{key}", "an enabled opentelemetry section needs at least one "
                                    "trace endpoint, e.g. [[components.config.opentelemetry.endpoints]] type = "
                                    "\"gen_ai\" (or OTEL_EXPORTER_OTLP_ENDPOINT in the environment)")
        # FMT-73: every entry was skipped upstream; never a load failure, the section exports nothing
        logger.warning("hermes_pipeline: opentelemetry is enabled but has no usable trace endpoint; it exports "
                       "nothing")
    endpoints: list[TraceEndpoint] = []
    seen: dict[tuple[str, ...], tuple[str, int]] = {}
    for index, entry in enumerate(entries):
        path = f"opentelemetry.{key}[{index}]"
        if not isinstance(entry, Mapping):
            raise ExportConfigError(path, "expected a table")
        extra = sorted(str(k) for k in entry if k not in ENDPOINT_KEYS)
        if extra and not ignore_unknown_keys:
            raise ExportConfigError(f"{path}.{extra[0]}", f"unknown key for a trace endpoint; valid keys: "
                                    f"{', '.join(sorted(ENDPOINT_KEYS))}")
        try:
            endpoint = _endpoint(index, entry, env)
        except _EntryError as exc:
            refuse_entry(logger, f"{path}.{exc.key}", exc.message, on_invalid, skipped)
            continue
        dest = destination_key(endpoint.url)
        other = seen.setdefault(dest, (endpoint.type, index))
        if other[0] != endpoint.type:  # FMT-57: trace endpoints of different types never share a destination
            raise ExportConfigError(path, f"shares its destination with opentelemetry.{key}[{other[1]}] but has a "
                                    "different type; their trace and span IDs would collide. Send each projection "
                                    "to its own destination")
        endpoints.append(endpoint)
    if enabled and not entries and env.endpoint is not None:
        # the file lists no trace endpoint: the one of OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT, with the
        # headers of OTEL_EXPORTER_OTLP_(TRACES_)HEADERS (never applied to endpoints listed in the file)
        try:
            endpoints.append(_endpoint(0, {"type": "gen_ai", "endpoint": env.endpoint, "transport": env.transport,
                                           "timeout_millis": env.timeout_millis}, env, env.headers,
                                       env.endpoint_variable))
        except _EntryError as exc:
            refuse_entry(logger, str(env.endpoint_variable), exc.message, on_invalid, skipped)
    disabled_by = env_disabled
    if enabled and env.sdk_disabled:
        disabled_by = "OTEL_SDK_DISABLED"
        warn_once("OTEL_SDK_DISABLED=true: OpenTelemetry export is off, no span is exported (ATOF and ATIF "
                  "files are not affected)")
    return OtelConfig(enabled=enabled and disabled_by is None, sampling_rate=float(rate),
                      always_sample_errors=always, endpoints=tuple(endpoints), skipped=tuple(skipped),
                      disabled_by=disabled_by, ids=ids, propagate_traceparent=propagate,
                      parent_based=env.sampler is None or env.sampler.startswith("parentbased_"))


# ----------------------------------------------------------------- the section's config statement

_HTTP: Final = url("http", "https")


def validate_config(otel: dict[str, Any], vctx: ValidationContext) -> None:
    """The ``opentelemetry`` section's config statement: ``config validate`` and activation both run it (paths
    relative to the section). An invalid value inside one ``endpoints[]`` entry skips only that entry."""
    check_keys(vctx, (), otel, KEYS)
    if "traces" in otel and "endpoints" in otel:
        vctx.unsupported_value(("traces",), "'traces' is an alias of 'endpoints'; use only one of them")
    declared = otel.get("endpoints") if isinstance(otel.get("endpoints"), list) else []
    kept: list[dict[str, Any]] = []
    destinations: dict[tuple[str, ...], str] = {}
    for index, entry in table_entries(otel, "endpoints", (), vctx):
        path: KeyPath = ("endpoints", index)
        extra: list[tuple[KeyPath, str]] = []
        if "endpoint" in entry and _HTTP(entry["endpoint"]):
            extra.append(((*path, "endpoint"), "expected an http/https URL"))
        if not extra and all(TRACE_ENDPOINT[k](entry[k]) is None for k in BSP_ENV if k in entry):
            if _bsp(entry, "max_export_batch_size") > _bsp(entry, "max_queue_size"):
                extra.append(((*path, "max_export_batch_size"), "must not exceed max_queue_size"))
        if not check_entry(vctx, path, entry, TRACE_ENDPOINT, ("type", "endpoint"), extra):
            continue
        kept.append(entry)
        key = destination_key(entry["endpoint"], entry.get("transport", "http_binary"))
        other = destinations.setdefault(key, entry["type"])
        if other != entry["type"]:
            vctx.error(path, "two trace endpoints of different types share one destination; their trace and span "
                             "IDs would collide", code="observability.destination_conflict")
    signals_with_endpoints = False
    for signal, spec in (("logs", LOGS), ("metrics", METRICS)):
        section = otel.get(signal)
        if not isinstance(section, dict):
            continue
        check_keys(vctx, (signal,), section, spec)
        for index, entry in table_entries(section, "endpoints", (signal,), vctx):
            path = (signal, "endpoints", index)
            extra = []
            if "endpoint" in entry and _HTTP(entry["endpoint"]):
                extra.append(((*path, "endpoint"), "expected an http/https URL"))
            check_entry(vctx, path, entry, SIGNAL_ENDPOINT, ("endpoint",), extra)
        if section.get("enabled") is not True:
            continue
        explicit = section.get("endpoints")
        if isinstance(explicit, list) and explicit:
            signals_with_endpoints = True
        elif isinstance(explicit, list):
            vctx.unsupported_value((signal, "endpoints"),
                                   f"{signal} is enabled with an empty endpoint list; omit the key to derive "
                                   "endpoints from the trace endpoints")
        elif not any(_derivable(e) for e in kept):
            vctx.unsupported_value((signal,), f"{signal} endpoints cannot be derived from the trace "
                                              "endpoints; list them explicitly")
    for index, entry in table_entries(otel, "file_sinks", (), vctx):
        check_entry(vctx, ("file_sinks", index), entry, FILE_SINK, ())
    env = read_otlp_env()
    if otel.get("enabled") is True and not declared and env.endpoint_problem is not None:
        vctx.warning(("endpoints",), f"the file lists no trace endpoint and {env.endpoint_problem}; the OTLP "
                                     "destination from the environment is disabled (the other sinks are not "
                                     "affected)", code="observability.env_destination_disabled")
    elif otel.get("enabled") is True and not declared and not signals_with_endpoints and env.endpoint is None:
        vctx.unsupported_value(("endpoints",), "an enabled opentelemetry section needs at least one trace "
                                               "endpoint (or an enabled signal with explicit endpoints, or "
                                               "OTEL_EXPORTER_OTLP_ENDPOINT in the environment)")


def _derivable(entry: Mapping[str, Any]) -> bool:
    """Whether logs / metrics endpoints can be derived from this trace endpoint (its ``/v1/traces`` base)."""
    endpoint = str(entry.get("endpoint", ""))
    if entry.get("derive_signals", not is_langfuse_url(endpoint)) is not True:
        return False
    if entry.get("transport") == "grpc":
        return True
    path = urlsplit(endpoint).path
    return path in ("", "/") or path.rstrip("/").endswith("/v1/traces")
