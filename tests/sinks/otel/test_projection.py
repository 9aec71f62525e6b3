"""Span-builder rules tested on hand-made scope events (spec 04 §4.1-§4.6): marks, metadata promotion, attribute
mappings, value coercion, the provider / operation / tool-category tables and the sampling decision."""

from __future__ import annotations

from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind

from hermes_pipeline.export.events import END, MARK, SCOPE, START, ScopeEvent
from hermes_pipeline.export.ids import new_uuid7, uuid_str
from hermes_pipeline.sinks.otel.attrs import attr_value, provider_name, tool_category
from hermes_pipeline.sinks.otel.config import TraceEndpoint
from hermes_pipeline.sinks.otel.genai import operation_name
from hermes_pipeline.sinks.otel.record import SpanRecord, to_readable
from hermes_pipeline.sinks.otel.spans import Route, SpanBuilder, sampled
from hermes_pipeline.sinks.otel.state import Options
from tests.export._closed_support import close_scopes

T0 = 1_780_000_000_000_000
BASE = {"hermes.telemetry_schema_version": "hermes.observer.v1", "hermes.session_id": "s"}


class Stream:
    """Builds a small scope stream: session → turn → tool, with marks."""

    def __init__(self) -> None:
        self.ts = T0
        self.events: list[ScopeEvent] = []
        self.root = 0

    def scope(self, phase: str, uuid: int, parent: int | None, name: str, category: str,
              meta: dict[str, Any] | None = None, data: dict[str, Any] | None = None) -> int:
        self.ts += 10
        self.root = self.root or uuid
        self.events.append(ScopeEvent(SCOPE, phase, uuid, parent, self.ts, name, category, (), None, data,
                                      {**BASE, **(meta or {})}, self.root, self.root))
        return uuid

    def mark(self, parent: int | None, name: str, data: dict[str, Any] | None = None) -> int:
        self.ts += 10
        uuid = new_uuid7(self.ts // 1000)
        self.events.append(ScopeEvent(MARK, None, uuid, parent, self.ts, name, None, (), None, data, dict(BASE),
                                      self.root, self.root))
        return uuid


def run(kind: str, events: list[ScopeEvent], options: Options | None = None, **endpoint: Any) -> tuple[
        list[ReadableSpan], SpanBuilder]:
    spans: list[ReadableSpan] = []
    config = TraceEndpoint(index=0, type=kind, url="http://127.0.0.1:1/v1/traces", **endpoint)
    def submit(span: SpanRecord) -> bool:
        spans.append(to_readable(span))  # as an SDK exporter receives it
        return True

    builder = SpanBuilder([Route(config, submit, "0")], options or Options())
    builder.write(close_scopes(events))  # ends as the tracker hands them: closed scopes
    assert builder.counts["failures"] == 0
    return spans, builder


def tree() -> tuple[Stream, int, int, int]:
    s = Stream()
    session = s.scope(START, new_uuid7(T0 // 1000), None, "hermes.session", "agent", {"hermes.span_kind": "session"})
    turn = s.scope(START, new_uuid7(T0 // 1000), session, "agent.run", "function",
                   {"hermes.span_kind": "agent.run", "app.tenant": "acme", "app.bad": None, "gen_ai.custom": "x",
                    "hermes.turn_id": "t1"})
    tool = s.scope(START, new_uuid7(T0 // 1000), turn, "read_file", "tool", {"hermes.span_kind": "tool.execute"})
    return s, session, turn, tool


def test_fmt_65_marks_attach_to_the_nearest_open_scope_or_are_counted_orphaned() -> None:
    """FMT-65: a mark goes to its parent span if open, else to the nearest open ancestor, else it is counted."""
    s, session, turn, tool = tree()
    s.mark(tool, "hermes.approval.request", {"surface": "cli", "pattern_keys": ["ls"]})
    s.scope(END, tool, turn, "read_file", "tool", {"otel.status_code": "OK"})
    s.mark(tool, "hermes.approval.response", {"surface": "cli", "choice": "deny", "outcome": "denied"})
    s.mark(turn, "hermes.context", {"model": "m"})  # not allowlisted in gen_ai
    s.scope(END, turn, session, "agent.run", "function", {"otel.status_code": "OK"})
    s.scope(END, session, None, "hermes.session", "agent", {"otel.status_code": "OK"})
    s.mark(session, "hermes.compaction", {"rotated": False})  # whole trace exported: orphaned
    spans, builder = run("gen_ai", s.events, trace_grouping="session")  # marks on the session span too
    by_name = {span.name: span for span in spans}
    assert [e.name for e in by_name["execute_tool read_file"].events] == ["hermes.approval.request"]
    [moved] = [span for span in spans if dict(span.attributes or {})["hermes.span_kind"] == "agent.run"][0].events
    assert moved.name == "hermes.approval.response" and dict(moved.attributes or {})["hermes.approval.outcome"] == "denied"
    assert builder.counts["marks_orphaned"] == 1


def test_fmt_69_mark_projection_event_tool_and_exclusions() -> None:
    """FMT-69: in ``full`` every mark (but the excluded ``llm.chunk``) is a span event with hermes_pipeline.mark.*
    keys; with mark_projection = "tool" it is a zero-length INTERNAL child span instead."""
    s, session, turn, tool = tree()
    mark = s.mark(turn, "hermes.context", {"model": "m", "toolsets": ["file"]})
    s.mark(turn, "llm.chunk", {"delta": "x"})
    for uuid, parent, name, cat in ((tool, turn, "read_file", "tool"), (turn, session, "agent.run", "function"),
                                    (session, None, "hermes.session", "agent")):
        s.scope(END, uuid, parent, name, cat, {"otel.status_code": "OK"})
    spans, _ = run("full", s.events)
    [turn_span] = [x for x in spans if x.name == "agent.run"]
    [event] = turn_span.events
    assert event.name == "hermes.context"
    assert dict(event.attributes or {}) == {
        "hermes_pipeline.mark.uuid": uuid_str(mark), "hermes_pipeline.mark.parent_uuid": uuid_str(turn),
        "hermes_pipeline.mark.data.model": "m", "hermes_pipeline.mark.data.toolsets": '["file"]'}
    spans, _ = run("full", s.events, mark_projection="tool", mark_exclude_names=())
    marks = [x for x in spans if x.name in ("hermes.context", "llm.chunk")]
    assert len(marks) == 2 and all(x.kind is SpanKind.INTERNAL and x.start_time == x.end_time for x in marks)
    [run_span] = [x for x in spans if x.name == "agent.run"]
    assert all(x.parent is not None and x.parent.span_id == run_span.context.span_id for x in marks)
    assert not run_span.events


def test_fmt_61_promote_metadata_prefixes() -> None:
    """FMT-61: matching keys are copied; reserved namespaces never; null / object values refused with a counter."""
    s, session, turn, tool = tree()
    s.scope(END, tool, turn, "read_file", "tool", {"otel.status_code": "OK"})
    s.scope(END, turn, session, "agent.run", "function", {"otel.status_code": "OK", "app.tenant": "acme-2"})
    spans, builder = run("gen_ai", s.events, promote_metadata_prefixes=("app.", "gen_ai."))
    [turn_span] = [x for x in spans if x.name == "invoke_agent hermes"]
    attrs = dict(turn_span.attributes or {})
    assert attrs["app.tenant"] == "acme-2"  # the end value wins
    assert "gen_ai.custom" not in attrs and "app.bad" not in attrs
    assert builder.problems == {"otel.metadata_promotion_value_unsupported.app.bad": 1}


def test_fmt_69_attribute_mappings_copy_under_an_alias() -> None:
    """FMT-69: attribute_mappings copies an attribute under its alias (full / openinference only)."""
    s, session, turn, tool = tree()
    s.scope(END, tool, turn, "read_file", "tool", {"otel.status_code": "OK"})
    spans, _ = run("full", s.events, attribute_mappings=(("hermes_pipeline.category", "category"),))
    assert dict(spans[0].attributes or {})["category"] == "tool"
    spans, _ = run("gen_ai", s.events, attribute_mappings=(("gen_ai.tool.name", "tool"),))
    assert "tool" not in dict(spans[0].attributes or {})


def test_fmt_55_unpaired_ends_are_counted_not_exported() -> None:
    """FMT-55: a span is built from a start and its end; an end without a start is counted, never exported."""
    s = Stream()
    s.scope(END, new_uuid7(T0 // 1000), None, "hermes.session", "agent")
    spans, builder = run("gen_ai", s.events)
    assert spans == [] and builder.counts["unpaired_ends"] == 1


@pytest.mark.parametrize(("value", "expected"), [
    ("x", "x"), (True, True), (3, 3), (2.5, 2.5), (None, None), (2**70, str(2**70)), (["a", "b"], ("a", "b")),
    ([1, "a"], '[1,"a"]'), ({"b": 1, "a": "é"}, '{"a":"é","b":1}'), ([], ())])
def test_fmt_60_attribute_values(value: Any, expected: Any) -> None:
    """FMT-60: scalars and homogeneous arrays pass; structured values become canonical JSON strings."""
    assert attr_value(value) == expected


@pytest.mark.parametrize(("provider", "expected"), [
    ("openai", "openai"), ("Anthropic", "anthropic"), ("gemini", "gcp.gemini"), ("google", "gcp.gemini"),
    ("vertex_ai", "gcp.vertex_ai"), ("bedrock", "aws.bedrock"), ("azure-openai", "azure.ai.openai"),
    ("mistral", "mistral_ai"), ("xai", "x_ai"), ("groq", "groq"), ("openrouter", "openrouter"), ("", "unknown")])
def test_fmt_63_provider_mapping(provider: str, expected: str) -> None:
    """§4.2 provider mapping (lowercased; custom values pass through; empty → unknown)."""
    assert provider_name(provider) == expected


def test_fmt_62_operation_names_and_sm_25_tool_categories() -> None:
    """§4.2 api_mode → operation name; SM-25 toolset → hermes.tool.category."""
    assert [operation_name(m) for m in ("chat_completions", "anthropic_messages", "codex_responses", None,
                                        "gemini_native", "completions")] == \
        ["chat", "chat", "chat", "chat", "generate_content", "text_completion"]
    assert [tool_category(t) for t in ("file", "mcp-github", "browser_use", "vision", "todo", "slack_bot", "cronjob",
                                       "weird", "", None)] == \
        ["file", "mcp", "browser", "media", "planning", "communication", "scheduler", "other", "unknown", "unknown"]


def test_book_46_sampling_is_deterministic_nested_and_spread() -> None:
    """BOOK-46: the same UUID always gets the same decision; a lower rate samples a subset of a higher one; rate 0
    samples nothing and 1 everything; consecutive UUIDv7 turns are spread (not one decision per process)."""
    uuids = [new_uuid7(T0 // 1000 + i) for i in range(2000)]
    low = {u for u in uuids if sampled(u, 0.2)}
    high = {u for u in uuids if sampled(u, 0.6)}
    assert low <= high and {u for u in uuids if sampled(u, 0.2)} == low
    assert 0.15 < len(low) / len(uuids) < 0.25 and 0.55 < len(high) / len(uuids) < 0.65
    assert not any(sampled(u, 0.0) for u in uuids) and all(sampled(u, 1.0) for u in uuids)
