"""The one sink shape: :class:`Sink` (a scope listener with ``flush``, ``shutdown``, ``stats`` and
``destinations``) and :class:`BaseSink`, its defaults.

Stated here, below the sinks, because the generic wrappers of this layer take any sink: the stand-alone
plugin (:mod:`.standalone`) and the worker process (:mod:`.worker`). The sink contract as a whole
(builders, their context, the entry-point group) is :mod:`hermes_pipeline.sinks.base`, which names these
two as its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from .events import ScopeEvent

__all__ = ["BaseSink", "Sink"]


@runtime_checkable
class Sink(Protocol):
    """A consumer of the projection's scope events (see the module text)."""

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


class BaseSink:
    """A sink with nothing to flush or close: subclasses implement :meth:`__call__` (and override the rest)."""

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
