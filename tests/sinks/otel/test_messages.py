"""Messages as the conventions define them (issue 18 item 2): ``gen_ai.input.messages`` / ``gen_ai.output.messages``
validated against the OpenTelemetry GenAI message schemas (``tests/data/otel_genai``, see its README), and the
OpenInference message, tool and LLM attributes of the ``openinference`` projection — all behind the content gate."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from hermes_pipeline import Engine
from hermes_pipeline.demo.otlp_receiver import OTLPReceiver, ReceivedSpan
from hermes_pipeline.sinks.otel import messages

from tests.sinks.otel._support import (
    ANSWER, MISSING, QUESTION, STATUS_ERROR, TOOLS, finish, otel_plugin, run_scripted_session, run_two_turn_session,
)
from tests._repo import TEST_DATA

SCHEMAS = TEST_DATA / "otel_genai"
STATUS_OK = 1


def schema(name: str) -> Any:
    return json.loads((SCHEMAS / name).read_text(encoding="utf-8"))


INPUT = jsonschema.Draft202012Validator(schema("gen-ai-input-messages.json"))
OUTPUT = jsonschema.Draft202012Validator(schema("gen-ai-output-messages.json"))


def export(projection: str, session: Any = run_two_turn_session, **kwargs: Any) -> list[ReceivedSpan]:
    engine = Engine()
    with OTLPReceiver() as receiver:
        plugin = otel_plugin(engine, receiver.endpoint, projection=projection, **kwargs)
        session(engine)
        return sorted(finish(plugin, receiver), key=lambda s: s.start_ns)


def test_schemas_refuse_what_backends_drop() -> None:
    """The shipped schemas are strict per part type: a tool result named ``result`` (what this exporter wrote
    before, and what Phoenix drops) or an output message without finish_reason is refused."""
    assert not INPUT.is_valid([{"role": "tool", "parts": [{"type": "tool_call_response", "id": "c", "result": "x"}]}])
    assert INPUT.is_valid([{"role": "tool", "parts": [{"type": "tool_call_response", "id": "c", "response": "x"}]}])
    assert not OUTPUT.is_valid([{"role": "assistant", "parts": [{"type": "text", "content": "x"}]}])
    assert not INPUT.is_valid([{"role": "user", "parts": [{"type": "blob", "modality": "image"}]}])


@pytest.mark.parametrize("session", [run_two_turn_session, run_scripted_session], ids=["two_turns", "scripted"])
def test_fmt_64_every_exported_message_follows_the_genai_schemas(session: Any) -> None:
    """FMT-64: every gen_ai.input.messages and gen_ai.output.messages attribute of a session (LLM calls, turns,
    subagents) validates against the OpenTelemetry GenAI input / output message schemas."""
    spans = export("gen_ai", session=session, enable_full_payloads=True)
    inputs = [json.loads(s.attributes["gen_ai.input.messages"]) for s in spans if "gen_ai.input.messages" in s.attributes]
    outputs = [json.loads(s.attributes["gen_ai.output.messages"]) for s in spans
               if "gen_ai.output.messages" in s.attributes]
    assert len(inputs) >= 5 and len(outputs) >= 4
    for value in inputs:
        INPUT.validate(value)
    for value in outputs:
        OUTPUT.validate(value)


def test_fmt_64_tool_results_reach_the_next_llm_span_as_tool_call_responses() -> None:
    """FMT-64 (corrected 2026-12): the LLM call after the tools has their results in its input messages as
    ``tool_call_response`` parts with ``id`` and ``response``; the calls themselves as ``tool_call`` parts."""
    spans = export("gen_ai", enable_full_payloads=True)
    chats = [s for s in spans if s.name.startswith("chat ")]
    history = json.loads(chats[1].attributes["gen_ai.input.messages"])
    assert history[2] == {"role": "assistant", "parts": [
        {"type": "tool_call", "id": "call_ok", "name": "read_file", "arguments": {"path": "notes.txt"}},
        {"type": "tool_call", "id": "call_bad", "name": "read_file", "arguments": {"path": "missing.txt"}}]}
    assert history[3:] == [
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": "call_ok", "response": "Buy milk."}]},
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": "call_bad",
                                    "response": json.dumps({"error": f"FileNotFoundError: {MISSING}"})}]}]
    first_out = json.loads(chats[0].attributes["gen_ai.output.messages"])
    assert first_out[0]["finish_reason"] == "tool_call"


@pytest.mark.parametrize("message, expected", [
    ({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "tu1", "content": [{"type": "text",
                                                                                            "text": "42"}]}]},
     {"role": "user", "parts": [{"type": "tool_call_response", "id": "tu1", "response": "42"}]}),
    ({"type": "function_call_output", "call_id": "fc1", "output": "ok"},
     {"role": "tool", "parts": [{"type": "tool_call_response", "id": "fc1", "response": "ok"}]}),
    ({"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0"}}]},
     {"role": "user", "parts": [{"type": "blob", "modality": "image", "mime_type": "image/png", "content": "iVBORw0"}]}),
    ({"role": "user", "content": [{"type": "image_url", "image_url": {"url": "https://x.test/a.png"}}]},
     {"role": "user", "parts": [{"type": "uri", "modality": "image", "uri": "https://x.test/a.png"}]}),
])
def test_fmt_64_anthropic_responses_and_image_parts_follow_the_schema(message: dict[str, Any],
                                                                      expected: dict[str, Any]) -> None:
    """FMT-64: Anthropic tool_result blocks, Responses function_call_output items and images become the schema's
    parts (``response``; ``blob`` for base64 data URLs, ``uri`` otherwise) and validate."""
    converted = messages.chat_message(message)
    assert converted == expected
    INPUT.validate([converted])


# ---------------------------------------------------------------------------------------------- openinference


def oi_spans(gate: bool) -> list[ReceivedSpan]:
    return export("openinference", enable_full_payloads=gate)


@pytest.fixture(scope="module")
def oi_open() -> list[ReceivedSpan]:
    return oi_spans(True)


@pytest.fixture(scope="module")
def oi_closed() -> list[ReceivedSpan]:
    return oi_spans(False)


def llms(spans: list[ReceivedSpan]) -> list[ReceivedSpan]:
    return [s for s in spans if s.attributes["openinference.span.kind"] == "LLM"]


def test_fmt_70_openinference_llm_input_messages_carry_tool_calls_and_results(oi_open: list[ReceivedSpan]) -> None:
    """FMT-70 / OpenInference: the second LLM span's input messages have the assistant's tool calls
    (``message.tool_calls.N.tool_call.{id, function.name, function.arguments}``) and each tool message its
    ``message.tool_call_id`` and the result as ``message.content``."""
    a = llms(oi_open)[1].attributes
    prefix = "llm.input_messages"
    assert (a[f"{prefix}.1.message.role"], a[f"{prefix}.1.message.content"]) == ("user", QUESTION)
    calls = f"{prefix}.2.message.tool_calls"
    assert a[f"{prefix}.2.message.role"] == "assistant"
    assert [(a[f"{calls}.{j}.tool_call.id"], a[f"{calls}.{j}.tool_call.function.name"],
             json.loads(a[f"{calls}.{j}.tool_call.function.arguments"])) for j in (0, 1)] == [
        ("call_ok", "read_file", {"path": "notes.txt"}), ("call_bad", "read_file", {"path": "missing.txt"})]
    assert [(a[f"{prefix}.{i}.message.role"], a[f"{prefix}.{i}.message.tool_call_id"], a[f"{prefix}.{i}.message.content"])
            for i in (3, 4)] == [("tool", "call_ok", "Buy milk."),
                                 ("tool", "call_bad", json.dumps({"error": f"FileNotFoundError: {MISSING}"}))]
    assert (a["llm.output_messages.0.message.role"], a["llm.output_messages.0.message.content"]) == ("assistant", ANSWER)


def test_fmt_70_openinference_llm_span_attributes(oi_open: list[ReceivedSpan]) -> None:
    """FMT-70 / OpenInference LLM span: model names, llm.provider and llm.system, the tools offered as
    ``llm.tools.N.tool.json_schema``, invocation parameters without messages, the finish reason, token counts,
    output tool calls
    with their ids, input/output values with mime types, status OK."""
    first = llms(oi_open)[0]
    a = first.attributes
    assert (a["llm.model_name"], a["llm.request.model_name"], a["llm.response.model_name"]) == (
        "gpt-4o-mini-2024-07-18", "gpt-4o-mini", "gpt-4o-mini-2024-07-18")
    assert (a["llm.provider"], a["llm.system"]) == ("openai", "openai")
    assert json.loads(a["llm.tools.0.tool.json_schema"]) == TOOLS[0]
    assert (a["llm.token_count.prompt"], a["llm.token_count.completion"], a["llm.token_count.total"]) == (42, 7, 49)
    assert a["llm.finish_reason"] == "tool_calls"
    out = "llm.output_messages.0.message.tool_calls"
    assert [(a[f"{out}.{j}.tool_call.id"], a[f"{out}.{j}.tool_call.function.name"]) for j in (0, 1)] == [
        ("call_ok", "read_file"), ("call_bad", "read_file")]
    assert a["input.mime_type"] == a["output.mime_type"] == "text/plain" and QUESTION in a["input.value"]
    assert first.status_code == STATUS_OK


def test_fmt_70_openinference_tool_spans(oi_open: list[ReceivedSpan]) -> None:
    """FMT-70 / OpenInference TOOL span: tool.name, tool.id (the call id), tool.description and the parameter
    schema (tool.parameters / tool.json_schema, never the arguments), the arguments as input.value
    (application/json) and the result as output.value; success is OK, a failure ERROR."""
    tools = [s for s in oi_open if s.attributes["openinference.span.kind"] == "TOOL"]
    ok, bad = tools
    a = ok.attributes
    assert (a["tool.name"], a["tool.id"], a["tool.description"]) == ("read_file", "call_ok", "Read a file")
    assert json.loads(a["tool.parameters"]) == TOOLS[0]["function"]["parameters"]
    assert json.loads(a["tool.json_schema"]) == TOOLS[0]
    assert (json.loads(a["input.value"]), a["input.mime_type"]) == ({"path": "notes.txt"}, "application/json")
    assert (a["output.value"], a["output.mime_type"]) == ("Buy milk.", "text/plain")
    assert not any(k.startswith("tool_call.") for k in a)
    assert ok.status_code == STATUS_OK and bad.status_code == STATUS_ERROR and bad.attributes["tool.id"] == "call_bad"


def test_fmt_70_openinference_turn_is_an_agent_span_with_question_and_answer(oi_open: list[ReceivedSpan]) -> None:
    """FMT-56a / FMT-70: the turn roots its trace as an AGENT span whose input.value is the user's question and
    output.value the final answer (what Phoenix shows as a session's first input and last output)."""
    [turn, _] = [s for s in oi_open if not s.parent_span_id]
    a = turn.attributes
    assert (a["openinference.span.kind"], a["agent.name"]) == ("AGENT", "hermes")
    assert (a["input.value"], a["input.mime_type"], a["output.value"], a["output.mime_type"]) == (
        QUESTION, "text/plain", ANSWER, "text/plain")


def test_fmt_30_70_openinference_gate_closed_keeps_names_and_ids_only(oi_closed: list[ReceivedSpan]) -> None:
    """FMT-30 / FMT-70: with the content gate closed no message content, argument or result is exported; roles,
    tool descriptions and schemas are gated too; tool-call names and ids and tool names remain. Issue #30: the
    input / output values are the scrubbed previews (hermes.*.preview), nothing more, so backends' input and
    output columns show them."""
    shown = 0
    for span in oi_closed:
        keys = span.attributes
        assert not [k for k in keys if k.endswith((
            ".message.content", ".message.role", ".function.arguments", ".message.tool_call_id", ".json_schema",
            "tool.parameters", "tool.description"))]
        for side in ("input", "output"):
            preview = keys.get(f"hermes.{side}.preview")
            assert keys.get(f"{side}.value") == preview and keys.get(f"{side}.mime_type") == (preview and "text/plain")
            shown += preview is not None
    assert shown >= 8
    a = llms(oi_closed)[0].attributes
    assert a["llm.output_messages.0.message.tool_calls.1.tool_call.id"] == "call_bad"
    assert a["llm.output_messages.0.message.tool_calls.1.tool_call.function.name"] == "read_file"
    [tool, _] = [s for s in oi_closed if s.attributes["openinference.span.kind"] == "TOOL"]
    assert (tool.attributes["tool.name"], tool.attributes["tool.id"]) == ("read_file", "call_ok")
