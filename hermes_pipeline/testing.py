"""Test helpers for plugin and host authors: record what the engine dispatches, without mocks.

    from hermes_pipeline.testing import capture

    with capture(engine) as rec:
        run_my_agent(engine)
    assert rec.names()[:2] == ["on_session_start", "pre_llm_call"]
    assert rec.last("post_tool_call")["status"] == "ok"

For sink authors (:mod:`hermes_pipeline.sink_testing`): :class:`MemorySink` keeps the scope events it
receives, :func:`capture_export` runs a scripted session (:func:`scripted_session`) through the
``observability`` scope plugin and the sinks of a config and returns the events and every file written.

Fakes for a host's seams, so a test needs no network and no model:

    provider = scripted_provider(TimeoutError("slow"), chat_response("hello"))
    turn.call_llm({"model": "m", "messages": []}, provider, max_retries=1)   # fails once, then answers

    with closed_port() as port:          # a destination that is down: nothing listens on 127.0.0.1:port
        config["endpoint"] = f"http://127.0.0.1:{port}/v1/traces"

:func:`chat_response` is a minimal OpenAI chat-completions response (text, or tool calls), and
:func:`scripted_provider` a provider answering, or raising, from a list in order.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from .contract.hooks import OBSERVER_HOOKS
from .engine.core import Engine
from .runtime import get_engine
from .sink_testing import ExportCapture, MemorySink, capture_export, scripted_session

__all__ = ["Event", "ExportCapture", "MemorySink", "Recorder", "capture", "capture_export", "chat_response",
           "closed_port", "scripted_provider", "scripted_session", "unmark"]


@dataclass(frozen=True, slots=True)
class Event:
    """One dispatched hook: its name and a shallow copy of its payload."""

    hook: str
    payload: dict[str, Any]
    at: float = 0.0
    """``time.monotonic()`` when the event was received."""

    def __getitem__(self, key: str) -> Any:
        return self.payload[key]

    def get(self, key: str, default: Any = None) -> Any:
        """``payload.get(key, default)``."""
        return self.payload.get(key, default)


class Recorder:
    """An observer that keeps every event it receives, in order (thread-safe)."""

    def __init__(self, hooks: Iterable[str] = OBSERVER_HOOKS) -> None:
        self.hooks = tuple(hooks)
        self.events: list[Event] = []
        self._lock = threading.Lock()

    def register(self, ctx: Any) -> None:
        """``register(ctx)`` entry point: listens on :attr:`hooks`."""
        for hook in self.hooks:
            ctx.register_hook(hook, self._make(hook))

    def _make(self, hook: str) -> Any:
        def record(**payload: Any) -> None:
            with self._lock:
                self.events.append(Event(hook, dict(payload), time.monotonic()))

        record.__qualname__ = f"Recorder.{hook}"
        return record

    def names(self) -> list[str]:
        """Hook names in dispatch order."""
        with self._lock:
            return [e.hook for e in self.events]

    def of(self, hook: str) -> list[Event]:
        """Events of one hook, in order."""
        with self._lock:
            return [e for e in self.events if e.hook == hook]

    def last(self, hook: str) -> Event:
        """The latest event of ``hook``; ``LookupError`` if there is none."""
        found = self.of(hook)
        if not found:
            raise LookupError(f"no {hook!r} event was recorded; recorded: {sorted(set(self.names()))}")
        return found[-1]

    def clear(self) -> None:
        """Forget every recorded event."""
        with self._lock:
            self.events.clear()


@contextmanager
def capture(engine: Engine | None = None, hooks: Iterable[str] = OBSERVER_HOOKS) -> Iterator[Recorder]:
    """Record the events of ``engine`` (default: the process engine) inside a ``with`` block."""
    engine = engine if engine is not None else get_engine()
    recorder = Recorder(hooks)
    name = engine.add_plugin(recorder, name=f"hermes_pipeline.testing.capture@{id(recorder):x}")
    try:
        yield recorder
    finally:
        engine.remove_plugin(name)


def unmark(value: Any) -> Any:
    """``value`` with every ``<redacted:xxxxxxxx>`` marker written as ``<redacted>``, in strings at any depth of
    dicts, lists and tuples (a container with nothing to change is returned as it is): for tests that compare a
    redacted output with an expected text and do not care which secret a marker stands for."""
    from .engine.scrub import MARKER_RE, REDACTED

    if isinstance(value, str):
        return MARKER_RE.sub(REDACTED, value) if "<redacted:" in value else value
    if isinstance(value, dict):
        items = [(unmark(k), unmark(v)) for k, v in value.items()]
        if all(nk is k and nv is v for (nk, nv), (k, v) in zip(items, value.items())):
            return value
        return dict(items)
    if isinstance(value, (list, tuple)):
        new = [unmark(v) for v in value]
        if all(n is v for n, v in zip(new, value)):
            return value
        return new if isinstance(value, list) else tuple(new)
    return value


def chat_response(content: str | None = "done", tool_calls: list[dict[str, Any]] | None = None,
                  model: str = "test-model") -> dict[str, Any]:
    """A minimal OpenAI chat-completions response: ``content`` as the assistant's text, or ``tool_calls``
    (``[{"id", "type": "function", "function": {"name", "arguments"}}]``) with ``finish_reason`` ``tool_calls``,
    and a small ``usage``. What a fake provider returns to ``turn.call_llm``."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {"id": "r1", "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if tool_calls else "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}


def scripted_provider(*outcomes: Any) -> Callable[[dict[str, Any]], Any]:
    """A provider for ``turn.call_llm`` answering from ``outcomes`` in order, one per call: an exception is
    raised (a provider error; give it a ``status_code`` for the host's retry rules), anything else returned.

    A call after the last outcome raises ``LookupError`` saying how many were scripted, so a test that makes
    more calls than it planned fails at that call instead of hanging or answering something made up.
    """
    queue = list(outcomes)
    lock = threading.Lock()

    def provider(request: dict[str, Any]) -> Any:
        with lock:
            if not queue:
                raise LookupError(f"scripted_provider: called more than the {len(outcomes)} scripted outcome(s)")
            outcome = queue.pop(0)
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    return provider


@contextmanager
def closed_port() -> Iterator[int]:
    """A TCP port on 127.0.0.1 that nothing listens on (bound, then closed): a destination that is down.

    Another process may take the port later; a test uses it at once and expects only a refused connection.
    """
    sock = socket.socket()
    try:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    finally:
        sock.close()
    yield port
