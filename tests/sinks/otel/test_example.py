"""The worked example of spec 04 §6 through the span builder: §6.3 (``gen_ai``, gate closed) and §6.4 (``full`` and
``openinference``, gate open). The scope events are those of §6.1 (full history on every LLM start, FMT-25)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind, StatusCode

from hermes_pipeline.export.events import END, SCOPE, START, ScopeEvent
from hermes_pipeline.export.ids import parse_timestamp_us, uuid_int
from hermes_pipeline.sinks.otel.attrs import span_id
from hermes_pipeline.sinks.otel.config import TraceEndpoint
from hermes_pipeline.sinks.otel.record import to_readable
from hermes_pipeline.sinks.otel.spans import Route, SpanBuilder
from hermes_pipeline.sinks.otel.state import Options
from tests.export._closed_support import close_scopes

U = {n: uuid_int(u) for n, u in {
    "session": "01a05c77-08a0-7c3a-9d10-5e41a7c90001", "turn": "01a05c77-08aa-7c3a-9d10-5e41a7c90002",
    "llm1": "01a05c77-08b4-7c3a-9d10-5e41a7c90003", "tool": "01a05c77-0d8c-7c3a-9d10-5e41a7c90004",
    "llm2": "01a05c77-0daa-7c3a-9d10-5e41a7c90005"}.items()}
SID = "20260901_101500_a1b2c3"
V = "hermes.observer.v1"
BASE = {"hermes.telemetry_schema_version": V, "hermes.session_id": SID}
CALL = {"id": "call_7Yx2", "type": "function", "function": {"name": "read_file", "arguments": '{"path":"notes.txt"}'}}
TOOLS = [{"type": "function", "function": {"name": "read_file", "parameters": {
    "type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}}]
HISTORY = [{"role": "system", "content": "You are Hermes, a helpful agent."}, {"role": "user", "content": "Summarise notes.txt"}]
HISTORY2 = [*HISTORY, {"role": "assistant", "content": "", "tool_calls": [CALL]},
            {"role": "tool", "tool_call_id": "call_7Yx2", "content": "Buy milk. Call Ana at 5pm."}]
ANSWER = "notes.txt has two items: buy milk, and call Ana at 5pm."


def ts(text: str) -> int:
    return parse_timestamp_us(f"2026-09-01T10:15:{text}Z")


def event(phase: str, key: str, parent: str | None, at: str, name: str, category: str, profile: Any, data: Any,
          meta: dict[str, Any]) -> ScopeEvent:
    return ScopeEvent(SCOPE, phase, U[key], U[parent] if parent else None, ts(at), name, category, (), profile, data,
                      {**BASE, **meta}, U["session"], U["session"])


def llm_meta(request_id: str, count: int) -> dict[str, Any]:
    return {"hermes.task_id": SID, "hermes.turn_id": "turn-1", "hermes.api_request_id": request_id,
            "hermes.api_call_count": count, "hermes.provider": "openai", "hermes.api_mode": "chat_completions",
            "hermes.base_url": "https://api.openai.com/v1", "hermes.span_kind": "llm.call"}


def usage(inp: int, out: int, cached: int) -> dict[str, int]:
    return {"input_tokens": inp, "output_tokens": out, "cache_read_tokens": cached, "cache_write_tokens": 0,
            "reasoning_tokens": 0}


def example_events() -> list[ScopeEvent]:
    """The ten events of §6.1."""
    turn_meta = {"hermes.task_id": SID, "hermes.turn_id": "turn-1"}
    return [
        event(START, "session", None, "00.000000", "hermes.session", "agent", None,
              {"model": "gpt-4.1-mini", "platform": "cli"}, {"hermes.platform": "cli", "hermes.span_kind": "session"}),
        event(START, "turn", "session", "00.010000", "agent.run", "function", None,
              {"user_message": "Summarise notes.txt", "is_first_turn": True}, {**turn_meta, "hermes.span_kind": "agent.run"}),
        event(START, "llm1", "turn", "00.020000", "llm.call", "llm", {"model_name": "gpt-4.1-mini"},
              {"request": {"method": "POST", "body": {"model": "gpt-4.1-mini", "messages": HISTORY, "tools": TOOLS}}},
              llm_meta("req-01", 1)),
        event(END, "llm1", "turn", "01.250000", "llm.call", "llm", {"model_name": "gpt-4.1-mini-2025-04-14"},
              {"response": {"model": "gpt-4.1-mini-2025-04-14", "finish_reason": "tool_calls",
                            "assistant_message": {"role": "assistant", "content": "", "tool_calls": [CALL]}},
               "usage": usage(812, 24, 0), "finish_reason": "tool_calls"},
              {"hermes.api_request_id": "req-01", "hermes.duration_ms": 1230, "otel.status_code": "OK"}),
        event(START, "tool", "turn", "01.260000", "read_file", "tool", {"tool_call_id": "call_7Yx2"},
              {"arguments": {"path": "notes.txt"}},
              {**turn_meta, "hermes.api_request_id": "req-01", "hermes.toolset": "file",
               "hermes.span_kind": "tool.execute"}),
        event(END, "tool", "turn", "01.275000", "read_file", "tool", {"tool_call_id": "call_7Yx2"},
              {"result": "Buy milk. Call Ana at 5pm."},
              {"hermes.tool.status": "ok", "hermes.duration_ms": 15, "otel.status_code": "OK"}),
        event(START, "llm2", "turn", "01.290000", "llm.call", "llm", {"model_name": "gpt-4.1-mini"},
              {"request": {"method": "POST", "body": {"model": "gpt-4.1-mini", "messages": HISTORY2, "tools": TOOLS}}},
              llm_meta("req-02", 2)),
        event(END, "llm2", "turn", "02.410000", "llm.call", "llm", {"model_name": "gpt-4.1-mini-2025-04-14"},
              {"response": {"model": "gpt-4.1-mini-2025-04-14", "finish_reason": "stop",
                            "assistant_message": {"role": "assistant", "content": ANSWER}},
               "usage": usage(861, 19, 768), "finish_reason": "stop"},
              {"hermes.api_request_id": "req-02", "hermes.duration_ms": 1120, "otel.status_code": "OK"}),
        event(END, "turn", "session", "02.420000", "agent.run", "function", None,
              {"final_response": ANSWER, "completed": True, "interrupted": False},
              {**turn_meta, "otel.status_code": "OK"}),
        event(END, "session", None, "05.000000", "hermes.session", "agent", None, {"reason": "shutdown"},
              {"otel.status_code": "OK"}),
    ]


def build(kind: str, options: Options) -> list[ReadableSpan]:
    spans: list[ReadableSpan] = []
    endpoint = TraceEndpoint(index=0, type=kind, url="http://127.0.0.1:4318/v1/traces",
                             trace_grouping="session")  # §6 shows one trace per session (FMT-56)
    # as an SDK exporter receives them (the builder's span records, converted)
    # the example's ids are FMT-56's derived ones: ids = "uuid" (the default is random ids, FMT-56b / issue #30)
    builder = SpanBuilder([Route(endpoint, lambda s: spans.append(to_readable(s)) or True, "0.1.0")], options,
                          ids="uuid")
    builder.write(close_scopes(example_events()))  # ends as the tracker hands them: closed scopes
    assert builder.counts["failures"] == 0 and not builder.open
    return spans


TRACE = "01a05c7708a07c3a9d105e41a7c90001"
TRAJ_SESSION = "01a05c77-08a0-7c3a-9d10-5e41a7c90001"
TRAJ_TURN = "01a05c77-08aa-7c3a-9d10-5e41a7c90002"
EXPECTED_63: list[dict[str, Any]] = [  # §6.3, in end order
    {"name": "chat gpt-4.1-mini", "kind": "CLIENT", "span_id": "9d105e41a7c90003", "parent": "9d105e41a7c90002",
     "start": "00.020000", "end": "01.250000", "attributes": {
        "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4.1-mini",
        "server.address": "api.openai.com", "server.port": 443, "gen_ai.conversation.id": SID,
        "gen_ai.response.model": "gpt-4.1-mini-2025-04-14", "gen_ai.response.finish_reasons": ("tool_calls",),
        "gen_ai.usage.input_tokens": 812, "gen_ai.usage.output_tokens": 24, "hermes.span_kind": "llm.call",
        "hermes.api_request.id": "req-01", "hermes.llm.attempt": 1, "hermes.api_mode": "chat_completions",
        "hermes.llm.cache_hit": False, "hermes.turn.id": "turn-1", "hermes.trajectory_id": TRAJ_TURN,
        "hermes.input.preview": "system: You are Hermes, a helpful agent.\n\nuser: Summarise notes.txt",
        "hermes.input.chars": 67,
        "hermes.input.sha256": "b0815aa5a56c9427d023d313820e4b2ea2a8926770570fbdbf6cc259bd18ef6c",
        "hermes.output.preview": 'assistant: [tool_call read_file {"path":"notes.txt"}]', "hermes.output.chars": 53,
        "hermes.output.sha256": "3822a33f7da7eef10965cac47890cbb3cf4b055e0a09ed361193e33832bbc6dc"}},
    {"name": "execute_tool read_file", "kind": "INTERNAL", "span_id": "9d105e41a7c90004", "parent": "9d105e41a7c90002",
     "start": "01.260000", "end": "01.275000", "attributes": {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "read_file", "gen_ai.tool.call.id": "call_7Yx2",
        "gen_ai.tool.type": "function", "hermes.span_kind": "tool.execute", "hermes.tool.status": "ok",
        "hermes.toolset": "file", "hermes.tool.category": "file", "hermes.turn.id": "turn-1",
        "hermes.trajectory_id": TRAJ_TURN, "hermes.input.preview": '{"path":"notes.txt"}', "hermes.input.chars": 20,
        "hermes.input.sha256": "327e09780c8ca587a9edeb9d363553cc8b785fea45069b53e00cbf802c0ee078",
        "hermes.output.preview": "Buy milk. Call Ana at 5pm.", "hermes.output.chars": 26,
        "hermes.output.sha256": "c9c1cdb29225e3f2e9dba03b34ee045aa5598bf22ad65c30100fcc1bc42c9a84"}},
    {"name": "chat gpt-4.1-mini", "kind": "CLIENT", "span_id": "9d105e41a7c90005", "parent": "9d105e41a7c90002",
     "start": "01.290000", "end": "02.410000", "attributes": {
        "gen_ai.response.finish_reasons": ("stop",), "gen_ai.usage.input_tokens": 861,
        "gen_ai.usage.output_tokens": 19, "gen_ai.usage.cache_read.input_tokens": 768,
        "hermes.api_request.id": "req-02", "hermes.llm.attempt": 1, "hermes.llm.cache_hit": True,
        "hermes.input.chars": 180,
        "hermes.input.sha256": "ee112a002d24cf0a12a9ceabfc2a70c3c3ab0f18ade57b1596d7b7cbbdc66241",
        "hermes.output.preview": f"assistant: {ANSWER}", "hermes.output.chars": 66,
        "hermes.output.sha256": "fa6462e6222de0e32673265a022c4d36701b4346bba37d8012d1e38dd7941e42"}},
    {"name": "invoke_agent hermes", "kind": "INTERNAL", "span_id": "9d105e41a7c90002", "parent": "9d105e41a7c90001",
     "start": "00.010000", "end": "02.420000", "attributes": {
        "hermes.span_kind": "agent.run", "hermes.turn.id": "turn-1", "hermes.task.id": SID,
        "hermes.trajectory_id": TRAJ_TURN, "hermes.input.preview": "Summarise notes.txt", "hermes.input.chars": 19,
        "hermes.input.sha256": "8b443313fd27aa6e447846d368234d882d2ea9a112acec7e3d1cffea8cb12cd0",
        "hermes.output.preview": ANSWER, "hermes.output.chars": 55,
        "hermes.output.sha256": "781b1fe45d460588f380a78435dbc9b8a6ae4764a0ebeeba10dd97ef69d03d2d"}},
    {"name": "invoke_agent hermes", "kind": "INTERNAL", "span_id": "9d105e41a7c90001", "parent": None,
     "start": "00.000000", "end": "05.000000", "attributes": {
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "hermes", "gen_ai.agent.version": "0.11.0",
        "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4.1-mini", "gen_ai.conversation.id": SID,
        "hermes.platform": "cli", "hermes.span_kind": "session", "hermes.trajectory_id": TRAJ_SESSION}},
]
PREVIEWS = {"gen_ai.input.messages", "gen_ai.output.messages"}
EXTRA_63 = {  # §4.4 attributes the example's "logical span content" leaves out, by span id
    "3": {"hermes.task.id", *PREVIEWS}, "4": {"hermes.task.id", "hermes.api_request.id", "gen_ai.conversation.id",
                                             "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"},
    "2": {"hermes.turn.outcome", "hermes.sampling_rate", "gen_ai.conversation.id", "gen_ai.operation.name",
          "gen_ai.agent.name", "gen_ai.agent.id", "gen_ai.agent.version", "gen_ai.provider.name",
          "gen_ai.request.model", *PREVIEWS},
    "1": {"gen_ai.agent.id"}, "5": {"hermes.task.id", *PREVIEWS},
}  # gen_ai.conversation.id: on every span (issue 18), the example shows it on the chat and agent spans only;
# issue #30: the turn is an invoke_agent span, agents carry gen_ai.agent.id, and the scrubbed previews (gate
# closed) are also where backends read input and output (gen_ai.*.messages, gen_ai.tool.call.*)


def test_fmt_55_56_58_62_67_worked_example_6_3() -> None:
    """§6.3: names, kinds, trace / span / parent ids, times, UNSET status and attributes of the gen_ai example."""
    spans = build("gen_ai", Options(agent_version="0.11.0"))
    assert len(spans) == len(EXPECTED_63)
    for span, expected in zip(spans, EXPECTED_63, strict=True):
        assert span.name == expected["name"]
        assert span.kind == getattr(SpanKind, expected["kind"])
        assert f"{span.context.trace_id:032x}" == TRACE and span.context.trace_flags.sampled
        assert f"{span.context.span_id:016x}" == expected["span_id"]
        assert (f"{span.parent.span_id:016x}" if span.parent else None) == expected["parent"]
        assert span.parent is None or f"{span.parent.trace_id:032x}" == TRACE
        assert (span.start_time, span.end_time) == (ts(expected["start"]) * 1000, ts(expected["end"]) * 1000)
        assert span.status.status_code is StatusCode.UNSET
        attrs = dict(span.attributes or {})
        for key, value in expected["attributes"].items():
            assert attrs.get(key) == value, (span.name, key)
        extra = set(attrs) - set(expected["attributes"])
        if span.name != "chat gpt-4.1-mini" or expected["span_id"].endswith("3"):
            assert extra == EXTRA_63[expected["span_id"][-1]], (span.name, extra)
        for key in PREVIEWS & extra:  # the previews, nothing more
            [message] = json.loads(attrs[key])
            assert message["parts"] == [{"type": "text", "content": attrs[f"hermes.{key.split('.')[1]}.preview"]}]
        assert span.resource.attributes["service.name"] == "hermes-agent"
        assert span.instrumentation_scope is not None and span.instrumentation_scope.name == "hermes_pipeline"


FULL_64 = {"hermes_pipeline.uuid", "hermes_pipeline.parent_uuid", "hermes_pipeline.category",
           "hermes_pipeline.attributes", "hermes_pipeline.start.data.request",
           "hermes_pipeline.start.data.messages_offset", "hermes_pipeline.end.data.response",
           "hermes_pipeline.end.data.usage", "hermes_pipeline.end.metadata.otel.status_code",
           "hermes_pipeline.model_name", "hermes.span_kind", "hermes.trajectory_id", "hermes.turn.id",
           "hermes.api_request.id", "hermes.llm.attempt", "hermes.api_mode"}


def test_fmt_69_full_projection_key_names_6_4() -> None:
    """§6.4 / FMT-69: the first LLM span in ``full`` (gate open): name = ATOF name, CLIENT, hermes_pipeline.* keys."""
    spans = build("full", Options(gate_open=True))
    first = spans[0]
    assert (first.name, first.kind) == ("llm.call", SpanKind.CLIENT)
    attrs = dict(first.attributes or {})
    assert FULL_64 <= set(attrs)
    assert attrs["hermes_pipeline.category"] == "llm" and attrs["hermes_pipeline.attributes"] == "[]"
    assert attrs["hermes_pipeline.model_name"] == "gpt-4.1-mini-2025-04-14"
    assert attrs["hermes_pipeline.uuid"] == "01a05c77-08b4-7c3a-9d10-5e41a7c90003"
    assert attrs["hermes_pipeline.parent_uuid"] == TRAJ_TURN
    assert json.loads(attrs["hermes_pipeline.start.data.request"])["body"]["messages"] == HISTORY
    assert json.loads(attrs["hermes_pipeline.end.data.usage"])["input_tokens"] == 812
    assert attrs["hermes_pipeline.end.metadata.otel.status_code"] == "OK"
    assert not any(key.startswith("gen_ai.") for key in attrs)
    assert not any(key.startswith("hermes_pipeline.") and ".metadata.hermes." in key for key in attrs)
    tool = spans[1]
    assert (tool.name, tool.kind) == ("read_file", SpanKind.CLIENT)
    assert dict(tool.attributes or {})["hermes_pipeline.tool_call_id"] == "call_7Yx2"
    session = spans[-1]
    assert (session.name, session.kind) == ("hermes.session", SpanKind.INTERNAL)
    assert "hermes_pipeline.parent_uuid" not in (session.attributes or {})


def test_fmt_31_69_full_projection_gate_closed_omits_content_keys() -> None:
    """FMT-69: with the gate closed content keys are omitted and hermes.input.* / hermes.output.* added."""
    first = dict(build("full", Options())[0].attributes or {})
    assert "hermes_pipeline.start.data.request" not in first and "hermes_pipeline.end.data.response" not in first
    assert first["hermes.input.sha256"] == "b0815aa5a56c9427d023d313820e4b2ea2a8926770570fbdbf6cc259bd18ef6c"
    assert "hermes_pipeline.end.data.usage" in first


def test_fmt_70_openinference_projection_key_names_6_4() -> None:
    """§6.4 / FMT-70: the first LLM span in ``openinference`` (gate open)."""
    first = build("openinference", Options(gate_open=True))[0]
    assert (first.name, first.kind) == ("llm.call", SpanKind.CLIENT)
    a = dict(first.attributes or {})
    assert a["openinference.span.kind"] == "LLM" and a["session.id"] == SID
    assert a["input.value"] == "system: You are Hermes, a helpful agent.\n\nuser: Summarise notes.txt"
    assert a["input.mime_type"] == "text/plain"
    assert [(a[f"llm.input_messages.{i}.message.role"], a[f"llm.input_messages.{i}.message.content"])
            for i in (0, 1)] == [("system", HISTORY[0]["content"]), ("user", "Summarise notes.txt")]
    assert a["llm.output_messages.0.message.role"] == "assistant"
    prefix = "llm.output_messages.0.message.tool_calls.0.tool_call.function"
    assert (a[f"{prefix}.name"], json.loads(a[f"{prefix}.arguments"])) == ("read_file", {"path": "notes.txt"})
    assert (a["llm.provider"], a["llm.model_name"]) == ("openai", "gpt-4.1-mini-2025-04-14")
    assert (a["llm.token_count.prompt"], a["llm.token_count.completion"], a["llm.token_count.total"]) == (812, 24, 836)
    assert json.loads(a["metadata"])["otel.status_code"] == "OK"
    assert a["hermes_pipeline.uuid"].endswith("90003") and a["hermes_pipeline.parent_uuid"] == TRAJ_TURN
    kinds = {s.name: dict(s.attributes or {})["openinference.span.kind"] for s in build("openinference", Options())}
    assert kinds == {"llm.call": "LLM", "read_file": "TOOL", "agent.run": "CHAIN", "hermes.session": "AGENT"}


def test_fmt_70_openinference_gate_closed_keeps_names_drops_text() -> None:
    """FMT-70: gated keys (messages, arguments) are absent with the gate closed; names stay; the input / output
    values are the scrubbed previews only (issue #30)."""
    a = dict(build("openinference", Options())[0].attributes or {})
    assert not any(key.startswith("llm.input_messages") for key in a)
    assert (a["input.value"], a["output.value"]) == (a["hermes.input.preview"], a["hermes.output.preview"])
    prefix = "llm.output_messages.0.message.tool_calls.0.tool_call.function"
    assert a[f"{prefix}.name"] == "read_file" and f"{prefix}.arguments" not in a
    assert "llm.output_messages.0.message.role" not in a and "user.id" not in a


def test_fmt_56_all_zero_span_id_uses_sha256() -> None:
    """FMT-56: a UUID whose low 8 bytes are zero gets the low 8 bytes of SHA-256 of the UUID string."""
    uuid = U["session"] & ~((1 << 64) - 1)
    expected = int.from_bytes(hashlib.sha256(b"01a05c77-08a0-7c3a-0000-000000000000").digest()[-8:], "big")
    assert span_id(uuid) == expected != 0
    assert span_id(U["session"]) == 0x9D105E41A7C90001
