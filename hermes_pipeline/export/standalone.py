"""One exporter on its own hooks object: the stand-alone plugin form of any sink.

The ``observability`` component shares one :class:`~.scope_hooks.ScopePlugin` between all its
sinks. For using a single exporter without the component (tests, embedding, benchmarks),
:class:`SinkPlugin` wires the hooks object to one :class:`~.sink.Sink` (the one sink shape), with one
``flush`` / ``shutdown`` / ``stats`` over both. It takes any sink: :meth:`SinkPlugin.build` builds one
from its entry (a sink class, through its ``from_config``, or a builder) and section table, exactly as
the component does::

    plugin = SinkPlugin.build(AtofSink, {"enabled": True, "sinks": [{"type": "file"}]},
                              SinkContext(name="atof", base_dir=Path.cwd(), on_invalid="raise",
                                          ignore_unknown_keys=False))
    engine.add_plugin(plugin, name="atof")
"""

from __future__ import annotations

import atexit
import functools
import time
import weakref
from collections.abc import Mapping
from typing import Any, Final

from ..engine.deadline import exit_deadline
from .scope_hooks import ScopePlugin
from .sink import Sink, SinkContext, build_sink

DEFAULT_QUEUE_SIZE: Final = 10_000
"""Publication queue of a sink that states no ``max_queue_size`` of its own (hook records, FMT-80)."""


def _atexit_shutdown(ref: weakref.ReferenceType[SinkPlugin]) -> None:
    plugin = ref()
    if plugin is not None:  # every atexit shutdown of the process shares one exit deadline
        plugin.shutdown(min(2.0, exit_deadline().remaining()))


class SinkPlugin(ScopePlugin):
    """The hooks object wired to one sink (a hookimpl plugin for ``engine.add_plugin``; the one subclass of
    :class:`~.scope_hooks.ScopePlugin`, which composes the tracker).

    Any :class:`~.sink.Sink` fits; a sink's ``max_queue_size`` (else :data:`DEFAULT_QUEUE_SIZE`) sizes the
    publication queue, its ``counters()``, when it has them, join :meth:`counters`, and its ``enabled``
    (else ``True``) is the plugin's unless ``enabled`` is given.

    By default the hooks are deferred: hook callbacks only enqueue on the publication queue,
    sized like the sink's queue (FMT-80). ``shutdown(deadline)`` runs what is queued, closes
    every open scope with ``hermes.close_reason = "shutdown"`` (partial output), then drains and
    closes the sink (FMT-84/FMT-85). It is also registered with ``atexit`` as a safety net; hosts
    should call it. A disabled sink gets no listener and no publication thread.
    """

    def __init__(self, sink: Sink, *, enabled: bool | None = None, deferred: bool = True,
                 toolsets: Mapping[str, str] | None = None, memory_tools: Mapping[str, str] | None = None) -> None:
        self.sink = sink
        if enabled is None:
            enabled = bool(getattr(sink, "enabled", True))
        self.enabled = enabled
        super().__init__((sink,) if enabled else (), deferred=deferred and enabled,
                         max_queue_size=getattr(sink, "max_queue_size", DEFAULT_QUEUE_SIZE), toolsets=toolsets,
                         memory_tools=memory_tools)
        self._shut = False
        self._atexit = functools.partial(_atexit_shutdown, weakref.ref(self))
        if enabled:
            atexit.register(self._atexit)

    @classmethod
    def build(cls, entry: Any, config: Mapping[str, Any], ctx: SinkContext, *, deferred: bool = True,
              toolsets: Mapping[str, str] | None = None, memory_tools: Mapping[str, str] | None = None,
              **overrides: Any) -> SinkPlugin:
        """Any sink on a scope plugin of its own: built from ``entry`` (a sink class, through its ``from_config``, or a
        builder) with the section's ``config`` and ``ctx``, as the ``observability`` component builds it (a
        ``worker = "process"`` section runs in a worker process here too).

        ``overrides`` go to the class's ``from_config`` (or the builder) as keywords (e.g. the built-in sinks' ``destinations``,
        which replace a destination in tests); ``toolsets`` (tool → toolset) and ``memory_tools`` feed
        ``hermes.toolset``, the ``remote`` flag and the memory span kinds; ``deferred=False`` projects on the
        hook caller's thread. When the sink is disabled, :attr:`enabled` is ``False`` and nothing is exported:
        the caller should not register it.

        Raises:
            ExportConfigError: naming the offending key path (or the section, for an entry that is neither).
        """
        sink = build_sink(entry, config, ctx, **overrides)
        return cls(sink, deferred=deferred, toolsets=toolsets, memory_tools=memory_tools)

    def flush(self, timeout: float = 5.0) -> bool:
        """Barrier: ``True`` when every hook received so far became scope events and was written (FMT-84)."""
        end = time.monotonic() + max(timeout, 0.0)
        projected = super().flush(timeout)
        return self.sink.flush(max(end - time.monotonic(), 0.0)) and projected

    def shutdown(self, deadline: float = 5.0) -> bool:
        """Run what is queued, close open scopes, drain and close the sink within ``deadline`` (FMT-85)."""
        if self._shut:
            return True
        self._shut = True
        atexit.unregister(self._atexit)
        end = time.monotonic() + max(deadline, 0.0)
        ok = super().shutdown(deadline)
        self.remove_listener(self.sink)
        return self.sink.shutdown(max(end - time.monotonic(), 0.0)) and ok

    def stats(self) -> dict[str, Any]:
        """The sink's counters plus ``scopes`` (tracker) and ``publication`` (queue) counters."""
        return {**dict(self.sink.stats()), "scopes": super().stats(), "publication": self.publication_stats()}

    def counters(self) -> dict[str, int]:
        """FMT-81 counters: ``pipeline.events_dropped`` plus the sink's own."""
        counters = getattr(self.sink, "counters", None)
        own: dict[str, int] = dict(counters()) if callable(counters) else {}
        return {"pipeline.events_dropped": self.publication_stats()["pipeline.events_dropped"], **own}

    def destinations(self) -> list[str]:
        """Where the sink writes (no credentials)."""
        return self.sink.destinations()
