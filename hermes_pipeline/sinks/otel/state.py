"""Per-scope state of the OTLP span builder and the options every projection reads (spec 04 §4).

An :class:`OpenScope` is created when a scope's start event reaches the span builder and is
turned into one span per trace endpoint when the end event arrives (FMT-55). It carries what a
projection needs beyond the two events: facts inherited from the ancestors (trajectory id,
sampling decision, the root session id, the sender), facts collected from the descendants (the
provider of the first LLM call of an agent scope, FMT-63) and the marks attached to it (FMT-65).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...engine.trace_parent import TraceParent, random_span_id, random_trace_id
from ...export.ids import uuid_str
from .attrs import span_id

if TYPE_CHECKING:
    from ...export.events import ScopeEvent


@dataclass(frozen=True)
class Options:
    """Component-level projection options.

    Attributes:
        gate_open: content fields exported verbatim (FMT-30) instead of summarised.
        summary_mode: ``preview`` / ``digest`` / ``off`` when the gate is closed (FMT-31).
        sampling_rate: the turn sampling rate (BOOK-46), reported as ``hermes.sampling_rate``.
        agent_version: ``gen_ai.agent.version`` of sessions, when known.
    """

    gate_open: bool = False
    summary_mode: str = "preview"
    sampling_rate: float = 1.0
    agent_version: str | None = None


class Held:
    """Spans of an unsampled turn kept until it ends, for ``always_sample_errors`` (FMT-74)."""

    __slots__ = ("error", "overflow", "spans")

    LIMIT = 1000

    def __init__(self) -> None:
        self.spans: list[list[tuple[int, Any]]] = []
        """Per held scope, its ``(endpoint position, span)`` pairs."""
        self.error = False
        self.overflow = 0


class OpenScope:
    """A scope whose start was seen and whose span is not built yet (see the module docstring)."""

    __slots__ = ("agent", "app_parent", "attempt", "attempts", "closed", "folded", "folded_marks", "hold", "marks",
                 "model", "offered", "parent",
                 "provider", "quiet_llm", "root_session", "sampled", "session_level", "span_id", "start", "trace", "trajectory", "trajectory_id",
                 "unit", "unit_trace", "user_id")

    def __init__(self, start: ScopeEvent, parent: OpenScope | None, derived: bool = False) -> None:
        self.start = start
        self.parent = parent
        self.closed = False
        self.marks: list[ScopeEvent] | None = None
        self.folded = False
        """A subagent's own turn (``agent.run`` directly under a subagent's agent scope): no span in the ``gen_ai``
        projection, whose subagent ``invoke_agent`` span stands for the whole run (issue #30)."""
        self.folded_marks: list[ScopeEvent] | None = None
        """Subagent agent scopes: the marks of their folded turn, span events of the ``gen_ai`` span."""
        self.provider: str | None = None
        """Agent and turn scopes: ``hermes.provider`` of the first LLM call inside (FMT-63)."""
        self.offered: dict[str, dict[str, Any]] | None = None
        """Turn and agent scopes: the tools offered to the model by the latest LLM call inside, by name."""
        self.model: str | None = None
        """Agent scopes: model of the first LLM call inside (fallback for ``gen_ai.request.model``)."""
        self.attempts: dict[str, int] | None = None
        """Turn / agent scopes: attempts seen per ``api_request_id`` (``hermes.llm.attempt``)."""
        self.attempt = 0
        self.session_level: bool = start.category == "agent" and (parent is None or parent.session_level)
        """A session scope outside any turn (not a span when traces are grouped by turn)."""
        self.unit: OpenScope | None = None
        """With traces grouped by turn, the root of this scope's trace: the outermost ``agent.run`` around it
        (itself included), or, outside any turn, the topmost scope under the session; ``None`` for a
        session scope."""
        if not self.session_level:
            self.unit = self if parent is None or parent.session_level else parent.unit
        unit = self.unit
        if derived:  # ids = "uuid": FMT-56 as written, derived from the scope UUIDs
            self.span_id = span_id(start.uuid)
            self.trace = start.root_uuid or start.uuid
            self.unit_trace = unit.start.uuid if unit is not None else 0
        else:
            self.span_id = random_span_id()
            """Random (issue #30: collectors sample on the low bits; W3C and the SDK want random ids); the scope
            UUID stays in ``hermes.trajectory_id`` and ATOF / ATIF."""
            self.trace = random_trace_id() if parent is None else parent.trace
            """The trace id with ``trace_grouping = "session"``: the root scope's."""
            self.unit_trace = random_trace_id() if unit is self else (unit.unit_trace if unit is not None else 0)
            """The trace id with ``trace_grouping = "turn"``: the turn's (the unit root's)."""
        self.quiet_llm = False
        """A GenAI instrumentation records this turn's LLM calls: its ``llm`` scopes are no spans here."""
        self.app_parent: TraceParent | None = None
        """Root scopes (the turn with ``turn`` grouping, the session with ``session``): the application's
        span this trace joins (:mod:`hermes_pipeline.engine.trace_parent`)."""
        meta = start.metadata
        if parent is None:
            self.agent: OpenScope | None = self if start.category == "agent" else None
            self.trajectory = start.uuid if start.name == "agent.run" else start.root_uuid or start.uuid
            self.trajectory_id = uuid_str(self.trajectory)
            self.sampled = True
            self.hold: Held | None = None
            self.user_id: str | None = None
            self.root_session: Any = meta.get("hermes.session_id")
        else:
            self.agent = self if start.category == "agent" else parent.agent
            if start.name == "agent.run":
                self.trajectory = start.uuid
                self.trajectory_id = uuid_str(start.uuid)
            else:
                self.trajectory, self.trajectory_id = parent.trajectory, parent.trajectory_id
            self.sampled = parent.sampled
            self.hold = parent.hold
            self.user_id = parent.user_id
            self.root_session = parent.root_session
        sender = meta.get("hermes.sender_id")
        if isinstance(sender, str) and sender:
            self.user_id = sender

    def in_turn(self) -> bool:
        """Whether an ``agent.run`` scope encloses this scope (or is this scope)."""
        scope: OpenScope | None = self
        while scope is not None:
            if scope.start.name == "agent.run":
                return True
            scope = scope.parent
        return False

    def counter_owner(self) -> OpenScope:
        """The nearest turn or agent scope (ancestor or self): where LLM attempts are counted."""
        scope: OpenScope | None = self.parent
        while scope is not None:
            if scope.start.name == "agent.run" or scope.start.category == "agent":
                return scope
            scope = scope.parent
        return self

    def open_ancestor(self) -> OpenScope | None:
        """This scope if still open, else its nearest still-open ancestor (FMT-65)."""
        scope: OpenScope | None = self
        while scope is not None and scope.closed:
            scope = scope.parent
        return scope
