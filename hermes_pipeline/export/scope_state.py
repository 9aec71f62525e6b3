"""The open-scope table's entries: one open session and one open turn (what the scope tracker keeps).

A :class:`SessionState` is what :class:`~hermes_pipeline.export.scopes.ScopeTracker` keeps for each open
Hermes session (or subagent session): its session scope, and the turns, provider attempts, tool calls and
child sessions open inside it, each keyed by the hook field that names it (``turn_id``,
``api_request_id``, ``tool_call_id``, ``session_id``). The scope kinds read and change these under the
tracker's lock only.
"""

from __future__ import annotations

from typing import Any

from .events import ScopeEvent


class TurnState:
    """An open ``agent.run`` scope and the turn facts its end needs."""

    __slots__ = ("clean_ids", "final_response", "provider_error", "provider_message", "scope", "task_id", "turn_id")

    def __init__(self, scope: ScopeEvent, task_id: str, turn_id: str) -> None:
        self.scope = scope
        self.task_id = task_id
        self.turn_id = turn_id
        self.final_response: str | None = None
        self.provider_error: str | None = None
        """``error.type`` of the turn's last provider attempt when it failed (``None`` after a success)."""
        self.provider_message: str | None = None
        """That failed attempt's error message (the turn's end says why with it when the host gave no reason)."""
        self.clean_ids: tuple[str, str, str, str] | None = None
        """The ``(session_id, task_id, turn_id, api_request_id)`` string objects a tool start of the turn last found
        known clean (the tool kind's memo: the next call of the turn that passes these very objects needs no
        look-up; any other object is looked up again)."""


class SessionState:
    """One Hermes session (or subagent session) with an open session scope."""

    __slots__ = ("children", "extra", "llm", "model", "parent", "parent_turn_id", "parent_uuid", "pending_close",
                 "platform", "provider_error", "root", "scope", "session_id", "tools", "turns")

    def __init__(self, session_id: str, parent: SessionState | None, parent_uuid: int | None) -> None:
        self.session_id = session_id
        self.parent = parent
        self.parent_uuid = parent_uuid
        self.parent_turn_id = ""
        self.scope: ScopeEvent | None = None
        self.root = 0
        self.platform: str | None = None
        self.model: str | None = None
        self.extra: dict[str, Any] = {}
        """Metadata repeated on every segment's session start (subagent role and parent link)."""
        self.turns: dict[str, TurnState] = {}
        self.llm: dict[str, ScopeEvent] = {}
        self.tools: dict[str, ScopeEvent] = {}
        self.children: dict[str, SessionState] = {}
        self.pending_close: str | None = None
        """A close deferred until the live turn ends (ID-rotating compaction, CFG-75)."""
        self.provider_error: str | None = None
        """``error.type`` of the provider failure that ended the session's last turn, if one did."""
