"""Waiting that SIGTERM or SIGINT ends, for the long-running commands (the alerts daemon, the demo model server).

A Python signal handler runs in the main thread between two bytecodes, possibly while that thread holds a
lock. Setting a ``threading.Event`` from the handler therefore deadlocks when the signal lands while the main
thread is inside ``Event.wait`` holding the event's own (non-reentrant) lock. Here the handler only assigns a
flag, and the wait is a ``select`` on the interpreter's wakeup pipe (``signal.set_wakeup_fd``): the C-level
handler writes that pipe before any Python code runs, so a signal that arrives just before the wait still
ends it at once.
"""

from __future__ import annotations

import os
import select
import signal
import time
from types import FrameType, TracebackType

__all__ = ["StopSignal"]

_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class StopSignal:
    """``with StopSignal() as stop: while not stop.wait(interval): ...`` — main thread only.

    Installs handlers for SIGTERM and SIGINT on entry and restores the previous handlers (and wakeup fd) on
    exit. :attr:`received` names the first signal that arrived, or is ``None``.
    """

    def __init__(self) -> None:
        self.received: signal.Signals | None = None
        self._read = self._write = -1
        self._previous_fd = -1
        self._previous: dict[signal.Signals, object] = {}

    def __enter__(self) -> StopSignal:
        self._read, self._write = os.pipe()
        os.set_blocking(self._read, False)
        os.set_blocking(self._write, False)
        self._previous_fd = signal.set_wakeup_fd(self._write, warn_on_full_buffer=False)
        self._previous = {sig: signal.signal(sig, self._handle) for sig in _SIGNALS}
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)  # type: ignore[arg-type]  # whatever signal.signal returned before
        signal.set_wakeup_fd(self._previous_fd)
        os.close(self._read)
        os.close(self._write)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.received is None:
            self.received = signal.Signals(signum)

    @property
    def stopped(self) -> bool:
        return self.received is not None

    def wait(self, timeout: float | None = None) -> bool:
        """Sleep up to ``timeout`` seconds (``None``: until a stop signal); ``True`` when one has arrived."""
        deadline = None if timeout is None else time.monotonic() + max(0.0, timeout)
        while self.received is None:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return False
            ready, _, _ = select.select([self._read], [], [], left)
            if ready:  # some signal woke us (perhaps not ours): drain the pipe, look at the flag again
                try:
                    while os.read(self._read, 512):
                        pass
                except BlockingIOError:
                    pass
        return True
