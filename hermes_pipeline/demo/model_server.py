"""A deterministic, OpenAI-compatible chat-completions server with scripted replies.

The server binds to a loopback address only and answers ``POST
/v1/chat/completions`` by consuming one :class:`ScriptStep` per request, in order.
A step is an assistant reply (text and/or tool calls) or an HTTP error.  A script
entry may also be a callable ``(request_body) -> ScriptStep`` so the reply can
depend on what the model was sent.  Every accepted request body is recorded in
:attr:`ScriptedModelServer.requests`.

A request with ``"stream": true`` is answered with server-sent ``chat.completion.chunk`` events
(with ``stream_options.include_usage``: the final usage chunk), then ``data: [DONE]``; see
:mod:`hermes_pipeline.demo.model_stream`.  Error steps answer with the HTTP error either way.

Example::

    with ScriptedModelServer([ScriptStep(content="hi")]) as srv:
        ChatCompletionsClient(srv.base_url).create(model="m", messages=[])

Stand-alone, for any OpenAI-compatible client (script file format:
:mod:`hermes_pipeline.demo.model_script`)::

    python -m hermes_pipeline.demo.model_server --script steps.yaml --port 0
"""

from __future__ import annotations

import ipaddress
import json
import socket
import sys
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeAlias, cast

from .model_stream import SSE_DONE, completion_chunks, include_usage, sse_event

__all__ = ["EXHAUSTED_TEXT", "ScriptEntry", "ScriptStep", "ScriptedModelServer", "ToolCallSpec"]

EXHAUSTED_TEXT = "(script exhausted)"
"""Content of the reply sent once every script entry has been consumed."""

_CREATED_BASE = 1_700_000_000
_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error",
                503: "overloaded_error", 529: "overloaded_error"}


@dataclass
class ToolCallSpec:
    """One scripted tool call.

    ``arguments`` is normally a dict (sent JSON-encoded); a ``str`` is sent verbatim,
    which lets a script emit malformed arguments on purpose.  ``id=None`` means the
    server assigns the next deterministic id (``call_0001``, ``call_0002``, ...).
    """

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None


@dataclass
class ScriptStep:
    """One scripted model turn: an assistant reply, or an error if ``error_status`` is set.

    Reply fields: ``content``, ``tool_calls``, ``finish_reason`` (default ``"tool_calls"``
    when there are tool calls, else ``"stop"``) and optional token-count overrides.
    Error fields: ``error_status`` (e.g. 429, 503, 400), ``error_message``,
    ``error_type``/``error_code`` (defaults derived from the status) and
    ``retry_after`` (seconds, sent as the ``Retry-After`` header).
    """

    content: str | None = None
    tool_calls: list[ToolCallSpec] = field(default_factory=list)
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    error_status: int | None = None
    error_message: str = "scripted error"
    error_type: str | None = None
    error_code: str | None = None
    retry_after: int | float | None = None

    def __post_init__(self) -> None:
        if self.error_status is not None and not 400 <= self.error_status <= 599:
            raise ValueError(f"error_status must be an HTTP error status (400-599), got {self.error_status}")

    @classmethod
    def error(cls, status: int, message: str = "scripted error", *, type: str | None = None,
              code: str | None = None, retry_after: int | float | None = None) -> ScriptStep:
        """Build an error step answering with HTTP ``status`` and an OpenAI-style error body."""
        return cls(error_status=status, error_message=message, error_type=type,
                   error_code=code, retry_after=retry_after)

    @property
    def is_error(self) -> bool:
        """True if this step answers with an HTTP error instead of a completion."""
        return self.error_status is not None


ScriptEntry: TypeAlias = ScriptStep | Callable[[dict[str, Any]], ScriptStep]


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _error_body(message: str, type_: str, code: str | None) -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "code": code}}


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # the stdlib default (5) resets bursts of concurrent clients
    owner: ScriptedModelServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Record unexpected handler exceptions instead of printing them to stderr."""
        exc = sys.exc_info()[1]
        if exc is not None and not isinstance(exc, ConnectionError):
            self.owner._record_error(exc)


class _Server6(_Server):
    address_family = socket.AF_INET6


class _Handler(BaseHTTPRequestHandler):
    server_version = "HermesScriptedModel/1.0"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        """Silence the default per-request stderr logging."""

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _not_found(self) -> None:
        self._send_json(404, _error_body(f"Unknown route: {self.command} {self.path}",
                                         "not_found_error", "unknown_url"))

    def _bad_request(self, message: str) -> None:
        self._send_json(400, _error_body(message, "invalid_request_error", "invalid_request"))

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        """Serve ``GET /v1/models``; anything else is 404."""
        owner = cast(_Server, self.server).owner
        if self.path.split("?", 1)[0].rstrip("/") != "/v1/models":
            return self._not_found()
        model = {"id": owner.model, "object": "model", "created": _CREATED_BASE, "owned_by": "hermes-demo"}
        self._send_json(200, {"object": "list", "data": [model]})

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        """Serve ``POST /v1/chat/completions``; anything else is 404."""
        owner = cast(_Server, self.server).owner
        if self.path.split("?", 1)[0].rstrip("/") != "/v1/chat/completions":
            return self._not_found()
        try:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length).decode("utf-8")) if length > 0 else None
        except (ValueError, UnicodeDecodeError):
            return self._bad_request("Request body is not valid JSON.")
        if not isinstance(body, dict):
            return self._bad_request("Request body must be a JSON object.")
        if not isinstance(body.get("model"), str):
            return self._bad_request("'model' is required and must be a string.")
        if not isinstance(body.get("messages"), list):
            return self._bad_request("'messages' is required and must be a list.")
        headers = {key.lower(): value for key, value in self.headers.items()}
        try:
            status, payload, extra = owner._respond(body, headers)
        except Exception as exc:  # a callable step failed: report it, keep serving
            owner._record_error(exc)
            status, payload, extra = 500, _error_body(f"script step failed: {exc!r}", "server_error", None), {}
        if status == 200 and body.get("stream") is True:
            return self._send_stream(payload, include_usage(body))
        self._send_json(status, payload, extra)

    def _send_stream(self, completion: dict[str, Any], usage: bool) -> None:
        """Answer ``"stream": true`` with ``chat.completion.chunk`` events, then ``data: [DONE]``.

        The response has no length: it ends when the connection closes (HTTP/1.0 semantics).
        """
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        for chunk in completion_chunks(completion, usage=usage):
            self.wfile.write(sse_event(chunk))
            self.wfile.flush()
        self.wfile.write(SSE_DONE)
        self.wfile.flush()
        self.close_connection = True

    def _other(self) -> None:
        self._not_found()

    do_PUT = do_DELETE = do_PATCH = _other  # noqa: N815


class ScriptedModelServer:
    """An OpenAI-compatible chat-completions server replaying a script, on a daemon thread.

    The server starts listening on construction.  ``port=0`` picks a free port;
    :attr:`base_url` is ``http://<host>:<port>/v1``.  Only loopback hosts are allowed.
    Steps are consumed one per chat request under a lock (callable steps are resolved
    under that lock too, so ids and counters are deterministic); after the script is
    exhausted every request gets :data:`EXHAUSTED_TEXT` with ``finish_reason="stop"``.
    """

    def __init__(self, script: Iterable[ScriptEntry] = (), *, model: str = "hermes-demo-1",
                 host: str = "127.0.0.1", port: int = 0) -> None:
        if not _is_loopback(host):
            raise ValueError(f"ScriptedModelServer binds to loopback addresses only, not {host!r}")
        self.model = model
        self._lock = threading.Lock()
        self._script: list[ScriptEntry] = list(script)
        self._next_step = 0
        self._responses = 0
        self._tool_call_ids = 0
        self._requests: list[dict[str, Any]] = []
        self._headers: list[dict[str, str]] = []
        self._errors: list[BaseException] = []
        bind_host = "127.0.0.1" if host == "localhost" else host
        server_cls = _Server6 if ":" in bind_host else _Server
        self._httpd = server_cls((bind_host, port), _Handler)
        self._httpd.owner = self
        self.host = bind_host
        self.port: int = self._httpd.server_address[1]
        self._closed = False
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=f"scripted-model-{self.port}", daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL, e.g. ``http://127.0.0.1:54321/v1``."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/v1"

    @property
    def requests(self) -> list[dict[str, Any]]:
        """A snapshot of every accepted chat-completion request body, in arrival order.

        Requests rejected with 400 (malformed body) are not recorded; error steps are.
        """
        with self._lock:
            return list(self._requests)

    @property
    def request_headers(self) -> list[dict[str, str]]:
        """Lower-cased headers of each recorded request, parallel to :attr:`requests`."""
        with self._lock:
            return [dict(h) for h in self._headers]

    @property
    def errors(self) -> list[BaseException]:
        """Exceptions raised by callable steps or handlers (served as HTTP 500)."""
        with self._lock:
            return list(self._errors)

    @property
    def remaining(self) -> int:
        """How many script entries have not been consumed yet."""
        with self._lock:
            return len(self._script) - self._next_step

    def extend(self, steps: Iterable[ScriptEntry]) -> None:
        """Append entries to the script (also after it was exhausted)."""
        with self._lock:
            self._script.extend(steps)

    def close(self) -> None:
        """Stop serving, close the listening socket and join the server thread (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()

    def __enter__(self) -> ScriptedModelServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _record_error(self, exc: BaseException) -> None:
        with self._lock:
            self._errors.append(exc)

    def _respond(self, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, Any, dict[str, str]]:
        """Consume one step for ``body``; return (status, JSON payload, extra headers)."""
        with self._lock:
            self._requests.append(body)
            self._headers.append(headers)
            if self._next_step < len(self._script):
                entry = self._script[self._next_step]
                self._next_step += 1
                step = entry if isinstance(entry, ScriptStep) else entry(body)
                if not isinstance(step, ScriptStep):
                    raise TypeError(f"callable script step returned {type(step).__name__}, not ScriptStep")
            else:
                step = ScriptStep(content=EXHAUSTED_TEXT, finish_reason="stop")
            if step.error_status is not None:
                return self._error_response(step)
            self._responses += 1
            number = self._responses
            tool_calls: list[dict[str, Any]] = []
            for spec in step.tool_calls:
                if spec.id is None:
                    self._tool_call_ids += 1
                call_id = spec.id if spec.id is not None else f"call_{self._tool_call_ids:04d}"
                args = spec.arguments if isinstance(spec.arguments, str) else json.dumps(spec.arguments)
                tool_calls.append({"id": call_id, "type": "function",
                                   "function": {"name": spec.name, "arguments": args}})
        message: dict[str, Any] = {"role": "assistant", "content": step.content}
        if tool_calls:
            message["tool_calls"] = tool_calls
        finish = step.finish_reason or ("tool_calls" if tool_calls else "stop")
        prompt = step.prompt_tokens if step.prompt_tokens is not None else _prompt_tokens(body)
        completion = step.completion_tokens
        if completion is None:
            chars = len(step.content or "") + sum(
                len(c["function"]["name"]) + len(c["function"]["arguments"]) for c in tool_calls)
            completion = max(1, chars // 4) if chars else 0
        payload = {
            "id": f"chatcmpl-{number:06d}", "object": "chat.completion",
            "created": _CREATED_BASE + number, "model": self.model,
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                      "total_tokens": prompt + completion},
        }
        return 200, payload, {}

    @staticmethod
    def _error_response(step: ScriptStep) -> tuple[int, Any, dict[str, str]]:
        status = cast(int, step.error_status)
        default_type = "server_error" if status >= 500 else "invalid_request_error"
        type_ = step.error_type or _ERROR_TYPES.get(status, default_type)
        extra = {} if step.retry_after is None else {"Retry-After": f"{step.retry_after:g}"}
        return status, _error_body(step.error_message, type_, step.error_code), extra


def _prompt_tokens(body: dict[str, Any]) -> int:
    """Deterministic estimate: characters of the compact JSON of ``messages`` // 4."""
    text = json.dumps(body.get("messages"), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return len(text) // 4


if __name__ == "__main__":
    from .model_server_cli import main

    sys.exit(main())
