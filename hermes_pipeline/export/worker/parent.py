"""Exporters in worker processes: rendering, encoding and I/O off the agent's GIL (spec 04 §5).

In one Python process every exporter thread shares the agent's interpreter lock, so exporting
competes with the agent for one core. With ``worker = "process"`` in a section of the
``observability`` component (``atof``, ``atif`` or ``opentelemetry``; a hermes_pipeline extension,
``"thread"`` is the default) that section's sink runs in a child Python process of its own, so its
work runs on another core. ``worker = "process:NAME"`` puts every section naming the same ``NAME``
into one shared child: each event is then serialized and sent once for all of them, which is the
cheaper choice when the sinks together fit one core. The scope plugin stays in this process, so
every exporter still sees the same UUIDs (FMT-56).

- In this process (:class:`WorkerProcess`, the scope listener): one bounded writer
  (``<name>.process``, FMT-81) whose worker thread pickles batches of events once and writes them
  to the child's stdin as length-prefixed frames. The listener only enqueues (FMT-79); a dropped
  start drops its end too (FMT-80). Each section is seen through its own :class:`ProcessSink`
  (flush, shutdown, stats, counters and destinations of that section).
- The child (:mod:`.child`, ``python -m hermes_pipeline.export.worker.child``, not ``multiprocessing``:
  the host's ``__main__`` is never re-imported) builds each section's sink from the same table, feeds every
  event to all of them, answers ``flush``, ``stats`` and ``close`` requests on its stdout, and
  exits once its last section is closed (or shuts every sink down when its stdin closes).
- Failure: if the child cannot start, activation fails with a typed
  :class:`~hermes_pipeline.export.errors.ExportConfigError` (the child's own, for bad configuration).
  If it dies later, events are dropped and counted (every ``*_dropped`` counter of its sections then
  includes the events the child never took), flush returns ``False`` at once, and the agent is
  unaffected.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Final

from ..errors import DeliveryError, ExportConfigError
from ..events import ScopeEvent, submit_paired, submit_paired_many
from ..sizes import event_bytes
from ..writer import DEFAULT_MAX_QUEUE_BYTES, BoundedWriter
from .protocol import CLOSE, EVENTS, FLUSH, STATS, WorkerDied
from .protocol import event_fields as _as_tuple
from .protocol import receive as _receive
from .protocol import send as _send

if TYPE_CHECKING:
    from ..sink import SinkContext
    from .sections import ProcessSink

__all__ = ["Section", "WorkerProcess"]

Section = tuple[str, str, Mapping[str, Any], "SinkContext"]
"""One section a worker process serves: ``(section, "module:SinkClass", table without worker, context)``."""

logger: Final = logging.getLogger("hermes_pipeline.sinks.worker")
_READY_TIMEOUT: Final = 120.0
_STATS_TIMEOUT: Final = 2.0
"""How long ``stats()`` / ``counters()`` wait for fresh figures before answering with the last ones."""
_REPLY_SLACK: Final = 0.25
"""Seconds a flush or close waits for the child's answer beyond the deadline it gave the child (the
child's sinks honour that deadline; this covers the pipe), so the caller's deadline holds."""
_FORWARD_LINGER: Final = 0.005
"""Seconds the forwarding writer waits for a batch to fill: its items come from the publication
thread, not the agent's, so an early wake-up costs the agent nothing and the child starts sooner."""


class _Forward:
    """The writer's destination: one frame per batch to the child's stdin (once for all its sections)."""

    def __init__(self, owner: WorkerProcess) -> None:
        self.owner = owner

    def describe(self) -> str:
        return f"{self.owner.name} worker process"

    def write(self, batch: list[ScopeEvent]) -> None:
        try:
            self.owner._request((EVENTS, [_as_tuple(event) for event in batch]), reply=False)
        except WorkerDied as exc:
            raise DeliveryError("worker_process_gone", retryable=False) from exc
        self.owner._sent += len(batch)


class WorkerProcess:
    """A child process running the sinks of one or more sections, and the scope listener feeding it.

    Args:
        name: names the forwarding queue, its thread and its errors (the section, or the shared ``NAME``).
        sections: ``(section, entry, config, ctx)`` per section: ``entry`` is the ``"module:SinkClass"`` (or
            ``"module:builder"``) the child builds that section's sink with, through
            :func:`~hermes_pipeline.export.sink.build_sink` as in this process; ``config`` is the section's
            table without ``worker`` (validated again in the child); ``ctx`` its context (pickled, no pool).
        max_queue_size: capacity of the forwarding queue (events); at least each sink's own capacity.
        python: the interpreter for the child (default: this one).

    Raises:
        ExportConfigError: the child did not start (path ``<first section>.worker``), or it refused a
            section's configuration (that section's key path and reason).
    """

    never_blocks: ClassVar[bool] = True
    """``__call__`` only queues on this sink's own bounded writers (or counts in memory): it is called on
    the publication thread directly (:mod:`hermes_pipeline.export.isolation`)."""

    def __init__(self, name: str, sections: list[Section], *,
                 max_queue_size: int = 10_000, python: str | None = None,
                 views: Mapping[str, ProcessSink] | None = None) -> None:
        from .sections import ProcessSink
        if not sections:
            raise ValueError("a worker process needs at least one section")
        self.name = name
        first = sections[0][0]
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)  # the child imports what we import
        self._process = subprocess.Popen(
            [python or sys.executable, "-m", "hermes_pipeline.export.worker.child"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, close_fds=True)
        assert self._process.stdin is not None and self._process.stdout is not None
        self._in, self._out = self._process.stdin, self._process.stdout
        self._lock = threading.Lock()
        self._dead = False
        self._closed = False
        self._dropped_starts: set[int] = set()
        self._sent = 0
        """Events written to the pipe."""
        self._acked = 0
        """Events the child said it had taken, as of its last answer (the rest is lost if it dies)."""
        self._last_stats: dict[str, tuple[dict[str, Any], dict[str, int]]] = {}
        self._cpu = 0.0
        self._replies: dict[int, Any] = {}
        self._abandoned: set[int] = set()
        self._answered = threading.Condition()
        self._seq = 0
        self._open: list[str] = []
        """Sections not yet closed; the child ends with the last one."""
        self._sections_lock = threading.Lock()
        try:
            _send(self._in, [(entry, section, dict(config), ctx) for section, entry, config, ctx in sections])
            ready = self._first_reply(_READY_TIMEOUT)
        except (OSError, EOFError, WorkerDied) as exc:
            self._kill()
            raise ExportConfigError(f"{first}.worker", f"the worker process did not start ({exc})") from None
        if ready[0] == "error":
            self._kill()
            raise ExportConfigError(ready[1], ready[2])
        threading.Thread(target=self._read_replies, name=f"hermes-export:{name}.process-replies",
                         daemon=True).start()
        self.sinks: dict[str, ProcessSink] = {}
        """Section → its view, in the order given."""
        capacity = max_queue_size
        for section, (enabled, destinations, section_capacity, counters) in ready[1].items():
            view = views.get(section) if views is not None else None
            if view is None:
                view = ProcessSink.__new__(ProcessSink)
            view._attach(self, section, enabled, destinations)
            self.sinks[section] = view
            self._last_stats[section] = ({}, counters)
            self._open.append(section)
            capacity = max(capacity, section_capacity)
        # the forwarding queue is bounded in estimated bytes too: the sections' (the component's) max_queue_bytes
        byte_capacity = max(getattr(ctx, "max_queue_bytes", None) or DEFAULT_MAX_QUEUE_BYTES for *_, ctx in sections)
        self._writer = BoundedWriter(_Forward(self), name=f"{name}.process", max_queue_size=capacity,
                                     max_attempts=1, linger=_FORWARD_LINGER, max_queue_bytes=byte_capacity,
                                     size=event_bytes).start()

    # ------------------------------------------------------------------ transport

    def _first_reply(self, timeout: float) -> Any:
        """The child's ``ready`` (or ``error``) frame, or :class:`WorkerDied` after ``timeout`` seconds."""
        result: list[Any] = []

        def read() -> None:
            try:
                result.append(_receive(self._out))
            except BaseException as exc:  # EOF, a broken pipe, a frame we cannot decode
                result.append(WorkerDied(type(exc).__name__))

        reader = threading.Thread(target=read, name=f"hermes-export:{self.name}.process-start", daemon=True)
        reader.start()
        reader.join(max(timeout, 0.0))
        if not result:
            raise WorkerDied("no answer in time")
        if isinstance(result[0], WorkerDied):
            raise result[0]
        return result[0]

    def _read_replies(self) -> None:
        """The one reader of the child's stdout: files each answer under its request's number."""
        while True:
            try:
                seq, answer = _receive(self._out)
            except BaseException:  # EOF (the child is gone), a broken pipe, a frame we cannot decode
                with self._answered:
                    self._dead = True
                    self._answered.notify_all()
                return
            with self._answered:
                if seq in self._abandoned:
                    self._abandoned.discard(seq)  # its caller gave up waiting
                else:
                    self._replies[seq] = answer
                    self._answered.notify_all()

    def _request(self, message: tuple[Any, ...], *, reply: bool = True, timeout: float = 5.0) -> Any:
        """Send ``message`` (and wait up to ``timeout`` seconds for its answer).

        Event batches may wait for room in the pipe; requests wait at most ``timeout`` in all. A
        request that times out leaves the worker running (a late answer is discarded); a worker that
        is gone raises :class:`WorkerDied` at once.
        """
        end = time.monotonic() + max(timeout, 0.0)
        if not self._lock.acquire(timeout=-1 if not reply else max(timeout, 0.0)):
            raise WorkerDied("the pipe stayed busy")
        try:
            if self._dead:
                raise WorkerDied("worker process gone")
            seq = 0
            if reply:
                self._seq += 1
                seq = self._seq
            try:
                _send(self._in, (message[0], seq, *message[1:]))
            except (OSError, ValueError) as exc:
                self._dead = True
                raise WorkerDied(type(exc).__name__) from None
        finally:
            self._lock.release()
        if not reply:
            return None
        with self._answered:
            while seq not in self._replies:
                remaining = end - time.monotonic()
                if self._dead or remaining <= 0:
                    self._abandoned.add(seq)
                    raise WorkerDied("worker process gone" if self._dead else "no answer in time")
                self._answered.wait(remaining)
            return self._replies.pop(seq)

    def _reap(self) -> None:
        try:
            self._process.wait(10.0)
        except subprocess.TimeoutExpired:
            pass
        self._kill()

    def _kill(self) -> None:
        self._dead = True
        for stream in (self._in, self._out):
            try:
                stream.close()
            except OSError:
                pass
        if self._process.poll() is None:
            self._process.kill()
            try:
                self._process.wait(5)
            except subprocess.TimeoutExpired:
                pass

    # ------------------------------------------------------------------ the listener

    @property
    def pid(self) -> int:
        """Process ID of the worker."""
        return self._process.pid

    @property
    def max_queue_size(self) -> int:
        """The forwarding queue's capacity (the publication queue's share, FMT-80)."""
        return self._writer.capacity

    def __call__(self, event: ScopeEvent) -> None:
        """Enqueue only (FMT-79); a dropped start drops its end too (FMT-80)."""
        submit_paired(self._writer, event, self._dropped_starts)

    def take_many(self, events: list[ScopeEvent]) -> None:
        """The events of one publication batch, as one call per event would: one hand-over to the queue."""
        submit_paired_many(self._writer, events, self._dropped_starts)

    def join(self, timeout: float | None = None) -> bool:
        """Wait until the worker has exited (after every section's shutdown); ``False`` if it is still running."""
        try:
            self._process.wait(timeout)
        except subprocess.TimeoutExpired:
            return False
        return True

    def flush(self, timeout: float = 5.0) -> bool:
        """Barrier (FMT-84): forwarded, then built and exported by every sink of the child; ``False`` past
        ``timeout``."""
        end = time.monotonic() + max(timeout, 0.0)
        if not self._writer.flush(timeout):
            return False
        try:
            ok, self._acked = self._request((FLUSH, max(end - time.monotonic(), 0.0)),
                                            timeout=max(end - time.monotonic(), 0.0) + _REPLY_SLACK)
            return bool(ok)
        except WorkerDied:
            return False

    def close_section(self, section: str, deadline: float) -> bool:
        """Forward what is queued, let the child shut ``section``'s sink down within ``deadline``; the last
        section's close also closes the forwarding queue and ends the child. Idempotent per section."""
        with self._sections_lock:
            if section not in self._open:
                return True
            self._open.remove(section)
            last = not self._open
        end = time.monotonic() + max(deadline, 0.0)
        ok = self._writer.close(deadline) if last else self._writer.flush(deadline)
        try:
            answer = self._request((CLOSE, section, max(end - time.monotonic(), 0.0)),
                                   timeout=max(end - time.monotonic(), 0.0) + _REPLY_SLACK)
            ok = bool(answer[0]) and ok
            self._last_stats[section], self._cpu, self._acked = (answer[1], answer[2]), answer[3], answer[4]
        except WorkerDied:
            ok = False
        if last:
            self._closed = True
            try:
                self._in.close()  # the child has answered: its exit (interpreter teardown) is not waited for
            except OSError:
                pass
            threading.Thread(target=self._reap, name=f"hermes-export:{self.name}.process-reap", daemon=True).start()
            lost = self.losses()
            if lost:
                logger.warning("hermes_pipeline: %s worker process: %d event(s) could not be forwarded",
                               self.name, lost)
        return ok

    # ------------------------------------------------------------------ reporting

    def losses(self) -> int:
        """Events dropped on this side, plus those sent to a worker that died before taking them."""
        stats = self._writer.stats()
        unacknowledged = self._sent - self._acked if self._dead else 0
        return (stats["dropped_queue_full"] + stats["dropped_queue_bytes"] + stats["dropped_after_errors"]
                + stats["dropped_at_close"] + stats["dropped_closed"] + unacknowledged)

    def refresh(self) -> None:
        """Fetch every open section's stats and counters from the child (at most ``_STATS_TIMEOUT`` s)."""
        if self._dead or self._closed:
            return
        try:
            per_section, self._cpu, self._acked = self._request((STATS,), timeout=_STATS_TIMEOUT)
        except WorkerDied:
            return
        self._last_stats.update(per_section)

    def section_stats(self, section: str) -> tuple[dict[str, Any], dict[str, int]]:
        """``(stats, counters)`` of ``section`` as of the child's last answer."""
        return self._last_stats.get(section, ({}, {}))

    def stats(self) -> dict[str, Any]:
        """pid, alive, the sections, the CPU seconds the child spent serving (start-up excluded; as of its
        last answer) and the forwarding queue's counters."""
        return {"pid": self._process.pid, "alive": not self._dead and self._process.poll() is None,
                "sections": list(self.sinks), "cpu_seconds": self._cpu, **self._writer.stats()}
