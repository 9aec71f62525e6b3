"""Readers of the raw objects Hermes passes in hook payloads (its gateway events, request messages).

Attribute names follow Hermes Agent 0.19 (``gateway/platforms/base.py`` ``MessageEvent``,
``gateway/session.py`` ``SessionStore``); every reader tolerates their absence.
"""

from __future__ import annotations

import json
from typing import Final

__all__ = ["exit_code", "gateway_fields", "system_prompt"]

_EXIT_KEY: Final = '"exit_code"'
_MAX_RESULT: Final = 4 * 1024 * 1024
"""Results longer than this are not parsed for an exit code (a command's JSON is far smaller)."""


def _enum_text(value: object) -> str:
    inner = getattr(value, "value", value)
    return inner if isinstance(inner, str) else ""


def gateway_fields(event: object, session_store: object) -> dict[str, str]:
    """``platform``, ``event_type``, ``session_key`` and ``session_id`` of a Hermes ``MessageEvent``.

    The session key comes from the session store's own key function and the session id from its
    existing entry, read only (nothing is created); both are ``""`` when they cannot be found.
    """
    source = getattr(event, "source", None)
    fields = {"platform": _enum_text(getattr(source, "platform", None)),
              "event_type": _enum_text(getattr(event, "message_type", None)) or "text",
              "session_key": "", "session_id": ""}
    try:
        key = session_store._generate_session_key(source)  # type: ignore[attr-defined]
        if isinstance(key, str):
            fields["session_key"] = key
            entry = getattr(session_store, "_entries", {}).get(key)
            sid = getattr(entry, "session_id", None)
            fields["session_id"] = sid if isinstance(sid, str) else ""
    except Exception:
        pass
    return fields


def system_prompt(messages: object) -> str | None:
    """The system message of a chat-completions request, when it is the first message and plain text."""
    if isinstance(messages, list) and messages:
        first = messages[0]
        if isinstance(first, dict) and first.get("role") == "system" and isinstance(first.get("content"), str):
            return str(first["content"])
    return None


def exit_code(result: object) -> int | None:
    """The ``exit_code`` of a command's result, as Hermes' ``terminal`` (and ``execute_code``) tools return it.

    Their result is a JSON object ``{"output": ..., "exit_code": N, "error": ...}`` (``tools/terminal_tool.py``);
    ``None`` for any other result (not JSON, not an object, no integer ``exit_code``). Cheap for other
    tools: the text is parsed only when it mentions the key.
    """
    if not isinstance(result, str) or _EXIT_KEY not in result or len(result) > _MAX_RESULT:
        return None
    try:
        value = json.loads(result)
    except ValueError:
        return None
    code = value.get("exit_code") if isinstance(value, dict) else None
    return code if type(code) is int else None
