"""The standard ``OTEL_*`` environment variables of the OTLP trace path, read as the OpenTelemetry
specification defines them (SDK environment variables, OTLP exporter configuration).

:func:`read_otlp_env` reads them once into an :class:`OtlpEnv`; :mod:`.config` applies it under
the pipeline file, which always wins where both say something:

========================================== =====================================================
variable                                   effect (pipeline key that wins over it)
========================================== =====================================================
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``     trace URL used as is; only when ``opentelemetry`` is
                                           enabled and lists no trace endpoint (``endpoints``)
``OTEL_EXPORTER_OTLP_ENDPOINT``            base URL, ``v1/traces`` appended; same condition,
                                           the per-signal variable wins over it
``OTEL_EXPORTER_OTLP_TRACES_HEADERS``      ``k=v,...`` headers of that env endpoint only (never
``OTEL_EXPORTER_OTLP_HEADERS``             of the endpoints listed in the file); per-signal wins
``OTEL_EXPORTER_OTLP_TRACES_TIMEOUT``      request timeout of that env endpoint, milliseconds
``OTEL_EXPORTER_OTLP_TIMEOUT``
``OTEL_EXPORTER_OTLP_TRACES_PROTOCOL``     ``http/protobuf``, ``http/json`` or ``grpc`` (the URL as given)
``OTEL_EXPORTER_OTLP_PROTOCOL``
``OTEL_EXPORTER_OTLP_TRACES_COMPRESSION``  ``gzip`` / ``none`` of every trace endpoint
``OTEL_EXPORTER_OTLP_COMPRESSION``         (``endpoints[].compression``)
``OTEL_EXPORTER_OTLP_(TRACES_)TIMEOUT``    also the default of ``endpoints[].timeout_millis``
``OTEL_BSP_EXPORT_TIMEOUT``                one batch's export, retries included
                                           (``endpoints[].export_timeout_millis``)
``OTEL_SERVICE_NAME``                      ``service.name`` (``endpoints[].service_name``)
``OTEL_RESOURCE_ATTRIBUTES``               ``k=v,...`` resource attributes
                                           (``endpoints[].resource_attributes`` per attribute;
                                           its ``service.name`` loses to ``OTEL_SERVICE_NAME``)
``OTEL_TRACES_SAMPLER`` (+ ``_ARG``)       turn sampling rate (``opentelemetry.sampling_rate``)
``OTEL_SDK_DISABLED=true``                 no span is exported at all (ATOF / ATIF unaffected)
========================================== =====================================================

Invalid values follow the specification: an empty value is the same as unset; an unknown enum
value, an unusable number or a malformed ``k=v`` list is ignored with one warning naming the
variable (a malformed list is discarded as a whole, as the resource specification asks); a boolean
is true only for the case-insensitive string ``true``. An unusable endpoint URL is an entry problem
of the env endpoint (:attr:`OtlpEnv.endpoint_problem`): ``config validate`` reports it as an error
naming the variable, activation skips that endpoint with a warning. Messages name variables and
list positions, never a value (header values are credentials).
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final
from urllib.parse import urlunsplit

from ...export.config_checks import http_url_parts

logger: Final = logging.getLogger("hermes_pipeline.sinks.otel")

SDK_DISABLED: Final = "OTEL_SDK_DISABLED"
ENDPOINT: Final = "OTEL_EXPORTER_OTLP_ENDPOINT"
TRACES_ENDPOINT: Final = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
HEADERS: Final = "OTEL_EXPORTER_OTLP_HEADERS"
TRACES_HEADERS: Final = "OTEL_EXPORTER_OTLP_TRACES_HEADERS"
TIMEOUT: Final = "OTEL_EXPORTER_OTLP_TIMEOUT"
TRACES_TIMEOUT: Final = "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT"
PROTOCOL: Final = "OTEL_EXPORTER_OTLP_PROTOCOL"
TRACES_PROTOCOL: Final = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
COMPRESSION: Final = "OTEL_EXPORTER_OTLP_COMPRESSION"
TRACES_COMPRESSION: Final = "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION"
BSP_EXPORT_TIMEOUT: Final = "OTEL_BSP_EXPORT_TIMEOUT"
SERVICE_NAME: Final = "OTEL_SERVICE_NAME"
RESOURCE_ATTRIBUTES: Final = "OTEL_RESOURCE_ATTRIBUTES"
SAMPLER: Final = "OTEL_TRACES_SAMPLER"
SAMPLER_ARG: Final = "OTEL_TRACES_SAMPLER_ARG"

SAMPLERS: Final = ("always_on", "always_off", "traceidratio", "parentbased_always_on", "parentbased_always_off",
                   "parentbased_traceidratio")
"""Sampler names this build implements. ``X`` decides each turn by its rate; ``parentbased_X`` does the
same for a turn without a parent and follows the parent's sampled flag for a turn inside the
application's trace (an active span or a ``traceparent``, FMT-56b); the spans inside a turn always
follow their turn's decision."""
UNSUPPORTED_SAMPLERS: Final = ("jaeger_remote", "parentbased_jaeger_remote", "xray")
PROTOCOLS: Final = ("grpc", "http/protobuf", "http/json")
DEFAULT_TIMEOUT_MILLIS: Final = 10_000
"""The specification's default export timeout, used by the env endpoint when no timeout variable is set."""

_KEY: Final = re.compile(r"[\x21\x23-\x27\x2a\x2b\x2d\x2e\x30-\x39\x41-\x5a\x5e-\x7a\x7c\x7e]+")
"""A W3C baggage key (an HTTP token) before percent-decoding."""
_VALUE: Final = re.compile(r"[\x20\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]*")
"""A W3C baggage value (printable US-ASCII except DQUOTE, comma, semicolon and backslash), plus inner
spaces, which the Python SDK also accepts (``Authorization=Basic abc``)."""
_PERCENT: Final = re.compile(r"%([0-9A-Fa-f]{2})")
_OWS: Final = " \t"


class EnvListError(ValueError):
    """A ``k=v,...`` environment value that cannot be used; names the variable, never the value.

    Attributes:
        variable: the environment variable.
        position: 1-based position of the first bad list member.
        reason: what was wrong with it.
    """

    def __init__(self, variable: str, position: int, reason: str) -> None:
        super().__init__(f"{variable}: member {position} {reason}; expected key=value pairs separated by commas, "
                         "with percent-encoding for other characters")
        self.variable = variable
        self.position = position
        self.reason = reason


def _decode(text: str) -> str | None:
    """Strict percent-decoding to UTF-8 text; ``None`` when a ``%`` escape or the UTF-8 is broken."""
    if "%" not in text:
        return text
    out = bytearray()
    index = 0
    while index < len(text):
        char = text[index]
        if char == "%":
            match = _PERCENT.match(text, index)
            if match is None:
                return None
            out.append(int(match.group(1), 16))
            index += 3
        else:
            out.extend(char.encode("ascii"))
            index += 1
    try:
        return out.decode("utf-8")
    except UnicodeDecodeError:
        return None


def parse_key_values(text: str, variable: str) -> dict[str, str]:
    """Parse a W3C-baggage-like list ``key1=value1,key2=value2`` (no ``;`` properties).

    Optional whitespace around members, keys and values is dropped; empty members are skipped; keys
    and values are percent-decoded (UTF-8); a later duplicate key wins. Used for
    ``OTEL_EXPORTER_OTLP_*HEADERS`` and ``OTEL_RESOURCE_ATTRIBUTES``.

    Raises:
        EnvListError: for the first malformed member (no ``=``, a character outside the allowed
            range, a broken ``%`` escape), naming ``variable`` and the member's position.
    """
    out: dict[str, str] = {}
    for position, member in enumerate(text.split(","), start=1):
        member = member.strip(_OWS)
        if not member:
            continue
        key, sep, value = member.partition("=")
        key, value = key.strip(_OWS), value.strip(_OWS)
        if not sep:
            raise EnvListError(variable, position, "has no '='")
        if not _KEY.fullmatch(key):
            raise EnvListError(variable, position, "has an empty key or a key with characters that are not allowed")
        if not _VALUE.fullmatch(value):
            raise EnvListError(variable, position, "has a value with characters that must be percent-encoded")
        decoded_key, decoded_value = _decode(key), _decode(value)
        if decoded_key is None or decoded_value is None or not decoded_key.strip():
            raise EnvListError(variable, position, "has a broken percent-encoding")
        out[decoded_key] = decoded_value
    return out


@dataclass(frozen=True)
class OtlpEnv:
    """What the ``OTEL_*`` variables of the process say (see the module docstring)."""

    sdk_disabled: bool = False
    endpoint: str | None = None
    """The trace URL from the environment (already resolved), or ``None``."""
    endpoint_variable: str | None = None
    """The variable the endpoint came from."""
    transport: str = "http_binary"
    """``http_json`` when ``OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL=http/json``."""
    endpoint_problem: str | None = None
    """Why the endpoint variable that is set cannot be used (the message names the variable)."""
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    header_variable: str | None = None
    timeout_millis: int = DEFAULT_TIMEOUT_MILLIS
    export_timeout_millis: int = 30_000
    compression: str = "none"
    service_name: str | None = None
    resource_attributes: Mapping[str, str] = field(default_factory=dict)
    sampling_rate: float | None = None
    """The rate the sampler variables select, or ``None`` when they select nothing."""
    sampler: str | None = None
    warnings: tuple[str, ...] = ()
    """One line per ignored variable, each naming it."""

    def service(self) -> str | None:
        """``service.name``: ``OTEL_SERVICE_NAME``, else ``service.name`` of ``OTEL_RESOURCE_ATTRIBUTES``."""
        return self.service_name or self.resource_attributes.get("service.name") or None


def _get(environ: Mapping[str, str], name: str) -> str:
    """The stripped value; empty is the same as unset (the specification's rule)."""
    return (environ.get(name) or "").strip()


def _first(environ: Mapping[str, str], *names: str) -> tuple[str | None, str]:
    """The first of ``names`` that is set (per-signal before generic): ``(name, value)``."""
    for name in names:
        value = _get(environ, name)
        if value:
            return name, value
    return None, ""


def _endpoint(environ: Mapping[str, str]) -> tuple[str | None, str | None, str | None]:
    """``(url, variable, problem)`` of the trace endpoint the environment names."""
    variable, value = _first(environ, TRACES_ENDPOINT, ENDPOINT)
    if variable is None:
        return None, None, None
    parts = http_url_parts(value)
    if parts is None:
        return None, variable, f"{variable} is not an http:// or https:// URL with a host"
    if parts.username is not None or parts.password is not None:
        return None, variable, f"{variable} must not carry credentials; use {TRACES_HEADERS} or {HEADERS}"
    if variable == TRACES_ENDPOINT:  # the per-signal URL is used as is: no path is ever appended
        if not parts.path:
            value = urlunsplit((parts.scheme, parts.netloc, "/", parts.query, ""))
        return value, variable, None
    base, _, query = value.partition("?")
    url = base + ("v1/traces" if base.endswith("/") else "/v1/traces")
    return url + (f"?{query}" if query else ""), variable, None


def _sampler(environ: Mapping[str, str], warnings: list[str]) -> tuple[float | None, str | None]:
    name = _get(environ, SAMPLER).lower()
    arg = _get(environ, SAMPLER_ARG)
    if not name:
        if arg:
            warnings.append(f"{SAMPLER_ARG} is set but {SAMPLER} is not; it is ignored")
        return None, None
    if name in UNSUPPORTED_SAMPLERS:
        warnings.append(f"{SAMPLER}: the sampler {name!r} is not available in this build; ignored (expected one of "
                        f"{', '.join(SAMPLERS)})")
        return None, None
    if name not in SAMPLERS:
        warnings.append(f"{SAMPLER}: unknown sampler name; ignored (expected one of {', '.join(SAMPLERS)})")
        return None, None
    if name.endswith("always_on"):
        return 1.0, name
    if name.endswith("always_off"):
        return 0.0, name
    rate = 1.0  # traceidratio without a usable argument: the specification's default probability
    if arg:
        try:
            value = float(arg)
        except ValueError:
            value = float("nan")
        if 0.0 <= value <= 1.0:
            rate = value
        else:
            warnings.append(f"{SAMPLER_ARG}: expected a probability between 0 and 1; ignored (rate 1.0)")
    return rate, name


def _timeout(environ: Mapping[str, str], warnings: list[str]) -> int:
    variable, value = _first(environ, TRACES_TIMEOUT, TIMEOUT)
    if variable is None:
        return DEFAULT_TIMEOUT_MILLIS
    if value.isdigit() and int(value) > 0:
        return int(value)
    warnings.append(f"{variable}: expected a whole number of milliseconds > 0; ignored")
    return DEFAULT_TIMEOUT_MILLIS


def _compression(environ: Mapping[str, str], warnings: list[str]) -> str:
    variable, value = _first(environ, TRACES_COMPRESSION, COMPRESSION)
    if variable is None:
        return "none"
    if value.lower() in ("gzip", "none"):
        return value.lower()
    warnings.append(f"{variable}: expected 'gzip' or 'none'; ignored (no compression)")
    return "none"


def _export_timeout(environ: Mapping[str, str], warnings: list[str]) -> int:
    value = _get(environ, BSP_EXPORT_TIMEOUT)
    if not value:
        return 30_000
    if value.isdigit() and int(value) > 0:
        return int(value)
    warnings.append(f"{BSP_EXPORT_TIMEOUT}: expected a whole number of milliseconds > 0; ignored")
    return 30_000


def read_otlp_env(environ: Mapping[str, str] | None = None) -> OtlpEnv:
    """Read the ``OTEL_*`` variables of the OTLP trace path (``os.environ`` by default); never raises."""
    env = os.environ if environ is None else environ
    warnings: list[str] = []
    disabled_text = _get(env, SDK_DISABLED).lower()
    if disabled_text not in ("", "true", "false"):
        warnings.append(f"{SDK_DISABLED}: only 'true' (any case) disables the SDK; treated as false")
    url, endpoint_variable, problem = _endpoint(env)
    _, protocol = _first(env, TRACES_PROTOCOL, PROTOCOL)
    protocol_variable = TRACES_PROTOCOL if _get(env, TRACES_PROTOCOL) else PROTOCOL
    if protocol and protocol.lower() not in PROTOCOLS:
        warnings.append(f"{protocol_variable}: unknown protocol; ignored (expected one of {', '.join(PROTOCOLS)})")
    elif protocol and protocol.lower() == "grpc" and url is not None:  # gRPC: the URL as given, no path
        url = _get(env, endpoint_variable or ENDPOINT).rstrip("/")
    header_variable, header_text = _first(env, TRACES_HEADERS, HEADERS)
    headers: dict[str, str] = {}
    if header_variable is not None:
        try:
            headers = {k.lower(): v for k, v in parse_key_values(header_text, header_variable).items()}
        except EnvListError as exc:
            warnings.append(f"{exc}; the whole variable is ignored")
    resource: dict[str, str] = {}
    if _get(env, RESOURCE_ATTRIBUTES):
        try:
            resource = parse_key_values(_get(env, RESOURCE_ATTRIBUTES), RESOURCE_ATTRIBUTES)
        except EnvListError as exc:
            warnings.append(f"{exc}; the whole variable is ignored")
    rate, sampler = _sampler(env, warnings)
    transport = {"http/json": "http_json", "grpc": "grpc"}.get(protocol.lower(), "http_binary")
    return OtlpEnv(sdk_disabled=disabled_text == "true", endpoint=url, transport=transport, endpoint_variable=endpoint_variable,
                   endpoint_problem=problem, headers=headers, header_variable=header_variable,
                   timeout_millis=_timeout(env, warnings), export_timeout_millis=_export_timeout(env, warnings),
                   compression=_compression(env, warnings), service_name=_get(env, SERVICE_NAME) or None,
                   resource_attributes=resource, sampling_rate=rate, sampler=sampler, warnings=tuple(warnings))


_warned: set[str] = set()
_warned_lock = threading.Lock()


def warn_once(message: str) -> None:
    """Log ``message`` as a WARNING the first time this process sees it (activation runs more than once)."""
    with _warned_lock:
        if message in _warned:
            return
        _warned.add(message)
    logger.warning("hermes_pipeline: %s", message)


__all__ = ["EnvListError", "OtlpEnv", "SAMPLERS", "parse_key_values", "read_otlp_env", "warn_once"]
