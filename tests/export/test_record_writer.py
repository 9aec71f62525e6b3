"""The publication queue's records queued without their tuple: ``RecordWriter`` (FMT-79, FMT-80, FMT-81, FMT-84,
FMT-85; issue #29).

A ``RecordWriter`` must behave exactly as a ``BoundedWriter`` of the same records (same refusals, counters,
batches and items written, in order), keep no reference to the tuple a caller offered, and never hand its
destination part of a record, whatever the number of threads offering records at once.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_pipeline.export.destinations import MemoryDestination
from hermes_pipeline.export.scope_hooks import ScopePlugin
from hermes_pipeline.export.errors import DeliveryError
from hermes_pipeline.export.writer import BoundedWriter, Records, RecordWriter

WIDTH = 5


def _record(n: int) -> tuple[Any, ...]:
    return (f"hook-{n}", n, None, ("field", n), {"copy": n} if n % 2 else None)


_ops = st.lists(st.one_of(
    st.tuples(st.just("sized"), st.integers(0, 400)),
    st.tuples(st.just("submit"), st.booleans()),
    st.tuples(st.just("many"), st.integers(0, 4)),
    st.tuples(st.just("dropped"), st.just(0)),
    st.tuples(st.just("close"), st.just(0)),
), max_size=40)


@settings(max_examples=300, deadline=None)
@given(ops=_ops, size=st.integers(1, 8), batch=st.integers(1, 5), max_bytes=st.one_of(st.none(), st.integers(1, 900)))
def test_fmt_80_81_a_record_writer_queues_counts_and_writes_as_a_writer_of_tuples(
        ops: list[tuple[str, Any]], size: int, batch: int, max_bytes: int | None) -> None:
    """FMT-80/81/85: every refusal (full, bytes, closed), forced record, all-or-none batch and counter of a
    ``RecordWriter`` is the one a ``BoundedWriter`` of the same tuples gives; after both drain, the same
    records were written, in the same batches."""
    plain_dest, record_dest = MemoryDestination(), MemoryDestination()
    options: dict[str, Any] = {"max_queue_size": size, "max_batch_size": batch, "linger": 0.0,
                               "max_queue_bytes": max_bytes}
    plain = BoundedWriter(plain_dest, name="plain", **options)  # not started: nothing drains before the end
    records = RecordWriter(record_dest, width=WIDTH, name="records", **options)
    n = 0
    for op, arg in ops:
        if op == "sized":
            n += 1
            assert records.submit_sized(_record(n), arg) == plain.submit_sized(_record(n), arg)
        elif op == "submit":
            n += 1
            assert records.submit(_record(n), force=arg, nbytes=n) == plain.submit(_record(n), force=arg, nbytes=n)
        elif op == "many":
            items = [_record(n + k + 1) for k in range(arg)]
            n += arg
            sizes = [3 * k for k in range(arg)]
            assert records.submit_many(items, sizes) == plain.submit_many(items, sizes)
        elif op == "dropped":
            records.record_dropped()
            plain.record_dropped()
        else:
            records.begin_close(5.0)
            plain.begin_close(5.0)
        assert records.stats() == plain.stats()
    plain.start()
    records.start()
    assert records.flush(10.0) == plain.flush(10.0)
    assert records.close(10.0) == plain.close(10.0)
    assert records.stats() == plain.stats()
    assert record_dest.items == plain_dest.items
    assert all(type(item) is tuple and len(item) == WIDTH for item in record_dest.items)
    assert [len(b) for b in record_dest.batches] == [len(b) for b in plain_dest.batches]


def test_issue_29_a_queued_record_keeps_no_tuple_alive() -> None:
    """The tuple a lane builds is not what the queue holds: once offered, nothing but its caller refers to it (so
    a burst of queued records leaves the garbage collector no tuple per record to count and traverse)."""
    writer = RecordWriter(MemoryDestination(), width=WIDTH, name="records", linger=0.0)
    record = _record(7)
    before = sys.getrefcount(record)
    assert writer.submit_sized(record, 10)
    assert writer.submit(record)
    assert writer.submit_many([record, record])
    assert sys.getrefcount(record) == before
    assert writer.stats()["queue_depth"] == 4
    writer.start()
    assert writer.close(5.0)


def test_fmt_79_records_offered_by_many_threads_arrive_whole_and_in_each_threads_order() -> None:
    """FMT-79/84: threads offering records while the worker drains: every record arrives whole (never mixed
    with another's values), each thread's records in its order, and the counters add up."""
    dest = MemoryDestination()
    writer = RecordWriter(dest, width=WIDTH, name="records", max_queue_size=100_000, max_batch_size=7,
                          linger=0.0, idle_wakeup=0.001).start()
    threads, per_thread = 4, 3000
    start = threading.Barrier(threads)

    def offer(t: int) -> None:
        start.wait()
        for k in range(per_thread):
            assert writer.submit_sized((t, k, t * 1_000_003 + k, (t, k), None), 1)

    workers = [threading.Thread(target=offer, args=(t,)) for t in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert writer.flush(30.0)
    seen: dict[int, list[int]] = {t: [] for t in range(threads)}
    for t, k, check, pair, last in dest.items:
        assert check == t * 1_000_003 + k and pair == (t, k) and last is None
        seen[t].append(k)
    assert all(ks == list(range(per_thread)) for ks in seen.values())
    assert writer.stats()["written"] == threads * per_thread
    assert all(len(batch) <= 7 for batch in dest.batches)
    assert writer.close(5.0)


def test_fmt_81_a_partly_delivered_batch_of_records_retries_only_the_rest() -> None:
    """FMT-81: a destination that took the first records of a batch and failed gets the rest again, whole."""

    class Partial:
        def __init__(self) -> None:
            self.items: list[Any] = []
            self.batches: list[Any] = []

        def write(self, batch: Any) -> None:
            self.batches.append(batch)
            if len(self.batches) == 1:
                self.items.extend(batch[:2])
                raise DeliveryError("HTTP 502", retryable=True, delivered=2, status=502)
            self.items.extend(batch)

    dest = Partial()
    writer = RecordWriter(dest, width=WIDTH, name="records", backoff_initial=0.001, linger=0.0)
    for n in range(5):
        writer.submit(_record(n))
    writer.start()
    assert writer.flush(5.0)
    assert dest.items == [_record(n) for n in range(5)]
    assert isinstance(dest.batches[0], Records) and len(dest.batches[1]) == 3
    assert writer.stats()["written"] == 5
    assert writer.close(1.0)


@given(count=st.integers(0, 9), index=st.one_of(st.integers(-12, 12), st.slices(12)))
def test_records_read_as_the_list_of_their_tuples(count: int, index: Any) -> None:
    """``Records`` over flat values reads as the list of their tuples: length, iteration, indexing and slicing."""
    tuples = [_record(n) for n in range(count)]
    records = Records([value for record in tuples for value in record], WIDTH)
    assert len(records) == count and list(records) == tuples
    if isinstance(index, slice):
        assert list(records[index]) == tuples[index]
    elif -count <= index < count:
        assert records[index] == tuples[index]
    else:
        with pytest.raises(IndexError):
            records[index]


@pytest.mark.parametrize("offer", [
    lambda w: w.submit(("too", "short")),
    lambda w: w.submit(["a", "list", "of", "five", "values"]),
    lambda w: w.submit_many([_record(1), ("short",)]),
])
def test_a_value_that_is_no_record_is_refused_with_a_clear_error(offer: Any) -> None:
    writer = RecordWriter(MemoryDestination(), width=WIDTH, name="records")
    with pytest.raises(ValueError, match="a record of records is a tuple of 5 values"):
        offer(writer)
    assert writer.stats()["submitted"] == 0


def test_fmt_80_the_deferred_scope_plugin_queues_records_without_their_tuples() -> None:
    """The publication queue of a deferred scope plugin is a ``RecordWriter`` of five-value records: its hooks'
    records reach the scope kinds whole (a tool call's start and end become one closed scope)."""
    events: list[Any] = []
    plugin = ScopePlugin(deferred=True)
    plugin.add_listener(events.append)
    try:
        assert isinstance(plugin._publication, RecordWriter)
        plugin.on_session_start(session_id="s1", model="m", platform="cli")
        plugin.pre_tool_call(tool_name="read_file", args={"path": "a"}, task_id="t", session_id="s1",
                             tool_call_id="c1", turn_id="u1", api_request_id="r1", middleware_trace=[])
        plugin.post_tool_call(tool_name="read_file", args={"path": "a"}, task_id="t", session_id="s1",
                              tool_call_id="c1", turn_id="u1", api_request_id="r1", result="ok", duration_ms=1,
                              status="ok", error_type=None, error_message=None)
        assert plugin.flush(10.0)
        tools = [e for e in events if e.category == "tool"]
        assert [(e.name, e.phase) for e in tools] == [("read_file", "start"), ("read_file", "end")]
        assert tools[0].data == {"arguments": {"path": "a"}} and tools[1].data == {"result": "ok"}
        stats = plugin.publication_stats()
        assert stats["records"] == 3 and stats["queue_depth"] == 0 and stats["pipeline.events_dropped"] == 0
    finally:
        plugin.shutdown(5.0)
