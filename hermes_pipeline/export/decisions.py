"""Approval and human-input marks → ``approvals`` rows, failed tool calls → ``tool_errors`` rows (issue #27).

An approval row says who decided what, and how long it waited.

The scope kinds put ``hermes.approval.request`` / ``.response`` marks under the tool call that asked (or
the turn), and ``hermes.human_input.request`` / ``.resolved`` under the current scope. The request's
time gives ``waited_ms``; the enclosing ``agent.run`` gives ``trajectory_id`` (the run's id, as in
``task_runs``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from .classify import failure_message
from .events import ScopeEvent
from .ids import uuid_str
from .timestamps import sqlite_utc

__all__ = ["COMMAND_FAILED", "COMMAND_TIMEOUT", "DECISION_MARKS", "Decisions", "tool_error_rows"]

COMMAND_FAILED: Final = "command_failed"
COMMAND_TIMEOUT: Final = "command_timeout"
"""A failed command stopped at its time limit (exit code 124, or a script killed at its limit)."""
"""``tool_errors.error_type`` of a command that exited non-zero while the host reported the call ``ok``."""

_APPROVAL_REQUEST: Final = "hermes.approval.request"
_APPROVAL_RESPONSE: Final = "hermes.approval.response"
_INPUT_REQUEST: Final = "hermes.human_input.request"
_INPUT_RESOLVED: Final = "hermes.human_input.resolved"
DECISION_MARKS: Final = frozenset({_APPROVAL_REQUEST, _APPROVAL_RESPONSE, _INPUT_REQUEST, _INPUT_RESOLVED})
_PENDING_LIMIT: Final = 4096


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


class Decisions:
    """Pairs decision marks into rows. ``run_of(uuid)`` names the ``agent.run`` enclosing a scope (or ``None``)."""

    def __init__(self, run_of: Callable[[int | None], int | None]) -> None:
        self._run_of = run_of
        self._asked: dict[Any, int] = {}

    def feed(self, event: ScopeEvent) -> list[tuple[str, dict[str, Any]]]:
        """The row a decision mark makes (none for a request: it is remembered for the wait)."""
        data = event.data if isinstance(event.data, dict) else {}
        if event.name in (_APPROVAL_REQUEST, _INPUT_REQUEST):
            key = ("approval", event.parent_uuid) if event.name == _APPROVAL_REQUEST else \
                ("input", data.get("request_id"))
            if len(self._asked) < _PENDING_LIMIT:
                self._asked[key] = event.timestamp_us
            return []
        approval = event.name == _APPROVAL_RESPONSE
        asked = self._asked.pop(("approval", event.parent_uuid) if approval else ("input", data.get("request_id")),
                                None)
        run = self._run_of(event.parent_uuid)
        profile = event.profile if isinstance(event.profile, dict) else {}
        meta = event.metadata
        return [("approvals", {
            "decided_at": sqlite_utc(event.timestamp_us), "session_id": _str(meta.get("hermes.session_id")),
            "turn_id": _str(meta.get("hermes.turn_id")), "trajectory_id": uuid_str(run) if run else None,
            "tool_call_id": _str(profile.get("tool_call_id")), "kind": "approval" if approval else "human_input",
            "surface": _str(data.get("surface")) if approval else _str(data.get("kind")),
            "choice": _str(data.get("choice")) if approval else None, "outcome": _str(data.get("outcome")),
            "decided_by": _str(data.get("decided_by")) if approval else None,
            "waited_ms": max(0, event.timestamp_us - asked) // 1000 if asked is not None else None})]


def tool_error_rows(start: ScopeEvent, end: ScopeEvent, run: int | None) -> list[tuple[str, dict[str, Any]]]:
    """A ``tool_errors`` row for a tool call that failed: an error, a block, a cancellation, or a command whose
    exit code is non-zero (``command_failed``, or ``command_timeout`` when it was stopped at its time limit; the
    host's own status is kept in ``status``); none for a successful call."""
    meta = end.metadata
    code = meta.get("process.exit.code")
    code = code if type(code) is int else None
    failed = meta.get("otel.status_code") == "ERROR"
    if not failed and not meta.get("hermes.tool.command_failed"):
        return []
    status = meta.get("hermes.tool.status")
    profile = start.profile if isinstance(start.profile, dict) else {}
    return [("tool_errors", {
        "ended_at": sqlite_utc(end.timestamp_us), "session_id": _str(start.metadata.get("hermes.session_id")),
        "turn_id": _str(start.metadata.get("hermes.turn_id")), "trajectory_id": uuid_str(run) if run else None,
        "tool_call_id": _str(profile.get("tool_call_id")), "tool_name": _str(start.name),
        "status": _str(status) or ("error" if failed else "ok"),
        "error_type": _str(meta.get("error.type")) if failed else
        COMMAND_TIMEOUT if meta.get("hermes.tool.command_timed_out") else COMMAND_FAILED, "exit_code": code,
        # the error's words, else the tool's own output (a command that exited non-zero says why in it)
        "error_message": failure_message(end.data, result=True)})]
