"""One hand-over per publication batch: ``BoundedWriter.submit_many``, ``submit_paired_many`` and the
tracker's ``collect`` / ``hand_over`` (FMT-79, FMT-80, FMT-81, FMT-83, FMT-84, FMT-86).

The batch path must be indistinguishable from one ``submit_paired`` per event: same events queued in the
same order, same refusals, same counters, same pairing of dropped starts and ends. It is checked against
that one-by-one path on twin writers, and on a running writer every offered event is written or counted.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from hermes_pipeline.export.destinations import MemoryDestination
from hermes_pipeline.export.events import END, MARK, SCOPE, START, ScopeEvent, submit_paired, submit_paired_many
from hermes_pipeline.export.scope_hooks import ScopePlugin
from hermes_pipeline.export.writer import BoundedWriter

COUNTERS = ("submitted", "dropped_queue_full", "dropped_closed", "dropped_at_close", "queue_depth")


def _event(kind: str, phase: str | None, uuid: int) -> ScopeEvent:
    return ScopeEvent(kind, phase, uuid, None, uuid, "t", "tool", (), None, None, {}, 1, 1)


@st.composite
def _batches(draw: st.DrawFn) -> list[tuple[str, list[ScopeEvent]]]:
    """Operations ``("batch", events)`` / ``("close", [])``; each end closes a scope started earlier."""
    ops: list[tuple[str, list[ScopeEvent]]] = []
    open_scopes: list[int] = []
    next_uuid = 1
    for _ in range(draw(st.integers(1, 12))):
        if draw(st.integers(0, 9)) == 0:
            ops.append(("close", []))
            continue
        events: list[ScopeEvent] = []
        for action in draw(st.lists(st.sampled_from(("start", "end", "mark")), max_size=7)):
            if action == "end" and open_scopes:
                uuid = open_scopes.pop(draw(st.integers(0, len(open_scopes) - 1)))
                events.append(_event(SCOPE, END, uuid))
            elif action == "mark":
                events.append(_event(MARK, None, next_uuid))
                next_uuid += 1
            else:
                open_scopes.append(next_uuid)
                events.append(_event(SCOPE, START, next_uuid))
                next_uuid += 1
        ops.append(("batch", events))
    return ops


def _idle_writer(dest: MemoryDestination, size: int) -> BoundedWriter:
    return BoundedWriter(dest, name="twin", max_queue_size=size, max_batch_size=1000, linger=0.0)


@settings(max_examples=300, deadline=None)
@given(ops=_batches(), size=st.integers(1, 8), force_end=st.booleans())
def test_fmt_80_81_a_batch_hands_over_like_one_submit_per_event(ops: list[tuple[str, list[ScopeEvent]]], size: int,
                                                                force_end: bool) -> None:
    """FMT-80/81: ``submit_paired_many`` queues, refuses, forces and counts exactly like ``submit_paired``
    called with each event in order, whether the batch fits, overflows the bound, follows a dropped start
    or meets a closed writer; the written items are the same, in the same order."""
    one_dest, many_dest = MemoryDestination(), MemoryDestination()
    one, many = _idle_writer(one_dest, size), _idle_writer(many_dest, size)  # not started: nothing drains
    one_dropped: set[int] = set()
    many_dropped: set[int] = set()
    for op, events in ops:
        if op == "close":
            one.begin_close(5.0)
            many.begin_close(5.0)
            continue
        refused = sum(not submit_paired(one, event, one_dropped, force_end=force_end) for event in events)
        assert submit_paired_many(many, events, many_dropped, force_end=force_end) == refused
        assert {key: many.stats()[key] for key in COUNTERS} == {key: one.stats()[key] for key in COUNTERS}
        assert many_dropped == one_dropped
    one.start()
    many.start()
    assert one.close(5.0) == many.close(5.0)
    assert many_dest.items == one_dest.items
    assert many.stats() == one.stats()


def test_submit_many_is_all_or_none() -> None:
    """``submit_many`` queues a batch that fits at once and nothing (counting nothing) when it does not fit
    or the writer is closing; a batch reaching a full ``max_batch_size`` wakes the worker like ``submit``."""
    dest = MemoryDestination()
    writer = BoundedWriter(dest, name="w", max_queue_size=4, max_batch_size=3, linger=0.0)
    assert writer.submit_many([1, 2])
    assert not writer.submit_many([3, 4, 5])  # 2 + 3 > 4
    assert writer.stats()["submitted"] == 2 and writer.stats()["dropped_queue_full"] == 0
    assert writer._wake.is_set() is False
    assert writer.submit_many([3])  # the queue now holds a full batch: the worker is woken
    assert writer._wake.is_set()
    writer.start()
    assert writer.flush(10.0)
    writer.begin_close(5.0)
    assert not writer.submit_many([9])
    assert writer.stats()["dropped_closed"] == 0
    assert writer.close(5.0)
    assert dest.items == [1, 2, 3]


class RunningWriterMachine(RuleBasedStateMachine):
    """A started writer fed by single submits, forced submits, raw ``submit_many`` and paired batches while
    its worker drains: every offered item is written or counted as dropped, the written ones in the order
    they were accepted, and no end is written after its start was dropped (FMT-80, FMT-81, FMT-84)."""

    def __init__(self) -> None:
        super().__init__()
        self.dest = MemoryDestination()
        self.writer = BoundedWriter(self.dest, name="machine", max_queue_size=6, max_batch_size=4,
                                    linger=0.0, idle_wakeup=0.001).start()
        self.dropped: set[int] = set()
        self.offered = 0
        self.accepted: list[Any] = []
        self.open_scopes: list[int] = []
        self.ends_before_close: set[int] = set()
        """Scopes whose end was offered while the writer was open."""
        self.next_uuid = 1
        self.closed = False

    def _new(self, phase: str | None) -> ScopeEvent:
        event = _event(SCOPE if phase else MARK, phase, self.next_uuid)
        self.next_uuid += 1
        return event

    @rule(force=st.booleans())
    def submit_one(self, force: bool) -> None:
        item = ("item", self.next_uuid)
        self.next_uuid += 1
        self.offered += 1
        if self.writer.submit(item, force=force):
            self.accepted.append(item)

    @rule(count=st.integers(0, 8))
    def submit_raw_batch(self, count: int) -> None:
        items = [("item", self.next_uuid + i) for i in range(count)]
        self.next_uuid += count
        if self.writer.submit_many(items):
            self.offered += count
            self.accepted.extend(items)

    @rule(actions=st.lists(st.sampled_from(("start", "end", "mark")), max_size=8))
    def submit_paired_batch(self, actions: list[str]) -> None:
        events = []
        for action in actions:
            if action == "end" and self.open_scopes:
                uuid = self.open_scopes.pop(0)
                events.append(_event(SCOPE, END, uuid))
                if not self.closed:
                    self.ends_before_close.add(uuid)
            elif action == "start":
                event = self._new(START)
                self.open_scopes.append(event.uuid)
                events.append(event)
            else:
                events.append(self._new(None))
        self.offered += len(events)
        submit_paired_many(self.writer, events, self.dropped)

    @rule()
    def flush(self) -> None:
        assert self.writer.flush(10.0) or self.closed

    @rule()
    def close(self) -> None:  # later offers are refused and counted (dropped_closed)
        assert self.writer.close(10.0) or self.closed
        self.closed = True

    @invariant()
    def counted(self) -> None:
        stats = self.writer.stats()
        refused = stats["dropped_queue_full"] + stats["dropped_closed"]
        assert stats["submitted"] + refused == self.offered

    def teardown(self) -> None:
        self.writer.close(10.0)
        stats = self.writer.stats()
        lost = stats["dropped_queue_full"] + stats["dropped_closed"] + stats["dropped_at_close"] + \
            stats["dropped_after_errors"]
        assert stats["written"] + lost == self.offered  # every offered item is written or counted
        written = self.dest.items
        raw = [item for item in written if isinstance(item, tuple)]
        assert raw == self.accepted  # the single and raw-batch items, in the order they were accepted
        seen_starts: set[int] = set()
        for event in written:
            if isinstance(event, ScopeEvent) and event.phase == START:
                seen_starts.add(event.uuid)
            elif isinstance(event, ScopeEvent) and event.phase == END:
                assert event.uuid in seen_starts  # never half a scope
        ended = {event.uuid for event in written if isinstance(event, ScopeEvent) and event.phase == END}
        # an accepted start's end always got in, forced past a full queue, if it came before the close
        assert seen_starts & self.ends_before_close <= ended


RunningWriterMachine.TestCase.settings = settings(max_examples=60, stateful_step_count=30, deadline=None)
test_fmt_81_every_offered_item_is_written_or_counted = RunningWriterMachine.TestCase


class _Taker:
    """A sink with ``take_many``; ``fail`` makes every hand-over raise."""

    def __init__(self, *, fail: bool = False) -> None:
        self.batches: list[list[ScopeEvent]] = []
        self.fail = fail
        self.thread_ids: set[int] = set()

    def __call__(self, event: ScopeEvent) -> None:
        self.batches.append([event])

    def take_many(self, events: list[ScopeEvent]) -> None:
        self.thread_ids.add(threading.get_ident())
        if self.fail:
            raise RuntimeError("broken sink")
        self.batches.append(events)  # kept as given: the tracker must not reuse the list


def _run_sessions(scope_plugin: ScopePlugin, count: int) -> None:
    from hermes_pipeline.engine.core import Engine
    from hermes_pipeline.host import Host

    engine = Engine()
    engine.add_plugin(scope_plugin, name="scopes")
    host = Host(engine, platform="cli", model="m")
    for index in range(count):
        with host.session(f"s-{index}") as session:
            with session.turn("hi") as turn:
                turn.call_tool("echo", {"x": index}, lambda x: str(x))
                turn.complete("ok")


@pytest.mark.parametrize("fail", [False, True])
def test_fmt_83_84_a_batch_reaches_each_sink_at_once(fail: bool) -> None:
    """FMT-84/83: on the publication thread a sink with ``take_many`` gets each batch of events in one call,
    the same events in the same order as a listener called per event, all of them before ``flush`` returns;
    a ``take_many`` that raises is counted and never stops the other listeners."""
    scope_plugin = ScopePlugin(deferred=True)
    plain: list[ScopeEvent] = []
    taker = _Taker(fail=fail)
    scope_plugin.add_listener(taker)
    scope_plugin.add_listener(plain.append)
    _run_sessions(scope_plugin, 20)
    assert scope_plugin.flush(20.0)
    try:
        assert len(plain) == 20 * 6  # session, turn and tool call: a start and an end each
        assert threading.get_ident() not in taker.thread_ids
        if fail:
            assert taker.batches == [] and scope_plugin.stats()["listener_errors"] >= 1
        else:
            assert [event for batch in taker.batches for event in batch] == plain
            assert len(taker.batches) < len(plain)  # handed over in batches, not one call per event
    finally:
        scope_plugin.shutdown()


def test_fmt_86_a_listener_without_take_many_still_sees_each_event_as_published() -> None:
    """FMT-86: next to a batch-taking sink, a plain listener is still called while each event is published,
    so the bookkeeping it reads back is that of its event (the session open at its start)."""
    scope_plugin = ScopePlugin(deferred=True)
    seen: list[tuple[str, str | None, list[str]]] = []
    scope_plugin.add_listener(_Taker())
    scope_plugin.add_listener(lambda event: seen.append((event.name, event.phase, scope_plugin.open_session_ids())))
    _run_sessions(scope_plugin, 2)
    assert scope_plugin.flush(20.0)
    scope_plugin.shutdown()
    # each turn start sees its own session open, not the state at the end of a batch holding both sessions
    assert [ids for name, phase, ids in seen if name == "agent.run" and phase == START] == [["s-0"], ["s-1"]]


def test_fmt_85_an_event_from_another_thread_follows_what_the_batch_collected() -> None:
    """FMT-85/84: when another thread publishes while the publication thread collects a batch (a shutdown's
    ``close_all``, a flush's ``release_held``), the events collected so far are handed over first, so a
    sink sees them in order and while it is still open, not after its owner shut it down."""
    from hermes_pipeline.export.scopes import ScopeTracker

    taker = _Taker()
    tracker = ScopeTracker((taker,))
    start, end = _event(SCOPE, START, 7), _event(SCOPE, END, 7)
    with tracker.lock:
        tracker.collect()
        tracker.publish(start)
    assert taker.batches == []  # collected, not handed over yet
    other = threading.Thread(target=tracker.publish, args=(end,))
    other.start()
    other.join(10.0)
    assert [[event.uuid for event in batch] for batch in taker.batches] == [[7], [7]]
    assert [batch[0].phase for batch in taker.batches] == [START, END]
    tracker.hand_over()
    assert len(taker.batches) == 2  # nothing handed over twice


_odd_sizes = st.lists(st.one_of(st.integers(-5, 400), st.floats(-3.0, 300.0, allow_nan=False), st.booleans(),
                                st.just("raise"), st.just(None)), min_size=1, max_size=20)


@settings(max_examples=300, deadline=None)
@given(sizes=_odd_sizes, limit=st.integers(1, 3000))
def test_fmt_81_a_batch_is_estimated_as_item_by_item(sizes: list[Any], limit: int) -> None:
    """FMT-81: ``submit_many`` estimates a batch in one pass when every estimate is a non-negative ``int``, and item by
    item otherwise (a negative, a float, a bool, ``None`` or a raising size function): the queued bytes, refusals
    and written items are those of one ``submit`` per item either way."""

    def size(item: int) -> Any:
        value = sizes[item]
        if value == "raise":
            raise RuntimeError("no estimate")
        return value

    items = list(range(len(sizes)))
    one_dest, many_dest = MemoryDestination(), MemoryDestination()
    one = BoundedWriter(one_dest, name="one", max_queue_size=100, max_queue_bytes=limit, size=size, linger=0.0)
    many = BoundedWriter(many_dest, name="many", max_queue_size=100, max_queue_bytes=limit, size=size, linger=0.0)
    estimates = [max(int(value), 0) if value not in ("raise", None) else 0 for value in sizes]
    fits = sum(estimates) <= limit
    assert many.submit_many(items) is fits
    if fits:
        for item in items:
            assert one.submit(item)
        assert many.stats()["queue_bytes"] == one.stats()["queue_bytes"] == sum(estimates)
    else:
        assert many.stats()["queue_bytes"] == 0 and many.stats()["submitted"] == 0
    for writer in (one, many):
        writer.start()
        assert writer.close(5.0)
    assert many_dest.items == one_dest.items
