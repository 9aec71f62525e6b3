"""Exporters in worker processes: rendering, encoding and I/O off the agent's GIL (spec 04 §5).

In one Python process every exporter thread shares the agent's interpreter lock, so exporting
competes with the agent for one core. With ``worker = "process"`` in a section of the
``observability`` component (``atof``, ``atif`` or ``opentelemetry``; a hermes_pipeline extension,
``"thread"`` is the default) the :class:`ProcessSink` listener forwards that section's scope events
to a child Python process running the very same sink, so its work runs on another core. The hook
projection stays in this process, so every exporter still sees the same UUIDs (FMT-56).

- In this process: one bounded writer (``<section>.process``, FMT-81) whose worker thread pickles
  batches of events and writes them to the child's stdin as length-prefixed frames. The listener
  only enqueues (FMT-79); a dropped start drops its end too (FMT-80).
- The child (``python -m hermes_pipeline.sinks.worker_process``, not ``multiprocessing``: the host's
  ``__main__`` is never re-imported) builds the sink from the same table, answers ``flush``,
  ``stats`` and ``shutdown`` requests on its stdout, and shuts the sink down when its stdin closes.
- Failure: if the child cannot start, activation fails with a typed
  :class:`~hermes_pipeline.export.errors.ExportConfigError` (the child's own, for bad configuration).
  If it dies later, events are dropped and counted (every ``*_dropped`` counter of the section then
  includes the events the child never took), flush returns ``False`` at once, and the agent is
  unaffected.
"""

from __future__ import annotations

import logging
import os
import pickle
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from typing import IO, Any, Final

from ..export.errors import DeliveryError, ExportConfigError
from ..export.events import ScopeEvent, submit_paired
from ..export.writer import BoundedWriter

__all__ = ["WORKERS", "ProcessSink", "WorkerDied", "split_worker"]

logger: Final = logging.getLogger("hermes_pipeline.sinks.worker")
_LENGTH: Final = struct.Struct("<I")
_READY_TIMEOUT: Final = 120.0
_STATS_TIMEOUT: Final = 2.0
"""How long ``stats()`` / ``counters()`` wait for fresh figures before answering with the last ones."""
WORKERS: Final = ("thread", "process")
"""Values of a section's ``worker`` key."""
EVENTS, FLUSH, STATS, SHUTDOWN = "events", "flush", "stats", "shutdown"


class WorkerDied(Exception):
    """The worker process is gone (or did not answer in time)."""


def split_worker(config: Mapping[str, Any], section: str) -> tuple[str, dict[str, Any]]:
    """``(worker, the section's table without the key)``; :class:`ExportConfigError` for a bad value."""
    if not isinstance(config, Mapping):
        raise ExportConfigError(section, "expected a table")
    rest = dict(config)
    worker = rest.pop("worker", "thread")
    if worker not in WORKERS:
        raise ExportConfigError(f"{section}.worker", "expected 'thread' or 'process'")
    return worker, rest


def _send(stream: IO[bytes], message: Any) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_LENGTH.pack(len(data)) + data)
    stream.flush()


def _receive(stream: IO[bytes]) -> Any:
    head = stream.read(_LENGTH.size)
    if len(head) < _LENGTH.size:
        raise EOFError("the other side closed the pipe")
    (size,) = _LENGTH.unpack(head)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError("the other side closed the pipe")
    return pickle.loads(data)  # noqa: S301 - frames come from our own parent or child process only


def _as_tuple(event: ScopeEvent) -> tuple[Any, ...]:
    return (event.kind, event.phase, event.uuid, event.parent_uuid, event.timestamp_us, event.name, event.category,
            event.attributes, event.profile, event.data, event.metadata, event.session_uuid, event.root_uuid)


class _Forward:
    """The writer's destination: one frame per batch to the child's stdin."""

    def __init__(self, owner: ProcessSink) -> None:
        self.owner = owner

    def describe(self) -> str:
        return f"{self.owner.section} worker process"

    def write(self, batch: list[ScopeEvent]) -> None:
        try:
            self.owner._request((EVENTS, [_as_tuple(event) for event in batch]), reply=False)
        except WorkerDied as exc:
            raise DeliveryError("worker_process_gone", retryable=False) from exc
        self.owner._sent += len(batch)


class ProcessSink:
    """One section's sink, run by a child process (see the module docstring).

    Args:
        section: ``atof``, ``atif`` or ``opentelemetry`` (names queues, counters and errors).
        builder: ``"module:function"`` building the section's sink from ``(config, **options)`` in the child.
        config: the section's table without ``worker`` (validated again in the child).
        options: keyword arguments of the builder (pickled to the child).
        max_queue_size: capacity of the forwarding queue (events).
        python: the interpreter for the child (default: this one).
    """

    def __init__(self, section: str, builder: str, config: Mapping[str, Any], options: Mapping[str, Any], *,
                 max_queue_size: int = 10_000, python: str | None = None) -> None:
        self.section = section
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)  # the child imports what we import
        self._process = subprocess.Popen(
            [python or sys.executable, "-m", "hermes_pipeline.sinks.worker_process"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, close_fds=True)
        assert self._process.stdin is not None and self._process.stdout is not None
        self._in, self._out = self._process.stdin, self._process.stdout
        self._lock = threading.Lock()
        self._dead = False
        self._closed = False
        self._last_stats: dict[str, Any] = {}
        self._last_counters: dict[str, int] = {}
        self._dropped_starts: set[int] = set()
        self._sent = 0
        """Events written to the pipe."""
        self._acked = 0
        """Events the child said it had taken, as of its last answer (the rest is lost if it dies)."""
        self._replies: dict[int, Any] = {}
        self._abandoned: set[int] = set()
        self._answered = threading.Condition()
        self._seq = 0
        try:
            _send(self._in, (builder, section, dict(config), dict(options)))
            ready = self._first_reply(_READY_TIMEOUT)
        except (OSError, EOFError, WorkerDied) as exc:
            self._kill()
            raise ExportConfigError(f"{section}.worker", f"the worker process did not start ({exc})") from None
        if ready[0] == "error":
            self._kill()
            raise ExportConfigError(ready[1], ready[2])
        _, self._enabled, self._destinations, capacity, self._last_counters = ready
        threading.Thread(target=self._read_replies, name=f"hermes-export:{section}.process-replies",
                         daemon=True).start()
        self._writer = BoundedWriter(_Forward(self), name=f"{section}.process",
                                     max_queue_size=max(max_queue_size, capacity), max_attempts=1).start()

    # ------------------------------------------------------------------ transport

    def _first_reply(self, timeout: float) -> Any:
        """The child's ``ready`` (or ``error``) frame, or :class:`WorkerDied` after ``timeout`` seconds."""
        result: list[Any] = []

        def read() -> None:
            try:
                result.append(_receive(self._out))
            except BaseException as exc:  # EOF, a broken pipe, a frame we cannot decode
                result.append(WorkerDied(type(exc).__name__))

        reader = threading.Thread(target=read, name=f"hermes-export:{self.section}.process-start", daemon=True)
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
    def enabled(self) -> bool:
        """Whether the child's sink exports anything."""
        return bool(self._enabled)

    @property
    def max_queue_size(self) -> int:
        """The forwarding queue's capacity (the publication queue's share, FMT-80)."""
        return self._writer.capacity

    @property
    def worker_pid(self) -> int:
        """Process ID of the worker."""
        return self._process.pid

    def join(self, timeout: float | None = None) -> bool:
        """Wait until the worker has exited (after :meth:`shutdown`); ``False`` if it is still running."""
        try:
            self._process.wait(timeout)
        except subprocess.TimeoutExpired:
            return False
        return True

    def __call__(self, event: ScopeEvent) -> None:
        """Enqueue only (FMT-79); a dropped start drops its end too (FMT-80)."""
        submit_paired(self._writer, event, self._dropped_starts)

    def flush(self, timeout: float = 5.0) -> bool:
        """Barrier (FMT-84): forwarded, then built and exported by the child; ``False`` past ``timeout``."""
        end = time.monotonic() + max(timeout, 0.0)
        if not self._writer.flush(timeout):
            return False
        try:
            ok, self._acked = self._request((FLUSH, max(end - time.monotonic(), 0.0)),
                                            timeout=max(end - time.monotonic(), 0.0) + 1.0)
            return bool(ok)
        except WorkerDied:
            return False

    def shutdown(self, deadline: float = 5.0) -> bool:
        """Forward what is queued, let the child shut its sink down within ``deadline``, end the child. Idempotent."""
        if self._closed:
            return True
        self._closed = True
        end = time.monotonic() + max(deadline, 0.0)
        ok = self._writer.close(deadline)
        try:
            answer = self._request((SHUTDOWN, max(end - time.monotonic(), 0.0)),
                                   timeout=max(end - time.monotonic(), 0.0) + 2.0)
            ok = bool(answer[0]) and ok
            self._last_stats, self._last_counters, self._acked = answer[1], answer[2], answer[3]
        except WorkerDied:
            ok = False
        try:
            self._in.close()  # the child has answered: its exit (interpreter teardown) is not waited for
        except OSError:
            pass
        threading.Thread(target=self._reap, name=f"hermes-export:{self.section}.process-reap", daemon=True).start()
        lost = self._forward_losses()
        if lost:
            logger.warning("hermes_pipeline: %s worker process: %d event(s) could not be forwarded", self.section, lost)
        return ok

    # ------------------------------------------------------------------ reporting

    def _forward_losses(self) -> int:
        """Events dropped on this side, plus those sent to a worker that died before taking them."""
        stats = self._writer.stats()
        unacknowledged = self._sent - self._acked if self._dead else 0
        return (stats["dropped_queue_full"] + stats["dropped_after_errors"] + stats["dropped_at_close"]
                + stats["dropped_closed"] + unacknowledged)

    def _refresh(self) -> None:
        if self._dead or self._closed:
            return
        try:
            _, self._last_stats, self._last_counters, self._acked = self._request((STATS,), timeout=_STATS_TIMEOUT)
        except WorkerDied:
            pass

    def counters(self) -> dict[str, int]:
        """The child's FMT-81 counters; every events or spans ``*_dropped`` counter also counts the events
        this side lost (``atof.*.events_dropped[...]``, ``atif.events_dropped``, ``otel.spans_dropped[i]``)."""
        self._refresh()
        lost = self._forward_losses()
        return {key: value + lost if key.split("[", 1)[0].endswith(("events_dropped", "spans_dropped")) else value
                for key, value in self._last_counters.items()}

    def stats(self) -> dict[str, Any]:
        """The child sink's ``stats()``, plus ``worker``: pid, alive, the CPU seconds the child spent serving
        (start-up excluded; as of its last answer) and the forwarding queue's counters."""
        self._refresh()
        out = dict(self._last_stats)
        cpu = out.pop("worker_cpu_seconds", 0.0)
        out["worker"] = {"pid": self._process.pid, "alive": not self._dead and self._process.poll() is None,
                         "cpu_seconds": cpu, **self._writer.stats()}
        return out

    def destinations(self) -> list[str]:
        """The child's destinations (no credentials), tagged with the worker process."""
        return [f"{where} (worker process {self._process.pid})" for where in self._destinations]


def _with_cpu(stats: dict[str, Any], started: float) -> dict[str, Any]:
    return {**stats, "worker_cpu_seconds": time.process_time() - started}


def _serve(stdin: IO[bytes], stdout: IO[bytes]) -> int:
    """The child: build the sink, then answer frames until ``shutdown`` or end of input."""
    from ..engine.plugins import import_object

    builder, section, config, options = _receive(stdin)
    try:
        build: Any = import_object(builder)
        sink: Any = build(config, **options)
    except ExportConfigError as exc:
        _send(stdout, ("error", exc.path, exc.message))
        return 1
    except Exception as exc:
        _send(stdout, ("error", section, f"the worker process could not build the sink ({type(exc).__name__}: {exc})"))
        return 1
    started = time.process_time()  # CPU spent serving is measured from here (start-up excluded)
    _send(stdout, ("ready", getattr(sink, "enabled", True), sink.destinations(), sink.max_queue_size,
                   sink.counters()))
    make = ScopeEvent
    received = 0
    try:
        while True:
            try:
                kind, seq, *args = _receive(stdin)
            except EOFError:  # the parent went away: export what we have
                sink.shutdown(5.0)
                return 0
            if kind == EVENTS:
                for fields in args[0]:
                    sink(make(*fields))
                received += len(args[0])
            elif kind == FLUSH:
                _send(stdout, (seq, (sink.flush(args[0]), received)))
            elif kind == STATS:
                _send(stdout, (seq, ("stats", _with_cpu(sink.stats(), started), sink.counters(), received)))
            elif kind == SHUTDOWN:
                ok = sink.shutdown(args[0])
                _send(stdout, (seq, (ok, _with_cpu(sink.stats(), started), sink.counters(), received)))
                return 0
    except BrokenPipeError:
        sink.shutdown(1.0)
        return 0


def main() -> int:
    """Entry point of the worker: frames on stdin/stdout; anything printed goes to stderr instead."""
    protocol_out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    return _serve(sys.stdin.buffer, protocol_out)


if __name__ == "__main__":
    sys.exit(main())
