"""The ``gen_ai`` OTLP projection end to end (spec 04 §4.1-§4.4, §4.8): a scripted session through the host API,
exported by the real ``OTLPSpanExporter`` to a loopback OTLP receiver and decoded with ``opentelemetry-proto``."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import Any

import pytest

from hermes_pipeline import Engine, Host
from hermes_pipeline.demo.otlp_receiver import OTLPReceiver, ReceivedSpan
from hermes_pipeline.host import SegmentPolicy
from hermes_pipeline.sinks.otel import CAPTURE_ENV, content_gate_open

from tests.sinks.otel._support import (
    SPAN_KIND_CLIENT, SPAN_KIND_INTERNAL, STATUS_ERROR, STATUS_UNSET, by_name, finish, otel_plugin,
    run_scripted_session, tool_span,
)


def scripted_spans(**kwargs: Any) -> list[ReceivedSpan]:
    """The scripted session in one trace per session (``trace_grouping = "session"``, FMT-56 as written); the
    default one-trace-per-turn shape (FMT-56a) is tested in ``test_otel_turn_traces.py``."""
    engine = Engine()
    kwargs.setdefault("endpoint_keys", {"trace_grouping": "session"})
    with OTLPReceiver() as receiver:
        plugin = otel_plugin(engine, receiver.endpoint, **kwargs)
        run_scripted_session(engine)
        return finish(plugin, receiver)


@pytest.fixture(scope="module")
def closed() -> list[ReceivedSpan]:
    """The scripted session with the content gate closed (default ``preview`` summaries)."""
    return scripted_spans()


@pytest.fixture(scope="module")
def opened() -> list[ReceivedSpan]:
    """The scripted session with ``enable_full_payloads = true``."""
    return scripted_spans(enable_full_payloads=True)


def of_kind(spans: list[ReceivedSpan], kind: str) -> list[ReceivedSpan]:
    """The spans of one BOOK span kind (``hermes.span_kind``: ``session``, ``agent.run``, ``skill.run`` ...)."""
    return [s for s in spans if s.attributes.get("hermes.span_kind") == kind]


def session_span(spans: list[ReceivedSpan]) -> ReceivedSpan:
    [span] = [s for s in of_kind(spans, "session") if s.parent_span_id == ""]  # not the subagent's
    assert span.name == "invoke_agent hermes"
    return span


def llm_spans(spans: list[ReceivedSpan], session_id: str = "sess-main") -> list[ReceivedSpan]:
    found = [s for s in spans if s.name.startswith("chat ") and s.attributes["gen_ai.conversation.id"] == session_id]
    return sorted(found, key=lambda s: s.start_ns)


def test_fmt_55_56_one_trace_per_session_with_random_ids(closed: list[ReceivedSpan]) -> None:
    """FMT-55 / FMT-56b (issue #30): one span per scope, all in the session's trace (the subagent too); trace and
    span ids are random, not derived from the scope UUIDs (which stay in hermes.trajectory_id); parents are spans
    of the same trace; times come from the events."""
    root = session_span(closed)
    assert root.parent_span_id == ""
    assert {s.trace_id for s in closed} == {root.trace_id}
    trajectory = root.attributes["hermes.trajectory_id"]  # FMT-67: the session trajectory id stays an attribute
    assert trajectory.replace("-", "") != root.trace_id and root.span_id != trajectory.replace("-", "")[16:]
    ids = {s.span_id for s in closed}
    assert len(ids) == len(closed) == 15  # the subagent's own turn is folded into its invoke_agent span
    by_id = {s.span_id: s for s in closed}
    for span in closed:
        assert span.end_ns > span.start_ns > 1_600_000_000 * 10**9
        if span is not root:
            parent = by_id[span.parent_span_id]
            assert parent.start_ns <= span.start_ns
    trajectories = {turn.attributes["hermes.trajectory_id"] for turn in of_kind(closed, "agent.run")}
    assert len(trajectories) == len(of_kind(closed, "agent.run"))  # each turn's trajectory id is its own UUID
    child = by_name(closed, "invoke_agent researcher")[0]
    assert by_id[child.parent_span_id].name == "execute_tool delegate_task"  # note 5: the delegating tool


def test_fmt_62_span_names_and_kinds(closed: list[ReceivedSpan]) -> None:
    """FMT-62 span mapping: invoke_agent / chat {model} (CLIENT) / execute_tool {tool}; issue #30: a turn is an
    invoke_agent span too (every span has an operation name), the subagent one invoke_agent span (its own turn is
    folded into it), and the trace resource names the SDK (telemetry.sdk.*)."""
    names = sorted(s.name for s in closed)
    assert names == sorted(["invoke_agent hermes", "invoke_agent hermes", "invoke_agent researcher",
                            "chat test-model", "chat test-model", "chat test-model", "chat test-model",
                            "execute_tool read_file", "execute_tool read_file", "execute_tool rm",
                            "execute_tool secret", "execute_tool terminal", "execute_tool mcp_search",
                            "execute_tool delegate_task", "execute_tool slow"])
    for span in closed:
        assert span.kind == (SPAN_KIND_CLIENT if span.name.startswith("chat ") else SPAN_KIND_INTERNAL)
        assert span.scope_name == "hermes_pipeline"
        assert span.resource["service.name"] == "hermes-agent"
        assert (span.resource["telemetry.sdk.name"], span.resource["telemetry.sdk.language"]) == \
            ("hermes_pipeline", "python") and span.resource["telemetry.sdk.version"]
        assert span.attributes["gen_ai.operation.name"] in ("invoke_agent", "chat", "execute_tool")
        assert not any(key.startswith(("hermes_pipeline.", "input.", "output.", "llm.", "openinference."))
                       for key in span.attributes)  # FMT-62; issue #30: no OpenInference keys in gen_ai
        assert "gen_ai.system" not in span.attributes
        assert span.attributes["hermes.span_kind"]


def test_fmt_63_67_invoke_agent_attributes(closed: list[ReceivedSpan]) -> None:
    """FMT-63 / FMT-67: the session span carries provider, agent name, conversation id, model and hermes.* keys;
    the subagent span carries its role, status, parent session and summaries of goal and summary."""
    attrs = session_span(closed).attributes
    assert {k: attrs[k] for k in ("gen_ai.operation.name", "gen_ai.provider.name", "gen_ai.agent.name",
                                  "gen_ai.conversation.id", "gen_ai.request.model", "hermes.platform",
                                  "hermes.span_kind")} == {
        "gen_ai.operation.name": "invoke_agent", "gen_ai.provider.name": "openai", "gen_ai.agent.name": "hermes",
        "gen_ai.conversation.id": "sess-main", "gen_ai.request.model": "test-model", "hermes.platform": "cli",
        "hermes.span_kind": "session"}
    assert "hermes.session.segment" not in attrs and "error.type" not in attrs
    child = by_name(closed, "invoke_agent researcher")[0].attributes
    assert child["gen_ai.agent.name"] == "researcher" and child["gen_ai.conversation.id"] == "sess-main-child"
    assert (child["hermes.scope_role"], child["hermes.subagent.role"], child["hermes.subagent.status"],
            child["hermes.parent_session.id"]) == ("subagent", "researcher", "completed", "sess-main")
    assert child["hermes.input.preview"] == "find the notes" and child["hermes.output.preview"] == "found it"
    assert child["gen_ai.provider.name"] == "openai"
    [parent_turn] = [s for s in of_kind(closed, "agent.run") if s.attributes["hermes.input.preview"] ==
                     "Summarise notes.txt"]
    assert child["hermes.trajectory_id"] == parent_turn.attributes["hermes.trajectory_id"]  # enclosing agent.run


def test_fmt_62_66_67_llm_spans_usage_attempts_and_errors(closed: list[ReceivedSpan]) -> None:
    """BOOK-6 (model, input / output tokens, cache use on every llm.call span), FMT-62 LLM span table, FMT-26
    usage, FMT-66 error.type, FMT-67 attempts: one span per attempt, retries share
    the request id; the failed attempt is ERROR with upstream_error and retry_count; success is UNSET."""
    failed, ok, final = llm_spans(closed)
    for span in (failed, ok, final):
        a = span.attributes
        assert (a["gen_ai.operation.name"], a["gen_ai.provider.name"], a["gen_ai.request.model"]) == \
            ("chat", "openai", "test-model")
        assert (a["server.address"], a["server.port"], a["hermes.api_mode"]) == ("api.example", 443, "chat_completions")
        assert a["hermes.span_kind"] == "llm.call" and a["hermes.turn.id"].startswith("turn_")
    assert failed.attributes["gen_ai.request.temperature"] == 0.2
    assert failed.attributes["gen_ai.request.max_tokens"] == 256
    assert failed.status_code == STATUS_ERROR and failed.status_message == "upstream_error"  # FMT-58 amended
    assert failed.attributes["error.type"] == "upstream_error" and failed.attributes["hermes.llm.retry_count"] == 0
    assert ok.status_code == final.status_code == STATUS_UNSET and "error.type" not in ok.attributes
    assert failed.attributes["hermes.api_request.id"] == ok.attributes["hermes.api_request.id"] != \
        final.attributes["hermes.api_request.id"]
    assert [s.attributes["hermes.llm.attempt"] for s in (failed, ok, final)] == [1, 2, 1]
    a = ok.attributes
    assert a["gen_ai.response.model"] == "test-model-2025" and a["gen_ai.response.finish_reasons"] == ["tool_calls"]
    assert (a["gen_ai.usage.input_tokens"], a["gen_ai.usage.output_tokens"]) == (10, 5)
    assert "gen_ai.usage.cache_read.input_tokens" not in a and a["hermes.llm.cache_hit"] is False
    assert a["hermes.output.preview"] == 'assistant: [tool_call read_file {"path":"notes.txt"}]'


@pytest.mark.parametrize(("call_id", "status", "error_type"), [
    ("call_ok", "ok", None), ("call_err", "error", "tool_error"), ("call_deny", "blocked", "blocked"),
    ("call_block", "blocked", "blocked"), ("call_cancel", "cancelled", "cancelled")])
def test_fmt_58_66_tool_status_and_error_type(closed: list[ReceivedSpan], call_id: str, status: str,
                                              error_type: str | None) -> None:
    """FMT-58 / FMT-66: success → UNSET without error.type; error / blocked / cancelled → ERROR described by the
    error type (FMT-58 as amended; with the gate closed no message)."""
    span = tool_span(closed, call_id)
    assert span.attributes["hermes.tool.status"] == status
    assert span.attributes.get("error.type") == error_type
    assert span.status_code == (STATUS_UNSET if error_type is None else STATUS_ERROR)
    assert span.status_message == (error_type or "")  # FMT-58 amended: the error type, no message with the gate closed
    assert span.attributes["gen_ai.operation.name"] == "execute_tool"


def test_fmt_62_67_tool_span_attributes(closed: list[ReceivedSpan]) -> None:
    """BOOK-7 / FMT-62: tool span table: name, call id, type (extension for MCP toolsets), toolset and SM-25
    category, argument and result summaries (the status is checked per outcome above)."""
    ok = tool_span(closed, "call_ok").attributes
    assert (ok["gen_ai.tool.name"], ok["gen_ai.tool.type"], ok["hermes.toolset"], ok["hermes.tool.category"]) == \
        ("read_file", "function", "file", "file")
    assert ok["hermes.input.preview"] == '{"path":"notes.txt"}' and ok["hermes.output.preview"] == "Buy milk."
    assert ok["hermes.output.sha256"] == hashlib.sha256(b"Buy milk.").hexdigest() and ok["hermes.output.chars"] == 9
    mcp = tool_span(closed, "call_mcp").attributes
    assert (mcp["gen_ai.tool.type"], mcp["hermes.tool.category"]) == ("extension", "mcp")
    assert tool_span(closed, "call_sub").attributes["hermes.tool.category"] == "delegation"
    assert tool_span(closed, "call_deny").attributes["hermes.tool.category"] == "unknown"


def test_fmt_65_68_approval_and_human_input_span_events(closed: list[ReceivedSpan]) -> None:
    """FMT-65 / FMT-68: approval marks become events of the tool span they happened in, human-input marks events of
    the turn; gated fields (command, description, prompt) are absent with the gate closed."""
    events = dict(tool_span(closed, "call_appr").events)
    request, response = events["hermes.approval.request"], events["hermes.approval.response"]
    assert request == {"hermes.approval.surface": request["hermes.approval.surface"],
                       "hermes.approval.pattern_keys": ["ls"], "gen_ai.tool.call.id": "call_appr"}
    assert (response["hermes.approval.choice"], response["hermes.approval.outcome"],
            response["gen_ai.tool.call.id"]) == ("once", "approved", "call_appr")
    [turn] = [s for s in of_kind(closed, "agent.run") if s.attributes["hermes.turn.id"] and s.events]
    names = [name for name, _ in turn.events]
    assert names == ["hermes.human_input.request", "hermes.human_input.resolved"]
    asked, resolved = (attrs for _, attrs in turn.events)
    assert asked["hermes.human_input.kind"] == "clarify" and "hermes.human_input.prompt" not in asked
    assert resolved["hermes.human_input.outcome"] == "provided"
    assert asked["hermes.human_input.request_id"] == resolved["hermes.human_input.request_id"]
    for span in closed:  # other marks never become events in gen_ai
        assert all(name.startswith(("hermes.approval.", "hermes.human_input.")) or name == "exception"
                   for name, _ in span.events)


def test_fmt_67_bookkeeping_turn_attributes(closed: list[ReceivedSpan]) -> None:
    """FMT-67: agent.run carries turn / task ids, outcome, the effective sampling rate and input/output summaries."""
    [turn] = [s for s in of_kind(closed, "agent.run") if s.attributes["hermes.input.preview"] == "Summarise notes.txt"]
    a = turn.attributes
    assert a["hermes.task.id"].startswith("task_") and a["hermes.turn.outcome"] == "completed"
    assert a["hermes.sampling_rate"] == 1.0 and a["hermes.platform"] == "cli"
    assert a["hermes.input.sha256"] == hashlib.sha256(b"Summarise notes.txt").hexdigest()
    assert a["hermes.output.preview"] == "All done" and "user.id" not in a


CONTENT_KEYS = ("gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions",
                "gen_ai.tool.definitions", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result")


def test_fmt_30_31_gate_closed_exports_only_the_previews(closed: list[ReceivedSpan]) -> None:
    """FMT-30 / FMT-31 / issue #30: with the gate closed no content goes out beyond the scrubbed previews: where
    backends read a span's input and output (gen_ai.input / output.messages, gen_ai.tool.call.arguments /
    result) there is exactly the hermes.input / output.preview text; no system instructions, no tool
    definitions, no error message."""
    previews = 0
    for span in closed:
        a = span.attributes
        assert "gen_ai.system_instructions" not in a and "gen_ai.tool.definitions" not in a, span.name
        assert "hermes.error.message" not in a
        assert "busy" not in json.dumps(a)  # the failed attempt's error message is content
        for side, role in (("input", "user"), ("output", "assistant")):
            preview = a.get(f"hermes.{side}.preview")
            key = f"gen_ai.tool.call.{'arguments' if side == 'input' else 'result'}" \
                if a["gen_ai.operation.name"] == "execute_tool" else f"gen_ai.{side}.messages"
            if preview is None:
                assert key not in a, (span.name, key)
                continue
            previews += 1
            if key.startswith("gen_ai.tool."):
                assert a[key] == preview
            else:
                [message] = json.loads(a[key])
                assert (message["role"], message["parts"]) == (role, [{"type": "text", "content": preview}])
    assert previews >= 20
    ok = llm_spans(closed)[1].attributes
    assert json.loads(ok["gen_ai.output.messages"])[0]["finish_reason"] == "tool_call"


@pytest.mark.parametrize("mode", ["digest", "off"])
def test_fmt_31_content_summary_digest_and_off(mode: str) -> None:
    """FMT-31: ``digest`` drops the preview (no text at all), ``off`` drops the summaries."""
    spans = scripted_spans(content_summary=mode)
    text = json.dumps([s.attributes for s in spans] + [s.events for s in spans])
    for secret in ("Summarise notes", "Buy milk", "You are Hermes", "found it", "Which file"):
        assert secret not in text
    ok = tool_span(spans, "call_ok").attributes
    if mode == "digest":
        assert ok["hermes.output.sha256"] == hashlib.sha256(b"Buy milk.").hexdigest()
        assert "hermes.output.preview" not in ok
    else:
        assert not any(key.startswith(("hermes.input.", "hermes.output.")) for s in spans for key in s.attributes)


def test_fmt_30_64_gate_open_exports_genai_messages(opened: list[ReceivedSpan]) -> None:
    """FMT-30 / FMT-64: with enable_full_payloads the opt-in attributes follow the GenAI message schemas."""
    failed, ok, final = llm_spans(opened)
    a = ok.attributes
    assert json.loads(a["gen_ai.input.messages"]) == [
        {"role": "system", "parts": [{"type": "text", "content": "You are Hermes."}]},
        {"role": "user", "parts": [{"type": "text", "content": "Summarise notes.txt"}]}]
    assert json.loads(a["gen_ai.output.messages"]) == [
        {"role": "assistant", "finish_reason": "tool_call",  # the conventions' FinishReason value
         "parts": [{"type": "tool_call", "id": "call_ok", "name": "read_file", "arguments": {"path": "notes.txt"}}]}]
    assert json.loads(a["gen_ai.tool.definitions"]) == [
        {"type": "function", "name": "read_file", "description": "Read a file",
         "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}]
    history = json.loads(final.attributes["gen_ai.input.messages"])
    assert history[-1] == {"role": "tool", "parts": [{"type": "tool_call_response", "id": "call_ok",
                                                     "response": "Buy milk."}]}
    assert history[-2]["parts"][0]["type"] == "tool_call"
    assert failed.attributes["hermes.error.message"] == "busy"
    tool = tool_span(opened, "call_ok").attributes
    assert (tool["gen_ai.tool.call.arguments"], tool["gen_ai.tool.call.result"]) == ('{"path":"notes.txt"}', "Buy milk.")
    for span in opened:
        assert not any(key.startswith(("hermes.input.", "hermes.output.")) for key in span.attributes)
    request = dict(tool_span(opened, "call_appr").events)["hermes.approval.request"]
    assert (request["hermes.approval.command"], request["hermes.approval.description"]) == ("ls", "lists files")
    turn = [s for s in of_kind(opened, "agent.run") if s.events][0]
    assert dict(turn.events)["hermes.human_input.request"]["hermes.human_input.prompt"] == "Which file?"
    child = by_name(opened, "invoke_agent researcher")[0].attributes
    assert json.loads(child["gen_ai.input.messages"])[0]["parts"][0]["content"] == "find the notes"


@pytest.mark.parametrize(("value", "expected"), [
    ("true", True), ("TRUE", True), ("SPAN_ONLY", True), ("span_and_event", True),
    ("false", False), ("NO_CONTENT", False), ("EVENT_ONLY", False), ("", False)])
def test_fmt_30_capture_variable_values(monkeypatch: pytest.MonkeyPatch, value: str, expected: bool) -> None:
    """FMT-30: the capture variable opens the OTLP gate for true / SPAN_ONLY / SPAN_AND_EVENT, case-insensitively."""
    monkeypatch.setenv(CAPTURE_ENV, value)
    assert content_gate_open(False) is expected
    assert content_gate_open(True) is True


def test_fmt_30_capture_variable_opens_the_gate_end_to_end(monkeypatch: pytest.MonkeyPatch) -> None:
    """FMT-30: ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY`` at activation exports content."""
    monkeypatch.setenv(CAPTURE_ENV, "SPAN_ONLY")
    spans = scripted_spans()
    a = llm_spans(spans)[0].attributes
    assert len(json.loads(a["gen_ai.input.messages"])) == 2 and "hermes.input.preview" not in a
    monkeypatch.setenv(CAPTURE_ENV, "EVENT_ONLY")
    spans = scripted_spans()
    a = llm_spans(spans)[0].attributes  # the gate stays closed: the messages carry the preview only
    assert json.loads(a["gen_ai.input.messages"])[0]["parts"] == [{"type": "text", "content": a["hermes.input.preview"]}]


@pytest.fixture
def receiver() -> Iterator[OTLPReceiver]:
    with OTLPReceiver() as rx:
        yield rx


def test_fmt_56_67_segment_rotation_starts_a_new_trace(engine: Engine, receiver: OTLPReceiver) -> None:
    """FMT-56 / FMT-67 / FMT-24 note 4: each session segment is its own trace; rotated ones carry the segment
    number and reason; the compaction mark is an event of the session span (FMT-65)."""
    plugin = otel_plugin(engine, receiver.endpoint, endpoint_keys={"trace_grouping": "session"})
    host = Host(engine, model="m", platform="gateway", segments=SegmentPolicy(on_compaction=True, max_turns=2))
    with host.session("long") as session:
        with session.turn("one") as turn:
            turn.complete("ok")
        session.report_compaction()
        for text in ("two", "three", "four"):
            with session.turn(text) as turn:
                turn.complete("ok")
    spans = finish(plugin, receiver)
    sessions = sorted(of_kind(spans, "session"), key=lambda s: s.start_ns)
    assert len(sessions) == 3 and len({s.trace_id for s in sessions}) == 3
    assert all(s.parent_span_id == "" and s.attributes["gen_ai.conversation.id"] == "long" for s in sessions)
    first, second, third = (s.attributes for s in sessions)
    assert "hermes.session.segment" not in first
    assert (second["hermes.session.segment"], second["hermes.session.segment_reason"]) == (1, "compaction")
    assert (third["hermes.session.segment"], third["hermes.session.segment_reason"]) == (2, "max_turns")
    assert dict(sessions[0].events) == {"hermes.compaction": {"hermes.compaction.rotated": False}}
    turns = of_kind(spans, "agent.run")
    assert [sum(t.trace_id == s.trace_id for t in turns) for s in sessions] == [1, 2, 1]
    for t in turns:
        [owner] = [s for s in sessions if s.trace_id == t.trace_id]
        assert t.parent_span_id == owner.span_id
