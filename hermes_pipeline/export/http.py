"""HTTP stream destinations (spec 04 §2.15, FMT-38..FMT-41), on the standard library only.

- :class:`HttpPostDestination` (``transport = "http_post"``): one ``POST`` per item, body one JSONL
  record, ``Content-Type: application/x-ndjson``; any 2xx is success. One kept-alive connection.
- :class:`NdjsonUploadDestination` (``transport = "ndjson"``): one long-lived chunked ``POST``,
  one record per line; the upload is finished (and its response read) on close.

Failures raise :class:`~hermes_pipeline.export.errors.DeliveryError`: connection errors, timeouts,
408, 429 and 5xx are retryable, other statuses are not. Error descriptions carry the status or
exception class only, never the URL, a header value or a body.
"""

from __future__ import annotations

import http.client
import os
import socket
from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

from .errors import DeliveryError

NDJSON: Final = "application/x-ndjson"
_RETRYABLE_STATUS: Final = frozenset({408, 425, 429})


def display_url(url: str) -> str:
    """``url`` without userinfo, query and fragment: safe to show to a human (never to logs)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return "<invalid url>"
    netloc = f"{host}:{port}" if port is not None else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def resolve_headers(headers: Mapping[str, str], header_env: Mapping[str, str]) -> dict[str, str]:
    """Static ``headers`` plus ``header_env`` values read from the environment now (FMT-41).

    Raises ``LookupError`` naming the header (never the value) when a variable is unset or blank,
    and ``ValueError`` when a header appears in both tables (case-insensitive).
    """
    static = {str(k): str(v) for k, v in headers.items()}
    overlap = {k.lower() for k in static} & {k.lower() for k in header_env}
    if overlap:
        raise ValueError(f"header(s) {', '.join(sorted(overlap))} appear in both 'headers' and 'header_env'")
    out = dict(static)
    for header, variable in header_env.items():
        value = os.environ.get(variable, "")
        if not value.strip():
            raise LookupError(f"environment variable {variable!r} for header {header!r} is unset or blank")
        out[str(header)] = value
    return out


def _retryable_status(status: int) -> bool:
    return status >= 500 or status in _RETRYABLE_STATUS


class _Connection:
    """One HTTP(S) connection to the URL's origin, reopened after any failure."""

    def __init__(self, url: str, timeout: float) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("expected an http:// or https:// URL with a host")
        self.https = parts.scheme == "https"
        self.host = parts.hostname
        self.port = parts.port
        self.target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        self.timeout = timeout
        self.conn: http.client.HTTPConnection | None = None

    def get(self) -> http.client.HTTPConnection:
        if self.conn is None:
            cls = http.client.HTTPSConnection if self.https else http.client.HTTPConnection
            self.conn = cls(self.host, self.port, timeout=self.timeout)
        return self.conn

    def reset(self) -> None:
        if self.conn is not None:
            try:
                self.conn.close()
            except OSError:
                pass
            self.conn = None


def _transport_error(exc: BaseException, delivered: int) -> DeliveryError:
    retryable = isinstance(exc, OSError | http.client.HTTPException)
    error = DeliveryError(type(exc).__name__, retryable=retryable, delivered=delivered)
    error.__cause__ = exc
    return error


class HttpPostDestination:
    """``http_post``: one POST per record (see the module docstring).

    Args:
        url: ``http``/``https`` URL.
        headers: final request headers (``header_env`` already resolved by the caller).
        timeout: seconds bounding each connect, send and receive.
    """

    def __init__(self, url: str, headers: Mapping[str, str] | None = None, *, timeout: float = 3.0) -> None:
        self._conn = _Connection(url, timeout)
        self._url = url
        self._headers = {"Content-Type": NDJSON, **dict(headers or {})}

    def describe(self) -> str:
        """``http_post <scheme://host:port/path>`` without credentials or query."""
        return f"http_post {display_url(self._url)}"

    def write(self, batch: list[Any]) -> None:
        for index, item in enumerate(batch):
            body = item if isinstance(item, bytes) else str(item).encode()
            try:
                conn = self._conn.get()
                conn.request("POST", self._conn.target, body=body, headers=self._headers)
                response = conn.getresponse()
                response.read()
                status = response.status
                if response.will_close:
                    self._conn.reset()
            except (OSError, http.client.HTTPException) as exc:
                self._conn.reset()
                raise _transport_error(exc, index) from exc
            if not 200 <= status < 300:
                raise DeliveryError(f"HTTP {status}", retryable=_retryable_status(status), delivered=index,
                                    status=status)

    def close(self) -> None:
        self._conn.reset()


class NdjsonUploadDestination:
    """``ndjson``: records streamed as the chunks of one long-lived chunked POST (see the module docstring)."""

    def __init__(self, url: str, headers: Mapping[str, str] | None = None, *, timeout: float = 3.0) -> None:
        self._conn = _Connection(url, timeout)
        self._url = url
        self._headers = {"Content-Type": NDJSON, **dict(headers or {})}
        self._open = False

    def describe(self) -> str:
        """``ndjson <scheme://host:port/path>`` without credentials or query."""
        return f"ndjson {display_url(self._url)}"

    def _start(self) -> http.client.HTTPConnection:
        conn = self._conn.get()
        if not self._open:
            conn.putrequest("POST", self._conn.target)
            for name, value in self._headers.items():
                conn.putheader(name, value)
            conn.putheader("Transfer-Encoding", "chunked")
            conn.endheaders()
            self._open = True
        return conn

    def write(self, batch: list[Any]) -> None:
        data = b"".join(item if isinstance(item, bytes) else str(item).encode() for item in batch)
        try:
            conn = self._start()
            conn.send(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        except (OSError, http.client.HTTPException) as exc:
            self._open = False
            self._conn.reset()
            raise _transport_error(exc, 0) from exc

    def close(self) -> None:
        """Finish the upload and read the collector's answer (errors ignored: nothing is left to retry)."""
        if self._open and self._conn.conn is not None:
            try:
                self._conn.conn.send(b"0\r\n\r\n")
                self._conn.conn.getresponse().read()
            except (OSError, http.client.HTTPException, socket.timeout):
                pass
        self._open = False
        self._conn.reset()
