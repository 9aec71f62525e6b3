"""Attaching the exporters to the ``observability`` component (spec 04 §1).

One :class:`~hermes_pipeline.export.projection.ScopePlugin` projects the hooks into scope events
once; every enabled section (``atof``, ``atif``, ``opentelemetry``) adds one listener built by its
sink module. The sinks never import each other; this module is the only place that knows all of
them, and it imports each one only when its section is enabled.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ..engine.plugins import import_object

logger: Final = logging.getLogger("hermes_pipeline.component.observability")

SINK_BUILDERS: Final[dict[str, str]] = {
    "atof": "hermes_pipeline.sinks.atof:build_atof_sink",
    "atif": "hermes_pipeline.sinks.atif:build_atif_sink",
    "opentelemetry": "hermes_pipeline.sinks.otel:build_otel_sink",
}
"""Config section → ``module:function`` building that section's scope listener."""

FILE_SECTIONS: Final = frozenset({"atof", "atif"})
"""Sections whose builders write local files and take ``default_dir`` (FMT-35)."""


@dataclass
class AttachedSinks:
    """The shared projection and the sinks listening to it."""

    projection: Any
    sinks: dict[str, Any] = field(default_factory=dict)

    def flush(self, timeout: float) -> bool:
        """Project what is queued, then flush every sink."""
        ok = bool(self.projection.flush(timeout))
        for sink in self.sinks.values():
            ok = bool(sink.flush(timeout)) and ok
        return ok

    def shutdown(self, deadline: float) -> bool:
        """Close open scopes (partial output), then shut every sink down within ``deadline``."""
        ok = bool(self.projection.shutdown(deadline))
        for name, sink in self.sinks.items():
            try:
                ok = bool(sink.shutdown(deadline)) and ok
            except Exception as exc:  # one sink never prevents the others' shutdown
                logger.warning("hermes_pipeline: observability: %s shutdown failed: %s", name, exc)
                ok = False
        return ok

    def stats(self) -> dict[str, Any]:
        """Counters of the projection queue and of each sink."""
        out: dict[str, Any] = {"publication": self.projection.publication_stats()}
        for name, sink in self.sinks.items():
            out[name] = sink.stats()
        return out

    def destinations(self) -> list[str]:
        """Where each sink writes (no credentials)."""
        return [f"{name}: {where}" for name, sink in self.sinks.items() for where in sink.destinations()]


def attach_sinks(config: Mapping[str, Any], *, base_dir: Path, register: Callable[[object], None],
                 default_dir: Path | None = None) -> AttachedSinks | None:
    """Build the enabled sinks of an ``observability`` config and register their projection.

    ``base_dir`` resolves relative paths (CFG-83); ``default_dir`` is where local files go when a
    section names no ``output_directory`` (``$HERMES_HOME/telemetry`` when omitted, FMT-35).

    Returns ``None`` when no section is enabled (then nothing is registered and nobody listens).
    A sink that cannot be built raises; the component activation then fails as a whole (CFG-48).
    """
    enabled = [name for name in SINK_BUILDERS
               if isinstance(config.get(name), Mapping) and config[name].get("enabled") is True]
    if not enabled:
        return None
    from ..export.projection import ScopePlugin

    policy: Mapping[str, Any] = config["policy"] if isinstance(config.get("policy"), Mapping) else {}
    limit = policy.get("max_queue_size")
    queue = limit if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0 else 10_000
    # Credential scrubbing of every event, for every sink, unless the operator turned it off by name.
    projection = ScopePlugin(deferred=True, max_queue_size=queue,
                             redact_credentials=config.get("redact_credentials") is not False)
    attached = AttachedSinks(projection)
    options = {
        "base_dir": base_dir,
        "enable_full_payloads": config.get("enable_full_payloads") is True,
        "content_summary": config.get("content_summary") or "preview",
        "on_invalid": "skip",
        "ignore_unknown_keys": True,
    }
    from ..sinks.worker_process import ProcessSink, WorkerPool

    pool = WorkerPool()  # sections with worker = "process:NAME" share one child per NAME
    try:
        for name in enabled:
            builder = import_object(SINK_BUILDERS[name])
            extra = {"default_dir": default_dir} if name in FILE_SECTIONS else {}
            attached.sinks[name] = builder(config[name], workers=pool, **options, **extra)  # type: ignore[operator]
        pool.start()
        listeners: list[Any] = []
        for sink in attached.sinks.values():  # a shared worker is fed once for all its sections
            listener = sink.worker if isinstance(sink, ProcessSink) else sink
            if not any(listener is known for known in listeners):
                listeners.append(listener)
                projection.add_listener(listener)
    except BaseException:
        attached.shutdown(1.0)
        raise
    register(projection)
    return attached
