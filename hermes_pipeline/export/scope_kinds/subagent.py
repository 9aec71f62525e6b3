"""Subagents → a session scope of their own under the delegating call (spec 04 §2.11 FMT-24 rows 16-17, note 5).

``subagent_start`` opens the child's session scope (``hermes.scope_role = "subagent"``) under the
parent's open delegating tool call (the caller's tool-call context, captured with the record, else the
turn's last open tool call), else under the parent's ``agent.run``; ``subagent_stop`` ends it with the
child's status. A background child can outlive its parent turn and even its parent session: where an
ended child sat is remembered (the tracker tells this kind when a session closed), and a later hook of
it continues it in place (the tracker asks this kind before opening a new session), never as a second
root (FMT-20).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Final

from ..classify import child_error_type
from ..publication import capture_context
from ..scope_state import SessionState
from ..scopes import AGENT_VERSION_KEY, ScopeTracker, base_meta

_FORMER_LIMIT: Final = 1024
"""Ended subagent sessions whose placement is remembered for their late hooks (oldest forgotten first)."""


@dataclass(slots=True)
class _Placement:
    """Where an ended subagent session sat: a late hook of it reopens it there, never as a new root."""

    parent: SessionState
    parent_uuid: int | None
    parent_turn_id: str
    extra: dict[str, Any]
    platform: str | None
    child_role: Any
    ended_us: int


class Subagents:
    """Rows 16-17 (see the module docstring)."""

    def __init__(self, tracker: ScopeTracker) -> None:
        self.tracker = tracker
        self._former: OrderedDict[str, _Placement] = OrderedDict()
        tracker.on_session_closed(self._session_closed)
        tracker.set_reopener(self._reopen)

    def ended_here(self, session_id: str) -> bool:
        """Whether ``session_id`` is an ended subagent session of this process (so not a resumed one)."""
        return session_id in self._former

    def _session_closed(self, st: SessionState, reason: str) -> None:
        if st.parent is None or st.extra.get("hermes.scope_role") != "subagent":
            return
        start = st.scope
        role = start.data.get("child_role") if start is not None and isinstance(start.data, dict) else None
        former = self._former
        former[st.session_id] = _Placement(st.parent, st.parent_uuid, st.parent_turn_id, dict(st.extra),
                                           st.platform, role, self.tracker.now())
        former.move_to_end(st.session_id)
        while len(former) > _FORMER_LIMIT:
            former.popitem(last=False)

    def _reopen(self, session_id: str) -> SessionState | None:
        place = self._former.get(session_id)
        return None if place is None else self._continue(session_id, place)

    def _continue(self, session_id: str, place: _Placement) -> SessionState:
        """Open the continuation of an ended subagent session, from the end of its previous scope."""
        del self._former[session_id]
        st = SessionState(session_id, place.parent, place.parent_uuid)
        st.parent_turn_id = place.parent_turn_id
        st.platform = place.platform
        st.extra = dict(place.extra)
        return self.tracker.open_session(session_id, {"child_role": place.child_role, "continued": True},
                                         base_meta(session_id), state=st, ts=place.ended_us + 1)

    def _delegating_parent(self, parent: SessionState, turn_id: str) -> int:
        """Note 5: the open delegating tool scope if one is open, else the parent ``agent.run``."""
        ambient = self.tracker.replayed_context() or capture_context()
        if ambient is not None and ambient[0] == parent.session_id:
            tool = parent.tools.get(ambient[1])
            if tool is not None:
                return tool.uuid
        tools = [s for s in parent.tools.values() if not turn_id or s.metadata.get("hermes.turn_id") == turn_id]
        if tools:
            return tools[-1].uuid
        return self.tracker.turn_parent(parent, turn_id)

    def subagent_start(self, parent_session_id: str, parent_turn_id: str, child_session_id: str, child_role: str,
                       child_goal: str) -> None:
        tracker = self.tracker
        with tracker.lock:
            parent = tracker.implicit_session(parent_session_id)
            stale = tracker.sessions.get(child_session_id)
            if stale is not None:
                tracker.close_session(stale, {"reason": "orphan"}, "orphan", synthetic=True)
            st = SessionState(child_session_id, parent, self._delegating_parent(parent, parent_turn_id))
            st.parent_turn_id = parent_turn_id
            st.platform = parent.platform
            st.extra = {"hermes.scope_role": "subagent", "hermes.parent_session_id": parent_session_id}
            if AGENT_VERSION_KEY in parent.extra:  # a subagent runs in the same host agent
                st.extra[AGENT_VERSION_KEY] = parent.extra[AGENT_VERSION_KEY]
            tracker.open_session(child_session_id, {"child_role": child_role, "child_goal": child_goal},
                                 base_meta(child_session_id), state=st)

    def subagent_stop(self, parent_session_id: str, parent_turn_id: str, child_session_id: str, child_role: str,
                      child_status: str, child_summary: str | None, duration_ms: int) -> None:
        data = {"child_status": child_status, "child_summary": child_summary, "duration_ms": duration_ms}
        meta = base_meta(child_session_id)
        tracker = self.tracker
        with tracker.lock:
            known = tracker.sessions.get(child_session_id)
            error = child_error_type(child_status, known.provider_error if known is not None else None)
            meta["otel.status_code"] = "OK" if error is None else "ERROR"
            if error is not None:
                meta["error.type"] = error
            st = tracker.sessions.get(child_session_id)
            if st is None and child_session_id in self._former:  # its session ended earlier: the rest of its run
                st = self._continue(child_session_id, self._former[child_session_id])
            if st is None:  # never saw subagent_start: make the start from the reported duration
                parent = tracker.implicit_session(parent_session_id)
                st = SessionState(child_session_id, parent, self._delegating_parent(parent, parent_turn_id))
                st.parent_turn_id = parent_turn_id
                st.extra = {"hermes.scope_role": "subagent", "hermes.parent_session_id": parent_session_id}
                ts = tracker.now() - 1000 * (duration_ms if isinstance(duration_ms, int) else 0) - 1
                tracker.open_session(child_session_id, {"child_role": child_role}, base_meta(child_session_id),
                                     state=st, ts=ts)
            tracker.close_session(st, data, None, meta=meta)
