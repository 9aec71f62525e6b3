"""A copy-on-write, ordered registry of callbacks per name (OBS-11, OBS-21, MW-4).

Readers take the current tuple without locking; writers replace it under a lock. Only names with
at least one entry are stored, so ``name in registry`` is the O(1) ``has_hook`` answer (OBS-22).
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterator
from types import MappingProxyType
from typing import Final

from .callbacks import Entry

EMPTY: Final[tuple[Entry, ...]] = ()


class Registry:
    """Ordered callbacks per hook name or middleware kind."""

    __slots__ = ("_lock", "_map", "_seq", "_view")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._map: dict[str, tuple[Entry, ...]] = {}
        self._view = MappingProxyType(self._map)
        self._seq = itertools.count()

    def next_seq(self) -> int:
        """A fresh registration sequence number."""
        return next(self._seq)

    def add(self, entry: Entry) -> None:
        """Add one entry, keeping the ``tryfirst`` / normal / ``trylast`` order (OBS-11)."""
        with self._lock:
            current = self._map.get(entry.name, EMPTY)
            self._map[entry.name] = tuple(sorted((*current, entry), key=lambda e: e.sort_key))

    def remove_where(self, predicate: Callable[[Entry], bool]) -> int:
        """Remove every entry matching ``predicate``; returns how many were removed."""
        removed = 0
        with self._lock:
            for name in list(self._map):
                kept = tuple(e for e in self._map[name] if not predicate(e))
                removed += len(self._map[name]) - len(kept)
                if kept:
                    self._map[name] = kept
                else:
                    del self._map[name]
        return removed

    def get(self, name: str) -> tuple[Entry, ...]:
        """The entries for ``name`` in dispatch order (a snapshot)."""
        return self._map.get(name, EMPTY)

    def __contains__(self, name: object) -> bool:
        return name in self._map

    def names(self) -> Iterator[str]:
        """Names that have at least one entry."""
        return iter(tuple(self._map))

    @property
    def mapping(self) -> MappingProxyType[str, tuple[Entry, ...]]:
        """Read-only live view of the registry (used by the dispatcher's hot path)."""
        return self._view
