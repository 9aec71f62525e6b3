"""Status and outcome vocabularies of the observer contract.

All of these are *open* sets (OBS-78, OBS-80): consumers must accept values not listed here.
"""

from __future__ import annotations

from enum import StrEnum


class ToolStatus(StrEnum):
    """``post_tool_call.status`` (spec 01 §7.5)."""

    OK = "ok"
    ERROR = "error"
    BLOCKED = "blocked"
    CANCELLED = "cancelled"


class ToolErrorType(StrEnum):
    """Known ``post_tool_call.error_type`` values."""

    TOOL_ERROR = "tool_error"
    PLUGIN_BLOCK = "plugin_block"
    GUARDRAIL_BLOCK = "guardrail_block"
    TOOL_SCOPE_BLOCK = "tool_scope_block"
    KEYBOARD_INTERRUPT = "keyboard_interrupt"
    CANCELLED = "cancelled"
    THREAD_MISSING_RESULT = "thread_missing_result"


class ApprovalChoice(StrEnum):
    """``post_approval_response.choice`` (spec 01 §7.7)."""

    ONCE = "once"
    SESSION = "session"
    ALWAYS = "always"
    DENY = "deny"
    TIMEOUT = "timeout"
    CANCELLED = "cancelled"


class HumanInputOutcome(StrEnum):
    """``on_human_input_resolved.outcome`` (spec 01 §7.8)."""

    SUBMITTED = "submitted"
    PROVIDED = "provided"
    CANCELLED = "cancelled"
    DENY = "deny"
    ERROR = "error"


class ChildStatus(StrEnum):
    """``subagent_stop.child_status`` (spec 01 §7.9)."""

    COMPLETED = "completed"
    FAILED = "failed"
    INTERRUPTED = "interrupted"
    TIMEOUT = "timeout"
    ERROR = "error"


class MiddlewareKind(StrEnum):
    """The four middleware kinds of ``hermes.middleware.v1`` (MW-3)."""

    LLM_REQUEST = "llm_request"
    LLM_EXECUTION = "llm_execution"
    TOOL_REQUEST = "tool_request"
    TOOL_EXECUTION = "tool_execution"
