"""The profile-scoped shared-metrics subscriber: validated events → SQLite counters (SM-12..16, SM-47, SM-49).

The profile stream's listener only hands work over: :meth:`Subscriber.defer` puts a scope event on one
bounded queue (full queue → dropped and counted, never blocking the stream, nor the agent). One background
writer thread takes them in order, counts them there (:class:`~.accounting.Accounting`, whose events come back
through :meth:`Subscriber.submit`: validated against the closed contract, rejects counted as
``shared_metrics.rejected_events``, turned into counter writes), applies the writes in batched
``BEGIN IMMEDIATE`` transactions and runs queued control work (packaging after a finished task, the
consent reconciler) in order. What the accounting produces while the writer runs it joins the batch being
written, in order, so :meth:`Subscriber.flush` still covers every event deferred before it.

Durability guarantee: a write is *acknowledged* once the transaction holding it has committed;
:meth:`Subscriber.flush` returns ``True`` only after everything submitted before it is committed.
The database runs in WAL mode with ``synchronous = FULL``, so an acknowledged write survives the
process being killed (``SIGKILL``) and, on a conforming filesystem, power loss. Events still in
the queue when the process dies were never acknowledged and are lost; nothing is half-applied,
because each batch is one transaction.
"""

from __future__ import annotations

import json
import logging
import queue
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from . import events as ev
from .clock import period_of, stamp
from .resource import Resource
from .store import FIRST_SUCCESS_KEY, FIRST_USABLE_KEY, MetricsStore, Op, StoreBusy, apply_ops, transaction

logger: Final = logging.getLogger("hermes_pipeline.shared_metrics")

QUEUE_SIZE: Final = 10_000
BATCH_LIMIT: Final = 2_000
BUSY_RETRIES: Final = 5

_COUNTER_OF: Final = {
    ev.TOOL_CALL: "hermes.tool_call.count", ev.TOOL_APPROVAL: "hermes.tool_approval.count",
    ev.SKILL_LIFECYCLE: "hermes.skill.lifecycle.count", ev.SKILL_LOAD: "hermes.skill.load.count",
    ev.SETUP_STARTED: "hermes.setup.started", ev.SETUP_FINISHED: "hermes.setup.finished",
}


@dataclass
class SubscriberStats:
    """Counts of what the subscriber did in this process."""

    accepted: int = 0
    rejected_events: int = 0
    """``shared_metrics.rejected_events`` (SM-13, SM-15)."""
    dropped: int = 0
    """Hooks and writes dropped because the queue was full or the store stayed locked."""
    lock_timeouts: int = 0
    """``shared_metrics.lock_timeouts`` (SM-47)."""
    committed: int = 0
    """Writes committed to SQLite."""
    store_errors: int = 0


_DIMS_CACHE: dict[tuple[tuple[str, Any], ...], str] = {}
_DIMS_CACHE_LIMIT: Final = 4096


def _dims(data: dict[str, Any]) -> str:
    """Canonical JSON of a dimension object (sorted keys, no spaces); cached, since dimensions are
    almost all closed-enum values."""
    key = tuple(sorted(data.items()))
    found = _DIMS_CACHE.get(key)
    if found is None:
        found = json.dumps(data, sort_keys=True, separators=(",", ":"))
        if len(_DIMS_CACHE) < _DIMS_CACHE_LIMIT:
            _DIMS_CACHE[key] = found
    return found


class _Control:
    __slots__ = ("done", "fn")

    def __init__(self, fn: Callable[[], object] | None) -> None:
        self.fn = fn
        self.done = threading.Event()




_STOP: Final = object()


class Subscriber:
    """Accepts the events of one runtime instance and writes counters (see the module docstring)."""

    def __init__(self, store: MetricsStore, runtime_id: str, resource: Resource, *,
                 queue_size: int = QUEUE_SIZE) -> None:
        self.store = store
        self.runtime_id = runtime_id
        self.resource = resource
        self.stats = SubscriberStats()
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._limit = queue_size
        self._lock = threading.Lock()
        self._open_tasks: dict[str, tuple[str, str]] = {}
        self._thread: threading.Thread | None = None
        self._writer_ident: int | None = None
        self._inline: list[Any] | None = None
        """What the writer thread produces while it runs deferred work (appended to its batch, in order)."""
        self._closed = False

    # ------------------------------------------------------------------ hand-in (writer thread for hooks)

    def submit(self, event: object) -> bool:
        """Validate and enqueue the writes of one event; ``False`` if it was rejected or dropped. Called by the
        accounting on the writer thread (the writes join the batch being written) or, for the host's own setup
        and skill marks, on the caller's thread."""
        problem = ev.check_event(event, self.runtime_id)
        if problem is not None:
            with self._lock:
                self.stats.rejected_events += 1
            logger.debug("hermes_pipeline: shared metrics rejected an event: %s", problem)
            return False
        assert isinstance(event, ev.MetricsEvent)
        ops = self._ops(event)
        if ops is None:
            with self._lock:
                self.stats.rejected_events += 1
            return False
        with self._lock:
            self.stats.accepted += 1
        for op in ops:
            if not self._put(op):
                return False
        return True

    def _ops(self, event: ev.MetricsEvent) -> list[Op] | None:
        data = dict(event.data or {})
        when = event.timestamp
        period = period_of(when)
        name = event.name
        if name == ev.TASK_RUN:
            if event.scope_category == "start":
                with self._lock:
                    self._open_tasks[event.uuid] = (data["entrypoint"], data["execution_surface"])
                return [("inc", period, "hermes.task_run.started", _dims(data), 1)]
            with self._lock:
                start = self._open_tasks.pop(event.uuid, None)
            if start is None:
                return None  # an end without its start in this runtime
            duration = data.pop("duration_ms", None)
            data["entrypoint"], data["execution_surface"] = start
            ops: list[Op] = [("inc", period, "hermes.task_run.finished", _dims(data), 1)]
            if duration is not None:
                ops.append(("sample", "task", stamp(when), duration))
            if data["outcome"] == "success":
                ops.append(("latch", FIRST_SUCCESS_KEY, "hermes.client.first_successful_task", when))
            return ops
        if name == ev.MODEL_CALL:
            if event.scope_category == "start":
                return []
            duration = data.pop("duration_ms", None)
            ops = [("inc", period, "hermes.model_route.count", _dims(data), 1)]
            if duration is not None:
                ops.append(("sample", "model_call", stamp(when), duration))
            return ops
        if name == ev.TOOL_CALL and event.scope_category == "start":
            return []
        if name == ev.CLIENT_ACTIVE:
            return [("active", when)]
        if name == ev.CLIENT_FIRST_USABLE:
            return [("latch", FIRST_USABLE_KEY, "hermes.client.first_usable", when)]
        return [("inc", period, _COUNTER_OF[name], _dims(data), 1)]

    def defer(self, work: list[Any]) -> bool:
        """Run ``fn(*args)`` of ``work = [fn, *args]`` on the writer thread, after everything queued before it
        (the stream listener's only work); ``False`` if dropped (queue full or closed, counted in
        ``dropped``). A list: one object to build on the stream's thread, and one for the garbage collector
        to walk while it waits in the queue (writes are tuples, so the two never mix)."""
        return self._put(work)

    def on_writer_thread(self) -> bool:
        """Whether the caller is the writer thread (deferred work runs there)."""
        return self._writer_ident is not None and threading.get_ident() == self._writer_ident

    def _put(self, item: Any, *, bounded: bool = True) -> bool:
        inline = self._inline
        if inline is not None and threading.get_ident() == self._writer_ident:
            inline.append(item)  # produced by deferred work on the writer thread: joins the current batch
            return True
        if self._closed:
            with self._lock:
                self.stats.dropped += 1
            return False
        if self._thread is None:
            self._ensure_thread()
        if bounded and self._queue.qsize() >= self._limit:  # bounded: drop and count, never block the stream's thread
            with self._lock:
                self.stats.dropped += 1
            return False
        self._queue.put(item)
        return True

    def call_soon(self, fn: Callable[[], object]) -> bool:
        """Run ``fn`` on the writer thread after everything submitted before it is committed."""
        return self._put(_Control(fn))

    def flush(self, timeout: float | None = 5.0) -> bool:
        """Wait until every write submitted before this call is committed (acknowledged)."""
        if self._thread is None:
            return True
        marker = _Control(None)
        if not self._put(marker, bounded=False):  # the barrier is no data: a full queue delays it, never drops it
            return False
        return marker.done.wait(timeout)

    def close(self, timeout: float | None = 5.0) -> bool:
        """Flush, then stop the writer thread; later submissions are dropped."""
        flushed = self.flush(timeout)
        self._closed = True
        thread = self._thread
        if thread is not None and thread.is_alive():
            self._queue.put(_STOP)
            thread.join(timeout)
        return flushed

    # ------------------------------------------------------------------ writer thread

    def _ensure_thread(self) -> None:
        if self._thread is None:
            with self._lock:
                if self._thread is None:
                    self._thread = threading.Thread(target=self._run, name="hermes-shared-metrics-writer",
                                                    daemon=True)
                    self._thread.start()

    def _run(self) -> None:
        self._writer_ident = threading.get_ident()
        conn: sqlite3.Connection | None = None
        try:
            while True:
                batch = [self._queue.get()]
                while len(batch) < BATCH_LIMIT:
                    try:
                        batch.append(self._queue.get_nowait())
                    except queue.Empty:
                        break
                ops: list[Op] = []
                stop = False
                pending = deque(batch)
                while pending:
                    item = pending.popleft()
                    if item is _STOP:
                        stop = True
                    elif type(item) is list:
                        pending.extendleft(reversed(self._produce(item)))
                    elif isinstance(item, _Control):
                        conn = self._commit(conn, ops)
                        ops = []
                        self._control(item)
                    else:
                        ops.append(item)
                conn = self._commit(conn, ops)
                if stop:
                    return
        finally:
            if conn is not None:
                conn.close()

    def _produce(self, item: list[Any]) -> list[Any]:
        """Run deferred work; what it submits (writes, control work) is returned, in order, not queued."""
        produced: list[Any] = []
        self._inline = produced
        try:
            item[0](*item[1:])
        except Exception as exc:
            with self._lock:
                self.stats.rejected_events += 1
            logger.debug("hermes_pipeline: shared metrics: deferred work failed: %s: %s", type(exc).__name__, exc)
        finally:
            self._inline = None
        return produced

    def _control(self, item: _Control) -> None:
        try:
            if item.fn is not None:
                item.fn()
        except Exception as exc:
            logger.warning("hermes_pipeline: shared metrics: background task failed: %s: %s", type(exc).__name__, exc)
        finally:
            item.done.set()

    def _commit(self, conn: sqlite3.Connection | None, ops: list[Op]) -> sqlite3.Connection | None:
        if not ops:
            return conn
        for attempt in range(BUSY_RETRIES):
            if attempt:
                time.sleep(0.01 * attempt)  # back off on the writer thread; the stream's thread never waits
            try:
                if conn is None:
                    conn = self.store.connect()
                with transaction(conn):
                    apply_ops(conn, ops, self.resource)
                with self._lock:
                    self.stats.committed += len(ops)
                return conn
            except StoreBusy:
                with self._lock:
                    self.stats.lock_timeouts += 1
            except Exception as exc:
                with self._lock:
                    self.stats.store_errors += 1
                logger.warning("hermes_pipeline: shared metrics: writing counters failed: %s: %s",
                               type(exc).__name__, exc)
                if conn is not None:
                    conn.close()
                conn = None
                break
        with self._lock:
            self.stats.dropped += len(ops)
        return conn
