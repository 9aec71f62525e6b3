"""An LLM call's span is built whole at its end, from the closed scope the end brings (``end.start``).

FMT-55 / FMT-63: the spans of a session (the LLM call's own, and the turn's and agent's that name its
provider and model) come out the same whether or not the builder saw the LLM calls' starts, because the
tracker pairs each scope once (FMT-6); so the OTel sink does not even queue those starts (FMT-79: less
work on the publication thread). A builder pairing on its own counts those ends unpaired and loses the spans.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from hermes_pipeline.export.events import START, ScopeEvent
from hermes_pipeline.sinks.otel.config import TraceEndpoint
from hermes_pipeline.sinks.otel.record import SpanRecord, to_readable
from hermes_pipeline.sinks.otel.sink import OtelSink
from hermes_pipeline.sinks.otel.spans import Route, SpanBuilder
from hermes_pipeline.sinks.otel.state import Options
from tests.export._closed_support import recorded_events


def _spans(events: list[ScopeEvent], kind: str) -> tuple[list[str], SpanBuilder]:
    spans: list[SpanRecord] = []
    endpoint = TraceEndpoint(index=0, type=kind, url="http://127.0.0.1:1/v1/traces")
    builder = SpanBuilder([Route(endpoint, lambda span: spans.append(span) or True, "0")], Options(), ids="uuid")
    builder.write(events)
    assert builder.counts["failures"] == 0
    return [to_readable(span).to_json() for span in spans], builder


def _without_llm_starts(events: list[ScopeEvent]) -> list[ScopeEvent]:
    return [e for e in events if not (e.phase == START and e.category == "llm")]


@pytest.mark.parametrize("kind", ["gen_ai", "openinference", "full"])
def test_llm_spans_come_from_closed_scopes(tmp_path: Path, kind: str) -> None:
    """FMT-55, FMT-63, FMT-6: the same spans (uuid-derived ids) with and without the LLM calls' starts."""
    events = recorded_events(tmp_path)
    full, _ = _spans(events, kind)
    assert len(full) >= 10 and sum("llm" in s.lower() or "chat" in s for s in full) >= 2
    filtered, builder = _spans(_without_llm_starts(events), kind)
    assert builder.counts["unpaired_ends"] == 0 and not builder.open
    assert filtered == full


def test_the_sink_does_not_queue_llm_starts(tmp_path: Path) -> None:
    """FMT-79: the OTel sink's event queue takes every event but the LLM calls' starts, and no span is lost."""
    events = recorded_events(tmp_path)
    from hermes_pipeline.sinks.otel.config import parse_otel_config

    exporter = InMemorySpanExporter()
    config = parse_otel_config({"enabled": True, "endpoints": [{"type": "gen_ai", "endpoint": "http://127.0.0.1:1"}]})
    sink = OtelSink(config, Options(), exporter_factory=lambda endpoint, session: exporter).start()
    try:
        for event in events:
            sink(event)
        assert sink.flush(10.0)
    finally:
        sink.shutdown(10.0)
    llm_starts = sum(1 for e in events if e.phase == START and e.category == "llm")
    assert llm_starts == 2
    stats = sink.stats()
    assert stats["events"]["written"] == len(events) - llm_starts
    assert stats["dropped"] == 0 and stats["builder"]["unpaired_ends"] == 0
    assert sum(1 for s in exporter.get_finished_spans() if s.name.startswith("chat")) == 2


def test_an_llm_end_refused_by_a_full_queue_is_a_counted_lost_span(tmp_path: Path) -> None:
    """FMT-80, FMT-81: the end of an LLM call stands alone on the event queue (its start is not queued); a full
    queue drops it like any event and ``otel.spans_dropped`` counts the span it would have made."""
    from hermes_pipeline.sinks.otel.config import parse_otel_config

    events = recorded_events(tmp_path)
    llm_end = next(e for e in events if e.phase == "end" and e.category == "llm")
    filler = events[0]  # any event fills the queue: its writer is not started
    config = parse_otel_config({"enabled": True, "endpoints": [{"type": "gen_ai", "endpoint": "http://127.0.0.1:1"}]})
    sink = OtelSink(config, Options(), exporter_factory=lambda endpoint, session: InMemorySpanExporter())
    try:
        while sink._events.submit(filler):  # noqa: SLF001 - fill the sink's own event queue
            pass
        assert sink.counters()["otel.spans_dropped[0]"] == 0
        sink(llm_end)
        assert sink.counters()["otel.spans_dropped[0]"] == 1
    finally:
        sink.shutdown(1.0)


@pytest.fixture(scope="module")
def session_events(tmp_path_factory: pytest.TempPathFactory) -> list[ScopeEvent]:
    return recorded_events(tmp_path_factory.mktemp("events"))


def _idle_sink() -> OtelSink:
    from hermes_pipeline.sinks.otel.config import parse_otel_config

    config = parse_otel_config({"enabled": True, "endpoints": [{"type": "gen_ai", "endpoint": "http://127.0.0.1:1"}]})
    return OtelSink(config, Options(), exporter_factory=lambda endpoint, session: InMemorySpanExporter())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cuts=st.lists(st.integers(0, 22), max_size=8), room=st.integers(0, 8),
       drains=st.lists(st.integers(0, 6), max_size=9))
def test_fmt_79_80_a_publication_batch_is_taken_as_one_call_per_event(session_events: list[ScopeEvent],
                                                                      cuts: list[int], room: int,
                                                                      drains: list[int]) -> None:
    """FMT-79/80/81: ``take_many`` (one hand-over per publication batch) queues, refuses, forces and counts the
    events of a session exactly as one call per event does (the LLM calls' starts left out), whether the batch
    fits or meets a queue with ``room`` places left, and after the queue gave ``drains`` events to the builder (an
    end whose start was dropped stays out once there is room again): the same events queued in the same order,
    the same lost spans and the same starts remembered as dropped."""
    one, many = _idle_sink(), _idle_sink()  # not started: nothing drains their event queues
    try:
        filler = session_events[0]
        for sink in (one, many):
            while len(sink._events._queue) < sink._events._max_entries - room:  # noqa: SLF001 - fill to a level
                assert sink._events.submit(filler)  # noqa: SLF001
        edges = sorted({0, len(session_events), *(c % (len(session_events) + 1) for c in cuts)})
        for index, (start, end) in enumerate(zip(edges, edges[1:])):
            drained = drains[index] if index < len(drains) else 0
            for sink in (one, many):  # the builder took a batch
                for _ in range(min(drained, len(sink._events._queue))):  # noqa: SLF001
                    sink._events._queue.popleft()  # noqa: SLF001
            batch = session_events[start:end]
            for event in batch:
                one(event)
            many.take_many(list(batch))
            assert list(many._events._queue) == list(one._events._queue)  # noqa: SLF001
            assert many.counters() == one.counters()
            assert many._dropped_starts == one._dropped_starts  # noqa: SLF001
            assert many._events.stats() == one._events.stats()  # noqa: SLF001
    finally:
        one.shutdown(0.5)
        many.shutdown(0.5)
