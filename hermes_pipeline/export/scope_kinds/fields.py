"""Hook fields more than one scope kind turns into metadata the same way."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...engine.scrub import SCRUB_MIN_CHARS, known_clean
from ...engine.scrub_once import made_clean


def middleware_meta(meta: dict[str, Any], trace: Any) -> None:
    """``hermes.middleware.changed`` / ``hermes.middleware.sources`` from a hook's ``middleware_trace``
    (a provider attempt's or a tool call's start), when the trace is not empty."""
    if trace:
        sources = [str(t.get("source", "")) for t in trace if isinstance(t, Mapping)]
        meta["hermes.middleware.changed"] = bool(sources)
        meta["hermes.middleware.sources"] = sources


def known_clean_text(value: object) -> bool:
    """Whether ``value`` is a string known to need no scrubbing: one the scrubber has already left unchanged
    (``known_clean``), an id the engine made itself (``made_clean``), or one too short to hold a credential. Both
    tables hold texts of at most ``CLEAN_MAX_CHARS`` characters, within any value bound, so such a string is
    exactly what the credential walk would give back. A kind that builds a field only of such strings, numbers
    and its own constants says so in :attr:`~hermes_pipeline.export.events.ScopeEvent.clean`; anything else
    (a string not seen yet, a value of another type) is left to the walk, which scrubs it once."""
    return type(value) is str and (value in known_clean or value in made_clean or len(value) < SCRUB_MIN_CHARS)
