"""Scope events → the rows of task runs and what happened in them (spec 06 BOOK-19, BOOK-22, BOOK-25, BOOK-26).

Shared by the observability store, which writes the rows, and the OpenTelemetry metrics, which count them
(so both agree on what a task, a failed call or a memory write is). :class:`RowBuilder` runs on the
consumer's writer thread, never the agent's. It reads each scope end as a closed scope (its start is
``end.start``, paired once by the tracker) and produces, in event order:

- a ``task_runs`` row at the end of each ``agent.run`` (outcome, counts, tokens, known cost);
- an ``llm_calls`` row at the end of each ``llm.call`` (the provider's cost, else the price table);
- a ``skill_runs`` row at the end of each ``skill.run``;
- a :class:`SkillChange` for each ``hermes.skill.lifecycle`` mark (the writer adds hashes and the
  version), a :class:`MemoryWrite` for each ``memory.update`` tool call (rows for a successful one), whose actor is
  ``skill-execution`` when a ``skill.run`` is open in the same ``agent.run`` and
  ``agent-reflection`` otherwise;
- :data:`TURN_ENDED` after every ``agent.run``, when the writer rescans the memory directories.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from . import surfaces
from .call_cost import Price, call_cost
from .classify import failure_message
from .decisions import DECISION_MARKS, Decisions, tool_error_rows
from .events import ScopeEvent
from .ids import uuid_str
from .timestamps import sqlite_utc

CHANGE_TYPES: Final = {"created": "create", "installed": "create", "patched": "refine", "edited": "refine",
                       "file_written": "refine", "file_removed": "refine", "stale": "deprecate",
                       "archived": "deprecate", "deleted": "deprecate", "restored": "restore"}
"""Skill lifecycle actions → ``skill_history.change_type`` (BOOK-19; ``file_written`` / ``file_removed``: a
supporting file of the skill changed; ``deleted``: the skill is gone)."""
TURN_ENDED: Final = "turn_ended"


@dataclass(frozen=True, slots=True)
class SkillChange:
    """A successful skill mutation reported by a lifecycle event."""

    skill_name: str
    action: str
    change_type: str
    provenance: str | None
    reason: str | None
    session_id: str | None
    changed_at: str
    trajectory_id: str | None = None
    """The run (``agent.run``) that made the change, as ``task_runs.trajectory_id``."""
    turn_id: str | None = None


@dataclass(frozen=True, slots=True)
class MemoryWrite:
    """A successful memory tool call: the writer parses its operations (:mod:`.memory_changes`)."""

    tool: str
    arguments: Any
    actor: str
    session_id: str | None
    tool_call_id: str
    changed_at: str
    succeeded: bool = True
    """A failed call is no row; the writer still ends its in-flight mark (:mod:`.probe`)."""
    trajectory_id: str | None = None
    """The run (``agent.run``) that made the change, as ``task_runs.trajectory_id``."""
    turn_id: str | None = None


Row = tuple[str, dict[str, Any]]
Item = Row | SkillChange | MemoryWrite | str


class _Turn:
    __slots__ = ("llm_calls", "skill_runs", "start", "tool_calls", "costs", "input_tokens", "output_tokens")

    def __init__(self, start: ScopeEvent) -> None:
        self.start = start
        self.llm_calls = 0
        self.tool_calls = 0
        self.input_tokens = 0
        self.output_tokens = 0
        self.costs: list[float] = []
        self.skill_runs = 0


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class RowBuilder:
    """Turns events into :data:`Item` s (see the module docstring); one instance per store sink.

    No table of open scopes: an end brings its own start (``end.start``, the closed scope the tracker
    hands every listener). What is kept is only what a row needs beyond one pair, each keyed by the
    run it belongs to: the open ``agent.run`` aggregates (``_turns``: calls, tokens and costs counted
    into its ``task_runs`` row, skill runs open in it) and, for each scope open inside a run, that run
    (``_run_of_scope``: a decision mark or a tool's error rows name the run around their parent).
    """

    def __init__(self, prices: Mapping[tuple[str, str], Price] | None = None) -> None:
        self.prices = dict(prices or {})
        self._turns: dict[int, _Turn] = {}
        """Open ``agent.run`` scope uuid → what its ``task_runs`` row counts."""
        self._run_of_scope: dict[int, int] = {}
        """Uuid of a scope open inside a run → that run's uuid (the run enclosing a mark's parent)."""
        self._subagent_sessions: set[int] = set()
        self._decisions = Decisions(self._run_of)

    def _run_of(self, uuid: int | None) -> int | None:
        """The ``agent.run`` scope enclosing the open scope ``uuid`` (for decision rows)."""
        if not uuid:
            return None
        if uuid in self._turns:
            return uuid
        run = self._run_of_scope.get(uuid)
        return run if run in self._turns else None  # a run already ended encloses nothing any more

    def feed(self, event: ScopeEvent) -> list[Item]:
        """The items ``event`` produces (usually none)."""
        if event.kind == "mark":
            if event.name in DECISION_MARKS:
                return list(self._decisions.feed(event))
            return self._mark(event)
        if event.phase == "start":
            parent = event.parent_uuid
            run = parent if parent in self._turns else self._run_of_scope.get(parent) if parent else None
            if event.name == "agent.run":
                self._turns[event.uuid] = _Turn(event)
            elif event.name == "hermes.session" and event.metadata.get("hermes.scope_role") == "subagent":
                self._subagent_sessions.add(event.uuid)
            elif event.name == "skill.run":
                turn = self._turns.get(event.parent_uuid or 0)
                if turn is not None:
                    turn.skill_runs += 1
            if run is not None:
                self._run_of_scope[event.uuid] = run
            return []
        self._run_of_scope.pop(event.uuid, None)
        start = event.start
        if start is None:
            return []
        if event.name == "agent.run":
            return self._turn_end(start, event)
        if event.name == "llm.call":
            return self._llm_end(start, event)
        if event.name == "skill.run":
            turn = self._turns.get(start.parent_uuid or 0)
            if turn is not None:
                turn.skill_runs -= 1
            return [("skill_runs", {
                "skill_name": start.metadata.get("hermes.skill.name"), "trajectory_id": _uuid(start.parent_uuid),
                "turn_id": start.metadata.get("hermes.turn_id"), "started_at": sqlite_utc(start.timestamp_us),
                "ended_at": sqlite_utc(event.timestamp_us), "outcome": (event.data or {}).get("outcome")})]
        if event.name == "hermes.session":
            self._subagent_sessions.discard(event.uuid)
            return []
        if start.category == "tool":
            return [*tool_error_rows(start, event, self._run_of(start.parent_uuid)), *self._tool_end(start, event)]
        return []

    # ------------------------------------------------------------------ per kind

    def _mark(self, event: ScopeEvent) -> list[Item]:
        if event.name != "hermes.skill.lifecycle":
            return []
        data = event.data or {}
        action = data.get("action")
        name = _str(data.get("skill_name"))
        if action not in CHANGE_TYPES or name is None:
            return []
        return [SkillChange(name, action, CHANGE_TYPES[action], _str(data.get("provenance")),
                            _str(event.metadata.get("hermes.skill.reason")),
                            _str(event.metadata.get("hermes.session_id")), sqlite_utc(event.timestamp_us),
                            _uuid(self._run_of(event.parent_uuid)), _str(event.metadata.get("hermes.turn_id")))]

    def _turn_of(self, start: ScopeEvent) -> _Turn | None:
        return self._turns.get(start.parent_uuid or 0)

    def _llm_end(self, start: ScopeEvent, end: ScopeEvent) -> list[Item]:
        data = end.data or {}
        usage = data.get("usage") if isinstance(data.get("usage"), Mapping) else None
        response: Any = data.get("response")
        full: Any = response.get("usage") if isinstance(response, Mapping) else None
        full = full if isinstance(full, Mapping) else {}
        provider = _str(start.metadata.get("hermes.provider"))
        model = _str((end.profile or {}).get("model_name")) or _str((start.profile or {}).get("model_name"))
        failed = end.metadata.get("otel.status_code") == "ERROR" or "error" in data
        cost = call_cost(usage, full.get("cost_usd"), provider, model, self.prices) if not failed else None
        turn = self._turn_of(start)
        if turn is not None:
            turn.llm_calls += 1
            if usage is not None:
                turn.input_tokens += _int(usage.get("input_tokens")) or 0
                turn.output_tokens += _int(usage.get("output_tokens")) or 0
            if cost is not None:
                turn.costs.append(cost)
        return [("llm_calls", {
            "started_at": sqlite_utc(start.timestamp_us), "ended_at": sqlite_utc(end.timestamp_us),
            "session_id": start.metadata.get("hermes.session_id"), "turn_id": start.metadata.get("hermes.turn_id"),
            "api_request_id": start.metadata.get("hermes.api_request_id"), "provider": provider, "model": model,
            "status": "error" if failed else "ok",
            "error_type": end.metadata.get("error.type") if failed else None,
            "input_tokens": _int((usage or {}).get("input_tokens")),
            "output_tokens": _int((usage or {}).get("output_tokens")),
            "cache_read_tokens": _int((usage or {}).get("cache_read_tokens")), "cost_usd": cost,
            "error_message": failure_message(data) if failed else None})]

    def _turn_end(self, start: ScopeEvent, end: ScopeEvent) -> list[Item]:
        turn = self._turns.pop(start.uuid, None) or _Turn(start)
        data = end.data or {}
        meta = end.metadata
        if data.get("completed") is True:
            outcome = "success"
        elif data.get("interrupted") is True or meta.get("error.type") == "cancelled":
            outcome = "cancelled"
        elif meta.get("error.type") in ("timeout", "timed_out"):
            outcome = "timed_out"
        elif meta.get("otel.status_code") == "ERROR" or data:
            outcome = "failed"
        else:
            outcome = "unknown"
        platform = _str(start.metadata.get("hermes.platform"))
        surface = surfaces.execution_surface(platform)
        entry = surfaces.entrypoint(surface, delegated=start.session_uuid in self._subagent_sessions)
        return [("task_runs", {
            "trajectory_id": uuid_str(start.uuid), "session_id": start.metadata.get("hermes.session_id"),
            "task_id": start.metadata.get("hermes.task_id"), "turn_id": start.metadata.get("hermes.turn_id"),
            "platform": platform, "task_class": f"{surface}:{entry}", "started_at": sqlite_utc(start.timestamp_us),
            "ended_at": sqlite_utc(end.timestamp_us), "outcome": outcome, "llm_calls": turn.llm_calls,
            "tool_calls": turn.tool_calls, "input_tokens": turn.input_tokens, "output_tokens": turn.output_tokens,
            "cost_usd": sum(turn.costs) if turn.costs else None,
            "error_type": meta.get("error.type") if outcome != "success" else None,
            "error_message": failure_message(data) if outcome != "success" else None}), TURN_ENDED]

    def _tool_end(self, start: ScopeEvent, end: ScopeEvent) -> list[Item]:
        turn = self._turn_of(start)
        if turn is not None:
            turn.tool_calls += 1
        if start.metadata.get("hermes.span_kind") != "memory.update":
            return []
        failed = end.metadata.get("otel.status_code") == "ERROR" \
            or end.metadata.get("hermes.tool.status") not in (None, "ok") \
            or _refused((end.data or {}).get("result"))  # only successful writes are rows
        args = (start.data or {}).get("arguments")
        call_id = (start.profile or {}).get("tool_call_id")
        return [MemoryWrite(start.name, args, "skill-execution" if turn is not None and turn.skill_runs > 0
                            else "agent-reflection", _str(start.metadata.get("hermes.session_id")),
                            call_id if isinstance(call_id, str) else "", sqlite_utc(end.timestamp_us), not failed,
                            _uuid(self._run_of(start.parent_uuid)), _str(start.metadata.get("hermes.turn_id")))]


def _refused(result: Any) -> bool:
    """A result saying the write did not happen: ``success: false``, or only staged for approval (Hermes'
    write gate answers ``{"success": true, "staged": true}`` and writes nothing until approved)."""
    if not isinstance(result, str) or not result.startswith("{") or '"s' not in result:
        return False
    try:
        parsed = json.loads(result)
    except ValueError:
        return False
    return isinstance(parsed, Mapping) and (parsed.get("success") is False or parsed.get("staged") is True)


def _uuid(value: int | None) -> str | None:
    return uuid_str(value) if value else None
