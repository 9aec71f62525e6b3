"""Small checks shared by the sinks' configuration parsers (one destination entry at a time)."""

from __future__ import annotations

import ipaddress
import logging
import re
from collections.abc import Collection, Mapping
from typing import Any
from urllib.parse import SplitResult, urlsplit

from .errors import ExportConfigError
from .http import resolve_headers


class EntryError(Exception):
    """One key of one destination entry is invalid; the parser names the full key path."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key
        self.message = message


def check_on_invalid(on_invalid: str) -> None:
    """A parser's ``on_invalid`` argument is ``"raise"`` or ``"skip"`` (a programming error otherwise)."""
    if on_invalid not in ("raise", "skip"):
        raise ValueError("on_invalid must be 'raise' or 'skip'")


def check_table(value: Any, path: str, keys: Collection[str], *, ignore_unknown_keys: bool = False) -> Mapping[str, Any]:
    """``value`` as the table at ``path``: :class:`ExportConfigError` when it is not a table, or (unless
    ``ignore_unknown_keys``) for its first unknown key, listing the valid ``keys``."""
    if not isinstance(value, Mapping):
        raise ExportConfigError(path, "expected a table")
    unknown = sorted(str(k) for k in value if k not in keys)
    if unknown and not ignore_unknown_keys:
        raise ExportConfigError(f"{path}.{unknown[0]}", f"unknown key; valid keys: {', '.join(sorted(keys))}")
    return value


def entry_type(entry: Any, path: str, kinds: tuple[str, ...]) -> str:
    """The ``type`` of the destination entry at ``path``, one of ``kinds``; :class:`ExportConfigError` otherwise."""
    if not isinstance(entry, Mapping):
        raise ExportConfigError(path, "expected a table")
    kind = entry.get("type")
    if kind not in kinds:
        raise ExportConfigError(f"{path}.type", f"is required: {' or '.join(repr(k) for k in kinds)}")
    return str(kind)


def refuse_entry(log: logging.Logger, path: str, reason: str, on_invalid: str,
                 skipped: list[tuple[str, str]]) -> None:
    """An invalid value at ``path`` (FMT-73): :class:`ExportConfigError`, or with ``on_invalid = "skip"`` the
    entry is recorded in ``skipped`` and a warning goes to the sink's ``log``."""
    if on_invalid == "raise":
        raise ExportConfigError(path, reason)
    skipped.append((path, reason))
    log.warning("hermes_pipeline: observability.endpoint_skipped: %s: %s; the entry is skipped", path, reason)


def is_int(value: Any) -> bool:
    """An ``int`` that is not a ``bool``."""
    return isinstance(value, int) and not isinstance(value, bool)


def http_url_parts(text: str) -> SplitResult | None:
    """The parts of ``text`` (already stripped) when it is an http(s) URL with a host and a valid port."""
    try:
        parts = urlsplit(text)
        _ = parts.port  # raises for a port that is not a number in range
    except ValueError:
        return None
    return parts if parts.scheme in ("http", "https") and parts.hostname else None


def http_url(entry: Mapping[str, Any], key: str) -> str:
    """``entry[key]`` as an http(s) URL with a host; :class:`EntryError` naming ``key`` otherwise."""
    value = entry.get(key)
    if not isinstance(value, str) or not value.strip():
        raise EntryError(key, "is required: an http:// or https:// URL")
    if http_url_parts(value.strip()) is None:
        raise EntryError(key, "expected an http:// or https:// URL with a host")
    return value


def destination_key(endpoint: str, transport: str = "http_binary") -> tuple[str, ...]:
    """Canonical destination of a trace endpoint for the collision check (FMT-57).

    Loopback names are one host, default ports are explicit, repeated and trailing slashes are
    folded, and an OTLP/HTTP endpoint without a path is the ``/v1/traces`` it posts to (FMT-71).
    """
    parts = urlsplit(endpoint.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        host = "loopback"
    else:
        try:
            if ipaddress.ip_address(host).is_loopback:
                host = "loopback"
        except ValueError:
            pass
    try:
        port = parts.port or {"http": 80, "https": 443}.get(scheme, 0)
    except ValueError:
        port = 0
    path = re.sub(r"/{2,}", "/", parts.path)
    if len(path) > 1:
        path = path.rstrip("/")
    if transport in ("http_binary", "http_json") and parts.path == "":
        path = "/v1/traces"
    return (scheme, host, str(port), path, parts.query)


def entry_headers(headers: Mapping[str, str], header_env: Mapping[str, str]) -> dict[str, str]:
    """:func:`~hermes_pipeline.export.http.resolve_headers` for a destination entry: an unset variable or
    a header in both tables is an :class:`EntryError` on ``header_env`` (never naming a value)."""
    try:
        return resolve_headers(headers, header_env)
    except ValueError as exc:
        raise EntryError("header_env", str(exc)) from None
    except LookupError as exc:
        raise EntryError("header_env", str(exc).strip("'\"")) from None
