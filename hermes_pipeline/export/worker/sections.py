"""Each section's view of a worker process, and the pool that plans shared ones.

Generic: any sink class (or module-level builder) runs in a worker process through :func:`process_sink`,
given its section's table and :class:`~hermes_pipeline.export.sink.SinkContext`; the child builds it with
:func:`~hermes_pipeline.export.sink.build_sink` from the same entry and context, exactly as the
``observability`` component builds it in this process. A section with ``worker = "process"`` gets a
:class:`ProcessSink` whose own worker process is started at once; sections with ``worker =
"process:NAME"`` are planned in the context's :class:`WorkerPool` while their sinks are built, and
:meth:`WorkerPool.start` then starts one :class:`~hermes_pipeline.export.worker.parent.WorkerProcess`
per ``NAME``. Every section keeps its own view for flush, shutdown, stats, counters and destinations; the
worker is the listener.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, ClassVar

from ..events import ScopeEvent
from ..sink import SinkContext
from .parent import Section, WorkerProcess
from .protocol import shared_worker_name

__all__ = ["ProcessSink", "WorkerPool", "entry_reference", "process_sink"]


class ProcessSink:
    """One section's sink, run by a worker process (see the module docstring).

    ``ProcessSink(section, entry, config, ctx)`` starts a worker process of its own for the
    section (``worker = "process"``); the views of a shared worker come from
    :attr:`WorkerProcess.sinks`. Calling a view forwards the event to its worker process: register
    the :class:`WorkerProcess` (:attr:`worker`) as the listener once when it serves several sections.

    Args:
        section: ``atof``, ``atif``, ``opentelemetry``, ... (names queues, counters and errors).
        entry: ``"module:SinkClass"`` (or ``"module:builder"``) the child builds the section's sink with.
        config: the section's table without ``worker`` (validated again in the child).
        ctx: the section's :class:`~hermes_pipeline.export.sink.SinkContext` (pickled to the child,
            without its worker pool).
        max_queue_size: capacity of the forwarding queue (events).
        python: the interpreter for the child (default: this one).
    """

    never_blocks: ClassVar[bool] = True
    """``__call__`` only queues on this sink's own bounded writers (or counts in memory): it is called on
    the publication thread directly (:mod:`hermes_pipeline.export.isolation`)."""

    worker: WorkerProcess
    section: str

    def __init__(self, section: str, entry: str, config: Mapping[str, Any], ctx: SinkContext, *,
                 max_queue_size: int = 10_000, python: str | None = None) -> None:
        WorkerProcess(section, [(section, entry, config, _for_child(ctx))], max_queue_size=max_queue_size,
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
        """The worker's listener: only enqueues, no I/O on the caller's thread (FMT-79)."""
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

    A sink given a pool (``ctx.workers``) plans its section with :meth:`plan` and gets back the section's
    :class:`ProcessSink` at once; :meth:`start` then starts one child per ``NAME`` with every section
    planned under it, and attaches the views. Register each distinct :attr:`ProcessSink.worker`
    as the scope listener once.
    """

    def __init__(self, *, python: str | None = None) -> None:
        self._python = python
        self._plans: dict[str, list[Section]] = {}
        self._capacity: dict[str, int] = {}
        self._views: dict[str, dict[str, ProcessSink]] = {}
        self.workers: list[WorkerProcess] = []
        """The started worker processes."""

    def plan(self, name: str, section: str, entry: str, config: Mapping[str, Any], ctx: SinkContext,
             *, max_queue_size: int = 10_000) -> ProcessSink:
        """Add ``section`` (built in the child from ``entry``, ``config`` and ``ctx``) to the worker ``name``;
        its view works once :meth:`start` has run."""
        self._plans.setdefault(name, []).append((section, entry, config, _for_child(ctx)))
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


def _for_child(ctx: SinkContext) -> SinkContext:
    """The context a child builds with: the same, without the parent's worker pool (it stays here)."""
    return replace(ctx, workers=None) if ctx.workers is not None else ctx


def entry_reference(entry: str | Callable[..., Any]) -> str:
    """The ``"module:QualName"`` a child process imports to build the section's sink: a module-level sink class
    (or builder) is named from itself (so no sink writes its own module as a string); a string is taken as it is."""
    if isinstance(entry, str):
        return entry
    module, qualname = getattr(entry, "__module__", None), getattr(entry, "__qualname__", "")
    if not module or not qualname or "<locals>" in qualname:
        raise ValueError(f"a worker process can only import a module-level sink class or builder, not {entry!r}")
    return f"{module}:{qualname}"


def process_sink(worker: str, entry: str | Callable[..., Any], config: Mapping[str, Any], ctx: SinkContext, *,
                 max_queue_size: int = 10_000) -> ProcessSink:
    """Any sink of section ``ctx.name`` in a worker process, for a ``worker`` value other than ``thread``: planned
    in ``ctx.workers`` under ``NAME`` for ``process:NAME`` (when the context has a pool), else in a worker process
    of its own, started now. ``entry`` is the sink class (or module-level builder) the child builds it with,
    ``config`` its table without ``worker``; ``max_queue_size`` sizes the forwarding queue."""
    reference = entry_reference(entry)
    name = shared_worker_name(worker)
    pool = ctx.workers
    if name is not None and isinstance(pool, WorkerPool):
        return pool.plan(name, ctx.name, reference, config, ctx, max_queue_size=max_queue_size)
    return ProcessSink(ctx.name, reference, config, ctx, max_queue_size=max_queue_size)
