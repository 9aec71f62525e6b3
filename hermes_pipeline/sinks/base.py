"""The sink contract: what an exporter fed by the ``observability`` component's scope plugin implements.

One scope plugin (:mod:`hermes_pipeline.export.scope_hooks`) turns the hooks into scope events once,
with one set of UUIDs, parents and credential scrubbing; every sink named in the component's config
receives the same events. A sink is found by its section's name in the ``hermes_pipeline.sinks``
entry-point group (the built-in ``atof``, ``atif`` and ``opentelemetry`` included, see
:mod:`.registry`), so a third-party sink joins the same scope plugin::

    # pyproject.toml of my-sink
    [project.entry-points."hermes_pipeline.sinks"]
    my_sink = "my_sink:MySink"

    # plugins.toml
    [components.config.my_sink]
    enabled = true
    path = "/var/log/my-sink.txt"

The entry point names the **sink class**, which builds itself from the section's table and a
:class:`SinkContext` with the classmethod ``from_config(config, ctx)`` (:class:`BaseSink` gives
``cls(config, ctx)``; the built-in sinks parse and validate their table there). A plain **builder**, a
callable ``builder(config, ctx) -> Sink``, is still accepted; anything else is an
:class:`~hermes_pipeline.export.errors.ExportConfigError` naming the section (:func:`build_sink`). The
class (or builder) may carry the section's **config statement**, ``validate_config(config, vctx)``, which
``config validate`` and activation both run on the section (``vctx`` paths are relative to the section);
without one only ``enabled`` is checked. A sink receives events only when its section says
``enabled = true``. The same entry builds the sink on its own scope plugin
(:class:`~hermes_pipeline.export.standalone.SinkPlugin`) and in a worker process
(:mod:`hermes_pipeline.export.worker`).

The sink itself is one method, ``sink(event)``, called on its own background thread from its own bounded
queue (:mod:`hermes_pipeline.export.isolation`), in one total order (a scope's start before its end, a
parent's start before its children's). It should not block: enqueue and return. One that does stalls
only itself (its events are dropped and counted, ``flush`` and shutdown stop waiting for it once a call
has overrun ``SINK_CALL_DEADLINE``). A sink whose ``sink(event)`` only appends to its own bounded queue
may declare ``never_blocks = True`` and is then called on the scope plugin's thread directly (the
built-in sinks do). :class:`BaseSink` gives the other four methods their defaults.
Events are shared between sinks: never mutate them. Every string in them has already been scrubbed
of credentials (unless the operator set ``redact_credentials = false``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..config.keypath import KeyPath
from ..config.policy import ValidationContext
# the one sink shape and how it is built, stated below the sinks (the stand-alone and worker wrappers need it)
from ..export.sink import BaseSink, Sink, SinkBuilder, SinkContext, build_sink

__all__ = ["BaseSink", "SectionValidation", "Sink", "SinkBuilder", "SinkContext", "build_sink"]


class SectionValidation(ValidationContext):
    """The ``vctx`` of one sink section: the component's validation context, paths relative to the section.

    ``unknown_field`` and ``unsupported_value`` follow the pipeline's policy; ``error`` always fails
    the load; ``skip_entry`` drops one destination entry with a warning; ``warning`` changes nothing.
    """

    def __init__(self, vctx: ValidationContext, section: str, *,
                 shared: Mapping[str, Any] | None = None) -> None:  # no super().__init__: it delegates
        self._vctx = vctx
        self.section = section
        self.shared: Mapping[str, Any] = dict(shared or {})
        """The component's own top-level keys (``enable_full_payloads``, ``content_summary``, ...), read-only."""
        self.component, self.policy, self.diagnostics = vctx.component, vctx.policy, vctx.diagnostics
        self.key_prefix, self.code_prefix, self.drops = vctx.key_prefix, vctx.code_prefix, vctx.drops

    def _path(self, path: str | KeyPath) -> KeyPath:
        if isinstance(path, tuple):
            return (self.section, *path)
        from ..config.keypath import parse_path

        return (self.section, *parse_path(path)) if path else (self.section,)

    def unknown_field(self, path: str | KeyPath, expected: str | None = None) -> None:
        """A key the sink does not know (``expected``: the known ones, comma-separated)."""
        self._vctx.unknown_field(self._path(path), expected)

    def unsupported_value(self, path: str | KeyPath, message: str) -> None:
        """A known key with a wrong value; ``message`` says what was expected (never the value)."""
        self._vctx.unsupported_value(self._path(path), message)

    def error(self, path: str | KeyPath, message: str, *, code: str | None = None) -> None:
        """A problem that fails the load whatever the policy."""
        self._vctx.error(self._path(path), message, code=code)

    def skip_entry(self, path: str | KeyPath, message: str, *, code: str | None = None,
                   suggestion: str | None = None, at: str | KeyPath | None = None) -> None:
        """Drop one destination entry with a WARNING."""
        self._vctx.skip_entry(self._path(path), message, code=code, suggestion=suggestion,
                              at=self._path(at) if at is not None else None)

    def warning(self, path: str | KeyPath, message: str, *, code: str) -> None:
        """A WARNING that changes nothing."""
        self._vctx.warning(self._path(path), message, code=code)


ConfigStatement = Callable[[dict[str, Any], SectionValidation], None]
"""A section's ``validate_config(config, vctx)``."""
