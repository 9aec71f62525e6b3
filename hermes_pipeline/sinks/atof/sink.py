"""The ATOF 0.1 exporter: JSON-Lines file sinks and HTTP stream sinks (spec 04 §2.13-§2.16, §5).

:class:`AtofSink` is the ``atof`` entry point of the ``hermes_pipeline.sinks`` group: it builds itself
from the section's table with :meth:`AtofSink.from_config` (in a worker process with ``worker =
"process"``), and carries the section's statement from :mod:`.config`. Used through the generic wrappers:

- sharing one scope stream with other exporters (so ATOF, ATIF and OTLP agree on UUIDs): the
  ``observability`` component; or ``sink = AtofSink.from_config(config, ctx)``;
  ``scope_plugin.add_listener(sink)``;
- stand-alone: ``plugin = SinkPlugin.build(AtofSink, config, ctx)``; ``engine.add_plugin(plugin, name="atof")``
  (:class:`~hermes_pipeline.export.standalone.SinkPlugin`, the hooks object feeding one sink).

:func:`build_atof_sink` is the same with keyword options; ``build_atof_plugin`` and ``AtofPlugin`` are
deprecated names of the stand-alone form.

On the hook caller's thread the sink only enqueues the :class:`~hermes_pipeline.export.events.ScopeEvent`
into one :class:`~hermes_pipeline.export.writer.BoundedWriter` per configured sink (FMT-79,
FMT-81). Each writer's worker renders the event, applies that destination's content gate
(FMT-30/31), the LLM-history delta (FMT-25) and ``field_name_policy`` (FMT-39), encodes one JSON
line and delivers it. If a scope start is dropped because a queue was full, its end is dropped
too (FMT-80).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Final

from ...engine.deadline import Deadline
from ...export.definition_files import DefinitionFiles
from ...export.errors import ExportConfigError
from ...export.events import ScopeEvent, submit_paired, submit_paired_many
from ...export.files import DATE_PLACEHOLDER, JsonlFileDestination
from ...export.http import HttpPostDestination, NdjsonUploadDestination
from ...export.sink import SinkContext
from ...export.standalone import SinkPlugin
from ...export.worker import ProcessSink, WorkerPool, process_sink, split_worker
from ...export.sizes import event_bytes
from ...export.writer import BoundedWriter, Destination, warn_nonzero_counters
from . import config as statement
from .config import AtofConfig, FileSinkConfig, StreamSinkConfig, parse_atof_config
from .encoder import AtofEncoder

__all__ = ["AtofPlugin", "AtofSink", "ExportConfigError", "build_atof_plugin", "build_atof_sink"]

SUMMARY_MODES: Final = ("preview", "digest", "off")
logger: Final = logging.getLogger("hermes_pipeline.sinks.atof")


class _Route:
    """One configured sink: its writer, counters key and the starts it had to drop."""

    __slots__ = ("counter", "destination", "dropped_starts", "flush_cap", "label", "writer")

    def __init__(self, label: str, counter: str, writer: BoundedWriter, destination: Destination,
                 flush_cap: float | None) -> None:
        self.label = label
        self.counter = counter
        self.writer = writer
        self.destination = destination
        self.dropped_starts: set[int] = set()
        self.flush_cap = flush_cap


class AtofSink:
    """The ATOF listener: fans scope events out to one bounded writer per configured sink.

    Call it with a :class:`ScopeEvent` (it is a tracker listener); :meth:`flush`, :meth:`shutdown`,
    :meth:`stats`, :meth:`counters` and :meth:`destinations` report on the writers.
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
                    destinations: Mapping[int, Destination] | None = None) -> AtofSink | ProcessSink:
        """The entry point's builder: validate the ``atof`` table and return a started :class:`AtofSink`, or with
        ``worker = "process"`` a :class:`~hermes_pipeline.export.worker.ProcessSink` running one in a worker
        process (not with ``destinations`` overrides, which cannot cross processes).

        ``ctx`` gives the base and default directories (CFG-83; FMT-35: outputs default to the profile, never
        to the working directory), the component's ``enable_full_payloads`` / ``content_summary`` (FMT-3),
        how invalid entries are handled (FMT-73) and the pool of shared worker processes. ``destinations``:
        ``sink index → Destination`` overrides (tests, custom transports).

        Raises:
            ExportConfigError: naming the offending key path.
        """
        worker, config = split_worker(config, ctx.name)
        parsed = parse_atof_config(config, base_dir=ctx.base_dir, default_dir=ctx.default_dir,
                                   on_invalid=ctx.on_invalid, ignore_unknown_keys=ctx.ignore_unknown_keys)
        if worker != "thread" and destinations is None and parsed.enabled and parsed.sinks:
            return process_sink(worker, cls, config, ctx,
                                max_queue_size=max(sink.max_queue_size for sink in parsed.sinks))
        return cls(parsed, enable_full_payloads=ctx.enable_full_payloads, content_summary=ctx.content_summary,
                   destinations=destinations, max_queue_bytes=ctx.max_queue_bytes).start()

    def __init__(self, config: AtofConfig, *, enable_full_payloads: bool = False, content_summary: str = "preview",
                 destinations: Mapping[int, Destination] | None = None, max_queue_bytes: int | None = None) -> None:
        if content_summary not in SUMMARY_MODES:
            raise ExportConfigError("content_summary", "expected 'preview', 'digest' or 'off'")
        self.config = config
        self.skipped = list(config.skipped)
        self._routes: list[_Route] = []
        queue_bytes = max_queue_bytes  # None: bounded by count only (see SinkContext.max_queue_bytes)
        for sink in config.sinks if config.enabled else ():
            override = (destinations or {}).get(sink.index)
            self._routes.append(self._route(sink, enable_full_payloads, content_summary, config.llm_history, override,
                                            queue_bytes))
        self._closed = False

    @staticmethod
    def _route(sink: FileSinkConfig | StreamSinkConfig, full_payloads: bool, summary_mode: str, llm_history: str,
               override: Destination | None, queue_bytes: int | None) -> _Route:
        if isinstance(sink, FileSinkConfig):
            shared = DefinitionFiles(sink.directory) if override is None else None  # a local file only
            daily = DATE_PLACEHOLDER in sink.filename
            encoder = AtofEncoder(gate_open=sink.content == "full", summary_mode=summary_mode, llm_history=llm_history,
                                  daily=daily, shared=shared)
            destination: Destination = override or JsonlFileDestination(
                sink.directory, sink.filename, mode=sink.mode, retention_days=sink.retention_days, label=sink.label,
                day=(lambda: encoder.day) if daily else None)
            # the bound ``__call__``: calling the encoder object itself looks its ``__call__`` up again for every line
            writer = BoundedWriter(destination, name=sink.label, max_queue_size=sink.max_queue_size,
                                   encode=encoder.__call__, max_attempts=3, on_batch_dropped=encoder.reset,
                                   max_queue_bytes=queue_bytes, size=event_bytes,
                                   on_batch=encoder.begin_batch if daily else None)
            return _Route(sink.label, f"atof.file.events_dropped[{sink.index}]", writer, destination, None)
        timeout = sink.timeout_millis / 1000
        if override is None:
            cls = HttpPostDestination if sink.transport == "http_post" else NdjsonUploadDestination
            override = cls(sink.url, sink.headers, timeout=timeout)
        encoder = AtofEncoder(gate_open=full_payloads, summary_mode=summary_mode, llm_history=llm_history,
                              dots=sink.field_name_policy == "replace_dots")
        writer = BoundedWriter(override, name=sink.label, max_queue_size=sink.max_queue_size, encode=encoder.__call__,
                               max_attempts=4, backoff_initial=min(0.1, timeout), backoff_max=max(timeout, 0.1),
                               on_batch_dropped=encoder.reset, max_queue_bytes=queue_bytes, size=event_bytes)
        return _Route(sink.label, f"atof.stream.events_dropped[{sink.name or sink.index}]", writer, override, timeout)

    @property
    def enabled(self) -> bool:
        """Whether anything is exported: the section is enabled and has a sink left after skipped entries."""
        return bool(self.config.enabled and self._routes)

    @property
    def routes(self) -> tuple[_Route, ...]:
        """The configured sinks (skipped entries excluded)."""
        return tuple(self._routes)

    @property
    def max_queue_size(self) -> int:
        """The largest ``max_queue_size`` of the sinks: the publication queue's capacity (FMT-80)."""
        return max((route.writer.capacity for route in self._routes), default=10_000)

    def start(self) -> AtofSink:
        """Start every writer thread (file sinks open, or truncate, their file there)."""
        for route in self._routes:
            route.writer.start()
        return self

    def __call__(self, event: ScopeEvent) -> None:
        for route in self._routes:  # a line sink keeps no state: ends queue like any event
            submit_paired(route.writer, event, route.dropped_starts, force_end=False)

    def take_many(self, events: list[ScopeEvent]) -> None:
        """The events of one publication batch, as one call per event would: one hand-over per writer."""
        for route in self._routes:
            submit_paired_many(route.writer, events, route.dropped_starts, force_end=False)

    def _each_writer(self, action: str, seconds: float) -> bool:
        """``flush`` or ``close`` every route's writer within ``seconds`` in all (a stream also within its
        own cap): one deadline for every sink, and all writers drain side by side at close."""
        deadline = Deadline(seconds)
        if action == "close":
            for route in self._routes:
                remaining = deadline.remaining()
                route.writer.begin_close(remaining if route.flush_cap is None else min(remaining, route.flush_cap))
        ok = True
        for route in self._routes:
            remaining = deadline.remaining()
            cap = remaining if route.flush_cap is None else min(remaining, route.flush_cap)
            try:
                ok = bool(getattr(route.writer, action)(cap)) and ok
            except Exception:
                ok = False
        return ok

    def flush(self, timeout: float = 5.0) -> bool:
        """Barrier over every writer (FMT-84); ``False`` if any did not finish in time. Never raises."""
        return self._each_writer("flush", timeout)

    def shutdown(self, deadline: float = 5.0) -> bool:
        """Close every writer, writing what is queued within ``deadline`` seconds. Idempotent.

        Non-zero drop and error counters are logged once (FMT-82): counter names and counts only.
        """
        first = not self._closed
        self._closed = True
        ok = self._each_writer("close", deadline)
        if first:
            warn_nonzero_counters(logger, "atof", self.counters())
        return ok

    def stats(self) -> dict[str, Any]:
        """Per-sink writer counters (``label`` plus the fields of :meth:`BoundedWriter.stats`)."""
        return {"sinks": [{"label": r.label, **r.writer.stats()} for r in self._routes],
                "skipped": [path for path, _ in self.skipped]}

    def counters(self) -> dict[str, int]:
        """The FMT-81 diagnostics counters of this exporter (``atof.file_errors[i]``, ``...events_dropped[...]``)."""
        out: dict[str, int] = {}
        for route in self._routes:
            stats = route.writer.stats()
            out[route.counter] = (stats["dropped_queue_full"] + stats["dropped_queue_bytes"] + stats["dropped_after_errors"]
                                  + stats["dropped_at_close"] + stats["dropped_closed"])
            if route.counter.startswith("atof.file."):
                out[f"atof.file_errors[{route.counter.rsplit('[', 1)[1]}"] = stats["errors"]
        return out

    def destinations(self) -> list[str]:
        """Where events go, for humans: ``atof.sinks[0]: file /abs/path.jsonl``; never credentials or queries."""
        out = []
        for route in self._routes:
            describe = getattr(route.destination, "describe", None)
            out.append(f"{route.label}: {describe() if callable(describe) else type(route.destination).__name__}")
        return out


AtofPlugin: Final = SinkPlugin
"""Deprecated name of :class:`~hermes_pipeline.export.standalone.SinkPlugin` (the stand-alone form of any sink)."""


def build_atof_sink(config: Mapping[str, Any], *, base_dir: Path | None = None, enable_full_payloads: bool = False,
                    content_summary: str = "preview", on_invalid: str = "raise", ignore_unknown_keys: bool = False,
                    default_dir: Path | None = None,
                    destinations: Mapping[int, Destination] | None = None,
                    workers: WorkerPool | None = None) -> AtofSink | ProcessSink:
    """:meth:`AtofSink.from_config` with keyword options (stand-alone use: invalid entries raise by default).

    ``base_dir`` defaults to the working directory; ``workers`` plans a ``worker = "process:NAME"`` section in
    that pool (started by :meth:`~hermes_pipeline.export.worker.WorkerPool.start`); the other options are
    :class:`~hermes_pipeline.export.sink.SinkContext`'s.
    """
    ctx = SinkContext.standalone("atof", base_dir=base_dir, default_dir=default_dir, enable_full_payloads=enable_full_payloads,
                   content_summary=content_summary, on_invalid=on_invalid, ignore_unknown_keys=ignore_unknown_keys,
                   workers=workers)
    return AtofSink.from_config(config, ctx, destinations=destinations)



def build_atof_plugin(config: Mapping[str, Any], *, base_dir: Path | None = None, enable_full_payloads: bool = False,
                      content_summary: str = "preview", on_invalid: str = "raise", ignore_unknown_keys: bool = False,
                      default_dir: Path | None = None,
                      destinations: Mapping[int, Destination] | None = None, toolsets: Mapping[str, str] | None = None,
                      memory_tools: Mapping[str, str] | None = None, deferred: bool = True) -> SinkPlugin:
    """Deprecated: ``SinkPlugin.build(AtofSink, config, ctx)``, the stand-alone form of any sink (see
    :func:`build_atof_sink` for the options)."""
    ctx = SinkContext.standalone("atof", base_dir=base_dir, default_dir=default_dir, enable_full_payloads=enable_full_payloads,
                   content_summary=content_summary, on_invalid=on_invalid, ignore_unknown_keys=ignore_unknown_keys)
    return SinkPlugin.build(AtofSink, config, ctx, deferred=deferred, toolsets=toolsets, memory_tools=memory_tools,
                            **({"destinations": destinations} if destinations is not None else {}))
