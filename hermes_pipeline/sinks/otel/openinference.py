"""The ``openinference`` projection: Arize OpenInference attribute names (spec 04 §4.6, FMT-70).

:func:`openinference_span` maps a finished scope onto ``(name, kind, attributes)`` with the keys the
OpenInference semantic conventions define for each span kind, so that backends built on them
(Phoenix, Arize) render the conversation:

- LLM spans: ``llm.model_name`` (+ ``llm.request.model_name`` / ``llm.response.model_name``),
  ``llm.provider``, ``llm.system``, ``llm.invocation_parameters``, ``llm.tools.<i>.tool.json_schema``,
  ``llm.input_messages.<i>.message.{role, content, tool_call_id}`` and
  ``….message.tool_calls.<j>.tool_call.{id, function.name, function.arguments}`` (the same for
  ``llm.output_messages``), ``llm.finish_reason``, token counts with their cache / reasoning details,
  ``input.value`` / ``output.value`` with their mime types;
- tool spans: ``tool.name``, ``tool.id`` (the tool call's id), ``tool.description`` and
  ``tool.json_schema`` / ``tool.parameters`` (the parameter schema, from the tools the turn's model
  was offered), arguments as ``input.value`` and the result as ``output.value``;
- agent spans and, with traces grouped by turn, the turn itself: ``agent.name``, the question as
  ``input.value`` and the answer as ``output.value``.

Every content value (messages, arguments, results, tool-call arguments, the tools' descriptions and
schemas) is behind the content gate; names and ids of tools and tool calls are not content. With the gate
closed, ``input.value`` / ``output.value`` carry the scrubbed previews (the ``hermes.input.preview`` /
``hermes.output.preview`` text, ``text/plain``; nothing without a preview), so that the input and output
columns of Phoenix and MLflow are not empty by default (issue #30). Success is status ``OK``, as
OpenInference's own instrumentations set it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ...export.content import canonical_json, source_text
from ...export.events import ScopeEvent
from ...export.ids import uuid_str
from . import messages
from .attrs import put, status_error
from .full import hermes_extras, span_kind
from .record import SpanKind
from .state import OpenScope, Options

OPENINFERENCE_KINDS: Final = {"agent": "AGENT", "llm": "LLM", "tool": "TOOL", "retriever": "RETRIEVER",
                              "embedder": "EMBEDDING", "reranker": "RERANKER", "guardrail": "GUARDRAIL",
                              "evaluator": "EVALUATOR"}
_NOT_PARAMETERS: Final = frozenset({"messages", "input", "tools", "system", "instructions", "model", "tool_choice"})
PROVIDERS: Final = {"openai": "openai", "anthropic": "anthropic", "gemini": "google", "google": "google",
                    "vertex": "google", "vertex_ai": "google", "bedrock": "aws", "azure": "azure",
                    "azure-openai": "azure", "mistral": "mistralai", "xai": "xai", "deepseek": "deepseek",
                    "groq": "groq", "cohere": "cohere", "perplexity": "perplexity"}
"""Hermes provider (lowercased) → OpenInference ``llm.provider`` value; anything else passes through."""
SYSTEMS: Final = {"openai": "openai", "azure": "openai", "azure-openai": "openai", "anthropic": "anthropic",
                  "cohere": "cohere", "mistral": "mistralai", "gemini": "vertexai", "google": "vertexai",
                  "vertex": "vertexai", "vertex_ai": "vertexai"}
"""Hermes provider → OpenInference ``llm.system`` (the AI product); anything else passes through."""


def _provider(value: Any, table: Mapping[str, str]) -> str:
    if not isinstance(value, str) or not value.strip():
        return "unknown"
    return table.get(value.strip().lower(), value.strip())


def _text(value: Any) -> str:
    return value if isinstance(value, str) else canonical_json(value)


def _messages(attrs: dict[str, Any], prefix: str, history: list[dict[str, Any]], gate_open: bool) -> None:
    """``<prefix>.<i>.message.*`` of ``{role, parts}`` messages; without the gate only tool-call names and ids."""
    for i, message in enumerate(history):
        key = f"{prefix}.{i}.message"
        if gate_open:
            attrs[f"{key}.role"] = message["role"]
            text = messages.message_text(message)
            responses = [p for p in message.get("parts", ()) if p.get("type") == "tool_call_response"]
            if responses:
                call_id = responses[0].get("id")
                put(attrs, f"{key}.tool_call_id", call_id if isinstance(call_id, str) else None)
                text = "\n".join([text] * bool(text) + [_text(p.get("response")) for p in responses])
            if text:
                attrs[f"{key}.content"] = text
        calls = [p for p in message.get("parts", ()) if p.get("type") == "tool_call"]
        for j, call in enumerate(calls):
            call_key = f"{key}.tool_calls.{j}.tool_call"
            put(attrs, f"{call_key}.id", call.get("id") if isinstance(call.get("id"), str) else None)
            put(attrs, f"{call_key}.function.name", call.get("name"))
            if gate_open:
                attrs[f"{call_key}.function.arguments"] = _text(call.get("arguments"))


def _tool_schemas(request: Any) -> list[dict[str, Any]]:
    """The tools offered to the model, in the OpenAI tool-calling format (``llm.tools.<i>.tool.json_schema``)."""
    out = []
    for tool in messages.tool_definitions(request) or ():
        function: dict[str, Any] = {"name": tool.get("name")}
        if tool.get("description") is not None:
            function["description"] = tool["description"]
        if tool.get("parameters") is not None:
            function["parameters"] = tool["parameters"]
        out.append({"type": "function", "function": function})
    return out


def _usage(attrs: dict[str, Any], usage: Any) -> None:
    if not isinstance(usage, Mapping):
        return
    prompt, completion = usage.get("input_tokens"), usage.get("output_tokens")
    put(attrs, "llm.token_count.prompt", prompt)
    put(attrs, "llm.token_count.completion", completion)
    if isinstance(prompt, int) and isinstance(completion, int):
        attrs["llm.token_count.total"] = prompt + completion
    for key, name in (("cache_read_tokens", "llm.token_count.prompt_details.cache_read"),
                      ("cache_write_tokens", "llm.token_count.prompt_details.cache_write"),
                      ("reasoning_tokens", "llm.token_count.completion_details.reasoning")):
        value = usage.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            attrs[name] = value


def _llm(attrs: dict[str, Any], scope: OpenScope, end: ScopeEvent, opt: Options) -> None:
    start = scope.start
    request = (start.data or {}).get("request")
    api_mode = start.metadata.get("hermes.api_mode")
    body = request.get("body") if isinstance(request, Mapping) else None
    data = end.data or {}
    response = data.get("response")
    profile = {**(start.profile or {}), **(end.profile or {})}
    requested = (start.profile or {}).get("model_name") or (body.get("model") if isinstance(body, Mapping) else None)
    answered = response.get("model") if isinstance(response, Mapping) else None
    put(attrs, "llm.model_name", answered or profile.get("model_name") or requested)
    put(attrs, "llm.request.model_name", requested)
    put(attrs, "llm.response.model_name", answered)
    provider = start.metadata.get("hermes.provider")
    attrs["llm.provider"] = _provider(provider, PROVIDERS)
    attrs["llm.system"] = _provider(provider, SYSTEMS)
    if isinstance(body, Mapping):
        params = {k: v for k, v in body.items() if k not in _NOT_PARAMETERS}
        if params:
            attrs["llm.invocation_parameters"] = canonical_json(params)
    if opt.gate_open:  # tool definitions are opt-in content, as gen_ai.tool.definitions is
        for i, schema in enumerate(_tool_schemas(request)):
            attrs[f"llm.tools.{i}.tool.json_schema"] = canonical_json(schema)
    _messages(attrs, "llm.input_messages", messages.input_messages(request, api_mode) or [], opt.gate_open)
    _messages(attrs, "llm.output_messages", messages.output_messages(response, data.get("finish_reason")) or [],
              opt.gate_open)
    if opt.gate_open:
        if request is not None:
            attrs["input.value"] = source_text("request", request, api_mode if isinstance(api_mode, str) else None)
            attrs["input.mime_type"] = "text/plain"
        if isinstance(response, Mapping):
            attrs["output.value"] = source_text("response", response)
            attrs["output.mime_type"] = "text/plain"
    finish = data.get("finish_reason")
    if isinstance(finish, str) and finish:
        attrs["llm.finish_reason"] = finish
    _usage(attrs, data.get("usage"))


def _offered_tool(scope: OpenScope, name: str) -> dict[str, Any] | None:
    """The definition of tool ``name`` offered to the model of the turn around ``scope`` (latest call first)."""
    owner = scope.parent
    while owner is not None and owner.offered is None:
        owner = owner.parent
    return owner.offered.get(name) if owner is not None and owner.offered is not None else None


def _tool(attrs: dict[str, Any], scope: OpenScope, end: ScopeEvent, opt: Options) -> None:
    start = scope.start
    attrs["tool.name"] = start.name
    put(attrs, "tool.id", {**(start.profile or {}), **(end.profile or {})}.get("tool_call_id"))
    offered = _offered_tool(scope, start.name) if opt.gate_open else None
    if offered is not None:
        put(attrs, "tool.description", offered.get("description"))
        if offered.get("parameters") is not None:
            schema = canonical_json(offered["parameters"])
            attrs["tool.parameters"] = schema  # the conventions' key for the parameter schema, not the arguments
            attrs["tool.json_schema"] = canonical_json({"type": "function", "function": {
                k: offered[k] for k in ("name", "description", "parameters") if offered.get(k) is not None}})
    if not opt.gate_open:
        return
    args = (start.data or {}).get("arguments")
    if args is not None:
        attrs["input.value"], attrs["input.mime_type"] = _text(args), "application/json"
    result = (end.data or {}).get("result")
    if result is not None:
        attrs["output.value"] = _text(result)
        attrs["output.mime_type"] = "text/plain" if isinstance(result, str) else "application/json"


def _exchange(attrs: dict[str, Any], question: Any, answer: Any) -> None:
    """An agent's or turn's input and output as plain text (what a sessions view shows first and last)."""
    if question is not None:
        attrs["input.value"], attrs["input.mime_type"] = _text(question), "text/plain"
    if answer is not None:
        attrs["output.value"], attrs["output.mime_type"] = _text(answer), "text/plain"


def openinference_span(scope: OpenScope, end: ScopeEvent, agent_name: str, opt: Options, *,
                       turn_grouping: bool = False) -> tuple[str, SpanKind, dict[str, Any]]:
    """``(name, kind, attributes)`` of a finished scope in the ``openinference`` projection (FMT-70).

    With ``turn_grouping`` (one trace per turn) a turn is an ``AGENT`` span, the root of its trace.
    """
    start = scope.start
    category = start.category
    turn = turn_grouping and start.name == "agent.run"
    kind = "AGENT" if turn else OPENINFERENCE_KINDS.get(category or "", "CHAIN")
    attrs: dict[str, Any] = {"openinference.span.kind": kind}
    put(attrs, "session.id", scope.root_session)
    if opt.gate_open:
        put(attrs, "user.id", scope.user_id)
    data, end_data = start.data or {}, end.data or {}
    if category == "agent" or turn:
        agent = scope.agent
        role = (agent.start.data or {}).get("child_role") if agent is not None else None
        attrs["agent.name"] = role if isinstance(role, str) and role.strip() else agent_name
    if category == "llm":
        _llm(attrs, scope, end, opt)
    elif category == "tool":
        _tool(attrs, scope, end, opt)
    elif opt.gate_open:
        if start.name == "agent.run":
            _exchange(attrs, data.get("user_message"), end_data.get("final_response"))
        elif category == "agent" and ("child_goal" in data or "child_summary" in end_data):
            _exchange(attrs, data.get("child_goal"), end_data.get("child_summary"))
        else:
            if data:
                attrs["input.value"], attrs["input.mime_type"] = canonical_json(data), "application/json"
            if end_data:
                attrs["output.value"], attrs["output.mime_type"] = canonical_json(end_data), "application/json"
    attrs["metadata"] = canonical_json({k: v for k, v in end.metadata.items()
                                        if opt.gate_open or k != "hermes.sender_id"})
    attrs["hermes_pipeline.uuid"] = uuid_str(start.uuid)
    if start.parent_uuid is not None:
        attrs["hermes_pipeline.parent_uuid"] = uuid_str(start.parent_uuid)
    error = status_error(end.metadata)
    if error is not None:
        attrs["error.type"] = error
    hermes_extras(attrs, scope, end, opt)
    if not opt.gate_open:
        for side in ("input", "output"):
            preview = attrs.get(f"hermes.{side}.preview")
            if isinstance(preview, str):
                attrs[f"{side}.value"], attrs[f"{side}.mime_type"] = preview, "text/plain"
    return start.name, SpanKind.INTERNAL if turn else span_kind(category), attrs
