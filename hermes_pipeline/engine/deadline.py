"""One deadline for a whole flush or shutdown, however many exporters take part (spec 04 FMT-84, FMT-85).

``flush(t)`` and ``shutdown(t)`` return within ``t`` seconds in all, not ``t`` per exporter or per
component: a :class:`Deadline` is one monotonic end time that every step reads its remaining time
from, and :func:`run_all` lets independent exporters use that time side by side (the writers of one
sink likewise start draining together, ``BoundedWriter.begin_close``), so that one destination that
never answers cannot eat the time of the others. At interpreter exit every ``atexit`` shutdown of
the process shares :func:`exit_deadline`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence

JOIN_SLACK = 0.05
"""Seconds :func:`run_all` waits beyond the deadline for a call that honours it to return."""
SHUTDOWN_DEADLINE = 5.0
"""Default shutdown deadline in seconds (the ``shutdown(deadline_s = 5.0)`` of FMT-85), also the
longest the process exit waits for all exporters together."""


class Deadline:
    """A monotonic end time: ``Deadline(t).remaining()`` counts down from ``t`` to 0."""

    __slots__ = ("end",)

    def __init__(self, seconds: float) -> None:
        self.end = time.monotonic() + max(seconds, 0.0)

    def remaining(self) -> float:
        """Seconds left, never negative."""
        return max(self.end - time.monotonic(), 0.0)


def run_all(calls: Sequence[Callable[[float], object]], seconds: float, *, name: str = "hermes-export-deadline") -> bool:
    """Run every ``call(remaining_seconds)`` side by side under one deadline of ``seconds``.

    Each call gets its own daemon thread; the function returns once every call has returned or
    the deadline (plus :data:`JOIN_SLACK`) has passed, whichever is first. ``True`` only when every
    call returned a true value in time; a call that raised or is still running counts as failed
    (it is left running, never joined). Never raises.
    """
    deadline = Deadline(seconds)
    if len(calls) == 1:
        try:
            return bool(calls[0](deadline.remaining()))
        except Exception:  # noqa: BLE001 - reported as a failure, never raised
            return False
    results: list[bool] = [False] * len(calls)

    def run(index: int, call: Callable[[float], object]) -> None:
        try:
            results[index] = bool(call(deadline.remaining()))
        except Exception:  # noqa: BLE001
            results[index] = False

    threads = [threading.Thread(target=run, args=(i, call), name=name, daemon=True) for i, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(deadline.remaining() + JOIN_SLACK)
    return all(results) and not any(thread.is_alive() for thread in threads)


_exit_lock = threading.Lock()
_exit: Deadline | None = None


def exit_deadline() -> Deadline:
    """The process-exit deadline (:data:`SHUTDOWN_DEADLINE`): started by the first ``atexit``
    shutdown that asks for it, shared by every later one, so that exit waits that long in all."""
    global _exit
    with _exit_lock:
        if _exit is None:
            _exit = Deadline(SHUTDOWN_DEADLINE)
        return _exit


def takes_deadline(fn: Callable[..., object]) -> bool:
    """Whether ``fn`` accepts a positional argument (a ``shutdown(deadline)`` rather than ``shutdown()``)."""
    import inspect

    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL) for p in params)


def call_shutdown(fn: Callable[..., object], seconds: float) -> object:
    """``fn(seconds)`` when ``fn`` takes a deadline, else ``fn()`` (it then keeps its own)."""
    return fn(seconds) if takes_deadline(fn) else fn()
