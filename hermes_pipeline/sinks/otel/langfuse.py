"""Langfuse as an OTLP trace destination, without the Langfuse SDK (spec 04 §4.9, FMT-75..FMT-78).

Part of the OTel sink (not a sink of its own): a Langfuse destination is an ordinary ``gen_ai`` trace
endpoint whose URL is ``<host>/api/public/otel/v1/traces``; for such URLs the sink's configuration adds
``x-langfuse-ingestion-version: 4`` (unless set), defaults ``derive_signals = false``, refuses a
literal ``Authorization`` header, and the span builder puts ``session.id`` (the Hermes session id
of the trace) on every span so Langfuse groups a session's traces (``user.id`` only with the content
gate open). Credentials come from the environment only: ``basic_auth_env = {username =
"LANGFUSE_PUBLIC_KEY", password = "LANGFUSE_SECRET_KEY"}`` builds ``Authorization: Basic
base64(pk:sk)`` at activation; the values are never logged or shown.

In a pipeline file, declare it like any trace endpoint::

    [[components.config.opentelemetry.endpoints]]
    type = "gen_ai"
    endpoint = "https://cloud.langfuse.com/api/public/otel/v1/traces"
    basic_auth_env = { username = "LANGFUSE_PUBLIC_KEY", password = "LANGFUSE_SECRET_KEY" }

From code, :func:`langfuse_endpoint` builds that table from a host, and :func:`build_langfuse_sink`
builds a ready OTel sink from a small ``langfuse`` mapping (keys below), naming the offending
``langfuse.<key>`` in every validation error.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import urlunsplit

from ...export.config_checks import check_table, http_url_parts
from ...export.errors import ExportConfigError
from .sink import OtelSink, build_otel_sink
from .config import ENDPOINT_KEYS
from .urls import LANGFUSE_PATH, is_langfuse_url
from ...export.worker import ProcessSink

__all__ = ["LANGFUSE_HOSTS", "LANGFUSE_PATH", "build_langfuse_sink", "is_langfuse_url", "langfuse_endpoint",
           "langfuse_traces_url"]

LANGFUSE_HOSTS: Final = {"eu": "https://cloud.langfuse.com", "us": "https://us.cloud.langfuse.com"}
"""Langfuse cloud regions; self-hosted instances (v3.22.0 and later) use their own URL."""

DEFAULT_PUBLIC_KEY_ENV: Final = "LANGFUSE_PUBLIC_KEY"
DEFAULT_SECRET_KEY_ENV: Final = "LANGFUSE_SECRET_KEY"
OWN_KEYS: Final = frozenset({"enabled", "host", "host_env", "public_key_env", "secret_key_env", "sampling_rate",
                             "always_sample_errors"})
PASSED_KEYS: Final = ENDPOINT_KEYS - {"type", "endpoint", "basic_auth_env", "header_env", "headers", "transport"}
"""Trace-endpoint keys a ``langfuse`` mapping may also set (service name, queue sizes, timeouts, ...)."""


def langfuse_traces_url(host: str) -> str:
    """``<host>/api/public/otel/v1/traces`` for a Langfuse host URL (a URL already ending in that path is kept).

    Raises:
        ValueError: ``host`` is not an http(s) URL with a host, or carries credentials or a query.
    """
    text = host.strip() if isinstance(host, str) else ""
    parts = http_url_parts(text)
    if parts is None:
        raise ValueError("expected an http:// or https:// URL such as https://cloud.langfuse.com")
    if parts.username is not None or parts.password is not None or parts.query or parts.fragment:
        raise ValueError("expected a plain host URL without credentials, query or fragment")
    if is_langfuse_url(text):
        return urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), "", ""))
    path = parts.path.rstrip("/")
    if path.endswith("/api/public/otel"):
        path = path[: -len("/api/public/otel")]
    return urlunsplit((parts.scheme, parts.netloc, path + LANGFUSE_PATH, "", ""))


def langfuse_endpoint(host: str = LANGFUSE_HOSTS["eu"], *, public_key_env: str = DEFAULT_PUBLIC_KEY_ENV,
                      secret_key_env: str = DEFAULT_SECRET_KEY_ENV, **extra: Any) -> dict[str, Any]:
    """An ``opentelemetry.endpoints[]`` table for Langfuse (FMT-75, FMT-76).

    Args:
        host: the Langfuse URL (cloud region or self-hosted instance).
        public_key_env, secret_key_env: names of the environment variables holding the project's
            public key (``pk-lf-…``, Basic-auth user) and secret key (``sk-lf-…``, password).
        extra: other trace-endpoint keys (``service_name``, ``timeout_millis``, ``max_queue_size``, ...).
    """
    return {"type": "gen_ai", "endpoint": langfuse_traces_url(host),
            "basic_auth_env": {"username": public_key_env, "password": secret_key_env}, **extra}


def _env_name(config: Mapping[str, Any], key: str, default: str) -> str:
    value = config.get(key, default)
    if not isinstance(value, str) or not value.strip() or value != value.strip():
        raise ExportConfigError(f"langfuse.{key}", "expected the name of an environment variable, e.g. "
                                f"{default!r} (never the key itself)")
    if value.startswith(("pk-lf-", "sk-lf-")):
        raise ExportConfigError(f"langfuse.{key}", "looks like a Langfuse key, not the name of an environment "
                                "variable; put the key in the environment and name the variable here")
    if not os.environ.get(value, "").strip():
        raise ExportConfigError(f"langfuse.{key}", f"environment variable {value!r} is unset or blank")
    return value


def build_langfuse_sink(config: Mapping[str, Any] | None = None, *, enable_full_payloads: bool = False,
                        content_summary: str = "preview", exporter_factory: Any = None,
                        environment: str = "development", agent_version: str | None = None) -> OtelSink | ProcessSink:
    """A started OTel sink exporting the ``gen_ai`` projection to Langfuse.

    ``config`` keys (all optional): ``enabled`` (default ``true``), ``host`` (default the EU cloud;
    or ``host_env``, the name of a variable holding it), ``public_key_env`` (default
    ``LANGFUSE_PUBLIC_KEY``), ``secret_key_env`` (default ``LANGFUSE_SECRET_KEY``),
    ``sampling_rate``, ``always_sample_errors``, and the trace-endpoint keys of :data:`PASSED_KEYS`.

    Raises:
        ExportConfigError: naming ``langfuse.<key>``; never a key value.
    """
    config = config or {}
    config = check_table(config, "langfuse", OWN_KEYS | PASSED_KEYS)
    enabled = config.get("enabled", True)
    if not isinstance(enabled, bool):
        raise ExportConfigError("langfuse.enabled", "expected true or false")
    if "host" in config and "host_env" in config:
        raise ExportConfigError("langfuse.host_env", "set either 'host' or 'host_env', not both")
    host: Any = config.get("host", LANGFUSE_HOSTS["eu"])
    if "host_env" in config:
        name = config["host_env"]
        host = os.environ.get(name, "") if isinstance(name, str) else ""
        if not host.strip():
            raise ExportConfigError("langfuse.host_env", f"environment variable {name!r} is unset or blank")
    try:
        url = langfuse_traces_url(host)
    except ValueError as exc:
        raise ExportConfigError("langfuse.host_env" if "host_env" in config else "langfuse.host", str(exc)) from None
    otel: dict[str, Any] = {"enabled": enabled}
    for key in ("sampling_rate", "always_sample_errors"):
        if key in config:
            otel[key] = config[key]
    if enabled:
        public = _env_name(config, "public_key_env", DEFAULT_PUBLIC_KEY_ENV)
        secret = _env_name(config, "secret_key_env", DEFAULT_SECRET_KEY_ENV)
        extra = {k: v for k, v in config.items() if k in PASSED_KEYS}
        otel["endpoints"] = [{"type": "gen_ai", "endpoint": url,
                              "basic_auth_env": {"username": public, "password": secret}, **extra}]
    try:
        return build_otel_sink(otel, enable_full_payloads=enable_full_payloads, content_summary=content_summary,
                               exporter_factory=exporter_factory, environment=environment,
                               agent_version=agent_version)
    except ExportConfigError as exc:
        path = exc.path.replace("opentelemetry.endpoints[0].", "langfuse.").replace("opentelemetry.", "langfuse.")
        raise ExportConfigError(path, exc.message) from None
