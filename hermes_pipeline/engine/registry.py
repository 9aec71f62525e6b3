"""A copy-on-write, ordered registry of callbacks per name (OBS-11, OBS-21, MW-4).

Readers take the current tuple without locking; writers replace it under a lock. Only names with
at least one entry are stored, so ``name in registry`` is the O(1) ``has_hook`` answer (OBS-22).

A registry may *inherit* from a parent (a profile's registry inherits the process-wide one, spec 03
§11): its view is the parent's entries merged with its own, in one order, rebuilt whenever either
side changes, so that reading stays a single dictionary lookup.
"""

from __future__ import annotations

import itertools
import threading
import weakref
from collections.abc import Callable, Iterator, Mapping
from types import MappingProxyType
from typing import Any, Final

from .callbacks import Entry, describe

EMPTY: Final[tuple[Entry, ...]] = ()
_SEQ: Final = itertools.count()
"""Process-wide registration sequence, so entries of a parent and a child registry interleave
in registration order."""


def _ordered(entries: tuple[Entry, ...]) -> tuple[Entry, ...]:
    return tuple(sorted(entries, key=lambda e: e.sort_key))


class Registry:
    """Ordered callbacks per hook name or middleware kind."""

    __slots__ = ("__weakref__", "_children", "_lock", "_map", "_own", "_parent", "_view", "_watchers")

    def __init__(self, parent: Registry | None = None) -> None:
        self._lock = threading.RLock()
        self._own: dict[str, tuple[Entry, ...]] = {}
        self._map: dict[str, tuple[Entry, ...]] = {}
        self._view = MappingProxyType(self._map)
        self._parent = parent
        self._children: weakref.WeakSet[Registry] = weakref.WeakSet()
        self._watchers: tuple[Callable[[], None], ...] = ()
        if parent is not None:
            with parent._lock:
                parent._children.add(self)
            self._rebuild()

    @staticmethod
    def next_seq() -> int:
        """A fresh registration sequence number."""
        return next(_SEQ)

    def add(self, entry: Entry) -> None:
        """Add one entry, keeping the ``tryfirst`` / normal / ``trylast`` order (OBS-11)."""
        with self._lock:
            self._own[entry.name] = _ordered((*self._own.get(entry.name, EMPTY), entry))
        self._rebuild()

    def remove_where(self, predicate: Callable[[Entry], bool]) -> int:
        """Remove every own entry matching ``predicate``; returns how many were removed."""
        removed = 0
        with self._lock:
            for name in list(self._own):
                kept = tuple(e for e in self._own[name] if not predicate(e))
                removed += len(self._own[name]) - len(kept)
                if kept:
                    self._own[name] = kept
                else:
                    del self._own[name]
        if removed:
            self._rebuild()
        return removed

    def _rebuild(self) -> None:
        """Recompute the merged view (own + inherited) and propagate to children."""
        with self._lock:
            inherited = dict(self._parent._map) if self._parent is not None else {}
            names = set(inherited) | set(self._own)
            merged = {n: _ordered(inherited.get(n, EMPTY) + self._own.get(n, EMPTY)) for n in names}
            for name in list(self._map):
                if name not in merged:
                    del self._map[name]
            self._map.update(merged)  # each key swap is atomic for readers
            children = list(self._children)
            watchers = self._watchers
        for watcher in watchers:  # after the view changed: a watcher that recomputes sees the new entries
            watcher()
        for child in children:
            child._rebuild()

    def watch(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` after every change of the merged view (inherited changes included): for caches
        derived from it, such as the engine's :class:`~hermes_pipeline.engine.tool_route.ToolRoute`."""
        with self._lock:
            self._watchers = (*self._watchers, callback)

    def get(self, name: str) -> tuple[Entry, ...]:
        """The entries for ``name`` in dispatch order (a snapshot), inherited ones included."""
        return self._map.get(name, EMPTY)

    def own(self, name: str) -> tuple[Entry, ...]:
        """Only the entries registered on this registry itself."""
        return self._own.get(name, EMPTY)

    def __contains__(self, name: object) -> bool:
        return name in self._map

    def names(self) -> Iterator[str]:
        """Names that have at least one entry."""
        return iter(tuple(self._map))

    @property
    def mapping(self) -> MappingProxyType[str, tuple[Entry, ...]]:
        """Read-only live view of the merged registry (used by the dispatcher's hot path)."""
        return self._view


def add_entry(registry: Registry, name: str, callback: Callable[..., Any], plugin: str, group: int,
              invoke: Callable[[Mapping[str, Any]], Any], full: bool = False) -> Entry:
    """Add one entry for ``callback`` to ``registry`` under ``name`` and return it; ``full`` marks a
    ``**kwargs`` callback that dispatch may call directly."""
    entry = Entry(name, callback, plugin, invoke, group, registry.next_seq(), describe(callback), full)
    registry.add(entry)
    return entry
