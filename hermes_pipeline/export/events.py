"""The scope event: one ATOF 0.1 event before rendering (spec 04 §2.1-§2.8).

A :class:`ScopeEvent` is what the :class:`~hermes_pipeline.export.scopes.ScopeTracker` hands to its
listeners on the hook caller's thread. It holds raw values (integer UUIDs, integer microseconds,
the sanitized payload objects) so that building it is cheap; its ATOF object (string UUIDs, RFC 3339
timestamps) is rendered by :func:`~hermes_pipeline.export.atof_object.atof_object` on an exporter's
worker thread. Events are shared by every listener and MUST be treated as immutable; an exporter that
needs to change ``data`` copies it first.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Protocol

from .ids import uuid_str

SCOPE: Final = "scope"
MARK: Final = "mark"
FACT: Final = "fact"
"""Kind of a notice for first-party listeners only (see :class:`ScopeEvent` ``facts``): handed only to the
listeners added with ``facts=True``, never to a sink, never rendered."""
START: Final = "start"
END: Final = "end"

SESSION_SCOPE: Final = "hermes.session"
TURN_SCOPE: Final = "agent.run"
LLM_SCOPE: Final = "llm.call"

CLEAN_NAME: Final = 1
CLEAN_PROFILE: Final = 2
CLEAN_META: Final = 4
CLEAN_DATA: Final = 8
CLEAN_ALL: Final = CLEAN_NAME | CLEAN_PROFILE | CLEAN_META | CLEAN_DATA
"""Bits of :attr:`ScopeEvent.clean`: the event's ``name``, ``category_profile``, ``metadata`` or ``data`` holds only
strings known clean by construction (see there)."""

CATEGORIES: Final = frozenset({
    "agent", "function", "llm", "tool", "retriever", "embedder", "reranker", "guardrail", "evaluator",
    "custom", "unknown",
})
"""The closed ``category`` enum of ATOF 0.1 (§2.4)."""


class ScopeEvent:
    """One scope start, scope end or mark, with raw (unrendered) values.

    Attributes:
        kind: ``"scope"`` or ``"mark"`` (``"fact"`` for first-party listeners only, see ``facts``).
        phase: ``"start"`` / ``"end"`` for scopes (the ATOF ``scope_category``), ``None`` for marks.
        uuid: the scope's (or mark's) UUIDv7 as an integer; a scope's start and end share it.
        parent_uuid: the enclosing scope's UUID integer, or ``None`` for a root.
        timestamp_us: UTC epoch microseconds; an end is always later than its start (FMT-17).
        name: ``hermes.session``, ``agent.run``, ``llm.call``, the tool name, or a mark name.
        category: ATOF category; ``None`` on marks without one.
        attributes: sorted behaviour flags (``parallel``, ``streaming``, ``remote``); ``()`` on marks.
        profile: ``category_profile`` (or ``None``).
        data: the payload (§2.11 shapes; content fields verbatim, full LLM history).
        metadata: correlation keys (``hermes.*``, ``otel.status_code``, ``error.type``).
        session_uuid: UUID of the Hermes session scope (segment) the event belongs to; for a session
            scope's own events, its own UUID; ``0`` for a mark outside any session. Exporters key
            per-session state on it (FMT-25).
        root_uuid: UUID of the topmost ancestor scope, i.e. the top-level session segment (subagent
            sessions share their parent's): the OTel ``trace_id`` (FMT-56); ``0`` outside any session.
        start: on a scope end, the start event of the same scope exactly as listeners received it (so an
            end is a *closed scope*, start and end together, the way an OpenTelemetry span processor's
            ``on_end`` gets a finished span): the tracker pairs starts and ends once, and no sink keeps a
            table of open scopes to find a start again. ``None`` on starts and marks.
        facts: hook fields a first-party listener (shared metrics) needs and no rendered field holds, filled by
            the scope kind that has the hook (``retry_count`` of a provider attempt's start, the ``provider`` of
            its successful end, ``failed`` / ``turn_exit_reason`` of a turn's end, the ``new_session_id`` of an
            ID-rotating compaction). Only enumerations, numbers, booleans and names, each string scrubbed with
            the rest of the event; ``None`` when the kind has none.

            Why a slot of its own rather than a key of ``metadata`` or ``data``: every key there is rendered
            (an ATOF line's ``metadata``, an ATIF step's ``extra``, OTLP attributes), so a new one would change
            what every sink exports. No renderer reads ``facts``; the carriers of an event (the scrubber, the
            value bound, the overlap hold, the sanitizers' replacement, the worker pipe) carry it unchanged.
            An event of kind :data:`FACT` holds nothing else of interest: it tells first-party listeners of a
            hook that produced no scope event (a turn's real end under a session id the stream no longer holds
            the turn in, SM-21).
        clean: which of ``name``, ``category_profile``, ``metadata`` and ``data`` (bits :data:`CLEAN_NAME`,
            :data:`CLEAN_PROFILE`, :data:`CLEAN_META`, :data:`CLEAN_DATA`) the scope kind that built the event
            made only of strings known clean by construction: the names and values of its fixed tables, numbers,
            and hook strings it found in the scrubber's table of texts known to need no change (``known_clean``)
            or in the engine's own ids (``made_clean``). The credential walk keeps such a field as it is (issue
            #29 item 5: a string is scrubbed once, where it enters, and never walked again); ``0`` (the default):
            every field is walked.
            A copy whose field is replaced (a sanitizer's result) loses that field's bit.
    """

    __slots__ = ("attributes", "category", "clean", "data", "facts", "kind", "metadata", "name", "nbytes",
                 "parent_uuid", "phase", "profile", "root_uuid", "session_uuid", "start", "timestamp_us", "uuid")

    def __init__(self, kind: str, phase: str | None, uuid: int, parent_uuid: int | None, timestamp_us: int,
                 name: str, category: str | None, attributes: tuple[str, ...], profile: dict[str, Any] | None,
                 data: dict[str, Any] | None, metadata: dict[str, Any], session_uuid: int, root_uuid: int,
                 start: ScopeEvent | None = None, facts: Mapping[str, Any] | None = None, clean: int = 0) -> None:
        self.kind = kind
        self.phase = phase
        self.uuid = uuid
        self.parent_uuid = parent_uuid
        self.timestamp_us = timestamp_us
        self.name = name
        self.category = category
        self.attributes = attributes
        self.profile = profile
        self.data = data
        self.metadata = metadata
        self.session_uuid = session_uuid
        self.root_uuid = root_uuid
        self.start = start
        self.facts = facts
        self.clean = clean
        self.nbytes = -1
        """The event's estimated queue bytes once a byte-bounded queue asked (``-1``: not yet): estimated once,
        however many sink queues the event enters (:func:`~hermes_pipeline.export.sizes.event_bytes`)."""

    @property
    def is_start(self) -> bool:
        """Whether this is a scope start event."""
        return self.phase == START

    @property
    def is_end(self) -> bool:
        """Whether this is a scope end event."""
        return self.phase == END

    def __repr__(self) -> str:
        what = f"{self.kind} {self.phase}" if self.phase else self.kind
        return f"ScopeEvent({what} {self.name!r} uuid={uuid_str(self.uuid)})"


class _Queue(Protocol):
    def submit(self, item: Any, *, force: bool = False) -> bool: ...

    def submit_many(self, items: list[Any]) -> bool: ...

    def record_dropped(self, count: int = 1) -> None: ...


def submit_paired(queue: _Queue, event: ScopeEvent, dropped_starts: set[int], *, force_end: bool = True) -> bool:
    """Queue ``event`` so that the consumer never sees half a scope (FMT-80); ``False`` if it was dropped.

    A start refused by a full queue is remembered in ``dropped_starts`` and its end is then dropped
    (and counted) too. With ``force_end`` an end whose start was accepted always gets in, past a full
    queue: a stateful consumer (ATIF, OTel) would otherwise keep the scope open forever.
    """
    if dropped_starts and event.phase == END and event.uuid in dropped_starts:
        dropped_starts.discard(event.uuid)
        queue.record_dropped()
        return False
    if queue.submit(event, force=force_end and event.phase == END):
        return True
    if event.phase == START:
        dropped_starts.add(event.uuid)
    return False


def submit_paired_many(queue: _Queue, events: list[ScopeEvent], dropped_starts: set[int], *,
                       force_end: bool = True) -> int:
    """:func:`submit_paired` for each of ``events`` in order, with one hand-over when they all fit (one
    publication batch for a sink); returns how many were not queued.

    The one hand-over is taken only when no start of an open scope was dropped and the queue has room for
    every event: then no event could be refused or dropped as the end of a dropped start, and the outcome
    is the same as one :func:`submit_paired` per event. Otherwise each event goes through
    :func:`submit_paired`, with its counting and pairing (FMT-80, FMT-81).
    """
    if not dropped_starts and queue.submit_many(events):
        return 0
    refused = 0
    for event in events:
        if not submit_paired(queue, event, dropped_starts, force_end=force_end):
            refused += 1
    return refused
