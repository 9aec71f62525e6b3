"""Export queues bounded in estimated bytes as well as items (FMT-79, FMT-80, FMT-81).

A queue full by count of kilobyte payloads holds hundreds of MiB; ``max_queue_bytes`` bounds what a
:class:`~hermes_pipeline.export.writer.BoundedWriter` holds by the items' estimated sizes. An item past the byte
bound meets the same policy as one past the count: refused and counted (``dropped_queue_bytes``), the end of a
refused start dropped with it, an end whose start got in forced past the bound. Worker-free writers (never
started) make the refusals deterministic; a running writer shows every offered item written or counted, in order.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from hermes_pipeline.contract.hooks import OBSERVER_HOOKS
from hermes_pipeline.engine.callbacks import RECORD_LANE
from hermes_pipeline.export.destinations import MemoryDestination
from hermes_pipeline.export.events import END, SCOPE, START, ScopeEvent, submit_paired, submit_paired_many
from hermes_pipeline.export.scope_hooks import ScopePlugin
from hermes_pipeline.export.sizes import BUDGET, ITEM_BYTES, arguments_bytes, event_bytes, payload_bytes, value_bytes
from hermes_pipeline.export.writer import DEFAULT_MAX_QUEUE_BYTES, BoundedWriter


def _writer(dest: MemoryDestination, max_bytes: int, *, count: int = 1000) -> BoundedWriter:
    """A writer whose worker is not started: nothing leaves the queue until :meth:`start`."""
    return BoundedWriter(dest, name="bytes", max_queue_size=count, max_batch_size=1000, linger=0.0,
                         max_queue_bytes=max_bytes, size=len)


def _event(phase: str, uuid: int, text: str) -> ScopeEvent:
    return ScopeEvent(SCOPE, phase, uuid, None, uuid, "t", "tool", (), None, {"result": text}, {}, 1, 1)


def test_fmt_80_items_past_the_byte_bound_are_refused_and_counted() -> None:
    """FMT-80/FMT-81: with room for many more items by count, an item that would take the queued bytes past
    ``max_queue_bytes`` is refused and counted (``dropped_queue_bytes``); smaller ones still get in, in order."""
    dest = MemoryDestination()
    writer = _writer(dest, 100)
    assert writer.submit("a" * 60)
    assert not writer.submit("b" * 60)  # 120 > 100
    assert writer.submit("c" * 30)  # 90
    assert not writer.submit("d" * 11)  # 101 > 100
    stats = writer.stats()
    assert stats["dropped_queue_bytes"] == 2 and stats["dropped_queue_full"] == 0
    assert stats["queue_depth"] == 2 and stats["queue_bytes"] == 90 and stats["submitted"] == 2
    writer.start()
    assert writer.flush(30.0)
    assert dest.items == ["a" * 60, "c" * 30]
    assert writer.stats()["queue_bytes"] == 0  # what the worker took is no longer counted
    assert writer.submit("e" * 100)  # room again
    assert writer.close(30.0)
    assert dest.items[-1] == "e" * 100


def test_an_item_larger_than_the_bound_gets_into_an_empty_queue_and_force_passes_the_bound() -> None:
    """One item never waits for room that cannot come: alone in the queue it is accepted, whatever its size;
    ``force`` (an end whose start got in) passes the byte bound as it passes the count."""
    dest = MemoryDestination()
    writer = _writer(dest, 10)
    assert writer.submit("x" * 50)
    assert not writer.submit("y")
    assert writer.submit("z" * 20, force=True)
    assert writer.stats()["queue_bytes"] == 70
    assert writer.start().close(30.0)
    assert dest.items == ["x" * 50, "z" * 20]
    assert writer.stats()["dropped_queue_bytes"] == 1


def test_explicit_nbytes_wins_over_the_writer_estimate() -> None:
    """A caller that knows an item's size (the publication queue's records) passes it; the writer's ``size``
    is then not called."""
    calls: list[Any] = []
    writer = BoundedWriter(MemoryDestination(), name="n", max_queue_bytes=100, size=lambda item: calls.append(item) or 1)
    assert writer.submit("small", nbytes=60)
    assert not writer.submit("small", nbytes=60)
    assert calls == []
    assert writer.submit_many(["p", "q"], nbytes=[20, 20])
    assert not writer.submit_many(["r"], nbytes=[1])  # 101 > 100: nothing queued, nothing counted
    stats = writer.stats()
    assert stats["queue_bytes"] == 100 and stats["queue_depth"] == 3 and stats["dropped_queue_bytes"] == 1
    writer.close(0.0)


def test_fmt_80_a_start_refused_for_bytes_takes_its_end_with_it() -> None:
    """FMT-80: the pairing policy of a full queue holds for the byte bound: the end of a start refused for bytes
    is dropped and counted too (never half a scope); the end of an accepted start is forced in."""
    dest = MemoryDestination()
    writer = BoundedWriter(dest, name="pairs", max_batch_size=1000, linger=0.0, max_queue_bytes=3000, size=event_bytes)
    dropped: set[int] = set()
    big = "r" * 2000
    assert submit_paired(writer, _event(START, 1, big), dropped)
    assert not submit_paired(writer, _event(START, 2, big), dropped)  # past the bytes: refused, remembered
    assert submit_paired_many(writer, [_event(END, 2, big), _event(END, 1, big)], dropped) == 1
    stats = writer.stats()
    assert stats["dropped_queue_bytes"] == 1 and stats["dropped_queue_full"] == 1  # the end of the refused start
    assert writer.start().close(30.0)
    assert [(e.phase, e.uuid) for e in dest.items] == [(START, 1), (END, 1)]


def test_the_byte_bound_rejects_bad_values() -> None:
    with pytest.raises(ValueError, match="max_queue_bytes"):
        BoundedWriter(MemoryDestination(), name="bad", max_queue_bytes=0)


def test_an_estimate_that_raises_counts_the_item_as_empty() -> None:
    """The estimate runs on the caller's thread: it never raises there."""
    def broken(item: Any) -> int:
        raise RuntimeError("no size")

    writer = BoundedWriter(MemoryDestination(), name="e", max_queue_bytes=10, size=broken)
    assert writer.submit("anything") and writer.stats()["queue_bytes"] == 0
    writer.close(0.0)


# ---------------------------------------------------------------------------- the estimate


_TEXT = st.text(max_size=200)
_LEAVES = st.one_of(_TEXT, st.integers(), st.none(), st.booleans(), st.floats(allow_nan=False))
_VALUES = st.recursive(_LEAVES, lambda inner: st.one_of(st.lists(inner, max_size=6),
                                                        st.dictionaries(st.text(max_size=5), inner, max_size=6)),
                       max_leaves=40)


@settings(max_examples=300, deadline=None)
@given(_VALUES, st.sampled_from([1, 4, BUDGET]))
def test_value_bytes_counts_all_text_within_its_budget(value: Any, budget: int) -> None:
    """Within the budget every string's length is counted (the estimate is at least the text); never raises,
    never negative, whatever the value."""
    estimate = value_bytes(value, budget)
    assert estimate >= 0
    if isinstance(value, str):
        assert estimate == len(value)
    if budget >= _count(value):
        assert estimate >= _text(value)


def _count(value: Any) -> int:
    if isinstance(value, dict):
        return len(value) + sum(_count(v) for v in value.values())
    if isinstance(value, list):
        return len(value) + sum(_count(v) for v in value)
    return 0


def _text(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return sum(_text(v) for v in value.values())
    if isinstance(value, list):
        return sum(_text(v) for v in value)
    return 0


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(max_size=8), st.one_of(_TEXT, st.integers(), st.none(), _VALUES), max_size=8))
def test_arguments_bytes_counts_every_string_argument(args: dict[str, Any]) -> None:
    """A tool call's arguments are sized on the agent's thread without a call per string value: every flat
    string argument (a file's new content) is counted whole."""
    flat = sum(len(value) for value in args.values() if isinstance(value, str))
    assert arguments_bytes(args) >= flat


def test_value_bytes_extrapolates_a_long_history_from_its_first_messages() -> None:
    """A long message list is estimated from the part the budget saw, times its length: close to the text it
    holds, after a bounded look."""
    history = [{"role": "user", "content": "m" * 1000} for _ in range(500)]
    estimate = value_bytes({"messages": history})
    assert 500 * 1000 <= estimate <= 2 * 500 * 1000


def test_payload_bytes_counts_the_request_text_the_host_already_counted() -> None:
    """An LLM request's sanitized copy lies deeper than the budget reaches; ``pre_api_request`` states its text's
    length (``request_char_count``), which the estimate adds without looking."""
    payload = {"session_id": "s", "request": {"method": "POST", "body": {"messages": [{"content": "q" * 40_000}]}},
               "request_char_count": 40_000}
    assert payload_bytes(payload) >= 40_000
    assert payload_bytes({**payload, "request_char_count": True}) < payload_bytes(payload)


# ---------------------------------------------------------------------------- the publication queue


def _plugin_with_unstarted_queue(max_bytes: int) -> ScopePlugin:
    plugin = ScopePlugin(deferred=True)
    assert plugin._publication is not None
    plugin._publication.close(5.0)
    plugin._publication = BoundedWriter(plugin._destination, name="publication", max_attempts=1,
                                        max_queue_bytes=max_bytes)
    return plugin


def _tool_fields(hook: str, call_id: str, result: str = "") -> tuple[Any, ...]:
    values = {"tool_name": "read_file", "args": {"path": "a"}, "session_id": "s1", "tool_call_id": call_id,
              "turn_id": "t1", "result": result, "status": "ok", "duration_ms": 1}
    return tuple(values.get(name) for name in OBSERVER_HOOKS[hook].fields)


def test_fmt_80_publication_records_are_sized_where_they_are_made() -> None:
    """FMT-80/FMT-81: a tool call's end is sized by its result on the record lane, a dispatched payload by a
    bounded look at its values; past ``max_queue_bytes`` the record is dropped and counted in
    ``pipeline.events_dropped`` (and ``pipeline.events_dropped_bytes``), and a dropped opening record takes its
    closing record with it."""
    plugin = _plugin_with_unstarted_queue(50_000)
    pre = getattr(ScopePlugin.pre_tool_call, RECORD_LANE)(plugin)
    post = getattr(ScopePlugin.post_tool_call, RECORD_LANE)(plugin)
    pre(_tool_fields("pre_tool_call", "c1"))
    post(_tool_fields("post_tool_call", "c1", "x" * 30_000))
    queued = plugin.publication_stats()["queue_bytes"]
    assert 30_000 < queued < 30_000 + 4 * ITEM_BYTES
    plugin.pre_tool_call(dict(zip(OBSERVER_HOOKS["pre_tool_call"].fields, _tool_fields("pre_tool_call", "c2"))))
    post(_tool_fields("post_tool_call", "c2", "y" * 30_000))  # past the bound: dropped
    pre(_tool_fields("pre_tool_call", "c3"))
    stats = plugin.publication_stats()
    assert stats["pipeline.events_dropped_bytes"] == 1 and stats["pipeline.events_dropped"] == 1
    assert plugin._publication is not None
    plugin._publication.close(0.0)
    # a start dropped for bytes drops its end too (counted), the pairing rule of a full queue
    plugin = _plugin_with_unstarted_queue(2 * 2**20)
    pre = getattr(ScopePlugin.pre_tool_call, RECORD_LANE)(plugin)
    post = getattr(ScopePlugin.post_tool_call, RECORD_LANE)(plugin)
    post(_tool_fields("post_tool_call", "c0", "z" * (2 * 2**20)))  # alone: accepted whatever its size
    pre(_tool_fields("pre_tool_call", "c4"))  # refused for bytes
    post(_tool_fields("post_tool_call", "c4", "ok"))  # its end: dropped and counted, never queued alone
    stats = plugin.publication_stats()
    assert stats["pipeline.events_dropped_bytes"] == 1 and stats["pipeline.events_dropped"] == 2
    assert stats["queue_depth"] == 1
    assert plugin._publication is not None
    plugin._publication.close(0.0)


def test_fmt_80_an_llm_request_on_its_record_lane_is_sized_with_the_counted_request_text() -> None:
    """FMT-80: ``pre_api_request`` handed over on its record lane (no payload dict) is sized like the dispatched
    payload: the request text the host counted (``request_char_count``) is added, since the sanitized request
    lies deeper than the bounded look reaches."""
    plugin = _plugin_with_unstarted_queue(64 * 2**20)
    lane = getattr(ScopePlugin.pre_api_request, RECORD_LANE)(plugin)
    fields = OBSERVER_HOOKS["pre_api_request"].fields
    values = {name: None for name in fields} | {"session_id": "s1", "turn_id": "t1", "task_id": "t1",
                                                "api_request_id": "t1:1", "request_char_count": 123_456}
    lane(tuple(values[name] for name in fields))
    assert 123_456 < plugin.publication_stats()["queue_bytes"] < 123_456 + 8 * ITEM_BYTES
    assert plugin._publication is not None
    plugin._publication.close(0.0)


def test_the_publication_queue_has_the_default_byte_bound() -> None:
    plugin = ScopePlugin(deferred=True)
    assert plugin._publication is not None and plugin._publication.byte_capacity == DEFAULT_MAX_QUEUE_BYTES
    plugin._publication.close(5.0)
    plugin = ScopePlugin(deferred=True, max_queue_bytes=3 * 2**20)
    assert plugin._publication is not None and plugin._publication.byte_capacity == 3 * 2**20
    plugin._publication.close(5.0)


# ---------------------------------------------------------------------------- every item written or counted


class RunningByteQueue(RuleBasedStateMachine):
    """FMT-79/FMT-81 on a running writer with a small byte bound: whatever the timing of the worker, every
    offered item is written or counted, the written ones in the order they were accepted."""

    def __init__(self) -> None:
        super().__init__()
        self.dest = MemoryDestination()
        self.writer = BoundedWriter(self.dest, name="machine", max_queue_size=50, max_batch_size=4,
                                    max_queue_bytes=200, size=lambda item: item[1], linger=0.0,
                                    idle_wakeup=0.001).start()
        self.offered = 0
        self.accepted: list[tuple[int, int]] = []
        self.next_id = 0
        self.closed = False

    def _item(self, size: int) -> tuple[int, int]:
        self.next_id += 1
        return (self.next_id, size)

    @rule(size=st.integers(0, 300), force=st.booleans())
    def submit(self, size: int, force: bool) -> None:
        item = self._item(size)
        self.offered += 1
        if self.writer.submit(item, force=force):
            self.accepted.append(item)

    @rule(sizes=st.lists(st.integers(0, 120), min_size=1, max_size=6))
    def submit_many(self, sizes: list[int]) -> None:
        items = [self._item(size) for size in sizes]
        self.offered += len(items)
        if self.writer.submit_many(items):
            self.accepted.extend(items)
        else:  # what a producer does (submit_paired_many): one at a time, each refusal counted
            for item in items:
                if self.writer.submit(item):
                    self.accepted.append(item)

    @rule()
    def flush(self) -> None:
        assert self.writer.flush(30.0) or self.closed
        if not self.closed:
            assert self.writer.stats()["queue_bytes"] == 0

    @rule()
    def close(self) -> None:
        self.writer.close(30.0)
        self.closed = True

    @invariant()
    def counted(self) -> None:
        stats = self.writer.stats()
        refused = stats["dropped_queue_full"] + stats["dropped_queue_bytes"] + stats["dropped_closed"]
        assert stats["submitted"] + refused == self.offered
        assert stats["queue_bytes"] >= 0

    def teardown(self) -> None:
        self.writer.close(30.0)
        stats = self.writer.stats()
        lost = (stats["dropped_queue_full"] + stats["dropped_queue_bytes"] + stats["dropped_closed"]
                + stats["dropped_at_close"] + stats["dropped_after_errors"])
        assert stats["written"] + lost == self.offered  # every offered item is written or counted
        assert self.dest.items == self.accepted[:len(self.dest.items)]  # in order, a prefix of the accepted
        assert stats["written"] == len(self.dest.items)


TestRunningByteQueue = RunningByteQueue.TestCase
TestRunningByteQueue.settings = settings(max_examples=40, stateful_step_count=25, deadline=None)


def test_fmt_80_an_isolated_sink_queue_is_bounded_in_bytes_too() -> None:
    """FMT-80/FMT-81: a third-party sink's own queue (behind :class:`IsolatedSink`) refuses events past its byte
    bound while the sink is stuck, counts them in ``events_dropped``, and delivers the rest in order."""
    import threading

    from hermes_pipeline.export.isolation import IsolatedSink

    gate = threading.Event()
    received: list[int] = []

    class Stuck:
        def __call__(self, event: ScopeEvent) -> None:
            gate.wait(60.0)
            received.append(event.uuid)

    sink = IsolatedSink(Stuck(), name="stuck", max_queue_bytes=2**20)
    offered = 12
    for uuid in range(1, offered + 1):  # ~600 KB each: at most one in the sink's hands and one queued
        sink(ScopeEvent("mark", None, uuid, None, uuid, "m", None, (), None, {"text": "t" * 600_000}, {}, 1, 1))
    dropped = sink.stats()["events_dropped"]
    assert dropped >= offered - 2
    gate.set()
    assert sink.flush(30.0)
    assert len(received) + dropped == offered and received == sorted(received)
    assert sink.shutdown(30.0)


def test_fmt_80_an_event_is_estimated_once_for_every_sink_queue_it_enters(monkeypatch: pytest.MonkeyPatch) -> None:
    """FMT-80: the publication thread hands each event to every sink's byte-bounded queue; its size is estimated
    by the first queue and kept on the event (``ScopeEvent.nbytes``), so a second sink costs no second look.
    The estimate counts the event's top-level strings by length and looks into containers with a small budget."""
    import hermes_pipeline.export.sizes as sizes

    looks: list[int] = []
    real = sizes.arguments_bytes
    monkeypatch.setattr(sizes, "arguments_bytes", lambda value: looks.append(1) or real(value))
    nested = {"result": "r" * 5_000, "request": {"messages": [{"role": "user", "content": "u" * 300}] * 40}}
    event = ScopeEvent(SCOPE, START, 7, None, 7, "t", "tool", (), None, nested, {}, 1, 1)
    writers = [BoundedWriter(MemoryDestination(), name=f"sink{k}", max_queue_bytes=2**20, size=sizes.event_bytes)
               for k in range(2)]
    for writer in writers:
        assert writer.submit(event)
    assert len(looks) == 1 and event.nbytes == writers[1].stats()["queue_bytes"] == writers[0].stats()["queue_bytes"]
    assert 5_000 + 40 * 300 <= event.nbytes < 2 * (5_000 + 40 * 300) + ITEM_BYTES
    for writer in writers:
        writer.close(0.0)


def test_fmt_80_hook_fields_are_sized_by_a_small_look(monkeypatch: pytest.MonkeyPatch) -> None:
    """FMT-80: a hook record's fields are sized on the agent's thread by a flat look: every string by its length,
    a container (an LLM call's history) by its first values times its length, never by a walk of all of it."""
    import hermes_pipeline.export.sizes as sizes

    looked: list[int] = []
    real = sizes._size
    monkeypatch.setattr(sizes, "_size", lambda value, left: looked.append(1) or real(value, left))
    history = [{"role": "user", "content": "m" * 100}] * 1_000
    size = sizes.fields_bytes(("s" * 3_000, 7, None, history))
    assert len(looked) <= 2 * sizes.FIELD_BUDGET
    assert 3_000 + 1_000 * 100 <= size <= 3 * (3_000 + 1_000 * 100)
