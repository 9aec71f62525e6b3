"""Exporters in worker processes: rendering, encoding and I/O off the agent's GIL (spec 04 §5).

In one Python process every exporter thread shares the agent's interpreter lock, so exporting
competes with the agent for one core. With ``worker = "process"`` in a section of the
``observability`` component (``atof``, ``atif`` or ``opentelemetry``; a hermes_pipeline extension,
``"thread"`` is the default) that section's sink runs in a child Python process of its own, so its
work runs on another core. ``worker = "process:NAME"`` puts every section naming the same ``NAME``
into one shared child: each event is then serialized and sent once for all of them, which is the
cheaper choice when the sinks together fit one core. The hook projection stays in this process, so
every exporter still sees the same UUIDs (FMT-56).

- In this process (:class:`WorkerProcess`, the scope listener): one bounded writer
  (``<name>.process``, FMT-81) whose worker thread pickles batches of events once and writes them
  to the child's stdin as length-prefixed frames. The listener only enqueues (FMT-79); a dropped
  start drops its end too (FMT-80). Each section is seen through its own :class:`ProcessSink`
  (flush, shutdown, stats, counters and destinations of that section).
- The child (``python -m hermes_pipeline.sinks.worker_process``, not ``multiprocessing``: the host's
  ``__main__`` is never re-imported) builds each section's sink from the same table, feeds every
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
import pickle
import re
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

__all__ = ["WORKERS", "ProcessSink", "WorkerDied", "WorkerPool", "WorkerProcess", "check_worker",
           "process_sink", "shared_worker_name", "split_worker"]

logger: Final = logging.getLogger("hermes_pipeline.sinks.worker")
_LENGTH: Final = struct.Struct("<I")
_READY_TIMEOUT: Final = 120.0
_STATS_TIMEOUT: Final = 2.0
"""How long ``stats()`` / ``counters()`` wait for fresh figures before answering with the last ones."""
_REPLY_SLACK: Final = 0.25
"""Seconds a flush or close waits for the child's answer beyond the deadline it gave the child (the
child's sinks honour that deadline; this covers the pipe), so the caller's deadline holds."""
_FORWARD_LINGER: Final = 0.005
"""Seconds the forwarding writer waits for a batch to fill: its items come from the publication
thread, not the agent's, so an early wake-up costs the agent nothing and the child starts sooner."""
WORKERS: Final = ("thread", "process")
"""Kinds of a section's ``worker`` key; ``process:NAME`` names a worker process shared by sections."""
_SHARED: Final = re.compile(r"process:([A-Za-z0-9_.-]{1,64})")
EVENTS, FLUSH, STATS, CLOSE = "events", "flush", "stats", "close"


class WorkerDied(Exception):
    """The worker process is gone (or did not answer in time)."""


def check_worker(value: Any) -> str | None:
    """``None`` for a valid ``worker`` value, else what was expected (a config check)."""
    if isinstance(value, str) and (value in WORKERS or _SHARED.fullmatch(value)):
        return None
    return "expected 'thread', 'process' or 'process:NAME' (NAME: letters, digits, '_', '-', '.')"


def split_worker(config: Mapping[str, Any], section: str) -> tuple[str, dict[str, Any]]:
    """``(worker, the section's table without the key)``; :class:`ExportConfigError` for a bad value.

    ``worker`` is ``"thread"``, ``"process"`` or ``"process:NAME"`` as written.
    """
    if not isinstance(config, Mapping):
        raise ExportConfigError(section, "expected a table")
    rest = dict(config)
    worker = rest.pop("worker", "thread")
    problem = check_worker(worker)
    if problem is not None:
        raise ExportConfigError(f"{section}.worker", problem)
    return worker, rest


def shared_worker_name(worker: str) -> str | None:
    """``NAME`` of ``"process:NAME"``, else ``None``."""
    match = _SHARED.fullmatch(worker)
    return match.group(1) if match else None


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
        sections: ``(section, builder, config, options)`` per section: ``builder`` is ``"module:function"``
            building that section's sink from ``(config, **options)`` in the child; ``config`` is the
            section's table without ``worker`` (validated again in the child); ``options`` are pickled.
        max_queue_size: capacity of the forwarding queue (events); at least each sink's own capacity.
        python: the interpreter for the child (default: this one).

    Raises:
        ExportConfigError: the child did not start (path ``<first section>.worker``), or it refused a
            section's configuration (that section's key path and reason).
    """

    def __init__(self, name: str, sections: list[tuple[str, str, Mapping[str, Any], Mapping[str, Any]]], *,
                 max_queue_size: int = 10_000, python: str | None = None,
                 views: Mapping[str, ProcessSink] | None = None) -> None:
        if not sections:
            raise ValueError("a worker process needs at least one section")
        self.name = name
        first = sections[0][0]
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
            _send(self._in, [(builder, section, dict(config), dict(options))
                             for section, builder, config, options in sections])
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
        self._writer = BoundedWriter(_Forward(self), name=f"{name}.process", max_queue_size=capacity,
                                     max_attempts=1, linger=_FORWARD_LINGER).start()

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
        return (stats["dropped_queue_full"] + stats["dropped_after_errors"] + stats["dropped_at_close"]
                + stats["dropped_closed"] + unacknowledged)

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


class ProcessSink:
    """One section's sink, run by a worker process (see the module docstring).

    ``ProcessSink(section, builder, config, options)`` starts a worker process of its own for the
    section (``worker = "process"``); the views of a shared worker come from
    :attr:`WorkerProcess.sinks`. Calling a view forwards the event to its worker process: register
    the :class:`WorkerProcess` (:attr:`worker`) as the listener once when it serves several sections.

    Args:
        section: ``atof``, ``atif`` or ``opentelemetry`` (names queues, counters and errors).
        builder: ``"module:function"`` building the section's sink from ``(config, **options)`` in the child.
        config: the section's table without ``worker`` (validated again in the child).
        options: keyword arguments of the builder (pickled to the child).
        max_queue_size: capacity of the forwarding queue (events).
        python: the interpreter for the child (default: this one).
    """

    worker: WorkerProcess
    section: str

    def __init__(self, section: str, builder: str, config: Mapping[str, Any], options: Mapping[str, Any], *,
                 max_queue_size: int = 10_000, python: str | None = None) -> None:
        WorkerProcess(section, [(section, builder, config, options)], max_queue_size=max_queue_size,
                      python=python, views={section: self})

    def _attach(self, worker: WorkerProcess, section: str, enabled: bool, destinations: list[str]) -> None:
        self.worker, self.section = worker, section
        self._enabled, self._destinations = enabled, destinations
        self._closed = False

    @property
    def enabled(self) -> bool:
        """Whether the child's sink for this section exports anything."""
        return bool(self._enabled)

    @property
    def max_queue_size(self) -> int:
        """The forwarding queue's capacity (the publication queue's share, FMT-80)."""
        return self.worker.max_queue_size

    @property
    def worker_pid(self) -> int:
        """Process ID of the worker."""
        return self.worker.pid

    def join(self, timeout: float | None = None) -> bool:
        """Wait until the worker has exited (after :meth:`shutdown`); ``False`` if it is still running."""
        return self.worker.join(timeout)

    def __call__(self, event: ScopeEvent) -> None:
        """Enqueue only (FMT-79): the worker's listener."""
        self.worker(event)

    def flush(self, timeout: float = 5.0) -> bool:
        """Barrier (FMT-84): forwarded, then built and exported by the child; ``False`` past ``timeout``."""
        return self.worker.flush(timeout)

    def shutdown(self, deadline: float = 5.0) -> bool:
        """Forward what is queued and let the child shut this section's sink down within ``deadline``; the
        child ends with its last section. Idempotent."""
        if self._closed:
            return True
        self._closed = True
        return self.worker.close_section(self.section, deadline)

    def counters(self) -> dict[str, int]:
        """The child's FMT-81 counters; every events or spans ``*_dropped`` counter also counts the events
        this side lost (``atof.*.events_dropped[...]``, ``atif.events_dropped``, ``otel.spans_dropped[i]``)."""
        if not self._closed:
            self.worker.refresh()
        lost = self.worker.losses()
        return {key: value + lost if key.split("[", 1)[0].endswith(("events_dropped", "spans_dropped")) else value
                for key, value in self.worker.section_stats(self.section)[1].items()}

    def stats(self) -> dict[str, Any]:
        """The child sink's ``stats()``, plus ``worker``: pid, alive, the sections it serves, the CPU seconds
        the child spent serving (start-up excluded; as of its last answer) and the forwarding queue's counters."""
        if not self._closed:
            self.worker.refresh()
        return {**self.worker.section_stats(self.section)[0], "worker": self.worker.stats()}

    def destinations(self) -> list[str]:
        """The child's destinations (no credentials), tagged with the worker process."""
        return [f"{where} (worker process {self.worker.pid})" for where in self._destinations]


class WorkerPool:
    """Worker processes shared by sections (``worker = "process:NAME"``), planned first and started together.

    A sink builder given a pool plans its section with :meth:`plan` and gets back the section's
    :class:`ProcessSink` at once; :meth:`start` then starts one child per ``NAME`` with every section
    planned under it, and attaches the views. Register each distinct :attr:`ProcessSink.worker`
    as the scope listener once.
    """

    def __init__(self, *, python: str | None = None) -> None:
        self._python = python
        self._plans: dict[str, list[tuple[str, str, Mapping[str, Any], Mapping[str, Any]]]] = {}
        self._capacity: dict[str, int] = {}
        self._views: dict[str, dict[str, ProcessSink]] = {}
        self.workers: list[WorkerProcess] = []
        """The started worker processes."""

    def plan(self, name: str, section: str, builder: str, config: Mapping[str, Any], options: Mapping[str, Any],
             *, max_queue_size: int = 10_000) -> ProcessSink:
        """Add ``section`` to the worker ``name``; its view works once :meth:`start` has run."""
        self._plans.setdefault(name, []).append((section, builder, config, options))
        self._capacity[name] = max(self._capacity.get(name, 0), max_queue_size)
        view = ProcessSink.__new__(ProcessSink)
        view._closed = True  # until start() attaches it: a shutdown before that is a no-op
        self._views.setdefault(name, {})[section] = view
        return view

    def start(self) -> None:
        """Start every planned worker; on failure the ones already started are shut down and the typed
        :class:`~hermes_pipeline.export.errors.ExportConfigError` propagates."""
        try:
            for name, sections in self._plans.items():
                self.workers.append(WorkerProcess(name, sections, max_queue_size=self._capacity[name],
                                                  python=self._python, views=self._views[name]))
        except BaseException:
            for worker in self.workers:
                for view in worker.sinks.values():
                    view.shutdown(1.0)
            raise
        finally:
            self._plans.clear()


def process_sink(worker: str, section: str, builder: str, config: Mapping[str, Any], options: Mapping[str, Any], *,
                 max_queue_size: int = 10_000, pool: WorkerPool | None = None) -> ProcessSink:
    """The section's :class:`ProcessSink` for a ``worker`` value other than ``thread``: planned in ``pool`` under
    ``NAME`` for ``process:NAME`` (when a pool is given), else in a worker process of its own, started now."""
    name = shared_worker_name(worker)
    if name is not None and pool is not None:
        return pool.plan(name, section, builder, config, options, max_queue_size=max_queue_size)
    return ProcessSink(section, builder, config, options, max_queue_size=max_queue_size)


def _shutdown_all(sinks: dict[str, Any], deadline: float) -> None:
    for sink in sinks.values():
        try:
            sink.shutdown(deadline)
        except Exception:  # one sink never prevents the others' shutdown
            pass


def _build(specs: list[tuple[str, str, dict[str, Any], dict[str, Any]]]) -> dict[str, Any] | tuple[str, str]:
    """Every section's sink, or ``(key path, reason)`` of the first that cannot be built."""
    from ..engine.plugins import import_object

    sinks: dict[str, Any] = {}
    for builder, section, config, options in specs:
        try:
            build: Any = import_object(builder)
            sinks[section] = build(config, **options)
        except Exception as exc:
            _shutdown_all(sinks, 1.0)
            if isinstance(exc, ExportConfigError):
                return exc.path, exc.message
            return section, f"the worker process could not build the sink ({type(exc).__name__}: {exc})"
    return sinks


def _serve(stdin: IO[bytes], stdout: IO[bytes]) -> int:
    """The child: build the sinks, then answer frames until the last section is closed or input ends."""
    built = _build(_receive(stdin))
    if isinstance(built, tuple):
        _send(stdout, ("error", *built))
        return 1
    sinks = built
    started = time.process_time()  # CPU spent serving is measured from here (start-up excluded)

    def report(section: str) -> tuple[dict[str, Any], dict[str, int]]:
        return sinks[section].stats(), sinks[section].counters()

    _send(stdout, ("ready", {section: (getattr(sink, "enabled", True), sink.destinations(), sink.max_queue_size,
                                       sink.counters()) for section, sink in sinks.items()}))
    make = ScopeEvent
    received = 0
    try:
        while True:
            try:
                kind, seq, *args = _receive(stdin)
            except EOFError:  # the parent went away: export what we have
                _shutdown_all(sinks, 5.0)
                return 0
            if kind == EVENTS:
                feed = tuple(sinks.values())
                for fields in args[0]:
                    event = make(*fields)
                    for sink in feed:
                        sink(event)
                received += len(args[0])
            elif kind == FLUSH:
                end = time.monotonic() + args[0]
                ok = all([sink.flush(max(end - time.monotonic(), 0.0)) for sink in sinks.values()])
                _send(stdout, (seq, (ok, received)))
            elif kind == STATS:
                _send(stdout, (seq, ({section: report(section) for section in sinks},
                                     time.process_time() - started, received)))
            elif kind == CLOSE:
                section, deadline = args
                sink = sinks.get(section)
                ok = bool(sink.shutdown(deadline)) if sink is not None else True
                stats, counters = report(section) if sink is not None else ({}, {})
                sinks.pop(section, None)
                _send(stdout, (seq, (ok, stats, counters, time.process_time() - started, received)))
                if not sinks:
                    return 0
    except BrokenPipeError:
        _shutdown_all(sinks, 1.0)
        return 0


def main() -> int:
    """Entry point of the worker: frames on stdin/stdout; anything printed goes to stderr instead."""
    protocol_out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    return _serve(sys.stdin.buffer, protocol_out)


if __name__ == "__main__":
    sys.exit(main())
