"""Finding sinks: the ``hermes_pipeline.sinks`` entry-point group, the built-in sinks included.

A section name of the ``observability`` component's config is a sink name. :func:`sink_names` lists
the installed ones without importing anything; :func:`load_sink` imports only the one asked for.
Errors a user can cause (a name nobody registers, a plugin that does not import, an entry point that
names something that is not a builder) are :class:`~hermes_pipeline.export.errors.ExportConfigError`
with the section as path and, for a near-miss name, a "did you mean".
"""

from __future__ import annotations

import importlib.metadata
from typing import Any, Final, cast

from ..config.suggest import did_you_mean
from ..export.errors import ExportConfigError
from .base import SinkBuilder

GROUP: Final = "hermes_pipeline.sinks"
"""The entry-point group sinks register in (``name = "module:builder"``)."""

__all__ = ["GROUP", "load_sink", "sink_names", "unknown_sink_message"]


def _entry_points() -> dict[str, importlib.metadata.EntryPoint]:
    found: dict[str, importlib.metadata.EntryPoint] = {}
    for ep in importlib.metadata.entry_points(group=GROUP):
        found.setdefault(ep.name, ep)  # the first distribution on sys.path wins, as for imports
    return found


def sink_names() -> list[str]:
    """The names of the installed sinks, sorted (nothing is imported)."""
    return sorted(_entry_points())


def unknown_sink_message(name: str, known: list[str] | None = None) -> str:
    """What to say about a section naming no installed sink."""
    known = sink_names() if known is None else known
    guess = did_you_mean(name, known)
    return (f"no installed sink is called {name!r} (sinks register in the {GROUP!r} entry-point group; installed: "
            f"{', '.join(known) or 'none'})" + (f" (did you mean {guess!r}?)" if guess else ""))


def load_sink(name: str) -> SinkBuilder:
    """Import and return the builder registered as ``name``.

    Raises:
        ExportConfigError: no sink has that name, its module does not import, or it is not callable.
    """
    ep = _entry_points().get(name)
    if ep is None:
        raise ExportConfigError(name, unknown_sink_message(name))
    try:
        builder: Any = ep.load()
    except Exception as exc:
        raise ExportConfigError(name, f"the sink entry point {ep.value!r} failed to import: "
                                      f"{type(exc).__name__}: {exc}") from exc
    if not callable(builder):
        raise ExportConfigError(name, f"the sink entry point {ep.value!r} is not a builder (callable(config, ctx))")
    return cast(SinkBuilder, builder)
