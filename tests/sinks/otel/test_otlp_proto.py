"""The direct OTLP protobuf encoder: byte-identical to the SDK's encoder, and the exporter that uses it
still sends through the SDK's HTTP client to a real receiver (FMT-55..FMT-59, FMT-72)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.trace.export import SpanExportResult
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import Link, SpanContext, SpanKind, Status, StatusCode, TraceFlags

from hermes_pipeline.demo.otlp_receiver import OTLPReceiver
from hermes_pipeline.sinks.otel import proto as otlp_proto
from hermes_pipeline.sinks.otel import record
from hermes_pipeline.sinks.otel.proto import FastOTLPSpanExporter, NotEncodable, encode_trace_request

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False), st.text(max_size=30), st.binary(max_size=8),
)
values = st.one_of(scalars, st.lists(scalars, max_size=4).map(tuple), st.lists(st.text(max_size=5), max_size=4))
attributes = st.dictionaries(st.text(min_size=1, max_size=12), values, max_size=8)
RESOURCES = [Resource({"service.name": "hermes"}), Resource({"service.name": "other", "n": 2}, schema_url="https://s/1")]
SCOPES = [None, InstrumentationScope("hermes_pipeline", "0.1.0"),
          InstrumentationScope("x", None, "https://schema", {"k": "v"})]


@st.composite
def spans(draw: Any) -> ReadableSpan:
    trace_id = draw(st.integers(min_value=1, max_value=2**128 - 1))
    context = SpanContext(trace_id, draw(st.integers(min_value=1, max_value=2**64 - 1)), is_remote=False,
                          trace_flags=TraceFlags(TraceFlags.SAMPLED))
    parent = draw(st.one_of(st.none(), st.builds(
        lambda span_id, remote: SpanContext(trace_id, span_id, is_remote=remote, trace_flags=TraceFlags(1)),
        st.integers(min_value=1, max_value=2**64 - 1), st.booleans())))
    events = draw(st.lists(st.builds(Event, st.text(max_size=10), attributes,
                                     st.integers(min_value=0, max_value=2**63)), max_size=3))
    status = draw(st.one_of(  # FMT-58: error descriptions such as "tool_error: FileNotFoundError: é…"
        st.sampled_from([Status(StatusCode.UNSET), Status(StatusCode.OK), Status(StatusCode.ERROR)]),
        st.builds(lambda text: Status(StatusCode.ERROR, text), st.text(max_size=40))))
    start = draw(st.integers(min_value=0, max_value=2**63))
    return ReadableSpan(name=draw(st.text(max_size=20)), context=context, parent=parent,
                        resource=draw(st.sampled_from(RESOURCES)), attributes=draw(attributes), events=events,
                        kind=draw(st.sampled_from(list(SpanKind))), status=status, start_time=start,
                        end_time=start + draw(st.integers(min_value=0, max_value=10**12)),
                        instrumentation_scope=draw(st.sampled_from(SCOPES)))


@settings(max_examples=300, deadline=None)
@given(batch=st.lists(spans(), min_size=1, max_size=6))
def test_property_fmt55_59_encoder_is_byte_identical_to_the_sdk(batch: list[ReadableSpan]) -> None:
    """FMT-55..FMT-59: every batch encodes to exactly the bytes of the SDK's ``encode_spans`` (grouping
    by resource and scope in first-seen order, proto3 defaults omitted the same way)."""
    assert encode_trace_request(batch) == encode_spans(batch).SerializePartialToString()


@settings(max_examples=15, deadline=None)
@given(batch=st.lists(spans(), min_size=1, max_size=4), copies=st.integers(min_value=150, max_value=400))
def test_property_fmt55_59_batches_of_hundreds_of_kb_are_byte_identical(batch: list[ReadableSpan],
                                                                          copies: int) -> None:
    """A batch as large as an export's (hundreds of spans): every nested length (a scope's spans, a resource's
    scopes, the request) spans several varint bytes, and the request, put together once from its pieces, is still
    exactly the SDK's bytes."""
    padded = [ReadableSpan(name=span.name, context=span.context, parent=span.parent, resource=span.resource,
                           attributes={**(span.attributes or {}), "pad": "x" * 200}, events=span.events,
                           kind=span.kind, status=span.status, start_time=span.start_time, end_time=span.end_time,
                           instrumentation_scope=span.instrumentation_scope) for span in batch]
    large = padded * copies
    data = encode_trace_request(large)
    assert len(data) > 2**15  # three-byte lengths at every level
    assert data == encode_spans(large).SerializePartialToString()


RECORD_RESOURCES = [record.Resource({"service.name": "hermes"}), record.Resource({"service.name": "other", "n": 2})]
RECORD_SCOPES = [record.InstrumentationScope("hermes_pipeline", "0.1.0"), record.InstrumentationScope("x", None)]


@st.composite
def span_records(draw: Any) -> record.SpanRecord:
    trace_id = draw(st.integers(min_value=1, max_value=2**128 - 1))
    ids = st.integers(min_value=1, max_value=2**64 - 1)
    parent = draw(st.one_of(st.none(), ids.map(lambda span_id: record.SpanContext(trace_id, span_id))))
    events = draw(st.lists(st.builds(record.Event, st.text(max_size=10), attributes,
                                     st.integers(min_value=0, max_value=2**63)), max_size=3))
    code = draw(st.sampled_from(list(record.StatusCode)))
    start = draw(st.integers(min_value=0, max_value=2**63))
    return record.SpanRecord(draw(st.text(max_size=20)), record.SpanContext(trace_id, draw(ids)), parent,
                             draw(st.sampled_from(list(record.SpanKind))), draw(attributes), events,
                             record.Status(code, draw(st.one_of(st.none(), st.text(max_size=40)))), start,
                             start + draw(st.integers(min_value=0, max_value=10**12)),
                             draw(st.sampled_from(RECORD_RESOURCES)), draw(st.sampled_from(RECORD_SCOPES)))


@settings(max_examples=200, deadline=None)
@given(batch=st.lists(span_records(), min_size=1, max_size=6))
def test_property_fmt55_59_span_records_encode_as_their_sdk_spans(batch: list[record.SpanRecord]) -> None:
    """The sink's span records (no SDK objects) encode to exactly the bytes the SDK's encoder writes for the
    ``ReadableSpan`` objects they convert to (what an SDK exporter of a custom factory receives)."""
    readable = [record.to_readable(span) for span in batch]
    assert encode_trace_request(batch) == encode_spans(readable).SerializePartialToString()
    for mine, sdk in zip(batch, readable, strict=True):
        assert (sdk.kind.name, sdk.status.status_code.name, sdk.status.description) == (
            mine.kind.name, mine.status.status_code.name, mine.status.description)
        assert (sdk.context.trace_id, sdk.context.span_id, sdk.parent.span_id if sdk.parent else None) == (
            mine.context.trace_id, mine.context.span_id, mine.parent.span_id if mine.parent else None)


def test_fmt_58_only_an_error_status_keeps_its_description() -> None:
    """As the SDK's ``Status``: a description on an UNSET or OK status is dropped."""
    assert [record.Status(code, "why").description for code in record.StatusCode] == [None, None, "why"]


def _span(**overrides: Any) -> ReadableSpan:
    fields: dict[str, Any] = {
        "name": "execute_tool read_file", "context": SpanContext(7, 9, is_remote=False, trace_flags=TraceFlags(1)),
        "parent": None, "resource": RESOURCES[0], "attributes": {"gen_ai.tool.name": "read_file"},
        "kind": SpanKind.INTERNAL, "status": Status(StatusCode.UNSET), "start_time": 1, "end_time": 2,
        "instrumentation_scope": SCOPES[1]}
    fields.update(overrides)
    return ReadableSpan(**fields)


def test_fmt72_uncovered_batches_are_refused_for_the_sdk_path() -> None:
    """Links, integers beyond 64 bits and lone surrogates are left to the SDK's encoder."""
    link = Link(SpanContext(7, 10, is_remote=False, trace_flags=TraceFlags(1)))
    for span in (_span(links=[link]), _span(attributes={"n": 2**64}), _span(name="\ud800")):
        try:
            encode_trace_request([span])
        except NotEncodable:
            continue
        raise AssertionError(f"{span.name!r} was encoded")


def test_fmt72_fast_exporter_sends_through_the_sdk_client_to_a_real_receiver(monkeypatch: Any) -> None:
    """The exporter posts the directly encoded bytes with the SDK's HTTP client; a batch the encoder does
    not cover goes through the SDK's own ``export``; both decode at a real OTLP receiver."""
    sdk_encodes: list[int] = []
    original = otlp_proto.OTLPSpanExporter.export

    def counting_export(self: Any, batch: Any) -> SpanExportResult:
        sdk_encodes.append(len(batch))
        return original(self, batch)

    monkeypatch.setattr(otlp_proto.OTLPSpanExporter, "export", counting_export)
    with OTLPReceiver() as receiver:
        exporter = FastOTLPSpanExporter(endpoint=f"{receiver.endpoint}/v1/traces", timeout=5)
        assert exporter.export([_span(), _span(name="chat m", attributes={"gen_ai.operation.name": "chat"})]) \
            is SpanExportResult.SUCCESS
        assert sdk_encodes == []
        linked = _span(name="linked", links=[Link(SpanContext(7, 10, is_remote=False, trace_flags=TraceFlags(1)))])
        assert exporter.export([linked]) is SpanExportResult.SUCCESS
        assert sdk_encodes == [1]
        exporter.shutdown()
        names = [span.name for span in receiver.spans]
    assert names == ["execute_tool read_file", "chat m", "linked"]


def test_fmt83_fast_exporter_reports_a_refusing_collector_as_failure() -> None:
    """A collector answering 400 gives FAILURE (the sink counts it), never an exception."""
    with OTLPReceiver(responses=[400]) as receiver:
        exporter = FastOTLPSpanExporter(endpoint=f"{receiver.endpoint}/v1/traces", timeout=2)
        assert exporter.export([_span()]) is SpanExportResult.FAILURE
        exporter.shutdown()


def test_fmt60_recurring_attribute_cache_keeps_types_apart() -> None:
    """``True`` and ``1`` (equal in Python) are different OTLP values; cached encodings never mix them."""
    for first, second in ((True, 1), (1, True), (False, 0), ("1", 1)):
        batch = [_span(attributes={"v": first}), _span(attributes={"v": second})]
        assert encode_trace_request(batch) == encode_spans(batch).SerializePartialToString()


_recurring = st.dictionaries(st.sampled_from(["k", "id", "status", "1"]),
                             st.one_of(st.sampled_from(["a", "1", "", "é", "x" * 300]), st.sampled_from([0, 1, 2]),
                                       st.booleans(), st.sampled_from([1.0, -0.0])), max_size=4)


@settings(max_examples=200, deadline=None)
@given(rounds=st.lists(st.lists(st.tuples(_recurring, _recurring), min_size=1, max_size=8), min_size=1, max_size=4),
       fill=st.booleans())
def test_property_fmt60_recurring_attributes_encode_as_the_sdk_across_batches(
        rounds: list[list[tuple[dict[str, Any], dict[str, Any]]]], fill: bool) -> None:
    """Few keys and values that recur in span and event attributes, over several batches (the encoder remembers the
    fields of recurring values between batches): every batch encodes to the SDK's bytes, equal values of other
    types (``1``, ``True``, ``"1"``, ``1.0``) never share a field, and filling the remembered fields past their bound
    (``fill``) changes nothing."""
    if fill:
        filler = [_span(attributes={f"f{i}": f"v{i}"}) for i in range(otlp_proto._CACHE_MAX + 10)]
        encode_trace_request(filler)
    for batch_attributes in rounds:
        batch = [_span(attributes=span_attrs, events=[Event("e", event_attrs, 5)])
                 for span_attrs, event_attrs in batch_attributes]
        assert encode_trace_request(batch) == encode_spans(batch).SerializePartialToString()
