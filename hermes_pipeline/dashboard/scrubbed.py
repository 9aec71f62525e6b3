"""The dashboard's one door for text it did not write: every string of a query result, scrubbed.

The pages show Hermes' own ``state.db`` messages (raw when Hermes' redaction is off), skill directory names
and front matter, and memory file names as they are on disk. :func:`scrubbed` decorates each public query of
:mod:`.queries`, so whatever a view renders went through the engine's credential scrubber once, where it
entered the dashboard, judged as the payload sanitizer judges it (a credential name's value, a command line's
password, a name/value pair's value). Each string is also cut to the export bound (``export/bounds.py``), so a huge
message in Hermes' ``state.db`` never becomes a page of that size.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any, ParamSpec, TypeVar

from ..engine.scrub import safe_scrub
from ..engine.walk_context import context_entries, context_items
from ..export.bounds import DEFAULT_MAX_VALUE_CHARS, bounded_scrub

__all__ = ["scrub_all", "scrubbed"]

P = ParamSpec("P")
R = TypeVar("R")


def scrub_all(value: Any) -> Any:
    """``value`` with every string (mapping keys included) scrubbed and bounded, each value judged with the context
    the text rules read (its key, a command line's neighbours, a naming sibling: the payload sanitizer's rule,
    :mod:`hermes_pipeline.engine.walk_context`; a token breakdown under a ``*_tokens`` key is walked, not hidden);
    other values as they are."""
    if isinstance(value, str):
        return bounded_scrub(value, DEFAULT_MAX_VALUE_CHARS)[0]
    if isinstance(value, dict):
        return {(safe_scrub(k) if isinstance(k, str) else k): scrub_all(v) for k, v in context_entries(value, False)}
    if isinstance(value, list):
        return [scrub_all(v) for v in context_items(value)]
    if isinstance(value, tuple):
        return tuple(scrub_all(v) for v in context_items(value))
    return value


def scrubbed(fn: Callable[P, R]) -> Callable[P, R]:
    """Decorate a public query: its result reaches the views with every string scrubbed."""
    @wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        result: R = scrub_all(fn(*args, **kwargs))
        return result
    return wrapper
