"""The bounded, non-blocking writer (spec 04 §5: FMT-79..FMT-85) on in-memory and failing destinations."""

from __future__ import annotations

import errno
import logging
import threading
import time
from typing import Any

import pytest

from hermes_pipeline.export import BoundedWriter, DeliveryError, FailingDestination, MemoryDestination


def accounted(stats: dict[str, int]) -> int:
    return stats["written"] + stats["dropped_after_errors"] + stats["dropped_at_close"] + stats["queue_depth"]


def test_fmt_79_submit_runs_io_on_the_worker_thread_only() -> None:
    """FMT-79: the caller only enqueues; write() runs on the writer's own thread."""
    dest = MemoryDestination()
    writer = BoundedWriter(dest, name="t").start()
    for i in range(100):
        assert writer.submit(i)
    assert writer.flush(5.0)
    assert dest.items == list(range(100))
    assert threading.get_ident() not in dest.thread_ids
    assert dest.opened
    assert writer.close(5.0) and dest.closed


def test_fmt_79_submit_never_blocks_on_a_stuck_destination() -> None:
    """FMT-79 / FMT-81: with write() stuck, submit keeps returning at once and drops beyond the bound."""
    gate = threading.Event()
    dest = MemoryDestination(gate=gate)
    writer = BoundedWriter(dest, name="stuck", max_queue_size=10, max_batch_size=1).start()
    writer.submit("first")
    assert dest.writing.wait(5.0)  # the worker now sits inside write()
    started = time.perf_counter()
    results = [writer.submit(i) for i in range(50)]
    assert time.perf_counter() - started < 1.0
    assert results.count(True) == 10 and results.count(False) == 40
    stats = writer.stats()
    assert stats["dropped_queue_full"] == 40 and stats["queue_depth"] == 10
    gate.set()
    assert writer.flush(5.0)
    assert dest.items == ["first", *range(10)]
    writer.close(5.0)


def test_fmt_80_first_queue_full_drop_warns_once(caplog: pytest.LogCaptureFixture) -> None:
    """FMT-80: the first drop logs one WARNING; later drops are only counted."""
    gate = threading.Event()
    writer = BoundedWriter(MemoryDestination(gate=gate), name="atof.sinks[3]", max_queue_size=1,
                           max_batch_size=1).start()
    with caplog.at_level(logging.WARNING, logger="hermes_pipeline.export"):
        for i in range(20):
            writer.submit(i)
        gate.set()
        assert writer.flush(5.0)
        writer.close(5.0)
    warnings = [r for r in caplog.records if "queue full" in r.getMessage()]
    assert len(warnings) == 1 and "atof.sinks[3]" in warnings[0].getMessage()
    assert writer.stats()["dropped_queue_full"] >= 17


def test_fmt_84_flush_is_a_barrier_and_returns_false_when_stuck() -> None:
    """FMT-84: flush returns True once everything submitted before it is processed, False on timeout."""
    gate = threading.Event()
    dest = MemoryDestination(gate=gate)
    writer = BoundedWriter(dest, name="t").start()
    writer.submit("a")
    started = time.monotonic()
    assert writer.flush(0.2) is False
    assert time.monotonic() - started < 3.0
    gate.set()
    assert writer.flush(5.0) is True
    assert dest.items == ["a"]
    writer.close(1.0)


def test_fmt_85_close_writes_what_is_queued() -> None:
    """FMT-85: close() drains the queue within the deadline, then refuses new items (counted)."""
    gate = threading.Event()
    dest = MemoryDestination(gate=gate)
    writer = BoundedWriter(dest, name="t").start()
    for i in range(500):
        writer.submit(i)
    threading.Timer(0.05, gate.set).start()
    assert writer.close(10.0) is True
    assert dest.items == list(range(500)) and dest.closed
    assert writer.submit("late") is False
    stats = writer.stats()
    assert stats["dropped_closed"] == 1 and stats["written"] == 500 and accounted(stats) == stats["submitted"]


def test_fmt_85_close_deadline_drops_and_counts_what_is_left() -> None:
    """FMT-85: with a stuck destination close() gives up at the deadline and counts the dropped items."""
    gate = threading.Event()
    writer = BoundedWriter(MemoryDestination(gate=gate), name="t", max_batch_size=1).start()
    for i in range(5):
        writer.submit(i)
    started = time.monotonic()
    assert writer.close(0.2) is False
    assert time.monotonic() - started < 3.0
    stats = writer.stats()  # four queued + the batch stuck inside write(), counted at once
    assert stats["dropped_at_close"] == 5 and stats["written"] == 0
    gate.set()


def test_retry_with_backoff_then_success_5xx() -> None:
    """FMT-83: retryable failures (5xx) are retried with backoff; nothing is lost."""
    dest = FailingDestination(failures=2)
    writer = BoundedWriter(dest, name="t", backoff_initial=0.001, backoff_max=0.01).start()
    writer.submit(b"x")
    assert writer.flush(5.0)
    stats = writer.stats()
    assert dest.inner.items == [b"x"]
    assert (stats["errors"], stats["retries"], stats["written"], stats["dropped_after_errors"]) == (2, 2, 1, 0)
    writer.close(1.0)


def test_always_failing_destination_is_counted_and_warned_once(caplog: pytest.LogCaptureFixture) -> None:
    """FMT-82 / FMT-83: bounded attempts, dropped batches counted, one warning per error kind."""
    dest = FailingDestination(lambda: DeliveryError("HTTP 503", retryable=True, status=503))
    writer = BoundedWriter(dest, name="atof.sinks[1] (collector)", max_attempts=3, max_batch_size=1,
                           backoff_initial=0.001, backoff_max=0.002).start()
    with caplog.at_level(logging.WARNING, logger="hermes_pipeline.export"):
        for i in range(4):
            writer.submit(i)
        assert writer.flush(5.0)
    stats = writer.stats()
    assert stats["dropped_after_errors"] == 4 and stats["written"] == 0
    assert stats["errors"] == 12 and stats["retries"] == 8 and dest.calls == 12
    messages = [r.getMessage() for r in caplog.records]
    assert sum("dropped after" in m for m in messages) == 1
    assert sum("retrying" in m for m in messages) == 1
    assert all("HTTP 503" in m and "atof.sinks[1] (collector)" in m for m in messages)
    writer.close(1.0)


@pytest.mark.parametrize("error", [
    DeliveryError("HTTP 400", retryable=False, status=400),
    OSError(errno.ENOSPC, "No space left on device"),
    PermissionError(errno.EACCES, "Permission denied"),
])
def test_non_retryable_errors_drop_without_retry(error: BaseException) -> None:
    """FMT-37 / FMT-83: a non-retryable error (4xx, disk full, permission) drops the batch at once."""
    dest = FailingDestination(error)
    writer = BoundedWriter(dest, name="t", backoff_initial=5.0).start()
    writer.submit(b"x")
    assert writer.flush(5.0)
    stats = writer.stats()
    assert (stats["retries"], stats["errors"], stats["dropped_after_errors"]) == (0, 1, 1)
    writer.close(1.0)


def test_connection_refused_is_retryable_by_default() -> None:
    """Connection errors and timeouts retry by default; a destination can decide otherwise."""
    dest = FailingDestination(ConnectionRefusedError(errno.ECONNREFUSED, "refused"), failures=1)
    writer = BoundedWriter(dest, name="t", backoff_initial=0.001).start()
    writer.submit(b"x")
    assert writer.flush(5.0)
    assert writer.stats()["retries"] == 1 and dest.inner.items == [b"x"]
    writer.close(1.0)


def test_partial_delivery_retries_only_the_rest() -> None:
    """A DeliveryError with delivered=n: the first n items count as written, the rest is retried."""

    class Partial:
        def __init__(self) -> None:
            self.items: list[Any] = []
            self.calls = 0

        def write(self, batch: list[Any]) -> None:
            self.calls += 1
            if self.calls == 1:
                self.items.extend(batch[:2])
                raise DeliveryError("HTTP 502", retryable=True, delivered=2, status=502)
            self.items.extend(batch)

    dest = Partial()
    writer = BoundedWriter(dest, name="t", backoff_initial=0.001)
    for i in range(5):
        writer.submit(i)
    writer.start()
    assert writer.flush(5.0)
    assert dest.items == [0, 1, 2, 3, 4]
    assert writer.stats()["written"] == 5
    writer.close(1.0)


def test_encode_runs_on_worker_and_bad_items_are_counted() -> None:
    """Encoding happens on the writer thread; an item that cannot be encoded is dropped and counted."""
    threads: list[int] = []

    def encode(item: Any) -> bytes:
        threads.append(threading.get_ident())
        if item == "bad":
            raise TypeError("not encodable")
        return f"{item}\n".encode()

    dest = MemoryDestination()
    writer = BoundedWriter(dest, name="t", encode=encode).start()
    for item in ("a", "bad", "b"):
        writer.submit(item)
    assert writer.flush(5.0)
    assert dest.items == [b"a\n", b"b\n"]
    assert threading.get_ident() not in threads
    stats = writer.stats()
    assert stats["errors"] == 1 and stats["dropped_after_errors"] == 1 and accounted(stats) == stats["submitted"]
    writer.close(1.0)


def test_concurrent_submitters_lose_nothing_silently() -> None:
    """Thread safety: many submitting threads; every item is written or counted."""
    dest = MemoryDestination()
    writer = BoundedWriter(dest, name="t", max_queue_size=50_000).start()
    barrier = threading.Barrier(8)

    def work(n: int) -> None:
        barrier.wait()
        for i in range(2000):
            writer.submit((n, i))

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert writer.flush(10.0)
    stats = writer.stats()
    assert stats["submitted"] + stats["dropped_queue_full"] == 16_000
    assert len(dest.items) == stats["written"] == stats["submitted"]
    for n in range(8):  # per-producer FIFO order is preserved
        mine = [i for m, i in dest.items if m == n]
        assert mine == sorted(mine)
    writer.close(1.0)


def test_fmt_80_forced_end_is_queued_past_a_full_queue() -> None:
    """FMT-80: the end of an accepted scope is queued even when the queue is full, so stateful
    exporters (ATIF roots, OTel spans) never keep a scope open forever; plain items still drop."""
    gate = threading.Event()
    dest = MemoryDestination(gate=gate)
    writer = BoundedWriter(dest, name="ends", max_queue_size=2, max_batch_size=1).start()
    writer.submit("first")
    assert dest.writing.wait(5.0)
    assert writer.submit("a") and writer.submit("b") and not writer.submit("c")
    assert writer.submit("end-of-a", force=True)
    assert writer.stats()["queue_depth"] == 3
    gate.set()
    assert writer.flush(5.0)
    assert dest.items == ["first", "a", "b", "end-of-a"]
    writer.close(5.0)
    assert not writer.submit("late", force=True)  # a closed writer takes nothing


def test_an_idle_worker_stops_polling_and_the_next_submit_wakes_it() -> None:
    """An idle worker looks for items ``IDLE_POLLS`` times (``idle_wakeup`` apart), then sleeps until a
    submit wakes it: an agent that waits for its user costs no export-thread wake-ups (no CPU, no
    interpreter-lock hand-over), and the first item after the idle spell is still written at once."""
    from hermes_pipeline.export.writer import IDLE_POLLS

    dest = MemoryDestination()
    writer = BoundedWriter(dest, name="idle", idle_wakeup=0.002, idle_sleep=120.0, linger=0.0).start()
    threading.Event().wait(0.4)  # the idle spell under test: 200 looks' worth at 2 ms apart
    assert IDLE_POLLS <= writer.wakeups <= IDLE_POLLS + 1
    assert writer.submit("after the idle spell")
    assert dest.writing.wait(30.0)  # woken by the submit: its own sleep would last 120 s
    assert writer.flush(5.0) and dest.items == ["after the idle spell"]
    assert writer.close(5.0)
