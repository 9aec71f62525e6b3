"""Hook fields more than one scope kind turns into metadata the same way."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def middleware_meta(meta: dict[str, Any], trace: Any) -> None:
    """``hermes.middleware.changed`` / ``hermes.middleware.sources`` from a hook's ``middleware_trace``
    (a provider attempt's or a tool call's start), when the trace is not empty."""
    if trace:
        sources = [str(t.get("source", "")) for t in trace if isinstance(t, Mapping)]
        meta["hermes.middleware.changed"] = bool(sources)
        meta["hermes.middleware.sources"] = sources
