"""Readers of the raw objects Hermes passes in hook payloads (its gateway events, request messages).

Attribute names follow Hermes Agent 0.19 (``gateway/platforms/base.py`` ``MessageEvent``,
``gateway/session.py`` ``SessionStore``); every reader tolerates their absence.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any, Final

import orjson

from ..engine.sanitize import PASS1_MAX_ITEMS, PASS1_MAX_STR, PASS2_MAX_ITEMS, PASS2_MAX_STR, jsonable
from ..engine.scrub import hide_printed_in_history
from ..engine.scrub_once import scrub_once
from ..engine.walk_context import context_entries, context_items

__all__ = ["exit_code", "full_request", "gateway_fields", "scrubbed", "system_prompt", "whole_tools"]

_HISTORY_KEY: Final = {"codex_responses": "input"}
"""Where a request body holds its message history, per ``api_mode`` (``messages`` for the others)."""
_MAX_DEPTH: Final = 32
_TOOL_DEPTH: Final = 3
"""Depth of a tool schema in the sanitized request (``{"method", "body": {"tools": [schema]}}``)."""
_DEPTH_CUT: Final = b" depth limit>"
_WHOLE_MAX: Final = 512
"""Distinct cut schemas whose outcome :func:`whole_tools` remembers (emptied when full)."""
_whole: Final[dict[tuple[object, bytes], Any]] = {}
"""(registry generation, Hermes' cut copy of a schema as JSON) -> the whole scrubbed schema, or ``None`` when the
registry's does not match."""
_whole_lock: Final = threading.Lock()

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


def _scrubbed(value: Any, depth: int = 0) -> Any:
    """A JSON-shaped copy of ``value`` with every string scrubbed, nothing cut, each value judged with the context the
    text rules read as the payload sanitizer judges it (sensitive keys redacted, a strong credential name's value, a
    command line's password, a name/value pair's value hidden: :mod:`hermes_pipeline.engine.walk_context`)."""
    if isinstance(value, str):
        return scrub_once(value)
    if depth > _MAX_DEPTH:
        return f"<{type(value).__name__} depth limit>"
    if isinstance(value, dict):
        return {str(k): _scrubbed(v, depth + 1) for k, v in context_entries(value)}
    if isinstance(value, list | tuple):
        return [_scrubbed(item, depth + 1) for item in context_items(value)]
    if value is None or isinstance(value, bool | int | float):
        return value
    return scrub_once(str(value))


def scrubbed(value: Any) -> Any:
    """A sanitized field Hermes passes (``response``, ``error``) scrubbed where it enters this engine.

    Hermes sanitizes these fields with its own rules, which miss credentials this engine's scrubber finds (a key
    in the assistant's text, a bearer token in an error message); observers of the engine are promised the
    engine's rules (spec 01 OBS-58), and the export path keeps a scrubbed text as it is (scrubbed once)."""
    return _scrubbed(value)


def _cut_alike(whole: object, cut: object) -> bool:
    """Whether the sanitizer's pass 1 or pass 2 (spec 01 §8.2.3) turns ``whole`` at a tool's depth into ``cut``."""
    for max_str, max_items in ((PASS1_MAX_STR, PASS1_MAX_ITEMS), (PASS2_MAX_STR, PASS2_MAX_ITEMS)):
        if jsonable(whole, max_str=max_str, max_items=max_items, depth=_TOOL_DEPTH) == cut:
            return True
    return False


def whole_tools(tools: list[Any], definition_of: Callable[[str], object], generation: object = None) -> list[Any]:
    """``tools`` (Hermes' sanitized copy) with each schema the depth limit cut replaced by the whole one, scrubbed.

    Hermes' sanitizer replaces what lies deeper than 8 (``parameters.properties.X.items.enum`` ...) by
    ``<str depth limit>`` (spec 01 §8.2.3 rule 1), so a recording would not hold what the model received. The
    whole schema is the one Hermes' tool registry builds for that name (``definition_of``); it replaces the cut
    one only when cutting it the same way gives exactly what Hermes sent (every visible field, including a
    description a runtime override rewrote), else the cut schema is kept. Tools that were not cut are kept as
    they are.

    With a ``generation`` (the registry's change counter), the outcome is remembered per generation and distinct
    cut copy (its JSON text): the same tools come with every request, and building a definition can read Hermes'
    config (``delegate_task``'s overrides: milliseconds per request). A registry change bumps the generation; a
    config change that alters a schema alters its visible part (a description) and so the cut copy. Without a
    generation nothing is remembered.
    """
    out = list(tools)
    for index, tool in enumerate(tools):
        if type(tool) is not dict:
            continue
        try:
            key = orjson.dumps(tool)
        except Exception:  # not Hermes' JSON-shaped copy: kept as it is
            continue
        if _DEPTH_CUT not in key:
            continue
        slot = (generation, key)
        if generation is not None and slot in _whole:
            whole = _whole[slot]
        else:
            whole = _whole_schema(tool, definition_of)
            if generation is not None:
                with _whole_lock:
                    if len(_whole) >= _WHOLE_MAX:
                        _whole.clear()
                    _whole[slot] = whole
        if whole is not None:
            out[index] = whole
    return out


def _whole_schema(tool: dict[str, Any], definition_of: Callable[[str], object]) -> Any:
    """The registry's schema for ``tool``, scrubbed, when the sanitizer cuts it into ``tool``; else ``None``."""
    function = tool.get("function")
    name = function.get("name") if isinstance(function, dict) else None
    try:
        whole = definition_of(name) if isinstance(name, str) else None
    except Exception:
        return None
    return _scrubbed(whole) if isinstance(whole, dict) and _cut_alike(whole, tool) else None


def full_request(request: object, messages: object, api_mode: object, model: object = None,
                 definition_of: Callable[[str], object] | None = None, generation: object = None) -> object:
    """Hermes' sanitized ``request`` with its history list replaced by the full one (credentials scrubbed).

    Hermes caps every string of the ``request`` it passes to hooks (8,000 characters, 1,000 when the
    request is large, or a preview envelope), which cuts its long system prompt; a recording must keep what
    the model really received so that a replay can compare it and rebuild the context. ``request_messages``
    is the same history uncut (a shallow copy of the list sent to the provider): it is copied here with the
    engine's scrubber applied to every string and the sensitive-key rule to every key. The export bound
    (``max_value_chars``) still applies downstream. ``request`` is returned as it is when ``messages`` is
    not a list. With ``definition_of`` (tool name -> the whole schema), tool schemas the depth limit cut are
    kept whole (:func:`whole_tools`; ``generation``: the registry's change counter, when it has one).
    """
    if not isinstance(messages, list):
        return request
    key = _HISTORY_KEY.get(api_mode if isinstance(api_mode, str) else "", "messages")
    base = request if isinstance(request, dict) else {}
    body = base.get("body")
    if isinstance(body, dict) and not body.get("_truncated"):
        new_body = dict(body)
    else:  # the whole request was cut to a preview: keep what replay needs
        new_body = {"model": model} if isinstance(model, str) and model else {}
    new_body[key] = _scrubbed(hide_printed_in_history(messages))  # cat ~/.vault-token: its output is the credential
    tools = new_body.get("tools")
    if definition_of is not None and isinstance(tools, list):
        new_body["tools"] = whole_tools(tools, definition_of, generation)
    return {**base, "method": base.get("method", "POST"), "body": new_body}
