"""The sink contract: what an exporter fed by the ``observability`` component's projection implements.

One hook projection (:mod:`hermes_pipeline.export.scopes`) turns the hooks into scope events once,
with one set of UUIDs, parents and credential scrubbing; every sink named in the component's config
receives the same events. A sink is found by its section's name in the ``hermes_pipeline.sinks``
entry-point group (the built-in ``atof``, ``atif`` and ``opentelemetry`` included, see
:mod:`.registry`), so a third-party sink joins the same projection::

    # pyproject.toml of my-sink
    [project.entry-points."hermes_pipeline.sinks"]
    my_sink = "my_sink:MySink"

    # plugins.toml
    [components.config.my_sink]
    enabled = true
    path = "/var/log/my-sink.txt"

The entry point names a **builder**: a callable ``builder(config, ctx) -> Sink`` (a sink class whose
``__init__`` takes ``(config, ctx)`` is one), given the section's table and a :class:`SinkContext`.
It may carry the section's **config statement**, ``validate_config(config, vctx)``, which ``config
validate`` and activation both run on the section (``vctx`` paths are relative to the section);
without one only ``enabled`` is checked. A sink receives events only when its section says
``enabled = true``.

The sink itself is one method, ``sink(event)``, called on its own background thread from its own bounded
queue (:mod:`hermes_pipeline.export.isolation`), in one total order (a scope's start before its end, a
parent's start before its children's). It should not block: enqueue and return. One that does stalls
only itself (its events are dropped and counted, ``flush`` and shutdown stop waiting for it once a call
has overrun ``SINK_CALL_DEADLINE``). A sink whose ``sink(event)`` only appends to its own bounded queue
may declare ``never_blocks = True`` and is then called on the projection's thread directly (the
built-in sinks do). :class:`BaseSink` gives the other four methods their defaults.
Events are shared between sinks: never mutate them. Every string in them has already been scrubbed
of credentials (unless the operator set ``redact_credentials = false``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol

from ..config.keypath import KeyPath
from ..config.policy import ValidationContext
from ..export.sink import BaseSink, Sink  # the one sink shape, stated below the sinks (stand-alone use needs it)

__all__ = ["BaseSink", "KeywordBuilder", "SectionValidation", "Sink", "SinkBuilder", "SinkContext"]


@dataclass(frozen=True)
class SinkContext:
    """What the ``observability`` component shares with every sink it builds.

    Attributes:
        name: the section (and entry-point) name, e.g. ``"atof"`` or ``"my_sink"``.
        base_dir: the directory relative paths resolve against (the working directory at activation).
        default_dir: where local files go when the section names no directory (the activating
            profile's ``$HERMES_HOME/telemetry``); ``None`` lets the sink use its own default.
        enable_full_payloads: the component's switch for full content on remote destinations.
        content_summary: ``"preview"``, ``"digest"`` or ``"off"``: how content is summarised where
            full content is not sent.
        workers: the component's pool of shared worker processes (built-in sinks' ``worker`` key).
    """

    name: str
    base_dir: Path
    default_dir: Path | None = None
    enable_full_payloads: bool = False
    content_summary: str = "preview"
    workers: Any = field(default=None, repr=False)

    def builder_options(self) -> dict[str, Any]:
        """The keyword options of the built-in sinks' ``build_*_sink`` functions (entries that fail
        their checks are skipped, the component already applied the unknown-field policy)."""
        return {"base_dir": self.base_dir, "enable_full_payloads": self.enable_full_payloads,
                "content_summary": self.content_summary, "on_invalid": "skip", "ignore_unknown_keys": True,
                "workers": self.workers}


class SinkBuilder(Protocol):
    """What the entry point names: ``builder(config, ctx) -> Sink``.

    Optionally with ``validate_config(config, vctx)``, the section's config statement (checked by
    ``config validate`` and by activation alike), where ``vctx`` is a :class:`SectionValidation`.
    """

    def __call__(self, config: Mapping[str, Any], ctx: SinkContext) -> Sink: ...


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


class KeywordBuilder:
    """A builder for the built-in sinks: their ``build_*_sink(config, **options)`` function with the options
    of :meth:`SinkContext.builder_options` (and ``default_dir`` for sinks writing local files), carrying the
    section's statement from the sink's ``config`` module: ``validate_config``, ``LIST_PATHS`` (as
    ``list_paths``, the lists that concatenate when files are layered) and ``output_locations``."""

    def __init__(self, build: Callable[..., Any], statement: ModuleType, *, local_files: bool = True) -> None:
        self._build = build
        self._local_files = local_files
        self.validate_config: Callable[[dict[str, Any], ValidationContext], None] = statement.validate_config
        self.list_paths: tuple[tuple[str, ...], ...] = tuple(statement.LIST_PATHS)
        self.output_locations: Callable[..., Any] | None = getattr(statement, "output_locations", None)

    def __call__(self, config: Mapping[str, Any], ctx: SinkContext) -> Sink:
        options = ctx.builder_options()
        if self._local_files:
            options["default_dir"] = ctx.default_dir
        sink: Sink = self._build(config, **options)
        return sink


ConfigStatement = Callable[[dict[str, Any], SectionValidation], None]
"""A section's ``validate_config(config, vctx)``."""
