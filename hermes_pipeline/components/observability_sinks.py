"""Attaching the exporters to the ``observability`` component (spec 04 §1).

One :class:`~hermes_pipeline.export.scope_hooks.ScopePlugin` makes the hooks into scope events
once; every enabled section adds one sink, built by the sink class (``from_config``) or builder its
name finds in the ``hermes_pipeline.sinks`` entry-point group (:mod:`hermes_pipeline.sinks.registry`;
the built-in ``atof``, ``atif`` and ``opentelemetry`` are found the same way), given the section's
table and one :class:`~hermes_pipeline.sinks.base.SinkContext`. Only the enabled sections' sinks are imported.
A sink that does not declare ``never_blocks`` (every third-party sink, unless it says so) is called
from its own bounded queue and thread (:mod:`hermes_pipeline.export.isolation`): one that blocks
loses only its own events, counted, and never holds up the scope plugin, the other sinks, a flush or
the process exit.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from .._deprecated import renamed_attributes
from ..engine.deadline import Deadline, run_all

logger: Final = logging.getLogger("hermes_pipeline.component.observability")

COMPONENT_KEYS: Final = frozenset({"version", "enable_full_payloads", "content_summary", "policy",
                                   "redact_credentials"})
"""The component's own top-level keys; every other top-level table is a sink's section."""


def sink_sections(config: Mapping[str, Any]) -> list[str]:
    """The names of the sink sections of an ``observability`` config (tables other than the component's keys)."""
    return [name for name, value in config.items() if name not in COMPONENT_KEYS and isinstance(value, Mapping)]


def enabled_sections(config: Mapping[str, Any]) -> list[str]:
    """The sink sections that say ``enabled = true``."""
    return [name for name in sink_sections(config) if config[name].get("enabled") is True]


@dataclass
class AttachedSinks:
    """The shared scope plugin and the sinks listening to it."""

    scope_plugin: Any
    sinks: dict[str, Any] = field(default_factory=dict)
    __getattr__ = renamed_attributes("AttachedSinks", {"projection": "scope_plugin"})

    def flush(self, timeout: float) -> bool:
        """Make what is queued into scope events, then flush every sink: all within ``timeout`` seconds in all, the
        sinks side by side (one stuck destination never takes the others' time)."""
        deadline = Deadline(timeout)
        ok = bool(self.scope_plugin.flush(deadline.remaining()))
        return run_all([sink.flush for sink in self.sinks.values()], deadline.remaining(),
                       name="hermes-export-flush") and ok

    def shutdown(self, deadline: float) -> bool:
        """Close open scopes (partial output), then shut every sink down side by side: all within
        ``deadline`` seconds in all."""
        end = Deadline(deadline)
        ok = bool(self.scope_plugin.shutdown(end.remaining()))
        groups: dict[int, list[tuple[str, Any]]] = {}
        for name, sink in self.sinks.items():  # sections sharing one worker process close one after another
            groups.setdefault(id(getattr(sink, "worker", sink)), []).append((name, sink))
        return run_all([self._shutdown_group(group) for group in groups.values()], end.remaining(),
                       name="hermes-export-shutdown") and ok

    @staticmethod
    def _shutdown_group(group: list[tuple[str, Any]]) -> Callable[[float], bool]:
        def shutdown(seconds: float) -> bool:
            deadline = Deadline(seconds)
            ok = True
            for name, sink in group:
                try:
                    ok = bool(sink.shutdown(deadline.remaining())) and ok
                except Exception as exc:  # one sink never prevents the others' shutdown
                    logger.warning("hermes_pipeline: observability: %s shutdown failed: %s", name, exc)
                    ok = False
            return ok
        return shutdown

    def stats(self) -> dict[str, Any]:
        """Counters of the scope plugin's queue and of each sink."""
        out: dict[str, Any] = {"publication": self.scope_plugin.publication_stats()}
        for name, sink in self.sinks.items():
            out[name] = sink.stats()
        return out

    def destinations(self) -> list[str]:
        """Where each sink writes (no credentials)."""
        return [f"{name}: {where}" for name, sink in self.sinks.items() for where in sink.destinations()]


def attach_sinks(config: Mapping[str, Any], *, base_dir: Path, register: Callable[[object], None],
                 default_dir: Path | None = None, builders: Mapping[str, Any] | None = None) -> AttachedSinks | None:
    """Build the enabled sinks of an ``observability`` config and register their scope plugin.

    ``base_dir`` resolves relative paths (CFG-83); ``default_dir`` is where local files go when a
    section names no ``output_directory`` (``$HERMES_HOME/telemetry`` when omitted, FMT-35).
    ``builders`` (section → sink class or builder) are used before the entry points (tests of a sink not
    installed).

    Returns ``None`` when no section is enabled (then nothing is registered and nobody listens).
    A sink that cannot be built raises; the component activation then fails as a whole (CFG-48).
    """
    enabled = enabled_sections(config)
    if not enabled:
        return None
    from ..export.scope_hooks import ScopePlugin

    policy: Mapping[str, Any] = config["policy"] if isinstance(config.get("policy"), Mapping) else {}
    limit = policy.get("max_queue_size")
    queue = limit if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0 else 10_000
    max_bytes = config.get("max_queue_bytes")  # validated by the component (observability_keys.TOP)
    queue_bytes = max_bytes if isinstance(max_bytes, int) and not isinstance(max_bytes, bool) and max_bytes > 0 \
        else None
    # Credential scrubbing of every event, for every sink, unless the operator turned it off by name.
    scope_plugin = ScopePlugin(deferred=True, max_queue_size=queue,
                               redact_credentials=config.get("redact_credentials") is not False,
                               max_value_chars=config.get("max_value_chars"), max_queue_bytes=queue_bytes)
    attached = AttachedSinks(scope_plugin)
    from ..sinks.base import SinkContext, build_sink
    from ..sinks.registry import load_sink
    from ..export.isolation import isolate
    from ..export.worker import ProcessSink, WorkerPool

    pool = WorkerPool()  # sections with worker = "process:NAME" share one child per NAME
    try:
        for name in enabled:
            ctx = SinkContext(name=name, base_dir=base_dir, default_dir=default_dir,
                              enable_full_payloads=config.get("enable_full_payloads") is True,
                              content_summary=config.get("content_summary") or "preview", workers=pool,
                              max_queue_bytes=queue_bytes)
            entry = builders.get(name) if builders is not None else None
            attached.sinks[name] = build_sink(entry or load_sink(name), config[name], ctx)
        # a sink that may block runs on its own queue and thread: it can stall only itself
        attached.sinks = isolate(attached.sinks, max_queue_size=queue, max_queue_bytes=queue_bytes)
        pool.start()
        listeners: list[Any] = []
        for sink in attached.sinks.values():  # a shared worker is fed once for all its sections
            listener = sink.worker if isinstance(sink, ProcessSink) else sink
            if not any(listener is known for known in listeners):
                listeners.append(listener)
                scope_plugin.add_listener(listener)
    except BaseException:
        attached.shutdown(1.0)
        raise
    register(scope_plugin)
    return attached
