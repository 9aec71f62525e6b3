"""Sessions → the ``session`` scope (spec 04 §2.11 FMT-24 rows 1-2 and 21, CFG-75).

A session scope opens at ``on_session_start`` or, when that hook never came, with the first hook of the
session (``ScopeTracker.implicit_session``), and ends at ``on_session_finalize`` or, for the old session
of a reset, at ``on_session_reset``; ending it first ends everything still open inside it
(``ScopeTracker.close_session``). ``on_session_segment`` (a hermes_pipeline extension hook) ends the
current segment with ``close_reason = "rotation"`` and opens the next one under the same session id
(note 4). ``on_compaction`` is a ``hermes.compaction`` mark (row 21); an ID-rotating compaction ends the
old session, after its live turn when one is open, and its new id's first turn is no resumed session;
the mark hands first-party listeners the new id as a fact (never rendered: the open tasks of the old id go on
under the new one, SM-21).
"""

from __future__ import annotations

from typing import Final

from ..scope_state import SessionState
from ..scopes import ScopeTracker, base_meta

_SUCCESSOR_LIMIT: Final = 1024
"""New session ids of ID-rotating compactions remembered until their first turn."""


class Sessions:
    """Rows 1-2 and 21 (see the module docstring)."""

    def __init__(self, tracker: ScopeTracker) -> None:
        self.tracker = tracker
        self._successors: set[str] = set()
        """New session ids announced by an ID-rotating compaction: their first turn here is no resume."""

    def take_successor(self, session_id: str) -> bool:
        """Whether ``session_id`` was announced by an ID-rotating compaction (forgotten once asked)."""
        if session_id in self._successors:
            self._successors.discard(session_id)
            return True
        return False

    def on_session_start(self, session_id: str, model: str, platform: str, agent_version: str | None) -> None:
        tracker = self.tracker
        with tracker.lock:
            st = tracker.sessions.get(session_id)
            if st is None:
                tracker.implicit_session(session_id, model, platform, agent_version)
            else:
                st.model = st.model or model
                st.platform = st.platform or platform

    def on_session_finalize(self, session_id: str, reason: str) -> None:
        tracker = self.tracker
        with tracker.lock:
            st = tracker.sessions.get(session_id)
            if st is not None:
                tracker.close_session(st, {"reason": reason}, None)

    def on_session_reset(self, reason: str, old_session_id: str | None) -> None:
        tracker = self.tracker
        with tracker.lock:
            st = tracker.sessions.get(old_session_id or "")
            if st is not None:
                tracker.close_session(st, {"reason": reason or "new_session"}, None)

    def on_session_segment(self, session_id: str, segment: int, segment_reason: str, platform: str,
                           model: str) -> None:
        tracker = self.tracker
        with tracker.lock:
            st = tracker.sessions.get(session_id)
            seg_meta = {"hermes.session.segment": segment, "hermes.session.segment_reason": segment_reason}
            if st is None:
                st = SessionState(session_id, None, None)
            else:
                meta = base_meta(session_id)
                meta["hermes.close_reason"] = "rotation"
                meta["otel.status_code"] = "OK"
                tracker.close_session(st, {"reason": "rotation", "hermes.session.segment_reason": segment_reason},
                                      "rotation", meta=meta, keep=True)
            st.platform = st.platform or platform
            st.model = st.model or model
            meta = base_meta(session_id)
            meta.update(seg_meta)
            data = {k: v for k, v in (("model", st.model), ("platform", st.platform)) if v is not None}
            tracker.open_session(session_id, data or None, meta, state=st)

    def on_compaction(self, session_id: str, new_session_id: str, rotated: bool) -> None:
        tracker = self.tracker
        with tracker.lock:
            st = tracker.sessions.get(session_id)
            if st is None:  # CFG-75: a compaction notice for an unknown session is a no-op
                return
            moved = rotated and new_session_id != session_id and isinstance(new_session_id, str) and new_session_id
            facts = {"new_session_id": new_session_id} if moved and tracker.reads_facts else None
            tracker.mark(st, tracker.current_parent(st), "hermes.compaction", None, None, {"rotated": bool(rotated)},
                         base_meta(session_id), facts=facts)
            if rotated and new_session_id != session_id:
                if len(self._successors) < _SUCCESSOR_LIMIT:
                    self._successors.add(new_session_id)
                if st.turns:  # CFG-75: deferred until the live turn ends
                    st.pending_close = "compaction"
                else:
                    tracker.close_session(st, {"reason": "compaction"}, None)
