"""Traces as trace backends show them (issue 18): one trace per turn (FMT-56a), failed spans with their reason
(FMT-58 as amended), ``gen_ai`` completeness (operation names, response ids, answers, conversation ids) and an
honest session-finalize reason. Spans go through the real OTLP exporter to the loopback receiver."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline import Engine, Host
from hermes_pipeline.config import ConfigError, load_pipeline
from hermes_pipeline.config.discovery import PipelineSettings
from hermes_pipeline.demo.otlp_receiver import OTLPReceiver, ReceivedSpan
from hermes_pipeline.export.errors import ExportConfigError
from hermes_pipeline.export.ids import uuid_str
from hermes_pipeline.sinks.otel.config import parse_otel_config
from hermes_pipeline.testing import Recorder

from tests.sinks.otel._support import (
    ANSWER, FOLLOW_UP, LAST_ANSWER, MISSING, QUESTION, STATUS_ERROR, by_name, finish, otel_plugin,
    run_scripted_session, run_two_turn_session,
)

PROJECTIONS = ("gen_ai", "openinference", "full")


def export(projection: str, session: Any = run_two_turn_session, **kwargs: Any) -> list[ReceivedSpan]:
    engine = Engine()
    with OTLPReceiver() as receiver:
        plugin = otel_plugin(engine, receiver.endpoint, projection=projection, **kwargs)
        session(engine)
        return finish(plugin, receiver)


def traces(spans: list[ReceivedSpan]) -> dict[str, list[ReceivedSpan]]:
    out: dict[str, list[ReceivedSpan]] = {}
    for span in spans:
        out.setdefault(span.trace_id, []).append(span)
    return out


def root_of(members: list[ReceivedSpan]) -> ReceivedSpan:
    [root] = [s for s in members if not s.parent_span_id]
    return root


@pytest.mark.parametrize("projection", PROJECTIONS)
def test_fmt_56a_one_trace_per_turn_rooted_at_the_turn_without_a_session_span(projection: str) -> None:
    """FMT-56a / FMT-56b: by default each turn is a trace of its own whose root is the turn's span (random trace and
    span ids, the turn's UUID in hermes.trajectory_id); no session span is exported; every span carries session.id and
    gen_ai.conversation.id so that backends group the two turns into one session."""
    spans = export(projection)
    grouped = traces(spans)
    assert len(grouped) == 2
    for members in grouped.values():
        root = root_of(members)
        assert root.attributes["hermes.span_kind"] == "agent.run"
        assert root.trace_id[16:] != root.span_id
        assert root.attributes["hermes.trajectory_id"].replace("-", "") != root.trace_id
        ids = {s.span_id for s in members}
        assert all(s.parent_span_id in ids for s in members if s.parent_span_id)
    assert not [s for s in spans if s.attributes.get("hermes.span_kind") == "session"]
    assert {s.attributes["session.id"] for s in spans} == {"sess-2t"}
    assert {s.attributes["gen_ai.conversation.id"] for s in spans} == {"sess-2t"}
    turn_ids = [root_of(m).attributes["hermes.turn.id"] for m in sorted(grouped.values(), key=lambda m: m[0].start_ns)]
    assert len(set(turn_ids)) == 2


def test_fmt_56a_gen_ai_turn_is_the_invoke_agent_root_with_question_and_answer() -> None:
    """FMT-56a / FMT-63: in gen_ai the turn's root is an invoke_agent span (operation, agent name, provider, model,
    conversation id); with the content gate open its messages are the user's question and the final answer (what
    backends show for a trace). Issue #30: no OpenInference key (input.value / output.value) in gen_ai."""
    spans = export("gen_ai", enable_full_payloads=True)
    roots = sorted((root_of(m) for m in traces(spans).values()), key=lambda s: s.start_ns)
    for root, question, answer in zip(roots, (QUESTION, FOLLOW_UP), (ANSWER, LAST_ANSWER), strict=True):
        a = root.attributes
        assert root.name == "invoke_agent hermes" and root.kind == 1
        assert (a["gen_ai.operation.name"], a["gen_ai.agent.name"], a["gen_ai.provider.name"]) == \
            ("invoke_agent", "hermes", "openai")
        assert a["gen_ai.request.model"] == "gpt-4o-mini" and a["gen_ai.conversation.id"] == "sess-2t"
        assert json.loads(a["gen_ai.input.messages"]) == [{"role": "user",
                                                          "parts": [{"type": "text", "content": question}]}]
        assert json.loads(a["gen_ai.output.messages"]) == [{"role": "assistant", "finish_reason": "stop",
                                                           "parts": [{"type": "text", "content": answer}]}]
        assert not [k for k in a if k.startswith(("input.", "output."))]


def test_fmt_56a_subagents_stay_in_the_delegating_turns_trace() -> None:
    """FMT-56a: the subagent (its session, turn and model call) is in the trace of the turn that delegated to it,
    under the delegating tool call; its spans name the parent session in session.id and their own in
    gen_ai.conversation.id."""
    spans = export("gen_ai", session=run_scripted_session)
    [members] = traces(spans).values()
    [delegate] = by_name(members, "execute_tool delegate_task")
    [child] = [s for s in members if s.attributes.get("hermes.scope_role") == "subagent"]
    assert child.parent_span_id == delegate.span_id
    inside = [s for s in members if s.attributes.get("gen_ai.conversation.id") == "sess-main-child"]
    assert len(inside) == 2 and all(s.attributes["session.id"] == "sess-main" for s in inside)
    [llm] = [s for s in inside if s is not child]  # issue #30: the subagent's own turn is folded into its span
    assert llm.parent_span_id == child.span_id and llm.name.startswith("chat ")


def test_fmt_56_trace_grouping_session_keeps_one_trace_per_session() -> None:
    """FMT-56 (trace_grouping = "session", NeMo Relay's shape): one trace rooted at the session span; the turns
    are its children (invoke_agent spans, issue #30: every span has an operation)."""
    spans = export("gen_ai", endpoint_keys={"trace_grouping": "session"})
    [members] = traces(spans).values()
    root = root_of(members)
    assert root.attributes["hermes.span_kind"] == "session" and root.name == "invoke_agent hermes"
    turns = [s for s in members if s.attributes["hermes.span_kind"] == "agent.run"]
    assert len(turns) == 2 and all(t.parent_span_id == root.span_id and t.name == "invoke_agent hermes" for t in turns)


@pytest.mark.parametrize("value, valid", [("turn", True), ("session", True), ("trace", False), (1, False)])
def test_fmt_56a_trace_grouping_validate_accepts_exactly_what_activation_accepts(
        tmp_path: Path, value: Any, valid: bool) -> None:
    """FMT-56a / CFG: ``trace_grouping`` is checked by ``config validate`` (load_pipeline) as by activation
    (the sink's own parser): both accept ``turn`` and ``session`` and refuse anything else naming the key."""
    entry = {"type": "gen_ai", "endpoint": "http://127.0.0.1:4318", "trace_grouping": value}
    rendered = json.dumps(value)
    pipeline = tmp_path / "p.toml"
    pipeline.write_text('version = 1\n\n[policy]\nunsupported_value = "error"\n\n[[components]]\n'
                        'kind = "observability"\n\n[components.config]\nversion = 4\n\n'
                        '[components.config.opentelemetry]\nenabled = true\n\n'
                        '[[components.config.opentelemetry.endpoints]]\ntype = "gen_ai"\n'
                        f'endpoint = "http://127.0.0.1:4318"\ntrace_grouping = {rendered}\n', encoding="utf-8")
    if valid:
        loaded = load_pipeline(PipelineSettings(), selected=pipeline, discover=False)
        assert not [d for d in loaded.diagnostics.items if "trace_grouping" in str(d.field)]
        assert parse_otel_config({"enabled": True, "endpoints": [entry]}).endpoints[0].trace_grouping == value
        return
    with pytest.raises(ConfigError) as caught:
        load_pipeline(PipelineSettings(), selected=pipeline, discover=False)
    assert "trace_grouping" in str(caught.value) + repr(getattr(caught.value, "diagnostics", ""))
    with pytest.raises(ExportConfigError, match="trace_grouping"):
        parse_otel_config({"enabled": True, "endpoints": [entry]})


@pytest.mark.parametrize("gate", [False, True])
@pytest.mark.parametrize("projection", PROJECTIONS)
def test_fmt_58_failed_spans_say_why(projection: str, gate: bool) -> None:
    """FMT-58 (amended 2026-12): a failed span's status description is its error type with the content gate
    closed, ``type: scrubbed message`` with it open; an ``exception`` event carries exception.type (and
    exception.message only with the gate open)."""
    spans = export(projection, enable_full_payloads=gate)
    [failed] = [s for s in spans if s.status_code == STATUS_ERROR]
    expected = f"FileNotFoundError: {MISSING}"
    assert failed.status_message == (f"tool_error: {expected}" if gate else "tool_error")
    [(name, attrs)] = [(n, a) for n, a in failed.events if n == "exception"]
    assert attrs["exception.type"] == "tool_error"
    assert attrs.get("exception.message") == (expected if gate else None)


def test_fmt_58_llm_errors_name_the_exception_class_and_messages_are_scrubbed() -> None:
    """FMT-58 / FMT-33a: a failed provider attempt's exception event names the exception class; the message in
    the description is credential-scrubbed and at most 200 characters."""

    class RateLimited(Exception):
        status_code = 429

    secret = "sk-proj-" + "A" * 40

    def session(engine: Engine) -> None:
        host = Host(engine, model="m", provider="openai")
        with host.session("s") as s, s.turn("hi") as turn:
            with pytest.raises(RateLimited):
                turn.call_llm({"model": "m", "messages": []},
                              lambda r: (_ for _ in ()).throw(RateLimited(f"slow down {secret} " + "x" * 300)))

    spans = export("gen_ai", session=session, enable_full_payloads=True)
    [failed] = [s for s in spans if s.name.startswith("chat")]
    [(_, attrs)] = [(n, a) for n, a in failed.events if n == "exception"]
    assert attrs["exception.type"] == "RateLimited"
    assert failed.status_message.startswith("rate_limited: slow down <redacted:") and secret not in failed.status_message
    assert len(failed.status_message) == len("rate_limited: ") + 200


def test_issue_18_gen_ai_every_span_has_an_operation_response_ids_and_answers() -> None:
    """§4.2 / FMT-64: every gen_ai span of the session has gen_ai.operation.name (the turn is invoke_agent, not
    UNKNOWN); chat spans carry gen_ai.response.id from the provider's response and the answer text in
    gen_ai.output.messages (what backends' output columns read; issue #30: never as OpenInference's output.value);
    every span has gen_ai.conversation.id."""
    spans = export("gen_ai", enable_full_payloads=True)
    assert all("gen_ai.operation.name" in s.attributes for s in spans)
    assert all(s.attributes["gen_ai.conversation.id"] == "sess-2t" for s in spans)
    chats = sorted(by_name(spans, "chat gpt-4o-mini"), key=lambda s: s.start_ns)
    assert [s.attributes["gen_ai.response.id"] for s in chats] == ["chatcmpl-0-2", f"chatcmpl-{len(ANSWER)}-0",
                                                                   f"chatcmpl-{len(LAST_ANSWER)}-0"]
    outputs = [json.loads(s.attributes["gen_ai.output.messages"]) for s in chats[1:]]
    assert [o[0]["parts"] for o in outputs] == [[{"type": "text", "content": ANSWER}],
                                               [{"type": "text", "content": LAST_ANSWER}]]
    assert not [k for s in spans for k in s.attributes if k.startswith(("input.", "output.", "llm."))]


def test_obs_36_a_session_left_normally_is_finalized_as_completed(rec: Recorder, host: Host) -> None:
    """OBS-36: leaving ``with host.session()`` finalizes the identity once with a reason saying how it ended:
    ``completed`` normally, ``error`` on an exception, ``interrupted`` on Ctrl-C (``shutdown`` is for
    identities torn down with the process)."""
    with host.session("a"):
        pass
    with pytest.raises(ValueError), host.session("b"):
        raise ValueError("boom")
    with pytest.raises(KeyboardInterrupt), host.session("c"):
        raise KeyboardInterrupt
    assert [(e["session_id"], e["reason"]) for e in rec.of("on_session_finalize")] == [
        ("a", "completed"), ("b", "error"), ("c", "interrupted")]


def test_fmt_56a_mark_spans_follow_their_turn_and_session_level_ones_are_traces_of_their_own() -> None:
    """FMT-56a / FMT-69: with ``mark_projection = "tool"`` a mark under a turn is a zero-length span in that turn's
    trace, under its parent; a session-level mark (the session is no span) is a one-span trace of its own; both
    carry session.id and gen_ai.conversation.id."""
    from hermes_pipeline.export.events import END
    from hermes_pipeline.export.ids import new_uuid7

    from tests.sinks.otel.test_projection import T0, Stream, run

    s = Stream()
    session = s.scope("start", new_uuid7(T0 // 1000), None, "hermes.session", "agent", {"hermes.span_kind": "session"})
    turn = s.scope("start", new_uuid7(T0 // 1000), session, "agent.run", "function", {"hermes.span_kind": "agent.run"})
    in_turn = s.mark(turn, "hermes.context", {"model": "m"})
    s.scope(END, turn, session, "agent.run", "function", {"otel.status_code": "OK"})
    outside = s.mark(session, "hermes.context", {"model": "m"})
    s.scope(END, session, None, "hermes.session", "agent", {"otel.status_code": "OK"})
    spans, _ = run("full", s.events, mark_projection="tool")
    by_uuid = {dict(span.attributes or {}).get("hermes_pipeline.mark.uuid",
                                               dict(span.attributes or {}).get("hermes_pipeline.uuid")): span
               for span in spans}
    assert [span.name for span in spans if span.name != "hermes.context"] == ["agent.run"]
    marked, alone, run_span = by_uuid[uuid_str(in_turn)], by_uuid[uuid_str(outside)], by_uuid[uuid_str(turn)]
    assert marked.context.trace_id == run_span.context.trace_id and marked.parent is not None
    assert marked.parent.span_id == run_span.context.span_id
    assert alone.context.trace_id != run_span.context.trace_id and alone.parent is None
    for span in (marked, alone):
        assert dict(span.attributes or {})["session.id"] == dict(span.attributes or {})["gen_ai.conversation.id"] == "s"


@pytest.mark.parametrize("projection", ["gen_ai", "openinference"])
def test_fmt_56a_session_level_marks_are_not_lost_when_the_session_is_no_span(projection: str) -> None:
    """FMT-56a / FMT-69: with one trace per turn the session scope is no span, so a mark it carries (here a
    context snapshot outside any turn) becomes a one-span trace of its own with session.id and
    gen_ai.conversation.id, under the default mark projection too; nothing is counted as orphaned or dropped."""
    name = "hermes.compaction" if projection == "gen_ai" else "hermes.context"  # gen_ai keeps its own mark list
    from hermes_pipeline.export.events import END
    from hermes_pipeline.export.ids import new_uuid7

    from tests.sinks.otel.test_projection import T0, Stream, run

    s = Stream()
    session = s.scope("start", new_uuid7(T0 // 1000), None, "hermes.session", "agent", {"hermes.span_kind": "session"})
    turn = s.scope("start", new_uuid7(T0 // 1000), session, "agent.run", "function", {"hermes.span_kind": "agent.run"})
    s.scope(END, turn, session, "agent.run", "function", {"otel.status_code": "OK"})
    outside = s.mark(session, name, {"model": "m"})
    s.scope(END, session, None, "hermes.session", "agent", {"otel.status_code": "OK"})
    spans, builder = run(projection, s.events, mark_projection="event")
    alone = [span for span in spans if span.name == name]
    turn_trace = [span.context.trace_id for span in spans if span.name != name]
    assert len(alone) == 1 and builder.counts["marks_orphaned"] == 0
    assert alone[0].context.trace_id not in turn_trace and alone[0].parent is None
    attrs = dict(alone[0].attributes or {})
    assert attrs["session.id"] == attrs["gen_ai.conversation.id"] == "s"
    assert [span.name for span in spans if span.name != name] != []
    if projection == "gen_ai":  # issue #30: GenAI names only (FMT-62), and an operation on every span
        assert attrs["gen_ai.operation.name"] == "invoke_workflow" and attrs["hermes.compaction.rotated"] is False
        assert not [k for k in attrs if k.startswith("hermes_pipeline.")]


@pytest.mark.parametrize("projection", PROJECTIONS)
def test_book_11_14_turn_tree_and_every_span_names_its_trajectory(projection: str) -> None:
    """BOOK-11: each turn renders as one tree under its ``agent.run`` root, LLM spans with their token counts, the
    turns grouped by session.id; BOOK-14: every span carries ``hermes.trajectory_id``, the id of the local
    trajectory that holds its full content."""
    spans = export(projection)
    assert spans and all(s.attributes.get("hermes.trajectory_id") for s in spans)
    for members in traces(spans).values():
        root = root_of(members)
        assert root.attributes["hermes.span_kind"] == "agent.run"
        assert all(s is root or s.parent_span_id for s in members)
    if projection != "gen_ai":  # the other projections name token counts in their own conventions
        return
    llm = [s for s in spans if s.attributes.get("hermes.span_kind") == "llm.call"]
    assert llm and all("gen_ai.usage.input_tokens" in s.attributes and "gen_ai.usage.output_tokens" in s.attributes
                       for s in llm)
