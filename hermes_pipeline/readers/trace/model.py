"""The tree that ``hermes-pipeline trace show`` renders: :class:`TraceNode`, :class:`Trace` and small helpers.

Built by :mod:`~hermes_pipeline.readers.trace.formats` from ATOF or ATIF files, rendered by
:mod:`~hermes_pipeline.readers.trace.view`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

PROBLEMS: Final = {"error": "FAILED", "failed": "FAILED", "blocked": "BLOCKED", "cancelled": "CANCELLED",
                   "interrupted": "CANCELLED", "timeout": "CANCELLED", "open": "OPEN"}
WORK_KINDS: Final = ("llm", "tool")


class TraceFileError(Exception):
    """The file is missing, unreadable or neither ATOF JSON Lines nor an ATIF trajectory."""


@dataclass
class TraceNode:
    """One line of the tree: a scope, an ATIF step or tool call, or a mark."""

    kind: str
    label: str
    status: str | None = None
    detail: str = ""
    duration_ms: float | None = None
    approx: bool = False
    tokens_in: int | None = None
    tokens_out: int | None = None
    children: list[TraceNode] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)

    @property
    def tokens(self) -> int | None:
        """Input plus output tokens, or ``None`` when neither is known."""
        if self.tokens_in is None and self.tokens_out is None:
            return None
        return (self.tokens_in or 0) + (self.tokens_out or 0)

    def walk(self) -> Iterator[TraceNode]:
        """This node and every descendant, depth first."""
        yield self
        for child in self.children:
            yield from child.walk()


@dataclass
class Trace:
    """A loaded trace: its format (``"ATOF"`` / ``"ATIF"``), a summary line and the root nodes."""

    format: str
    path: Path
    summary: str
    roots: list[TraceNode]

    def nodes(self) -> Iterator[TraceNode]:
        """Every node of every root, depth first."""
        for root in self.roots:
            yield from root.walk()


def short(text: Any, limit: int = 48) -> str:
    """``text`` on one line, cut to ``limit`` characters, quoted."""
    text = " ".join(str(text if text is not None else "").split())
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def as_int(value: Any) -> int | None:
    """``value`` if it is an integer (not a bool), else ``None``."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def mapping(value: Any) -> Mapping[str, Any]:
    """``value`` if it is a mapping, else an empty one."""
    return value if isinstance(value, Mapping) else {}


def get(obj: Any, key: str) -> Any:
    """``obj[key]`` when ``obj`` is a mapping, else ``None``."""
    return obj.get(key) if isinstance(obj, Mapping) else None
