"""What Hermes Agent 0.19 actually sends, turned into the payloads the contract describes.

(A little over our usual module size on purpose: every Hermes adaptation of the session, turn,
attempt and tool hooks reads best in one place; approvals and subagents are in :mod:`.pairing`.)

Every Hermes-specific adaptation of the bridge lives in this module (and the approval and subagent
bookkeeping in :mod:`.pairing`), so that no sink carries a Hermes special case. Hermes calls its
observer hooks with keyword arguments; :meth:`HermesNormaliser.adapt` takes one such call and returns
the events to dispatch into the engine, in order: usually the call itself with fields filled in,
sometimes preceded by events Hermes never fires (the end of a turn it abandoned, the stop of a
subagent it left running).

What Hermes does, and what is done about it here:

- **Retries.** Every attempt of one ``api_request_id`` carries the same ``started_at`` (taken once
  before the retry loop) and ``pre_api_request`` has no ``retry_count``. Each later attempt gets the
  time its ``pre_api_request`` arrived as ``started_at`` and ``retry_count`` = the attempts already
  ended; its ``post_api_request`` / ``api_request_error`` get that start and a matching
  ``api_duration``.
- **Failed turns.** When a provider call fails for good Hermes returns without ``on_session_end``.
  A turn still open when its session starts another turn, is finalized or the bridge shuts down is
  closed then, with ``failed = True`` and ``turn_exit_reason = "api_error"`` when its last provider
  attempt failed and none succeeded after it (otherwise as interrupted, with the reason).
- **Turn fields.** ``on_session_end`` lacks ``failed`` / ``turn_exit_reason``; the CLI's exit safety
  net sends no ``turn_id``; ``transform_llm_output`` has no ``turn_id``: filled from the open turn.
- **Tool paths.** ``tool_request`` / ``tool_execution`` middleware lack ``platform``, ``model``,
  ``provider``, ``api_mode`` (and ``tool_execution`` the ``middleware_trace``): filled from what the
  session's provider requests said.
- **Assistant message.** ``post_api_request.assistant_message`` is Hermes' ``NormalizedResponse``
  (attributes only); it is passed on as a read-only view that reads both as a mapping and by
  attribute, as the host API passes it.
- **Host facts.** Hermes' own version goes into ``on_session_start`` / ``pre_llm_call`` as
  ``agent_version``, and each tool's toolset from Hermes' tool registry into ``pre_tool_call`` /
  ``post_tool_call`` as ``toolset`` (the sinks read both: ATIF ``agent.version``, shared-metrics
  ``resource.hermes_version`` and tool categories).
- **Middleware traces.** The bridge returns this engine's request-middleware result to Hermes as one
  result; Hermes records one trace entry for it. That entry is replaced by this engine's own entries
  wherever a ``middleware_trace`` is passed on.
- **Approvals** (see :mod:`.pairing`): no ``session_id``; smart decisions carry ``decided_by``; a
  CLI prompt that timed out is reported as ``deny``; an escalated smart review has no response; a
  tool call refused by a denied or timed-out approval ends with ``status = "error"``, reported as
  ``blocked`` (``error_type`` ``approval_denied`` / ``approval_timeout``).
- **Exit codes.** A command's exit code exists only inside the ``terminal`` tool's JSON result:
  ``post_tool_call`` gets it as ``exit_code`` (a non-zero one is a failed command in every output;
  Hermes' ``status`` is kept as it reported it).
- **Provider failures.** ``api_request_error`` carries ``status_code``, the exception class and
  Hermes' classified ``reason``; the scope kinds type the attempt from them and a turn that fails
  on it carries that type (``rate_limited``, ``upstream_error``, ``authentication``, ``timeout`` …).
- **Gateway dispatch.** ``pre_gateway_dispatch`` carries only Hermes objects (``event``,
  ``gateway``, ``session_store``): ``platform``, ``event_type``, ``session_key`` and ``session_id``
  are read from them; the bridge then fires ``post_gateway_dispatch`` with this engine's decision.
- **Skills** (see :mod:`.skill_calls`): Hermes fires no skill lifecycle hook; each successful
  ``skill_manage`` call (create, patch, edit, delete, write_file, remove_file) is reported as
  ``on_skill_lifecycle`` right before its ``post_tool_call``.
- **Subagents** (see :mod:`.pairing`): ``subagent_stop`` lacks ``child_subagent_id`` and carries the
  parent's *current* turn; background children can outlive their parent turn and session: their
  one session scope stays open under the delegating call until their own stop (every late hook
  lands in it, never in a second child session, issue #27), or ends as ``interrupted`` when the
  bridge stops first. A child's hook that arrives
  before its ``subagent_start`` gets an inferred start first (children run with ``platform =
  "subagent"``), so the child never opens a second root session.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from ..host.message import message_view
from .pairing import DELEGATION_TOOL, ApprovalPairing, SubagentPairing
from .payloads import exit_code, full_request, gateway_fields, scrubbed, system_prompt
from .skill_calls import TOOL as SKILL_TOOL
from .skill_calls import lifecycle_event

__all__ = ["BRIDGE_TRACE_NAME", "Event", "HermesNormaliser"]

Event = tuple[str, dict[str, Any]]
"""One hook to dispatch into the engine: ``(hook name, payload)``."""

logger: Final = logging.getLogger("hermes_pipeline.hermes")
BRIDGE_TRACE_NAME: Final = "hermes_pipeline.bridge"
"""``name`` of the trace entry Hermes records for the bridge's request-middleware result."""

_TOOL_CONTEXT: Final = ("platform", "model", "provider", "api_mode")
_OPENS_SESSION: Final = frozenset({"on_session_start", "pre_llm_call", "pre_api_request", "post_api_request",
                                   "api_request_error", "pre_tool_call", "post_tool_call", "pre_approval_request",
                                   "post_approval_response", "subagent_start"})
"""Hooks whose event opens a session scope (export/scope_kinds/session.py) when none is open (FMT-24 row 1)."""


@dataclass
class _Turn:
    turn_id: str
    task_id: str
    api_failed: bool = False
    """The turn's last provider attempt failed and nothing succeeded after it."""
    api_request_id: str = ""


@dataclass
class _Session:
    session_id: str
    platform: str = ""
    model: str = ""
    provider: str = ""
    api_mode: str = ""
    turns: dict[str, _Turn] = field(default_factory=dict)


@dataclass
class _Attempts:
    ended: int = 0
    """Attempts of this ``api_request_id`` that have ended (post or error)."""
    current_start: float | None = None


class HermesNormaliser:
    """Stateful adapter from Hermes hook calls to contract payloads (see the module docstring).

    Thread-safe: Hermes runs concurrent tool calls on worker threads.

    Args:
        clock: wall clock in epoch seconds (tests pass a fake one).
        approval_timeout: Hermes' ``approvals.timeout`` (seconds) of the profile; a CLI ``deny``
            that arrives this long after its request is reported as ``timeout``. ``None`` turns the
            heuristic off.
        definition_of: tool name -> its whole schema (Hermes' registry), so recorded requests keep the tool
            schemas Hermes' depth limit cut (:func:`~.payloads.whole_tools`); ``generation``: the registry's
            change counter, under which the outcome per schema is remembered.
    """

    def __init__(self, *, clock: Callable[[], float] = time.time, approval_timeout: float | None = 60.0,
                 agent_version: str | None = None, toolset_of: Callable[[str], str | None] | None = None,
                 definition_of: Callable[[str], object] | None = None,
                 generation: Callable[[], object] | None = None) -> None:
        self._clock = clock
        self.agent_version = agent_version
        self._toolset_of = toolset_of
        self._definition_of = definition_of
        self._generation = generation
        self._lock = threading.Lock()
        self._sessions: dict[str, _Session] = {}
        self._turn_session: dict[str, str] = {}
        self._attempts: dict[str, _Attempts] = {}
        self._llm_traces: dict[str, list[dict[str, str]]] = {}
        self._tool_traces: dict[str, list[dict[str, str]]] = {}
        self.approvals = ApprovalPairing(clock=clock, timeout=approval_timeout)
        self.subagents = SubagentPairing(clock=clock)
        self.tool_skill_writes: Callable[[str], list[tuple[str, str]]] | None = None
        """Set by the bridge when the observability store is on: tool call id → ``(action, skill)`` of each skill
        a ``write_file`` / ``patch`` / ``terminal`` / ``execute_code`` call changed (the store's skill probe)."""

    # ------------------------------------------------------------------ middleware traces

    def remember_llm_trace(self, api_request_id: str, entries: list[dict[str, str]]) -> None:
        """Keep this engine's ``llm_request`` trace entries for the attempt of ``api_request_id``."""
        with self._lock:
            self._llm_traces[api_request_id] = entries

    def remember_tool_trace(self, tool_call_id: str, entries: list[dict[str, str]]) -> None:
        """Keep this engine's ``tool_request`` trace entries for the call ``tool_call_id``."""
        with self._lock:
            self._tool_traces[tool_call_id] = entries

    @staticmethod
    def _expand(trace: object, ours: list[dict[str, str]] | None) -> list[dict[str, Any]]:
        entries = list(trace) if isinstance(trace, list | tuple) else []
        if not ours:
            return [e for e in entries if not (isinstance(e, dict) and e.get("name") == BRIDGE_TRACE_NAME)]
        out: list[dict[str, Any]] = []
        for entry in entries:
            if isinstance(entry, dict) and entry.get("name") == BRIDGE_TRACE_NAME:
                out.extend(dict(e) for e in ours)
            else:
                out.append(entry)
        return out

    def llm_trace(self, api_request_id: str, trace: object) -> list[dict[str, Any]]:
        """``trace`` as Hermes passed it, with the bridge's entry replaced by this engine's entries."""
        with self._lock:
            ours = self._llm_traces.get(api_request_id)
        return self._expand(trace, ours)

    def tool_trace(self, tool_call_id: str, trace: object) -> list[dict[str, Any]]:
        """Like :meth:`llm_trace` for a tool call; ``trace`` may be absent (``tool_execution``)."""
        with self._lock:
            ours = self._tool_traces.get(tool_call_id)
        if trace is None:
            return [dict(e) for e in ours] if ours else []
        return self._expand(trace, ours)

    def tool_context(self, session_id: str) -> dict[str, str]:
        """``platform`` / ``model`` / ``provider`` / ``api_mode`` of ``session_id`` as far as known."""
        with self._lock:
            st = self._sessions.get(session_id)
            if st is None:
                return {}
            return {k: v for k in _TOOL_CONTEXT if (v := getattr(st, k))}

    # ------------------------------------------------------------------ the entry point

    def adapt(self, hook: str, payload: dict[str, Any]) -> list[Event]:
        """The events to dispatch for one Hermes call of ``hook`` (``payload`` may be completed in place).

        ``payload`` must be the bridge's own keyword dict (Hermes builds a fresh one per callback);
        nested values are never mutated.
        """
        handler = _HANDLERS.get(hook)
        if handler is None:
            return [(hook, payload)]
        if self.agent_version and hook in ("on_session_start", "pre_llm_call"):
            payload.setdefault("agent_version", self.agent_version)
        elif self._toolset_of is not None and hook in ("pre_tool_call", "post_tool_call") and not payload.get("toolset"):
            toolset = self._toolset_of(str(payload.get("tool_name") or ""))
            if toolset:
                payload["toolset"] = toolset
        with self._lock:
            if hook in _OPENS_SESSION and hook != "subagent_start" and str(payload.get("session_id") or "") \
                    not in self._sessions:
                inferred = self.subagents.infer_start(payload, self._turn_open)
                if inferred:
                    return inferred + handler(self, payload)
            return handler(self, payload)

    def _turn_open(self, session_id: str, turn_id: str) -> bool:
        st = self._sessions.get(session_id)
        return st is not None and turn_id in st.turns

    def close_all(self, reason: str = "shutdown") -> list[Event]:
        """Events that end what Hermes left open (turns, subagents, approvals) when the bridge stops."""
        with self._lock:
            events: list[Event] = []
            for sid in list(self._sessions):
                if sid in self._sessions and not self.subagents.is_child(sid):
                    events.extend(self._close_session_state(sid, reason, stop_children=True))
            for child in self.subagents.open_children():  # children whose parent was never seen or has ended
                events.extend(self._close_session_state(child, reason, stop_children=True))
                events.append(self.subagents.unfinished_stop(child, reason))
            for sid in list(self._sessions):
                events.extend(self._close_session_state(sid, reason))
            events.extend(self.approvals.close_all())
            return events

    # ------------------------------------------------------------------ sessions and turns

    def _session(self, session_id: str) -> _Session:
        st = self._sessions.get(session_id)
        if st is None:
            st = self._sessions[session_id] = _Session(session_id)
        return st

    def _on_session_start(self, p: dict[str, Any]) -> list[Event]:
        st = self._session(str(p.get("session_id") or ""))
        st.platform = str(p.get("platform") or st.platform)
        st.model = str(p.get("model") or st.model)
        return [("on_session_start", p)]

    def _abandoned_turn_end(self, st: _Session, turn: _Turn, reason: str) -> Event:
        """``on_session_end`` for a turn Hermes never ended (see the module docstring)."""
        payload: dict[str, Any] = {
            "session_id": st.session_id, "task_id": turn.task_id, "turn_id": turn.turn_id,
            "completed": False, "model": st.model, "platform": st.platform,
        }
        if turn.api_failed:
            payload.update(interrupted=False, failed=True, turn_exit_reason="api_error")
        else:
            payload.update(interrupted=True, failed=False, turn_exit_reason="interrupted", reason=reason)
        if turn.api_request_id:
            payload["api_request_id"] = turn.api_request_id
        self._turn_session.pop(turn.turn_id, None)
        return ("on_session_end", payload)

    def _close_session_state(self, session_id: str, reason: str, *, stop_children: bool = False) -> list[Event]:
        """Events that end what ``session_id`` left open (its turns, its approvals).

        Its running subagents are stopped (as ``interrupted``) only when ``stop_children`` (the bridge
        stops): a background child outlives its parent turn and session and keeps its one session
        scope until its own ``subagent_stop`` (issue #27), never reopened as a second one.
        """
        events: list[Event] = []
        st = self._sessions.get(session_id)
        for child in self.subagents.children_of(session_id) if stop_children else ():
            events.extend(self._close_session_state(child, reason, stop_children=True))
            self._sessions.pop(child, None)
            events.append(self.subagents.unfinished_stop(child, reason))
        events.extend(self.approvals.close_session(session_id))
        if st is not None:
            for turn in list(st.turns.values()):
                events.append(self._abandoned_turn_end(st, turn, reason))
            st.turns.clear()
        return events

    def _on_pre_llm_call(self, p: dict[str, Any]) -> list[Event]:
        sid, turn_id = str(p.get("session_id") or ""), str(p.get("turn_id") or "")
        st = self._session(sid)
        st.platform = str(p.get("platform") or st.platform)
        st.model = str(p.get("model") or st.model)
        events = [self._abandoned_turn_end(st, t, "superseded") for t in st.turns.values() if t.turn_id != turn_id]
        st.turns = {k: v for k, v in st.turns.items() if k == turn_id}
        st.turns[turn_id] = _Turn(turn_id, str(p.get("task_id") or ""))
        self._turn_session[turn_id] = sid
        events.append(("pre_llm_call", p))
        return events

    def _only_turn(self, st: _Session | None, turn_id: str = "") -> _Turn | None:
        if st is None:
            return None
        if turn_id:
            return st.turns.get(turn_id)
        return next(iter(st.turns.values())) if len(st.turns) == 1 else None

    def _on_session_end(self, p: dict[str, Any]) -> list[Event]:
        st = self._sessions.get(str(p.get("session_id") or ""))
        turn = self._only_turn(st, str(p.get("turn_id") or ""))
        if turn is None and st is not None and not p.get("turn_id"):
            turn = self._only_turn(st)
        if turn is not None and st is not None:
            if not p.get("turn_id"):
                p["turn_id"] = turn.turn_id
            if not p.get("task_id"):
                p["task_id"] = turn.task_id
            st.turns.pop(turn.turn_id, None)
            self._turn_session.pop(turn.turn_id, None)
        events: list[Event] = []  # background children still running go on: they end with their own stop
        completed, interrupted = bool(p.get("completed")), bool(p.get("interrupted"))
        if "failed" not in p:
            p["failed"] = bool(turn is not None and turn.api_failed and not completed and not interrupted)
        if "turn_exit_reason" not in p:
            p["turn_exit_reason"] = ("completed" if completed else "interrupted" if interrupted
                                     else "api_error" if p["failed"] else "incomplete")
        events.append(("on_session_end", p))
        return events

    def _on_session_finalize(self, p: dict[str, Any]) -> list[Event]:
        sid = str(p.get("session_id") or "")
        events = self._close_session_state(sid, str(p.get("reason") or "session_finalized"))
        self._sessions.pop(sid, None)
        events.append(("on_session_finalize", p))
        return events

    def _on_session_reset(self, p: dict[str, Any]) -> list[Event]:
        old = str(p.get("old_session_id") or "")
        events = self._close_session_state(old, "new_session") if old else []
        events.append(("on_session_reset", p))
        return events

    def _on_transform_llm_output(self, p: dict[str, Any]) -> list[Event]:
        if not p.get("turn_id"):
            turn = self._only_turn(self._sessions.get(str(p.get("session_id") or "")))
            p["turn_id"] = turn.turn_id if turn is not None else ""
        return [("transform_llm_output", p)]

    # ------------------------------------------------------------------ provider attempts

    def _remember_runtime(self, p: dict[str, Any]) -> _Turn | None:
        st = self._session(str(p.get("session_id") or ""))
        for key in _TOOL_CONTEXT:
            value = p.get(key)
            if isinstance(value, str) and value:
                setattr(st, key, value)
        return st.turns.get(str(p.get("turn_id") or ""))

    def _on_pre_api_request(self, p: dict[str, Any]) -> list[Event]:
        rid = str(p.get("api_request_id") or "")
        attempts = self._attempts.get(rid)
        if attempts is None:
            attempts = self._attempts[rid] = _Attempts()
        if attempts.ended:  # a retry: Hermes repeats the first attempt's started_at
            attempts.current_start = self._clock()
            p["started_at"] = attempts.current_start
        else:
            started = p.get("started_at")
            attempts.current_start = started if isinstance(started, int | float) else self._clock()
        p.setdefault("retry_count", attempts.ended)
        p["middleware_trace"] = self._expand(p.get("middleware_trace"), self._llm_traces.get(rid))
        # the full history (scrubbed) instead of Hermes' cut copy: recordings keep what the model received
        p["request"] = full_request(p.get("request"), p.get("request_messages"), p.get("api_mode"), p.get("model"),
                                    self._definition_of, self._generation() if self._generation else None)
        if "system_prompt" not in p:
            system = system_prompt(p.get("request_messages"))
            if system is not None:
                p["system_prompt"] = system
        turn = self._remember_runtime(p)
        if turn is not None:
            turn.api_request_id = rid
        return [("pre_api_request", p)]

    def _end_attempt(self, p: dict[str, Any], failed: bool) -> _Turn | None:
        rid = str(p.get("api_request_id") or "")
        attempts = self._attempts.get(rid)
        if attempts is not None and attempts.current_start is not None:
            if attempts.ended:
                start = attempts.current_start
                ended = p.get("ended_at")
                end = ended if isinstance(ended, int | float) else self._clock()
                p["started_at"] = start
                p["api_duration"] = max(0.0, end - start)
            if failed and p.get("retry_count") is None:
                p["retry_count"] = attempts.ended
            attempts.ended += 1
            attempts.current_start = None
        if not failed:
            self._llm_traces.pop(rid, None)
        return self._remember_runtime(p)

    def _on_post_api_request(self, p: dict[str, Any]) -> list[Event]:
        message = p.get("assistant_message")
        if message is not None:  # Hermes' NormalizedResponse: readable by attribute and as a mapping
            try:
                p["assistant_message"] = message_view(message)
            except Exception:
                pass
        if "response" in p:  # the sanitized field, scrubbed with this engine's rules where it enters
            p["response"] = scrubbed(p["response"])
        turn = self._end_attempt(p, failed=False)
        if turn is not None:
            turn.api_failed = False
        self._attempts.pop(str(p.get("api_request_id") or ""), None)
        return [("post_api_request", p)]

    def _on_api_request_error(self, p: dict[str, Any]) -> list[Event]:
        if "error" in p:  # as ``response`` above
            p["error"] = scrubbed(p["error"])
        turn = self._end_attempt(p, failed=True)
        if turn is not None:
            turn.api_failed = True
        return [("api_request_error", p)]

    # ------------------------------------------------------------------ tools

    def _on_tool_hook(self, hook: str, p: dict[str, Any]) -> list[Event]:
        tool_call_id = str(p.get("tool_call_id") or "")
        events: list[Event] = []
        if hook == "pre_tool_call":
            sid = str(p.get("session_id") or "")
            if sid and tool_call_id:
                self.approvals.note_tool(tool_call_id, sid, str(p.get("turn_id") or ""))
            if p.get("tool_name") == DELEGATION_TOOL:
                self.subagents.note_delegation(sid, str(p.get("turn_id") or ""))
        if hook != "transform_tool_result":
            p["middleware_trace"] = self._expand(p.get("middleware_trace"), self._tool_traces.get(tool_call_id))
        if hook == "post_tool_call":
            if p.get("exit_code") is None:
                code = exit_code(p.get("result"))
                if code is not None:
                    p["exit_code"] = code
            self._tool_traces.pop(tool_call_id, None)
            self.approvals.mark_refused(p)
            events.extend(self.approvals.tool_finished(tool_call_id))
            if p.get("tool_name") == SKILL_TOOL:
                lifecycle = lifecycle_event(p)
                if lifecycle is not None:
                    events.append(("on_skill_lifecycle", lifecycle))
            elif self.tool_skill_writes is not None and tool_call_id:
                events.extend(("on_skill_lifecycle", event) for event in self._tool_skill_events(tool_call_id, p))
        events.append((hook, p))
        return events

    def _tool_skill_events(self, tool_call_id: str, p: dict[str, Any]) -> list[dict[str, Any]]:
        """``on_skill_lifecycle`` payloads of the skills another tool than ``skill_manage`` changed (BOOK-19): the
        agent's changes, in the call's session and turn; no reason (none was given)."""
        try:
            changes = self.tool_skill_writes(tool_call_id) if self.tool_skill_writes is not None else []
        except Exception as exc:  # never into Hermes: a rescan finds the change later
            logger.warning("hermes_pipeline: skills changed by %s not read (%s)", p.get("tool_name"), exc)
            return []
        return [{"action": action, "skill_name": name,
                 "provenance": "agent_created" if action == "created" else None, "success": True, "reason": None,
                 "session_id": str(p.get("session_id") or ""), "turn_id": str(p.get("turn_id") or ""),
                 "use_count": None, "reused": None, "reuse_after_patch": None} for action, name in changes]

    # ------------------------------------------------------------------ approvals, subagents

    def _session_of_turn(self, turn_id: str) -> str:
        if turn_id and turn_id in self._turn_session:
            return self._turn_session[turn_id]
        open_turns = [(sid, t) for sid, st in self._sessions.items() for t in st.turns]
        return open_turns[0][0] if len(open_turns) == 1 else ""

    def _on_pre_approval(self, p: dict[str, Any]) -> list[Event]:
        return self.approvals.request(p, self._session_of_turn(str(p.get("turn_id") or "")))

    def _on_post_approval(self, p: dict[str, Any]) -> list[Event]:
        return self.approvals.response(p, self._session_of_turn(str(p.get("turn_id") or "")))

    def _on_pre_gateway_dispatch(self, p: dict[str, Any]) -> list[Event]:
        for key, value in gateway_fields(p.get("event"), p.get("session_store")).items():
            p.setdefault(key, value)
        return [("pre_gateway_dispatch", p)]

    def _on_subagent_start(self, p: dict[str, Any]) -> list[Event]:
        return self.subagents.start(p)

    def _on_subagent_stop(self, p: dict[str, Any]) -> list[Event]:
        child = str(p.get("child_session_id") or "")
        events: list[Event] = []
        if child in self._sessions:  # the child's own turn may still be open (it failed or was cut short)
            events.extend(self._close_session_state(child, "subagent_stopped"))
        events.extend(self.subagents.stop(p))
        return events


def _tool(hook: str) -> Callable[[HermesNormaliser, dict[str, Any]], list[Event]]:
    return lambda self, p: self._on_tool_hook(hook, p)


_HANDLERS: Final[dict[str, Callable[[HermesNormaliser, dict[str, Any]], list[Event]]]] = {
    "on_session_start": HermesNormaliser._on_session_start,
    "on_session_end": HermesNormaliser._on_session_end,
    "on_session_finalize": HermesNormaliser._on_session_finalize,
    "on_session_reset": HermesNormaliser._on_session_reset,
    "pre_llm_call": HermesNormaliser._on_pre_llm_call,
    "transform_llm_output": HermesNormaliser._on_transform_llm_output,
    "pre_api_request": HermesNormaliser._on_pre_api_request,
    "post_api_request": HermesNormaliser._on_post_api_request,
    "api_request_error": HermesNormaliser._on_api_request_error,
    "pre_tool_call": _tool("pre_tool_call"),
    "post_tool_call": _tool("post_tool_call"),
    "transform_tool_result": _tool("transform_tool_result"),
    "pre_approval_request": HermesNormaliser._on_pre_approval,
    "post_approval_response": HermesNormaliser._on_post_approval,
    "pre_gateway_dispatch": HermesNormaliser._on_pre_gateway_dispatch,
    "subagent_start": HermesNormaliser._on_subagent_start,
    "subagent_stop": HermesNormaliser._on_subagent_stop,
}
