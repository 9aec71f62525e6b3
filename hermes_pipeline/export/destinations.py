"""In-memory and failing destinations: test doubles for writers and exporters.

    dest = MemoryDestination()
    writer = BoundedWriter(dest, name="test").start()
    writer.submit(b"x"); writer.flush(1.0)
    assert dest.items == [b"x"] and threading.get_ident() not in dest.thread_ids

``FailingDestination`` raises on every write (or on the first ``failures`` writes, then delivers to
an inner :class:`MemoryDestination`), which is how retries, give-ups and warnings are tested.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from .errors import DeliveryError


class MemoryDestination:
    """Keeps every delivered item; records the threads ``write`` ran on.

    Args:
        gate: when given, each ``write`` waits until the event is set (a stuck destination).
        name: what :meth:`describe` returns.
    """

    def __init__(self, *, gate: threading.Event | None = None, name: str = "memory") -> None:
        self.items: list[Any] = []
        self.batches: list[list[Any]] = []
        self.thread_ids: list[int] = []
        self.gate = gate
        self.name = name
        self.opened = False
        self.closed = False
        self.writing = threading.Event()
        """Set when a ``write`` call has started (useful with ``gate``)."""
        self._lock = threading.Lock()

    def open(self) -> None:
        self.opened = True

    def write(self, batch: list[Any]) -> None:
        self.thread_ids.append(threading.get_ident())
        self.writing.set()
        if self.gate is not None:
            self.gate.wait()
        with self._lock:
            self.batches.append(list(batch))
            self.items.extend(batch)

    def close(self) -> None:
        self.closed = True

    def describe(self) -> str:
        return self.name


class FailingDestination:
    """Raises on ``write``: always, or for the first ``failures`` calls and then delivers to :attr:`inner`.

    Args:
        error: the exception to raise, or a factory making one per call (default: a retryable
            ``DeliveryError("HTTP 503")``).
        failures: how many writes fail before delivery works; ``None`` = every write fails.
    """

    def __init__(self, error: BaseException | Callable[[], BaseException] | None = None, *,
                 failures: int | None = None) -> None:
        self._error = error
        self.failures = failures
        self.calls = 0
        self.thread_ids: list[int] = []
        self.inner = MemoryDestination()
        self.closed = False

    def _make(self) -> BaseException:
        error = self._error
        if error is None:
            return DeliveryError("HTTP 503", retryable=True, status=503)
        return error() if callable(error) and not isinstance(error, BaseException) else error

    def write(self, batch: list[Any]) -> None:
        self.calls += 1
        self.thread_ids.append(threading.get_ident())
        if self.failures is None or self.calls <= self.failures:
            raise self._make()
        self.inner.write(batch)

    def close(self) -> None:
        self.closed = True

    def describe(self) -> str:
        return "failing"
