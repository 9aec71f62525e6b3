"""Bounded, non-blocking delivery to one destination (spec 04 §5, FMT-79..FMT-85).

(Over 400 lines on purpose: the caller side and the worker side of the queue share its counters and
the hand-over rules between them, which are only safe read together.)

A :class:`BoundedWriter` owns a bounded FIFO and one daemon worker thread. The hook caller only
calls :meth:`BoundedWriter.submit` (a lock-free append, never I/O, never waiting on the
destination); the worker takes batches, encodes them (``encode``, optional) and hands them to the
:class:`Destination`, retrying retryable failures with exponential backoff and giving up after
``max_attempts``. Every item is accounted for::

    submitted == written + dropped_after_errors + dropped_at_close + queue_depth + in_flight

and items refused at the door are counted in ``dropped_queue_full`` / ``dropped_queue_bytes`` /
``dropped_closed``. The queue is bounded by item count (``max_queue_size``) and, given ``max_queue_bytes``,
by the estimated bytes of the items it holds (:mod:`hermes_pipeline.export.sizes`): an item that would pass
either bound is refused the same way (``force`` passes both). A batch
still in flight when :meth:`BoundedWriter.close` gives up is counted as ``dropped_at_close`` at once,
even if the stuck write completes later. Warnings
are logged once per (writer, error kind) and name the writer, never a destination value, header
or payload.

A destination is anything with ``write(batch: list) -> None`` that raises on failure; optional
``open()``, ``close()`` (both called on the worker thread) and ``retryable(exc) -> bool``. Raise
:class:`~hermes_pipeline.export.errors.DeliveryError` with ``delivered=n`` when the first ``n``
items of the batch did get through. Test doubles live in :mod:`hermes_pipeline.export.destinations`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from itertools import chain, repeat
from typing import Any, Final, Protocol, overload, runtime_checkable

logger: Final = logging.getLogger("hermes_pipeline.export")

DEFAULT_MAX_QUEUE_SIZE: Final = 10_000
DEFAULT_MAX_BATCH_SIZE: Final = 512
DEFAULT_MAX_QUEUE_BYTES: Final = 64 * 2**20
"""The byte bound of the export queues unless configured (``max_queue_bytes`` of the ``observability``
component): 64 MiB of estimated payload per queue. Measured on real Hermes payloads (``bench_real_payloads``):
the publication queue peaks at 18 MB estimated at the bench's pace (3.5x headroom, nothing dropped), a full
queue of 10,000 records holds 53 MB estimated for about 155 MiB of RSS (the estimate counts text, not Python's
object overhead)."""
MIN_MAX_QUEUE_BYTES: Final = 2**20
"""The smallest configurable byte bound (1 MiB): below it one LLM request with its history would not fit."""
_INT: Final = frozenset({int})
"""The types of a batch's estimates that :meth:`BoundedWriter._estimate_all` takes as they are."""


@runtime_checkable
class Destination(Protocol):
    """The transport seam: deliver one batch or raise."""

    def write(self, batch: list[Any]) -> None:
        """Deliver ``batch`` (encoded items: ``bytes`` or dicts) in order; raise on failure."""


def is_retryable(exc: BaseException) -> bool:
    """Default retry decision: an explicit ``retryable`` attribute, else connection errors and timeouts."""
    flag = getattr(exc, "retryable", None)
    if isinstance(flag, bool):
        return flag
    return isinstance(exc, ConnectionError | TimeoutError)


def _error_kind(exc: BaseException) -> str:
    kind = getattr(exc, "kind", None)
    return kind if isinstance(kind, str) else type(exc).__name__


IDLE_POLLS: Final = 10
"""Empty looks (``idle_wakeup`` apart) after which an idle worker stops polling (``idle_sleep``)."""


class BoundedWriter:
    """A bounded queue plus one daemon worker that batches items to ``destination``.

    Args:
        destination: where batches go (see the module docstring).
        name: how warnings and stats name this writer (``atof.sinks[0]``); never a URL or path.
        max_queue_size: items buffered before :meth:`submit` drops (newest first, FMT-81).
        max_queue_bytes: estimated bytes buffered before :meth:`submit` drops the same way (``None``: no byte
            bound). An item is always accepted into an empty queue, so one item larger than the bound still
            gets through when the writer keeps up; the batch in flight is not counted.
        size: the estimate of one item in bytes (e.g. :func:`~hermes_pipeline.export.sizes.event_bytes`),
            called on the submitting thread unless the caller passes ``nbytes``; must be cheap (never a walk
            of the whole item). Without it (and without ``nbytes``) an item counts as 0 bytes.
        max_batch_size: most items handed to one ``write`` call.
        encode: called on the worker thread for each item before writing; an item whose encoding
            raises is dropped and counted as an error.
        max_attempts: write attempts per batch (first try included) for retryable errors.
        backoff_initial, backoff_max: seconds before the first retry, doubled up to the maximum.
        on_batch_dropped: called on the worker thread after items were dropped for errors (an
            exporter resets per-connection state there, e.g. the ATOF history delta).
        on_batch: called on the worker thread before each batch is encoded (a daily ATOF file's encoder
            settles there the day its batch is written for).
        linger: seconds the worker waits for a batch to fill once items are queued, so that the
            caller's thread never pays a thread wake-up per item; a full batch, :meth:`flush` and
            :meth:`close` end the wait at once.
        idle_wakeup: how often an idle worker looks for new items. :meth:`submit` never wakes the
            worker for a single item (only for a full batch), so a paced caller pays no thread
            wake-up; items wait at most ``idle_wakeup + linger`` seconds before being written.
        idle_sleep: after :data:`IDLE_POLLS` looks that found nothing, the worker stops polling and
            sleeps up to this long; the next :meth:`submit` wakes it (one wake-up, paid by the
            caller once per idle spell). An agent that waits minutes for its user then costs no
            CPU, and no interpreter-lock hand-over, for the export threads.
    """

    def __init__(self, destination: Destination, *, name: str, max_queue_size: int = DEFAULT_MAX_QUEUE_SIZE,
                 max_batch_size: int = DEFAULT_MAX_BATCH_SIZE, encode: Callable[[Any], Any] | None = None,
                 max_attempts: int = 4, backoff_initial: float = 0.1, backoff_max: float = 2.0,
                 on_batch_dropped: Callable[[], None] | None = None, linger: float = 0.05,
                 idle_wakeup: float = 0.05, idle_sleep: float = 2.0, max_queue_bytes: int | None = None,
                 size: Callable[[Any], int] | None = None, on_batch: Callable[[], None] | None = None) -> None:
        if max_queue_size < 1 or max_batch_size < 1 or max_attempts < 1:
            raise ValueError("max_queue_size, max_batch_size and max_attempts must be >= 1")
        if max_queue_bytes is not None and max_queue_bytes < 1:
            raise ValueError("max_queue_bytes must be >= 1 (or None)")
        self.destination = destination
        self.name = name
        self._max = max_queue_size
        self._batch = max_batch_size
        self._max_bytes = max_queue_bytes
        self._sizes: deque[int] = deque()
        """With a byte bound, the estimated bytes of the queued items, in their order: a submitter appends an item's
        size just before the item, the worker takes as many sizes as items (under the lock). A second deque rather
        than ``(item, size)`` pairs: a pair is one more object for the garbage collector to track per item.
        Two submitters interleaving may pair sizes with each other's items; the sum taken off stays exact once
        both are taken, which is all the bound reads."""
        self._size = size
        self._bytes_in = 0
        """Estimated bytes ever queued, added by the submitting threads only (no lock, see :meth:`submit`)."""
        self._bytes_out = 0
        """Estimated bytes taken off the queue or dropped from it, added by the worker (or close) under the lock."""
        self._encode = encode
        self._attempts = max_attempts
        self._backoff = (max(backoff_initial, 0.0), max(backoff_max, 0.0))
        self._on_dropped = on_batch_dropped
        self._on_batch = on_batch
        self._idle_wakeup = idle_wakeup
        self._idle_sleep = max(idle_sleep, idle_wakeup)
        self._sleeping = False
        """The worker stopped polling (see ``idle_sleep``): :meth:`submit` wakes it."""
        self.wakeups = 0
        """How often the worker woke up without a full batch to write (polls and wake-ups; for tests)."""
        self._linger = max(linger, 0.0)
        self._urgent = False
        self._retryable: Callable[[BaseException], bool] = getattr(destination, "retryable", is_retryable)
        self._queue: deque[Any] = deque()
        self._width = 1
        """Queue entries per item (a :class:`RecordWriter` queues each of its records as its values)."""
        self._put: Callable[[Any], None] = self._queue.append
        self._put_all: Callable[[list[Any]], None] = self._queue.extend
        self._max_entries = max_queue_size
        self._batch_entries = max_batch_size
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._wake = threading.Event()
        self._abandon = threading.Event()
        self._idle = False
        self._closing = False
        self._close_deadline = 0.0
        self._thread: threading.Thread | None = None
        self._warned: set[str] = set()
        self._full_warning_due = False
        self._full_seen = False
        self._counts = dict.fromkeys(("written", "dropped_queue_full", "dropped_queue_bytes", "dropped_after_errors",
                                      "dropped_at_close", "dropped_closed", "errors", "retries"), 0)
        self._done = 0
        self._taken = 0
        """Items the worker took off the queue; ``submitted`` is this plus the queue's length."""
        self._left = 0
        """Items of the batch in flight not yet settled as written or dropped."""
        self._ready = False
        """The worker has opened the destination (flush waits for it too)."""

    # ------------------------------------------------------------------ caller side

    def start(self) -> BoundedWriter:
        """Start the worker thread (idempotent)."""
        with self._lock:
            if self._thread is None and not self._closing:
                self._thread = threading.Thread(target=self._run, name=f"hermes-export:{self.name}", daemon=True)
                self._thread.start()
        return self

    def submit(self, item: Any, *, force: bool = False, nbytes: int | None = None) -> bool:
        """Queue ``item``; ``False`` (and a counted drop) when the queue is full or the writer closed.

        With a byte bound, ``nbytes`` (else the writer's ``size`` of the item) is its estimated size; an item
        that would take the queued bytes past the bound is refused and counted (``dropped_queue_bytes``) like
        one past the count, unless the queue is empty.

        Never blocks on the destination, never does I/O and takes no lock (a deque append is
        atomic): a worker that holds the writer's lock can never make the hook caller wait. The
        first queue-full drop is reported by one WARNING from the worker thread (FMT-80).
        ``force`` queues past a full queue: for the end of a scope whose start was accepted, so
        that a stateful exporter never keeps a scope open forever (the overshoot is bounded by
        the number of open scopes).
        """
        queue = self._queue
        if self._closing:
            self._count_refused("dropped_closed")
            return False
        if len(queue) >= self._max_entries and not force:
            self._count_refused("dropped_queue_full")
            return False
        limit = self._max_bytes
        if limit is None:
            self._put(item)
        else:
            n = nbytes if nbytes is not None else self._estimate(item)
            if queue and not force and self._bytes_in - self._bytes_out + n > limit:
                self._count_refused("dropped_queue_bytes")
                return False
            self._sizes.append(n)
            self._put(item)
            # Only submitting threads write ``_bytes_in`` and only the worker ``_bytes_out``, so the worker never
            # loses an update; an interleaving of two submitters could only lose an addition, which loosens the
            # bound by that item and never refuses more.
            self._bytes_in += n
        if len(queue) == self._batch_entries:  # a full batch is waiting: worth a wake-up now
            self._wake.set()
        elif self._sleeping:  # the worker stopped polling after an idle spell: wake it, once
            self._sleeping = False
            self._wake.set()
        # Otherwise the polling worker finds the item on its next look (``idle_wakeup``): waking a
        # thread costs the caller a futex call (~17 us measured on a 2-vCPU VM), the poll costs
        # it nothing.
        return True

    def submit_sized(self, item: Any, nbytes: int) -> bool:
        """:meth:`submit` (without ``force``) of an item whose estimated size the caller computed where it was
        cheap: the shortest path, for the agent's thread (the publication queue's records)."""
        queue = self._queue
        if self._closing or len(queue) >= self._max_entries:
            self._count_refused("dropped_closed" if self._closing else "dropped_queue_full")
            return False
        if self._max_bytes is None:
            self._put(item)
        elif queue and self._bytes_in - self._bytes_out + nbytes > self._max_bytes:
            self._count_refused("dropped_queue_bytes")
            return False
        else:
            self._sizes.append(nbytes)
            self._put(item)
            self._bytes_in += nbytes  # see submit()
        if len(queue) == self._batch_entries:  # see submit()
            self._wake.set()
        elif self._sleeping:
            self._sleeping = False
            self._wake.set()
        return True

    def submit_many(self, items: list[Any], nbytes: list[int] | None = None) -> bool:
        """Queue every item of ``items`` at once, or none of them: one hand-over per batch of a producer.

        ``False`` (nothing queued and nothing counted) when the writer is closing or the items do not all
        fit below ``max_queue_size`` and ``max_queue_bytes`` (``nbytes``: their estimated sizes, else the
        writer's ``size`` of each); the caller then offers them one at a time with :meth:`submit`, which
        counts each refusal and forces what must get in (FMT-80, FMT-81). When they all fit, the outcome
        is exactly that of one :meth:`submit` per item, in order (none of them could have been refused, so
        ``force`` changes nothing), for one bound check, one append and one wake-up decision. Lock-free,
        like :meth:`submit`.
        """
        queue = self._queue
        before = len(queue)
        if self._closing or before + len(items) * self._width > self._max_entries:
            return False
        limit = self._max_bytes
        if limit is None:
            self._put_all(items)
        else:
            sizes = nbytes if nbytes is not None else self._estimate_all(items)
            total = sum(sizes)
            if self._bytes_in - self._bytes_out + total > limit:
                return False
            self._sizes.extend(sizes)
            self._put_all(items)
            self._bytes_in += total
        if before < self._batch_entries <= len(queue):  # a full batch is waiting: worth a wake-up now
            self._wake.set()
        elif self._sleeping:  # the worker stopped polling after an idle spell: wake it, once
            self._sleeping = False
            self._wake.set()
        return True

    def _estimate_all(self, items: list[Any]) -> list[int]:
        """:meth:`_estimate` of each of ``items``, in one pass without a frame per item when the size function gives
        a non-negative ``int`` for each (the publication thread hands every sink its batch this way); item by item
        otherwise, with the same results."""
        size = self._size
        if size is None:
            return [0] * len(items)
        try:
            sizes = list(map(size, items))
        except Exception:
            return [self._estimate(item) for item in items]
        if sizes and (set(map(type, sizes)) != _INT or min(sizes) < 0):
            return [self._estimate(item) for item in items]
        return sizes

    def _estimate(self, item: Any) -> int:
        size = self._size
        if size is None:
            return 0
        try:
            return max(int(size(item)), 0)
        except Exception:  # an estimate never costs the caller an exception: the item then counts as empty
            return 0

    def _count_refused(self, key: str) -> None:
        with self._lock:  # only on the drop path: overload is no time to lose counts
            self._counts[key] += 1
            if key != "dropped_closed" and not self._full_seen:
                self._full_seen = True
                self._full_warning_due = True
                self._wake.set()

    def record_dropped(self, count: int = 1) -> None:
        """Count items the caller dropped itself because of back-pressure (e.g. the end of a dropped start)."""
        with self._lock:
            self._counts["dropped_queue_full"] += count

    def flush(self, deadline_seconds: float) -> bool:
        """Wait until everything submitted before this call was processed; ``False`` on timeout (FMT-84)."""
        end = time.monotonic() + max(deadline_seconds, 0.0)
        with self._cond:
            target = self._taken + self._depth()
            while self._done < target or not self._ready:
                remaining = end - time.monotonic()
                if remaining <= 0 or self._thread is None or not self._thread.is_alive():
                    return False
                self._urgent = True
                self._wake.set()
                self._cond.wait(remaining)
        return True

    def close(self, deadline_seconds: float = 5.0) -> bool:
        """Stop accepting items, write what is queued within the deadline, close the destination.

        Items still queued at the deadline are dropped and counted (``dropped_at_close``); returns
        ``False`` in that case. Idempotent; never raises.
        """
        self.begin_close(deadline_seconds)
        with self._cond:
            thread = self._thread
        if thread is None:
            with self._lock:
                self._drop_queued()
            return self._counts["dropped_at_close"] == 0
        thread.join(max(self._close_deadline - time.monotonic(), 0.0))
        if not thread.is_alive() and self._queue:  # appended while closing, after the worker's last look
            with self._cond:
                self._drop_queued()
            return False
        if thread.is_alive():
            self._abandon.set()
            with self._cond:
                self._drop_queued()
                self._account("dropped_at_close", self._left)  # the batch stuck in flight
            self._warn_once("close_deadline", "close deadline passed with events still queued; they were dropped")
            return False
        return True

    def begin_close(self, deadline_seconds: float) -> None:
        """Stop accepting items and let the worker drain until ``deadline_seconds`` from now, without
        waiting; a later :meth:`close` keeps that deadline (several writers then drain side by side)."""
        with self._cond:
            if not self._closing:
                self._closing = True
                self._close_deadline = time.monotonic() + max(deadline_seconds, 0.0)
        self._wake.set()

    def _drop_queued(self) -> None:
        dropped = self._depth()
        if self._max_bytes is not None:
            sizes = self._sizes
            self._bytes_out += sum(map(deque.popleft, repeat(sizes, min(dropped, len(sizes)))))
        self._queue.clear()
        self._taken += dropped
        self._counts["dropped_at_close"] += dropped
        self._done += dropped
        self._cond.notify_all()

    def stats(self) -> dict[str, int]:
        """Counters: ``submitted``, ``written``, ``dropped_queue_full``, ``dropped_queue_bytes``,
        ``dropped_after_errors``, ``dropped_at_close``, ``dropped_closed``, ``errors``, ``retries``,
        ``queue_depth`` and ``queue_bytes`` (estimated bytes queued; 0 without a byte bound)."""
        with self._lock:
            depth = self._depth()
            out = {"submitted": self._taken + depth, **self._counts, "queue_depth": depth,
                   "queue_bytes": max(self._bytes_in - self._bytes_out, 0)}
        return out

    @property
    def capacity(self) -> int:
        """``max_queue_size``."""
        return self._max

    @property
    def byte_capacity(self) -> int | None:
        """``max_queue_bytes`` (``None``: bounded by count only)."""
        return self._max_bytes

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closing

    def _depth(self) -> int:
        """Items queued (a :class:`RecordWriter` queues each item as several entries)."""
        return len(self._queue)

    def _take(self) -> list[Any]:
        """The next batch, taken off the queue (the writer's lock held)."""
        queue = self._queue
        return list(map(deque.popleft, repeat(queue, min(len(queue), self._batch))))  # no frame per item

    # ------------------------------------------------------------------ worker side

    def _warn_once(self, key: str, message: str) -> None:
        with self._lock:
            if key in self._warned:
                return
            self._warned.add(key)
        logger.warning("hermes_pipeline: export %s: %s", self.name, message)

    def _call(self, method: str) -> None:
        fn = getattr(self.destination, method, None)
        if callable(fn):
            try:
                fn()
            except Exception as exc:
                self._warn_once(f"{method}:{_error_kind(exc)}", f"destination {method}() failed ({_error_kind(exc)})")

    def _run(self) -> None:
        self._call("open")
        with self._cond:
            self._ready = True
            self._cond.notify_all()
        queue = self._queue
        wake = self._wake
        empty_looks = 0
        while True:
            if self._full_warning_due:
                self._full_warning_due = False
                self._warn_once("queue_full", "queue full (items or bytes); new events are dropped and counted (first drop)")
            if not queue:
                self._urgent = False
                if self._closing or self._abandon.is_set():
                    break
                empty_looks += 1
                deep = empty_looks > IDLE_POLLS
                self._idle = True
                self._sleeping = deep
                if not queue and not self._closing:  # re-check after publishing these (no lost wake-up)
                    wake.wait(self._idle_sleep if deep else self._idle_wakeup)
                self._sleeping = self._idle = False
                self.wakeups += 1
                wake.clear()
                continue
            empty_looks = 0
            if self._depth() < self._batch and not (self._urgent or self._closing) and self._linger > 0:
                wake.wait(self._linger)  # gather a batch; a full batch, flush() or close() cut this short
                wake.clear()
            with self._lock:  # callers append without it; taking and counting stay consistent for stats()
                batch = self._take()
                if self._max_bytes is not None:  # each item's size was queued before it: as many are there
                    sizes = self._sizes
                    self._bytes_out += sum(map(deque.popleft, repeat(sizes, min(len(batch), len(sizes)))))
                self._taken += len(batch)
                self._left = len(batch)
            self._deliver(batch)
            del batch  # an idle worker holds none of the items it wrote (a KB-sized event each, on real payloads)
        self._call("close")

    def _account(self, key: str, count: int) -> None:
        """Settle ``count`` items of the batch in flight under ``key`` (lock held by the caller)."""
        count = min(count, self._left)
        if count > 0:
            self._counts[key] += count
            self._left -= count
            self._done += count
            self._cond.notify_all()

    def _encoded(self, batch: list[Any]) -> list[Any]:
        encode = self._encode
        if encode is None:
            return batch
        out: list[Any] = []
        append = out.append
        for item in batch:
            try:
                encoded = encode(item)
            except Exception as exc:
                with self._lock:
                    self._counts["errors"] += 1
                    self._account("dropped_after_errors", 1)
                self._warn_once(f"encode:{type(exc).__name__}", f"an event could not be encoded ({type(exc).__name__}); "
                                "it was dropped")
                continue
            if encoded is not None:
                append(encoded)
            else:
                with self._lock:
                    self._account("written", 1)  # nothing to write for this item
        return out

    def _deliver(self, batch: list[Any]) -> None:
        if self._on_batch is not None:
            try:
                self._on_batch()
            except Exception:
                pass  # a hook's failure costs the batch nothing
        items = self._encoded(batch)
        skipped = len(batch) - len(items)
        attempt = 1
        counts = self._counts
        try:
            while items:
                try:
                    self.destination.write(items)
                except Exception as exc:
                    delivered = getattr(exc, "delivered", 0)
                    delivered = delivered if isinstance(delivered, int) and 0 <= delivered <= len(items) else 0
                    items = items[delivered:]
                    with self._lock:
                        counts["errors"] += 1
                        self._account("written", delivered)
                    kind = _error_kind(exc)
                    if self._give_up(exc, attempt):
                        # warn before accounting: a flush() that sees the drop has also seen the warning
                        self._warn_once(f"drop:{kind}", f"delivery failed ({kind}); {len(items)} event(s) dropped after "
                                        f"{attempt} attempt(s); later failures of this kind are counted silently")
                        with self._lock:
                            self._account("dropped_after_errors", len(items))
                        items = []
                        self._dropped()
                        break
                    self._warn_once(f"retry:{kind}", f"delivery failed ({kind}); retrying with backoff")
                    with self._lock:
                        counts["retries"] += 1
                    self._sleep(attempt)
                    attempt += 1
                else:
                    with self._lock:
                        self._account("written", len(items))
                    items = []
        finally:
            if skipped:
                self._dropped()
            with self._cond:
                self._account("dropped_after_errors", self._left)  # only if something went unaccounted

    def _give_up(self, exc: BaseException, attempt: int) -> bool:
        if attempt >= self._attempts or self._abandon.is_set():
            return True
        if self._closing and time.monotonic() >= self._close_deadline:
            return True
        try:
            return not self._retryable(exc)
        except Exception:
            return True

    def _sleep(self, attempt: int) -> None:
        initial, ceiling = self._backoff
        delay = min(initial * (2 ** (attempt - 1)), ceiling)
        if self._closing:
            delay = min(delay, max(self._close_deadline - time.monotonic(), 0.0))
        if delay > 0:
            self._abandon.wait(delay)

    def _dropped(self) -> None:
        if self._on_dropped is not None:
            try:
                self._on_dropped()
            except Exception:
                pass


class RecordWriter(BoundedWriter):
    """A :class:`BoundedWriter` of records: tuples of ``width`` values (the publication queue's, FMT-80).

    A record is queued as its ``width`` values, one queue entry each, not as the tuple: the tuple its caller built
    is freed once queued, so a queued record costs the garbage collector no object of its own. In a burst the
    queue holds thousands of records, and each tuple kept would count towards the next collection and be traversed
    by every collection it lived through (measured: about 1 % of the all-CPU of an ATOF + ATIF export, issue #29).
    The worker hands its destination each batch as :class:`Records`, a sequence of the records as tuples.
    Bounds, batches and counters count records. Each record goes in with one C-level ``extend``, which no other
    thread interleaves, so the worker never takes part of one.
    """

    def __init__(self, destination: Destination, *, width: int, **options: Any) -> None:
        if width < 1:
            raise ValueError("width must be >= 1")
        super().__init__(destination, **options)
        self._width = width
        self._put = self._queue.extend
        self._put_all = self._extend_all
        self._max_entries = self._max * width
        self._batch_entries = self._batch * width

    def submit(self, item: Any, *, force: bool = False, nbytes: int | None = None) -> bool:
        """:meth:`BoundedWriter.submit` of one record (a tuple of ``width`` values)."""
        self._check((item,))
        return super().submit(item, force=force, nbytes=nbytes)

    def submit_many(self, items: list[Any], nbytes: list[int] | None = None) -> bool:
        """:meth:`BoundedWriter.submit_many` of records: all of them, or none (and nothing counted)."""
        self._check(items)
        return super().submit_many(items, nbytes)

    def _check(self, items: Any) -> None:
        width = self._width
        if any(type(item) is not tuple or len(item) != width for item in items):
            raise ValueError(f"a record of {self.name} is a tuple of {width} values")

    def _extend_all(self, items: list[Any]) -> None:
        self._queue.extend(chain.from_iterable(items))  # one C-level call: no other thread interleaves a record

    def _depth(self) -> int:
        return len(self._queue) // self._width

    def _take(self) -> Any:
        queue = self._queue
        values = list(map(deque.popleft, repeat(queue, min(len(queue) // self._width, self._batch) * self._width)))
        return Records(values, self._width)


class Records(Sequence[tuple[Any, ...]]):
    """The records of a :class:`RecordWriter`'s batch over its flat values, made into tuples only as they are read:
    a loop that unpacks each record reuses one tuple for all of them (``zip``), so a batch in flight holds no tuple
    per record either."""

    __slots__ = ("values", "width")

    def __init__(self, values: list[Any], width: int) -> None:
        self.values = values
        self.width = width

    def __len__(self) -> int:
        return len(self.values) // self.width

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return zip(*[iter(self.values)] * self.width)

    @overload
    def __getitem__(self, index: int) -> tuple[Any, ...]: ...

    @overload
    def __getitem__(self, index: slice) -> Records: ...

    def __getitem__(self, index: int | slice) -> tuple[Any, ...] | Records:
        width = self.width
        if isinstance(index, slice):  # what a writer retrying the rest of a batch takes (``items[delivered:]``)
            start, stop, step = index.indices(len(self))
            if step == 1:
                return Records(self.values[start * width:stop * width], width)
            return Records([value for i in range(start, stop, step) for value in self[i]], width)
        count = len(self)
        if index < 0:
            index += count
        if not 0 <= index < count:
            raise IndexError("record index out of range")
        return tuple(self.values[index * width:(index + 1) * width])

    def __repr__(self) -> str:
        return f"Records({list(self)!r})"


def warn_nonzero_counters(log: logging.Logger, exporter: str, counters: Mapping[str, int]) -> None:
    """Log (on the exporter's own ``log``) the non-zero counters of an exporter that shut down (FMT-82):
    names and counts only, never a destination, header or payload."""
    nonzero = {key: value for key, value in counters.items() if value}
    if nonzero:
        log.warning("hermes_pipeline: %s exporter shut down with %s", exporter,
                       ", ".join(f"{key}={value}" for key, value in sorted(nonzero.items())))
