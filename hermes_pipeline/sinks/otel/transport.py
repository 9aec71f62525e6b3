"""The plain-HTTP transport of the OTLP trace exporter: one kept-alive ``http.client`` connection (spec 04 FMT-72,
FMT-78).

The SDK's HTTP client (retries, backoff, the deadline, the stale-connection retry) sends each request through a
transport. Its own transport is a ``requests`` session; for an ``http://`` collector, which is what a local or
sidecar collector is, ``requests`` adds about 0.3 ms of CPU per request over the standard library's connection
(its adapters, hooks, cookie jar and header merging; measured side by side, ``bench/bench_exporters.py``).
:class:`PlainHttpTransport` sends the same request on ``http.client``:

- the same headers: the session's defaults (``Accept``, ``Accept-Encoding``, ``Connection``), then what the
  :class:`~.exporter.ObservedSession` lets through (the exporter's content headers and the endpoint's configured
  headers, never the process-global header variables, FMT-72);
- the same counting: every request on the session's counters, every failure (an error, or a status outside
  200-399) with its status code or exception class only;
- no redirect followed (as the SDK's transport), a per-request timeout; a kept connection the collector closed
  while idle is opened again before the request (as a connection pool does), and a connection error (refused,
  reset, timed out, a broken response) is reported as one, so the client retries it.

``https://`` endpoints (TLS variables, CA bundles), endpoints a proxy variable applies to and hosts with a
``.netrc`` login keep the ``requests`` transport (:func:`plain_http_target`).
"""

from __future__ import annotations

import gzip
import http.client
import json
import select
import threading
import urllib.parse
import urllib.request
import zlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from .exporter import ObservedSession

__all__ = ["PlainHttpTransport", "plain_http_target"]

_DEFAULT_PORT: Final = 80


def plain_http_target(url: str) -> tuple[str, int, str] | None:
    """``(host, port, path with query)`` of an ``http://`` URL no proxy variable applies to; ``None`` otherwise
    (``https://``, a proxy, user information in the URL or a ``.netrc`` login for its host, both of which
    ``requests`` would send, a URL ``http.client`` cannot address)."""
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port or _DEFAULT_PORT
    except ValueError:
        return None
    host = parts.hostname
    if parts.scheme != "http" or not host or parts.username is not None or parts.password is not None:
        return None
    proxies = urllib.request.getproxies()
    if proxies.get("http") or proxies.get("all"):
        if not urllib.request.proxy_bypass(f"{host}:{port}") and not urllib.request.proxy_bypass(host):
            return None
    from requests.utils import get_netrc_auth

    if get_netrc_auth(url) is not None:  # ``requests`` would log in with the ``.netrc`` entry for this host
        return None
    path = parts.path or "/"
    return host, port, f"{path}?{parts.query}" if parts.query else path


class PlainHttpResult:
    """What the SDK's client reads of a request: ``status_code``, ``reason`` and ``error``, the response headers
    (case-insensitive) and body."""

    __slots__ = ("status_code", "reason", "error", "_headers", "_body")

    def __init__(self, status_code: int | None = None, reason: str | None = None, error: Exception | None = None,
                 headers: Any = None, body: bytes = b"") -> None:
        self.status_code = status_code
        self.reason = reason
        self.error = error
        self._headers = headers
        self._body = body

    def headers(self) -> Mapping[str, str]:
        return self._headers if self._headers is not None else {}

    def content(self) -> bytes:
        encoding = (self.headers().get("content-encoding") or "").strip().lower()
        if encoding == "gzip":
            return gzip.decompress(self._body)
        if encoding == "deflate":
            return zlib.decompress(self._body)
        return self._body

    def text(self) -> str:
        return self.content().decode("utf-8")

    def json(self) -> Any:
        return json.loads(self.content())


class PlainHttpTransport:
    """The SDK transport interface (``request``, ``is_connection_error``, ``close``) on one ``http.client``
    connection to ``host:port``, shaping headers and counting through ``session``.

    Args:
        target: ``(host, port, path)`` from :func:`plain_http_target` for the exporter's URL.
        session: the endpoint's observing session (its header rule, counters and default headers).
    """

    def __init__(self, target: tuple[str, int, str], session: ObservedSession) -> None:
        self._host, self._port, self._path = target
        self._session = session
        # the session's default headers (what ``requests`` merges under each request's), by lower-case name
        self._defaults = {str(k).lower(): (str(k), v) for k, v in session.headers.items() if v is not None}
        self._connection: http.client.HTTPConnection | None = None
        self._lock = threading.Lock()
        self._closed = False

    def request(self, method: str, url: str, *, headers: dict[str, str] | None = None, timeout: float | None = None,
                data: bytes | None = None) -> PlainHttpResult:
        session = self._session
        merged = self._defaults.copy()
        for key, value in session.request_headers(headers).items():
            merged[key.lower()] = (key, value)
        sent = dict(merged.values())
        with self._lock:
            session.requests_sent += 1
            try:
                status, reason, answer, body = self._send(method, sent, timeout, data)
            except Exception as exc:
                self._drop()
                session.observe_error(exc)
                return PlainHttpResult(error=exc)
        session.observe_status(status)
        return PlainHttpResult(status, reason, headers=answer, body=body)

    def _send(self, method: str, headers: Mapping[str, Any], timeout: float | None,
              data: bytes | None) -> tuple[int, str, Any, bytes]:
        if self._closed:
            raise ConnectionAbortedError("transport closed")
        connection = self._connection
        if connection is None:
            connection = self._connection = http.client.HTTPConnection(self._host, self._port, timeout=timeout)
        else:
            connection.timeout = timeout
            sock = connection.sock
            if sock is not None:
                if select.select((sock,), (), (), 0)[0]:  # closed by the collector while idle (or stray bytes)
                    connection.close()  # reconnects below, as a connection pool does: no failed request
                else:
                    sock.settimeout(timeout)
        connection.request(method, self._path, body=data, headers=headers)
        response = connection.getresponse()
        body = response.read()
        if response.will_close:
            self._drop()
        return response.status, response.reason, response.headers, body

    def _drop(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.close()

    def is_connection_error(self, exception: Exception | None) -> bool:
        """Refused, reset, closed, timed out or a broken response: worth the client's immediate retry."""
        return isinstance(exception, (OSError, http.client.HTTPException))

    def close(self) -> None:
        """Close the connection (a request in flight on another thread ends with a connection error)."""
        self._closed = True
        self._drop()
