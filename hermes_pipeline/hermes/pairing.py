"""Approval and subagent bookkeeping for the Hermes normaliser (:mod:`.normalise`).

Hermes 0.19's approval hooks (``tools/approval.py``) carry ``turn_id`` and ``tool_call_id`` from the
call context but no ``session_id``; a smart (auxiliary-LLM) review fires ``pre_approval_request``
with ``surface = "smart"`` and answers only ``approve`` / ``deny`` (with ``decided_by = "aux_llm"``),
so an escalated review has no response; the CLI prompt reports a timeout as ``deny``. A denied
approval gate refuses the command before it runs, but the tool's ``post_tool_call`` then says
``status = "error"`` (derived from the ``{"error": ..., "status": "blocked"}`` result); spec 01 §7.5
calls that outcome ``blocked``.

Its subagent hooks (``tools/delegate_tool.py``): ``subagent_stop`` has no ``child_subagent_id``
and its ``parent_turn_id`` is the parent's turn *at stop time*; a background child can still be
running when its parent turn and session end (its session then stays open until its own stop),
and if the process stops first no ``subagent_stop`` ever fires. A child agent runs
with ``platform = "subagent"``; ``subagent_start`` fires inside the ``delegate_task`` tool call.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from ..export.classify import approval_outcome

__all__ = ["ApprovalPairing", "SubagentPairing"]

Event = tuple[str, dict[str, Any]]

ESCALATED: Final = "escalate"
"""``choice`` reported for a smart review that handed the decision to a person (Hermes reports none)."""
WITHDRAWN: Final = "cancelled"
"""``choice`` of a request nobody answered before its tool call, turn or session ended."""
_TIMEOUT_SLACK: Final = 0.5
APPROVAL_DENIED: Final = "approval_denied"
"""``error_type`` of a tool call refused by a denied approval (``deny``, ``smart_deny``)."""
APPROVAL_TIMEOUT: Final = "approval_timeout"
"""``error_type`` of a tool call refused because its approval prompt timed out."""
DELEGATION_TOOL: Final = "delegate_task"
"""The Hermes tool whose call spawns subagents."""
CHILD_PLATFORM: Final = "subagent"
"""``platform`` of every hook a Hermes child agent fires."""
_DELEGATIONS_KEPT: Final = 16
_STOPPED_KEPT: Final = 1024
_APPROVAL_FIELDS: Final = ("command", "description", "pattern_key", "pattern_keys", "session_key", "surface",
                           "turn_id", "tool_call_id", "session_id")


@dataclass
class _Pending:
    payload: dict[str, Any]
    started: float


class ApprovalPairing:
    """Attach approvals to their session and tool call, and pair every request with one response.

    Args:
        clock: epoch seconds.
        timeout: the profile's ``approvals.timeout``; a CLI ``deny`` at least this long (less half a
            second) after its request is reported as ``choice = "timeout"`` (the raw value stays in
            ``hermes_choice``). ``None`` disables this.
    """

    def __init__(self, *, clock: Callable[[], float], timeout: float | None) -> None:
        self._clock = clock
        self.timeout = timeout
        self._tools: dict[str, tuple[str, str]] = {}
        self._pending: list[_Pending] = []
        self._refused: dict[str, str] = {}
        """``tool_call_id`` → the ``choice`` of its last approval response, when it refused the call."""

    def note_tool(self, tool_call_id: str, session_id: str, turn_id: str) -> None:
        """A tool call started: approvals raised inside it belong to ``session_id`` / ``turn_id``."""
        self._tools[tool_call_id] = (session_id, turn_id)

    def _attach(self, p: dict[str, Any], session_guess: str) -> None:
        tool_call_id = str(p.get("tool_call_id") or "")
        known = self._tools.get(tool_call_id) if tool_call_id else None
        if not p.get("session_id"):
            p["session_id"] = known[0] if known is not None else session_guess
        if not p.get("turn_id") and known is not None:
            p["turn_id"] = known[1]

    @staticmethod
    def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
        return (a.get("session_key") == b.get("session_key") and a.get("command") == b.get("command")
                and a.get("tool_call_id") == b.get("tool_call_id"))

    def _withdraw(self, pending: _Pending, choice: str, **extra: Any) -> Event:
        payload = {k: pending.payload.get(k) for k in _APPROVAL_FIELDS}
        payload["choice"] = choice
        payload.update(extra)
        return ("post_approval_response", payload)

    def request(self, p: dict[str, Any], session_guess: str) -> list[Event]:
        """``pre_approval_request``: attached; an escalated smart review of the same command is answered."""
        self._attach(p, session_guess)
        events: list[Event] = []
        if p.get("surface") != "smart":
            for pending in [q for q in self._pending if q.payload.get("surface") == "smart" and self._same(q.payload, p)]:
                self._pending.remove(pending)
                events.append(self._withdraw(pending, ESCALATED, decided_by="aux_llm"))
        self._pending.append(_Pending(p, self._clock()))
        events.append(("pre_approval_request", p))
        return events

    def response(self, p: dict[str, Any], session_guess: str) -> list[Event]:
        """``post_approval_response``: attached, ``decided_by`` set, a timed-out CLI prompt reported as such."""
        self._attach(p, session_guess)
        surface = p.get("surface")
        match = next((q for q in self._pending if q.payload.get("surface") == surface and self._same(q.payload, p)),
                     None)
        elapsed = None
        if match is not None:
            self._pending.remove(match)
            elapsed = self._clock() - match.started
        choice = p.get("choice")
        timed_out = (surface == "cli" and choice == "deny" and self.timeout is not None and elapsed is not None
                     and elapsed >= self.timeout - _TIMEOUT_SLACK)
        if timed_out:
            p["hermes_choice"] = choice
            p["choice"] = "timeout"
            p.setdefault("decided_by", "timeout")
        elif not p.get("decided_by"):
            p["decided_by"] = ("aux_llm" if surface == "smart" else "timeout" if choice == "timeout"
                               else "user")
        self._note_decision(str(p.get("tool_call_id") or ""), str(p.get("choice") or ""))
        return [("post_approval_response", p)]

    def _note_decision(self, tool_call_id: str, choice: str) -> None:
        if not tool_call_id:
            return
        if approval_outcome(choice) in ("denied", "timed_out"):
            self._refused[tool_call_id] = choice
        else:  # e.g. a person approving after a smart review
            self._refused.pop(tool_call_id, None)

    def mark_refused(self, p: dict[str, Any]) -> None:
        """``post_tool_call`` of a call whose approval was denied or timed out: ``status = "blocked"`` (OBS §7.5).

        Only an ``error`` outcome is changed (the refusal is what made the call fail); Hermes' own
        values stay in ``hermes_status`` / ``hermes_error_type``.
        """
        choice = self._refused.pop(str(p.get("tool_call_id") or ""), None)
        if choice is None or p.get("status") != "error":
            return
        p["hermes_status"], p["hermes_error_type"] = p.get("status"), p.get("error_type")
        p["status"] = "blocked"
        p["error_type"] = APPROVAL_TIMEOUT if approval_outcome(choice) == "timed_out" else APPROVAL_DENIED

    def tool_finished(self, tool_call_id: str) -> list[Event]:
        """A tool call ended: requests raised inside it and never answered are withdrawn."""
        self._tools.pop(tool_call_id, None)
        if not tool_call_id:
            return []
        left = [q for q in self._pending if q.payload.get("tool_call_id") == tool_call_id]
        return self._drop(left)

    def _drop(self, pendings: list[_Pending]) -> list[Event]:
        events = []
        for pending in pendings:
            self._pending.remove(pending)
            smart = pending.payload.get("surface") == "smart"
            events.append(self._withdraw(pending, ESCALATED if smart else WITHDRAWN,
                                         decided_by="aux_llm" if smart else "none"))
        return events

    def close_session(self, session_id: str) -> list[Event]:
        """The session ended: its unanswered requests are withdrawn."""
        for key in [k for k, v in self._tools.items() if v[0] == session_id]:
            del self._tools[key]
            self._refused.pop(key, None)
        return self._drop([q for q in self._pending if q.payload.get("session_id") == session_id])

    def close_all(self) -> list[Event]:
        """Every unanswered request is withdrawn (bridge shutdown)."""
        self._tools.clear()
        self._refused.clear()
        return self._drop(list(self._pending))


@dataclass
class _Child:
    start: dict[str, Any]
    started: float


class SubagentPairing:
    """Complete ``subagent_stop`` from its ``subagent_start`` and stop the children Hermes leaves running."""

    def __init__(self, *, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._open: dict[str, _Child] = {}
        self._stopped: OrderedDict[str, None] = OrderedDict()
        """The latest stopped children (at most :data:`_STOPPED_KEPT`): a late hook of one is never
        taken for the first hook of a new child session."""
        self._delegations: deque[tuple[str, str]] = deque(maxlen=_DELEGATIONS_KEPT)
        """``(session_id, turn_id)`` of the latest delegation tool calls."""

    def start(self, p: dict[str, Any]) -> list[Event]:
        """``subagent_start``: remembered by ``child_session_id``.

        When the child's own hooks came first (:meth:`infer_start`), the start already dispatched
        stands (a second one would end the first child session as an orphan); this one only
        completes what the child's stop is given. The start of a child that already stopped opens
        nothing (one child, one session scope).
        """
        child = str(p.get("child_session_id") or "")
        if child in self._stopped:  # the child's whole run came first (an inferred start, its stop): already told
            return []
        rec = self._open.get(child) if child else None
        if rec is not None and rec.start.get("hermes_inferred"):
            rec.start = dict(p, hermes_inferred=True)
            return []
        if child:
            self._open[child] = _Child(p, self._clock())
        return [("subagent_start", p)]

    def note_delegation(self, session_id: str, turn_id: str) -> None:
        """A ``delegate_task`` call started in ``session_id`` / ``turn_id``: children may follow."""
        self._delegations.append((session_id, turn_id))

    def infer_start(self, p: dict[str, Any], turn_open: Callable[[str, str], bool]) -> list[Event]:
        """The first hook of an unknown child session arrived before its ``subagent_start``.

        A hook with ``platform = "subagent"`` comes from a child agent; its parent is the latest
        delegation whose turn is still open (``turn_open(session_id, turn_id)``). The start is
        dispatched first, so the child nests under that call (or its turn) instead of opening a
        second root; nothing is inferred without such a delegation.
        """
        sid = str(p.get("session_id") or "")
        if p.get("platform") != CHILD_PLATFORM or not sid or sid in self._open or sid in self._stopped:
            return []
        for parent, turn in reversed(self._delegations):
            if parent != sid and turn_open(parent, turn):
                return self.start({"parent_session_id": parent, "parent_turn_id": turn, "parent_subagent_id": None,
                                   "child_session_id": sid, "child_subagent_id": None, "child_role": None,
                                   "child_goal": None, "hermes_inferred": True})
        return []

    def stop(self, p: dict[str, Any]) -> list[Event]:
        """``subagent_stop``: ``child_subagent_id``, the spawning ``parent_turn_id`` and the role filled in.

        A background child's stop may come after its parent turn and session ended: its session
        scope is still open (nothing ends it early), so the stop ends it with how it really ended.
        """
        child = str(p.get("child_session_id") or "")
        rec = self._open.pop(child, None)
        if child:
            self._stopped[child] = None
            self._stopped.move_to_end(child)
            while len(self._stopped) > _STOPPED_KEPT:
                self._stopped.popitem(last=False)
        if rec is not None:
            start = rec.start
            if start.get("parent_turn_id") and p.get("parent_turn_id") != start.get("parent_turn_id"):
                p["hermes_parent_turn_id"] = p.get("parent_turn_id")
                p["parent_turn_id"] = start["parent_turn_id"]
            for key in ("child_subagent_id", "parent_subagent_id", "child_role"):
                if p.get(key) is None and start.get(key) is not None:
                    p[key] = start[key]
        p.setdefault("tool_call_history", [])
        p.setdefault("tool_call_history_dropped", 0)
        return [("subagent_stop", p)]

    def is_child(self, session_id: str) -> bool:
        """Whether ``session_id`` is a subagent that has started and not stopped."""
        return session_id in self._open

    def children_of(self, parent_session_id: str) -> list[str]:
        """Open children of ``parent_session_id``."""
        return [c for c, rec in self._open.items() if rec.start.get("parent_session_id") == parent_session_id]

    def open_children(self) -> list[str]:
        """Every open child."""
        return list(self._open)

    def unfinished_stop(self, child_session_id: str, reason: str) -> Event:
        """The ``subagent_stop`` Hermes never sent: the child was still running when its parent ended."""
        rec = self._open.pop(child_session_id)
        start = rec.start
        payload: dict[str, Any] = {
            "parent_session_id": start.get("parent_session_id"), "parent_turn_id": start.get("parent_turn_id"),
            "parent_subagent_id": start.get("parent_subagent_id"), "child_session_id": child_session_id,
            "child_subagent_id": start.get("child_subagent_id"), "child_role": start.get("child_role"),
            "child_status": "interrupted", "child_outcome": f"unfinished_at_{reason}", "child_summary": None,
            "duration_ms": max(0, int((self._clock() - rec.started) * 1000)),
            "tool_call_history": [], "tool_call_history_dropped": 0,
        }
        return ("subagent_stop", payload)
