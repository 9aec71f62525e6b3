"""Hermes hooks → scope events: the producer mapping of spec 04 §2.11 (FMT-24 rows 1-17, 21).

(Over 400 lines on purpose: the session, turn, approval, human-input and subagent rows share the
projection's per-session state; provider attempts, tools, skills and triggers have their own modules.)

:class:`ScopePlugin` is a :class:`~hermes_pipeline.export.scopes.ScopeTracker` whose ``@hookimpl``
methods project observer hooks onto scopes and marks (sessions, turns, approvals, human input and
subagents here; provider attempts and tools in :mod:`~hermes_pipeline.export.projection_calls`).
Register one per engine (``engine.add_plugin(plugin, name=...)``) and attach every exporter with
``add_listener`` so that they all see the same UUIDs (FMT-56). Rows 3-4 come from the Hermes gateway's
dispatch hooks (:mod:`~hermes_pipeline.export.projection_triggers`); rows 18-20 come from ``on_skill_lifecycle``
(:mod:`~hermes_pipeline.export.projection_skills`); row 22 needs a host call; ``on_session_segment`` and
``on_compaction`` (hermes_pipeline extension hooks) give rows 2 (rotation, note 4) and 21.

Two modes:

- ``deferred=True`` (what the exporters use): a hook callback only reads the clock and enqueues a
  record on the bounded publication queue (:mod:`~hermes_pipeline.export.publication`, FMT-79/80);
  the projection and the listeners run on the publication thread. Call :meth:`ScopePlugin.flush`
  before reading results and :meth:`ScopePlugin.shutdown` at the end.
- ``deferred=False`` (default): the projection runs on the hook caller's thread under the
  tracker's lock and listeners are called there, synchronously.

Content fields are kept as the hooks gave them, then credential-scrubbed once for every listener
(:mod:`~hermes_pipeline.export.redaction`); the per-destination content gate (§2.13) is applied by exporters.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from ..contract.versions import TELEMETRY_SCHEMA_VERSION
from ..engine.deadline import Deadline
from .classify import approval_decider, approval_outcome, child_error_type, turn_error_type
from .events import TURN_SCOPE
from .projection_calls import CallHooks
from .projection_skills import SkillHooks
from .projection_triggers import TriggerHooks
from .publication import TrackerDestination, capture_context, child_key, deferrable, turn_key
from .scopes import AGENT_VERSION_KEY, SCHEMA_KEY, SESSION_KEY, Listener, SessionState, TurnState, base_meta
from .writer import BoundedWriter

_V = TELEMETRY_SCHEMA_VERSION
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


class ScopePlugin(TriggerHooks, CallHooks, SkillHooks):
    """The hook projection: a :class:`ScopeTracker` with ``@hookimpl`` methods (see the module docstring).

    Args:
        listeners: initial listeners (``fn(event)``).
        deferred: run the projection on the publication thread (see the module docstring).
        max_queue_size: capacity of the publication queue in hook records (FMT-80).
        toolsets, memory_tools, redact_credentials, max_value_chars: see :class:`ScopeTracker`.
    """

    def __init__(self, listeners: tuple[Listener, ...] = (), *, deferred: bool = False,
                 max_queue_size: int = 10_000, toolsets: Mapping[str, str] | None = None,
                 memory_tools: Mapping[str, str] | None = None, redact_credentials: bool = True,
                 max_value_chars: int | None = None) -> None:
        super().__init__(listeners, toolsets=toolsets, memory_tools=memory_tools,
                         redact_credentials=redact_credentials, max_value_chars=max_value_chars)
        self._closed = False
        self._former: OrderedDict[str, _Placement] = OrderedDict()
        self._successors: set[str] = set()
        """New session ids announced by an ID-rotating compaction: their first turn here is no resume."""
        if deferred:
            self._destination = TrackerDestination(self)
            self._publication = BoundedWriter(self._destination, name="publication", max_queue_size=max_queue_size,
                                              max_attempts=1).start()

    @property
    def deferred(self) -> bool:
        """Whether hooks are projected on the publication thread."""
        return self._publication is not None

    @property
    def closed(self) -> bool:
        """Whether :meth:`shutdown` has ended the open scopes (no listener hears of this projection again)."""
        return self._closed

    def flush(self, timeout: float = 5.0) -> bool:
        """Barrier: every hook received before the call has been projected and handed to the listeners."""
        deadline = Deadline(timeout)
        ok = self._publication.flush(timeout) if self._publication is not None else True
        # a tool start waiting to learn whether it overlaps another goes out now (the tracker's lock is
        # waited for only until the deadline: a flush never hangs on it)
        return self.release_held(deadline.remaining()) and ok

    def shutdown(self, deadline: float = 5.0) -> bool:
        """Project what is queued, then end every open scope (``close_reason = "shutdown"``, FMT-85).

        Later hooks are dropped (deferred mode) or ignored by the listeners the owner removed.
        Idempotent; never raises.
        """
        ok = True
        end = Deadline(deadline)
        if self._publication is not None:
            try:
                ok = self._publication.close(deadline)
            except Exception:
                ok = False
        if not self._closed:
            # the tracker's lock is waited for only until the deadline: a shutdown never hangs on it
            if not self._acquire(end.remaining()):
                return False
            try:
                self._closed = True
                self.close_triggers("shutdown")
                self.close_all("shutdown")
            except Exception:
                ok = False
            finally:
                self._lock.release()
        return ok

    def publication_stats(self) -> dict[str, int]:
        """Publication-queue counters; ``pipeline.events_dropped`` is the FMT-81 diagnostics counter."""
        if self._publication is None:
            return {"pipeline.events_dropped": 0}
        stats = self._publication.stats()
        return {"pipeline.events_dropped": stats["dropped_queue_full"] + stats["dropped_closed"],
                "queue_depth": stats["queue_depth"], "records": stats["submitted"],
                "projection_failures": self._destination.failures}

    # ------------------------------------------------------------------ sessions (rows 1, 2)

    @deferrable()
    def on_session_start(self, session_id: str, model: str, platform: str, agent_version: str | None) -> None:
        with self._lock:
            st = self._sessions.get(session_id)
            if st is None:
                self._implicit_session(session_id, model, platform, agent_version)
            else:
                st.model = st.model or model
                st.platform = st.platform or platform

    @deferrable()
    def on_session_finalize(self, session_id: str, reason: str) -> None:
        with self._lock:
            st = self._sessions.get(session_id)
            if st is not None:
                self._close_session(st, {"reason": reason}, None)

    @deferrable()
    def on_session_reset(self, reason: str, old_session_id: str | None) -> None:
        with self._lock:
            st = self._sessions.get(old_session_id or "")
            if st is not None:
                self._close_session(st, {"reason": reason or "new_session"}, None)

    @deferrable()
    def on_session_segment(self, session_id: str, segment: int, segment_reason: str, platform: str,
                           model: str) -> None:
        with self._lock:
            st = self._sessions.get(session_id)
            seg_meta = {"hermes.session.segment": segment, "hermes.session.segment_reason": segment_reason}
            if st is None:
                st = SessionState(session_id, None, None)
            else:
                meta = base_meta(session_id)
                meta["hermes.close_reason"] = "rotation"
                meta["otel.status_code"] = "OK"
                self._close_session(st, {"reason": "rotation", "hermes.session.segment_reason": segment_reason},
                                    "rotation", meta=meta, keep=True)
            st.platform = st.platform or platform
            st.model = st.model or model
            meta = base_meta(session_id)
            meta.update(seg_meta)
            data = {k: v for k, v in (("model", st.model), ("platform", st.platform)) if v is not None}
            self._open_session(session_id, data or None, meta, state=st)

    @deferrable()
    def on_compaction(self, session_id: str, new_session_id: str, rotated: bool) -> None:
        with self._lock:
            st = self._sessions.get(session_id)
            if st is None:  # CFG-75: a compaction notice for an unknown session is a no-op
                return
            self._mark(st, self.current_parent(st), "hermes.compaction", None, None, {"rotated": bool(rotated)},
                       base_meta(session_id))
            if rotated and new_session_id != session_id:
                if len(self._successors) < _FORMER_LIMIT:
                    self._successors.add(new_session_id)
                if st.turns:  # CFG-75: deferred until the live turn ends
                    st.pending_close = "compaction"
                else:
                    self._close_session(st, {"reason": "compaction"}, None)

    @deferrable()
    def on_context_snapshot(self, session_id: str, turn_id: str, context: Mapping[str, Any]) -> None:
        """The host's context snapshot becomes a ``hermes.context`` mark under the turn's ``agent.run``."""
        if not isinstance(context, Mapping):
            return
        with self._lock:
            st = self._sessions.get(session_id)
            if st is None or turn_id not in st.turns:
                return
            meta = base_meta(session_id)
            meta["hermes.turn_id"] = turn_id
            self._mark(st, st.turns[turn_id].scope.uuid, "hermes.context", None, None, dict(context), meta)

    # ------------------------------------------------------------------ turns (rows 5, 6)

    @deferrable(opens=turn_key)
    def pre_llm_call(self, session_id: str, task_id: str, turn_id: str, user_message: str, is_first_turn: bool,
                     model: str, platform: str, sender_id: str | None, agent_version: str | None) -> None:
        ts = self._now()
        with self._lock:
            resumed = is_first_turn is False and session_id not in self._sessions \
                and session_id not in self._successors and session_id not in self._former
            self._successors.discard(session_id)
            st = self._implicit_session(session_id, model, platform, agent_version, resumed=resumed)
            self.end_triggers_for_turn(session_id, platform)  # rows 3-4: the dispatch led to this turn
            if turn_id in st.turns:  # the same turn started twice: close the stale one
                self._close_turn(st, st.turns[turn_id], orphan=True)
            meta = {SCHEMA_KEY: _V, SESSION_KEY: session_id, "hermes.task_id": task_id, "hermes.turn_id": turn_id,
                    "hermes.platform": platform, "hermes.span_kind": TURN_SCOPE}
            if sender_id is not None:
                meta["hermes.sender_id"] = sender_id
            assert st.scope is not None
            scope = self._start(st, st.scope.uuid, TURN_SCOPE, "function", (), None,
                                {"user_message": user_message, "is_first_turn": is_first_turn}, meta, ts)
            st.turns[turn_id] = TurnState(scope, task_id, turn_id)

    @deferrable()
    def post_llm_call(self, session_id: str, turn_id: str, assistant_response: str) -> None:
        with self._lock:
            st = self._sessions.get(session_id)
            turn = st.turns.get(turn_id) if st is not None else None
            if turn is not None:
                turn.final_response = assistant_response

    @deferrable(closes=turn_key)
    def on_session_end(self, session_id: str, task_id: str, turn_id: str, completed: bool, interrupted: bool,
                       failed: bool | None, turn_exit_reason: str | None, reason: str | None) -> None:
        with self._lock:
            st = self._sessions.get(session_id)
            turn = st.turns.get(turn_id) if st is not None else None
            if st is None or turn is None:
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
            self._close_turn(st, turn, data=data, meta=meta)
            if st.pending_close is not None and not st.turns:
                self._close_session(st, {"reason": st.pending_close}, None)

    def _close_turn(self, st: SessionState, turn: TurnState, *, orphan: bool = False,
                    data: dict[str, Any] | None = None, meta: dict[str, Any] | None = None) -> None:
        del st.turns[turn.turn_id]
        if st.tools or st.llm:  # an interrupted turn cut its calls short; otherwise their ends never came
            interrupted = not orphan and isinstance(data, dict) and data.get("interrupted") is True
            self._close_turn_children(st, turn.turn_id, "interrupted" if interrupted else "orphan")
        if orphan:
            meta = base_meta(st.session_id)
            meta.update({"hermes.close_reason": "orphan", "otel.status_code": "ERROR", "error.type": "cancelled"})
        self.end_skill_runs(st, turn, data)  # rows 18-19: a turn's skill runs end with it
        self._end(st, turn.scope, data, meta or base_meta(st.session_id))

    # ------------------------------------------------------------------ approvals, human input (rows 12-15)

    def _mark_parent(self, session_id: str, turn_id: str = "", tool_call_id: str = "") -> tuple[SessionState | None, int | None]:
        if not session_id:
            return None, None
        st = self._implicit_session(session_id)
        tool = st.tools.get(tool_call_id) if tool_call_id else None
        if tool is not None:
            return st, tool.uuid
        return st, self.current_parent(st, turn_id)

    def _approval(self, name: str, session_id: str, turn_id: str, tool_call_id: str, data: dict[str, Any]) -> None:
        meta = base_meta(session_id or "")
        if turn_id:
            meta["hermes.turn_id"] = turn_id
        with self._lock:
            st, parent = self._mark_parent(session_id, turn_id, tool_call_id)
            if tool_call_id:
                self._mark(st, parent, name, "tool", {"tool_call_id": tool_call_id}, data, meta)
            else:
                self._mark(st, parent, name, None, None, data, meta)

    @deferrable()
    def pre_approval_request(self, command: str, description: str, pattern_keys: list[str], surface: str,
                             turn_id: str, tool_call_id: str, session_id: str) -> None:
        self._approval("hermes.approval.request", session_id, turn_id, tool_call_id,
                       {"surface": surface, "pattern_keys": list(pattern_keys or ()), "command": command,
                        "description": description})

    @deferrable()
    def post_approval_response(self, surface: str, turn_id: str, tool_call_id: str, session_id: str,
                               choice: str, decided_by: str | None) -> None:
        self._approval("hermes.approval.response", session_id, turn_id, tool_call_id,
                       {"surface": surface, "choice": choice, "outcome": approval_outcome(choice),
                        "decided_by": approval_decider(decided_by, surface, choice)})

    def _human(self, name: str, session_id: str, data: dict[str, Any]) -> None:
        with self._lock:
            st, parent = self._mark_parent(session_id)
            self._mark(st, parent, name, None, None, data, base_meta(session_id or ""))

    @deferrable()
    def on_human_input_request(self, kind: str, request_id: str, session_id: str, prompt: str) -> None:
        self._human("hermes.human_input.request", session_id, {"kind": kind, "request_id": request_id, "prompt": prompt})

    @deferrable()
    def on_human_input_resolved(self, kind: str, request_id: str, session_id: str, outcome: str) -> None:
        self._human("hermes.human_input.resolved", session_id,
                    {"kind": kind, "request_id": request_id, "outcome": outcome})

    # ------------------------------------------------------------------ subagents (rows 16, 17)

    def _close_session(self, st: SessionState, data: dict[str, Any] | None, reason: str | None, *,
                       synthetic: bool = False, meta: dict[str, Any] | None = None, status_ok: bool = True,
                       keep: bool = False, children: bool = False) -> None:
        super()._close_session(st, data, reason, synthetic=synthetic, meta=meta, status_ok=status_ok, keep=keep,
                               children=children)
        if not keep and st.parent is not None and st.extra.get("hermes.scope_role") == "subagent":
            self._remember_placement(st)

    def _remember_placement(self, st: SessionState) -> None:
        assert st.parent is not None
        start = st.scope
        role = start.data.get("child_role") if start is not None and isinstance(start.data, dict) else None
        former = self._former
        former[st.session_id] = _Placement(st.parent, st.parent_uuid, st.parent_turn_id, dict(st.extra),
                                           st.platform, role, self._now())
        former.move_to_end(st.session_id)
        while len(former) > _FORMER_LIMIT:
            former.popitem(last=False)

    def _implicit_session(self, session_id: str, model: str | None = None, platform: str | None = None,
                          agent_version: str | None = None, resumed: bool = False) -> SessionState:
        """The open session of ``session_id`` or a new one; an ended subagent session is continued in place.

        A background child can outlive its parent turn (its session then ended with ``child_status =
        "running"``) and even its parent session: its later hooks reopen it under the same parent
        scope (the delegating tool call, note 5) and in the same trace, never as a second root (FMT-20).
        """
        st = self._sessions.get(session_id)
        if st is not None:
            return st
        place = self._former.get(session_id)
        if place is None:
            return super()._implicit_session(session_id, model, platform, agent_version, resumed)
        return self._continue_child(session_id, place)

    def _continue_child(self, session_id: str, place: _Placement) -> SessionState:
        """Open the continuation of an ended subagent session, from the end of its previous scope."""
        del self._former[session_id]
        st = SessionState(session_id, place.parent, place.parent_uuid)
        st.parent_turn_id = place.parent_turn_id
        st.platform = place.platform
        st.extra = dict(place.extra)
        return self._open_session(session_id, {"child_role": place.child_role, "continued": True},
                                  base_meta(session_id), state=st, ts=place.ended_us + 1)

    def _delegating_parent(self, parent: SessionState, turn_id: str) -> int:
        """Note 5: the open delegating tool scope if one is open, else the parent ``agent.run``."""
        ambient = self._ambient or capture_context()
        if ambient is not None and ambient[0] == parent.session_id:
            tool = parent.tools.get(ambient[1])
            if tool is not None:
                return tool.uuid
        tools = [s for s in parent.tools.values() if not turn_id or s.metadata.get("hermes.turn_id") == turn_id]
        if tools:
            return tools[-1].uuid
        return self._turn_parent(parent, turn_id)

    @deferrable(opens=child_key, context=True)
    def subagent_start(self, parent_session_id: str, parent_turn_id: str, child_session_id: str, child_role: str,
                       child_goal: str) -> None:
        with self._lock:
            parent = self._implicit_session(parent_session_id)
            stale = self._sessions.get(child_session_id)
            if stale is not None:
                self._close_session(stale, {"reason": "orphan"}, "orphan", synthetic=True)
            st = SessionState(child_session_id, parent, self._delegating_parent(parent, parent_turn_id))
            st.parent_turn_id = parent_turn_id
            st.platform = parent.platform
            st.extra = {"hermes.scope_role": "subagent", "hermes.parent_session_id": parent_session_id}
            if AGENT_VERSION_KEY in parent.extra:  # a subagent runs in the same host agent
                st.extra[AGENT_VERSION_KEY] = parent.extra[AGENT_VERSION_KEY]
            self._open_session(child_session_id, {"child_role": child_role, "child_goal": child_goal},
                               base_meta(child_session_id), state=st)

    @deferrable(closes=child_key)
    def subagent_stop(self, parent_session_id: str, parent_turn_id: str, child_session_id: str, child_role: str,
                      child_status: str, child_summary: str | None, duration_ms: int) -> None:
        data = {"child_status": child_status, "child_summary": child_summary, "duration_ms": duration_ms}
        meta = base_meta(child_session_id)
        with self._lock:
            known = self._sessions.get(child_session_id)
            error = child_error_type(child_status, known.provider_error if known is not None else None)
            meta["otel.status_code"] = "OK" if error is None else "ERROR"
            if error is not None:
                meta["error.type"] = error
            st = self._sessions.get(child_session_id)
            if st is None and child_session_id in self._former:  # its session ended earlier: the rest of its run
                st = self._continue_child(child_session_id, self._former[child_session_id])
            if st is None:  # never saw subagent_start: make the start from the reported duration
                parent = self._implicit_session(parent_session_id)
                st = SessionState(child_session_id, parent, self._delegating_parent(parent, parent_turn_id))
                st.parent_turn_id = parent_turn_id
                st.extra = {"hermes.scope_role": "subagent", "hermes.parent_session_id": parent_session_id}
                ts = self._now() - 1000 * (duration_ms if isinstance(duration_ms, int) else 0) - 1
                self._open_session(child_session_id, {"child_role": child_role}, base_meta(child_session_id),
                                   state=st, ts=ts)
            self._close_session(st, data, None, meta=meta)


def release_projection(engine: Any, plugin_name: str | None, projection: Any, listener: Any, *, own: bool,
                       deadline: float) -> None:
    """Detach one of a profile's consumers from the projection it listens to.

    An ``own`` projection is removed from ``engine`` (when it was added as ``plugin_name``) and shut down,
    which ends its open scopes so the listener writes its partial runs; a shared one is flushed, then only
    loses ``listener``, as the profile's other consumers keep listening to it.
    """
    if own:
        if plugin_name is not None:
            engine.remove_plugin(plugin_name)
        projection.shutdown(deadline)
    else:
        projection.flush(deadline)
        projection.remove_listener(listener)
