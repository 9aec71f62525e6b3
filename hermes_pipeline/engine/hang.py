"""Optional hook hang protection (spec 01 §11, OBS-71..OBS-76). Off by default.

When enabled, each callback invocation runs on a daemon worker thread inside a copy of the
caller's ``contextvars`` context; the caller waits at most ``timeout`` seconds. A worker that does
not finish in time is abandoned (never joined, never killed) and its late result is discarded.
At most :data:`MAX_ABANDONED` abandoned workers may exist per callback; while a callback is at the
cap it is not started again and the invocation counts as timed out at once.
"""

from __future__ import annotations

import contextvars
import logging
import math
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, Final

from .callbacks import Entry

logger: Final = logging.getLogger("hermes_pipeline.dispatch")

MAX_TIMEOUT: Final = 600.0
MAX_ABANDONED: Final = 3
WARNING_INTERVAL: Final = 60.0


class _TimedOut:
    def __repr__(self) -> str:
        return "TIMED_OUT"


TIMED_OUT: Final = _TimedOut()
"""Returned by :meth:`HangGuard.call` when the callback did not finish in time."""


def parse_timeout(value: object) -> float:
    """Normalise a ``hook_callback_timeout`` setting: 0 disables, >600 clamps, junk gives 0."""
    if isinstance(value, bool):
        return 0.0
    try:
        seconds = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 0.0
    if math.isnan(seconds) or seconds < 0:
        return 0.0
    return min(seconds, MAX_TIMEOUT)


class _Outcome:
    __slots__ = ("done", "error", "value")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.value: Any = None
        self.error: BaseException | None = None


class HangGuard:
    """Runs callbacks with a bounded wait."""

    def __init__(self, timeout: float, *, on_timeout: Callable[[str, Entry], None] | None = None) -> None:
        self.timeout = timeout
        self._on_timeout = on_timeout
        self._lock = threading.Lock()
        self._abandoned: dict[int, int] = {}
        self._last_warning: dict[tuple[str, int], float] = {}

    def abandoned(self, entry: Entry) -> int:
        """Number of abandoned workers of ``entry`` still running."""
        with self._lock:
            return self._abandoned.get(id(entry), 0)

    def call(self, what: str, entry: Entry, run: Callable[[Mapping[str, Any]], Any], payload: Mapping[str, Any]) -> Any:
        """Run ``run(payload)`` on a worker; return its result, re-raise its error, or ``TIMED_OUT``."""
        key = id(entry)
        with self._lock:
            at_cap = self._abandoned.get(key, 0) >= MAX_ABANDONED
        if at_cap:
            self._timed_out(what, entry, at_cap=True)
            return TIMED_OUT
        outcome = _Outcome()
        state = {"abandoned": False}
        ctx = contextvars.copy_context()

        def work() -> None:
            try:
                outcome.value = ctx.run(run, payload)
            except BaseException as exc:  # delivered to the waiting caller, or dropped when abandoned
                outcome.error = exc
            finally:
                with self._lock:
                    outcome.done.set()
                    if state["abandoned"]:
                        self._abandoned[key] -= 1

        worker = threading.Thread(target=work, name=f"hermes-hook-{what}", daemon=True)
        worker.start()
        if not outcome.done.wait(self.timeout):
            with self._lock:
                if not outcome.done.is_set():
                    state["abandoned"] = True
                    self._abandoned[key] = self._abandoned.get(key, 0) + 1
            if state["abandoned"]:
                self._timed_out(what, entry, at_cap=False)
                return TIMED_OUT
        if outcome.error is not None:
            raise outcome.error
        return outcome.value

    def _timed_out(self, what: str, entry: Entry, *, at_cap: bool) -> None:
        now = time.monotonic()
        warn_key = (what, id(entry))
        with self._lock:
            last = self._last_warning.get(warn_key)
            loud = last is None or now - last >= WARNING_INTERVAL
            if loud:
                self._last_warning[warn_key] = now
        logger.log(
            logging.WARNING if loud else logging.DEBUG,
            "hermes_pipeline: %s callback %s of plugin %r %s after %.3gs; its result is ignored%s",
            what,
            entry.qualname,
            entry.plugin,
            "has too many abandoned workers and was not started" if at_cap else "timed out",
            self.timeout,
            " and the tool call is blocked" if what == "pre_tool_call" else "",
        )
        if self._on_timeout is not None:
            self._on_timeout(what, entry)
