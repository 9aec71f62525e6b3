"""The shared-metrics collector: the ``@hookimpl`` plugin registered on a profile's engine (SM-17).

It handles exactly the hooks of the SM-17 table (plus ``subagent_start`` and ``on_compaction``,
which only update ownership state). On the agent's thread a hook only captures its fields and the
time it was called and hands them to the subscriber's writer thread (:meth:`~.subscriber.Subscriber.defer`,
one bounded queue: full → dropped and counted, never blocking); the :class:`~.projection.Projector`
pairs, matches and counts there, with the hook's captured time (:class:`~.clock.HookClock`). After a
finished task it asks the writer thread to package if due, export, prune and, when sending is on,
start a send pass (SM-53, SM-63, SM-71); the agent never waits for any of that.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any, Final

from ..contract.hookspecs import hookimpl
from .clock import HookClock
from .projection import Projector

logger: Final = logging.getLogger("hermes_pipeline.shared_metrics")

Defer = Callable[[list[Any]], object]
"""``defer([fn, *args])``: run ``fn(*args)`` on the writer thread, in order (:meth:`~.subscriber.Subscriber.defer`)."""


class SharedMetricsCollector:
    """Observer plugin for one profile runtime; every method is fail-open.

    Args:
        projector: the profile's projector (its clock is ``clock``).
        defer: hands a hook's work to the writer thread (everything below runs there).
        clock: captures each hook's time on the agent's thread and replays it while the hook is projected.
        after_task: called after a task finished (must not block).
        first_observation: called once, at the first hook this collector sees (SM-89).
        host_version: called with the ``agent_version`` the host declared on ``on_session_start`` /
            ``pre_llm_call`` (the package ``resource.hermes_version``, SM-45); ``None``: ignored.
    """

    def __init__(self, projector: Projector, *, defer: Defer, clock: HookClock, after_task: Callable[[], object],
                 first_observation: Callable[[], object],
                 host_version: Callable[[str], object] | None = None) -> None:
        self.projector = projector
        self._defer = defer
        self._clock = clock
        self._capture = clock.capture
        # bound once: on the agent's thread a tool hook makes one list and no method object
        self._apply_positional = self._apply
        self._tool_started = projector.tool_started
        self._tool_finished = projector.tool_finished
        self._after_task = after_task
        self._first_observation: Callable[[], object] | None = first_observation
        self._host_version = host_version

    def _hand_over(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        """The agent's thread: capture the hook's time, queue the work; nothing else happens here."""
        wall, mono = self._capture()
        self._defer([self._apply_keywords, wall, mono, fn, args, kwargs])

    def _apply(self, wall: datetime | float, mono: float, fn: Callable[..., Any], *args: Any) -> None:
        """The writer thread: project one hook at the time it was called."""
        clock = self._clock
        clock.enter((wall, mono))
        try:
            self._guard(fn, *args)
        finally:
            clock.leave()

    def _apply_keywords(self, wall: datetime | float, mono: float, fn: Callable[..., Any], args: tuple[Any, ...],
                        kwargs: dict[str, Any]) -> None:
        clock = self._clock
        clock.enter((wall, mono))
        try:
            self._guard(fn, *args, **kwargs)
        finally:
            clock.leave()

    def _agent_version(self, agent_version: object) -> None:
        if self._host_version is not None and isinstance(agent_version, str) and agent_version:
            self._guard(self._host_version, agent_version)

    def _observe(self) -> None:
        first = self._first_observation
        if first is not None:
            self._first_observation = None
            first()

    def _guard(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        try:
            self._observe()
            return fn(*args, **kwargs)
        except Exception as exc:  # the engine isolates callbacks too; keep the log quiet and specific
            logger.debug("hermes_pipeline: shared metrics projection failed: %s: %s", type(exc).__name__, exc)
            return None

    @hookimpl
    def on_session_start(self, session_id: str, agent_version: str | None) -> None:
        """Client activity marks: ``hermes.client.active`` at most once a day (SM-34), first usable (SM-36)."""
        self._hand_over(self._session_started, session_id, agent_version)

    @hookimpl
    def pre_llm_call(self, session_id: str, task_id: str, turn_id: str, platform: str,
                     agent_version: str | None) -> None:
        """Open the task run."""
        self._hand_over(self._task_started, task_id, session_id, turn_id, platform, agent_version)

    @hookimpl
    def pre_api_request(self, session_id: str, task_id: str, api_request_id: str, retry_count: int) -> None:
        """Open or continue the logical model call."""
        self._hand_over(self.projector.api_request_started, task_id, api_request_id, retry_count, session_id)

    @hookimpl
    def api_request_error(self, session_id: str, task_id: str) -> None:
        """The logical call stays open (a retry may follow); only ownership is refreshed."""
        self._hand_over(self.projector.api_request_failed, task_id, session_id)

    @hookimpl
    def post_api_request(self, session_id: str, task_id: str, api_request_id: str, model: str, provider: str,
                         response_model: str | None, api_duration: float) -> None:
        """Close the logical model call → ``hermes.model_route.count``."""
        self._hand_over(self.projector.api_request_succeeded, task_id, api_request_id, response_model=response_model,
                    model=model, provider=provider, api_duration=api_duration, session_id=session_id)

    @hookimpl
    def pre_tool_call(self, tool_name: str, task_id: str, session_id: str, tool_call_id: str, turn_id: str,
                      api_request_id: str, toolset: str | None) -> None:
        """Open a tool record (observe only: never blocks or modifies)."""
        wall, mono = self._capture()  # the tool path: one list, no argument tuple, no partial
        self._defer([self._apply_positional, wall, mono, self._tool_started, task_id, turn_id, api_request_id,
                     tool_call_id, tool_name, session_id, toolset])

    @hookimpl
    def post_approval_response(self, turn_id: str, tool_call_id: str, session_id: str, choice: str) -> None:
        """``hermes.tool_approval`` mark."""
        self._hand_over(self.projector.approval_resolved, choice, turn_id=turn_id, tool_call_id=tool_call_id,
                    session_id=session_id)

    @hookimpl
    def post_tool_call(self, tool_name: str, task_id: str, session_id: str, tool_call_id: str, turn_id: str,
                       api_request_id: str, duration_ms: int, status: str, toolset: str | None) -> None:
        """Close the tool record → ``hermes.tool_call.count``."""
        wall, mono = self._capture()
        self._defer([self._apply_positional, wall, mono, self._tool_finished, task_id, turn_id, api_request_id,
                     tool_call_id, tool_name, status, duration_ms, None, session_id, toolset])

    @hookimpl
    def on_session_end(self, session_id: str, task_id: str, completed: bool, interrupted: bool, failed: bool | None,
                       turn_exit_reason: str | None, reason: str | None) -> None:
        """Finish the task, then package / prune / send in the background."""
        self._hand_over(self._task_ended, task_id, completed=completed, interrupted=interrupted, failed=failed,
                        turn_exit_reason=turn_exit_reason, reason=reason, session_id=session_id)

    @hookimpl
    def subagent_start(self, child_session_id: str) -> None:
        """Remember the child session: its tasks are ``delegated``."""
        self._hand_over(self.projector.child_started, child_session_id)

    @hookimpl
    def subagent_stop(self, child_session_id: str) -> None:
        """Close the child session."""
        self._close(child_session_id)

    @hookimpl
    def on_session_finalize(self, session_id: str) -> None:
        """Close the session."""
        self._close(session_id)

    @hookimpl
    def on_session_reset(self, session_id: str, old_session_id: str | None) -> None:
        """Close the old session identity."""
        self._close(old_session_id)

    @hookimpl
    def on_compaction(self, session_id: str, new_session_id: str, rotated: bool) -> None:
        """An ID-rotating compaction moves open tasks to the new session id (SM-21)."""
        if rotated:
            self._hand_over(self.projector.session_rotated, session_id, new_session_id)

    def _close(self, session_id: str | None) -> None:
        self._hand_over(self._session_closed, session_id)

    # ------------------------------------------------------------------ writer thread

    def _session_started(self, session_id: object, agent_version: object) -> None:
        self._agent_version(agent_version)
        self.projector.session_started(session_id)

    def _task_started(self, task_id: object, session_id: object, turn_id: object, platform: object,
                      agent_version: object) -> None:
        self._agent_version(agent_version)
        self.projector.task_started(task_id, session_id, turn_id, platform)

    def _task_ended(self, task_id: object, **fields: Any) -> None:
        if self.projector.task_ended(task_id, **fields):
            self._guard(self._after_task)

    def _session_closed(self, session_id: object) -> None:
        if self.projector.session_closed(session_id):
            self._guard(self._after_task)
