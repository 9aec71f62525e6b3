"""The ATIF v1.7 exporter: one trajectory document per top-level agent scope (spec 04 §3, §5).

:class:`AtifSink` is the ``atif`` entry point of the ``hermes_pipeline.sinks`` group: it builds itself from
the section's table with :meth:`AtifSink.from_config` (in a worker process with ``worker = "process"``)
and carries the section's statement from :mod:`.config`. Used through the generic wrappers:

- sharing one scope plugin with the other exporters (what the observability component does, so
  that ATOF, ATIF and OTLP agree on UUIDs and the hook caller pays for one scope plugin only)::

      scopes = ScopePlugin(deferred=True); engine.add_plugin(scopes, name="scopes")
      atif = AtifSink.from_config(config, ctx); scopes.add_listener(atif)
      ...
      scopes.shutdown(); atif.shutdown()      # close scopes first: open roots become partial files

- stand-alone (tests, scripts): ``plugin = SinkPlugin.build(AtifSink, config, ctx)``; ``engine.add_plugin(plugin)``.

:func:`build_atif_sink` is the same with keyword options; ``build_atif_plugin`` and ``AtifPlugin`` are
deprecated names of the stand-alone form.

The listener only enqueues the :class:`~hermes_pipeline.export.events.ScopeEvent` on one bounded
writer (FMT-79, FMT-81; a dropped start drops its end too, FMT-80). On that writer's thread a
:class:`~hermes_pipeline.sinks.atif.trajectory.TrajectoryAssembler` groups events into trajectories
and, when a root scope ends, builds the document and writes it (atomically to ``output_directory``,
or to every ``storage`` destination through a second bounded queue of 16 trajectories). Nothing of
that runs on the hook caller's thread, and no failure reaches the agent (FMT-83).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any, ClassVar, Final

from ...export.errors import ExportConfigError
from ...export.events import ScopeEvent, submit_paired, submit_paired_many
from ...export.sink import SinkContext
from ...export.standalone import SinkPlugin
from ...export.worker import ProcessSink, WorkerPool, process_sink, split_worker
from ...export.sizes import event_bytes
from ...export.writer import BoundedWriter, Destination, warn_nonzero_counters
from . import config as statement
from .config import AtifConfig, parse_atif_config
from .deferred import DeferredWrites
from .files import HttpTrajectoryStorage, StorageUploads, TrajectoryDirectory
from .trajectory import TrajectoryAssembler, TrajectoryFile

__all__ = ["AtifPlugin", "AtifSink", "ExportConfigError", "TrajectoryFile", "build_atif_plugin", "build_atif_sink"]

logger: Final = logging.getLogger("hermes_pipeline.sinks.atif")
UPLOAD_QUEUE: Final = 16
SUMMARY_MODES: Final = ("preview", "digest", "off")


def _pipeline_version() -> str:
    from ...contract.versions import PACKAGE_VERSION

    return PACKAGE_VERSION


class _EventsDestination:
    """The event writer's destination: feeds the assembler; never raises (the writer must not retry)."""

    def __init__(self, assembler: TrajectoryAssembler, local: Destination | None,
                 deferred: DeferredWrites | None = None) -> None:
        self.assembler = assembler
        self.local = local
        self.deferred = deferred
        """The local files waiting for another write (a full disk): tried again after each batch, and at close."""
        """Opened on this writer's thread (retention); ``None`` when the upload writer owns it."""
        self._holding: Callable[[], AbstractContextManager[None]] = getattr(local, "holding", None) or nullcontext
        """The output's hold over a batch (one sync per directory for the batch's trajectories), if it has one."""
        self.failures = 0
        self._warned: set[str] = set()

    def describe(self) -> str:
        return "atif trajectory assembly"

    def open(self) -> None:
        fn = getattr(self.local, "open", None)
        if callable(fn):
            try:
                fn()
            except Exception as exc:
                self._warn(f"open:{type(exc).__name__}", "opening the output failed (%s)", type(exc).__name__)

    def _warn(self, key: str, message: str, *args: Any) -> None:
        if key not in self._warned:
            self._warned.add(key)
            logger.warning("hermes_pipeline: atif: " + message + "; later failures are counted silently", *args)

    def write(self, batch: list[Any]) -> None:
        with self._holding():
            self.assembler.add_all(batch, self._failed)
            if self.deferred is not None and self.deferred.waiting:
                self.deferred.retry()

    def _failed(self, exc: Exception) -> None:
        """FMT-83: one odd event never stops the exporter; it is counted and warned once."""
        self.failures += 1
        self._warn(f"event:{type(exc).__name__}", "an event could not be routed (%s)", type(exc).__name__)

    def close(self) -> None:
        """After the queue is drained: held segments and open roots become files (FMT-49)."""
        try:
            self.assembler.close()
        except Exception as exc:
            self.failures += 1
            self._warn(f"close:{type(exc).__name__}", "writing partial trajectories failed (%s)", type(exc).__name__)
        if self.deferred is not None:
            with self._holding():
                self.deferred.close()


class AtifSink:
    """The ATIF listener (call it with a :class:`ScopeEvent`) and its writer threads.

    :meth:`flush`, :meth:`shutdown`, :meth:`stats`, :meth:`counters` and :meth:`destinations` report on
    them. Build it with :meth:`from_config` (the entry point) or :func:`build_atif_sink`.
    """

    never_blocks: ClassVar[bool] = True
    """``__call__`` only queues on this sink's own bounded writers (or counts in memory): it is called on
    the publication thread directly (:mod:`hermes_pipeline.export.isolation`)."""

    # the section's statement, from .config: read by ``config validate``, the layer merge and ``config explain``
    validate_config: Final = staticmethod(statement.validate_config)
    list_paths: Final = statement.LIST_PATHS
    output_locations: Final = staticmethod(statement.output_locations)

    @classmethod
    def from_config(cls, config: Mapping[str, Any], ctx: SinkContext, *,
                    destinations: Mapping[Any, Destination] | None = None) -> AtifSink | ProcessSink:
        """The entry point's builder: validate the ``atif`` table and return a started :class:`AtifSink`, or with
        ``worker = "process"`` a :class:`~hermes_pipeline.export.worker.ProcessSink` running one in a worker
        process (not with ``destinations`` overrides, which cannot cross processes).

        ``ctx`` gives the directories (CFG-83; FMT-35: without ``output_directory`` the profile's
        ``$HERMES_HOME/telemetry``, never the working directory), ``enable_full_payloads`` (required by
        ``storage``, FMT-30; the local output always has the gate open), ``content_summary`` (checked for
        symmetry: ATIF destinations never summarise), how invalid ``storage`` entries are handled (FMT-73) and
        the pool of shared worker processes. ``destinations``: ``"local"`` → the local output (receives
        :class:`~hermes_pipeline.sinks.atif.trajectory.TrajectoryFile` items), ``<index>`` → that ``storage``
        entry.

        Raises:
            ExportConfigError: naming the offending key path (e.g. a template without ``{session_id}``).
        """
        if ctx.content_summary not in SUMMARY_MODES:
            raise ExportConfigError("content_summary", "expected 'preview', 'digest' or 'off'")
        worker, config = split_worker(config, ctx.name)
        parsed = parse_atif_config(config, base_dir=ctx.base_dir, default_dir=ctx.default_dir,
                                   enable_full_payloads=ctx.enable_full_payloads, on_invalid=ctx.on_invalid,
                                   ignore_unknown_keys=ctx.ignore_unknown_keys)
        if worker != "thread" and destinations is None and parsed.enabled:
            return process_sink(worker, cls, config, ctx, max_queue_size=parsed.max_queue_size)
        return cls(parsed, destinations=destinations, max_queue_bytes=ctx.max_queue_bytes).start()

    def __init__(self, config: AtifConfig, *, destinations: Mapping[Any, Destination] | None = None,
                 max_queue_bytes: int | None = None) -> None:
        self.config = config
        self.skipped = list(config.skipped)
        overrides = dict(destinations or {})
        self.local: Destination = overrides.get("local") or TrajectoryDirectory(
            config.directory, config.template, retention_days=config.retention_days,
            merge_sessions=config.group_by == "agent", shared_definitions=config.shared_definitions)
        self.uploads: StorageUploads | None = None
        self._upload_writer: BoundedWriter | None = None
        if config.storage and config.enabled:
            storage = [(entry.index, overrides.get(entry.index) or HttpTrajectoryStorage(entry))
                       for entry in config.storage]
            self.uploads = StorageUploads(storage, self.local)
            self._upload_writer = BoundedWriter(self.uploads, name="atif.storage", max_queue_size=UPLOAD_QUEUE,
                                                max_attempts=1)
        self.assembler = TrajectoryAssembler(config, self._output, version=_pipeline_version())
        self.deferred = DeferredWrites(self.local) if self.uploads is None else None
        self._events = _EventsDestination(self.assembler, self.local if self.uploads is None else None, self.deferred)
        self._writer: BoundedWriter | None = None
        if config.enabled:
            self._writer = BoundedWriter(self._events, name="atif", max_queue_size=config.max_queue_size,
                                         max_attempts=1, max_queue_bytes=max_queue_bytes,
                                         size=event_bytes)
        self._dropped_starts: set[int] = set()
        self._closed = False

    @property
    def enabled(self) -> bool:
        """Whether the ``atif`` section is enabled (a disabled sink ignores every event)."""
        return self._writer is not None

    @property
    def max_queue_size(self) -> int:
        """``atif.max_queue_size``: a contribution to the publication queue's capacity (FMT-80)."""
        return self.config.max_queue_size

    def start(self) -> AtifSink:
        """Start the writer threads (the local output prunes old files there, FMT-87a)."""
        if self._upload_writer is not None:
            self._upload_writer.start()
        if self._writer is not None:
            self._writer.start()
        return self

    # ------------------------------------------------------------------ the listener (publication thread)

    def __call__(self, event: ScopeEvent) -> None:
        writer = self._writer
        if writer is None:
            return
        submit_paired(writer, event, self._dropped_starts)  # ends always get in: the assembler needs them

    def take_many(self, events: list[ScopeEvent]) -> None:
        """The events of one publication batch, as one call per event would: one hand-over to the writer."""
        writer = self._writer
        if writer is not None:
            submit_paired_many(writer, events, self._dropped_starts)

    # ------------------------------------------------------------------ worker side

    def _output(self, item: TrajectoryFile) -> None:
        """Called by the assembler on the event writer's thread."""
        if self._upload_writer is not None:
            self._upload_writer.submit(item)  # a full upload queue is counted (atif.trajectories_dropped)
        elif self.deferred is not None:
            self.deferred.write(item)  # a failed write waits for another (a full disk); see .deferred
        else:
            self.local.write([item])

    # ------------------------------------------------------------------ control

    def flush(self, timeout: float = 5.0) -> bool:
        """Barrier (FMT-84): every event enqueued before the call was routed and every trajectory whose
        root had ended was written (or uploaded); ``False`` on timeout. Never raises."""
        return self._each_writer("flush", timeout)

    def _each_writer(self, action: str, seconds: float) -> bool:
        """``flush`` or ``close`` the event and upload writers within ``seconds`` in all; never raises."""
        end = time.monotonic() + max(seconds, 0.0)
        ok = True
        for writer in (self._writer, self._upload_writer):
            if writer is None:
                continue
            try:
                ok = bool(getattr(writer, action)(max(end - time.monotonic(), 0.0))) and ok
            except Exception:
                ok = False
        return ok

    def shutdown(self, deadline: float = 5.0) -> bool:
        """Drain the queue, write open roots as partial trajectories, close (FMT-49, FMT-85). Idempotent.

        Call it after the scope plugin's own shutdown, so that open scopes have been ended first.
        Non-zero counters are logged once (FMT-82): names and counts only.
        """
        first = not self._closed
        self._closed = True
        ok = self._each_writer("close", deadline)
        if first:
            warn_nonzero_counters(logger, "atif", self.counters())
        return ok

    def stats(self) -> dict[str, Any]:
        """Writer counters (``events``, ``uploads``), trajectory counters and open roots."""
        out: dict[str, Any] = {"events": self._writer.stats() if self._writer is not None else {},
                               "trajectories": {**self.assembler.counts,
                                                **(self.deferred.counts if self.deferred is not None else {}),
                                                "waiting": self.deferred.waiting if self.deferred is not None else 0},
                               "open_roots": self.assembler.open_roots(),
                               "routing_failures": self._events.failures,
                               "skipped": [path for path, _ in self.skipped]}
        sessions = getattr(self.local, "sessions", None)
        if sessions is not None:  # resumed parts merged, candidates unreadable (a FIFO...), merges locked out
            out["sessions"] = {"merged": sessions.merged, "unreadable": sessions.unreadable,
                               "lock_timeouts": sessions.lock_timeouts}
        if self._upload_writer is not None and self.uploads is not None:
            out["uploads"] = {**self._upload_writer.stats(), "delivered": self.uploads.delivered,
                              "recovery_copies": self.uploads.recovery_copies}
        return out

    def counters(self) -> dict[str, int]:
        """The FMT-81 diagnostics counters: ``atif.events_dropped``, ``atif.filename_unresolved``,
        ``atif.file_errors`` (local write failures, recovery copies and files that waited for another write in vain
        included; hermes_pipeline extension)
        and, with storage, ``atif.trajectories_dropped`` and ``atif.delivery_failures[<index>]``."""
        counts = self.assembler.counts
        out: dict[str, int] = {}
        if self._writer is not None:
            s = self._writer.stats()
            out["atif.events_dropped"] = (s["dropped_queue_full"] + s["dropped_queue_bytes"] + s["dropped_closed"]
                                          + s["dropped_at_close"]
                                          + s["dropped_after_errors"])
        out["atif.filename_unresolved"] = counts["filename_unresolved"]
        out["atif.file_errors"] = (counts["write_errors"] + (self.uploads.recovery_errors if self.uploads else 0)
                                   + (self.deferred.counts["trajectories_lost"] if self.deferred is not None else 0))
        if self._upload_writer is not None and self.uploads is not None:
            u = self._upload_writer.stats()
            out["atif.trajectories_dropped"] = (u["dropped_queue_full"] + u["dropped_closed"] + u["dropped_at_close"]
                                                + u["dropped_after_errors"])
            out.update(self.uploads.counters())
        return out

    def destinations(self) -> list[str]:
        """Where trajectories go, for humans; never credentials or query strings."""
        if not self.enabled:
            return []
        if self.uploads is not None:
            out = []
            for index, destination in self.uploads.storage:
                describe = getattr(destination, "describe", None)
                out.append(f"atif.storage[{index}]: "
                           f"{describe() if callable(describe) else type(destination).__name__}")
            return out
        describe = getattr(self.local, "describe", None)
        return [f"atif: {describe() if callable(describe) else type(self.local).__name__}"]


AtifPlugin: Final = SinkPlugin
"""Deprecated name of :class:`~hermes_pipeline.export.standalone.SinkPlugin` (the stand-alone form of any sink)."""


def build_atif_sink(config: Mapping[str, Any], *, base_dir: Path | None = None, enable_full_payloads: bool = False,
                    content_summary: str = "preview", on_invalid: str = "raise", ignore_unknown_keys: bool = False,
                    default_dir: Path | None = None,
                    destinations: Mapping[Any, Destination] | None = None,
                    workers: WorkerPool | None = None) -> AtifSink | ProcessSink:
    """:meth:`AtifSink.from_config` with keyword options (stand-alone use: invalid entries raise by default).

    ``base_dir`` defaults to the working directory; ``workers`` plans a ``worker = "process:NAME"`` section in
    that pool (started by :meth:`~hermes_pipeline.export.worker.WorkerPool.start`); the other options are
    :class:`~hermes_pipeline.export.sink.SinkContext`'s.
    """
    ctx = SinkContext.standalone("atif", base_dir=base_dir, default_dir=default_dir, enable_full_payloads=enable_full_payloads,
                   content_summary=content_summary, on_invalid=on_invalid, ignore_unknown_keys=ignore_unknown_keys,
                   workers=workers)
    return AtifSink.from_config(config, ctx, destinations=destinations)



def build_atif_plugin(config: Mapping[str, Any], *, base_dir: Path | None = None, enable_full_payloads: bool = False,
                      content_summary: str = "preview", on_invalid: str = "raise", ignore_unknown_keys: bool = False,
                      default_dir: Path | None = None,
                      destinations: Mapping[Any, Destination] | None = None, toolsets: Mapping[str, str] | None = None,
                      memory_tools: Mapping[str, str] | None = None, deferred: bool = True) -> SinkPlugin:
    """Deprecated: ``SinkPlugin.build(AtifSink, config, ctx)``, the stand-alone form of any sink (see
    :func:`build_atif_sink` for the options)."""
    ctx = SinkContext.standalone("atif", base_dir=base_dir, default_dir=default_dir, enable_full_payloads=enable_full_payloads,
                   content_summary=content_summary, on_invalid=on_invalid, ignore_unknown_keys=ignore_unknown_keys)
    return SinkPlugin.build(AtifSink, config, ctx, deferred=deferred, toolsets=toolsets, memory_tools=memory_tools,
                            **({"destinations": destinations} if destinations is not None else {}))
