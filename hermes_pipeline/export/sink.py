"""The one sink shape: :class:`Sink` (a scope listener with ``flush``, ``shutdown``, ``stats`` and
``destinations``), :class:`BaseSink`, its defaults, and how a sink is built from its section.

A sink's entry point names its **class**, which builds itself from its section with the classmethod
``from_config(config, ctx)`` (:class:`BaseSink` gives ``cls(config, ctx)``; the built-in sinks parse and
validate the table there). A plain **builder**, a callable ``builder(config, ctx) -> Sink``, is accepted
too. :func:`build_sink` is the one place that tells the two apart; the ``observability`` component, the
stand-alone plugin (:mod:`.standalone`) and the worker process (:mod:`.worker`) all build through it,
so a sink is built the same way wherever it runs.

Stated here, below the sinks, because those generic wrappers take any sink. The sink contract as a whole
(the entry-point group, the config statement) is :mod:`hermes_pipeline.sinks.base`, which names these
as its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from .errors import ExportConfigError
from .events import ScopeEvent

__all__ = ["BaseSink", "Sink", "SinkBuilder", "SinkContext", "build_sink", "entry_builder"]


@dataclass(frozen=True)
class SinkContext:
    """What the ``observability`` component shares with every sink it builds (``from_config(config, ctx)``).

    Attributes:
        name: the section (and entry-point) name, e.g. ``"atof"`` or ``"my_sink"``: error paths start with it.
        base_dir: the directory relative paths resolve against (the working directory at activation).
        default_dir: where local files go when the section names no directory (the activating
            profile's ``$HERMES_HOME/telemetry``); ``None`` lets the sink use its own default.
        enable_full_payloads: the component's switch for full content on remote destinations.
        content_summary: ``"preview"``, ``"digest"`` or ``"off"``: how content is summarised where
            full content is not sent.
        workers: the component's pool of shared worker processes (built-in sinks' ``worker`` key);
            never sent to a worker process.
        on_invalid: ``"skip"`` (the component: an invalid destination entry is skipped with a warning,
            FMT-73) or ``"raise"`` (stand-alone use: it is an error).
        ignore_unknown_keys: the caller already applied its unknown-field policy (the component does).
        environment: the activating profile's ``observability.environment`` (``development`` or
            ``production``), when the caller knows it; ``None``: the sink reads it from the profile
            of ``default_dir`` if it needs it.
        agent_version: the agent's version, when the host knows it.
        max_queue_bytes: the byte bound the component's ``max_queue_bytes`` sets on each sink's writer queue
            (``None``, when it is not configured: the writer queue is bounded by its event count only; the
            publication queue before it has the default byte bound. Estimating each event's bytes costs the
            publication thread a few percent of its CPU on the tool-call workload, measured, for a bound that
            only a sink stalled with kilobyte events ever reaches: an operator who wants it sets it).
    """

    name: str
    base_dir: Path
    default_dir: Path | None = None
    enable_full_payloads: bool = False
    content_summary: str = "preview"
    workers: Any = field(default=None, repr=False, compare=False)
    on_invalid: str = "skip"
    ignore_unknown_keys: bool = True
    environment: str | None = None
    agent_version: str | None = None
    max_queue_bytes: int | None = None

    @classmethod
    def standalone(cls, name: str, *, base_dir: Path | None = None, **options: Any) -> SinkContext:
        """The context of a sink used without the component (the deprecated ``build_*_sink`` keyword
        builders): ``base_dir`` defaults to the working directory, invalid entries raise unless told."""
        options.setdefault("on_invalid", "raise")
        options.setdefault("ignore_unknown_keys", False)
        return cls(name=name, base_dir=base_dir if base_dir is not None else Path.cwd(), **options)

    def builder_options(self) -> dict[str, Any]:
        """The keyword options of the built-in sinks' ``build_*_sink`` functions."""
        return {"base_dir": self.base_dir, "enable_full_payloads": self.enable_full_payloads,
                "content_summary": self.content_summary, "on_invalid": self.on_invalid,
                "ignore_unknown_keys": self.ignore_unknown_keys, "workers": self.workers}


class SinkBuilder(Protocol):
    """A builder: ``builder(config, ctx) -> Sink`` (what ``from_config`` is on a sink class).

    Optionally with ``validate_config(config, vctx)``, the section's config statement (checked by
    ``config validate`` and by activation alike).
    """

    def __call__(self, config: Mapping[str, Any], ctx: SinkContext) -> Sink: ...


def entry_builder(entry: Any) -> Callable[..., Any] | None:
    """The callable that builds a sink from what an entry point names: a sink class's (or any object's)
    ``from_config``, else the object itself when it is a builder (callable), else ``None``."""
    from_config = getattr(entry, "from_config", None)
    if callable(from_config):
        return from_config  # type: ignore[no-any-return]
    return entry if callable(entry) else None


def build_sink(entry: Any, config: Mapping[str, Any], ctx: SinkContext, **overrides: Any) -> Sink:
    """Build the sink of ``ctx.name``'s section from ``entry`` (a sink class or a builder); ``overrides`` are
    keywords for it (e.g. the built-in sinks' ``destinations`` in tests; never given by the component).

    Raises:
        ExportConfigError: ``entry`` is neither (path: the section), or the sink refused its table.
    """
    build = entry_builder(entry)
    if build is None:
        raise ExportConfigError(ctx.name, f"the sink's entry is a {type(entry).__name__} object, neither a "
                                          "sink class (with from_config(config, ctx)) nor a builder "
                                          "(callable(config, ctx))")
    sink: Sink = build(config, ctx, **overrides)
    return sink


@runtime_checkable
class Sink(Protocol):
    """A consumer of a scope plugin's scope events (see the module text)."""

    def __call__(self, event: ScopeEvent) -> None:
        """Take one event (start, end or mark); called on one thread at a time, never concurrently."""

    def flush(self, timeout: float) -> bool:
        """Deliver what is queued within ``timeout`` seconds; ``True`` when everything was."""

    def shutdown(self, deadline: float) -> bool:
        """Deliver what is queued and release every resource within ``deadline`` seconds."""

    def stats(self) -> Mapping[str, Any]:
        """Counters for ``component.stats()`` (by convention ``*dropped*`` keys count losses)."""

    def destinations(self) -> list[str]:
        """Where the sink writes, for people (never a credential)."""

    # Optional: ``take_many(events: list[ScopeEvent]) -> None``, the events of one publication batch in
    # order, with the same effect as calling the sink with each (the scope tracker then hands a batch over
    # in one call; ``ScopeTracker.collect``). Not part of the protocol: a sink without it gets one call
    # per event.


class BaseSink:
    """A sink with nothing to flush or close: subclasses implement :meth:`__call__` (and override the rest)."""

    @classmethod
    def from_config(cls, config: Mapping[str, Any], ctx: SinkContext) -> Sink:
        """The entry point's builder: ``cls(config, ctx)``. A sink whose ``__init__`` takes something else
        (parsed settings, a started writer) overrides it to parse and validate its table here."""
        sink: Sink = cls(config, ctx)  # type: ignore[call-arg]
        return sink

    def __call__(self, event: ScopeEvent) -> None:
        raise NotImplementedError

    def flush(self, timeout: float) -> bool:
        """Nothing queued: ``True``."""
        return True

    def shutdown(self, deadline: float) -> bool:
        """Nothing to release: :meth:`flush`."""
        return self.flush(deadline)

    def stats(self) -> Mapping[str, Any]:
        """No counters."""
        return {}

    def destinations(self) -> list[str]:
        """Nowhere in particular."""
        return []
