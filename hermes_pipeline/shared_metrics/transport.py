"""The sender's transport seam (httpx): one method, ``post``, and a response with at most 2 KiB of body.

Production uses :class:`HttpxTransport` (a real ``httpx.Client``); tests pass an
``httpx.MockTransport`` to it, or any object with the same ``post`` method. ``httpx`` is imported
only when a transport is created, so collection works without it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Protocol

MAX_RESPONSE_BYTES: Final = 2048
TIMEOUT_S: Final = 30.0


@dataclass(frozen=True, slots=True)
class Response:
    """What the sender needs from an HTTP response (SM-79: at most 2 048 body bytes are read)."""

    status: int
    headers: Mapping[str, str]
    """Lower-cased header names."""
    body: bytes


class Transport(Protocol):
    """POST ``body`` to ``url``; raise on transport failure (offline, DNS, TLS, timeout)."""

    def post(self, url: str, body: bytes, headers: Mapping[str, str], timeout: float) -> Response:
        """Send one request and return the (truncated) response."""
        ...


class HttpxTransport:
    """:class:`Transport` over ``httpx.Client``.

    Args:
        transport: an ``httpx.BaseTransport`` (e.g. ``httpx.MockTransport``) or ``None`` for the network.
    """

    def __init__(self, transport: Any = None) -> None:
        import httpx

        self._httpx = httpx
        self._client = httpx.Client(transport=transport, follow_redirects=False, trust_env=False)

    def post(self, url: str, body: bytes, headers: Mapping[str, str], timeout: float = TIMEOUT_S) -> Response:
        """POST and read at most :data:`MAX_RESPONSE_BYTES` of the response body."""
        request = self._client.build_request("POST", url, content=body, headers=dict(headers),
                                             timeout=self._httpx.Timeout(timeout))
        response = self._client.send(request, stream=True)
        try:
            chunks: list[bytes] = []
            size = 0
            for chunk in response.iter_bytes():
                chunks.append(chunk)
                size += len(chunk)
                if size >= MAX_RESPONSE_BYTES:
                    break
            data = b"".join(chunks)[:MAX_RESPONSE_BYTES]
        finally:
            response.close()
        return Response(response.status_code, {k.lower(): v for k, v in response.headers.items()}, data)

    def close(self) -> None:
        """Close the underlying client."""
        self._client.close()
