"""The public entry point: :func:`attach_shared_metrics` and the :class:`SharedMetrics` handle."""

from __future__ import annotations

import atexit
import logging
import threading
import uuid
import weakref
from dataclasses import replace
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from ..engine.core import Engine
from ..engine.deadline import Deadline, exit_deadline
from .accounting import Accounting, ToolsetResolver
from .clock import Clock, HookClock, SystemClock
from .consent import reconcile
from .packages import ExportResult, package_and_export
from .profile_file import consent_reader
from .report import store_status
from .scope_listener import ScopeListener
from .resource import Resource, detect_resource, normalise_version
from .sender import Sender, endpoint_problem, start_background_pass, warn_once
from .store import MetricsStore
from .subscriber import QUEUE_SIZE, Subscriber
from .switched_off import reconcile_consent as reconcile_consent  # still importable from here
from .switched_off import switch_off
from .transport import Transport

logger: Final = logging.getLogger("hermes_pipeline.shared_metrics")

EXIT_FLUSH_S: Final = 2.0
DEFAULT_FLUSH_S: Final = 5.0
"""The bound of a flush asked for without a timeout (the stream's barrier takes a finite one)."""
_open_handles: weakref.WeakSet[SharedMetrics] = weakref.WeakSet()


@atexit.register
def _flush_at_exit() -> None:
    """Give queued counters of handles nobody closed a short chance to commit at interpreter exit."""
    for handle in list(_open_handles):
        try:
            handle.flush(min(EXIT_FLUSH_S, exit_deadline().remaining()))  # one exit deadline for all
        except Exception:  # pragma: no cover - never fail interpreter shutdown
            pass


class SharedMetrics:
    """A profile's running shared-metrics path: a listener of the profile's scope stream, its accounting, the
    subscriber (writer thread) and the sender.

    Created by :func:`attach_shared_metrics`; the listener hears the stream until :meth:`close`. Shared metrics
    registers no hook implementation: the stream's scope plugin is the one hook → event translation, and
    everything of shared metrics runs on the stream's and the writer's threads, never on the agent's.
    """

    def __init__(self, engine: Engine, store: MetricsStore, *, send: bool, endpoint: str | None,
                 clock: Clock, consent: Callable[[], Sequence[object]], transport: Transport | None,
                 toolsets: Mapping[str, str] | ToolsetResolver | None, entrypoint: str | None,
                 resource: Resource, queue_size: int, follow_host_version: bool = False,
                 stream: Any = None) -> None:
        self.engine = engine
        self.store = store
        self.clock = clock
        self.send = send
        self.endpoint = endpoint
        self.runtime_id = str(uuid.uuid4())
        """The random id of this (process, profile) runtime (SM-14)."""
        self.resource = resource
        self.subscriber = Subscriber(store, self.runtime_id, resource, queue_size=queue_size)
        self.hook_clock = HookClock(clock)
        """The accounting's clock: each event's own time, replayed while it is counted."""
        self.accounting = Accounting(self.subscriber.submit, self.runtime_id, self.hook_clock, toolsets=toolsets,
                                     entrypoint=entrypoint)
        self.sender: Sender | None = None
        if send:
            self.sender = Sender(store, endpoint=endpoint, consent=consent, clock=clock, transport=transport)
        self.listener = ScopeListener(
            self.accounting, defer=self.subscriber.defer, clock=self.hook_clock, after_task=self._after_task,
            first_observation=self._first_observation,
            host_version=self._host_version if follow_host_version else None)
        self._own_stream = stream is None
        self.plugin_name: str | None = None
        if stream is None:  # no profile stream given: a deferred scope plugin of its own on the engine
            from ..export.scope_hooks import ScopePlugin

            stream = ScopePlugin(deferred=True, max_queue_size=max(queue_size, QUEUE_SIZE))
            self.plugin_name = engine.add_plugin(stream, name=f"hermes_pipeline.shared_metrics:{self.runtime_id}")
        self.stream: Any = stream
        """The scope stream listened to (``add_listener`` / ``remove_listener`` / ``flush``)."""
        self.last_export: ExportResult | None = None
        self._closed = False
        _open_handles.add(self)
        # facts: the first-party fields and notices no sink renders (SM-19..22); content=False: it never reads
        # arguments, results, requests or messages, so a stream listened to by shared metrics alone neither keeps
        # nor scrubs them. Last: nothing after this can fail and leave a listener behind
        stream.add_listener(self.listener, facts=True, content=False)

    # ------------------------------------------------------------------ background work

    def _host_version(self, agent_version: str) -> None:
        """The host declared its agent version on a hook: it becomes ``resource.hermes_version`` (SM-45)."""
        version = normalise_version(agent_version)
        if version != "unknown" and version != self.resource.hermes_version:
            self.resource = replace(self.resource, hermes_version=version)
            self.subscriber.resource = self.resource  # read by the writer thread at its next commit

    def _first_observation(self) -> None:
        self.subscriber.call_soon(self._reconcile)

    def _reconcile(self) -> None:
        """SM-89: the process-start reconcile of this profile, with the resolved send decision."""
        allowed = self.sender.decision() if self.sender is not None else False
        if not allowed and not self.store.exists():
            return
        conn = self.store.connect()
        try:
            reconcile(conn, allowed, self.clock.now())
        finally:
            conn.close()

    def _after_task(self) -> None:
        self.subscriber.call_soon(self._maintain)

    def _maintain(self) -> None:
        self.last_export = package_and_export(self.store, self.clock.now())
        if self.sender is not None and self.sender.usable:
            start_background_pass(self.sender)

    # ------------------------------------------------------------------ public API

    def flush(self, timeout: float | None = 5.0) -> bool:
        """Wait until every hook received so far has reached the stream's listeners and every counter recorded
        so far is committed (and queued background work ran)."""
        deadline = Deadline(timeout if timeout is not None else DEFAULT_FLUSH_S)
        streamed = self.stream.flush(deadline.remaining()) if not self._closed else True
        return bool(streamed) and self.subscriber.flush(deadline.remaining())

    def export_due(self, *, force: bool = False) -> ExportResult:
        """Flush, then package if due (``force`` skips the daily check, SM-57), export and prune."""
        self.flush()
        result = package_and_export(self.store, self.clock.now(), force=force)
        self.last_export = result
        return result

    def send_once(self) -> dict[str, int]:
        """Run one send pass now on this thread (``{"sent", "rejected", "deferred"}``); nothing if not sending."""
        if self.sender is None:
            return {"sent": 0, "rejected": 0, "deferred": 0}
        return self.sender.run_pass()

    def finish_task(self, task_id: str, error: BaseException | None = None, *, timeout: float | None = 5.0) -> bool:
        """The host's outer agent boundary for ``task_id`` (SM-19): call it in a ``finally``.

        A no-op when ``on_session_end`` already finished the task; otherwise the task is finished
        from ``error`` (``None`` → ``unknown``) and packaging runs in the background. The task's
        state lives on the writer thread, where its hooks are projected: the call is queued behind
        them and waits (at most ``timeout``) for its answer, not for any write; ``False`` if none came.
        """
        stamp = self.hook_clock.capture()
        if self.subscriber.on_writer_thread():
            self.hook_clock.enter(stamp)
            try:
                return self._finish_task(task_id, error)
            finally:
                self.hook_clock.leave()
        if not self._closed:
            self.stream.flush(timeout if timeout is not None else DEFAULT_FLUSH_S)  # its events go first
        answer: list[bool] = []
        done = threading.Event()

        def finish() -> None:
            self.hook_clock.enter(stamp)
            try:
                answer.append(self._finish_task(task_id, error))
            finally:
                self.hook_clock.leave()
                done.set()

        if not self.subscriber.defer([finish]) or not done.wait(timeout):
            return False
        return bool(answer and answer[0])

    def _finish_task(self, task_id: str, error: BaseException | None) -> bool:
        finished = self.accounting.finish_task(task_id, error)
        if finished:
            self._after_task()
        return finished

    def on_skill_lifecycle(self, action: str, skill_name: str | None = None, provenance: str | None = None,
                           success: bool = True, use_count: int | None = None, reused: bool | None = None,
                           reuse_after_patch: bool | None = None, **_: Any) -> bool:
        """The ``on_skill_lifecycle`` hook (see :class:`~.skills.SkillReporter`); ``skill_name`` is ignored."""
        return self.accounting.skill_event(action, provenance=provenance, success=success, use_count=use_count,
                                          reused=reused, reuse_after_patch=reuse_after_patch)

    def record_setup_started(self, mode: str) -> None:
        """SM-36: the host's setup flow started."""
        self.accounting.setup_started(mode)

    def record_setup_finished(self, mode: str, outcome: str, failure_stage: str | None = None) -> None:
        """SM-36: the host's setup flow finished."""
        self.accounting.setup_finished(mode, outcome, failure_stage)

    def status(self) -> dict[str, Any]:
        """Configuration, this runtime's counts and the store summary."""
        stats = self.subscriber.stats
        return {
            "enabled": True, "send": self.send, "endpoint": self.endpoint,
            "sending": self.sender is not None and self.sender.usable,
            "runtime": {"accepted": stats.accepted, "rejected_events": stats.rejected_events,
                        "dropped": stats.dropped, "lock_timeouts": stats.lock_timeouts,
                        "committed": stats.committed, "open_tasks": self.accounting.open_tasks(),
                        "stream_dropped": self._stream_dropped()},
            "store": store_status(self.store),
        }

    def _stream_dropped(self) -> int:
        """Hook records the stream listened to dropped (its queue was full, FMT-80): events shared metrics
        never heard of (``0`` when the stream does not say)."""
        stats = getattr(self.stream, "publication_stats", None)
        try:
            return int(stats()["pipeline.events_dropped"]) if callable(stats) else 0
        except Exception:
            return 0

    def close(self, timeout: float | None = 5.0) -> None:
        """Stop listening (what the stream received before is still counted), flush and stop the writer. Local
        state is kept (SM-65)."""
        if self._closed:
            return
        self._closed = True
        _open_handles.discard(self)
        try:
            from ..export.scope_hooks import release_listener

            release_listener(self.engine, self.plugin_name, self.stream, self.listener, own=self._own_stream,
                             deadline=timeout if timeout is not None else EXIT_FLUSH_S)
        finally:
            self.subscriber.close(timeout)

    def __enter__(self) -> SharedMetrics:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def attach_shared_metrics(
    engine: Engine,
    hermes_home: Path | str,
    *,
    enabled: bool,
    send: bool = False,
    endpoint: str | None = None,
    clock: Clock | None = None,
    transport: Transport | None = None,
    consent: Callable[[], Sequence[object]] | None = None,
    toolsets: Mapping[str, str] | ToolsetResolver | None = None,
    entrypoint: str | None = None,
    resource: Resource | None = None,
    queue_size: int = QUEUE_SIZE,
    stream: Any = None,
) -> SharedMetrics | None:
    """Start the profile's shared metrics on ``engine`` (the profile's child engine) if ``enabled``.

    Args:
        engine: the profile's engine; shared metrics sees only its events (SM-14).
        hermes_home: the profile directory; state goes to ``telemetry/shared_metrics/`` under it.
        enabled, send, endpoint: ``telemetry.shared_metrics.*`` from the profile's cached
            ``config.yaml`` snapshot (SM-6..8). Only ``enabled is True`` collects.
        clock: time source (tests); transport: the sender's HTTP seam (default: httpx).
        consent: re-reads ``(enabled, send[, endpoint])`` before every package (SM-72); default:
            the profile's own ``config.yaml`` read by :mod:`.profile_file`.
        toolsets: tool name → declaring toolset of the runtime registry (SM-25); a ``toolset`` the
            host puts on the tool hooks (``Host(toolsets=...)``) takes precedence.
        entrypoint: a host-declared entrypoint (SM-42); resource: override the detected resource.
        stream: the profile's scope stream to listen to (``add_listener`` / ``remove_listener`` / ``flush``:
            the profile's :class:`~hermes_pipeline.profile.stream.SharedStream`); without it shared metrics
            listens to a deferred scope plugin of its own on ``engine`` (its queue holds ``queue_size``
            hook records, at least :data:`~.subscriber.QUEUE_SIZE`).
            Without it, ``resource.hermes_version`` is this package's version until a hook carries
            the host's ``agent_version`` (``Host(agent_version=...)``), then that version.

    Returns ``None`` when collection is off; nothing is collected and local state is left as it is
    (SM-65), except that an existing store's consent window is closed by the reconciler (SM-89).
    """
    home = Path(hermes_home).expanduser()
    clock = clock or SystemClock()
    if enabled is not True:
        switch_off(home, send=send is True, clock=clock)
        return None
    store = MetricsStore(home)
    if send is True and endpoint_problem(endpoint) is not None and not endpoint:
        warn_once("no-endpoint", logging.WARNING,
                  "hermes_pipeline: telemetry.shared_metrics.send is true but no endpoint is configured; "
                  "nothing is sent")
    return SharedMetrics(engine, store, send=send is True, endpoint=endpoint, clock=clock,
                         consent=consent or consent_reader(home), transport=transport, toolsets=toolsets,
                         entrypoint=entrypoint, resource=resource or detect_resource(), queue_size=queue_size,
                         follow_host_version=resource is None, stream=stream)


def attach_for_profile(profile: Any) -> SharedMetrics | None:
    """First-party consumer entry used by :func:`hermes_pipeline.profile.open_profile`.

    Reads the profile's cached ``telemetry.shared_metrics`` snapshot and listens to the profile's one scope
    stream (:attr:`Profile.stream`), which hands it only that profile's events (SM-14, CFG-67a).
    """
    settings = profile.settings.shared_metrics
    return attach_shared_metrics(profile.engine, profile.home, enabled=settings.enabled is True,
                                 send=settings.send is True, endpoint=settings.endpoint,
                                 stream=getattr(profile, "stream", None))
