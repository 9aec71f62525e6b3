"""A small JSON POST helper shared by the HTTP notifiers, under one overall deadline.

A socket timeout bounds each wait for bytes, not the whole answer: an endpoint that trickles one byte
a second, or answers after a minute, would hold the sender for as long as it likes. Here a watchdog
thread shuts the socket down when the send's deadline passes (or when the run is stopped), which ends
any blocked read at once; the deadline covers connecting, sending and reading the whole answer.

Whether the request went out decides what a failure means: before the request was written (no
connection, a refused one) it is :class:`~hermes_pipeline.alerts.delivery.NotifierError` and may be
retried; after, with no complete answer in time, it is
:class:`~hermes_pipeline.alerts.delivery.DeliveryUnknown` and is never sent again (at most once).
"""

from __future__ import annotations

import http.client
import json
import socket
import ssl
import threading
import time
import urllib.parse
from typing import Any, Final

from ..delivery import DeliveryUnknown, NotifierError, SendLimits, send_limits

TIMEOUT_S: Final = 10.0
"""The deadline when no :func:`~hermes_pipeline.alerts.delivery.deliver` sets one (a direct call)."""
CONNECT_S: Final = 5.0
"""Longest wait for the connection (and TLS handshake), within the deadline."""
MAX_ANSWER: Final = 1 << 20
"""Most bytes of an answer read (a notifier only needs its status and a short JSON reply)."""


class _Watchdog:
    """Shuts ``sock`` down at ``limits.deadline`` or when ``limits.cancel`` is set, whichever first."""

    def __init__(self, sock: socket.socket, limits: SendLimits) -> None:
        self.sock = sock
        self.limits = limits
        self.fired: str | None = None
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="hermes-alerts-deadline", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._done.is_set():
            left = self.limits.remaining()
            if left <= 0 or self.limits.cancelled:
                self.fired = "stopped" if self.limits.cancelled else "deadline"
                try:
                    socket.socket.shutdown(self.sock, socket.SHUT_RDWR)  # the raw fd, TLS or not: reads end now
                except OSError:
                    pass
                return
            self._done.wait(min(left, 0.05) if self.limits.cancel is not None else left)

    def stop(self) -> None:
        self._done.set()
        self._thread.join()


def _connection(url: str, timeout: float) -> tuple[http.client.HTTPConnection, str]:
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise NotifierError("the endpoint is not an http(s) URL")
    try:
        port = parts.port
    except ValueError:
        raise NotifierError("the endpoint's URL has a bad port") from None
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    if parts.scheme == "https":
        return http.client.HTTPSConnection(parts.hostname, port, timeout=timeout,
                                           context=ssl.create_default_context()), target
    return http.client.HTTPConnection(parts.hostname, port, timeout=timeout), target


def post_json(url: str, body: dict[str, Any], timeout: float = TIMEOUT_S) -> bytes:
    """POST ``body`` as JSON within the send's deadline; the answer's body.

    Raises:
        NotifierError: the request did not go out (bad URL, no connection), or the endpoint answered
            with a non-2xx status (never the URL, which may hold a token).
        DeliveryUnknown: the request went out but no complete answer came back before the deadline.
    """
    limits = send_limits() or SendLimits(time.monotonic() + timeout)
    limits.progress["started"] = True
    data = json.dumps(body, ensure_ascii=False).encode("utf-8")
    left = limits.remaining()
    if left <= 0 or limits.cancelled:
        raise NotifierError("not sent: " + ("stopped" if limits.cancelled else "the deadline passed"))
    conn, target = _connection(url, min(CONNECT_S, left))
    watchdog: _Watchdog | None = None
    try:
        try:
            conn.connect()
        except (OSError, http.client.HTTPException) as exc:
            raise NotifierError(f"cannot reach the endpoint: {getattr(exc, 'strerror', None) or exc}") from None
        assert conn.sock is not None
        watchdog = _Watchdog(conn.sock, limits)
        conn.sock.settimeout(max(limits.remaining(), 0.001))
        try:
            conn.putrequest("POST", target)
            conn.putheader("Content-Type", "application/json; charset=utf-8")
            conn.putheader("User-Agent", "hermes-pipeline-alerts")
            conn.putheader("Content-Length", str(len(data)))
            conn.endheaders(data)
        except (OSError, http.client.HTTPException) as exc:  # the body is incomplete: nothing was processed
            raise NotifierError(f"cannot send to the endpoint: {exc}") from None
        limits.progress["sent"] = True
        try:
            response = conn.getresponse()
            answer = response.read(MAX_ANSWER)
        except (OSError, http.client.HTTPException, ValueError) as exc:
            why = "stopped" if watchdog.fired == "stopped" else \
                "no complete answer before the deadline" if watchdog.fired == "deadline" else \
                f"the answer broke off ({type(exc).__name__})"
            raise DeliveryUnknown(f"sent, {why}") from None
        if not 200 <= response.status < 300:
            raise NotifierError(f"HTTP {response.status} from the endpoint")
        return bytes(answer)
    finally:
        if watchdog is not None:
            watchdog.stop()
        conn.close()
