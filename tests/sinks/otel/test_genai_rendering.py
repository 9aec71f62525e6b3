"""How the ``gen_ai`` projection renders for backends (issue 30 item 5), checked on the decoded OTLP spans: GenAI
attributes only, an operation on every span (skill runs and host work included), one span per subagent run, the
current convention names (cache_write, agent.id, tool.description) and the trace resource's SDK attributes.
The same session read back by a real MLflow is ``test_mlflow.py``."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_pipeline import Engine, Host
from hermes_pipeline.demo.otlp_receiver import OTLPReceiver, ReceivedSpan
from hermes_pipeline.export.events import END, SCOPE, START, ScopeEvent
from hermes_pipeline.export.ids import new_uuid7
from hermes_pipeline.sinks.otel import build_otel_plugin, messages
from hermes_pipeline.sinks.otel.config import TraceEndpoint
from hermes_pipeline.sinks.otel.record import SpanRecord
from hermes_pipeline.sinks.otel.spans import Route, SpanBuilder
from hermes_pipeline.sinks.otel.state import Options

from hermes_pipeline.testing import chat_response
from tests.export._closed_support import close_scopes
from ._agent_session import CHILD_GOAL, SKILL, TOOLS, run_agent_session

OPENINFERENCE_PREFIXES = ("input.", "output.", "llm.", "openinference.", "tool.", "tool_call.", "metadata")
OPERATIONS = ("invoke_agent", "chat", "text_completion", "generate_content", "execute_tool", "embeddings",
              "retrieval", "invoke_workflow")


def _export(session: Any, *, projection: str = "gen_ai", endpoint_keys: dict[str, Any] | None = None,
            **kwargs: Any) -> list[ReceivedSpan]:
    """Run ``session(engine)`` through an OTel plugin exporting to a loopback receiver; the decoded spans."""
    engine = Engine()
    with OTLPReceiver() as receiver:
        entry = {"type": projection, "endpoint": receiver.endpoint, "scheduled_delay_millis": 50,
                 **(endpoint_keys or {})}
        plugin = build_otel_plugin({"enabled": True, "endpoints": [entry]}, **kwargs)
        engine.add_plugin(plugin, name="otel")
        session(engine)
        assert plugin.flush(15.0) and plugin.shutdown(15.0)
        return list(receiver.spans)


def _agent_spans(**kwargs: Any) -> list[ReceivedSpan]:
    return _export(lambda engine: run_agent_session(engine, "sess-r"), **kwargs)


def test_gen_ai_spans_carry_genai_names_only_and_every_span_an_operation() -> None:
    """Issue 30 item 5 / FMT-62: no OpenInference key in the gen_ai projection, gate open or closed; every span has
    a gen_ai.operation.name of the conventions (so MLflow and Phoenix give it a span type)."""
    for gate in (False, True):
        spans = _agent_spans(enable_full_payloads=gate)
        for span in spans:
            assert not [k for k in span.attributes if k.startswith(OPENINFERENCE_PREFIXES)], (gate, span.name)
            assert span.attributes["gen_ai.operation.name"] in OPERATIONS, span.name


def test_skill_run_is_execute_tool_of_the_skill() -> None:
    """Issue 30 item 5 (docs/backends.md): a skill run is an execute_tool span named for the skill, tool type
    extension, with the skill's hermes.* attributes, under its turn."""
    spans = _agent_spans()
    [skill] = [s for s in spans if s.attributes["hermes.span_kind"] == "skill.run"]
    a = skill.attributes
    assert skill.name == f"execute_tool {SKILL}"
    assert (a["gen_ai.operation.name"], a["gen_ai.tool.name"], a["gen_ai.tool.type"]) == (
        "execute_tool", SKILL, "extension")
    assert (a["hermes.skill.name"], a["hermes.skill.provenance"], a["hermes.skill.outcome"]) == (
        SKILL, "local", "success")
    [turn] = [s for s in spans if s.span_id == skill.parent_span_id]
    assert turn.attributes["hermes.span_kind"] == "agent.run"


def _subagent_session(engine: Engine) -> None:
    host = Host(engine, platform="cli", model="m", provider="openai", api_mode="chat_completions")
    with host.session("sess-s") as session:
        with session.turn("delegate please") as turn:
            def delegate(goal: str) -> str:
                with turn.subagent(role="reviewer", goal=goal, child_session_id="sess-s-child") as sub:
                    with sub.session.turn(goal) as child:
                        with child.human_input("clarify", "Which notes?") as wait:
                            wait.resolve("provided")
                        child.call_tool("read_file", {"path": "a"}, lambda path: "A", tool_call_id="c1")
                        child.call_llm({"model": "m", "messages": [{"role": "user", "content": goal}]},
                                       lambda request: chat_response("checked"))
                        child.complete("checked")
                    sub.finish("completed", summary="checked")
                return "checked"

            turn.call_tool("delegate_task", {"goal": CHILD_GOAL}, delegate, tool_call_id="call_sub")
            turn.complete("done")


def test_one_invoke_agent_span_per_subagent_run_with_its_turns_marks() -> None:
    """Issue 30 item 5: a subagent run is one invoke_agent span (its own turn folded into it): its tool and model
    calls hang directly under it, the human-input wait of its turn is an event of it, and no second invoke_agent
    span of the subagent exists; with trace_grouping = "session" too."""
    for grouping in ("turn", "session"):
        spans = _export(_subagent_session, endpoint_keys={"trace_grouping": grouping})
        child = [s for s in spans if s.attributes.get("gen_ai.conversation.id") == "sess-s-child"]
        [agent] = [s for s in child if s.name.startswith("invoke_agent")]
        assert agent.name == "invoke_agent reviewer" and agent.attributes["hermes.scope_role"] == "subagent"
        assert sorted(s.name for s in child if s is not agent) == ["chat m", "execute_tool read_file"]
        assert all(s.parent_span_id == agent.span_id for s in child if s is not agent)
        assert [name for name, _ in agent.events] == ["hermes.human_input.request", "hermes.human_input.resolved"]
        [delegating] = [s for s in spans if s.span_id == agent.parent_span_id]
        assert delegating.name == "execute_tool delegate_task"


def test_the_other_projections_keep_the_subagents_turn() -> None:
    """The folding is the gen_ai projection's: openinference keeps the subagent's turn as a span of its own."""
    spans = _export(_subagent_session, projection="openinference")
    turns = [s for s in spans if s.attributes.get("hermes.span_kind") == "agent.run"]
    assert len(turns) == 2


def test_agent_id_one_per_agent_instance() -> None:
    """gen_ai.agent.id: every turn of a session names the session's agent (one id), a subagent run its own."""
    spans = _agent_spans()
    turns = [s for s in spans if s.attributes["hermes.span_kind"] == "agent.run"]
    [child] = [s for s in spans if s.attributes.get("hermes.scope_role") == "subagent"]
    assert len(turns) == 2 and len({t.attributes["gen_ai.agent.id"] for t in turns}) == 1
    assert child.attributes["gen_ai.agent.id"] not in {t.attributes["gen_ai.agent.id"] for t in turns}
    assert len(child.attributes["gen_ai.agent.id"]) == 36  # a UUID, the agent scope's (ATOF / ATIF join key)


def test_cache_write_tokens_use_the_current_name() -> None:
    """Conventions: cache-creation input tokens are gen_ai.usage.cache_write.input_tokens (the old
    cache_creation name is never written)."""
    def session(engine: Engine) -> None:
        host = Host(engine, platform="cli", model="claude", provider="anthropic", api_mode="anthropic_messages")
        response = chat_response("ok", model="claude")
        response["usage"] = {"input_tokens": 10, "output_tokens": 3, "cache_read_input_tokens": 4,
                             "cache_creation_input_tokens": 6}
        with host.session("sess-c") as s, s.turn("hi") as turn:
            turn.call_llm({"model": "claude", "messages": [{"role": "user", "content": "hi"}]}, lambda r: response)
            turn.complete("ok")

    [call] = [s for s in _export(session) if s.name.startswith("chat ")]
    a = call.attributes
    assert (a["gen_ai.usage.cache_write.input_tokens"], a["gen_ai.usage.cache_read.input_tokens"]) == (6, 4)
    assert not [k for k in a if "cache_creation" in k]


def test_tool_description_from_the_offered_definitions_only_with_the_gate_open() -> None:
    """gen_ai.tool.description comes from the tool definitions offered to the model, which are opt-in content:
    present with the gate open, absent with it closed (docs/privacy.md)."""
    described = {s.attributes.get("gen_ai.tool.description") for s in _agent_spans(enable_full_payloads=True)
                 if s.name == "execute_tool read_file"}
    assert described == {TOOLS[0]["function"]["description"]}
    closed = [s for s in _agent_spans() if s.name == "execute_tool read_file"]
    assert closed and not [s for s in closed if "gen_ai.tool.description" in s.attributes]


def test_trace_resource_names_the_sdk_and_endpoint_attributes_may_override() -> None:
    """Issue 30: telemetry.sdk.name / language / version on every trace resource; an endpoint's
    resource_attributes override them as the SDK's Resource.create lets user attributes win."""
    spans = _agent_spans()
    assert {(s.resource["telemetry.sdk.name"], s.resource["telemetry.sdk.language"]) for s in spans} == {
        ("hermes_pipeline", "python")}
    spans = _agent_spans(endpoint_keys={"resource_attributes": {"telemetry.sdk.name": "custom"}})
    assert {s.resource["telemetry.sdk.name"] for s in spans} == {"custom"}


def test_host_work_without_a_convention_is_invoke_workflow() -> None:
    """A gateway dispatch (trigger.process) has no GenAI operation of its own: it is invoke_workflow (docs)."""
    uuid, ts = new_uuid7(1_780_000_000_000), 1_780_000_000_000_000
    meta = {"hermes.telemetry_schema_version": "hermes.observer.v1", "hermes.session_id": "s",
            "hermes.span_kind": "trigger.process"}
    events = [ScopeEvent(SCOPE, START, uuid, None, ts, "trigger.process", "function", (), None,
                         {"platform": "telegram", "event_type": "message"}, meta, uuid, uuid),
              ScopeEvent(SCOPE, END, uuid, None, ts + 10, "trigger.process", "function", (), None, {"action": "skip"},
                         {**meta, "otel.status_code": "OK"}, uuid, uuid)]
    spans: list[SpanRecord] = []
    endpoint = TraceEndpoint(index=0, type="gen_ai", url="http://127.0.0.1:1/v1/traces")
    builder = SpanBuilder([Route(endpoint, lambda span: spans.append(span) or True, "0")], Options())
    builder.write(close_scopes(events))  # ends as the tracker hands them: closed scopes
    [span] = spans
    assert (span.name, span.attributes["gen_ai.operation.name"]) == ("invoke_workflow trigger.process",
                                                                      "invoke_workflow")


TEXT = st.text(max_size=20)
CALL = st.fixed_dictionaries({"id": st.text(min_size=1, max_size=8), "type": st.just("function"),
                              "function": st.fixed_dictionaries({"name": st.text(min_size=1, max_size=10),
                                                                 "arguments": st.one_of(TEXT, st.just('{"a":1}'))})})
MESSAGE = st.one_of(
    st.fixed_dictionaries({"role": st.sampled_from(["system", "user", "assistant"]),
                           "content": st.one_of(st.none(), TEXT, st.lists(st.fixed_dictionaries(
                               {"type": st.just("text"), "text": TEXT}), max_size=3))}),
    st.fixed_dictionaries({"role": st.just("assistant"), "content": st.one_of(st.none(), TEXT),
                           "tool_calls": st.lists(CALL, max_size=3)}),
    st.fixed_dictionaries({"role": st.just("tool"), "tool_call_id": st.text(max_size=8),
                           "content": st.one_of(TEXT, st.lists(st.fixed_dictionaries(
                               {"type": st.just("text"), "text": TEXT}), max_size=2))}),
)


@settings(max_examples=300, deadline=None)
@given(history=st.lists(MESSAGE, min_size=1, max_size=6))
def test_fmt_64_every_text_and_tool_message_renders_as_chat(history: list[dict[str, Any]]) -> None:
    """FMT-64 / issue 30: any chat-completions history of text, tool calls and tool results becomes GenAI messages
    that MLflow's chat view accepts: each has a role and at least one part (an empty message keeps one empty text
    part), every part is text, tool_call (with a name) or tool_call_response (with a response), in order."""
    request = {"body": {"messages": history}}
    out = messages.input_messages(request, "chat_completions")
    assert out is not None and len(out) == len(history)
    for message, source in zip(out, history, strict=True):
        assert isinstance(message["role"], str) and message["parts"], message
        for part in message["parts"]:
            assert part["type"] in ("text", "tool_call", "tool_call_response"), part
            if part["type"] == "text":
                assert isinstance(part["content"], str)
            elif part["type"] == "tool_call":
                assert isinstance(part["name"], str)
            else:
                assert "response" in part
        calls = [p for p in message["parts"] if p["type"] == "tool_call"]
        assert [c["id"] for c in calls] == [c["id"] for c in source.get("tool_calls") or ()]
    json.dumps(out)  # serialisable as the attribute's JSON string
