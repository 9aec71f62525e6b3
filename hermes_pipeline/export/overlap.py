"""Tool starts held back until it is known whether the call overlaps another (spec 04 §2.3, §2.2).

Every tool scope that runs concurrently with a sibling carries the ``parallel`` flag, and a scope's
start and end carry the same flags. The first of two concurrent calls does not know, when it
starts, that a second one will follow, so the tracker holds the start of a tool call that opens
while no other tool call of its session is open:

- when a second tool call of the session starts, the held start is published *with* ``parallel``
  (just before the second one, which carries it too);
- events *under* the held scope (approval and human-input marks, a subagent session and all it
  contains) wait with it, in order, so that a call that raised an approval before a sibling
  started still gets the flag; at most :data:`MAX_HELD` of them, then everything is published;
- before any other event of that session (its end, an ``llm.call``, a turn-level mark), the held
  start and what waited with it are published as they are;
- :meth:`HeldStarts.drain` publishes everything held (``flush`` and shutdown).

Held events keep their own timestamps (consumers sort by timestamp); only their publication waits,
and a parent is always published before its children. A tool call inside a subagent session
that is itself waiting is not held again (no nesting): such a call, and a call published alone
before a later one overlapped it, keep flag-less starts and ends, since the end must repeat the
flags of a start already out.
"""

from __future__ import annotations

from collections.abc import Callable

from .events import START, ScopeEvent

PARALLEL = "parallel"


def with_parallel(start: ScopeEvent) -> ScopeEvent:
    """The held tool start ``start`` with ``parallel`` among its (sorted) flags, set in place and returned: a held
    start is not published yet, so no listener holds it, and the open-scope table holds this very object (its end
    repeats the flags), so a copy would only have to replace it there."""
    if PARALLEL not in start.attributes:
        start.attributes = tuple(sorted({*start.attributes, PARALLEL}))
    return start


MAX_HELD = 256
"""Events that may wait under one held tool start before everything is published."""


class _Held:
    """A held start under which events wait (made from the start alone when the first of them comes)."""

    __slots__ = ("buffer", "members", "start")

    def __init__(self, start: ScopeEvent) -> None:
        self.start = start
        self.buffer: list[ScopeEvent] = []
        self.members = [start.uuid]
        """UUIDs of the held scope and of every scope (and subagent session) opened under it."""


def _start(held: ScopeEvent | _Held) -> ScopeEvent:
    return held if type(held) is ScopeEvent else held.start  # type: ignore[return-value]


class HeldStarts:
    """At most one held tool start per session scope; the caller holds the tracker's lock.

    A start held alone (the common case: a tool call that runs by itself, whose end comes next) is kept as the
    event itself, no other object made for it; it becomes a :class:`_Held` when a first event waits under it.
    """

    __slots__ = ("_owner", "sessions")

    def __init__(self) -> None:
        self.sessions: dict[int, ScopeEvent | _Held] = {}
        """Session UUID → its held start, alone or with what waits under it (read-only outside this class;
        empty: nothing held, the common case)."""
        self._owner: dict[int, int] = {}
        """UUID of a held scope or of a scope under it → the session UUID its hold is keyed by."""

    def __bool__(self) -> bool:
        return bool(self.sessions)

    def may_hold(self, start: ScopeEvent) -> bool:
        """Whether ``start`` may be held: not inside a scope that is itself waiting (no nesting)."""
        return start.session_uuid not in self._owner and (start.parent_uuid or 0) not in self._owner

    def hold(self, start: ScopeEvent) -> None:
        """Keep ``start`` unpublished until one of the events of the module docstring."""
        self.sessions[start.session_uuid] = start
        self._owner[start.uuid] = start.session_uuid

    def release_alone(self, start: ScopeEvent, publish: Callable[[ScopeEvent], None]) -> bool:
        """Before the end of ``start``: publish ``start`` when it is held alone (nothing waits under it) and say
        so (``True``); ``False`` when it is not held alone (then :meth:`route` the end as any other event).

        The same as :meth:`route` for that end: the end's parent and session are not held scopes nor under one
        (they were not when ``start`` was held, and only a start routed under a held scope becomes so), so
        the end belongs to its session's held start, which is published, as it is, before the end."""
        key = start.session_uuid
        if self.sessions.get(key) is not start:
            return False
        del self.sessions[key]
        del self._owner[start.uuid]
        publish(start)
        return True

    def take_parallel(self, session_uuid: int, publish: Callable[[ScopeEvent], None]) -> None:
        """A sibling starts: publish the session's held start with ``parallel`` (flagged in place) and what waited
        with it."""
        held = self._release(session_uuid)
        if held is None:
            return
        publish(with_parallel(_start(held)))
        if type(held) is _Held:
            for event in held.buffer:
                publish(event)

    def route(self, event: ScopeEvent, publish: Callable[[ScopeEvent], None]) -> bool:
        """Before ``event`` is published: ``True`` when it waits with a held start (the caller does
        not publish it); otherwise what must precede it has been published."""
        parent = event.parent_uuid
        key = self._owner.get(parent) if parent is not None else None
        if key is None:
            key = self._owner.get(event.session_uuid)
        if key is not None and event.uuid != _start(self.sessions[key]).uuid:  # under the held scope
            held = self.sessions[key]
            if type(held) is not _Held:
                held = self.sessions[key] = _Held(held)  # type: ignore[arg-type]  # not a _Held: a ScopeEvent
            held.buffer.append(event)
            if event.phase == START:
                self._owner[event.uuid] = key
                held.members.append(event.uuid)
            if len(held.buffer) >= MAX_HELD:
                self._publish(self._release(key), publish)
            return True
        own = key if key is not None else event.session_uuid
        if own in self.sessions:  # the held scope's own end, or another event of its session
            self._publish(self._release(own), publish)
        return False

    def drain(self, publish: Callable[[ScopeEvent], None]) -> None:
        """Publish everything held, as it is."""
        for key in list(self.sessions):
            self._publish(self._release(key), publish)

    def _release(self, key: int) -> ScopeEvent | _Held | None:
        held = self.sessions.pop(key, None)
        if type(held) is _Held:
            for uuid in held.members:
                self._owner.pop(uuid, None)
        elif held is not None:
            self._owner.pop(_start(held).uuid, None)
        return held

    @staticmethod
    def _publish(held: ScopeEvent | _Held | None, publish: Callable[[ScopeEvent], None]) -> None:
        if type(held) is _Held:
            publish(held.start)
            for event in held.buffer:
                publish(event)
        elif held is not None:
            publish(held)  # type: ignore[arg-type]
