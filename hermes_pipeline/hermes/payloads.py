"""Readers of the raw objects Hermes passes in hook payloads (its gateway events, request messages).

Attribute names follow Hermes Agent 0.19 (``gateway/platforms/base.py`` ``MessageEvent``,
``gateway/session.py`` ``SessionStore``); every reader tolerates their absence.
"""

from __future__ import annotations

__all__ = ["gateway_fields", "system_prompt"]


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
