"""The hooks object: Hermes observer hooks → the scope kinds → one scope tracker (spec 04 §2.11, FMT-24 rows 1-22).

:class:`ScopePlugin` is what an engine registers (``engine.add_plugin(plugin, name=...)``). It composes
one :class:`~hermes_pipeline.export.scopes.ScopeTracker` and one object per scope kind
(:mod:`~hermes_pipeline.export.scope_kinds`); each ``@hookimpl`` is its kind's method of the same name,
made a hookimpl by :func:`~hermes_pipeline.export.publication.deferrable` (run now, or recorded and run
on the publication thread), so the table at the end of :class:`ScopePlugin` reads hook → kind → file.
Attach every exporter with ``add_listener`` so that they all see the same UUIDs (FMT-56). Row 22 needs
a host call; ``on_session_segment`` and ``on_compaction`` (hermes_pipeline
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
from .publication import RECORD_WIDTH, TrackerDestination, attempt_key, child_key, deferrable, tool_key, turn_key
from .scope_kinds.approval import Approvals
from .scope_kinds.llm_call import LlmCalls
from .scope_kinds.session import Sessions
from .scope_kinds.skill import SkillRuns
from .scope_kinds.subagent import Subagents
from .scope_kinds.tool_call import ToolCalls
from .scope_kinds.trigger import Triggers
from .scope_kinds.turn import Turns
from .scopes import Listener, Sanitizer, ScopeTracker
from .writer import DEFAULT_MAX_QUEUE_BYTES, BoundedWriter, RecordWriter


class ScopePlugin:
    """The hooks object: one tracker, the scope kinds, the publication queue (see the module docstring).

    Args:
        listeners: initial listeners (``fn(event)``).
        deferred: run the scope kinds on the publication thread (see the module docstring).
        max_queue_size: capacity of the publication queue in hook records (FMT-80).
        max_queue_bytes: its capacity in estimated bytes of the records (``None``: the default,
            :data:`~hermes_pipeline.export.writer.DEFAULT_MAX_QUEUE_BYTES`); a record past either bound is
            dropped and counted the same way.
        toolsets, memory_tools, redact_credentials, max_value_chars: see :class:`ScopeTracker`.
    """

    def __init__(self, listeners: tuple[Listener, ...] = (), *, deferred: bool = False,
                 max_queue_size: int = 10_000, toolsets: Mapping[str, str] | None = None,
                 memory_tools: Mapping[str, str] | None = None, redact_credentials: bool = True,
                 max_value_chars: int | None = None, max_queue_bytes: int | None = None) -> None:
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
            self._publication = RecordWriter(self._destination, width=RECORD_WIDTH, name="publication",
                                             max_queue_size=max_queue_size,
                                             max_queue_bytes=max_queue_bytes or DEFAULT_MAX_QUEUE_BYTES,
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

    def add_listener(self, listener: Listener, *, facts: bool = False, content: bool = True) -> None:
        """Deliver every later event to ``listener`` as well, with ``facts`` the first-party notices too;
        ``content=False``: it never reads content payloads (:meth:`ScopeTracker.add_listener`)."""
        self.tracker.add_listener(listener, facts=facts, content=content)

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
        return {"pipeline.events_dropped": stats["dropped_queue_full"] + stats["dropped_queue_bytes"]
                + stats["dropped_closed"], "pipeline.events_dropped_bytes": stats["dropped_queue_bytes"],
                "queue_depth": stats["queue_depth"], "queue_bytes": stats["queue_bytes"], "records": stats["submitted"],
                "record_failures": self._destination.failures}

    # ------------------------------------------------------------------ hooks → kinds
    # Each @hookimpl runs its scope kind's method of the same name (``kind`` names the attribute holding the
    # kind); the method's parameters are the hookspec's fields, in order (the record lane's tuple).

    # rows 1-2, 21: export/scope_kinds/session.py
    on_session_start = deferrable(kind="sessions")(Sessions.on_session_start)
    on_session_finalize = deferrable(kind="sessions")(Sessions.on_session_finalize)
    on_session_reset = deferrable(kind="sessions")(Sessions.on_session_reset)
    on_session_segment = deferrable(kind="sessions")(Sessions.on_session_segment)
    on_compaction = deferrable(kind="sessions")(Sessions.on_compaction)

    # rows 3-4: export/scope_kinds/trigger.py
    pre_gateway_dispatch = deferrable(kind="triggers")(Triggers.pre_gateway_dispatch)
    post_gateway_dispatch = deferrable(kind="triggers")(Triggers.post_gateway_dispatch)

    # rows 5-6: export/scope_kinds/turn.py
    pre_llm_call = deferrable(opens=turn_key, kind="turns")(Turns.pre_llm_call)
    post_llm_call = deferrable(kind="turns")(Turns.post_llm_call)
    on_session_end = deferrable(closes=turn_key, kind="turns")(Turns.on_session_end)
    on_context_snapshot = deferrable(kind="turns")(Turns.on_context_snapshot)

    # rows 7-9: export/scope_kinds/llm_call.py
    pre_api_request = deferrable(opens=attempt_key, kind="llm_calls")(LlmCalls.pre_api_request)
    post_api_request = deferrable(closes=attempt_key, kind="llm_calls")(LlmCalls.post_api_request)
    api_request_error = deferrable(closes=attempt_key, kind="llm_calls")(LlmCalls.api_request_error)

    # rows 10-11: export/scope_kinds/tool_call.py
    pre_tool_call = deferrable(opens=tool_key, snapshot="args", kind="tool_calls")(ToolCalls.pre_tool_call)
    post_tool_call = deferrable(closes=tool_key, kind="tool_calls")(ToolCalls.post_tool_call)

    # rows 12-15: export/scope_kinds/approval.py
    pre_approval_request = deferrable(kind="approvals")(Approvals.pre_approval_request)
    post_approval_response = deferrable(kind="approvals")(Approvals.post_approval_response)
    on_human_input_request = deferrable(kind="approvals")(Approvals.on_human_input_request)
    on_human_input_resolved = deferrable(kind="approvals")(Approvals.on_human_input_resolved)

    # rows 16-17: export/scope_kinds/subagent.py
    subagent_start = deferrable(opens=child_key, context=True, kind="subagents")(Subagents.subagent_start)
    subagent_stop = deferrable(closes=child_key, kind="subagents")(Subagents.subagent_stop)

    # rows 18-20: export/scope_kinds/skill.py
    on_skill_lifecycle = deferrable(kind="skills")(SkillRuns.on_skill_lifecycle)


def release_listener(engine: Any, plugin_name: str | None, stream: Any, listener: Any, *, own: bool,
                     deadline: float) -> None:
    """Detach one of a profile's consumers from the scope stream it listens to (a ``ScopePlugin``, or the
    profile's ``SharedStream`` over one).

    An ``own`` one is removed from ``engine`` (when it was added as ``plugin_name``) and shut down,
    which ends its open scopes so the listener writes its partial runs; a shared one is flushed, then only
    loses ``listener``, as the profile's other consumers keep listening to it.
    """
    if own:
        if plugin_name is not None:
            engine.remove_plugin(plugin_name)
        stream.shutdown(deadline)
    else:
        stream.flush(deadline)
        stream.remove_listener(listener)
