"""Skill lifecycle → marks and the detached ``skill.run`` scope (spec 04 §2.11 FMT-24 rows 18-20).

The rule, in plain words:

- a successful skill *load* inside a turn emits a ``hermes.skill.load`` mark and opens a
  ``skill.run`` scope (category ``function``) whose parent is the turn's ``agent.run`` scope; the
  scope is *detached*: it is never on the logical stack, so later tool and LLM scopes keep the turn
  as their parent (FMT-21);
- that ``skill.run`` scope ends when its ``agent.run`` ends, with ``data.outcome`` = ``success``
  when the turn completed, ``cancelled`` when it was interrupted, else ``failed`` (BOOK-8);
- any other action (``created``, ``patched``, ``edited``, ``stale``, ``archived``, ``restored``,
  ``installed``) is a ``hermes.skill.lifecycle`` mark ``{action, skill_name, provenance}``; the
  reason supplied with the change, if any, rides in its metadata as ``hermes.skill.reason``.

A load outside any turn gives only the mark. :class:`SkillHooks` is a mixin of
:class:`~hermes_pipeline.export.projection.ScopePlugin`.
"""

from __future__ import annotations

from typing import Any, Final

from .events import ScopeEvent
from .publication import deferrable
from .scopes import CLOSE_REASON, ScopeTracker, SessionState, TurnState, base_meta

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


class SkillHooks(ScopeTracker):
    """Rows 18-20 (see the module docstring)."""

    def _skill_runs(self) -> dict[tuple[str, str], list[ScopeEvent]]:
        runs: dict[tuple[str, str], list[ScopeEvent]] | None = getattr(self, "_open_skill_runs", None)
        if runs is None:
            runs = {}
            self._open_skill_runs = runs
        return runs

    @deferrable()
    def on_skill_lifecycle(self, action: str, skill_name: str, provenance: str | None, reason: str | None,
                           session_id: str, turn_id: str, use_count: int | None, reused: bool | None,
                           reuse_after_patch: bool | None) -> None:
        if not session_id or not isinstance(action, str) or not isinstance(skill_name, str):
            return
        with self._lock:
            st = self._implicit_session(session_id)
            meta = base_meta(session_id)
            if turn_id:
                meta["hermes.turn_id"] = turn_id
            parent = self.current_parent(st, turn_id)
            if action != "loaded":
                if isinstance(reason, str) and reason:  # the change's stated reason (skill history), scrubbed
                    meta["hermes.skill.reason"] = reason
                self._mark(st, parent, LIFECYCLE_MARK, None, None,
                           {"action": action, "skill_name": skill_name, "provenance": provenance}, meta)
                return
            data = {"skill_name": skill_name, "provenance": provenance, "use_count": use_count,
                    "reused": reused, "reuse_after_patch": reuse_after_patch}
            self._mark(st, parent, LOAD_MARK, None, None, data, meta)
            turn = st.turns.get(turn_id) if turn_id else (next(iter(st.turns.values())) if len(st.turns) == 1 else None)
            if turn is None:
                return
            scope_meta = dict(meta)
            scope_meta.update({"hermes.turn_id": turn.turn_id, "hermes.task_id": turn.task_id,
                               "hermes.span_kind": SKILL_SCOPE, "hermes.skill.name": skill_name,
                               "hermes.skill.provenance": provenance,
                               "hermes.skill.reuse_state": _reuse_state(reused, reuse_after_patch)})
            scope = self._start(st, turn.scope.uuid, SKILL_SCOPE, "function", (), None, dict(data), scope_meta,
                                self._now())
            self._skill_runs().setdefault((session_id, turn.turn_id), []).append(scope)

    def end_skill_runs(self, st: SessionState, turn: TurnState, data: dict[str, Any] | None,
                       reason: str | None = None) -> None:
        """End the ``skill.run`` scopes opened in ``turn`` (before the turn's own end; lock held)."""
        runs = getattr(self, "_open_skill_runs", None)
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
            self._end(st, scope, {"outcome": outcome}, meta)

    def _close_session(self, st: SessionState, data: dict[str, Any] | None, reason: str | None, *,
                       synthetic: bool = False, meta: dict[str, Any] | None = None, status_ok: bool = True,
                       keep: bool = False, children: bool = False) -> None:
        for turn in list(st.turns.values()):  # turns closed with the session end their skill runs first
            self.end_skill_runs(st, turn, None, reason or "session_closed")
        super()._close_session(st, data, reason, synthetic=synthetic, meta=meta, status_ok=status_ok, keep=keep,
                               children=children)


def _reuse_state(reused: bool | None, after_patch: bool | None) -> str:
    if after_patch:
        return "reused_after_patch"
    if reused:
        return "reused"
    return "first_use" if reused is False else "unknown"
