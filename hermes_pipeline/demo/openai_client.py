"""A tiny stdlib client for OpenAI-compatible ``/chat/completions`` endpoints.

It mirrors the call shape of ``openai.OpenAI().chat.completions.create`` closely
enough for the reference agent and the demo: keyword arguments become the JSON
body, ``extra_body`` is merged into it, and HTTP failures are raised as
:class:`ProviderHTTPError` with a retry classification.  Error messages never
contain request headers or the API key.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import socket
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

__all__ = ["ChatCompletionsClient", "ProviderHTTPError", "classify_status"]

_MAX_DETAIL_CHARS = 500
_CLIENT_ONLY_KWARGS = frozenset({"timeout", "http_client", "extra_body", "extra_headers", "extra_query"})


def classify_status(status: int) -> tuple[str, bool]:
    """Return ``(reason, retryable)`` for an HTTP error status.

    429 rate_limit, 503/529 overloaded, other 5xx server_error, 408 timeout,
    401/403 auth, 404 model_not_found, 400/422 format_error, 413
    payload_too_large, 409 conflict, other statuses client_error.  Retryable:
    408, 409, 429 and every 5xx.
    """
    retryable = status in (408, 409, 429) or 500 <= status <= 599
    if status == 429:
        reason = "rate_limit"
    elif status in (503, 529):
        reason = "overloaded"
    elif 500 <= status <= 599:
        reason = "server_error"
    elif status == 408:
        reason = "timeout"
    elif status in (401, 403):
        reason = "auth"
    elif status == 404:
        reason = "model_not_found"
    elif status in (400, 422):
        reason = "format_error"
    elif status == 413:
        reason = "payload_too_large"
    elif status == 409:
        reason = "conflict"
    else:
        reason = "client_error"
    return reason, retryable


class ProviderHTTPError(Exception):
    """A provider call failed: an HTTP error status, a timeout or a connection failure.

    Attributes: ``status_code`` (``None`` when no HTTP response arrived),
    ``retryable``, ``reason`` (see :func:`classify_status`, plus ``"timeout"``,
    ``"connection_error"`` and ``"invalid_response"``), ``body`` (parsed error JSON,
    or text) and ``retry_after`` (seconds from a ``Retry-After`` header, if any).
    """

    def __init__(self, message: str, *, status_code: int | None, reason: str, retryable: bool,
                 body: Any = None, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code
        self.reason = reason
        self.retryable = retryable
        self.body = body
        self.retry_after = retry_after

    def __repr__(self) -> str:
        return (f"ProviderHTTPError(status_code={self.status_code!r}, reason={self.reason!r}, "
                f"retryable={self.retryable!r}, message={self.message!r})")


def _safe_url(url: str) -> str:
    """Drop userinfo, query and fragment so a URL can be shown in an error message."""
    parts = urllib.parse.urlsplit(url)
    netloc = parts.netloc.rsplit("@", 1)[-1]
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def _parse_retry_after(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None  # HTTP-date form: not interpreted
    return seconds if seconds >= 0 else None


class ChatCompletionsClient:
    """Minimal synchronous (plus ``asyncio`` twin) chat-completions client on ``urllib``.

    ``base_url`` is the API root including the version, e.g. ``http://127.0.0.1:8000/v1``.
    The ``Authorization: Bearer`` header is sent only when ``api_key`` is given.
    """

    def __init__(self, base_url: str, *, api_key: str | None = None, timeout: float = 30.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self._api_key = api_key

    def __repr__(self) -> str:
        return f"ChatCompletionsClient(base_url={_safe_url(self.base_url)!r}, timeout={self.timeout!r})"

    def create(self, **kwargs: Any) -> dict[str, Any]:
        """POST ``{base_url}/chat/completions`` and return the parsed JSON response.

        All keyword arguments form the JSON body except the client options
        ``timeout`` (per-call override), ``http_client`` (ignored), ``extra_body``
        (a mapping shallow-merged into the body, overriding keys, as the OpenAI
        SDK does), ``extra_headers`` and ``extra_query``.

        Raises :class:`ProviderHTTPError` on any HTTP error status, timeout,
        connection failure or non-JSON/non-object success body.
        """
        body = {k: v for k, v in kwargs.items() if k not in _CLIENT_ONLY_KWARGS}
        extra_body = kwargs.get("extra_body")
        if extra_body is not None:
            if not isinstance(extra_body, dict):
                raise TypeError("extra_body must be a dict or None")
            body.update(extra_body)
        timeout = kwargs.get("timeout")
        return self._request("POST", "/chat/completions", body,
                             timeout=self.timeout if timeout is None else float(timeout),
                             extra_headers=kwargs.get("extra_headers"), query=kwargs.get("extra_query"))

    async def acreate(self, **kwargs: Any) -> dict[str, Any]:
        """Async twin of :meth:`create`, run in a worker thread via :func:`asyncio.to_thread`."""
        return await asyncio.to_thread(self.create, **kwargs)

    def list_models(self) -> dict[str, Any]:
        """GET ``{base_url}/models`` and return the parsed JSON response."""
        return self._request("GET", "/models", None, timeout=self.timeout)

    def _request(self, method: str, path: str, body: dict[str, Any] | None, *, timeout: float,
                 extra_headers: dict[str, str] | None = None,
                 query: dict[str, Any] | None = None) -> dict[str, Any]:
        url = self.base_url + path
        if query:
            url += ("&" if "?" in url else "?") + urllib.parse.urlencode(query)
        shown = f"{method} {_safe_url(url)}"
        headers = {"Accept": "application/json", "User-Agent": "hermes-pipeline-demo/0.1"}
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        headers.update(extra_headers or {})
        request = urllib.request.Request(url, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                status = response.status
                raw = response.read()
        except urllib.error.HTTPError as exc:
            raise self._http_error(exc, shown) from None
        except urllib.error.URLError as exc:
            timed_out = isinstance(exc.reason, (TimeoutError, socket.timeout))
            reason = "timeout" if timed_out else "connection_error"
            detail = "timed out" if timed_out else f"connection failed ({type(exc.reason).__name__})"
            raise ProviderHTTPError(self._redact(f"{shown}: {detail}"), status_code=None, reason=reason,
                                    retryable=True) from None
        except (TimeoutError, socket.timeout):
            raise ProviderHTTPError(f"{shown}: timed out after {timeout:g}s", status_code=None,
                                    reason="timeout", retryable=True) from None
        except (OSError, http.client.HTTPException) as exc:
            raise ProviderHTTPError(f"{shown}: connection failed ({type(exc).__name__})", status_code=None,
                                    reason="connection_error", retryable=True) from None
        try:
            parsed = json.loads(raw.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            parsed = None
        if not isinstance(parsed, dict):
            text = raw.decode("utf-8", "replace")
            raise ProviderHTTPError(self._redact(f"{shown}: HTTP {status} with a non-JSON-object body"),
                                    status_code=status, reason="invalid_response", retryable=False,
                                    body=self._redact(text[:_MAX_DETAIL_CHARS]))
        return parsed

    def _http_error(self, exc: urllib.error.HTTPError, shown: str) -> ProviderHTTPError:
        status = exc.code
        retry_after = _parse_retry_after(exc.headers.get("Retry-After") if exc.headers else None)
        try:
            raw = exc.read()
        except OSError:
            raw = b""
        finally:
            exc.close()
        text = self._redact(raw.decode("utf-8", "replace"))
        body: Any
        try:
            body = json.loads(text)
        except ValueError:
            body = text
        detail = text
        if isinstance(body, dict) and isinstance(body.get("error"), dict):
            detail = str(body["error"].get("message", text))
        elif isinstance(body, dict) and isinstance(body.get("error"), str):
            detail = body["error"]
        reason, retryable = classify_status(status)
        message = f"{shown}: HTTP {status} ({reason})"
        if detail:
            message += f": {detail[:_MAX_DETAIL_CHARS]}"
        return ProviderHTTPError(self._redact(message), status_code=status, reason=reason,
                                 retryable=retryable, body=body, retry_after=retry_after)

    def _redact(self, text: str) -> str:
        """Remove the API key should a server have echoed it back."""
        return text.replace(self._api_key, "***") if self._api_key else text
