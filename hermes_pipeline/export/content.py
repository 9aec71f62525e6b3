"""Content fields, summaries and the content gate (spec 04 §2.13, FMT-30..FMT-33).

These are pure functions on ATOF-shaped dicts, meant for exporter worker threads. The gate is
resolved per destination; when it is closed every content field of ``data`` is replaced by its
summary (``preview``: ``{preview, chars, sha256}``, ``digest``: ``{chars, sha256}``, ``off``:
removed) and the gated metadata key ``hermes.sender_id`` is dropped.

The events these functions see were credential-scrubbed once by the scope tracker
(:mod:`~hermes_pipeline.export.redaction`), so previews, lengths and hashes are those of the scrubbed
strings: a preview never shows a credential the scrubber recognises.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any, Final

from .jsonenc import canonical, loads_exact

canonical_json: Final = canonical
"""Keys sorted, ``,`` and ``:`` separators without spaces, non-ASCII kept (FMT-32)."""

CONTENT_FIELDS: Final = frozenset({
    "user_message", "final_response", "request", "response", "error_message", "arguments", "result",
    "command", "description", "prompt", "child_goal", "child_summary",
})
"""Keys of ``data`` that hold user, model, tool or file text (the † fields of FMT-24)."""

GATED_METADATA: Final = ("hermes.sender_id",)
SUMMARY_MODES: Final = ("preview", "digest", "off")
PREVIEW_CHARS: Final = 200

HISTORY_KEYS: Final[Mapping[str, str]] = {
    "chat_completions": "messages", "anthropic_messages": "messages", "bedrock_converse": "messages",
    "codex_responses": "input",
}
"""``api_mode`` → key of the history list in the request body (FMT-25)."""


def summary(text: str, mode: str = "preview") -> dict[str, Any] | None:
    """The summary of ``text``: ``{preview, chars, sha256}`` (or without ``preview`` for ``digest``); ``None`` for ``off``."""
    if mode == "off":
        return None
    preview, chars, digest = summary_values(text, mode)
    if preview is None:
        return {"chars": chars, "sha256": digest}
    return {"preview": preview, "chars": chars, "sha256": digest}


def summary_values(text: str, mode: str) -> tuple[str | None, int, str]:
    """``(preview, chars, sha256)`` of ``text`` for a summary ``mode`` other than ``off`` (``preview`` is ``None`` for
    ``digest``): what :func:`summary` holds, for a caller that stores the three values under names of its own."""
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return (None if mode == "digest" else text[:PREVIEW_CHARS]), len(text), digest


def _field(obj: Any, name: str) -> Any:
    return obj.get(name) if type(obj) is dict or isinstance(obj, Mapping) else None


_ARGUMENTS_TEXTS_MAX: Final = 2048
_ARGUMENTS_TEXT_CHARS: Final = 4096
_ARGUMENTS_TEXTS_BUDGET: Final = 1_000_000
_arguments_texts: dict[str, str] = {}
"""The canonical text of tool-call argument strings seen lately (at most 4,096 characters each, 2,048 strings and
about a million characters in all, then emptied): a call's arguments are flattened again in every later LLM request
of its session, whose history holds them."""
_arguments_chars = [0]


def _arguments_text(raw: Any) -> str:
    if isinstance(raw, str):
        known = _arguments_texts.get(raw)
        if known is not None:
            return known
        try:
            text = canonical_json(loads_exact(raw))
        except ValueError:
            text = raw
        if len(raw) <= _ARGUMENTS_TEXT_CHARS and type(raw) is str:
            chars = _arguments_chars
            if len(_arguments_texts) >= _ARGUMENTS_TEXTS_MAX or chars[0] > _ARGUMENTS_TEXTS_BUDGET:
                _arguments_texts.clear()
                chars[0] = 0
            _arguments_texts[raw] = text
            chars[0] += len(raw) + len(text)
        return text
    return canonical_json(raw if raw is not None else {})


def _message_parts(message: Any) -> list[str]:
    if not isinstance(message, Mapping):
        return [message if isinstance(message, str) else canonical_json(message)]
    parts: list[str] = []
    role = message.get("role")
    content = message.get("content")
    if role == "tool":
        text = content if isinstance(content, str) else canonical_json(content)
        return [f"[tool_result {message.get('tool_call_id', '')}] {text}"]
    if isinstance(content, str):
        if content:
            parts.append(content)
    elif isinstance(content, list):
        for part in content:
            kind = _field(part, "type")
            if isinstance(part, str):
                if part:
                    parts.append(part)
            elif kind == "tool_use":
                parts.append(f"[tool_call {_field(part, 'name')} {_arguments_text(_field(part, 'input'))}]")
            elif kind == "tool_result":
                inner = _field(part, "content")
                text = inner if isinstance(inner, str) else canonical_json(inner)
                parts.append(f"[tool_result {_field(part, 'tool_use_id')}] {text}")
            else:
                text = _field(part, "text")
                if isinstance(text, str) and text:
                    parts.append(text)
    elif content is not None:
        parts.append(canonical_json(content))
    for call in message.get("tool_calls") or ():
        function = _field(call, "function")
        name = _field(function, "name") if function is not None else _field(call, "name")
        raw = _field(function, "arguments") if function is not None else _field(call, "arguments")
        parts.append(f"[tool_call {name} {_arguments_text(raw)}]")
    return parts


def flatten_messages(messages: Any) -> str:
    """The flattened text of a message list (FMT-32): ``"<role>: " + parts``, messages joined by a blank line."""
    if not isinstance(messages, list):
        return messages if isinstance(messages, str) else canonical_json(messages)
    out = []
    for message in messages:
        role = _field(message, "role") or "user"
        out.append(f"{role}: " + "\n".join(_message_parts(message)))
    return "\n\n".join(out)


def request_history(request: Any, api_mode: str | None) -> list[Any] | None:
    """The history list of a sanitized request ``{"method", "body"}`` for ``api_mode``, or ``None``."""
    key = HISTORY_KEYS.get(api_mode or "")
    body = _field(request, "body")
    history = _field(body, key) if key is not None else None
    return history if isinstance(history, list) else None


def source_text(key: str, value: Any, api_mode: str | None = None) -> str:
    """The string a content field is summarised from (FMT-32)."""
    if key == "request":
        history = request_history(value, api_mode)
        return flatten_messages(history) if history is not None else canonical_json(value)
    if key == "response":
        message = _field(value, "assistant_message")
        return flatten_messages([message]) if isinstance(message, Mapping) else canonical_json(value)
    if key == "arguments":
        return canonical_json(value)
    return value if isinstance(value, str) else canonical_json(value)


def gate_closed(doc: dict[str, Any], mode: str, api_mode: str | None = None) -> dict[str, Any]:
    """``doc`` (an ATOF dict) with its content fields summarised; copies what it changes (FMT-31)."""
    data = doc.get("data")
    if isinstance(data, dict) and not CONTENT_FIELDS.isdisjoint(data):
        new: dict[str, Any] = {}
        for key, value in data.items():
            if key not in CONTENT_FIELDS or value is None:
                new[key] = value
            else:
                replaced = summary(source_text(key, value, api_mode), mode)
                if replaced is not None:
                    new[key] = replaced
        new.pop("messages_offset", None)
        doc = {**doc, "data": new}
    meta = doc.get("metadata")
    if isinstance(meta, dict) and any(key in meta for key in GATED_METADATA):
        doc = {**doc, "metadata": {k: v for k, v in meta.items() if k not in GATED_METADATA}}
    return doc
