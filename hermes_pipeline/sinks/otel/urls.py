"""OTLP endpoint URLs: the path rules of FMT-71, the destination canonicalisation of FMT-57 and Langfuse
detection (FMT-75, FMT-77). Pure functions; no DNS resolution, no network."""

from __future__ import annotations

from typing import Final
from urllib.parse import urlsplit, urlunsplit

from ...export.config_checks import http_url_parts

LANGFUSE_PATH: Final = "/api/public/otel/v1/traces"


class URLError(ValueError):
    """A URL unusable as an OTLP/HTTP endpoint; ``key`` names the configuration key, ``message`` the rule."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key
        self.message = message


def is_langfuse_url(url: str) -> bool:
    """Whether ``url``'s path is Langfuse's OTLP trace ingestion path (FMT-77)."""
    try:
        path = urlsplit(url.strip()).path
    except ValueError:
        return False
    return path.rstrip("/").endswith(LANGFUSE_PATH)


def resolve_traces_url(url: str) -> str:
    """FMT-71: a bare authority gains ``/v1/traces``; ``/`` alone means the root path; other paths stay."""
    parts = urlsplit(url)
    if parts.path == "":
        return urlunsplit((parts.scheme, parts.netloc, "/v1/traces", parts.query, ""))
    return urlunsplit((parts.scheme, parts.netloc, parts.path, parts.query, ""))


def traces_url(url: object) -> str:
    """Validate an ``endpoints[].endpoint`` value and apply FMT-71; raises :class:`URLError`."""
    if not isinstance(url, str) or not url.strip():
        raise URLError("endpoint", "is required: a non-blank http:// or https:// URL")
    url = url.strip()
    parts = http_url_parts(url)
    if parts is None:
        raise URLError("endpoint", "expected an http:// or https:// URL with a host")
    if parts.username is not None or parts.password is not None:
        raise URLError("endpoint", "credentials must not be part of the URL; use header_env or basic_auth_env")
    if parts.path.rstrip("/").endswith("/api/public/otel"):  # FMT-75: a Langfuse endpoint is the full traces path
        raise URLError("endpoint", "a Langfuse endpoint needs the full trace path: '<host>/api/public/otel/v1/traces'")
    return resolve_traces_url(url)
