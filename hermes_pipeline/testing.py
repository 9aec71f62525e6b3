"""Test helpers for plugin and host authors: record what the engine dispatches, without mocks.

    from hermes_pipeline.testing import capture

    with capture(engine) as rec:
        run_my_agent(engine)
    assert rec.names()[:2] == ["on_session_start", "pre_llm_call"]
    assert rec.last("post_tool_call")["status"] == "ok"

For sink authors (:mod:`hermes_pipeline.sink_testing`): :class:`MemorySink` keeps the scope events it
receives, :func:`capture_export` runs a scripted session (:func:`scripted_session`) through the
``observability`` projection and the sinks of a config and returns the events and every file written.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from .contract.hooks import OBSERVER_HOOKS
from .engine.core import Engine
from .runtime import get_engine
from .sink_testing import ExportCapture, MemorySink, capture_export, scripted_session

__all__ = ["Event", "ExportCapture", "MemorySink", "Recorder", "capture", "capture_export", "scripted_session",
           "unmark"]


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
