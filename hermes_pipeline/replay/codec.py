"""Provider shapes and request hashes of a recording (spec 06 BOOK-31 items 4 and 5).

A recorded ``llm_response`` is the engine's normalised form ``{model, finish_reason,
assistant_message: {role, content, tool_calls}, usage, id}``. :func:`provider_response` rebuilds
from it the object the host's provider adapter expects for the recorded ``api_mode``
(``chat_completions``: a chat completion; ``anthropic_messages``: a Messages API message;
``codex_responses``: a Responses API response). :func:`request_hash` is the SHA-256 of the
canonical JSON of the request's message history (:func:`canonical_history`: roles, texts, tool calls
and the ids they answer, whichever agent built the messages), computed the same way for a recorded
request and a live one (the live request is sanitized and credential-scrubbed as the exporters saw it).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any, Final

import orjson

from ..engine.sanitize import build_request_field
from ..engine.scrub import hide_printed_in_request
from ..export.content import HISTORY_KEYS
from ..export.redaction import redact_value

__all__ = ["API_MODES", "canonical_json", "is_truncated", "provider_response", "request_hash", "sanitized_request",
           "scrubbed_history_hash"]

API_MODES: Final = ("chat_completions", "anthropic_messages", "codex_responses", "bedrock_converse")


def canonical_json(value: Any) -> str:
    """Sorted keys, compact separators, non-ASCII kept: one text for equal values (orjson when it can
    encode the value, else the standard library with ``str`` for what JSON lacks)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS).decode("utf-8")
    except (TypeError, orjson.JSONEncodeError):
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def sanitized_request(request: Any) -> Any:
    """A live request as the recording holds it: ``{"method", "body"}``, sanitized and scrubbed (a credential a tool
    call printed hidden in its result, as the recording's request field has it)."""
    return redact_value(build_request_field(hide_printed_in_request(request) if type(request) is dict else request))


def history_of(request: Any, api_mode: str | None) -> Any:
    """The message history of a sanitized request (``body.messages`` or ``body.input``)."""
    body = request.get("body") if isinstance(request, Mapping) else None
    if not isinstance(body, Mapping):
        return None
    return body.get(HISTORY_KEYS.get(api_mode or "chat_completions", "messages"))


def _text(content: Any) -> Any:
    if content is None:
        return ""
    if isinstance(content, list):  # content parts: the text parts joined, other parts kept as they are
        if all(isinstance(p, Mapping) and isinstance(p.get("text"), str) for p in content):
            return "".join(str(p["text"]) for p in content)
    return content


def _arguments(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


@lru_cache(maxsize=4096)
def _parsed_arguments(text: str) -> Any:
    """:func:`_arguments` of a string, remembered: a history repeats every earlier call's arguments, so
    a run of n LLM calls parses each of them n times otherwise. Only :func:`_digest` uses it, and the
    value it returns is serialized, never handed out (so never changed)."""
    return _arguments(text)


def _hash_arguments(value: Any) -> Any:
    return _parsed_arguments(value) if type(value) is str else _arguments(value)


def _is_mapping(value: Any) -> bool:
    return type(value) is dict or isinstance(value, Mapping)  # a dict without the ABC's instance check


def canonical_history(history: Any, *, arguments: Callable[[Any], Any] = _arguments) -> Any:
    """What a request history means for the model, the same whichever agent built it: per message its
    role, its text (``None`` and ``""`` alike, text parts joined), its tool calls as ``(id, name,
    arguments)`` with parsed arguments, and the ``tool_call_id`` it answers; other keys (reasoning
    echoes, names, provider extras) are left out. ``arguments`` parses one call's arguments."""
    if not isinstance(history, list):
        return history
    out: list[Any] = []
    append = out.append
    for message in history:
        if not _is_mapping(message):
            append(message)
            continue
        get = message.get
        content = get("content")
        item: dict[str, Any] = {"role": get("role"),
                                "content": content if type(content) is str else _text(content)}
        raw_calls = get("tool_calls")
        if raw_calls:
            calls = []
            for raw in raw_calls:
                if not _is_mapping(raw):
                    continue
                inner = raw.get("function")
                function: Mapping[str, Any] = inner if _is_mapping(inner) else raw
                calls.append([raw.get("id"), function.get("name"),
                              arguments(function.get("arguments", function.get("input")))])
            if calls:
                item["tool_calls"] = calls
        call_id = get("tool_call_id")
        if call_id is not None:
            item["tool_call_id"] = call_id
        append(item)
    return out


_GIL_FREE_BYTES: Final = 2047
"""hashlib lets go of the GIL to hash 2048 bytes or more at once. A replay hashes each live request on
the agent's thread while the trajectory store's thread wants the GIL, and getting it back then waits
for that thread's switch interval (up to 5 ms) for a hash of a few microseconds; fed in pieces below
that size, the hash keeps the GIL (the same digest: SHA-256 is computed over the stream)."""


def sha256_hex(data: bytes) -> str:
    """``hashlib.sha256(data).hexdigest()``, computed without releasing the GIL (see :data:`_GIL_FREE_BYTES`)."""
    if len(data) <= _GIL_FREE_BYTES:
        return hashlib.sha256(data).hexdigest()
    state = hashlib.sha256()
    view = memoryview(data)
    for start in range(0, len(data), _GIL_FREE_BYTES):
        state.update(view[start:start + _GIL_FREE_BYTES])
    return state.hexdigest()


def _digest(history: Any) -> str:
    return sha256_hex(canonical_json(canonical_history(history, arguments=_hash_arguments)).encode("utf-8"))


def request_hash(request: Any, api_mode: str | None) -> str:
    """SHA-256 (hex) of the canonical history (:func:`canonical_history`) of a sanitized request."""
    return _digest(history_of(request, api_mode))


def is_truncated(value: Any) -> bool:
    """Whether the sanitizer cut ``value`` anywhere (a truncation envelope, dropped items, cut strings)."""
    text = canonical_json(value)  # one C-speed pass; the walk below runs only when a marker may be there
    if '"_truncated' not in text and "...[truncated " not in text and "hermes.truncated" not in text:
        return False
    return _truncated(value)


def raw_history_hash(request: Any, api_mode: str | None) -> str | None:
    """SHA-256 of the canonical history of a live request as it is (no sanitizer): equal to the recorded
    hash whenever sanitizing and scrubbing changed nothing, which saves sanitizing a long history."""
    if not isinstance(request, Mapping):
        return None
    history = request.get(HISTORY_KEYS.get(api_mode or "chat_completions", "messages"))
    try:
        return _digest(history)
    except (TypeError, ValueError):
        return None


def scrubbed_history_hash(request: Any, api_mode: str | None) -> str | None:
    """SHA-256 of the canonical history of a live request with credentials scrubbed but nothing cut: equal to
    the recorded hash when the recording kept the full history (as the Hermes bridge records it)."""
    if not isinstance(request, Mapping):
        return None
    history = request.get(HISTORY_KEYS.get(api_mode or "chat_completions", "messages"))
    try:
        return _digest(redact_value(history))
    except (TypeError, ValueError):
        return None


def _truncated(value: Any) -> bool:
    if isinstance(value, Mapping):
        if value.get("_truncated") is True or "_truncated_items" in value or value.get("hermes.truncated"):
            return True
        return any(_truncated(item) for item in value.values())
    if isinstance(value, list):
        return any(_truncated(item) for item in value)
    if isinstance(value, str):
        return "...[truncated " in value and value.endswith(" chars]")
    return False


def _usage(recorded: Mapping[str, Any]) -> tuple[int, int]:
    found = recorded.get("usage")
    usage: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    prompt = usage.get("input_tokens", usage.get("prompt_tokens", 0))
    completion = usage.get("output_tokens", usage.get("completion_tokens", 0))
    return (int(prompt) if isinstance(prompt, int) else 0, int(completion) if isinstance(completion, int) else 0)


def _calls(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    out = []
    for raw in message.get("tool_calls") or []:
        if not isinstance(raw, Mapping):
            continue
        inner = raw.get("function")
        function: Mapping[str, Any] = inner if isinstance(inner, Mapping) else raw
        arguments = function.get("arguments", function.get("input", {}))
        out.append({"id": raw.get("id"), "name": function.get("name"),
                    "arguments": arguments if isinstance(arguments, str) else canonical_json(arguments or {})})
    return out


def provider_response(recorded: Mapping[str, Any], api_mode: str | None) -> dict[str, Any]:
    """The provider-shaped response of a recorded ``llm_response`` for ``api_mode`` (02 MW-8)."""
    found = recorded.get("assistant_message")
    message: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    content = message.get("content")
    calls = _calls(message)
    prompt, completion = _usage(recorded)
    model = recorded.get("model")
    finish = recorded.get("finish_reason")
    rid = recorded.get("id") or "replay"
    if api_mode == "anthropic_messages":
        blocks: list[dict[str, Any]] = [{"type": "text", "text": content}] if isinstance(content, str) and content \
            else list(content) if isinstance(content, list) else []
        for call in calls:
            blocks.append({"type": "tool_use", "id": call["id"], "name": call["name"],
                           "input": json.loads(call["arguments"] or "{}")})
        return {"id": rid, "type": "message", "role": "assistant", "model": model, "content": blocks,
                "stop_reason": finish, "usage": {"input_tokens": prompt, "output_tokens": completion}}
    if api_mode == "codex_responses":
        output: list[dict[str, Any]] = []
        if isinstance(content, str) and content:
            output.append({"type": "message", "role": "assistant",
                           "content": [{"type": "output_text", "text": content}]})
        for call in calls:
            output.append({"type": "function_call", "call_id": call["id"], "name": call["name"],
                           "arguments": call["arguments"]})
        return {"id": rid, "object": "response", "model": model, "output": output, "status": "completed",
                "usage": {"input_tokens": prompt, "output_tokens": completion,
                          "total_tokens": prompt + completion}}
    chat_message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        chat_message["tool_calls"] = [{"id": c["id"], "type": "function",
                                       "function": {"name": c["name"], "arguments": c["arguments"]}} for c in calls]
    return {"id": rid, "object": "chat.completion", "model": model,
            "choices": [{"index": 0, "message": chat_message, "finish_reason": finish}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}}
