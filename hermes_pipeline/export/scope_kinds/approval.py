"""Approvals and human input → marks (spec 04 §2.11 FMT-24 rows 12-15).

An approval request and its response are ``hermes.approval.request`` / ``hermes.approval.response``
marks under the tool call they gate (category ``tool`` with its ``tool_call_id``) when that call is open,
else under the innermost open scope of the session (``ScopeTracker.current_parent``). A request for
human input and its resolution are ``hermes.human_input.request`` / ``hermes.human_input.resolved``
marks under that innermost scope. A mark without a session id has no parent and no session.
"""

from __future__ import annotations

from typing import Any

from ..classify import approval_decider, approval_outcome
from ..scope_state import SessionState
from ..scopes import ScopeTracker, base_meta


class Approvals:
    """Rows 12-15 (see the module docstring)."""

    def __init__(self, tracker: ScopeTracker) -> None:
        self.tracker = tracker

    def _parent(self, session_id: str, turn_id: str = "", tool_call_id: str = "") -> tuple[SessionState | None, int | None]:
        if not session_id:
            return None, None
        tracker = self.tracker
        st = tracker.implicit_session(session_id)
        tool = st.tools.get(tool_call_id) if tool_call_id else None
        if tool is not None:
            return st, tool.uuid
        return st, tracker.current_parent(st, turn_id)

    def _approval(self, name: str, session_id: str, turn_id: str, tool_call_id: str, data: dict[str, Any]) -> None:
        meta = base_meta(session_id or "")
        if turn_id:
            meta["hermes.turn_id"] = turn_id
        tracker = self.tracker
        with tracker.lock:
            st, parent = self._parent(session_id, turn_id, tool_call_id)
            if tool_call_id:
                tracker.mark(st, parent, name, "tool", {"tool_call_id": tool_call_id}, data, meta)
            else:
                tracker.mark(st, parent, name, None, None, data, meta)

    def pre_approval_request(self, command: str, description: str, pattern_keys: list[str], surface: str,
                             turn_id: str, tool_call_id: str, session_id: str) -> None:
        self._approval("hermes.approval.request", session_id, turn_id, tool_call_id,
                       {"surface": surface, "pattern_keys": list(pattern_keys or ()), "command": command,
                        "description": description})

    def post_approval_response(self, surface: str, turn_id: str, tool_call_id: str, session_id: str,
                               choice: str, decided_by: str | None) -> None:
        self._approval("hermes.approval.response", session_id, turn_id, tool_call_id,
                       {"surface": surface, "choice": choice, "outcome": approval_outcome(choice),
                        "decided_by": approval_decider(decided_by, surface, choice)})

    def _human(self, name: str, session_id: str, data: dict[str, Any]) -> None:
        tracker = self.tracker
        with tracker.lock:
            st, parent = self._parent(session_id)
            tracker.mark(st, parent, name, None, None, data, base_meta(session_id or ""))

    def on_human_input_request(self, kind: str, request_id: str, session_id: str, prompt: str) -> None:
        self._human("hermes.human_input.request", session_id, {"kind": kind, "request_id": request_id, "prompt": prompt})

    def on_human_input_resolved(self, kind: str, request_id: str, session_id: str, outcome: str) -> None:
        self._human("hermes.human_input.resolved", session_id,
                    {"kind": kind, "request_id": request_id, "outcome": outcome})
