"""Provider requests and responses → OpenTelemetry GenAI message schemas (spec 04 FMT-64).

Used by the ``gen_ai`` projection when the content gate is open (``gen_ai.input.messages``,
``gen_ai.output.messages``, ``gen_ai.system_instructions``, ``gen_ai.tool.definitions``) and by the
``openinference`` projection (``llm.input_messages.*``). Inputs are the sanitized Hermes
``request`` (``{"method", "body"}``) and ``response`` (``{"model", "finish_reason",
"assistant_message", ...}``) of the ``llm.call`` scope events; OpenAI chat-completions,
Anthropic messages and Responses (``codex_responses``) shapes are recognised.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from ...export.content import canonical_json, request_history

FINISH_REASONS: Final = {"tool_calls": "tool_call", "function_call": "tool_call", "tool_use": "tool_call",
                         "end_turn": "stop", "stop_sequence": "stop", "completed": "stop", "max_tokens": "length",
                         "max_output_tokens": "length", "incomplete": "length", "failed": "error"}
"""Provider finish reasons → the conventions' ``FinishReason`` values (``stop``, ``length``, ``content_filter``,
``tool_call``, ``error``); others pass through (the schema allows any string)."""


def _get(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, Mapping) else None


def _arguments(raw: Any) -> Any:
    """Tool-call arguments as an object when they are JSON text (the schema wants ``arguments: {…}``)."""
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw if raw is not None else {}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else canonical_json(value)


def text_of(value: Any) -> str:
    """A content value as the ``content`` string of a text part (JSON text for structured values)."""
    return _text(value)


def finish_reason_of(value: Any) -> str:
    """An output message's ``finish_reason`` in the conventions' vocabulary (``stop`` when unknown)."""
    if not isinstance(value, str) or not value:
        return "stop"
    return FINISH_REASONS.get(value.lower(), value)


def _image_part(url: Any) -> dict[str, Any]:
    """An image as a ``uri`` part, or a ``blob`` part for a base64 ``data:`` URL (the schema's rule)."""
    if isinstance(url, str) and url.startswith("data:") and "," in url:
        header, _, payload = url[5:].partition(",")
        mime = header.split(";", 1)[0] or None
        return {"type": "blob", "modality": "image", "mime_type": mime, "content": payload}
    if isinstance(url, str):
        return {"type": "uri", "modality": "image", "uri": url}
    return {"type": "image"}  # no data and no location: a generic part naming the modality


def _response(value: Any) -> Any:
    """A tool result as the ``response`` of a ``tool_call_response`` part (text blocks joined)."""
    if isinstance(value, list) and all(isinstance(b, Mapping) and b.get("type") == "text" for b in value):
        return "\n".join(str(b.get("text", "")) for b in value)
    return value if value is not None else ""


def _content_parts(content: Any) -> list[dict[str, Any]]:
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "content": content}] if content else []
    if not isinstance(content, list):
        return [{"type": "text", "content": _text(content)}]
    parts: list[dict[str, Any]] = []
    for part in content:
        if isinstance(part, str):
            if part:
                parts.append({"type": "text", "content": part})
            continue
        kind = _get(part, "type")
        if kind == "tool_use":
            parts.append({"type": "tool_call", "id": _get(part, "id"), "name": _get(part, "name"),
                          "arguments": _arguments(_get(part, "input"))})
        elif kind == "tool_result":
            parts.append({"type": "tool_call_response", "id": _get(part, "tool_use_id"),
                          "response": _response(_get(part, "content"))})
        elif kind in ("image_url", "input_image", "image"):
            url = _get(_get(part, "image_url"), "url") or _get(part, "image_url") or _get(part, "url")
            parts.append(_image_part(url))
        else:
            text = _get(part, "text")
            if isinstance(text, str):
                if text:
                    parts.append({"type": "text", "content": text})
            elif part is not None:
                parts.append({"type": str(kind or "text"), "content": _text(part)})
    return parts


def _tool_call_parts(calls: Any) -> list[dict[str, Any]]:
    parts = []
    for call in calls or ():
        function = _get(call, "function")
        name = _get(function, "name") if function is not None else _get(call, "name")
        raw = _get(function, "arguments") if function is not None else _get(call, "arguments")
        parts.append({"type": "tool_call", "id": _get(call, "id"), "name": name, "arguments": _arguments(raw)})
    return parts


def chat_message(message: Any) -> dict[str, Any]:
    """One history or assistant message as ``{role, parts}``."""
    if not isinstance(message, Mapping):
        return {"role": "user", "parts": _content_parts(message)}
    role = message.get("role")
    kind = message.get("type")
    if kind == "function_call":  # Responses API input items
        return {"role": "assistant", "parts": [{"type": "tool_call", "id": message.get("call_id"),
                                                "name": message.get("name"),
                                                "arguments": _arguments(message.get("arguments"))}]}
    if kind == "function_call_output":
        return {"role": "tool", "parts": [{"type": "tool_call_response", "id": message.get("call_id"),
                                           "response": _response(message.get("output"))}]}
    if role == "tool":
        return {"role": "tool", "parts": [{"type": "tool_call_response", "id": message.get("tool_call_id"),
                                           "response": _response(message.get("content"))}]}
    parts = _content_parts(message.get("content"))
    parts.extend(_tool_call_parts(message.get("tool_calls")))
    if not parts:  # an empty message keeps one empty text part: MLflow's chat view drops a list holding a message
        parts.append({"type": "text", "content": ""})  # without parts and shows the raw JSON instead
    return {"role": role if isinstance(role, str) and role else "user", "parts": parts}


def input_messages(request: Any, api_mode: Any) -> list[dict[str, Any]] | None:
    """``gen_ai.input.messages`` from the full history of the request, or ``None`` when it has none."""
    history = request_history(request, api_mode if isinstance(api_mode, str) else None)
    if history is None:
        body = _get(request, "body")
        history = _get(body, "messages") if isinstance(_get(body, "messages"), list) else None
        if history is None:
            raw = _get(body, "input")
            if isinstance(raw, str):
                return [{"role": "user", "parts": [{"type": "text", "content": raw}]}]
            history = raw if isinstance(raw, list) else None
    if history is None:
        return None
    return [chat_message(m) for m in history]


def system_instructions(request: Any) -> list[dict[str, Any]] | None:
    """``gen_ai.system_instructions`` for APIs that carry them outside the history (Anthropic, Responses)."""
    body = _get(request, "body")
    value = _get(body, "system")
    if value is None:
        value = _get(body, "instructions")
    if value is None:
        return None
    parts = _content_parts(value)
    return parts or None


def tool_definitions(request: Any) -> list[dict[str, Any]] | None:
    """``gen_ai.tool.definitions`` as ``[{type, name, description, parameters}]``."""
    tools = _get(_get(request, "body"), "tools")
    if not isinstance(tools, list) or not tools:
        return None
    out = []
    for tool in tools:
        function = _get(tool, "function")
        source = function if isinstance(function, Mapping) else tool
        entry: dict[str, Any] = {"type": _get(tool, "type") or "function", "name": _get(source, "name")}
        if _get(source, "description") is not None:
            entry["description"] = _get(source, "description")
        parameters = _get(source, "parameters")
        if parameters is None:
            parameters = _get(source, "input_schema")
        if parameters is not None:
            entry["parameters"] = parameters
        out.append(entry)
    return out


def output_messages(response: Any, finish_reason: Any) -> list[dict[str, Any]] | None:
    """``gen_ai.output.messages``: one entry per choice ``{role: "assistant", parts, finish_reason}``."""
    message = _get(response, "assistant_message")
    if not isinstance(message, Mapping):
        return None
    out = chat_message({**message, "role": "assistant"})
    reason = finish_reason if isinstance(finish_reason, str) else _get(response, "finish_reason")
    out["finish_reason"] = finish_reason_of(reason)
    return [out]


def message_text(message: Mapping[str, Any]) -> str:
    """The text parts of a ``{role, parts}`` message joined by newlines (OpenInference ``message.content``)."""
    return "\n".join(p["content"] for p in message.get("parts", ()) if p.get("type") == "text"
                     and isinstance(p.get("content"), str))
