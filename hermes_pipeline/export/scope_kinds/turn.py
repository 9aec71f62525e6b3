"""Turns → the ``agent.run`` scope (spec 04 §2.11 FMT-24 rows 5-6).

``pre_llm_call`` starts the turn's ``agent.run`` scope under its session scope (opening the session when
needed, ``resumed: true`` when its first turn here is not its first turn) and ends the gateway dispatch
that led to it (:meth:`~.trigger.Triggers.end_for_turn`); ``post_llm_call`` keeps the final response;
``on_session_end`` (Hermes' per-turn end) ends it, first ending what the turn left open: its provider
attempts and tool calls (``ScopeTracker.close_turn_children``) and its skill runs
(:meth:`~.skill.SkillRuns.end_runs`). A turn that failed because its provider did says so with the
provider's error type and message. ``on_context_snapshot`` is a ``hermes.context`` mark under the turn.

How a turn ended, as the hook says it (``completed``, ``interrupted``, ``failed``, ``turn_exit_reason``,
``reason``), also goes to first-party listeners as the end's ``facts`` (never rendered; the rendered end keeps
only ``error.type`` of a failed turn, so a timeout or a denied approval the host did not call ``failed`` would
be lost, SM-19). An ``on_session_end`` whose turn the stream does not hold under that session id (a session id
rotated mid-turn: the old session closed the turn with itself, and its real end comes under the new id, SM-21)
makes no scope event, as before, but hands the same facts to first-party listeners as a notice
(``ScopeTracker.publish_fact``) that no sink sees.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ...contract.versions import TELEMETRY_SCHEMA_VERSION
from ..classify import turn_error_type
from ..events import TURN_SCOPE
from ..scope_state import SessionState, TurnState
from ..scopes import SCHEMA_KEY, SESSION_KEY, ScopeTracker, base_meta
from .session import Sessions
from .skill import SkillRuns
from .subagent import Subagents
from .trigger import Triggers

_V: Final = TELEMETRY_SCHEMA_VERSION


def _fact(value: Any) -> bool | int | str | None:
    """A hook field as a fact: a boolean, a number or a name as given, anything else ``None``."""
    return value if type(value) in (bool, int, str) else None


def _end_facts(completed: Any, interrupted: Any, failed: Any, turn_exit_reason: Any, reason: Any) -> dict[str, Any]:
    """How the hook says the turn ended (SM-19's inputs), for first-party listeners (see the module docstring)."""
    return {"completed": _fact(completed), "interrupted": _fact(interrupted), "failed": _fact(failed),
            "turn_exit_reason": _fact(turn_exit_reason), "reason": _fact(reason)}


class Turns:
    """Rows 5-6 (see the module docstring); the other kinds it calls are passed in."""

    def __init__(self, tracker: ScopeTracker, *, sessions: Sessions, skills: SkillRuns, subagents: Subagents,
                 triggers: Triggers) -> None:
        self.tracker = tracker
        self.sessions = sessions
        self.skills = skills
        self.subagents = subagents
        self.triggers = triggers

    def pre_llm_call(self, session_id: str, task_id: str, turn_id: str, user_message: str, is_first_turn: bool,
                     model: str, platform: str, sender_id: str | None, agent_version: str | None) -> None:
        tracker = self.tracker
        ts = tracker.now()
        with tracker.lock:
            successor = self.sessions.take_successor(session_id)
            resumed = is_first_turn is False and session_id not in tracker.sessions and not successor \
                and not self.subagents.ended_here(session_id)
            st = tracker.implicit_session(session_id, model, platform, agent_version, resumed=resumed)
            self.triggers.end_for_turn(session_id, platform)  # rows 3-4: the dispatch led to this turn
            if turn_id in st.turns:  # the same turn started twice: close the stale one
                self._close(st, st.turns[turn_id], orphan=True)
            meta = {SCHEMA_KEY: _V, SESSION_KEY: session_id, "hermes.task_id": task_id, "hermes.turn_id": turn_id,
                    "hermes.platform": platform, "hermes.span_kind": TURN_SCOPE}
            if sender_id is not None:
                meta["hermes.sender_id"] = sender_id
            assert st.scope is not None
            scope = tracker.start(st, st.scope.uuid, TURN_SCOPE, "function", (), None,
                                  {"user_message": user_message, "is_first_turn": is_first_turn}, meta, ts)
            st.turns[turn_id] = TurnState(scope, task_id, turn_id)

    def post_llm_call(self, session_id: str, turn_id: str, assistant_response: str) -> None:
        tracker = self.tracker
        with tracker.lock:
            st = tracker.sessions.get(session_id)
            turn = st.turns.get(turn_id) if st is not None else None
            if turn is not None:
                turn.final_response = assistant_response

    def on_session_end(self, session_id: str, task_id: str, turn_id: str, completed: bool, interrupted: bool,
                       failed: bool | None, turn_exit_reason: str | None, reason: str | None) -> None:
        tracker = self.tracker
        with tracker.lock:
            st = tracker.sessions.get(session_id)
            turn = st.turns.get(turn_id) if st is not None else None
            facts = _end_facts(completed, interrupted, failed, turn_exit_reason, reason) if tracker.reads_facts \
                else None
            if st is None or turn is None:
                if facts is not None:  # SM-21: the real end of a turn the stream closed with an older session id
                    meta = base_meta(session_id)
                    meta["hermes.task_id"] = task_id
                    meta["hermes.turn_id"] = turn_id
                    tracker.publish_fact(TURN_SCOPE, meta, facts)
                return
            data: dict[str, Any] = {}
            if turn.final_response is not None:
                data["final_response"] = turn.final_response
            data["completed"] = bool(completed)
            data["interrupted"] = bool(interrupted)
            if reason is not None:
                data["reason"] = reason
            meta = {SCHEMA_KEY: _V, SESSION_KEY: session_id, "hermes.task_id": task_id or turn.task_id,
                    "hermes.turn_id": turn_id}
            error = turn_error_type(bool(interrupted), bool(failed), turn_exit_reason, reason, turn.provider_error)
            st.provider_error = error if error is not None and error == turn.provider_error else None
            meta["otel.status_code"] = "OK" if error is None else "ERROR"
            if error is not None:
                meta["error.type"] = error
                if reason is None and error == turn.provider_error and turn.provider_message:
                    data["error_message"] = turn.provider_message  # the provider's words: why the turn failed
            self._close(st, turn, data=data, meta=meta, facts=facts)
            if st.pending_close is not None and not st.turns:
                tracker.close_session(st, {"reason": st.pending_close}, None)

    def _close(self, st: SessionState, turn: TurnState, *, orphan: bool = False,
               data: dict[str, Any] | None = None, meta: dict[str, Any] | None = None,
               facts: dict[str, Any] | None = None) -> None:
        tracker = self.tracker
        del st.turns[turn.turn_id]
        if st.tools or st.llm:  # an interrupted turn cut its calls short; otherwise their ends never came
            interrupted = not orphan and isinstance(data, dict) and data.get("interrupted") is True
            tracker.close_turn_children(st, turn.turn_id, "interrupted" if interrupted else "orphan")
        if orphan:
            meta = base_meta(st.session_id)
            meta.update({"hermes.close_reason": "orphan", "otel.status_code": "ERROR", "error.type": "cancelled"})
        self.skills.end_runs(st, turn, data)  # rows 18-19: a turn's skill runs end with it
        tracker.end(st, turn.scope, data, meta or base_meta(st.session_id), facts=facts)

    def on_context_snapshot(self, session_id: str, turn_id: str, context: Mapping[str, Any]) -> None:
        """The host's context snapshot becomes a ``hermes.context`` mark under the turn's ``agent.run``."""
        if not isinstance(context, Mapping):
            return
        tracker = self.tracker
        with tracker.lock:
            st = tracker.sessions.get(session_id)
            if st is None or turn_id not in st.turns:
                return
            meta = base_meta(session_id)
            meta["hermes.turn_id"] = turn_id
            tracker.mark(st, st.turns[turn_id].scope.uuid, "hermes.context", None, None, dict(context), meta)
