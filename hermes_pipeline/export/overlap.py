"""Tool starts held back until it is known whether the call overlaps another (spec 04 §2.3, §2.2).

Every tool scope that runs concurrently with a sibling carries the ``parallel`` flag, and a scope's
start and end carry the same flags. The first of two concurrent calls does not know, when it
starts, that a second one will follow, so the tracker holds the start of a tool call that opens
while no other tool call of its session is open:

- when a second tool call of the session starts, the held start is published *with* ``parallel``
  (just before the second one, which carries it too);
- before any other event of that session, or any event whose parent is the held scope (a mark,
  a subagent session), the held start is published as it is, so that every listener still sees a
  scope's start before its children and its end;
- :meth:`HeldStarts.drain` publishes every held start (``flush`` and shutdown).

Held events keep their own timestamps (consumers sort by timestamp); only their publication waits.
A call that was published alone and only then overlapped by a later one keeps its flag-less
start and end: its start was already out, and its end must repeat the start's flags.
"""

from __future__ import annotations

from collections.abc import Callable

from .events import ScopeEvent

PARALLEL = "parallel"


def with_parallel(start: ScopeEvent) -> ScopeEvent:
    """A copy of the tool start ``start`` with ``parallel`` among its (sorted) flags."""
    flags = start.attributes if PARALLEL in start.attributes else tuple(sorted({*start.attributes, PARALLEL}))
    return ScopeEvent(start.kind, start.phase, start.uuid, start.parent_uuid, start.timestamp_us, start.name,
                      start.category, flags, start.profile, start.data, start.metadata, start.session_uuid,
                      start.root_uuid)


class HeldStarts:
    """At most one held tool start per session scope; the caller holds the tracker's lock."""

    __slots__ = ("_by_session", "_by_uuid")

    def __init__(self) -> None:
        self._by_session: dict[int, ScopeEvent] = {}
        self._by_uuid: dict[int, int] = {}

    def __bool__(self) -> bool:
        return bool(self._by_session)

    def hold(self, start: ScopeEvent) -> None:
        """Keep ``start`` unpublished until one of the events of the module docstring."""
        self._by_session[start.session_uuid] = start
        self._by_uuid[start.uuid] = start.session_uuid

    def take(self, session_uuid: int) -> ScopeEvent | None:
        """Remove and return the held start of a session, if any (the caller publishes it)."""
        start = self._by_session.pop(session_uuid, None)
        if start is not None:
            del self._by_uuid[start.uuid]
        return start

    def release_for(self, event: ScopeEvent, publish: Callable[[ScopeEvent], None]) -> None:
        """Publish the held start that must precede ``event`` (same session, or its parent)."""
        start = self.take(event.session_uuid)
        if start is None and event.parent_uuid is not None:
            session = self._by_uuid.get(event.parent_uuid)
            if session is not None:
                start = self.take(session)
        if start is not None and start is not event:
            publish(start)

    def drain(self, publish: Callable[[ScopeEvent], None]) -> None:
        """Publish every held start as it is."""
        for session in list(self._by_session):
            start = self.take(session)
            if start is not None:
                publish(start)
