"""The span builder: scope events → OTLP spans, on the exporter's own worker thread (spec 04 §4.1, §4.8, FMT-55..FMT-65).

(Over 400 lines on purpose: the trace context of open scopes, sampling, held turns, marks and the span
records all read and update the builder's one state, the scopes its spans are built from.)

:class:`SpanBuilder` is the destination of the OTel sink's event writer: it receives the scope
events in the tracker's total order, keeps one :class:`~hermes_pipeline.sinks.otel.state.OpenScope`
per open scope (an LLM call's only at its end, from the closed scope the end brings), and when a scope ends
builds one :class:`~.record.SpanRecord` per trace endpoint (each with
its projection) and hands it to that endpoint's :class:`Route` (a bounded span queue in front of
the exporter). Nothing here runs on the agent's threads.

- IDs (FMT-56, FMT-56a): with ``trace_grouping = "turn"`` (the default) a trace is one turn: ``trace_id`` =
  the UUID of the outermost ``agent.run`` (subagents stay in the delegating turn's trace), that span is
  the root, the session scope is no span, and work outside any turn (a skipped trigger) is a trace of
  its own; every span then carries ``session.id`` and ``gen_ai.conversation.id`` so that backends group
  the turns of a session. With ``"session"``, ``trace_id`` = the scope's ``root_uuid`` (the top-level
  session segment; a rotated segment starts a new trace). ``span_id`` = low 8 bytes of the scope UUID,
  parent = low 8 bytes of ``parent_uuid``; every span is sampled.
- Status (FMT-58): a failed scope's span says why (status description and an ``exception`` event, see
  :mod:`.errors`).
- Times (FMT-55): start/end = the events' timestamps (µs → ns); the SDK clock is never used.
- Sampling (BOOK-46, FMT-74): decided once per outermost ``agent.run`` from its UUID (hashed, see
  :func:`sampling_fraction`); an unsampled turn's spans (nested work included) are not exported, session spans always
  are. With ``always_sample_errors`` the spans of an unsampled turn are held (at most 1 000) and
  exported when any of them ended in error.
- Marks (FMT-65, FMT-69): attached to the open span of their ``parent_uuid`` or of its nearest
  open ancestor, else counted as orphaned; ``mark_projection = "tool"`` makes a zero-length span.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from typing import Final

from ...export.events import MARK, START, ScopeEvent
from .attrs import GENAI_MARKS, mark_attrs, promote, span_id, status_error
from .config import TraceEndpoint
from .errors import span_status
from .full import apply_mappings, full_span, mark_attributes
from .genai import genai_span
from .messages import tool_definitions
from .openinference import openinference_span
from .record import Event, InstrumentationScope, SpanContext, SpanKind, SpanRecord, Status
from .resource import resource_for
from .state import Held, OpenScope, Options
from ...engine.trace_parent import TurnIds, lookup, lookup_turn, random_span_id, random_trace_id

logger: Final = logging.getLogger("hermes_pipeline.sinks.otel")

_UNSET: Final = Status()
LLM_CATEGORY: Final = "llm"
"""Scopes of this category have no children: their span is built whole from the closed scope at their end."""
_RECENT_LIMIT: Final = 4096
_TWO64: Final = float(1 << 64)


def _parent_span(parent: OpenScope | None, parent_uuid: int | None) -> int:
    """The parent's span id: its random id, or (its start lost upstream) the id derived from its UUID."""
    if parent is not None:
        return parent.span_id
    return span_id(parent_uuid) if parent_uuid is not None else 0


def sampling_fraction(uuid: int) -> float:
    """The turn's point in [0, 1) compared with the sampling rate: the first 8 bytes of SHA-256 over the 16
    UUID bytes, / 2^64.

    Deviation from BOOK-46's literal formula (low 64 bits of the UUID / 2^64), which is degenerate for
    this project's UUIDv7: the variant bits ``10`` put every value in [0.5, 0.75), and ``rand_b`` is a
    per-process counter, so consecutive turns would share one decision. Hashing keeps what BOOK-46 asks
    for (deterministic, so endpoints agree and a lower rate samples a subset of a higher one).
    """
    digest = hashlib.sha256(uuid.to_bytes(16, "big")).digest()
    return int.from_bytes(digest[:8], "big") / _TWO64


def sampled(uuid: int, rate: float) -> bool:
    """BOOK-46: whether the ``agent.run`` scope ``uuid`` is sampled at ``rate`` (see :func:`sampling_fraction`)."""
    return rate >= 1.0 or (rate > 0.0 and sampling_fraction(uuid) < rate)


class Route:
    """One trace endpoint as the builder sees it: projection settings plus ``submit(span) -> bool``.

    ``lost`` counts spans of this endpoint dropped before reaching its queue (held-turn overflow).
    """

    def __init__(self, endpoint: TraceEndpoint, submit: Callable[[SpanRecord], bool], version: str) -> None:
        self.endpoint = endpoint
        self.submit = submit
        self.resource = resource_for(endpoint)
        self.scope = InstrumentationScope(endpoint.instrumentation_scope, version)
        self.lost = 0

    def wants_mark(self, name: str) -> bool:
        if self.endpoint.type == "gen_ai":
            return name in GENAI_MARKS
        return name not in self.endpoint.mark_exclude_names


class SpanBuilder:
    """Destination of the event writer (``write(batch)``); see the module docstring.

    An LLM call's span is built whole at its end, from the closed scope the end brings (``end.start``):
    nothing nests in one, so its start is not even queued. Any other scope keeps an ``OpenScope`` in ``open``
    while it runs: not to find its start again (its end brings it) but as the trace context it hands its
    children, like a tracer's live span (ids drawn at its start, its turn's sampling and held spans, facts
    passed down and sent up); ``recent`` serves children that arrive after their parent ended.

    Args:
        routes: one per trace endpoint, in endpoint order.
        options: the content gate, summary mode, sampling rate and agent version.
        always_sample_errors: hold unsampled turns and export those that contain an error (FMT-74).
    """

    def __init__(self, routes: list[Route], options: Options, *, always_sample_errors: bool = False,
                 parent_based: bool = True, ids: str = "random") -> None:
        self.routes = routes
        self.derived_ids = ids == "uuid"
        """``ids = "uuid"``: trace and span ids derived from the scope UUIDs (FMT-56 as written) instead of random."""
        self.parent_based = parent_based
        """A turn inside the application's trace follows the parent's sampled flag (the SDK's default
        ``parentbased_*`` samplers); ``False`` when ``OTEL_TRACES_SAMPLER`` names a sampler that ignores it."""
        self.options = options
        self.rate = options.sampling_rate
        self.always_sample_errors = always_sample_errors
        self.open: dict[int, OpenScope] = {}
        self.recent: dict[int, OpenScope] = {}
        self.counts = dict.fromkeys(("spans_built", "sampled_out", "marks_orphaned", "unpaired_ends", "lost_open",
                                     "failures", "llm_stepped_aside"), 0)
        self.problems: dict[str, int] = {}
        self.lost_shared = 0
        """Spans lost for every endpoint (starts dropped upstream, scopes never ended)."""
        self._warned: set[str] = set()
        self._offers = options.gate_open and any(route.endpoint.type != "full" for route in routes)
        """Tool spans describe the tool from the definitions offered to the model (opt-in: with the gate open)."""

    def describe(self) -> str:
        return "otel span builder"

    # ------------------------------------------------------------------ writer destination

    def write(self, batch: list[ScopeEvent]) -> None:
        for event in batch:
            try:
                if event.kind == MARK:
                    self._mark(event)
                elif event.phase == START:
                    if event.category != LLM_CATEGORY:  # an LLM call's span is built whole at its end
                        self.open[event.uuid] = self._scope(event)
                else:
                    self._end(event)
            except Exception as exc:  # FMT-83: one bad event never stops the others
                self.counts["failures"] += 1
                key = type(exc).__name__
                if key not in self._warned:
                    self._warned.add(key)
                    logger.warning("hermes_pipeline: otel span builder failed on a %s event (%s); later failures of "
                                   "this kind are counted silently", event.name, key)

    # ------------------------------------------------------------------ events

    def _scope(self, event: ScopeEvent) -> OpenScope:
        """The span state of the scope started by ``event``, its parent's facts inherited (and, for an LLM
        call, its facts handed up to its turn and agent: provider, offered tools, attempt number)."""
        parent_uuid = event.parent_uuid
        parent = None
        if parent_uuid is not None:
            parent = self.open.get(parent_uuid) or self.recent.get(parent_uuid)
        scope = OpenScope(event, parent, self.derived_ids)
        app = None
        if scope.unit is scope or parent is None:  # a trace root: it may join the application's trace
            meta = event.metadata
            session = meta.get("hermes.session_id")
            turn = lookup_turn(session, meta.get("hermes.turn_id")) if scope.unit is scope else None
            app = turn.parent if isinstance(turn, TurnIds) else turn or lookup(session)
            if isinstance(turn, TurnIds):
                scope.quiet_llm = turn.foreign_genai
                if not self.derived_ids:  # ids the host drew on its thread (outgoing traceparent headers)
                    scope.unit_trace, scope.span_id = turn.trace_id, turn.span_id
            if app is not None:
                scope.app_parent = app
                if scope.unit is scope:
                    scope.unit_trace = app.trace_id
                if parent is None:
                    scope.trace = app.trace_id
        elif parent is not None:
            scope.quiet_llm = parent.quiet_llm
        if event.name == "agent.run" and parent is not None and parent.start.category == "agent" \
                and parent.start.metadata.get("hermes.scope_role") == "subagent":
            scope.folded = True  # a subagent's own turn: one gen_ai span per subagent run (its invoke_agent)
        if event.name == "agent.run" and scope.sampled and (parent is None or not parent.in_turn()):
            if app is not None and self.parent_based:  # the parent's sampled flag decides (FMT-56b)
                if not app.sampled:
                    scope.sampled = False
            elif not sampled(event.uuid, self.rate):
                scope.sampled = False
                if self.always_sample_errors:
                    scope.hold = Held()
        if event.category == "llm":
            run = scope.parent
            while run is not None and run.start.name != "agent.run":
                run = run.parent
            if run is not None and run.provider is None:  # the turn's invoke_agent span names the provider
                provider = event.metadata.get("hermes.provider")
                run.provider = provider if isinstance(provider, str) else ""
            owner = scope.counter_owner()
            if self._offers and owner is not scope:  # tool spans name the schema and description the model saw
                offered = tool_definitions((event.data or {}).get("request"))
                if offered:
                    owner.offered = {str(t.get("name")): t for t in offered}
            request_id = event.metadata.get("hermes.api_request_id")
            if owner is not scope and isinstance(request_id, str):
                attempts = owner.attempts if owner.attempts is not None else {}
                owner.attempts = attempts
                attempts[request_id] = scope.attempt = attempts.get(request_id, 0) + 1
            agent = scope.agent
            if agent is not None and agent.provider is None:
                provider = event.metadata.get("hermes.provider")
                agent.provider = provider if isinstance(provider, str) else ""
                model = (event.profile or {}).get("model_name")
                agent.model = model if isinstance(model, str) and model else None
        return scope

    def _end(self, event: ScopeEvent) -> None:
        scope = self.open.pop(event.uuid, None)
        if scope is None:
            start = event.start
            if start is None or event.category != LLM_CATEGORY:
                self.counts["unpaired_ends"] += 1
                return
            # a closed LLM call (nothing nests in one): its span state is made now, from the start it brings
            scope = self._scope(start)
        else:
            recent = self.recent
            recent[event.uuid] = scope
            if len(recent) > _RECENT_LIMIT:
                del recent[next(iter(recent))]
        scope.closed = True
        if scope.folded and scope.marks and scope.parent is not None:  # its gen_ai events go to the subagent span
            scope.parent.folded_marks = [*(scope.parent.folded_marks or ()), *scope.marks]
        hold = scope.hold
        if scope.quiet_llm and scope.start.category == "llm":
            # a GenAI instrumentation records this LLM call (its span nests under the turn): ours steps aside
            self.counts["llm_stepped_aside"] += 1
        elif scope.sampled:
            spans = self._build(scope, event)
            for index, span in spans:
                self.routes[index].submit(span)
        elif hold is not None:
            hold.error = hold.error or status_error(event.metadata) is not None
            if len(hold.spans) < Held.LIMIT:
                hold.spans.append(self._build(scope, event))
            else:
                hold.overflow += 1
                for route in self.routes:
                    route.lost += 1
            if scope.parent is None or scope.parent.hold is not hold:  # the held turn itself ended
                if hold.error:
                    for spans in hold.spans:
                        for index, span in spans:
                            self.routes[index].submit(span)
                else:
                    self.counts["sampled_out"] += len(hold.spans)
                hold.spans.clear()
        else:
            self.counts["sampled_out"] += 1
        if event.parent_uuid is None:
            self._purge(event.root_uuid or event.uuid)

    def _purge(self, root: int) -> None:
        """A trace ended: forget scopes of it whose end never came (dropped upstream)."""
        stale = [uuid for uuid, scope in self.open.items() if (scope.start.root_uuid or uuid) == root]
        for uuid in stale:
            del self.open[uuid]
        if stale:
            self.counts["lost_open"] += len(stale)
            self.lost_shared += len(stale)

    def _mark(self, mark: ScopeEvent) -> None:
        routes = [i for i, route in enumerate(self.routes) if route.wants_mark(mark.name)]
        if not routes:
            return
        parent = mark.parent_uuid
        target = self.open.get(parent) if parent is not None else None
        if target is None and parent is not None:
            closed = self.recent.get(parent)
            target = closed.open_ancestor() if closed is not None else None
        for index in routes:  # zero-length spans (mark_projection = "tool") need no open parent
            route = self.routes[index]
            if route.endpoint.type != "gen_ai" and route.endpoint.mark_projection == "tool" and parent is not None:
                owner = target or self.recent.get(parent)
                if owner is None or owner.sampled:
                    route.submit(self._mark_span(route, mark, owner))
        if not any(self.routes[i].endpoint.type == "gen_ai" or self.routes[i].endpoint.mark_projection == "event"
                   for i in routes):
            return
        if target is None:
            self.counts["marks_orphaned"] += 1
            return
        if target.marks is None:
            target.marks = []
        target.marks.append(mark)

    # ------------------------------------------------------------------ spans

    def _build(self, scope: OpenScope, end: ScopeEvent) -> list[tuple[int, SpanRecord]]:
        out: list[tuple[int, SpanRecord]] = []
        for index, route in enumerate(self.routes):
            if scope.session_level and route.endpoint.trace_grouping == "turn":
                # The session scope is no span here, so the marks it carries (compaction, segments, a context
                # snapshot outside a turn) would have nowhere to go: each becomes a one-span trace of its own.
                # (Routes with mark_projection = "tool" already sent them as spans when they arrived.)
                if route.endpoint.type == "gen_ai" or route.endpoint.mark_projection == "event":
                    out.extend((index, self._mark_span(route, mark, scope))
                               for mark in scope.marks or () if route.wants_mark(mark.name))
                continue
            span = self._span(route, scope, end)
            if span is not None:
                out.append((index, span))
        self.counts["spans_built"] += 1
        return out

    def _span(self, route: Route, scope: OpenScope, end: ScopeEvent) -> SpanRecord | None:
        endpoint = route.endpoint
        opt = self.options
        kind = endpoint.type
        by_turn = endpoint.trace_grouping == "turn"
        if by_turn and scope.session_level:
            return None  # traces grouped by turn: the session scope is no span
        if kind == "gen_ai" and scope.folded:
            return None  # a subagent's own turn: its work hangs under the subagent's invoke_agent span
        if kind == "gen_ai":
            name, span_kind, attrs = genai_span(scope, end, endpoint.agent_name, opt, turn_grouping=by_turn)
        elif kind == "full":
            name, span_kind, attrs = full_span(scope, end, opt)
        else:
            name, span_kind, attrs = openinference_span(scope, end, endpoint.agent_name, opt, turn_grouping=by_turn)
        if endpoint.langfuse or by_turn:  # backends group the traces of a session by session.id
            if isinstance(scope.root_session, str):
                attrs["session.id"] = scope.root_session
                if "gen_ai.conversation.id" not in attrs:
                    own = end.metadata.get("hermes.session_id") or scope.start.metadata.get("hermes.session_id")
                    attrs["gen_ai.conversation.id"] = own if isinstance(own, str) and own else scope.root_session
            if opt.gate_open and scope.user_id:
                attrs["user.id"] = scope.user_id
        if endpoint.promote_metadata_prefixes:
            promote(attrs, endpoint.promote_metadata_prefixes, (scope.start.metadata, end.metadata), self.problems)
        if kind != "gen_ai" and endpoint.attribute_mappings:
            apply_mappings(attrs, endpoint.attribute_mappings)
        events = []
        marks = [*(scope.marks or ()), *(scope.folded_marks or ())] if kind == "gen_ai" else scope.marks or ()
        for mark in marks:
            if not route.wants_mark(mark.name):
                continue
            if kind == "gen_ai":
                events.append(Event(mark.name, mark_attrs(mark.name, mark.data, mark.profile, opt.gate_open),
                                    mark.timestamp_us * 1000))
            elif endpoint.mark_projection == "event":
                events.append(Event(mark.name, mark_attributes(mark, opt.gate_open), mark.timestamp_us * 1000))
        status, failure = span_status(end, opt.gate_open, ok_on_success=kind == "openinference")
        events.extend(failure)
        start = scope.start
        unit = scope.unit
        if by_turn and unit is not None:
            trace_id = unit.unit_trace
            root = unit is scope
        else:
            trace_id = scope.trace
            root = scope.parent is None
        if root:
            app = scope.app_parent
            parent = None if app is None else SpanContext(trace_id, app.span_id, app.remote)
        else:
            holder = scope.parent
            if kind == "gen_ai" and holder is not None and holder.folded:
                holder = holder.parent  # the folded subagent turn's work hangs under the subagent span
            parent = SpanContext(trace_id, _parent_span(holder, start.parent_uuid))
        return SpanRecord(name, SpanContext(trace_id, scope.span_id), parent, span_kind, attrs, events, status,
                          start.timestamp_us * 1000, end.timestamp_us * 1000, route.resource, route.scope)

    def _mark_span(self, route: Route, mark: ScopeEvent, owner: OpenScope | None) -> SpanRecord:
        genai = route.endpoint.type == "gen_ai"  # GenAI names only (FMT-62), host work of no operation of its own
        attrs = {"gen_ai.operation.name": "invoke_workflow", **mark_attrs(mark.name, mark.data, mark.profile,
                 self.options.gate_open)} if genai else mark_attributes(mark, self.options.gate_open)
        if route.endpoint.attribute_mappings and not genai:
            apply_mappings(attrs, route.endpoint.attribute_mappings)
        parent_uuid = mark.parent_uuid
        holder = None if parent_uuid is None else self.open.get(parent_uuid) or self.recent.get(parent_uuid)
        derived = self.derived_ids
        trace_id = holder.trace if holder is not None else (mark.root_uuid or mark.uuid) if derived \
            else random_trace_id()
        if route.endpoint.trace_grouping == "turn":  # in its turn's trace; outside any turn a trace of its own
            unit = owner.unit if owner is not None else None
            if unit is None:
                parent_uuid, trace_id = None, mark.uuid if derived else random_trace_id()
            else:
                trace_id = unit.unit_trace
            session = owner.root_session if owner is not None else mark.metadata.get("hermes.session_id")
            if isinstance(session, str) and session:
                attrs["session.id"] = attrs["gen_ai.conversation.id"] = session
        parent = None if parent_uuid is None else SpanContext(trace_id, _parent_span(holder, parent_uuid))
        own = span_id(mark.uuid) if derived else random_span_id()
        return SpanRecord(mark.name, SpanContext(trace_id, own), parent, SpanKind.INTERNAL, attrs, [],
                          _UNSET, mark.timestamp_us * 1000, mark.timestamp_us * 1000, route.resource, route.scope)

    # ------------------------------------------------------------------ teardown

    def abandon_open(self) -> int:
        """Forget every scope still open (the sink is shutting down); returns how many spans were lost."""
        lost = len(self.open)
        self.open.clear()
        self.recent.clear()
        self.counts["lost_open"] += lost
        self.lost_shared += lost
        return lost
