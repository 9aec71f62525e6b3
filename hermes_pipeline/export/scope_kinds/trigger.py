"""Gateway dispatch → the ``trigger.process`` scope (spec 04 §2.11 FMT-24 rows 3-4).

Only Hermes' gateway fires ``pre_gateway_dispatch`` (forwarded by the Hermes bridge, which adds the
message's ``platform``, ``event_type``, ``session_key`` and, when the session already exists,
``session_id``, and fires ``post_gateway_dispatch`` with the dispatch decision). The rule: the scope
starts at ``pre_gateway_dispatch`` with ``data = {platform, event_type}``; it ends when the outcome
is known, that is at once with ``{"action": "skip"}`` for a dropped message, otherwise at the next
``pre_llm_call`` of that session with ``{"action": "allow"}`` or ``{"action": "rewrite"}`` (the turn
kind calls :meth:`Triggers.end_for_turn`). The scope sits under the session scope when the session is
open, else it is a root of its own; a message whose session was not known yet is ended by the next
turn that starts on the same platform. Hosts that never fire these hooks get nothing from this module.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from ..events import ScopeEvent
from ..scope_state import SessionState
from ..scopes import CLOSE_REASON, ScopeTracker, base_meta

TRIGGER_SCOPE: Final = "trigger.process"


@dataclass
class _Trigger:
    start: ScopeEvent
    holder: SessionState
    session_id: str
    session_key: str
    platform: str
    action: str | None = None


class Triggers:
    """Rows 3-4: one ``trigger.process`` scope per gateway message (see the module docstring)."""

    def __init__(self, tracker: ScopeTracker) -> None:
        self.tracker = tracker
        self._pending: list[_Trigger] = []
        """Dispatches whose outcome (skip, or the turn they led to) is not known yet, oldest first."""

    def pre_gateway_dispatch(self, platform: str, event_type: str, session_key: str, session_id: str) -> None:
        tracker = self.tracker
        ts = tracker.now()
        with tracker.lock:
            st = tracker.sessions.get(session_id) if session_id else None
            holder = st if st is not None and st.scope is not None else SessionState("", None, None)
            parent = holder.scope.uuid if holder.scope is not None else None
            meta = base_meta(session_id or "")
            meta["hermes.span_kind"] = TRIGGER_SCOPE
            if platform:
                meta["hermes.platform"] = platform
            if session_key:
                meta["hermes.session_key"] = session_key
            start = tracker.start(holder, parent, TRIGGER_SCOPE, "function", (), None,
                                  {"platform": platform or "", "event_type": event_type or ""}, meta, ts)
            self._pending.append(_Trigger(start, holder, session_id or "", session_key or "", platform or ""))

    def post_gateway_dispatch(self, session_key: str, session_id: str, action: str) -> None:
        with self.tracker.lock:
            pending = self._pending
            match = next((t for t in reversed(pending) if t.action is None and t.session_key == (session_key or "")
                          and (not session_id or t.session_id in ("", session_id))), None)
            if match is None:
                return
            match.action = action or "allow"
            if match.action == "skip":
                pending.remove(match)
                self._end(match, None)

    def _end(self, trigger: _Trigger, reason: str | None) -> None:
        meta = base_meta(trigger.session_id)
        if reason is not None:
            meta[CLOSE_REASON] = reason
        else:
            meta["otel.status_code"] = "OK"
        self.tracker.end(trigger.holder, trigger.start, {"action": trigger.action or "allow"}, meta)

    def end_for_turn(self, session_id: str, platform: str) -> None:
        """A turn starts in ``session_id`` (lock held): the dispatch that led to it is over."""
        pending = self._pending
        if not pending:
            return
        mine = [t for t in pending if t.session_id == session_id]
        if not mine:
            mine = [t for t in pending if not t.session_id and t.platform == platform][:1]
        for trigger in mine:
            pending.remove(trigger)
            self._end(trigger, None)

    def close_all(self, reason: str) -> None:
        """End every open ``trigger.process`` scope with ``hermes.close_reason = reason`` (shutdown)."""
        with self.tracker.lock:
            pending = self._pending
            while pending:
                self._end(pending.pop(), reason)


__all__ = ["TRIGGER_SCOPE", "Triggers"]
