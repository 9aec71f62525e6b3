"""The ``gen_ai`` projection: span names, kinds and attributes per OpenTelemetry GenAI conventions (spec 04 §4.2).

:func:`genai_span` maps one finished scope (its :class:`~hermes_pipeline.sinks.otel.state.OpenScope`
and end event) onto ``(name, kind, attributes)``. Only the latest experimental GenAI names are
used (FMT-62: ``gen_ai.provider.name``, never ``gen_ai.system``), never ``hermes_pipeline.*`` keys;
``hermes.*`` extension attributes follow §4.4. Content goes out verbatim only with the gate open
(FMT-30, FMT-64); with it closed the input-side and output-side fields become
``hermes.input.*`` / ``hermes.output.*`` summaries (FMT-31) and other content is omitted.

Only GenAI convention names (and ``hermes.*``) are written here, never OpenInference ones
(``input.value``, ``output.value``, ``*.mime_type``; issue #30): a backend that reads both (MLflow reads
``input.value`` first) would otherwise show flat text instead of the structured messages. What backends
show as a span's input and output is therefore always the GenAI attribute: ``gen_ai.input.messages`` /
``gen_ai.output.messages`` on agent and LLM spans, ``gen_ai.tool.call.arguments`` / ``.result`` on tool
spans. With the gate closed those carry the scrubbed previews (the same text as ``hermes.*.preview``,
nothing more), so input and output columns are not empty by default.

Every span has a ``gen_ai.operation.name`` a backend maps onto a span type: a skill run (``skill.run``)
is ``execute_tool`` (the model loads a skill through a tool call and the skill runs as the agent's tool,
so MLflow and Phoenix show a TOOL span named for the skill); host work that no operation of the
conventions covers (a gateway dispatch, ``trigger.process``) is ``invoke_workflow``, the conventions' name
for a predefined, non-agentic sequence of steps (backends without a mapping for it show a generic span).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import urlsplit

from ...export.content import canonical_json, source_text
from ...export.events import ScopeEvent
from ...export.ids import uuid_str
from ...export.scope_kinds.skill import SKILL_SCOPE
from . import messages
from .attrs import (SUMMARY_NAMES, hermes_meta, provider_name, put, status_error, summarize, summarize_data,
                    summarize_text, tool_category)
from .record import SpanKind
from .state import OpenScope, Options

_REQUEST_PARAMS: Final = (
    ("max_tokens", "gen_ai.request.max_tokens"), ("max_completion_tokens", "gen_ai.request.max_tokens"),
    ("max_output_tokens", "gen_ai.request.max_tokens"), ("temperature", "gen_ai.request.temperature"),
    ("top_p", "gen_ai.request.top_p"), ("top_k", "gen_ai.request.top_k"),
    ("frequency_penalty", "gen_ai.request.frequency_penalty"),
    ("presence_penalty", "gen_ai.request.presence_penalty"), ("seed", "gen_ai.request.seed"),
    ("stream", "gen_ai.request.stream"),
)
_USAGE: Final = (
    ("input_tokens", "gen_ai.usage.input_tokens", True), ("output_tokens", "gen_ai.usage.output_tokens", True),
    ("cache_read_tokens", "gen_ai.usage.cache_read.input_tokens", False),
    ("cache_write_tokens", "gen_ai.usage.cache_write.input_tokens", False),  # formerly cache_creation
    ("reasoning_tokens", "gen_ai.usage.reasoning.output_tokens", False),
)
_TEXT_COMPLETION_MODES: Final = frozenset({"completions", "text_completion", "text_completions", "legacy_completions"})
_OUTPUT_TYPES: Final = {"text": "text", "json_object": "json", "json_schema": "json", "json": "json",
                        "image": "image", "speech": "speech", "audio": "speech"}


def operation_name(api_mode: Any) -> str:
    """``gen_ai.operation.name`` of an ``llm.call`` from ``hermes.api_mode`` (§4.2 table)."""
    mode = api_mode.lower() if isinstance(api_mode, str) else ""
    if "gemini" in mode or "generate_content" in mode:
        return "generate_content"
    if mode in _TEXT_COMPLETION_MODES:
        return "text_completion"
    return "chat"


def server_attrs(attrs: dict[str, Any], base_url: Any) -> None:
    """``server.address`` / ``server.port`` (port made explicit) from ``hermes.base_url``."""
    if not isinstance(base_url, str) or not base_url:
        return
    try:
        parts = urlsplit(base_url)
        host = parts.hostname
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    except ValueError:
        return
    if host:
        attrs["server.address"] = host
        if port is not None:
            attrs["server.port"] = port


def _merged_meta(scope: OpenScope, end: ScopeEvent) -> dict[str, Any]:
    return {**scope.start.metadata, **end.metadata}


def _common(attrs: dict[str, Any], scope: OpenScope, end: ScopeEvent) -> None:
    if "gen_ai.conversation.id" not in attrs:  # every span says which conversation it belongs to
        own = end.metadata.get("hermes.session_id") or scope.start.metadata.get("hermes.session_id") \
            or scope.root_session
        if type(own) is str:  # what put() keeps as it is, inlined
            attrs["gen_ai.conversation.id"] = own
        else:
            put(attrs, "gen_ai.conversation.id", own)
    hermes_meta(attrs, scope.start.metadata, end.metadata)
    attrs["hermes.trajectory_id"] = scope.trajectory_id
    error = status_error(end.metadata)
    if error is not None:
        attrs["error.type"] = error


def _text_message(role: str, text: str, finish_reason: str | None = None) -> str:
    message: dict[str, Any] = {"role": role, "parts": [{"type": "text", "content": text}]}
    if finish_reason is not None:
        message["finish_reason"] = finish_reason
    return canonical_json([message])


def _preview_messages(attrs: dict[str, Any], finish_reason: str | None = None) -> None:
    """Gate closed: ``gen_ai.input.messages`` / ``gen_ai.output.messages`` carrying the scrubbed previews
    already in ``hermes.input.preview`` / ``hermes.output.preview`` (one text message each), where backends
    read a span's input and output. Nothing when the summary mode has no preview."""
    preview = attrs.get("hermes.input.preview")
    if isinstance(preview, str):
        attrs["gen_ai.input.messages"] = _text_message("user", preview)
    preview = attrs.get("hermes.output.preview")
    if isinstance(preview, str):
        attrs["gen_ai.output.messages"] = _text_message("assistant", preview, finish_reason or "stop")


def _agent_id(scope: OpenScope) -> str | None:
    """``gen_ai.agent.id``: the agent scope's UUID (the session-level trajectory id of ATOF / ATIF), one per
    agent instance: the session's agent for every turn of it, a new one per subagent run."""
    agent = scope.agent
    return uuid_str(agent.start.uuid) if agent is not None else None


def _agent(scope: OpenScope, end: ScopeEvent, agent_name: str, opt: Options) -> tuple[str, dict[str, Any]]:
    start = scope.start
    data = start.data or {}
    end_data = end.data or {}
    meta = start.metadata
    subagent = meta.get("hermes.scope_role") == "subagent"
    role = data.get("child_role")
    name = role if subagent and isinstance(role, str) and role.strip() else agent_name
    attrs: dict[str, Any] = {"gen_ai.operation.name": "invoke_agent"}
    if scope.provider is not None:
        attrs["gen_ai.provider.name"] = provider_name(scope.provider)
    attrs["gen_ai.agent.name"] = name
    put(attrs, "gen_ai.agent.id", _agent_id(scope))
    host_version = meta.get("hermes.agent.version")  # the host agent's declared version
    if opt.agent_version:
        attrs["gen_ai.agent.version"] = opt.agent_version
    elif isinstance(host_version, str) and host_version:
        attrs["gen_ai.agent.version"] = host_version
    put(attrs, "gen_ai.conversation.id", meta.get("hermes.session_id"))
    model = data.get("model") if isinstance(data.get("model"), str) and data.get("model") else scope.model
    put(attrs, "gen_ai.request.model", model)
    _common(attrs, scope, end)
    if subagent:
        put(attrs, "hermes.subagent.role", role)
        put(attrs, "hermes.subagent.status", end_data.get("child_status"))
        goal, result = data.get("child_goal"), end_data.get("child_summary")
        if opt.gate_open:
            if goal is not None:
                attrs["gen_ai.input.messages"] = canonical_json(
                    [{"role": "user", "parts": [{"type": "text", "content": goal}]}])
            if result is not None:
                attrs["gen_ai.output.messages"] = canonical_json(
                    [{"role": "assistant", "parts": [{"type": "text", "content": result}],
                      "finish_reason": messages.finish_reason_of(end_data.get("child_status"))}])
        else:
            summarize(attrs, "input", "child_goal", goal, opt.summary_mode)
            summarize(attrs, "output", "child_summary", result, opt.summary_mode)
            _preview_messages(attrs, messages.finish_reason_of(end_data.get("child_status")))
    return f"invoke_agent {name}" if name else "invoke_agent", attrs


def _request_params(attrs: dict[str, Any], body: Mapping[str, Any]) -> None:
    for key, name in _REQUEST_PARAMS:
        if key in body and name not in attrs:
            put(attrs, name, body[key])
    stop = body.get("stop", body.get("stop_sequences"))
    if isinstance(stop, str):
        attrs["gen_ai.request.stop_sequences"] = (stop,)
    elif isinstance(stop, list) and stop:
        put(attrs, "gen_ai.request.stop_sequences", [str(s) for s in stop])
    count = body.get("n")
    if isinstance(count, int) and not isinstance(count, bool) and count != 1:
        attrs["gen_ai.request.choice.count"] = count
    fmt = body.get("response_format")
    kind = fmt.get("type") if isinstance(fmt, Mapping) else fmt
    if isinstance(kind, str) and kind in _OUTPUT_TYPES:
        attrs["gen_ai.output.type"] = _OUTPUT_TYPES[kind]


def _llm(scope: OpenScope, end: ScopeEvent, opt: Options) -> tuple[str, dict[str, Any]]:
    start = scope.start
    meta = start.metadata
    api_mode = meta.get("hermes.api_mode")
    request = (start.data or {}).get("request")
    body = request.get("body") if isinstance(request, Mapping) else None
    body = body if isinstance(body, Mapping) else {}
    model = (start.profile or {}).get("model_name") or body.get("model")
    op = operation_name(api_mode)
    attrs: dict[str, Any] = {"gen_ai.operation.name": op, "gen_ai.provider.name": provider_name(meta.get("hermes.provider"))}
    put(attrs, "gen_ai.request.model", model)
    server_attrs(attrs, meta.get("hermes.base_url"))
    put(attrs, "gen_ai.conversation.id", meta.get("hermes.session_id"))
    _request_params(attrs, body)
    data = end.data or {}
    response = data.get("response")
    if isinstance(response, Mapping):
        put(attrs, "gen_ai.response.id", response.get("id"))
        put(attrs, "gen_ai.response.model", response.get("model") or (end.profile or {}).get("model_name"))
    finish = data.get("finish_reason")
    if isinstance(finish, str) and finish:
        attrs["gen_ai.response.finish_reasons"] = (finish,)
    usage = data.get("usage")
    if isinstance(usage, Mapping):
        for key, name, always in _USAGE:
            value = usage.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and (always or value > 0):
                attrs[name] = value
        cached = usage.get("cache_read_tokens")
        attrs["hermes.llm.cache_hit"] = isinstance(cached, int) and cached > 0
    _common(attrs, scope, end)
    attrs["hermes.llm.attempt"] = scope.attempt or 1
    error = data.get("error")
    if isinstance(error, Mapping) and error.get("retry_count") is not None:
        put(attrs, "hermes.llm.retry_count", error.get("retry_count"))
    if opt.gate_open:
        history = messages.input_messages(request, api_mode)
        if history is not None:
            attrs["gen_ai.input.messages"] = canonical_json(history)
        for key, value in (("gen_ai.system_instructions", messages.system_instructions(request)),
                           ("gen_ai.tool.definitions", messages.tool_definitions(request)),
                           ("gen_ai.output.messages", messages.output_messages(response, finish))):
            if value is not None:
                attrs[key] = canonical_json(value)
        put(attrs, "hermes.error.message", data.get("error_message"))
    else:
        summarize(attrs, "input", "request", request, opt.summary_mode, api_mode)
        summarize(attrs, "output", "response", response, opt.summary_mode, api_mode)
        _preview_messages(attrs, messages.finish_reason_of(finish))
    return f"{op} {model}" if model else op, attrs


def _tool(scope: OpenScope, end: ScopeEvent, opt: Options) -> tuple[str, dict[str, Any]]:
    start = scope.start
    name = start.name
    end_meta = end.metadata
    toolset = end_meta["hermes.toolset"] if "hermes.toolset" in end_meta else start.metadata.get("hermes.toolset")
    attrs: dict[str, Any] = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name}
    call_id = (end.profile or start.profile or {}).get("tool_call_id")
    if type(call_id) is str:  # what put() keeps as it is, inlined
        attrs["gen_ai.tool.call.id"] = call_id
    else:
        put(attrs, "gen_ai.tool.call.id", call_id)
    mcp = (isinstance(toolset, str) and toolset.lower().startswith("mcp")) or "remote" in start.attributes
    attrs["gen_ai.tool.type"] = "extension" if mcp else "function"
    offered = offered_tool(scope, name) if opt.gate_open else None  # tool definitions are opt-in content
    if offered is not None:
        put(attrs, "gen_ai.tool.description", offered.get("description"))
    _common(attrs, scope, end)
    attrs["hermes.tool.category"] = tool_category(toolset)
    args = (start.data or {}).get("arguments")
    data = end.data or {}
    result = data.get("result")
    mode = opt.summary_mode
    if opt.gate_open:
        if args is not None:
            attrs["gen_ai.tool.call.arguments"] = args if isinstance(args, str) else canonical_json(args)
        if result is not None:
            attrs["gen_ai.tool.call.result"] = result if isinstance(result, str) else canonical_json(result)
        put(attrs, "hermes.error.message", data.get("error_message"))
    elif mode != "off":  # the FMT-31 summaries, and the previews again where backends read a tool's input and output
        given = summarize_text(attrs, SUMMARY_NAMES["input"], source_text("arguments", args), mode) \
            if args is not None else None
        got = summarize_text(attrs, SUMMARY_NAMES["output"], source_text("result", result), mode) \
            if result is not None else None
        if given is not None:
            attrs["gen_ai.tool.call.arguments"] = given
        if got is not None:
            attrs["gen_ai.tool.call.result"] = got
    return f"execute_tool {name}", attrs


def offered_tool(scope: OpenScope, name: Any) -> Mapping[str, Any] | None:
    """The definition of tool ``name`` offered to the model of the turn or agent around ``scope`` (its latest
    LLM call), or ``None``."""
    owner = scope.parent
    while owner is not None and owner.offered is None:
        owner = owner.parent
    if owner is None or owner.offered is None or not isinstance(name, str):
        return None
    return owner.offered.get(name)


def _skill(scope: OpenScope, end: ScopeEvent, opt: Options) -> tuple[str, dict[str, Any]]:
    """A skill run (``skill.run``, from the skill's load to the end of its turn) as ``execute_tool`` of the skill
    (see the module docstring): ``gen_ai.tool.name`` = the skill's name, type ``extension`` (it runs on the
    agent's side)."""
    meta = _merged_meta(scope, end)
    name = meta.get("hermes.skill.name") or (scope.start.data or {}).get("skill_name") or scope.start.name
    attrs: dict[str, Any] = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": str(name),
                             "gen_ai.tool.type": "extension"}
    attrs.update(_other(scope, end, opt))
    for key in ("hermes.skill.name", "hermes.skill.provenance", "hermes.skill.reuse_state"):
        put(attrs, key, meta.get(key))
    put(attrs, "hermes.skill.outcome", (end.data or {}).get("outcome"))
    return f"execute_tool {name}", attrs


def _turn(scope: OpenScope, end: ScopeEvent, agent_name: str, opt: Options) -> tuple[str, dict[str, Any]]:
    """A turn (``agent.run``) as the ``invoke_agent`` span that roots its trace when traces are grouped by turn:
    the agent invocation that answers one user message (its input), ending with the final answer."""
    start = scope.start
    agent = scope.agent
    role = (agent.start.data or {}).get("child_role") if agent is not None else None
    name = role if isinstance(role, str) and role.strip() else agent_name
    attrs: dict[str, Any] = {"gen_ai.operation.name": "invoke_agent"}
    if scope.provider is not None:
        attrs["gen_ai.provider.name"] = provider_name(scope.provider)
    attrs["gen_ai.agent.name"] = name
    put(attrs, "gen_ai.agent.id", _agent_id(scope))
    version = opt.agent_version or (agent.start.metadata.get("hermes.agent.version") if agent is not None else None)
    put(attrs, "gen_ai.agent.version", version if isinstance(version, str) and version else None)
    model = (start.data or {}).get("model")
    if not (isinstance(model, str) and model) and agent is not None:
        model = (agent.start.data or {}).get("model") or agent.model
    put(attrs, "gen_ai.request.model", model)
    attrs.update(_other(scope, end, opt))
    if opt.gate_open:
        question, answer = (start.data or {}).get("user_message"), (end.data or {}).get("final_response")
        if question is not None:
            attrs["gen_ai.input.messages"] = canonical_json(
                [{"role": "user", "parts": [{"type": "text", "content": messages.text_of(question)}]}])
        if answer is not None:
            attrs["gen_ai.output.messages"] = canonical_json(
                [{"role": "assistant", "parts": [{"type": "text", "content": messages.text_of(answer)}],
                  "finish_reason": "stop" if "error.type" not in attrs else "error"}])
    else:
        _preview_messages(attrs, "stop" if "error.type" not in attrs else "error")
    return f"invoke_agent {name}" if name else "invoke_agent", attrs


def _other(scope: OpenScope, end: ScopeEvent, opt: Options) -> dict[str, Any]:
    attrs: dict[str, Any] = {}
    _common(attrs, scope, end)
    if scope.start.name == "agent.run":
        data = end.data or {}
        if data.get("interrupted") or attrs.get("error.type") == "cancelled":
            outcome = "interrupted"
        elif "error.type" in attrs:
            outcome = "failed"
        else:
            outcome = "completed"
        attrs["hermes.turn.outcome"] = outcome
        attrs["hermes.sampling_rate"] = float(opt.sampling_rate)
    if not opt.gate_open:
        summarize_data(attrs, scope.start.data, opt.summary_mode)
        summarize_data(attrs, end.data, opt.summary_mode)
    return attrs


def genai_span(scope: OpenScope, end: ScopeEvent, agent_name: str, opt: Options, *,
               turn_grouping: bool = False) -> tuple[str, SpanKind, dict[str, Any]]:
    """``(span name, kind, attributes)`` of a finished scope in the ``gen_ai`` projection.

    A turn (``agent.run``) is an ``invoke_agent`` span: the root of its trace with ``turn_grouping`` (one trace
    per turn), a child of the session's ``invoke_agent`` span otherwise. (A subagent's own turn is no span of
    this projection: the span builder folds it into the subagent's ``invoke_agent`` span.)
    """
    category = scope.start.category
    if scope.start.name == "agent.run":
        name, attrs = _turn(scope, end, agent_name, opt)
        return name, SpanKind.INTERNAL, attrs
    if scope.start.name == SKILL_SCOPE:
        name, attrs = _skill(scope, end, opt)
        return name, SpanKind.INTERNAL, attrs
    if category == "agent":
        name, attrs = _agent(scope, end, agent_name, opt)
        return name, SpanKind.INTERNAL, attrs
    if category == "llm":
        name, attrs = _llm(scope, end, opt)
        return name, SpanKind.CLIENT, attrs
    if category == "tool":
        name, attrs = _tool(scope, end, opt)
        return name, SpanKind.INTERNAL, attrs
    if category in ("embedder", "retriever"):
        op = "embeddings" if category == "embedder" else "retrieval"
        attrs = {"gen_ai.operation.name": op}
        target = (scope.start.profile or {}).get("model_name") if category == "embedder" else \
            (scope.start.data or {}).get("data_source_id")
        key = "gen_ai.request.model" if category == "embedder" else "gen_ai.data_source.id"
        put(attrs, key, target)
        _common(attrs, scope, end)
        return (f"{op} {target}" if target else op), SpanKind.CLIENT, attrs
    attrs = {"gen_ai.operation.name": "invoke_workflow", **_other(scope, end, opt)}
    return f"invoke_workflow {scope.start.name}", SpanKind.INTERNAL, attrs

