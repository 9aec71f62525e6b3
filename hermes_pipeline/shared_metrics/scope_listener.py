"""Shared metrics as a listener of the profile's one scope stream (spec 05 §4, issue #29 item 3).

The profile's stream (:class:`~hermes_pipeline.profile.stream.SharedStream`, fed by the one scope plugin
:class:`~hermes_pipeline.export.scope_hooks.ScopePlugin`) calls :class:`ScopeListener` on its publication thread
with every scope event; shared metrics has no hook implementation of its own, so nothing of it runs on the
agent's thread. The listener keeps the events it counts and hands each to the subscriber's writer thread (one
bounded queue: full → dropped and counted, never blocking the stream); there :meth:`ScopeListener.count` reads
the event's facts and calls the :class:`~.accounting.Accounting` at the event's own time (its
``timestamp_us``, replayed by :class:`~.clock.HookClock`).

What each scope event means for shared metrics (SM-17):

- ``hermes.session`` start: client activity marks (SM-34, SM-36), the host's agent version (SM-45); a subagent
  session (``hermes.scope_role = subagent``) makes its tasks ``delegated`` (SM-42). Its end (finalize, reset,
  ``subagent_stop``) finishes the session's open tasks as ``system_aborted``; an ID-rotating compaction and the
  ends the stream synthesizes (a segment rotation, a child closed with its parent, the shutdown) do not.
- ``agent.run`` start opens the task keyed by ``hermes.task_id``; its end (``on_session_end``) finishes it with
  the hook's own ``completed`` / ``interrupted`` / ``failed`` / ``turn_exit_reason`` / ``reason`` (the end's
  ``facts``, SM-19). An ``agent.run`` *notice* (kind ``fact``: a turn's real end under a session id the stream no
  longer holds it in) finishes the task just the same (SM-21).
- ``llm.call`` start opens or continues the logical model call, counting a retry for a new call whose hook
  ``retry_count`` (the start's ``facts``) is above 0 (SM-20); a successful end routes it once, with the provider
  ``post_api_request`` named (its ``facts``), else ``pre_api_request``'s (SM-22).
- a tool scope's start opens a tool record, its end (``end.start`` names the start) closes it (SM-24..27).
- a ``hermes.approval.response`` mark counts one approval, attributed to its tool call if open (SM-29, SM-30).
- a ``hermes.compaction`` mark that rotated the session id moves the old id's open tasks to the new id (its
  ``facts``), so the old session's close does not abort them (SM-21).

The listener is added with ``facts=True``: it reads the ``facts`` the scope kinds put on events for first-party
listeners (never rendered by a sink) and gets the notices of kind ``fact``.

Ends that the stream synthesizes (``hermes.close_reason``: an interrupted or orphaned call, a session closed
around its turn, the shutdown) count nothing by themselves: shared metrics closes a task's open tools with
the task (SM-28) and a closed session's tasks as ``system_aborted``, as the hooks say.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Final

from ..export.events import END, FACT, LLM_SCOPE, MARK, SCOPE, SESSION_SCOPE, START, TURN_SCOPE, ScopeEvent
from ..export.scopes import AGENT_VERSION_KEY, CLOSE_REASON, SESSION_KEY
from .accounting import Accounting
from .clock import HookClock

logger: Final = logging.getLogger("hermes_pipeline.shared_metrics")

APPROVAL_RESPONSE: Final = "hermes.approval.response"
COMPACTION: Final = "hermes.compaction"
_MARKS: Final = frozenset({APPROVAL_RESPONSE, COMPACTION})
_NO_FACTS: Final[dict[str, Any]] = {}

Defer = Callable[[list[Any]], object]
"""``defer([fn, *args])``: run ``fn(*args)`` on the writer thread, in order (:meth:`~.subscriber.Subscriber.defer`)."""


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


class ScopeListener:
    """The shared-metrics consumer of one profile's stream (see the module docstring); fail-open.

    Args:
        accounting: the profile runtime's accounting (its clock is ``clock``).
        defer: hands an event to the writer thread (everything but the filter runs there).
        clock: replays each event's time while it is counted.
        after_task: called after a task finished (must not block).
        first_observation: called once, at the first event this listener counts (SM-89).
        host_version: called with the agent version a session start declares (``resource.hermes_version``,
            SM-45); ``None``: ignored.
    """

    def __init__(self, accounting: Accounting, *, defer: Defer, clock: HookClock, after_task: Callable[[], object],
                 first_observation: Callable[[], object],
                 host_version: Callable[[str], object] | None = None) -> None:
        self.accounting = accounting
        self._defer = defer
        self._clock = clock
        self._count = self.count  # bound once: the stream's thread makes one list per kept event
        self._after_task = after_task
        self._first_observation: Callable[[], object] | None = first_observation
        self._host_version = host_version

    def __call__(self, event: ScopeEvent) -> None:
        """The stream's publication thread: keep the scopes, the notices, the approval responses and the
        compactions, hand them over."""
        if event.kind != MARK or event.name in _MARKS:
            self._defer([self._count, event])

    # ------------------------------------------------------------------ writer thread

    def count(self, event: ScopeEvent) -> None:
        """Count one event at its own time (the writer thread; also callable directly, e.g. in a replay)."""
        seconds = event.timestamp_us / 1_000_000
        clock = self._clock
        clock.enter((seconds, seconds))
        try:
            first = self._first_observation
            if first is not None:
                self._first_observation = None
                first()
            self._dispatch(event)
        except Exception as exc:  # one bad event never stops the counting of the next
            logger.debug("hermes_pipeline: shared metrics: counting an event failed: %s: %s", type(exc).__name__, exc)
        finally:
            clock.leave()

    def _dispatch(self, event: ScopeEvent) -> None:
        kind = event.kind
        if kind != SCOPE:
            if kind == FACT:
                if event.name == TURN_SCOPE:
                    self._task_ended(event)
            elif event.name == COMPACTION:
                self._session_rotated(event)
            else:
                self._approval(event)
            return
        name = event.name
        if event.category == "tool":
            if event.phase == START:
                self._tool_started(event)
            elif event.phase == END and CLOSE_REASON not in event.metadata:
                self._tool_finished(event)
        elif name == LLM_SCOPE:
            if event.phase == START:
                meta = event.metadata
                self.accounting.api_request_started(meta.get("hermes.task_id"), meta.get("hermes.api_request_id"),
                                                    (event.facts or _NO_FACTS).get("retry_count"),
                                                    meta.get(SESSION_KEY))
            elif CLOSE_REASON not in event.metadata and event.metadata.get("otel.status_code") == "OK":
                self._model_call_succeeded(event)
        elif name == TURN_SCOPE:
            if event.phase == START:
                meta = event.metadata
                self.accounting.task_started(meta.get("hermes.task_id"), meta.get(SESSION_KEY),
                                             meta.get("hermes.turn_id"), meta.get("hermes.platform"))
            elif CLOSE_REASON not in event.metadata:
                self._task_ended(event)
        elif name == SESSION_SCOPE:
            if event.phase == START:
                self._session_started(event)
            else:
                self._session_ended(event)

    def _session_started(self, event: ScopeEvent) -> None:
        meta = event.metadata
        version = meta.get(AGENT_VERSION_KEY)
        if self._host_version is not None and isinstance(version, str) and version:
            self._host_version(version)
        session_id = meta.get(SESSION_KEY)
        if meta.get("hermes.scope_role") == "subagent":
            self.accounting.child_started(session_id)
        self.accounting.session_started(session_id)

    def _session_ended(self, event: ScopeEvent) -> None:
        if CLOSE_REASON in event.metadata:  # the stream's own close: a segment rotation, a parent's end, shutdown
            return
        data = event.data if isinstance(event.data, dict) else {}
        if data.get("reason") == "compaction":  # an ID-rotating compaction: its tasks go on (SM-21)
            return
        if self.accounting.session_closed(event.metadata.get(SESSION_KEY)):
            self._after_task()

    def _session_rotated(self, event: ScopeEvent) -> None:
        new_id = (event.facts or _NO_FACTS).get("new_session_id")
        if isinstance(new_id, str) and new_id:
            self.accounting.session_rotated(event.metadata.get(SESSION_KEY), new_id)

    def _task_ended(self, event: ScopeEvent) -> None:
        meta = event.metadata
        facts = event.facts
        if facts is not None:  # the hook's own words (SM-19)
            completed, interrupted = facts.get("completed"), facts.get("interrupted")
            failed, exit_reason, reason = facts.get("failed"), facts.get("turn_exit_reason"), facts.get("reason")
        else:  # an end made without first-party facts (e.g. replayed): what the rendered end says
            data = event.data if isinstance(event.data, dict) else {}
            error = meta.get("error.type")
            completed, interrupted = data.get("completed"), data.get("interrupted")
            failed, exit_reason, reason = error is not None and error != "cancelled", None, data.get("reason")
            if not isinstance(reason, str) or not reason:
                reason = "timeout" if error == "timeout" else None
        if self.accounting.task_ended(meta.get("hermes.task_id"), completed=completed is True,
                                      interrupted=interrupted is True, failed=failed is True,
                                      turn_exit_reason=exit_reason, reason=reason, session_id=meta.get(SESSION_KEY),
                                      turn_id=meta.get("hermes.turn_id")):
            self._after_task()

    def _model_call_succeeded(self, event: ScopeEvent) -> None:
        start = event.start
        start_meta = start.metadata if start is not None else {}
        requested = start.profile.get("model_name") if start is not None and start.profile else None
        answered = event.profile.get("model_name") if event.profile else None
        duration_ms = event.metadata.get("hermes.duration_ms")
        seconds = duration_ms / 1000 if isinstance(duration_ms, int) and not isinstance(duration_ms, bool) else None
        provider = (event.facts or _NO_FACTS).get("provider") or start_meta.get("hermes.provider")
        self.accounting.api_request_succeeded(
            start_meta.get("hermes.task_id"), event.metadata.get("hermes.api_request_id"), response_model=answered,
            model=requested, provider=provider, api_duration=seconds, session_id=event.metadata.get(SESSION_KEY))

    def _tool_started(self, event: ScopeEvent) -> None:
        meta = event.metadata
        profile = event.profile or {}
        self.accounting.tool_started(event.uuid, meta.get("hermes.task_id"), meta.get("hermes.turn_id"),
                                     meta.get("hermes.api_request_id"), _text(profile.get("tool_call_id")), event.name,
                                     meta.get(SESSION_KEY), meta.get("hermes.toolset"))

    def _tool_finished(self, event: ScopeEvent) -> None:
        start = event.start
        start_meta = start.metadata if start is not None else {}
        meta = event.metadata
        profile = event.profile or {}
        self.accounting.tool_finished(event.uuid, start_meta.get("hermes.task_id"), start_meta.get("hermes.turn_id"),
                                      start_meta.get("hermes.api_request_id"), _text(profile.get("tool_call_id")),
                                      event.name, meta.get("hermes.tool.status"), meta.get("hermes.duration_ms"),
                                      meta.get(SESSION_KEY), start_meta.get("hermes.toolset"))

    def _approval(self, event: ScopeEvent) -> None:
        data = event.data if isinstance(event.data, dict) else {}
        profile = event.profile or {}
        self.accounting.approval_resolved(data.get("choice"), turn_id=event.metadata.get("hermes.turn_id"),
                                          tool_call_id=profile.get("tool_call_id"),
                                          session_id=event.metadata.get(SESSION_KEY))
