"""Small pure classifiers shared by the exporters (spec 04 §4.3, FMT-13, SM-24, BOOK-9)."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

_TOOL_ERROR_TYPE: Final = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
_CONNECTION_HINTS: Final = ("connect", "connection", "dns", "ssl", "tls", "socket", "resolve")
_APPROVED: Final = frozenset({"once", "session", "always", "approve", "approved", "smart_approve"})
_DENIED: Final = frozenset({"deny", "denied", "smart_deny"})
_TIMED_OUT: Final = frozenset({"timeout", "timed_out"})
_MEMORY_WRITES: Final = frozenset({"add", "replace", "remove"})


def llm_error_type(reason: str | None, status_code: int | None, error_class: str | None) -> str:
    """``error.type`` of a failed provider attempt: the first matching row of FMT-66."""
    reason_l = (reason or "").lower()
    cls = (error_class or "").lower()
    if reason_l in ("provider_policy_blocked", "guardrail", "guardrail_rejected") or cls == "llmexecutionblocked":
        return "guardrail_rejected"
    if reason_l in ("interrupted", "cancelled") or cls in ("keyboardinterrupt", "cancellederror"):
        return "cancelled"
    if "timeout" in cls or "timedout" in cls:
        return "timeout"
    # The error class before the reason: Hermes' classifier gives every transport failure (a refused connection, a
    # DNS or TLS error) the reason "timeout", while the class still says what it was.
    if status_code is None and any(hint in cls for hint in _CONNECTION_HINTS):
        return "connection_error"
    if "timeout" in reason_l:
        return "timeout"
    if status_code in (401, 403) or reason_l == "auth":
        return "authentication"
    if status_code == 429 or reason_l in ("rate_limit", "rate_limited"):
        return "rate_limited"
    if "context" in reason_l:
        return "context_window"
    if status_code == 404 or reason_l in ("model_not_found", "model_unavailable"):
        return "model_unavailable"
    if status_code is not None and 400 <= status_code < 500:
        return "invalid_request"
    if (status_code is not None and status_code >= 500) or reason_l in ("server_error", "overloaded", "upstream_error"):
        return "upstream_error"
    return "_OTHER"


def tool_error_type(status: str, error_type: str | None) -> str | None:
    """``error.type`` of a tool end (FMT-66), ``None`` for a successful call."""
    if status == "ok":
        return None
    if status == "blocked":
        return "blocked"
    if status == "cancelled":
        return "cancelled"
    if status == "error":
        return error_type if isinstance(error_type, str) and _TOOL_ERROR_TYPE.match(error_type) else "tool_error"
    return "_OTHER"


def turn_error_type(interrupted: bool, failed: bool, exit_reason: str | None, reason: str | None,
                    provider_error: str | None = None) -> str | None:
    """``error.type`` of an ``agent.run`` end, ``None`` when the turn did not end in error.

    A turn that failed while its last provider attempt had failed (nothing succeeded after it) failed
    *because of the provider*: it carries that attempt's type (:func:`llm_error_type`: ``rate_limited``,
    ``upstream_error``, ``authentication``, ``timeout``, ``connection_error``, ...), so the dashboard, the
    digest and the alert rules see the cause, not ``_OTHER``.
    """
    if interrupted:
        return "cancelled"
    if not failed:
        return None
    if provider_error and provider_error != "_OTHER":
        return provider_error
    text = f"{exit_reason or ''} {reason or ''}".lower()
    return "timeout" if "timeout" in text else "_OTHER"


def child_error_type(status: str, provider_error: str | None = None) -> str | None:
    """``error.type`` of a subagent session end, ``None`` for ``completed``.

    A child that failed while its last turn had failed because of the provider carries the provider's
    type (as :func:`turn_error_type`).
    """
    status = (status or "").lower()
    if status == "completed":
        return None
    if status == "interrupted":
        return "cancelled"
    if status == "timeout":
        return "timeout"
    if provider_error and provider_error != "_OTHER":
        return provider_error
    return "_OTHER"


def exit_code_failed(exit_code: object) -> bool:
    """Whether a command's exit code says it failed: any integer other than 0 (``None``: no command)."""
    return isinstance(exit_code, int) and not isinstance(exit_code, bool) and exit_code != 0


TIMED_OUT_EXIT: Final = 124
"""The exit code of a command stopped at its time limit: Hermes' ``terminal`` (its ``[Command timed out after Ns]``)
and coreutils' ``timeout`` alike."""
_TIMEOUT_STATUS: Final = re.compile(r'"status"\s*:\s*"timeout"')


def command_timed_out(exit_code: object, result: object) -> bool:
    """Whether a failed command was stopped at its time limit: exit code :data:`TIMED_OUT_EXIT`, or a result
    object whose ``status`` is ``"timeout"`` (Hermes' ``execute_code`` kills the script, which exits by signal)."""
    if not exit_code_failed(exit_code):
        return False
    if exit_code == TIMED_OUT_EXIT:
        return True
    if not isinstance(result, str) or _TIMEOUT_STATUS.search(result) is None:
        return False
    try:
        value = json.loads(result)
    except ValueError:
        return False
    return isinstance(value, dict) and value.get("status") == "timeout"


ERROR_MESSAGE_CHARS: Final = 1000
"""Longest error message (code points) a stored row or a trajectory step keeps; the ATOF event keeps the whole."""


def failure_message(data: Mapping[str, Any] | None, *, result: bool = False) -> str | None:
    """Why a failed scope failed, in the host's words, bounded to :data:`ERROR_MESSAGE_CHARS`: the end's
    ``error_message`` (a tool's or a provider's error), else its ``reason`` (a turn's), else with ``result``
    the tool's own result text (a command that exited non-zero says why in its output). ``None`` when the
    end says nothing. The text was credential-scrubbed where the event entered the pipeline."""
    if not isinstance(data, Mapping):
        return None
    keys = ("error_message", "reason", "result") if result else ("error_message", "reason")
    for key in keys:
        value = data.get(key)
        if isinstance(value, str) and value.strip():
            text = value.strip()
            return text if len(text) <= ERROR_MESSAGE_CHARS else text[:ERROR_MESSAGE_CHARS - 1] + "…"
    return None


_SMART_DECIDERS: Final = frozenset({"aux_llm", "smart", "smart_approval", "llm"})


def approval_decider(decided_by: str | None, surface: str | None, choice: str | None) -> str:
    """Who decided an approval: ``user``, ``smart_approval`` (an auxiliary model's review), ``timeout``
    (nobody answered in time) or ``none`` (withdrawn unanswered); another host word passes through
    when it is a plain identifier."""
    raw = (decided_by or "").strip().lower()
    outcome = approval_outcome(choice)
    if raw in _SMART_DECIDERS or (not raw and (surface or "").lower() == "smart"):
        return "smart_approval"
    if raw in ("timeout", "timed_out") or (not raw and outcome == "timed_out"):
        return "timeout"
    if raw in ("none", "withdrawn") or (not raw and (choice or "").lower() == "cancelled"):
        return "none"
    if raw and _TOOL_ERROR_TYPE.match(raw):
        return raw
    return "user"


def approval_outcome(choice: str | None) -> str:
    """``approved`` / ``denied`` / ``timed_out`` / ``unknown`` for an approval choice (SM-24)."""
    value = (choice or "").lower()
    if value in _APPROVED:
        return "approved"
    if value in _DENIED:
        return "denied"
    if value in _TIMED_OUT:
        return "timed_out"
    return "unknown"


def tool_span_kind(tool_name: str, args: Mapping[str, Any] | None, memory_tools: Mapping[str, str]) -> str:
    """``hermes.span_kind`` of a tool scope: ``memory.update``, ``memory.retrieve`` or ``tool.execute`` (BOOK-9).

    Only the rules decidable from hook fields apply here (the configured override map, the
    built-in ``memory`` and ``session_search`` tools); toolset-based rules need the registry.
    """
    if memory_tools:
        configured = memory_tools.get(tool_name)
        if configured is not None:
            return configured
    if tool_name == "memory":
        if isinstance(args, str):  # some providers' arguments arrive as the JSON text
            try:
                args = json.loads(args)
            except ValueError:
                args = None
        action = args.get("action") if isinstance(args, Mapping) else None
        operations = args.get("operations") if isinstance(args, Mapping) else None
        # Hermes' batch shape (``operations``, the one its tool description recommends) writes too
        batch = bool(operations) and isinstance(operations, list | str)
        return "memory.update" if action in _MEMORY_WRITES or batch else "memory.retrieve"
    if tool_name == "session_search":
        return "memory.retrieve"
    return "tool.execute"


@functools.lru_cache(maxsize=64)
def strip_url(url: str) -> str:
    """``url`` without userinfo, query and fragment (``hermes.base_url``, FMT-13)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"
        port = parts.port
    except ValueError:
        return ""
    netloc = f"{host}:{port}" if port is not None else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


# ------------------------------- tool categories, from the declaring toolset, never the tool name (SM-25)

TOOL_CATEGORIES: Final = frozenset({"browser", "code_execution", "communication", "computer_use", "delegation",
                                    "file", "home_automation", "mcp", "media", "memory", "other", "planning",
                                    "project", "scheduler", "skill", "terminal", "unknown", "web"})
"""The closed ``tool_category`` set of the shared-metrics contract (also ``hermes.tool.category``)."""

_CATEGORY_NAMES: Final = TOOL_CATEGORIES - {"other", "unknown"}
_CATEGORY_PREFIXES: Final = (
    (("mcp",), "mcp"),
    (("browser",), "browser"),
    (("image", "tts", "video", "vision"), "media"),
    (("homeassistant",), "home_automation"),
)
_CATEGORY_EXACT: Final = {"clarify": "planning", "kanban": "planning", "todo": "planning", "session_search": "memory",
                          "cronjob": "scheduler", "skills": "skill", "x_search": "web"}
_COMMUNICATION_PREFIXES: Final = ("discord", "email", "feishu", "hermes-yuanbao", "slack", "sms")


_categories: dict[str, str] = {}
"""The category of each toolset name seen lately (a process has a few dozen; emptied past 1,024)."""


def tool_category(toolset: object) -> str:
    """SM-25: the declaring toolset (never the tool name) → tool category; the first rule wins."""
    if type(toolset) is not str:
        return "unknown" if toolset is None else _category(toolset)
    known = _categories.get(toolset)
    if known is None:
        if len(_categories) >= 1024:
            _categories.clear()
        known = _categories[toolset] = _category(toolset)
    return known


def _category(toolset: object) -> str:
    name = toolset.strip().lower() if isinstance(toolset, str) else ""
    if not name:
        return "unknown"
    if name in _CATEGORY_NAMES:
        return name
    for prefixes, category in _CATEGORY_PREFIXES:
        if name.startswith(prefixes):
            return category
    if name in _CATEGORY_EXACT:
        return _CATEGORY_EXACT[name]
    if name.startswith(_COMMUNICATION_PREFIXES):
        return "communication"
    return "other"
