"""The hooks object: Hermes observer hooks → the scope kinds → one scope tracker (spec 04 §2.11, FMT-24 rows 1-22).

:class:`ScopePlugin` is what an engine registers (``engine.add_plugin(plugin, name=...)``). It composes
one :class:`~hermes_pipeline.export.scopes.ScopeTracker` and one object per scope kind
(:mod:`~hermes_pipeline.export.scope_kinds`); each ``@hookimpl`` method hands its hook's fields to the
kind that projects them. Attach every exporter with ``add_listener`` so that they all see the same UUIDs
(FMT-56). Row 22 needs a host call; ``on_session_segment`` and ``on_compaction`` (hermes_pipeline
extension hooks) give rows 2 (rotation, note 4) and 21.

Two modes:

- ``deferred=True`` (what the exporters use): a hook callback only reads the clock and enqueues a
  record on the bounded publication queue (:mod:`~hermes_pipeline.export.publication`, FMT-79/80);
  the kinds and the listeners run on the publication thread. Call :meth:`ScopePlugin.flush`
  before reading results and :meth:`ScopePlugin.shutdown` at the end.
- ``deferred=False`` (default): the kinds run on the hook caller's thread under the tracker's lock and
  listeners are called there, synchronously.

Content fields are kept as the hooks gave them, then credential-scrubbed once for every listener
(:mod:`~hermes_pipeline.export.redaction`); the per-destination content gate (§2.13) is applied by exporters.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..engine.deadline import Deadline
from .publication import TrackerDestination, attempt_key, child_key, deferrable, tool_key, turn_key
from .scope_kinds.approval import Approvals
from .scope_kinds.llm_call import LlmCalls
from .scope_kinds.session import Sessions
from .scope_kinds.skill import SkillRuns
from .scope_kinds.subagent import Subagents
from .scope_kinds.tool_call import ToolCalls
from .scope_kinds.trigger import Triggers
from .scope_kinds.turn import Turns
from .scopes import Listener, Sanitizer, ScopeTracker
from .writer import BoundedWriter


class ScopePlugin:
    """The hooks object: one tracker, the scope kinds, the publication queue (see the module docstring).

    Args:
        listeners: initial listeners (``fn(event)``).
        deferred: run the scope kinds on the publication thread (see the module docstring).
        max_queue_size: capacity of the publication queue in hook records (FMT-80).
        toolsets, memory_tools, redact_credentials, max_value_chars: see :class:`ScopeTracker`.
    """

    def __init__(self, listeners: tuple[Listener, ...] = (), *, deferred: bool = False,
                 max_queue_size: int = 10_000, toolsets: Mapping[str, str] | None = None,
                 memory_tools: Mapping[str, str] | None = None, redact_credentials: bool = True,
                 max_value_chars: int | None = None) -> None:
        tracker = ScopeTracker(listeners, toolsets=toolsets, memory_tools=memory_tools,
                               redact_credentials=redact_credentials, max_value_chars=max_value_chars)
        self.tracker = tracker
        """The one scope tracker every kind projects onto."""
        self.sessions = Sessions(tracker)
        self.triggers = Triggers(tracker)
        self.skills = SkillRuns(tracker)
        self.subagents = Subagents(tracker)
        self.turns = Turns(tracker, sessions=self.sessions, skills=self.skills, subagents=self.subagents,
                           triggers=self.triggers)
        self.llm_calls = LlmCalls(tracker)
        self.tool_calls = ToolCalls(tracker, copy_arguments=not deferred)
        self.approvals = Approvals(tracker)
        self._closed = False
        self._publication: BoundedWriter | None = None
        """The deferred-mode publication queue, or ``None`` when hooks run inline (read by ``deferrable``)."""
        self._dropped_keys: set[Any] = set()
        """Keys of scopes whose opening record was dropped by the publication queue (FMT-80)."""
        if deferred:
            self._destination = TrackerDestination(tracker, self)
            self._publication = BoundedWriter(self._destination, name="publication", max_queue_size=max_queue_size,
                                              max_attempts=1).start()

    # ------------------------------------------------------------------ the tracker's public face

    @property
    def redact_credentials(self) -> bool:
        return self.tracker.redact_credentials

    @property
    def max_value_chars(self) -> int:
        return self.tracker.max_value_chars

    @property
    def toolsets(self) -> Mapping[str, str]:
        return self.tracker.toolsets

    @property
    def memory_tools(self) -> Mapping[str, str]:
        return self.tracker.memory_tools

    def add_listener(self, listener: Listener) -> None:
        """Deliver every later event to ``listener`` as well (:meth:`ScopeTracker.add_listener`)."""
        self.tracker.add_listener(listener)

    def remove_listener(self, listener: Listener) -> None:
        """Stop delivering to ``listener`` (:meth:`ScopeTracker.remove_listener`)."""
        self.tracker.remove_listener(listener)

    def add_sanitizer(self, sanitizer: Sanitizer, *, priority: int = 0, name: str | None = None) -> None:
        """Run ``sanitizer`` on every later event before any listener sees it (:meth:`ScopeTracker.add_sanitizer`)."""
        self.tracker.add_sanitizer(sanitizer, priority=priority, name=name)

    def stats(self) -> dict[str, int]:
        """The tracker's ``open_sessions``, ``listener_errors`` and ``sanitizer_failures``."""
        return self.tracker.stats()

    def open_session_ids(self) -> list[str]:
        """Hermes session IDs whose session scope is open."""
        return self.tracker.open_session_ids()

    def close_all(self, reason: str = "shutdown", timeout: float | None = None) -> int:
        """Synthesize the end of every open scope (:meth:`ScopeTracker.close_all`)."""
        return self.tracker.close_all(reason, timeout)

    def release_held(self, timeout: float | None = None) -> bool:
        """Publish every tool start still held back (:meth:`ScopeTracker.release_held`)."""
        return self.tracker.release_held(timeout)

    # ------------------------------------------------------------------ lifecycle

    @property
    def deferred(self) -> bool:
        """Whether the scope kinds run on the publication thread."""
        return self._publication is not None

    @property
    def closed(self) -> bool:
        """Whether :meth:`shutdown` has ended the open scopes (no listener hears of these hooks again)."""
        return self._closed

    def flush(self, timeout: float = 5.0) -> bool:
        """Barrier: every hook received before the call has become scope events handed to the listeners."""
        deadline = Deadline(timeout)
        ok = self._publication.flush(timeout) if self._publication is not None else True
        # a tool start waiting to learn whether it overlaps another goes out now (the tracker's lock is
        # waited for only until the deadline: a flush never hangs on it)
        return self.tracker.release_held(deadline.remaining()) and ok

    def shutdown(self, deadline: float = 5.0) -> bool:
        """Run what is queued, then end every open scope (``close_reason = "shutdown"``, FMT-85).

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
            tracker = self.tracker
            # the tracker's lock is waited for only until the deadline: a shutdown never hangs on it
            if not tracker.acquire(end.remaining()):
                return False
            try:
                self._closed = True
                self.triggers.close_all("shutdown")
                tracker.close_all("shutdown")
            except Exception:
                ok = False
            finally:
                tracker.lock.release()
        return ok

    def publication_stats(self) -> dict[str, int]:
        """Publication-queue counters; ``pipeline.events_dropped`` is the FMT-81 diagnostics counter."""
        if self._publication is None:
            return {"pipeline.events_dropped": 0}
        stats = self._publication.stats()
        return {"pipeline.events_dropped": stats["dropped_queue_full"] + stats["dropped_closed"],
                "queue_depth": stats["queue_depth"], "records": stats["submitted"],
                "projection_failures": self._destination.failures}

    # ------------------------------------------------------------------ hooks → kinds (the hookspec's field order)

    @deferrable()
    def on_session_start(self, session_id: str, model: str, platform: str, agent_version: str | None) -> None:
        self.sessions.on_session_start(session_id, model, platform, agent_version)

    @deferrable()
    def on_session_finalize(self, session_id: str, reason: str) -> None:
        self.sessions.on_session_finalize(session_id, reason)

    @deferrable()
    def on_session_reset(self, reason: str, old_session_id: str | None) -> None:
        self.sessions.on_session_reset(reason, old_session_id)

    @deferrable()
    def on_session_segment(self, session_id: str, segment: int, segment_reason: str, platform: str,
                           model: str) -> None:
        self.sessions.on_session_segment(session_id, segment, segment_reason, platform, model)

    @deferrable()
    def on_compaction(self, session_id: str, new_session_id: str, rotated: bool) -> None:
        self.sessions.on_compaction(session_id, new_session_id, rotated)

    @deferrable()
    def pre_gateway_dispatch(self, platform: str, event_type: str, session_key: str, session_id: str) -> None:
        self.triggers.pre_gateway_dispatch(platform, event_type, session_key, session_id)

    @deferrable()
    def post_gateway_dispatch(self, session_key: str, session_id: str, action: str) -> None:
        self.triggers.post_gateway_dispatch(session_key, session_id, action)

    @deferrable(opens=turn_key)
    def pre_llm_call(self, session_id: str, task_id: str, turn_id: str, user_message: str, is_first_turn: bool,
                     model: str, platform: str, sender_id: str | None, agent_version: str | None) -> None:
        self.turns.pre_llm_call(session_id, task_id, turn_id, user_message, is_first_turn, model, platform,
                                sender_id, agent_version)

    @deferrable()
    def post_llm_call(self, session_id: str, turn_id: str, assistant_response: str) -> None:
        self.turns.post_llm_call(session_id, turn_id, assistant_response)

    @deferrable(closes=turn_key)
    def on_session_end(self, session_id: str, task_id: str, turn_id: str, completed: bool, interrupted: bool,
                       failed: bool | None, turn_exit_reason: str | None, reason: str | None) -> None:
        self.turns.on_session_end(session_id, task_id, turn_id, completed, interrupted, failed, turn_exit_reason,
                                  reason)

    @deferrable()
    def on_context_snapshot(self, session_id: str, turn_id: str, context: Mapping[str, Any]) -> None:
        self.turns.on_context_snapshot(session_id, turn_id, context)

    @deferrable(opens=attempt_key)
    def pre_api_request(self, session_id: str, task_id: str, turn_id: str, api_request_id: str, platform: str,
                        model: str, provider: str, base_url: str, api_mode: str, api_call_count: int,
                        started_at: float, middleware_trace: list[dict[str, str]], request: dict[str, Any]) -> None:
        self.llm_calls.pre_api_request(session_id, task_id, turn_id, api_request_id, platform, model, provider,
                                       base_url, api_mode, api_call_count, started_at, middleware_trace, request)

    @deferrable(closes=attempt_key)
    def post_api_request(self, session_id: str, task_id: str, turn_id: str, api_request_id: str, model: str,
                         api_duration: float, started_at: float, ended_at: float, finish_reason: str | None,
                         response_model: str | None, usage: dict[str, Any] | None, response: dict[str, Any]) -> None:
        self.llm_calls.post_api_request(session_id, task_id, turn_id, api_request_id, model, api_duration,
                                        started_at, ended_at, finish_reason, response_model, usage, response)

    @deferrable(closes=attempt_key)
    def api_request_error(self, session_id: str, task_id: str, turn_id: str, api_request_id: str, model: str,
                          api_duration: float, started_at: float, ended_at: float, status_code: int | None,
                          retry_count: int | None, max_retries: int | None, retryable: bool | None,
                          reason: str | None, error: dict[str, str]) -> None:
        self.llm_calls.api_request_error(session_id, task_id, turn_id, api_request_id, model, api_duration,
                                         started_at, ended_at, status_code, retry_count, max_retries, retryable,
                                         reason, error)

    @deferrable(opens=tool_key, snapshot="args")
    def pre_tool_call(self, tool_name: str, args: dict[str, Any], task_id: str, session_id: str, tool_call_id: str,
                      turn_id: str, api_request_id: str, middleware_trace: list[dict[str, str]],
                      toolset: str | None) -> None:
        self.tool_calls.pre_tool_call(tool_name, args, task_id, session_id, tool_call_id, turn_id, api_request_id,
                                      middleware_trace, toolset)

    @deferrable(closes=tool_key)
    def post_tool_call(self, tool_name: str, args: dict[str, Any], task_id: str, session_id: str,
                       tool_call_id: str, turn_id: str, api_request_id: str, result: str, duration_ms: int,
                       status: str, error_type: str | None, error_message: str | None,
                       middleware_trace: list[dict[str, str]] | None = None, toolset: str | None = None,
                       exit_code: int | None = None) -> None:
        self.tool_calls.post_tool_call(tool_name, args, task_id, session_id, tool_call_id, turn_id, api_request_id,
                                       result, duration_ms, status, error_type, error_message, middleware_trace,
                                       toolset, exit_code)

    @deferrable()
    def pre_approval_request(self, command: str, description: str, pattern_keys: list[str], surface: str,
                             turn_id: str, tool_call_id: str, session_id: str) -> None:
        self.approvals.pre_approval_request(command, description, pattern_keys, surface, turn_id, tool_call_id,
                                            session_id)

    @deferrable()
    def post_approval_response(self, surface: str, turn_id: str, tool_call_id: str, session_id: str,
                               choice: str, decided_by: str | None) -> None:
        self.approvals.post_approval_response(surface, turn_id, tool_call_id, session_id, choice, decided_by)

    @deferrable()
    def on_human_input_request(self, kind: str, request_id: str, session_id: str, prompt: str) -> None:
        self.approvals.on_human_input_request(kind, request_id, session_id, prompt)

    @deferrable()
    def on_human_input_resolved(self, kind: str, request_id: str, session_id: str, outcome: str) -> None:
        self.approvals.on_human_input_resolved(kind, request_id, session_id, outcome)

    @deferrable(opens=child_key, context=True)
    def subagent_start(self, parent_session_id: str, parent_turn_id: str, child_session_id: str, child_role: str,
                       child_goal: str) -> None:
        self.subagents.subagent_start(parent_session_id, parent_turn_id, child_session_id, child_role, child_goal)

    @deferrable(closes=child_key)
    def subagent_stop(self, parent_session_id: str, parent_turn_id: str, child_session_id: str, child_role: str,
                      child_status: str, child_summary: str | None, duration_ms: int) -> None:
        self.subagents.subagent_stop(parent_session_id, parent_turn_id, child_session_id, child_role, child_status,
                                     child_summary, duration_ms)

    @deferrable()
    def on_skill_lifecycle(self, action: str, skill_name: str, provenance: str | None, reason: str | None,
                           session_id: str, turn_id: str, use_count: int | None, reused: bool | None,
                           reuse_after_patch: bool | None) -> None:
        self.skills.on_skill_lifecycle(action, skill_name, provenance, reason, session_id, turn_id, use_count,
                                       reused, reuse_after_patch)


def release_projection(engine: Any, plugin_name: str | None, projection: Any, listener: Any, *, own: bool,
                       deadline: float) -> None:
    """Detach one of a profile's consumers from the hooks object (``ScopePlugin``) it listens to.

    An ``own`` one is removed from ``engine`` (when it was added as ``plugin_name``) and shut down,
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
