"""Finding sinks: the ``hermes_pipeline.sinks`` entry-point group, the built-in sinks included.

A section name of the ``observability`` component's config is a sink name. :func:`sink_names` lists
the installed ones without importing anything; :func:`load_sink` imports only the one asked for.
A built-in name is looked up in this package's own distribution's entry points only (read once);
every other name in the whole group, so third-party sinks are found exactly as before.
An entry point names a sink class (built with its ``from_config(config, ctx)``) or a builder callable
(:func:`~hermes_pipeline.export.sink.build_sink` builds either). Errors a user can cause (a name nobody
registers, a plugin that does not import, an entry point that names neither a sink class nor a builder)
are :class:`~hermes_pipeline.export.errors.ExportConfigError` with the section as path and, for a
near-miss name, a "did you mean".
"""

from __future__ import annotations

import importlib.metadata
from functools import cache
from typing import Any, Final

from ..config.suggest import did_you_mean
from ..export.errors import ExportConfigError
from ..export.sink import entry_builder

GROUP: Final = "hermes_pipeline.sinks"
"""The entry-point group sinks register in (``name = "module:SinkClass"``, or ``"module:builder"``)."""

OWN_DISTRIBUTION: Final = "hermes_pipeline"
"""The distribution whose entry points name the built-in sinks."""

__all__ = ["GROUP", "load_sink", "sink_installed", "sink_names", "unknown_sink_message"]


def _entry_points() -> dict[str, importlib.metadata.EntryPoint]:
    found: dict[str, importlib.metadata.EntryPoint] = {}
    for ep in importlib.metadata.entry_points(group=GROUP):
        found.setdefault(ep.name, ep)  # the first distribution on sys.path wins, as for imports
    return found


@cache
def _own_entry_points() -> dict[str, importlib.metadata.EntryPoint]:
    """The built-in sinks: this package's own distribution's entry points in :data:`GROUP`, read once.

    Reading one distribution's metadata is cheap; :func:`importlib.metadata.entry_points` reads every
    installed distribution's on every call, which in a large environment (Hermes Agent brings over
    two hundred) costs milliseconds each time, paid during Hermes' start-up. Empty when the package
    runs without installed metadata.
    """
    try:
        dist = importlib.metadata.distribution(OWN_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return {}
    return {ep.name: ep for ep in dist.entry_points if ep.group == GROUP}


def _entry_point(name: str) -> importlib.metadata.EntryPoint | None:
    """The entry point of sink ``name``: a built-in from this distribution's own entry points, any other
    name from the whole group (the first distribution on ``sys.path`` wins)."""
    return _own_entry_points().get(name) or _entry_points().get(name)


def sink_installed(name: str) -> bool:
    """Whether a sink called ``name`` is installed (a built-in name reads no other distribution)."""
    return _entry_point(name) is not None


def sink_names() -> list[str]:
    """The names of the installed sinks, sorted (nothing is imported)."""
    return sorted(_entry_points())


def unknown_sink_message(name: str, known: list[str] | None = None) -> str:
    """What to say about a section naming no installed sink."""
    known = sink_names() if known is None else known
    guess = did_you_mean(name, known)
    return (f"no installed sink is called {name!r} (sinks register in the {GROUP!r} entry-point group; installed: "
            f"{', '.join(known) or 'none'})" + (f" (did you mean {guess!r}?)" if guess else ""))


def load_sink(name: str) -> Any:
    """Import and return what is registered as ``name``: a sink class or a builder, as it is, so that its
    config statement (``validate_config``, ``list_paths``, ``output_locations``) can be read from it; build
    the sink with :func:`~hermes_pipeline.export.sink.build_sink`.

    Raises:
        ExportConfigError: no sink has that name, its module does not import, or it names neither a sink
            class (with ``from_config``) nor a builder (a callable).
    """
    ep = _entry_point(name)
    if ep is None:
        raise ExportConfigError(name, unknown_sink_message(name))
    try:
        entry: Any = ep.load()
    except Exception as exc:
        raise ExportConfigError(name, f"the sink entry point {ep.value!r} failed to import: "
                                      f"{type(exc).__name__}: {exc}") from exc
    if entry_builder(entry) is None:
        raise ExportConfigError(name, f"the sink entry point {ep.value!r} names neither a sink class (with "
                                      "from_config(config, ctx)) nor a builder (callable(config, ctx))")
    return entry
