"""Reading facts out of provider requests and responses for observer payloads (spec 01 §7.4, §8.3).

Works on plain dicts (OpenAI chat-completions, Anthropic messages, Responses API shapes) and on
SDK objects with the same attribute names. Only called after a ``has_hook`` gate has passed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

_MISSING = object()


def field(obj: Any, name: str, default: Any = None) -> Any:
    """``obj[name]`` for mappings, ``obj.name`` otherwise; ``default`` when absent."""
    if type(obj) is dict or isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


def request_messages(request: Mapping[str, Any]) -> list[Any]:
    """Shallow copy of ``messages`` (or Responses ``input``); ``[]`` if neither is a list (OBS-52)."""
    messages = request.get("messages", _MISSING)
    if messages is _MISSING:
        messages = request.get("input")
    return list(messages) if isinstance(messages, list) else []


def message_count(request: Mapping[str, Any]) -> int:
    """``len(request_messages(request))`` without the copy."""
    messages = request.get("messages", _MISSING)
    if messages is _MISSING:
        messages = request.get("input")
    return len(messages) if isinstance(messages, list) else 0


def _content_chars(content: Any) -> int:
    if isinstance(content, str):
        return len(content)
    if isinstance(content, list):
        total = 0
        for part in content:
            text = field(part, "text")
            if isinstance(text, str):
                total += len(text)
            elif isinstance(part, str):
                total += len(part)
        return total
    return 0


def request_facts(request: Mapping[str, Any]) -> dict[str, Any]:
    """``message_count``, ``tool_count``, ``request_char_count``, ``approx_input_tokens``,
    ``max_tokens``, ``request_messages`` and ``system_prompt`` of a provider request."""
    messages = request_messages(request)
    chars = 0
    for m in messages:  # every message of the history, each call: a dict's text read without a call per message
        content = m.get("content") if type(m) is dict else field(m, "content")
        chars += len(content) if type(content) is str else _content_chars(content)
    system = request.get("system")
    if system is None:
        system = request.get("instructions")
    if isinstance(system, list):
        system = "\n".join(t for t in (field(p, "text") for p in system) if isinstance(t, str))
    if isinstance(system, str):
        chars += len(system)
    tools = request.get("tools")
    max_tokens = request.get("max_tokens")
    if max_tokens is None:
        max_tokens = request.get("max_completion_tokens", request.get("max_output_tokens"))
    return {
        "request_messages": messages,
        "message_count": len(messages),
        "tool_count": len(tools) if isinstance(tools, list) else 0,
        "request_char_count": chars,
        "approx_input_tokens": chars // 4,
        "max_tokens": max_tokens if isinstance(max_tokens, int) and not isinstance(max_tokens, bool) else None,
        "system_prompt": system if isinstance(system, str) else None,
    }


def assistant_message(response: Any) -> Any:
    """The assistant message object of a chat-completions response (or ``None``)."""
    choices = field(response, "choices")
    if isinstance(choices, list | tuple) and choices:
        return field(choices[0], "message")
    return None


def response_facts(response: Any) -> dict[str, Any]:
    """Finish reason, model, response id, assistant message, content and tool calls of a provider response."""
    message = assistant_message(response)
    finish_reason: Any = None
    choices = field(response, "choices")
    if isinstance(choices, list | tuple) and choices:
        finish_reason = field(choices[0], "finish_reason")
    else:
        finish_reason = field(response, "stop_reason", field(response, "status"))
    if message is not None:
        role = field(message, "role") or "assistant"
        content = field(message, "content")
        tool_calls = field(message, "tool_calls") or []
    else:  # Anthropic messages: top-level content blocks
        role = field(response, "role") or "assistant"
        content = field(response, "content")
        tool_calls = [b for b in content if field(b, "type") == "tool_use"] if isinstance(content, list) else []
    return {
        "finish_reason": finish_reason if isinstance(finish_reason, str) else None,
        "response_model": field(response, "model"),
        "response_id": field(response, "id"),
        "assistant_message": message,
        "role": role,
        "content": content,
        "tool_calls": list(tool_calls) if isinstance(tool_calls, list | tuple) else [],
        "content_chars": _content_chars(content),
        "usage": field(response, "usage"),
        "upstream_provider": field(response, "provider"),
    }


def tool_calls_of(response: Any) -> list[dict[str, Any]]:
    """The tool calls of a chat-completions response as ``{"id", "name", "arguments"}`` dicts.

    ``arguments`` is parsed from its JSON text; text that is not a JSON object becomes ``{}``.
    """
    calls = []
    for call in response_facts(response)["tool_calls"]:
        function = field(call, "function")
        name = field(function, "name") if function is not None else field(call, "name")
        raw = field(function, "arguments") if function is not None else field(call, "input")
        if isinstance(raw, str):
            try:
                raw = json.loads(raw) if raw.strip() else {}
            except ValueError:
                raw = {}
        calls.append({"id": field(call, "id") or "", "name": name or "", "arguments": raw if isinstance(raw, dict) else {}})
    return calls
