"""Shared-metrics accounting: lifecycle facts of the profile's stream → allowlisted metrics events (spec 05 §4).

One :class:`Accounting` per profile runtime. It keeps just enough state to count (open tasks keyed by
``task_id``, logical model calls keyed by ``api_request_id``, open tool calls keyed by the stream's scope UUID)
and emits :class:`~.events.MetricsEvent` objects whose ``data`` holds only closed-vocabulary values.
Identifiers, names and text are used as in-memory keys at most and never enter an event.

Its facts come from the profile's one scope stream (:mod:`.scope_listener` reads the scope events and calls the
methods here, on the subscriber's writer thread, with each event's own time replayed by
:class:`~.clock.HookClock`); starts and ends are paired once, by the stream (``end.start``), so a tool call
is closed by the end of its own scope. Still thread-safe: the host's own calls (setup and skill marks, the
outer task boundary) may run on the caller's thread.

Scopes: ``hermes.task_run`` emits its start (which carries the start counter's dimensions) and its
end; ``hermes.model_call`` and ``hermes.tool_call`` emit only their end event, which carries
everything their counters need (their start would be validated and discarded by the subscriber,
so it is not produced).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from . import events as ev
from . import vocab as v
from .clock import Clock
from .taskstate import CallRecord, RetiredIds, TaskRecord, ToolRecord, match_tool, tool_identity

Emit = Callable[[ev.MetricsEvent], object]
ToolsetResolver = Callable[[str], "str | None"]

OPEN_TASK_LIMIT: Final = 4096
"""Tasks a host never ends are finished as ``unknown`` beyond this many open ones (bounded memory)."""
_CHILD_LIMIT: Final = 1024


def _resolver(toolsets: Mapping[str, str] | ToolsetResolver | None) -> ToolsetResolver:
    if toolsets is None:
        return lambda name: None
    if callable(toolsets):
        return toolsets
    table = dict(toolsets)
    return table.get


class Accounting:
    """Turns the stream's lifecycle facts into metrics events for one profile runtime (SM-17..SM-33).

    Args:
        emit: receives each event (the profile's subscriber).
        runtime_id: the random id of this (process, profile) runtime (SM-14).
        clock: wall time for event stamps, monotonic time for durations.
        toolsets: the runtime tool registry: tool name → declaring toolset (a mapping or a
            callable). The category comes from the toolset only (SM-25); unknown tools → ``unknown``.
        entrypoint: a host-declared entrypoint (SM-42), e.g. ``background``.
    """

    def __init__(self, emit: Emit, runtime_id: str, clock: Clock, *,
                 toolsets: Mapping[str, str] | ToolsetResolver | None = None, entrypoint: str | None = None) -> None:
        self._emit = emit
        self.runtime_id = runtime_id
        self.clock = clock
        self._toolset_of = _resolver(toolsets)
        self.entrypoint = entrypoint
        self._lock = threading.RLock()
        self._tasks: OrderedDict[str, TaskRecord] = OrderedDict()
        self._turn_task: dict[str, str] = {}
        self._retired_tasks = RetiredIds()
        self._retired_turns = RetiredIds()
        self._children: OrderedDict[str, None] = OrderedDict()
        self._session_scopes: dict[str, str] = {}

    # ------------------------------------------------------------------ emit helpers

    def _scope(self, name: str, phase: str, scope_id: str, data: Mapping[str, Any] | None = None, *,
               parent: str | None = None, status: str | None = None) -> None:
        self._emit(ev.scope_event(name, phase, scope_id, self.clock.now(), self.runtime_id, parent=parent,
                                  data=data, status=status))

    def _mark(self, name: str, data: Mapping[str, Any] | None = None) -> None:
        self._emit(ev.mark_event(name, self.clock.now(), self.runtime_id, data))

    def _category(self, tool_name: object, toolset: object = None) -> str:
        """From the toolset the host declared on the hook, else the configured registry (SM-25)."""
        if isinstance(toolset, str) and toolset.strip():
            return v.tool_category(toolset)
        try:
            toolset = self._toolset_of(tool_name) if isinstance(tool_name, str) else None
        except Exception:
            toolset = None
        return v.tool_category(toolset)

    def _task(self, task_id: object, session_id: object = None) -> TaskRecord | None:
        if not isinstance(task_id, str) or not task_id or task_id in self._retired_tasks:
            return None
        task = self._tasks.get(task_id)
        if task is not None and isinstance(session_id, str) and session_id:
            task.session_id = session_id  # ownership follows task_id across session rotation (SM-21)
        return task

    # ------------------------------------------------------------------ session and task lifecycle

    def session_started(self, session_id: object = None) -> None:
        """``on_session_start``: attempt ``hermes.client.active`` and ``hermes.client.first_usable`` (SM-34, SM-36)."""
        with self._lock:
            self._mark(ev.CLIENT_ACTIVE)
            self._mark(ev.CLIENT_FIRST_USABLE)

    def task_started(self, task_id: object, session_id: object, turn_id: object, platform: object) -> None:
        """``pre_llm_call``: open the task run keyed by ``task_id`` (SM-18) and attempt client activity."""
        with self._lock:
            if not isinstance(task_id, str) or not task_id or task_id in self._retired_tasks:
                return
            if isinstance(turn_id, str) and turn_id in self._retired_turns:
                return
            task = self._task(task_id, session_id)
            if task is None:
                session = session_id if isinstance(session_id, str) else ""
                surface = v.execution_surface(platform)
                entry = v.entrypoint(surface, declared=self.entrypoint, delegated=session in self._children)
                task = TaskRecord(ev.new_uuid(), session, self.clock.monotonic())
                self._tasks[task_id] = task
                parent = self._session_scopes.setdefault(session, ev.new_uuid())
                self._scope(ev.TASK_RUN, "start", task.scope_id,
                            {"entrypoint": entry, "execution_surface": surface}, parent=parent)
                if len(self._tasks) > OPEN_TASK_LIMIT:
                    oldest = next(iter(self._tasks))
                    self._finish(oldest, *v.terminal_state())
            if isinstance(turn_id, str) and turn_id:
                task.turn_ids.add(turn_id)
                self._turn_task[turn_id] = task_id
            self._mark(ev.CLIENT_ACTIVE)

    def task_ended(self, task_id: object, *, completed: object = False, interrupted: object = False,
                   failed: object = False, turn_exit_reason: object = None, reason: object = None,
                   session_id: object = None, turn_id: object = None) -> bool:
        """``on_session_end``: finish the task (SM-19); ``True`` if a task was finished. Without a ``task_id``,
        the task that ``turn_id`` belongs to."""
        why = turn_exit_reason if isinstance(turn_exit_reason, str) and turn_exit_reason else reason
        with self._lock:
            if (not isinstance(task_id, str) or not task_id) and isinstance(turn_id, str):
                task_id = self._turn_task.get(turn_id)
            if self._task(task_id, session_id) is None:
                return False
            return self._finish(str(task_id), *v.terminal_state(interrupted=interrupted, completed=completed,
                                                                 failed=failed, reason=why))

    def finish_task(self, task_id: str, error: BaseException | None = None) -> bool:
        """The host's outer agent boundary (SM-19); a no-op if ``on_session_end`` already finished the task."""
        with self._lock:
            if self._task(task_id) is None:
                return False
            return self._finish(task_id, *v.terminal_state(reason=v.exit_reason_of(error)))

    def session_closed(self, session_id: object) -> list[str]:
        """Finalize, reset or the child's ``subagent_stop``: finish its open tasks as system_aborted."""
        if not isinstance(session_id, str):
            return []
        with self._lock:
            owned = [tid for tid, task in self._tasks.items() if task.session_id == session_id]
            for tid in owned:
                self._finish(tid, *v.terminal_state(failed=True, reason="system_aborted"))
            self._session_scopes.pop(session_id, None)
            self._children.pop(session_id, None)
            return owned

    def session_rotated(self, old_session_id: object, new_session_id: object) -> None:
        """An ID-rotating compaction: the old id's open tasks go on under the new id, so the old session's close
        does not abort them (SM-21: ownership follows ``task_id``)."""
        if not isinstance(old_session_id, str) or not isinstance(new_session_id, str) or not new_session_id:
            return
        with self._lock:
            for task in self._tasks.values():
                if task.session_id == old_session_id:
                    task.session_id = new_session_id

    def child_started(self, child_session_id: object) -> None:
        """``subagent_start``: tasks of the child session are ``delegated`` (SM-42)."""
        if isinstance(child_session_id, str) and child_session_id:
            with self._lock:
                self._children[child_session_id] = None
                while len(self._children) > _CHILD_LIMIT:
                    self._children.popitem(last=False)

    def _finish(self, task_id: str, outcome: str, end_reason: str, termination: str) -> bool:
        task = self._tasks.pop(task_id, None)
        if task is None:
            return False
        now = self.clock.monotonic()
        leftover = "cancelled" if outcome == "cancelled" else "timed_out" if outcome == "timed_out" else "failed"
        for tool in task.tools.values():  # SM-28: tools still open when the task ends are closed with it
            task.tool_calls += 1
            self._tool_end(tool.scope_id, tool.category, leftover, tool.approval, (now - tool.started) * 1000, None,
                           parent=task.scope_id)
        task.tools.clear()
        duration_ms = max(int((now - task.started) * 1000), 0)
        self._scope(ev.TASK_RUN, "end", task.scope_id, {
            "outcome": outcome, "end_reason": end_reason, "termination": termination,
            "duration_bucket": v.duration_bucket(duration_ms),
            "model_call_count_bucket": v.count_bucket(len(task.calls) + task.anonymous_calls),
            "tool_call_count_bucket": v.count_bucket(task.tool_calls),
            "retry_count_bucket": v.count_bucket(task.retries),
            "duration_ms": duration_ms,
        }, status="OK" if outcome == "success" else "ERROR")
        self._retired_tasks.add(task_id)
        for turn_id in task.turn_ids:
            self._retired_turns.add(turn_id)
            self._turn_task.pop(turn_id, None)
        return True

    # ------------------------------------------------------------------ model calls

    def api_request_started(self, task_id: object, api_request_id: object, retry_count: object,
                            session_id: object = None) -> None:
        """``pre_api_request``: open or continue the logical call; count retries (SM-20)."""
        with self._lock:
            task = self._task(task_id, session_id)
            if task is None:
                return
            if not isinstance(api_request_id, str) or not api_request_id:
                task.anonymous_calls += 1  # no id: each attempt is its own logical call
                return
            if api_request_id in task.calls:
                task.retries += 1
                return
            task.calls[api_request_id] = CallRecord(ev.new_uuid(), self.clock.monotonic())
            if v.is_count(retry_count) and retry_count > 0:  # type: ignore[operator]
                task.retries += 1  # a fallback path that reset the ordinal

    def api_request_failed(self, task_id: object, session_id: object = None) -> None:
        """``api_request_error``: the logical call stays open (a retry may follow); ownership is refreshed."""
        with self._lock:
            self._task(task_id, session_id)

    def api_request_succeeded(self, task_id: object, api_request_id: object, *, response_model: object,
                              model: object, provider: object, api_duration: object,
                              session_id: object = None) -> None:
        """``post_api_request``: close the logical call once → ``hermes.model_route.count`` (SM-22)."""
        with self._lock:
            task = self._task(task_id, session_id)
            if task is None:
                return
            key = api_request_id if isinstance(api_request_id, str) and api_request_id else None
            call = task.calls.get(key) if key is not None else None
            if call is None:
                call = CallRecord(ev.new_uuid(), self.clock.monotonic())
                if key is not None:
                    task.calls[key] = call
                else:
                    task.anonymous_calls += 1
            if call.closed:
                return
            call.closed = True
            route = v.model_id(response_model)
            if route == "unknown":
                route = v.model_id(model)
            seconds = api_duration if isinstance(api_duration, int | float) and not isinstance(api_duration, bool) \
                and api_duration >= 0 else self.clock.monotonic() - call.started
            self._scope(ev.MODEL_CALL, "end", call.scope_id, {
                "model": route, "provider": v.provider_id(provider), "duration_ms": max(int(seconds * 1000), 0),
            }, parent=task.scope_id, status="OK")

    # ------------------------------------------------------------------ tools and approvals

    def tool_started(self, scope: int, task_id: object, turn_id: object, api_request_id: object, tool_call_id: object,
                     tool_name: object, session_id: object = None, toolset: object = None) -> None:
        """A tool scope started: open a tool record keyed by the scope's UUID, with its category from the
        declaring toolset (SM-25): the ``toolset`` the host put on the call, else the ``toolsets`` resolver."""
        with self._lock:
            task = self._task(task_id, session_id)
            if task is None:
                return
            identity = tool_identity(api_request_id, turn_id, tool_call_id)
            if identity[2] and (identity in task.done or any(t.identity == identity for t in task.tools.values())):
                return
            task.tools[scope] = ToolRecord(identity, self._category(tool_name, toolset), self.clock.monotonic(),
                                           ev.new_uuid())

    def tool_finished(self, scope: int, task_id: object, turn_id: object, api_request_id: object,
                      tool_call_id: object, tool_name: object, status: object, duration_ms: object,
                      session_id: object = None, toolset: object = None) -> None:
        """The tool scope ended (its end names its start): close its record, dedupe and count (SM-24, SM-26,
        SM-27). Without an open record it is a new completed call."""
        with self._lock:
            task = self._task(task_id, session_id)
            if task is None:
                return
            identity = tool_identity(api_request_id, turn_id, tool_call_id)
            if identity[2] and identity in task.done:
                return
            tool = match_tool(task.tools, scope, identity)
            if tool is not None:
                latency = duration_ms if v.is_count(duration_ms) else (self.clock.monotonic() - tool.started) * 1000
                scope_id, category, approval = tool.scope_id, tool.category, tool.approval
            else:
                latency = duration_ms if v.is_count(duration_ms) else None
                scope_id, category, approval = ev.new_uuid(), self._category(tool_name, toolset), None
            if identity[2]:
                task.done.add(identity)
            task.tool_calls += 1
            self._tool_end(scope_id, category, v.tool_outcome(status), approval, latency, None,
                           parent=task.scope_id)

    def _tool_end(self, scope_id: str, category: str, outcome: str, approval: str | None, latency: Any,
                  retry_count: object, *, parent: str | None = None) -> None:
        self._scope(ev.TOOL_CALL, "end", scope_id, {
            "tool_category": category, "outcome": outcome, "approval_outcome": approval or "not_required",
            "latency_bucket": v.latency_bucket(latency), "retry_count_bucket": v.retry_bucket(retry_count),
        }, parent=parent, status="OK" if outcome == "success" else "ERROR")

    def approval_resolved(self, choice: object, *, turn_id: object = None, tool_call_id: object = None,
                          session_id: object = None) -> None:
        """``post_approval_response``: one ``hermes.tool_approval`` mark, attributed when possible (SM-29, SM-30)."""
        outcome = v.approval_outcome(choice)
        with self._lock:
            tool = None
            if isinstance(tool_call_id, str) and tool_call_id:
                for task in self._candidate_tasks(turn_id, session_id):
                    tool = next((t for t in reversed(task.tools.values()) if t.identity[2] == tool_call_id), None)
                    if tool is not None:
                        break
            if tool is not None:
                tool.approval = outcome
            self._mark(ev.TOOL_APPROVAL, {"attribution": "tool_call" if tool is not None else "unattributed",
                                          "outcome": outcome})

    def _candidate_tasks(self, turn_id: object, session_id: object) -> Iterable[TaskRecord]:
        task_id = self._turn_task.get(turn_id) if isinstance(turn_id, str) and turn_id else None
        if task_id is not None:
            task = self._tasks.get(task_id)
            return [task] if task is not None else []
        if isinstance(turn_id, str) and turn_id:
            return []
        return [t for t in self._tasks.values() if isinstance(session_id, str) and t.session_id == session_id]

    # ------------------------------------------------------------------ skills and setup

    def skill_event(self, action: object, *, provenance: object = None, success: object = True,
                    use_count: object = None, reused: object = None, reuse_after_patch: object = None) -> bool:
        """``on_skill_lifecycle`` (SM-31, SM-32); ``True`` if an event was emitted."""
        if success is False:
            return False  # failed mutations emit nothing
        name = action.strip().lower() if isinstance(action, str) else ""
        origin = v.skill_provenance(provenance)
        with self._lock:
            if name == "loaded":
                if not v.is_count(use_count) or not isinstance(reused, bool):
                    return False
                states = v.skill_load_states(use_count, reused, reuse_after_patch is True)  # type: ignore[arg-type]
                if states is None:
                    return False
                self._mark(ev.SKILL_LOAD, {"provenance": origin, "reuse_state": states[0],
                                           "post_patch_state": states[1], "use_count_bucket": states[2]})
                return True
            if name not in v.SKILL_ACTIONS:
                return False
            self._mark(ev.SKILL_LIFECYCLE, {"action": name, "provenance": origin})
            return True

    def setup_started(self, mode: object) -> None:
        """SM-36: ``hermes.setup.started{mode}``."""
        with self._lock:
            self._mark(ev.SETUP_STARTED, {"mode": v.setup_mode(mode)})

    def setup_finished(self, mode: object, outcome: object, failure_stage: object = None) -> None:
        """SM-36: ``hermes.setup.finished{mode, outcome, failure_stage}``."""
        result, stage = v.setup_finish(outcome, failure_stage)
        with self._lock:
            self._mark(ev.SETUP_FINISHED, {"mode": v.setup_mode(mode), "outcome": result, "failure_stage": stage})

    def open_tasks(self) -> int:
        """How many tasks are open (diagnostics)."""
        with self._lock:
            return len(self._tasks)
