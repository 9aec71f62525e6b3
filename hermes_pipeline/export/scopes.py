"""Scope bookkeeping shared by every exporter (spec 04 §2.2, §2.8, §2.9, FMT-85).

(Over 400 lines on purpose: opening, closing, holding and publishing scopes all take the tracker's
one lock over one state, the open-scope table of :mod:`~hermes_pipeline.export.scope_state`.)

A :class:`ScopeTracker` turns lifecycle facts into paired scope events and marks with stable
UUIDv7 identities and parent links. It is an object passed in, never a base class: the hooks object
(:class:`~hermes_pipeline.export.scope_hooks.ScopePlugin`, carrying the ``@hookimpl`` methods) makes one
and hands it to one small class per scope kind (:mod:`~hermes_pipeline.export.scope_kinds`), which feed
it through :meth:`ScopeTracker.start`, :meth:`ScopeTracker.end` and :meth:`ScopeTracker.mark`;
exporters consume it as **listeners**.

Listener interface (for the ATOF, ATIF and OpenTelemetry exporters)::

    tracker.add_listener(fn)        # fn(event: ScopeEvent) -> None

- ``fn`` is called once per event, in emission order, while the tracker's lock is held: every
  listener sees one total order in which a scope's start precedes its end and a parent's start
  precedes its children's. With a deferred :class:`~hermes_pipeline.export.scope_hooks.ScopePlugin`
  (what exporters use) that happens on the single publication thread; otherwise on the hook
  caller's thread.
- ``fn`` must be cheap and non-blocking (enqueue the event on the exporter's own
  :class:`~hermes_pipeline.export.writer.BoundedWriter`; no I/O, FMT-79/FMT-81) and must not call
  back into the tracker (FMT-86). An exception is caught, counted and logged once per listener; it
  never reaches the host.
- A listener may also have ``take_many(events)``, taking the events of one publication batch at once
  with the same effect as one call per event (the built-in sinks: one hand-over to their writer per
  batch, :func:`~hermes_pipeline.export.events.submit_paired_many`); see :meth:`ScopeTracker.collect`.
- Events are shared between listeners: treat them as immutable (see :class:`ScopeEvent`).
- Identities: ``event.uuid`` / ``event.parent_uuid`` are integers (render with
  :func:`~hermes_pipeline.export.ids.uuid_str`); an OTel ``span_id`` is ``event.uuid & (2**64 - 1)``,
  the ``trace_id`` is ``event.root_uuid`` (FMT-56); ``event.session_uuid`` names the session
  segment an event belongs to.
- ``tracker.add_listener(fn, facts=True)`` (first-party listeners: shared metrics) also gets the events of
  kind ``"fact"`` (:meth:`ScopeTracker.publish_fact`), which no other listener ever sees; every listener may read
  ``event.facts``, which no sink renders (see :class:`~hermes_pipeline.export.events.ScopeEvent`).
- ``tracker.add_listener(fn, content=False)``: ``fn`` declares it never reads the content payloads (the ``data``
  of tool calls, LLM calls and turns: arguments, results, requests, responses, messages). While every listener
  says so (a stream that runs for shared metrics alone), those payloads are dropped before the sanitizers and
  the scrubber, so nobody pays for scrubbing text nobody reads; one listener that reads content restores them
  for every later event.
- :meth:`ScopeTracker.close_all` (called by an owner's ``shutdown``) synthesizes the end of every
  open scope with ``metadata["hermes.close_reason"]`` so that every start is paired (FMT-7, FMT-85).

Sessions are keyed by Hermes ``session_id``; turns, provider attempts and tool calls by
``turn_id``, ``api_request_id`` and ``tool_call_id`` inside their session, so concurrent sessions
(threads, asyncio tasks, several hosts in one process) never share state.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from threading import get_ident
from time import time_ns
from typing import Any, Final

from ..contract.versions import TELEMETRY_SCHEMA_VERSION
from .bounds import bound_event
from .bounds import max_value_chars as value_bound
from .events import (CLEAN_DATA, CLEAN_META, CLEAN_NAME, CLEAN_PROFILE, END, FACT, MARK, SCOPE, SESSION_SCOPE, START,
                     TURN_SCOPE, ScopeEvent)
from .ids import new_uuid7
from .redaction import redact_event
from .overlap import HeldStarts
from .scope_state import SessionState

logger: Final = logging.getLogger("hermes_pipeline.export")

Listener = Callable[[ScopeEvent], None]
"""A consumer of scope events: ``listener(event) -> None`` (see the module docstring)."""
BatchListener = Callable[[list[ScopeEvent]], None]
"""A listener's optional ``take_many(events) -> None``: the events of one publication batch, in order, with
the same effect as one call per event (see :meth:`ScopeTracker.collect`); it must not read the tracker's
bookkeeping, which is by then that of the batch's end."""
TAKE_MANY: Final = "take_many"
Sanitizer = Callable[[ScopeEvent], "Mapping[str, Any] | None"]
"""An event sanitizer: ``sanitizer(event) -> replacements or None`` (see :meth:`ScopeTracker.add_sanitizer`)."""
SessionHook = Callable[[SessionState, str], None]
"""``hook(state, reason)``: what a scope kind does when a session closes (see :meth:`ScopeTracker.on_session_closing`)."""
Reopener = Callable[[str], SessionState | None]
"""``reopener(session_id) -> state or None`` (see :meth:`ScopeTracker.set_reopener`)."""
SANITIZED_FIELDS: Final = frozenset({"data", "category_profile", "metadata"})
CONTENT_CATEGORIES: Final = frozenset({"tool", "llm"})
"""Scopes whose ``data`` is content (with the turns' ``agent.run``): dropped when no listener reads content."""

SCHEMA_KEY: Final = "hermes.telemetry_schema_version"
SESSION_KEY: Final = "hermes.session_id"
CLOSE_REASON: Final = "hermes.close_reason"
AGENT_VERSION_KEY: Final = "hermes.agent.version"
"""Session-start metadata: the host agent's version, when the host declared one (ATIF ``agent.version``)."""


def _replaced(event: ScopeEvent, data: Any, profile: Any, metadata: dict[str, Any]) -> ScopeEvent:
    # ``facts`` are not a sanitizer's to change (never rendered, first-party listeners only): carried as they are;
    # a field known clean stays so only while it is the very same object (``ScopeEvent.clean``)
    clean = event.clean
    if clean:
        clean &= CLEAN_NAME | (CLEAN_PROFILE if profile is event.profile else 0) \
            | (CLEAN_META if metadata is event.metadata else 0) | (CLEAN_DATA if data is event.data else 0)
    return ScopeEvent(event.kind, event.phase, event.uuid, event.parent_uuid, event.timestamp_us, event.name,
                      event.category, event.attributes, profile, data, metadata, event.session_uuid, event.root_uuid,
                      facts=event.facts, clean=clean)


def base_meta(session_id: str) -> dict[str, Any]:
    """The two metadata keys every event carries (FMT-13)."""
    return {SCHEMA_KEY: TELEMETRY_SCHEMA_VERSION, SESSION_KEY: session_id}


def _synthetic_end_meta(session_id: str, reason: str, *, error: bool) -> dict[str, Any]:
    meta = {SCHEMA_KEY: TELEMETRY_SCHEMA_VERSION, SESSION_KEY: session_id, CLOSE_REASON: reason}
    if error:
        meta["otel.status_code"] = "ERROR"
        meta["error.type"] = "cancelled"
    return meta


class ScopeTracker:
    """Thread-safe scope state plus the listener fan-out (see the module docstring).

    Args:
        listeners: initial listeners.
        toolsets: optional ``tool name → toolset`` map (``hermes.toolset``, the ``remote`` flag).
        memory_tools: optional ``tool name → memory.retrieve | memory.update`` override (BOOK-9).
        redact_credentials: scrub credentials from every event before any listener sees it (the default;
            see :mod:`~hermes_pipeline.export.redaction`). ``False`` hands listeners the content as the
            hooks gave it; the ``observability`` component's ``redact_credentials = false`` sets it.
        max_value_chars: the bound of one string value of an event, in characters (default 1,000,000; at
            least 1,000): longer ones are cut with ``...[truncated N chars]`` before any listener sees them,
            whatever ``redact_credentials`` says (see :mod:`~hermes_pipeline.export.bounds`).
    """

    def __init__(self, listeners: tuple[Listener, ...] = (), *, toolsets: Mapping[str, str] | None = None,
                 memory_tools: Mapping[str, str] | None = None, redact_credentials: bool = True,
                 max_value_chars: int | None = None) -> None:
        self.lock = threading.RLock()  # FMT-86: listeners may call the bookkeeping APIs back
        """The one lock over the open-scope table: a scope kind holds it around what it reads and changes."""
        self.redact_credentials = bool(redact_credentials)
        """Whether events are credential-scrubbed after the sanitizers and before every listener."""
        self.max_value_chars: int = value_bound(max_value_chars)
        """The bound of one string value of every published event (see :mod:`~hermes_pipeline.export.bounds`)."""
        self._listeners: tuple[Listener, ...] = ()
        self._fact_listeners: tuple[Listener, ...] = ()
        self._contentless: tuple[Listener, ...] = ()
        """Listeners that declared they never read content (``add_listener(content=False)``)."""
        self._content_free = False
        """Whether every listener (at least one) declared it: content payloads are then dropped at publication."""
        self._one_by_one: tuple[Listener, ...] = ()
        """The listeners without ``take_many``: called with each event as it is published, batch or not."""
        self._takers: tuple[tuple[Listener, BatchListener], ...] = ()
        """The listeners with ``take_many`` (and it): handed a collected batch at once (:meth:`hand_over`)."""
        self._pending: list[ScopeEvent] | None = None
        """Events published while a batch is collected (:meth:`collect`), not yet handed to the listeners."""
        self._collector = 0
        """The thread collecting ``_pending`` (the publication thread)."""
        for listener in listeners:
            self.add_listener(listener)
        self._sanitizer_entries: tuple[tuple[int, str, Sanitizer], ...] = ()
        self._sanitizers: tuple[Sanitizer, ...] = ()
        self._sanitizer_failures = 0
        self.sessions: dict[str, SessionState] = {}
        """The open-scope table: every open session (and what is open inside it) by Hermes ``session_id``."""
        self._listener_errors = 0
        self._warned: set[int] = set()
        self.toolsets: Mapping[str, str] = dict(toolsets or {})
        self.memory_tools: Mapping[str, str] = dict(memory_tools or {})
        self.special_tools = frozenset({"memory", "session_search", *self.memory_tools})
        """Tools whose span kind depends on their arguments (memory reads and writes, ``classify.tool_span_kind``)."""
        self._ts = 0
        """Hook time (epoch µs) of the record being replayed by the publication thread; 0 = use the clock."""
        self._ambient: tuple[str, str] | None = None
        """``(session_id, tool_call_id)`` of the caller's context captured with a deferred record."""
        self.held = HeldStarts()
        """Tool starts not yet published: whether the call overlaps another is not known yet (``overlap``)."""
        self._published_starts: dict[int, ScopeEvent] = {}
        """The published start of every open scope, by UUID: handed to listeners again on its end (``end.start``)."""
        self._session_closing: tuple[SessionHook, ...] = ()
        self._session_closed: tuple[SessionHook, ...] = ()
        self._reopener: Reopener | None = None

    def now(self) -> int:
        """The current event time: the captured hook time while replaying a deferred record, else the clock."""
        ts = self._ts
        return ts if ts else time_ns() // 1000

    def replayed_context(self) -> tuple[str, str] | None:
        """``(session_id, tool_call_id)`` captured on the caller's thread with the record being replayed, if any."""
        return self._ambient

    # ------------------------------------------------------------------ what scope kinds share

    def on_session_closing(self, hook: SessionHook) -> None:
        """Call ``hook(state, reason)`` when a session starts closing, before anything inside it ends (lock held).

        How a scope kind ends its own scopes with a session it does not own (the skill runs of the
        session's open turns), whichever kind or teardown closes the session."""
        self._session_closing = (*self._session_closing, hook)

    def on_session_closed(self, hook: SessionHook) -> None:
        """Call ``hook(state, reason)`` once a session scope has ended and left the table (lock held; not
        on a segment rotation, which keeps the state)."""
        self._session_closed = (*self._session_closed, hook)

    def set_reopener(self, reopener: Reopener) -> None:
        """Ask ``reopener(session_id)`` for a state to continue before :meth:`implicit_session` opens a new
        session (an ended subagent session continues in place); it answers ``None`` for an unknown id."""
        self._reopener = reopener

    # ------------------------------------------------------------------ listeners

    def add_listener(self, listener: Listener, *, facts: bool = False, content: bool = True) -> None:
        """Deliver every later event to ``listener`` as well (a batch at once to its ``take_many``, if it has
        one); with ``facts`` also the first-party notices of :meth:`publish_fact` (kind ``"fact"``), which a sink
        never gets. ``content=False``: the listener never reads content payloads (see the module docstring)."""
        take_many = getattr(listener, TAKE_MANY, None)
        with self.lock:
            self._listeners = (*self._listeners, listener)
            if callable(take_many):
                self._takers = (*self._takers, (listener, take_many))
            else:
                self._one_by_one = (*self._one_by_one, listener)
            if facts:
                self._fact_listeners = (*self._fact_listeners, listener)
            if not content:
                self._contentless = (*self._contentless, listener)
            self._content_free = len(self._contentless) == len(self._listeners)

    def remove_listener(self, listener: Listener) -> None:
        """Stop delivering to ``listener`` (no error if it was not added)."""
        with self.lock:
            self._listeners = tuple(fn for fn in self._listeners if fn is not listener)
            self._one_by_one = tuple(fn for fn in self._one_by_one if fn is not listener)
            self._takers = tuple(entry for entry in self._takers if entry[0] is not listener)
            self._fact_listeners = tuple(fn for fn in self._fact_listeners if fn is not listener)
            self._contentless = tuple(fn for fn in self._contentless if fn is not listener)
            self._content_free = bool(self._listeners) and len(self._contentless) == len(self._listeners)

    @property
    def reads_content(self) -> bool:
        """Whether a listener may read content payloads (``False`` only while every listener declared it does not)."""
        return not self._content_free

    @property
    def reads_facts(self) -> bool:
        """Whether a listener takes the first-party notices (:meth:`publish_fact`): a kind makes one only then."""
        return bool(self._fact_listeners)

    def publish_fact(self, name: str, meta: dict[str, Any], facts: dict[str, Any]) -> None:
        """Hand the listeners added with ``facts=True``, and only them, a notice of kind ``"fact"`` (lock held).

        For a hook that made no scope event but whose fields a first-party listener counts (a turn's real end
        under a session id the stream no longer holds the turn in, SM-21): a sink never sees it, so no output
        changes. Its strings pass the credential scrubber like every event's; it is neither held, sanitized nor
        paired (it belongs to no open scope)."""
        listeners = self._fact_listeners
        if not listeners:
            return
        ts = self.now()
        event = ScopeEvent(FACT, None, new_uuid7(ts // 1000), None, ts, name, None, (), None, None, meta, 0, 0,
                           facts=facts)
        event = redact_event(event, self.max_value_chars) if self.redact_credentials \
            else bound_event(event, self.max_value_chars)
        for listener in listeners:
            try:
                listener(event)
            except Exception as exc:  # FMT-83: a failing listener never raises into the host
                self._listener_failed(listener, exc)

    def add_sanitizer(self, sanitizer: Sanitizer, *, priority: int = 0, name: str | None = None) -> None:
        """Run ``sanitizer`` on every later event before any listener sees it (FMT-29).

        ``sanitizer(event)`` returns ``None`` (no change) or a mapping replacing any of ``data``,
        ``category_profile`` and ``metadata`` (other keys are an error); it must not mutate the event.
        Sanitizers run in ascending ``priority``, ties by ``name`` (default: the callable's qualified
        name). One that raises clears those fields of that event (fail-closed: ``data`` and
        ``category_profile`` become ``null``, ``metadata`` an empty object) and the event is still
        published. Content summaries are made by the exporters afterwards, so a summary
        never shows what a sanitizer removed (FMT-33). The tracker's own bookkeeping is unaffected.
        """
        label = name if name is not None else getattr(sanitizer, "__qualname__", repr(sanitizer))
        with self.lock:
            entries = sorted([*self._sanitizer_entries, (priority, label, sanitizer)], key=lambda e: (e[0], e[1]))
            self._sanitizer_entries = tuple(entries)
            self._sanitizers = tuple(entry[2] for entry in entries)

    def _sanitize(self, event: ScopeEvent) -> ScopeEvent:
        """``event`` after every sanitizer, each seeing the previous one's result (FMT-29)."""
        for sanitizer in self._sanitizers:
            try:
                changes = sanitizer(event)
                unknown = set(changes or ()) - SANITIZED_FIELDS
                if unknown:
                    raise ValueError(f"a sanitizer may change only {sorted(SANITIZED_FIELDS)}, not {sorted(unknown)}")
            except Exception as exc:  # fail-closed for this event's governed fields; publication goes on
                self._sanitizer_failures += 1
                if id(sanitizer) not in self._warned:
                    self._warned.add(id(sanitizer))
                    logger.warning("hermes_pipeline: event sanitizer %r raised %s; that event is published with its "
                                   "data, category_profile and metadata cleared", getattr(sanitizer, "__qualname__",
                                                                                          sanitizer), type(exc).__name__)
                return _replaced(event, None, None, {})
            if changes:
                event = _replaced(event, changes.get("data", event.data),
                                  changes.get("category_profile", event.profile),
                                  changes.get("metadata", event.metadata) or {})
        return event

    def emit(self, event: ScopeEvent) -> None:
        if self.held.sessions and self.held.route(event, self.publish):  # waits with a held tool start (overlap)
            return
        self.publish(event)

    def release_held(self, timeout: float | None = None) -> bool:
        """Publish every tool start still held back (see :mod:`~hermes_pipeline.export.overlap`).

        With ``timeout``, wait that long at most for the tracker's lock (a flush never waits on it
        without a limit) and return ``False`` when it was not free in time."""
        if not self.acquire(timeout):
            return False
        try:
            self.held.drain(self.publish)
        finally:
            self.lock.release()
        return True

    def acquire(self, timeout: float | None) -> bool:
        """Take the tracker's lock, waiting ``timeout`` seconds at most (``None``: as long as it takes)."""
        return self.lock.acquire() if timeout is None else self.lock.acquire(timeout=max(timeout, 0.0))

    def publish(self, event: ScopeEvent) -> None:
        if self._content_free and event.data is not None and event.kind == SCOPE \
                and (event.category in CONTENT_CATEGORIES or event.name == TURN_SCOPE):
            event = _replaced(event, None, event.profile, event.metadata)  # nobody reads it: not scrubbed either
        if self._sanitizers:
            event = self._sanitize(event)
        # the one place starts and ends are paired: an end goes out as a closed scope (``event.start``)
        phase = event.phase
        start = self._published_starts.pop(event.uuid, None) if phase == END else None
        if self.redact_credentials:
            # One credential scrubber for every sink, before any of them sees the event; summaries and
            # previews are made later by the sinks, from these scrubbed strings. The same walk bounds
            # every string, so no sink ever holds a value longer than max_value_chars. An end's name and
            # profile that are its published start's own objects were walked with the start (``start``).
            event = redact_event(event, self.max_value_chars, start)
        else:
            event = bound_event(event, self.max_value_chars)
        if phase == START:
            self._published_starts[event.uuid] = event
        elif phase == END:
            event.start = start
        pending = self._pending
        if pending is None:
            listeners = self._listeners
        elif self._collector == get_ident():  # collecting a publication batch for the takers (hand_over)
            pending.append(event)
            listeners = self._one_by_one
        else:
            # another thread (a shutdown's close_all, a flush's release_held) publishes between two records of
            # the batch: what the batch published so far goes first, while the sinks are surely open
            self._pending = []  # a fresh list: a take_many may keep the one it is given, or publish again
            if pending:
                self._give(pending)
            listeners = self._listeners
        for listener in listeners:
            try:
                listener(event)
            except Exception as exc:  # FMT-83: a failing listener never raises into the host
                self._listener_failed(listener, exc)

    def collect(self) -> None:
        """Collect the events published from now on for the listeners with ``take_many``, until :meth:`hand_over`.

        The publication thread brackets each batch of replayed hook records with the two: a listener with
        ``take_many`` (the built-in sinks, which only queue) then gets the batch's events in one call, one
        hand-over per sink and batch instead of one call per event and sink. A listener without it is
        still called with each event as it is published, so one that reads the tracker's bookkeeping from
        its callback (FMT-86) sees it as of that event. Every listener sees every event once, in the one
        emission order, under the tracker's lock; only the interleaving between two listeners changes. An event
        another thread publishes meanwhile (a shutdown's ``close_all``) first hands over what was collected."""
        with self.lock:
            if self._pending is None and self._takers:
                self._pending = []
                self._collector = get_ident()

    def hand_over(self) -> None:
        """Give the events collected since :meth:`collect` to each listener's ``take_many``, in order, and
        stop collecting."""
        with self.lock:
            events, self._pending = self._pending, None
            if events:
                self._give(events)

    def _give(self, events: list[ScopeEvent]) -> None:
        for listener, take_many in self._takers:
            try:
                take_many(events)
            except Exception as exc:  # FMT-83: counted once for the batch; the other listeners go on
                self._listener_failed(listener, exc)

    def _listener_failed(self, listener: Listener, exc: Exception) -> None:
        self._listener_errors += 1
        if id(listener) not in self._warned:
            self._warned.add(id(listener))
            logger.warning("hermes_pipeline: scope listener %r raised %s; events keep flowing to the other "
                           "listeners", getattr(listener, "__qualname__", listener), type(exc).__name__)

    # ------------------------------------------------------------------ inspection

    def stats(self) -> dict[str, int]:
        """``open_sessions``, ``listener_errors`` and ``sanitizer_failures``."""
        with self.lock:
            return {"open_sessions": len(self.sessions), "listener_errors": self._listener_errors,
                    "sanitizer_failures": self._sanitizer_failures}

    def open_session_ids(self) -> list[str]:
        """Hermes session IDs whose session scope is open."""
        with self.lock:
            return list(self.sessions)

    # ------------------------------------------------------------------ primitives (lock held)

    def start(self, st: SessionState, parent: int | None, name: str, category: str, attributes: tuple[str, ...],
               profile: dict[str, Any] | None, data: dict[str, Any] | None, meta: dict[str, Any], ts: int, *,
               facts: dict[str, Any] | None = None) -> ScopeEvent:
        """Emit a scope start; the returned start event is also the open scope's record. ``facts``: see
        :class:`~hermes_pipeline.export.events.ScopeEvent` (never rendered)."""
        uuid = new_uuid7(ts // 1000)
        scope = st.scope
        event = ScopeEvent(SCOPE, START, uuid, parent, ts, name, category, attributes, profile, data, meta,
                           scope.uuid if scope is not None else uuid, st.root or uuid, facts=facts)
        self.emit(event)
        return event

    def end(self, st: SessionState, start: ScopeEvent, data: dict[str, Any] | None, meta: dict[str, Any],
             ts: int | None = None, profile: dict[str, Any] | None = None, *,
             facts: dict[str, Any] | None = None) -> None:
        """Emit the end of the scope opened by ``start`` (same uuid, name, flags; FMT-6, FMT-17); ``facts`` as
        :meth:`start`."""
        if ts is None:
            ts = self.now()
        if ts <= start.timestamp_us:  # FMT-17: an end is stamped strictly after its start (start + 1 µs)
            ts = start.timestamp_us + 1
            meta["hermes.clock_adjusted"] = True
        event = ScopeEvent(SCOPE, END, start.uuid, start.parent_uuid, ts, start.name, start.category,
                           start.attributes, start.profile if profile is None else profile, data, meta,
                           start.session_uuid, start.root_uuid, facts=facts)
        self.emit(event)

    def mark(self, st: SessionState | None, parent: int | None, name: str, category: str | None,
              profile: dict[str, Any] | None, data: dict[str, Any] | None, meta: dict[str, Any], *,
              facts: dict[str, Any] | None = None) -> None:
        ts = self.now()
        uuid = new_uuid7(ts // 1000)
        session_uuid = st.scope.uuid if st is not None and st.scope is not None else 0
        root = st.root if st is not None else 0
        self.emit(ScopeEvent(MARK, None, uuid, parent, ts, name, category, (), profile, data, meta, session_uuid, root,
                             facts=facts))

    def open_session(self, session_id: str, data: dict[str, Any] | None, meta: dict[str, Any], *,
                      parent: SessionState | None = None, parent_uuid: int | None = None,
                      ts: int | None = None, state: SessionState | None = None) -> SessionState:
        """Start a session scope (a new state, or a new segment of ``state``) and register it."""
        st = state if state is not None else SessionState(session_id, parent, parent_uuid)
        ts = self.now() if ts is None else ts
        st.scope = None
        st.root = st.parent.root if st.parent is not None else 0
        meta.update(st.extra)
        if st.platform is not None and "hermes.platform" not in meta:
            meta["hermes.platform"] = st.platform
        meta["hermes.span_kind"] = "session"
        st.scope = self.start(st, st.parent_uuid, SESSION_SCOPE, "agent", (), None, data, meta, ts)
        if st.parent is None:
            st.root = st.scope.uuid
        self.sessions[session_id] = st
        if st.parent is not None:
            st.parent.children[session_id] = st
        return st

    def implicit_session(self, session_id: str, model: str | None = None, platform: str | None = None,
                          agent_version: str | None = None, resumed: bool = False) -> SessionState:
        """The open session state of ``session_id``; opened now if none is open (FMT-24 row 1).

        ``agent_version`` (the host agent's version, when the host declared it) is kept as the
        ``hermes.agent.version`` metadata of every segment's session start (ATIF ``agent.version``).
        ``resumed``: the session was started earlier, elsewhere (its first turn here is not its first
        turn, e.g. ``hermes chat --resume`` in a new process): its start says ``resumed: true``, so an
        append-only stream shows one session continued, not a new one.
        """
        st = self.sessions.get(session_id)
        if st is not None:
            return st
        if self._reopener is not None:
            st = self._reopener(session_id)
            if st is not None:
                return st
        data: dict[str, Any] = {}
        if model is not None:
            data["model"] = model
        if platform is not None:
            data["platform"] = platform
        if resumed:
            data["resumed"] = True
        meta = base_meta(session_id)
        if platform is not None:
            meta["hermes.platform"] = platform
        st = SessionState(session_id, None, None)
        st.model, st.platform = model, platform
        if isinstance(agent_version, str) and agent_version:
            st.extra[AGENT_VERSION_KEY] = agent_version
        return self.open_session(session_id, data or None, meta, state=st)

    def close_turn_children(self, st: SessionState, turn_id: str, reason: str) -> None:
        # subagent sessions spawned in the turn are left open: a background child outlives the turn and
        # ends with its own stop (or at teardown), in its one session scope (issue #27)
        for registry in (st.tools, st.llm):
            for key, scope in list(registry.items()):
                if scope.metadata.get("hermes.turn_id") == turn_id:
                    del registry[key]
                    self.end(st, scope, None, _synthetic_end_meta(st.session_id, reason, error=True))

    def close_session(self, st: SessionState, data: dict[str, Any] | None, reason: str | None, *,
                       synthetic: bool = False, meta: dict[str, Any] | None = None, status_ok: bool = True,
                       keep: bool = False, children: bool = False) -> None:
        """End ``st``'s session scope after closing everything open inside it (LIFO, FMT-7).

        ``reason`` is the ``hermes.close_reason`` given to synthesized child ends (and to this end
        when ``synthetic``); ``keep`` leaves the state registered (segment rotation). Subagent
        sessions still running are ended too only with ``children`` (teardown): otherwise a background
        child outlives its parent session in its one session scope until its own stop (issue #27).
        """
        child_reason = reason or "session_closed"
        for hook in self._session_closing:
            hook(st, child_reason)
        for child in list(st.children.values()) if children else ():
            self.close_session(child, {"reason": child_reason}, child_reason, synthetic=True, children=True)
        for registry in (st.tools, st.llm):
            while registry:
                _, scope = registry.popitem()
                self.end(st, scope, None, _synthetic_end_meta(st.session_id, child_reason, error=True))
        while st.turns:
            _, turn = st.turns.popitem()
            self.end(st, turn.scope, None, _synthetic_end_meta(st.session_id, child_reason, error=True))
        end_meta = meta if meta is not None else base_meta(st.session_id)
        if synthetic and reason is not None:
            end_meta[CLOSE_REASON] = reason
        elif status_ok:
            end_meta.setdefault("otel.status_code", "OK")
        if st.scope is not None:
            self.end(st, st.scope, data, end_meta)
        if not keep:
            if self.sessions.get(st.session_id) is st:
                del self.sessions[st.session_id]
            if st.parent is not None and st.parent.children.get(st.session_id) is st:
                del st.parent.children[st.session_id]
            for hook in self._session_closed:
                hook(st, child_reason)

    def turn_parent(self, st: SessionState, turn_id: str) -> int:
        """UUID of the turn ``turn_id``'s ``agent.run`` scope when it is open, else of the session scope."""
        turn = st.turns.get(turn_id)
        if turn is not None:
            return turn.scope.uuid
        assert st.scope is not None
        return st.scope.uuid

    def current_parent(self, st: SessionState, turn_id: str = "") -> int:
        """UUID of the innermost open scope of ``st`` for a new mark or child (FMT-8, FMT-21).

        A single open tool call wins; then the turn ``turn_id`` (or the only open turn); then the
        session scope. With several concurrent tool calls the turn is the parent.
        """
        tools = st.tools
        if len(tools) == 1:
            return next(iter(tools.values())).uuid
        turn = st.turns.get(turn_id) if turn_id else None
        if turn is None and len(st.turns) == 1:
            turn = next(iter(st.turns.values()))
        if turn is not None:
            return turn.scope.uuid
        assert st.scope is not None
        return st.scope.uuid

    # ------------------------------------------------------------------ teardown

    def close_all(self, reason: str = "shutdown", timeout: float | None = None) -> int:
        """Synthesize the end of every open scope (FMT-85); returns the number of sessions closed.

        Turn, provider-attempt and tool scopes end with ``otel.status_code = "ERROR"`` and
        ``error.type = "cancelled"``; session scopes with status unset and ``data = {"reason": reason}``.
        All carry ``hermes.close_reason = reason``. Idempotent. With ``timeout``, wait that long at most
        for the tracker's lock; :class:`TimeoutError` when it was not free in time.
        """
        if not self.acquire(timeout):
            raise TimeoutError("the scope tracker's lock was not free within the deadline")
        try:
            roots = [st for st in self.sessions.values() if st.parent is None or st.parent.scope is None]
            for st in roots:
                if self.sessions.get(st.session_id) is st:
                    self.close_session(st, {"reason": reason}, reason, synthetic=True, children=True)
            closed = len(roots)
            for st in list(self.sessions.values()):  # anything left (children that outlived their parent)
                self.close_session(st, {"reason": reason}, reason, synthetic=True, children=True)
                closed += 1
            return closed
        finally:
            self.lock.release()
