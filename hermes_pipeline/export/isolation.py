"""One sink behind its own queue, thread and deadline, so that a sink that blocks stalls only itself.

The scope tracker calls every listener on its one publication thread, in order. A sink whose
``__call__`` blocks (a third-party sink waiting on a socket, a lock, a full pipe) would hold that
thread, and with it the tracker's lock: the scope stream stops, every other sink starves, and a
``flush`` or the process exit waits on the lock for ever. :class:`IsolatedSink` puts such a sink
behind its own :class:`~hermes_pipeline.export.writer.BoundedWriter`: the publication thread only
appends the event to that sink's bounded queue (the same lock-free ``submit`` the built-in sinks
use, nothing more per event), and the sink's own worker thread calls it. A sink that blocks then
fills and drops only its own queue, counted (``events_dropped``) and warned once; the scope stream and
the other sinks never wait for it.

Every call into the sink has a deadline, :data:`SINK_CALL_DEADLINE`: a sink still inside one call
after that long is *stalled*. ``flush`` and ``shutdown`` never wait for a stalled sink (they return
``False`` at once and what it had queued is dropped and counted at shutdown), and the sink's own
``flush`` / ``shutdown`` run on a helper thread joined only until the caller's deadline, so no path
of the host waits on a sink without a time limit.

The built-in sinks need none of this: their ``__call__`` only appends to their own bounded writers
(or counts in memory), which they declare with the class attribute ``never_blocks = True``
(:func:`needs_isolation`); the component calls those directly, with no second hand-off.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, Final

from ..engine.deadline import JOIN_SLACK, Deadline
from .events import ScopeEvent, submit_paired, submit_paired_many
from .sizes import event_bytes
from .writer import DEFAULT_MAX_QUEUE_BYTES, BoundedWriter

logger: Final = logging.getLogger("hermes_pipeline.export")

SINK_CALL_DEADLINE: Final = 1.0
"""Seconds one call into an isolated sink (``__call__``, on its worker thread) may take before the sink
counts as stalled: ``flush`` and ``shutdown`` then stop waiting for it."""

NEVER_BLOCKS: Final = "never_blocks"
"""The class attribute by which a sink declares that its ``__call__`` never waits (it only queues on its
own bounded writer or counts in memory): such a sink is called on the publication thread directly."""

STATS_WAIT: Final = 0.25
"""Seconds ``stats()`` and ``destinations()`` wait for an isolated sink's own answer."""

_POLL: Final = 0.05
"""Seconds between two looks at a sink's progress while ``flush`` or ``shutdown`` waits for it."""


def needs_isolation(sink: Any) -> bool:
    """Whether ``sink`` must run behind an :class:`IsolatedSink` (every sink that does not declare
    :data:`NEVER_BLOCKS`)."""
    return getattr(sink, NEVER_BLOCKS, False) is not True


class _Calls:
    """The isolated sink's destination: call the sink once per event, on the worker thread."""

    def __init__(self, sink: Callable[[ScopeEvent], Any], name: str) -> None:
        self.sink = sink
        self.name = name
        self.busy_since = 0.0
        """``time.monotonic()`` when the call in progress began; 0 between calls."""
        self.failures = 0
        self._warned: set[str] = set()

    def describe(self) -> str:
        return f"sink {self.name}"

    def write(self, batch: list[ScopeEvent]) -> None:
        sink = self.sink
        clock = time.monotonic
        for event in batch:
            self.busy_since = clock()
            try:
                sink(event)
            except Exception as exc:  # one failing event never stops the others (FMT-83)
                self.failures += 1
                kind = type(exc).__name__
                if kind not in self._warned:
                    self._warned.add(kind)
                    logger.warning("hermes_pipeline: sink %s raised %s; later failures of this kind are counted "
                                   "silently (sink_failures)", self.name, kind)
        self.busy_since = 0.0


class IsolatedSink:
    """``sink`` called on its own worker thread from its own bounded queue (see the module docstring).

    It is itself a sink (``__call__``, ``flush``, ``shutdown``, ``stats``, ``destinations``) and
    declares :data:`NEVER_BLOCKS`.

    Args:
        sink: the sink to isolate.
        name: the section name (how warnings and stats name it).
        max_queue_size: events buffered for the sink before new ones are dropped and counted.
        max_queue_bytes: the same bound in estimated bytes (``None``: the default).
        call_deadline: seconds one call may take before the sink counts as stalled.
    """

    never_blocks: Final = True

    def __init__(self, sink: Any, *, name: str, max_queue_size: int = 10_000,
                 call_deadline: float = SINK_CALL_DEADLINE, max_queue_bytes: int | None = None) -> None:
        self.sink = sink
        self.name = name
        self.call_deadline = call_deadline
        self._calls = _Calls(sink, name)
        self._writer = BoundedWriter(self._calls, name=f"sink {name}", max_queue_size=max_queue_size,
                                     max_attempts=1, max_queue_bytes=max_queue_bytes or DEFAULT_MAX_QUEUE_BYTES,
                                     size=event_bytes).start()
        self._dropped_starts: set[int] = set()
        self._warned_drop = False
        self._helper: threading.Thread | None = None
        """The thread running the sink's own ``flush`` / ``shutdown`` (at most one at a time)."""

    # ------------------------------------------------------------------ the publication thread's side

    def __call__(self, event: ScopeEvent) -> None:
        """Queue ``event`` for the sink (a dropped start drops its end too); never waits."""
        if not submit_paired(self._writer, event, self._dropped_starts) and not self._warned_drop:
            self._warn_drop()

    def take_many(self, events: list[ScopeEvent]) -> None:
        """Queue the events of one publication batch for the sink, as one call per event would; never waits."""
        if submit_paired_many(self._writer, events, self._dropped_starts) and not self._warned_drop:
            self._warn_drop()

    def _warn_drop(self) -> None:
        self._warned_drop = True
        logger.warning("hermes_pipeline: sink %s is not keeping up (its queue of %d events is full%s); its new "
                       "events are dropped and counted (events_dropped), the other sinks are not affected",
                       self.name, self._writer.capacity, ", it is stalled in a call" if self.stalled() else "")

    # ------------------------------------------------------------------ inspection

    def stalled(self) -> bool:
        """Whether the sink has been inside one call for longer than its call deadline."""
        since = self._calls.busy_since
        return since != 0.0 and time.monotonic() - since > self.call_deadline

    def stats(self) -> dict[str, Any]:
        """The sink's own counters (when it answers within :data:`STATS_WAIT`), plus ``events_dropped``
        (events it never received: queue full, at shutdown, after shutdown), ``sink_failures`` (calls
        that raised), ``queue_depth`` and ``stalled``."""
        done, own = self._bounded("stats", STATS_WAIT)
        out: dict[str, Any] = dict(own) if done and isinstance(own, Mapping) else {}
        out.update(self._counters())
        return out

    def _counters(self) -> dict[str, int]:
        counts = self._writer.stats()
        return {"events_dropped": counts["dropped_queue_full"] + counts["dropped_queue_bytes"] + counts["dropped_at_close"]
                + counts["dropped_closed"],
                "sink_failures": self._calls.failures, "queue_depth": counts["queue_depth"],
                "stalled": int(self.stalled())}

    def destinations(self) -> list[str]:
        """Where the sink says it writes (nothing when it does not answer within :data:`STATS_WAIT`)."""
        done, where = self._bounded("destinations", STATS_WAIT)
        return [str(item) for item in where] if done and isinstance(where, list | tuple) else []

    # ------------------------------------------------------------------ flush and shutdown

    def _drain(self, deadline: Deadline) -> bool:
        """Wait until everything queued so far was handed to the sink, giving up at the deadline or as
        soon as the sink stalls."""
        while True:
            if self.stalled():
                return False
            remaining = deadline.remaining()
            if self._writer.flush(min(remaining, _POLL)):
                return True
            if remaining <= _POLL:
                return False

    def _bounded(self, method: str, seconds: float, *args: Any) -> tuple[bool, Any]:
        """``(True, result)`` of the sink's own ``method(*args)`` run on a helper thread and waited for
        ``seconds`` at most; ``(False, None)`` when it is missing, raised, or did not return in time."""
        fn = getattr(self.sink, method, None)
        if not callable(fn) or self.stalled():
            return False, None
        helper = self._helper
        if helper is not None and helper.is_alive():  # an earlier call into it never returned
            return False, None
        result: list[Any] = []

        def run() -> None:
            try:
                result.append(fn(*args))
            except Exception as exc:
                logger.warning("hermes_pipeline: sink %s: %s() raised %s", self.name, method, type(exc).__name__)

        helper = threading.Thread(target=run, name=f"hermes-sink-{method}:{self.name}", daemon=True)
        self._helper = helper
        helper.start()
        helper.join(seconds + JOIN_SLACK)
        return (True, result[0]) if result and not helper.is_alive() else (False, None)

    def _within(self, method: str, seconds: float) -> bool:
        """The sink's own ``flush`` or ``shutdown`` (``True`` when it has none), waited for ``seconds``."""
        if not callable(getattr(self.sink, method, None)):
            return True
        done, result = self._bounded(method, seconds, seconds)
        return done and bool(result)

    def flush(self, timeout: float) -> bool:
        """Hand the sink everything queued, then its own ``flush``, all within ``timeout`` seconds;
        ``False`` at once when the sink is stalled."""
        deadline = Deadline(timeout)
        if not self._drain(deadline):
            return False
        return self._within("flush", deadline.remaining())

    def shutdown(self, deadline: float) -> bool:
        """Hand the sink what is queued, then its own ``shutdown``, within ``deadline`` seconds. A stalled
        sink is not waited for: what it had queued is dropped and counted, its thread abandoned."""
        end = Deadline(deadline)
        drained = self._drain(end)
        closed = self._writer.close(end.remaining() if drained else 0.0)
        dropped = self._counters()["events_dropped"]
        if dropped:
            logger.warning("hermes_pipeline: sink %s shut down with events_dropped=%d%s", self.name, dropped,
                           " (it was stalled in a call)" if self.stalled() else "")
        if not closed:
            return False
        return self._within("shutdown", end.remaining())


def isolate(sinks: Mapping[str, Any], *, max_queue_size: int, max_queue_bytes: int | None = None) -> dict[str, Any]:
    """``sinks`` with every one that may block (:func:`needs_isolation`) behind an :class:`IsolatedSink`."""
    return {name: IsolatedSink(sink, name=name, max_queue_size=max_queue_size, max_queue_bytes=max_queue_bytes)
            if needs_isolation(sink) else sink for name, sink in sinks.items()}
