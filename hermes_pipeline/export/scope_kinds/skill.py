"""Skill lifecycle → marks and the detached ``skill.run`` scope (spec 04 §2.11 FMT-24 rows 18-20).

The rule, in plain words:

- a successful skill *load* inside a turn emits a ``hermes.skill.load`` mark and opens a
  ``skill.run`` scope (category ``function``) whose parent is the turn's ``agent.run`` scope; the
  scope is *detached*: it is never on the logical stack, so later tool and LLM scopes keep the turn
  as their parent (FMT-21);
- that ``skill.run`` scope ends when its ``agent.run`` ends (the turn kind calls :meth:`SkillRuns.end_runs`,
  and a closing session ends the runs of its open turns through the tracker's
  :meth:`~hermes_pipeline.export.scopes.ScopeTracker.on_session_closing`), with ``data.outcome`` =
  ``success`` when the turn completed, ``cancelled`` when it was interrupted, else ``failed`` (BOOK-8);
- any other action (``created``, ``patched``, ``edited``, ``stale``, ``archived``, ``restored``,
  ``installed``) is a ``hermes.skill.lifecycle`` mark ``{action, skill_name, provenance}``; the
  reason supplied with the change, if any, rides in its metadata as ``hermes.skill.reason``.

A load outside any turn gives only the mark.
"""

from __future__ import annotations

from typing import Any, Final

from ..events import ScopeEvent
from ..scope_state import SessionState, TurnState
from ..scopes import CLOSE_REASON, ScopeTracker, base_meta

SKILL_SCOPE: Final = "skill.run"
LOAD_MARK: Final = "hermes.skill.load"
LIFECYCLE_MARK: Final = "hermes.skill.lifecycle"


def turn_outcome(data: dict[str, Any] | None) -> str:
    """``success`` / ``cancelled`` / ``failed`` from an ``agent.run`` end's data (BOOK-8)."""
    if data and data.get("completed") is True:
        return "success"
    if data and data.get("interrupted") is True:
        return "cancelled"
    return "failed"


class SkillRuns:
    """Rows 18-20 (see the module docstring)."""

    def __init__(self, tracker: ScopeTracker) -> None:
        self.tracker = tracker
        self._open: dict[tuple[str, str], list[ScopeEvent]] = {}
        """Open ``skill.run`` starts by ``(session_id, turn_id)``, in the order they were loaded."""
        tracker.on_session_closing(self._session_closing)

    def on_skill_lifecycle(self, action: str, skill_name: str, provenance: str | None, reason: str | None,
                           session_id: str, turn_id: str, use_count: int | None, reused: bool | None,
                           reuse_after_patch: bool | None) -> None:
        if not session_id or not isinstance(action, str) or not isinstance(skill_name, str):
            return
        tracker = self.tracker
        with tracker.lock:
            st = tracker.implicit_session(session_id)
            meta = base_meta(session_id)
            if turn_id:
                meta["hermes.turn_id"] = turn_id
            parent = tracker.current_parent(st, turn_id)
            if action != "loaded":
                if isinstance(reason, str) and reason:  # the change's stated reason (skill history), scrubbed
                    meta["hermes.skill.reason"] = reason
                tracker.mark(st, parent, LIFECYCLE_MARK, None, None,
                             {"action": action, "skill_name": skill_name, "provenance": provenance}, meta)
                return
            data = {"skill_name": skill_name, "provenance": provenance, "use_count": use_count,
                    "reused": reused, "reuse_after_patch": reuse_after_patch}
            tracker.mark(st, parent, LOAD_MARK, None, None, data, meta)
            turn = st.turns.get(turn_id) if turn_id else (next(iter(st.turns.values())) if len(st.turns) == 1 else None)
            if turn is None:
                return
            scope_meta = dict(meta)
            scope_meta.update({"hermes.turn_id": turn.turn_id, "hermes.task_id": turn.task_id,
                               "hermes.span_kind": SKILL_SCOPE, "hermes.skill.name": skill_name,
                               "hermes.skill.provenance": provenance,
                               "hermes.skill.reuse_state": _reuse_state(reused, reuse_after_patch)})
            scope = tracker.start(st, turn.scope.uuid, SKILL_SCOPE, "function", (), None, dict(data), scope_meta,
                                  tracker.now())
            self._open.setdefault((session_id, turn.turn_id), []).append(scope)

    def end_runs(self, st: SessionState, turn: TurnState, data: dict[str, Any] | None,
                 reason: str | None = None) -> None:
        """End the ``skill.run`` scopes opened in ``turn`` (before the turn's own end; lock held)."""
        runs = self._open
        if not runs:
            return
        scopes = runs.pop((st.session_id, turn.turn_id), None)
        outcome = turn_outcome(data)
        for scope in reversed(scopes or ()):
            meta = base_meta(st.session_id)
            meta["hermes.turn_id"] = turn.turn_id
            meta["otel.status_code"] = "OK" if outcome == "success" else "ERROR"
            if outcome != "success":
                meta["error.type"] = "cancelled" if outcome == "cancelled" else "skill_failed"
            if reason is not None:
                meta[CLOSE_REASON] = reason
            self.tracker.end(st, scope, {"outcome": outcome}, meta)

    def _session_closing(self, st: SessionState, reason: str) -> None:
        for turn in list(st.turns.values()):  # turns closed with the session end their skill runs first
            self.end_runs(st, turn, None, reason)


def _reuse_state(reused: bool | None, after_patch: bool | None) -> str:
    if after_patch:
        return "reused_after_patch"
    if reused:
        return "reused"
    return "first_use" if reused is False else "unknown"
