"""The OpenTelemetry trace exporter: scope events → OTLP/HTTP spans (spec 04 §4, §5).

:class:`OtelSink` is the ``opentelemetry`` entry point of the ``hermes_pipeline.sinks`` group: it builds
itself from the section's table with :meth:`OtelSink.from_config` (traces, in a worker process with
``worker = "process"``, plus the ``metrics`` table's sink in this process) and carries the section's
statement from :mod:`.config`. Used through the generic wrappers, as for ATOF:

- sharing one scope plugin with the other exporters (what the pipeline does, so ATOF, ATIF
  and OTLP agree on UUIDs and the hook caller pays for one scope plugin only):
  ``sink = OtelSink.from_config(config, ctx)``; ``scope_plugin.add_listener(sink)``;
- stand-alone (tests, simple hosts): ``plugin = SinkPlugin.build(OtelSink, config, ctx)``;
  ``engine.add_plugin(plugin, name="otel")``.

:func:`build_otel_sink` builds the trace sink alone with keyword options; ``build_otel_plugin`` and
``OtelPlugin`` are deprecated names of the stand-alone form.

Data path (FMT-79, FMT-81)::

    listener (publication thread): submit the ScopeEvent to the event writer   -- O(1), no I/O
        └─ event writer thread: SpanBuilder keeps open scopes, builds span records at scope end,
           applies sampling and hands each span to its endpoint's span queue
              └─ one span writer per endpoint (bounded ``max_queue_size``, batches of
                 ``max_export_batch_size``, at most ``scheduled_delay_millis`` of lingering):
                 the OTLP/HTTP exporter over an ObservedSession (retries 429/5xx/connection errors
                 with backoff inside ``timeout_millis``)

A full queue drops and counts (``otel.spans_dropped[i]``); a failed request is counted
(``otel.export_failures[i]``) and a batch that still fails is dropped and counted, with one
warning per endpoint and failure kind. ``flush(timeout)`` and ``shutdown(deadline)`` honour their
deadlines whatever the collector does; nothing ever raises into the agent.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar, Final

from ...contract.versions import PACKAGE_VERSION as __version__
from ...engine import trace_parent
from ...export.errors import ExportConfigError
from ...export.events import END, SCOPE, START, ScopeEvent, submit_paired
from ...export.sink import Sink, SinkContext
from ...export.sizes import event_bytes
from ...export.standalone import SinkPlugin
from ...export.worker import ProcessSink, WorkerPool, process_sink, split_worker
from ...export.writer import BoundedWriter, warn_nonzero_counters
from . import config as statement
from .config import OtelConfig, TraceEndpoint, parse_otel_config, warn_global_headers
from .env import read_otlp_env
from .exporter import ExporterFactory, ObservedSession, SpanExportDestination, default_exporter, quiet_sdk_logs
from .spans import LLM_CATEGORY, Route, SpanBuilder
from .state import Options

__all__ = ["CAPTURE_ENV", "ExportConfigError", "OtelPlugin", "OtelSink", "build_otel_plugin", "build_otel_sink",
           "content_gate_open", "profile_environment"]

logger: Final = logging.getLogger("hermes_pipeline.sinks.otel")

CAPTURE_ENV: Final = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
_CAPTURE_ON: Final = frozenset({"true", "span_only", "span_and_event"})
SUMMARY_MODES: Final = ("preview", "digest", "off")


def content_gate_open(enable_full_payloads: bool) -> bool:
    """The OTLP content gate (FMT-30): ``enable_full_payloads`` or the GenAI capture variable set to
    ``true`` / ``SPAN_ONLY`` / ``SPAN_AND_EVENT`` (case-insensitive), read now (at activation)."""
    return bool(enable_full_payloads) or os.environ.get(CAPTURE_ENV, "").strip().lower() in _CAPTURE_ON


class _EndpointRoute:
    """A trace endpoint's span writer, exporter destination and the builder's view of it."""

    __slots__ = ("destination", "endpoint", "route", "writer")

    def __init__(self, endpoint: TraceEndpoint, destination: SpanExportDestination, writer: BoundedWriter,
                 route: Route) -> None:
        self.endpoint = endpoint
        self.destination = destination
        self.writer = writer
        self.route = route


def _close_all(writers: list[BoundedWriter], deadline: float) -> bool:
    """Close writers concurrently so that one stuck endpoint cannot eat the others' time."""
    if len(writers) == 1:
        return writers[0].close(deadline)
    results: list[bool] = []
    threads = [threading.Thread(target=lambda w=w: results.append(w.close(deadline)), daemon=True,
                                name="hermes-otel-close") for w in writers]
    end = time.monotonic() + max(deadline, 0.0)
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(max(end - time.monotonic(), 0.0) + 0.05)
    return len(results) == len(writers) and all(results)


class OtelSink:
    """The OTel scope listener (see the module docstring). Call it with a :class:`ScopeEvent`.

    Args:
        config: the validated ``opentelemetry`` table.
        options: content gate, summary mode, sampling rate, agent version.
        exporter_factory: ``factory(endpoint, session) -> SpanExporter``; the default is the real
            OTLP/HTTP protobuf exporter (:func:`~.exporter.default_exporter`).
    """

    never_blocks: ClassVar[bool] = True
    """``__call__`` only queues on this sink's own bounded writers (or counts in memory): it is called on
    the publication thread directly (:mod:`hermes_pipeline.export.isolation`)."""

    # the section's statement, from .config: read by ``config validate`` and the layer merge
    validate_config: Final = staticmethod(statement.validate_config)
    list_paths: Final = statement.LIST_PATHS
    """Lists that concatenate (higher layer first) when pipeline files are layered."""
    clearable_paths: Final = statement.CLEARABLE_PATHS
    """Of those, the lists an explicitly empty higher-layer value clears."""

    @classmethod
    def from_config(cls, config: Mapping[str, Any], ctx: SinkContext, *,
                    exporter_factory: ExporterFactory | None = None) -> Sink:
        """The entry point's builder: the section's trace sink (:meth:`traces_from_config`), with the ``metrics``
        table's sink beside it when that table is enabled (the metrics SDK is imported only then). The metrics
        sink stays in this process when the traces run in a worker process."""
        traces: Sink = cls.traces_from_config(config, ctx, exporter_factory=exporter_factory)
        if _metrics_enabled(config):
            from .metrics_sink import with_metrics

            return with_metrics(traces, config)  # type: ignore[no-any-return]
        return traces

    @classmethod
    def traces_from_config(cls, config: Mapping[str, Any], ctx: SinkContext, *,
                           exporter_factory: ExporterFactory | None = None) -> OtelSink | ProcessSink:
        """Validate the ``opentelemetry`` table and return a started :class:`OtelSink`, or with ``worker =
        "process"`` a :class:`~hermes_pipeline.export.worker.ProcessSink` forwarding to one in a worker process
        (not with ``exporter_factory``, which cannot cross processes; the child gets the table without its
        ``metrics``, which stay here).

        ``ctx`` gives ``enable_full_payloads`` / ``content_summary`` (FMT-3; the gate also opens with
        ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``, FMT-30), how invalid endpoint entries are handled
        (FMT-73), the environment (``development``: default sampling 1.0, ``production``: 0.1, BOOK-46; the
        profile's when the context does not say), ``gen_ai.agent.version`` and the pool of shared workers.
        ``exporter_factory``: ``factory(endpoint, session) -> SpanExporter`` (tests, custom transports).

        Raises:
            ExportConfigError: naming the offending key path.
        """
        if ctx.content_summary not in SUMMARY_MODES:
            raise ExportConfigError("content_summary", "expected 'preview', 'digest' or 'off'")
        environment = ctx.environment or profile_environment(ctx)
        worker, config = split_worker(config, ctx.name)
        parsed = parse_otel_config(config, on_invalid=ctx.on_invalid, ignore_unknown_keys=ctx.ignore_unknown_keys,
                                   environment=environment)
        if worker != "thread" and parsed.enabled and exporter_factory is None:
            capacity = max((e.max_queue_size for e in parsed.endpoints), default=10_000)
            traces = {key: value for key, value in config.items() if key != "metrics"}
            return process_sink(worker, cls, traces, replace(ctx, environment=environment), max_queue_size=capacity)
        options = Options(gate_open=content_gate_open(ctx.enable_full_payloads), summary_mode=ctx.content_summary,
                          sampling_rate=parsed.sampling_rate, agent_version=ctx.agent_version)
        return cls(parsed, options, exporter_factory=exporter_factory, max_queue_bytes=ctx.max_queue_bytes).start()

    def __init__(self, config: OtelConfig, options: Options, *, exporter_factory: ExporterFactory | None = None,
                 max_queue_bytes: int | None = None) -> None:
        self.config = config
        self.options = options
        self.skipped = list(config.skipped)
        self._routes: list[_EndpointRoute] = []
        factory = exporter_factory or default_exporter
        for endpoint in config.endpoints if config.enabled else ():
            session = ObservedSession(endpoint.headers)
            destination = SpanExportDestination(factory(endpoint, session), session, endpoint.label)
            writer = BoundedWriter(destination, name=endpoint.label, max_queue_size=endpoint.max_queue_size,
                                   max_batch_size=endpoint.max_export_batch_size, max_attempts=1,
                                   linger=endpoint.scheduled_delay_millis / 1000)
            self._routes.append(_EndpointRoute(endpoint, destination, writer,
                                               Route(endpoint, writer.submit, __version__)))
        self.builder = SpanBuilder([r.route for r in self._routes], options,
                                   always_sample_errors=config.always_sample_errors,
                                   parent_based=config.parent_based, ids=config.ids)
        self._context_on = False
        capacity = max(10_000, 2 * max((e.max_queue_size for e in config.endpoints), default=0))
        # The scope events waiting for the span builder: bounded by count, and in estimated bytes too when the
        # component's (or the profile's) max_queue_bytes is set, as the ATOF and ATIF writers' queues are
        self._events = BoundedWriter(self.builder, name="opentelemetry.spans", max_queue_size=capacity,
                                     max_attempts=1, max_queue_bytes=max_queue_bytes,
                                     size=event_bytes if max_queue_bytes is not None else None)
        self._dropped_starts: set[int] = set()
        self._lost_starts = 0
        """Spans lost at the event queue: a start dropped there (its end is dropped with it), or the end of an LLM
        call (built whole at its end) dropped there (written on the publication thread only)."""
        self._closed = False
        if self._routes:
            quiet_sdk_logs()

    @property
    def enabled(self) -> bool:
        """Whether at least one trace endpoint is active."""
        return bool(self._routes)

    @property
    def max_queue_size(self) -> int:
        """The largest endpoint ``max_queue_size`` (the publication queue's share, FMT-80)."""
        return max((r.endpoint.max_queue_size for r in self._routes), default=10_000)

    def start(self) -> OtelSink:
        """Start the worker threads."""
        if self._routes:
            for route in self._routes:
                route.writer.start()
            self._events.start()
            if not self._context_on:  # turns now capture the application's active span (FMT-56b)
                self._context_on = True
                trace_parent.enable()
                trace_parent.set_propagation(self.config.propagate_traceparent)
        return self

    def __call__(self, event: ScopeEvent) -> None:
        """The listener: enqueue only (FMT-79); a dropped start drops its end too (FMT-80).

        An LLM call's start is not queued: its span is built whole from the closed scope its end brings
        (``end.start``). That end stands alone: a full queue drops it like any event, counted as a lost span.
        """
        if not self._routes:
            return
        if event.category == LLM_CATEGORY and event.kind == SCOPE:
            if event.phase == END and not self._events.submit(event):
                self._lost_starts += 1
            return
        # an accepted start always gets its end, or its span would stay open (and in memory) forever
        if not submit_paired(self._events, event, self._dropped_starts) and event.phase == START:
            self._lost_starts += 1

    def take_many(self, events: list[ScopeEvent]) -> None:
        """The events of one publication batch, as one call per event would: one hand-over when they all fit.

        The LLM calls' starts are left out as :meth:`__call__` leaves them out. When no start was dropped and
        the queue has room for every other event, none of them could be refused, forced or dropped as the end
        of a dropped start, so one hand-over is the outcome of the calls; otherwise each takes its call.
        """
        if not self._routes:
            return
        kept = [event for event in events
                if event.category != LLM_CATEGORY or event.kind != SCOPE or event.phase == END]
        if not kept or (not self._dropped_starts and self._events.submit_many(kept)):
            return
        for event in kept:
            self(event)

    def flush(self, timeout: float = 5.0) -> bool:
        """Barrier (FMT-84): every event received before the call is built and its spans exported, or
        ``False`` when ``timeout`` seconds pass first. Never raises."""
        end = time.monotonic() + max(timeout, 0.0)
        try:
            ok = self._events.flush(timeout) if self._routes else True
            for route in self._routes:
                ok = route.writer.flush(max(end - time.monotonic(), 0.0)) and ok
            return ok
        except Exception:
            return False

    def shutdown(self, deadline: float = 5.0) -> bool:
        """Build what is queued, export within ``deadline`` seconds, shut the exporters down (FMT-85).

        Spans of scopes still open (nobody closed them) and spans still queued at the deadline are
        dropped and counted. Non-zero counters are logged once (names and counts only). Idempotent.
        """
        if self._closed:
            return True
        self._closed = True
        if self._context_on:
            self._context_on = False
            trace_parent.disable()
        end = time.monotonic() + max(deadline, 0.0)
        ok = True
        try:
            if self._routes:
                ok = self._events.close(deadline)
                self.builder.abandon_open()
                ok = _close_all([r.writer for r in self._routes], max(end - time.monotonic(), 0.0)) and ok
        except Exception:
            ok = False
        for route in self._routes:
            route.destination.shutdown()
        warn_nonzero_counters(logger, "opentelemetry", self.counters())
        return ok

    # ------------------------------------------------------------------ reporting

    def _dropped(self, route: _EndpointRoute, stats: Mapping[str, int]) -> int:
        return (stats["dropped_queue_full"] + stats["dropped_after_errors"] + stats["dropped_at_close"]
                + stats["dropped_closed"] + route.route.lost + self.builder.lost_shared + self._lost_starts)

    def counters(self) -> dict[str, int]:
        """FMT-81 diagnostics counters: ``otel.spans_dropped[i]``, ``otel.export_failures[i]``,
        ``otel.marks_orphaned`` and any ``otel.metadata_promotion_value_unsupported.<key>``."""
        out: dict[str, int] = {}
        for route in self._routes:
            index = route.endpoint.index
            out[f"otel.spans_dropped[{index}]"] = self._dropped(route, route.writer.stats())
            out[f"otel.export_failures[{index}]"] = route.destination.export_failures
        out["otel.marks_orphaned"] = self.builder.counts["marks_orphaned"]
        out.update(self.builder.problems)
        return out

    def stats(self) -> dict[str, Any]:
        """``exported`` / ``dropped`` / ``failed`` totals (spans, spans, failed requests), then per endpoint
        the span-writer counters, and the builder's counters (``sampled_out``, ``marks_orphaned``, ...)."""
        endpoints = []
        for route in self._routes:
            stats = route.writer.stats()
            endpoints.append({"label": route.endpoint.label, "exported": stats["written"],
                              "dropped": self._dropped(route, stats),
                              "failed": route.destination.export_failures,
                              "requests": route.destination.session.requests_sent
                              if route.destination.session is not None else 0, **stats})
        return {"exported": sum(e["exported"] for e in endpoints), "dropped": sum(e["dropped"] for e in endpoints),
                "failed": sum(e["failed"] for e in endpoints), "endpoints": endpoints,
                "builder": dict(self.builder.counts), "events": self._events.stats(),
                "skipped": [path for path, _ in self.skipped]}

    def destinations(self) -> list[str]:
        """Where spans go, for humans: ``opentelemetry.endpoints[0]: gen_ai → http://host:4318/v1/traces``
        (no userinfo, query or credentials)."""
        return [f"{r.endpoint.label}: {r.endpoint.describe()}" for r in self._routes]


OtelPlugin: Final = SinkPlugin
"""Deprecated name of :class:`~hermes_pipeline.export.standalone.SinkPlugin` (the stand-alone form of any sink)."""


def build_otel_sink(config: Mapping[str, Any], *, base_dir: Path | None = None, enable_full_payloads: bool = False,
                    content_summary: str = "preview", on_invalid: str = "raise", ignore_unknown_keys: bool = False,
                    exporter_factory: ExporterFactory | None = None, environment: str = "development",
                    agent_version: str | None = None, workers: WorkerPool | None = None,
                    max_queue_bytes: int | None = None) -> OtelSink | ProcessSink:
    """:meth:`OtelSink.traces_from_config` with keyword options (stand-alone use: invalid entries raise by
    default; ``base_dir`` is accepted for symmetry with the other sinks, no OTLP key is a path)."""
    ctx = SinkContext.standalone("opentelemetry", base_dir=base_dir, enable_full_payloads=enable_full_payloads, content_summary=content_summary,
                   on_invalid=on_invalid, ignore_unknown_keys=ignore_unknown_keys, environment=environment,
                   agent_version=agent_version, workers=workers, max_queue_bytes=max_queue_bytes)
    return OtelSink.traces_from_config(config, ctx, exporter_factory=exporter_factory)



def build_otel_plugin(config: Mapping[str, Any], *, base_dir: Path | None = None, enable_full_payloads: bool = False,
                      content_summary: str = "preview", on_invalid: str = "raise", ignore_unknown_keys: bool = False,
                      exporter_factory: ExporterFactory | None = None, environment: str = "development",
                      agent_version: str | None = None, toolsets: Mapping[str, str] | None = None,
                      memory_tools: Mapping[str, str] | None = None, deferred: bool = True) -> SinkPlugin:
    """Deprecated: ``SinkPlugin.build(OtelSink, config, ctx)``, the stand-alone form of any sink (see
    :func:`build_otel_sink` for the options; the trace sink alone). Logs the FMT-72 warning when
    ``OTEL_EXPORTER_OTLP_*HEADERS`` are set (once per process; the component warns at activation instead)."""
    sink = build_otel_sink(config, base_dir=base_dir, enable_full_payloads=enable_full_payloads,
                           content_summary=content_summary, on_invalid=on_invalid,
                           ignore_unknown_keys=ignore_unknown_keys, exporter_factory=exporter_factory,
                           environment=environment, agent_version=agent_version)
    if sink.enabled:  # FMT-72: header variables not used by an endpoint are warned about (the component does
        # this at activation); the endpoint taken from the environment uses its own header variables
        from_env = isinstance(sink, OtelSink) and any(e.source for e in sink.config.endpoints)
        used = read_otlp_env().header_variable if from_env else None
        warn_global_headers((used,) if used else ())
    return SinkPlugin(sink, deferred=deferred, toolsets=toolsets, memory_tools=memory_tools)


def _metrics_enabled(config: Mapping[str, Any]) -> bool:
    """Whether ``with_metrics`` would add the metrics sink (its own test, without importing it)."""
    table = config.get("metrics")
    return isinstance(table, Mapping) and table.get("enabled") is True and config.get("enabled") is True


def profile_environment(ctx: SinkContext) -> str:
    """The activating profile's ``observability.environment`` (its ``telemetry`` directory is ``ctx.default_dir``):
    the default ``sampling_rate`` of trace endpoints is 1.0 in ``development`` and 0.1 in ``production`` (BOOK-46)."""
    if ctx.default_dir is None:
        return "development"
    from ...config.observability_settings import read_observability

    return read_observability(Path(ctx.default_dir).parent).environment
