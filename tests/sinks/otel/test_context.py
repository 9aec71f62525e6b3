"""Agent spans join the application's OpenTelemetry trace; random trace and span ids (spec 04 FMT-56b, BOOK-46,
issue #30 deliverables 1 and 2). Every test exports to a real OTLP/HTTP receiver on 127.0.0.1 and decodes the
protobuf bytes it received."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from hermes_pipeline import Engine, Host
from hermes_pipeline.demo.otlp_receiver import OTLPReceiver, ReceivedSpan
from hermes_pipeline.engine import trace_parent
from hermes_pipeline.engine.trace_parent import TraceparentError, format_traceparent, parse_traceparent
from hermes_pipeline.sinks.otel.config import parse_otel_config
from hermes_pipeline.sinks.otel.env import read_otlp_env
from hermes_pipeline.sinks.otel.spans import sampling_fraction

from tests.sinks.otel._support import finish, otel_plugin, run_two_turn_session

TP_SAMPLED = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
TP_OTHER = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
TP_NOT_SAMPLED = "00-5bf92f3577b34da6a3ce929d0e0e4737-10f067aa0ba902b8-00"


def app_tracer() -> tuple[Any, InMemorySpanExporter]:
    """An application's own TracerProvider (not the global one) with an in-memory exporter."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider.get_tracer("app"), exporter


def roots(spans: list[ReceivedSpan], trace_id: str) -> list[ReceivedSpan]:
    """Spans of ``trace_id`` whose parent is not a span of the agent's (the application's parent, or none)."""
    ours = {s.span_id for s in spans}
    return [s for s in spans if s.trace_id == trace_id and s.parent_span_id not in ours]


def plain_turns(host: Host, count: int, **session_kwargs: Any) -> None:
    with host.session(**session_kwargs) as session:
        for index in range(count):
            with session.turn(f"q{index}") as turn:
                turn.complete("a")


def test_fmt_56b_turns_join_the_applications_active_span() -> None:
    """FMT-56b: inside the application's active span (its own TracerProvider), every agent span lands in the
    application's trace and each turn's root span is a child of the application's span."""
    engine = Engine()
    tracer, app_spans = app_tracer()
    with OTLPReceiver() as receiver:
        plugin = otel_plugin(engine, receiver.endpoint)
        with tracer.start_as_current_span("app.request") as app:
            run_two_turn_session(engine)
        spans = finish(plugin, receiver)
    context = app.get_span_context()
    trace_id, span_id = f"{context.trace_id:032x}", f"{context.span_id:016x}"
    assert len(spans) >= 4 and {s.trace_id for s in spans} == {trace_id}
    turn_roots = roots(spans, trace_id)
    assert len(turn_roots) == 2 and all(r.parent_span_id == span_id for r in turn_roots)
    assert {r.attributes["gen_ai.operation.name"] for r in turn_roots} == {"invoke_agent"}
    [exported_app] = app_spans.get_finished_spans()
    assert exported_app.context.span_id == context.span_id


def test_fmt_56b_no_active_span_means_a_trace_of_its_own() -> None:
    """FMT-56b: without an application span (or outside it) a turn is the root of a fresh random trace."""
    engine = Engine()
    with OTLPReceiver() as receiver:
        plugin = otel_plugin(engine, receiver.endpoint)
        run_two_turn_session(engine)
        spans = finish(plugin, receiver)
    by_trace = Counter(s.trace_id for s in spans)
    assert len(by_trace) == 2
    for trace_id in by_trace:
        [root] = roots(spans, trace_id)
        assert root.parent_span_id == ""


def test_fmt_56b_traceparent_given_to_the_session_and_to_a_turn() -> None:
    """FMT-56b: ``host.session(traceparent=...)`` parents every turn; a turn's own ``traceparent`` wins for that
    turn; an explicit parent wins over the application's active span."""
    engine = Engine()
    tracer, _ = app_tracer()
    host = Host(engine, platform="api", model="m", provider="openai")
    with OTLPReceiver() as receiver:
        plugin = otel_plugin(engine, receiver.endpoint)
        with tracer.start_as_current_span("app.request"), host.session(traceparent=TP_SAMPLED) as session:
            with session.turn("one") as turn:
                turn.complete("a")
            with session.turn("two", traceparent=TP_OTHER) as turn:
                turn.complete("b")
        spans = finish(plugin, receiver)
    first, second = parse_traceparent(TP_SAMPLED), parse_traceparent(TP_OTHER)
    for parent in (first, second):
        [root] = roots(spans, f"{parent.trace_id:032x}")
        assert root.parent_span_id == f"{parent.span_id:016x}"
    assert {s.trace_id for s in spans} == {f"{first.trace_id:032x}", f"{second.trace_id:032x}"}


def test_fmt_56b_parent_as_opentelemetry_context_object() -> None:
    """FMT-56b: ``parent=`` takes an OpenTelemetry ``Context``, ``Span`` or ``SpanContext``."""
    from opentelemetry import trace

    engine = Engine()
    tracer, _ = app_tracer()
    host = Host(engine, platform="api", model="m", provider="openai")
    with OTLPReceiver() as receiver:
        plugin = otel_plugin(engine, receiver.endpoint)
        span = tracer.start_span("outside")  # not current: only the explicit parent names it
        with host.session() as session:
            with session.turn("one", parent=trace.set_span_in_context(span)) as turn:
                turn.complete("a")
            with session.turn("two", parent=span) as turn:
                turn.complete("b")
        span.end()
        spans = finish(plugin, receiver)
    context = span.get_span_context()
    assert {s.trace_id for s in spans} == {f"{context.trace_id:032x}"}
    assert [r.parent_span_id for r in roots(spans, f"{context.trace_id:032x}")] == [f"{context.span_id:016x}"] * 2


def test_fmt_56b_sampled_off_parent_exports_nothing_for_its_turn() -> None:
    """FMT-56b / BOOK-46: a parent whose sampled flag is off (traceparent flags 00) is honoured: no span of that
    turn is exported (counted as sampled out); a turn of the same session without that parent is exported."""
    engine = Engine()
    host = Host(engine, platform="api", model="m", provider="openai")
    with OTLPReceiver() as receiver:
        plugin = otel_plugin(engine, receiver.endpoint)
        with host.session() as session:
            with session.turn("hidden", traceparent=TP_NOT_SAMPLED) as turn:
                turn.complete("a")
            with session.turn("shown") as turn:
                turn.complete("b")
        stats_before = plugin.stats
        spans = finish(plugin, receiver)
    hidden = parse_traceparent(TP_NOT_SAMPLED)
    assert not [s for s in spans if s.trace_id == f"{hidden.trace_id:032x}"]
    assert len({s.trace_id for s in spans}) == 1 and spans
    assert stats_before()["builder"]["sampled_out"] >= 1


def test_fmt_56b_non_parent_based_sampler_ignores_the_parent_flag() -> None:
    """OTEL_TRACES_SAMPLER = always_on (not parent-based) exports a turn whose parent is not sampled;
    parentbased_always_on (and no sampler variable, the SDK's default) follows the parent."""
    env = read_otlp_env({"OTEL_TRACES_SAMPLER": "always_on"})
    assert not parse_otel_config({"enabled": False}, env=env).parent_based
    for variables in ({"OTEL_TRACES_SAMPLER": "parentbased_always_on"}, {}):
        assert parse_otel_config({"enabled": False}, env=read_otlp_env(variables)).parent_based
    engine = Engine()
    host = Host(engine, platform="api", model="m", provider="openai")
    with OTLPReceiver() as receiver:
        plugin = otel_plugin(engine, receiver.endpoint)
        plugin.sink.builder.parent_based = False  # what OTEL_TRACES_SAMPLER=always_on configures
        with host.session() as session, session.turn("x", traceparent=TP_NOT_SAMPLED) as turn:
            turn.complete("a")
        spans = finish(plugin, receiver)
    assert {s.trace_id for s in spans} == {f"{parse_traceparent(TP_NOT_SAMPLED).trace_id:032x}"}


def test_fmt_56b_capture_is_off_without_an_otlp_pipeline() -> None:
    """The caller-thread capture runs only while an OTLP trace pipeline is active in the process."""
    tracer, _ = app_tracer()
    assert not trace_parent.enabled()
    with tracer.start_as_current_span("app"):
        assert trace_parent.capture_current() is None
        assert trace_parent.enable()
        try:
            captured = trace_parent.capture_current()
        finally:
            trace_parent.disable()
    assert captured is not None and captured.sampled and not captured.remote
    assert not trace_parent.enabled()


def test_fmt_56b_malformed_traceparent_is_a_typed_error() -> None:
    """A malformed traceparent given to the host API raises TraceparentError (a ValueError) naming the part."""
    host = Host(Engine(), platform="api", model="m", provider="openai")
    for bad, part in (("00-" + "0" * 32 + "-00f067aa0ba902b7-01", "trace id"),
                      ("00-4bf92f3577b34da6a3ce929d0e0e4736-" + "0" * 16 + "-01", "parent id"),
                      ("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "version"),
                      ("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", "lower-case"),
                      ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra", "four fields"),
                      ("garbage", "expected")):
        with pytest.raises(TraceparentError, match=part):
            host.session(traceparent=bad)
    with host.session() as session, pytest.raises(TraceparentError, match="either"):
        session.turn("x", traceparent=TP_SAMPLED, parent=parse_traceparent(TP_OTHER))
    # a future version may carry more fields (W3C: parse the first four)
    assert parse_traceparent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-03-more").sampled


@given(st.integers(1, 2**128 - 1), st.integers(1, 2**64 - 1), st.booleans())
def test_traceparent_round_trip(trace_id: int, span_id: int, sampled: bool) -> None:
    parsed = parse_traceparent(format_traceparent(trace_id, span_id, sampled))
    assert (parsed.trace_id, parsed.span_id, parsed.sampled, parsed.remote) == (trace_id, span_id, sampled, True)


@given(st.text(max_size=80))
def test_traceparent_parser_never_fails_otherwise(text: str) -> None:
    try:
        parsed = parse_traceparent(text)
    except TraceparentError:
        return
    assert parsed.trace_id and parsed.span_id


def test_fmt_56b_ids_are_random_and_sampling_stays_per_turn() -> None:
    """FMT-56b / BOOK-46 (issue #30): over 200 turns the trace ids and span ids are all distinct, consecutive ids
    show no counting pattern, the low bits (what collectors sample on) are spread; the sampling decision is still
    the hash of the turn's trajectory id, so a rate of 0.5 exports exactly the turns that hash below it."""
    engine = Engine()
    host = Host(engine, platform="api", model="m", provider="openai")
    with OTLPReceiver() as receiver:
        plugin = otel_plugin(engine, receiver.endpoint, top={"sampling_rate": 1.0})
        plain_turns(host, 200)
        spans = finish(plugin, receiver)
    turns = sorted((s for s in spans if s.parent_span_id == ""), key=lambda s: s.start_ns)
    assert len(turns) == 200
    trace_ids = [int(s.trace_id, 16) for s in turns]
    span_ids = [int(s.span_id, 16) for s in spans]
    assert len(set(trace_ids)) == 200 and len(set(span_ids)) == len(spans)
    for ids, bits in ((trace_ids, 128), (span_ids, 64)):
        steps = Counter((b - a) % (1 << bits) for a, b in zip(ids, ids[1:]))
        assert steps.most_common(1)[0][1] <= 2  # no constant step (a counter)
        low_bytes = Counter(i & 0xFF for i in ids)
        assert len(low_bytes) > 100  # 200 random bytes: about 140 distinct values; a counter-like id: few
        assert 0.3 < sum(i & 1 for i in ids) / len(ids) < 0.7
        assert all(i != 0 for i in ids)

    engine = Engine()
    host = Host(engine, platform="api", model="m", provider="openai")
    with OTLPReceiver() as receiver:
        plugin = otel_plugin(engine, receiver.endpoint, top={"sampling_rate": 0.5})
        plain_turns(host, 60)
        sampled_spans = finish(plugin, receiver)
    exported = [s for s in sampled_spans if s.parent_span_id == ""]
    assert 0 < len(exported) < 60
    for span in exported:
        assert sampling_fraction(int(span.attributes["hermes.trajectory_id"].replace("-", ""), 16)) < 0.5
    assert plugin.stats()["builder"]["sampled_out"] == 60 - len(exported)


def test_fmt_56_ids_uuid_keeps_the_derived_ids() -> None:
    """``opentelemetry.ids = "uuid"``: FMT-56 as written (span id = the scope UUID's low 8 bytes)."""
    engine = Engine()
    host = Host(engine, platform="api", model="m", provider="openai")
    with OTLPReceiver() as receiver:
        plugin = otel_plugin(engine, receiver.endpoint, top={"ids": "uuid"})
        plain_turns(host, 3)
        spans = finish(plugin, receiver)
    for span in spans:
        uuid = span.attributes["hermes.trajectory_id"].replace("-", "")
        assert span.trace_id == uuid and span.span_id == uuid[16:]
    with pytest.raises(Exception, match="opentelemetry.ids"):
        parse_otel_config({"enabled": True, "ids": "sequential", "endpoints": []})


def _chat(model: str = "m") -> dict[str, Any]:
    return {"id": "c1", "object": "chat.completion", "model": model,
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "hi"}}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}}


def test_fmt_56b_outgoing_traceparent_names_the_turns_root_span() -> None:
    """FMT-56b: ``turn.trace_headers()`` (where the host builds its HTTP request) gives a traceparent naming the
    exported turn root span, in the application's trace when there is one; an HTTP-client span opened inside
    the provider call becomes a child of that span ("ours parents theirs"); with
    ``propagate_traceparent = false`` no header is given."""
    engine = Engine()
    tracer, app_spans = app_tracer()
    host = Host(engine, platform="api", model="m", provider="openai")
    seen: list[dict[str, str]] = []

    def provider(request: dict[str, Any]) -> Any:
        seen.append(turn.trace_headers())
        with tracer.start_as_current_span("POST /chat/completions"):  # what an HTTP client instrumentation opens
            return _chat()

    with OTLPReceiver() as receiver:
        plugin = otel_plugin(engine, receiver.endpoint)
        with tracer.start_as_current_span("app.request") as app, host.session() as session:
            with session.turn("q") as turn:
                turn.call_llm({"model": "m", "messages": [{"role": "user", "content": "q"}]}, provider)
                turn.complete("hi")
        spans = finish(plugin, receiver)
    [headers] = seen
    sent = parse_traceparent(headers["traceparent"])
    [root] = [s for s in spans if s.parent_span_id == f"{app.get_span_context().span_id:016x}"]
    assert (f"{sent.trace_id:032x}", f"{sent.span_id:016x}") == (root.trace_id, root.span_id) and sent.sampled
    assert [s.name for s in spans if s.name.startswith("chat ")] == ["chat m"]  # ours stays: no GenAI instrumentation
    [http] = [s for s in app_spans.get_finished_spans() if s.name.startswith("POST")]
    assert http.parent is not None and http.parent.span_id == sent.span_id and http.context.trace_id == sent.trace_id

    engine = Engine()
    host = Host(engine, platform="api", model="m", provider="openai")
    with OTLPReceiver() as receiver:
        plugin = otel_plugin(engine, receiver.endpoint, top={"propagate_traceparent": False})
        with host.session() as session, session.turn("q") as turn:
            assert turn.trace_headers() == {}
            turn.complete("a")
        finish(plugin, receiver)
    assert turn.trace_headers() == {}  # no OTLP pipeline left in the process


def test_fmt_56b_with_a_genai_instrumentation_each_llm_call_appears_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue #30 rule "ours parents theirs, theirs records the call": while a GenAI instrumentation
    (opentelemetry-instrumentation-openai-v2; here a stand-in module with its instrumentor's flag) is instrumented,
    its chat span nests under the turn's root span in the same trace and the agent's own chat span steps aside
    (counted as llm_stepped_aside): one span per LLM call, one trace."""
    import types

    fake = types.ModuleType("opentelemetry.instrumentation.openai_v2")

    class OpenAIInstrumentor:
        is_instrumented_by_opentelemetry = True

    fake.OpenAIInstrumentor = OpenAIInstrumentor  # type: ignore[attr-defined]
    monkeypatch.setitem(__import__("sys").modules, "opentelemetry.instrumentation.openai_v2", fake)
    engine = Engine()
    tracer, app_spans = app_tracer()
    host = Host(engine, platform="api", model="m", provider="openai")

    def provider(request: dict[str, Any]) -> Any:  # what openai-v2 does around the client call
        from opentelemetry.trace import SpanKind

        with tracer.start_as_current_span("chat m", kind=SpanKind.CLIENT,
                                          attributes={"gen_ai.operation.name": "chat"}):
            return _chat()

    with OTLPReceiver() as receiver:
        plugin = otel_plugin(engine, receiver.endpoint)
        with host.session() as session, session.turn("q") as turn:
            turn.call_llm({"model": "m", "messages": [{"role": "user", "content": "q"}]}, provider)
            turn.call_llm({"model": "m", "messages": [{"role": "user", "content": "q"}]}, provider)
            turn.complete("hi")
        stats = plugin.stats
        spans = finish(plugin, receiver)
    assert not [s for s in spans if s.name.startswith("chat ")]
    [root] = [s for s in spans if s.parent_span_id == ""]
    theirs = [s for s in app_spans.get_finished_spans() if s.name == "chat m"]
    assert len(theirs) == 2
    for span in theirs:
        assert f"{span.context.trace_id:032x}" == root.trace_id and f"{span.parent.span_id:016x}" == root.span_id
    assert stats()["builder"]["llm_stepped_aside"] == 2


def test_fmt_56b_hermes_bridge_turns_join_the_active_span() -> None:
    """FMT-56b through the Hermes bridge: a turn Hermes starts inside an active OpenTelemetry span of its process
    joins that trace. (Hermes 0.19's gateway and API server do not hand request headers to plugins, so a
    gateway request's traceparent cannot reach the bridge: docs/backends.md.)"""
    from hermes_pipeline.hermes.bridge import Bridge
    from hermes_pipeline.hermes.normalise import HermesNormaliser

    sid, turn_id = "20261201_221500_aa11bb", "20261201_221500_aa11bb:task:0c0c0c"
    engine = Engine()
    tracer, _ = app_tracer()
    with OTLPReceiver() as receiver:
        plugin = otel_plugin(engine, receiver.endpoint)
        bridge = Bridge(engine, HermesNormaliser())
        with tracer.start_as_current_span("gateway.request") as app:
            bridge.forward("on_session_start", {"session_id": sid, "model": "m", "platform": "api_server"})
            bridge.forward("pre_llm_call", {"session_id": sid, "task_id": "task", "turn_id": turn_id,
                                            "user_message": "hi", "conversation_history": [], "is_first_turn": True,
                                            "model": "m", "platform": "api_server", "sender_id": None})
            bridge.forward("on_session_end", {"session_id": sid, "task_id": "task", "turn_id": turn_id,
                                              "completed": True, "interrupted": False, "model": "m",
                                              "platform": "api_server"})
        bridge.forward("on_session_finalize", {"session_id": sid, "platform": "api_server", "reason": "shutdown"})
        bridge.close()
        spans = finish(plugin, receiver)
    context = app.get_span_context()
    [root] = [s for s in spans if s.attributes.get("gen_ai.operation.name") == "invoke_agent"]
    assert (root.trace_id, root.parent_span_id) == (f"{context.trace_id:032x}", f"{context.span_id:016x}")
