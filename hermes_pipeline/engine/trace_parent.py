"""The application's OpenTelemetry context a turn runs in: W3C ``traceparent`` parsing and the hand-over
from the host's thread to the OTLP span builder (spec 04 FMT-56b, issue #30).

A host that runs inside an OpenTelemetry trace (an active span of the application's own tracer, or a
``traceparent`` header a gateway received) wants the agent's spans in that trace. The host API records the
parent of each session and turn here, on the caller's thread, before the turn's first hook fires:

- an explicit parent (``host.session(..., traceparent=...)``, ``session.turn(..., traceparent=...)``, or an
  OpenTelemetry ``Context`` / ``Span`` / ``SpanContext`` as ``parent=``) always;
- otherwise the application's active span (``opentelemetry.trace.get_current_span()``), captured only while
  an OTLP trace pipeline is active in this process (:func:`enable`) and the ``opentelemetry`` API is
  importable: a pipeline without OTLP pays one boolean test per turn.

The span builder (its own worker thread) reads the parent when the turn's ``agent.run`` scope starts
(:func:`lookup`). The table is bounded (oldest entries forgotten first) and in-process: an OTel sink
running in a worker process (``opentelemetry.worker``) does not see it (documented in docs/backends.md).
"""

from __future__ import annotations

import random
import re
import sys
import threading
from dataclasses import dataclass
from typing import Any, Callable, Final

__all__ = ["TraceParent", "TraceparentError", "capture_current", "enable", "enabled", "format_traceparent",
           "lookup", "parse_traceparent", "random_span_id", "random_trace_id", "remember", "resolve_parent", "session_started", "turn_started", "TurnIds", "lookup_turn", "outgoing_headers", "set_propagation", "enter_turn", "exit_turn"]

_TRACEPARENT: Final = re.compile(r"([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?")
_LIMIT: Final = 4096
_SAMPLED: Final = 0x01


class TraceparentError(ValueError):
    """A ``traceparent`` value that is not a valid W3C Trace Context header (the message says which part)."""


@dataclass(frozen=True, slots=True)
class TraceParent:
    """The parent span of a turn's trace: ids, the sampled flag, and whether it came from another process."""

    trace_id: int
    span_id: int
    sampled: bool
    remote: bool = True
    trace_state: str | None = None

    @property
    def traceparent(self) -> str:
        """The W3C ``traceparent`` header value of this parent."""
        return format_traceparent(self.trace_id, self.span_id, self.sampled)


def parse_traceparent(value: str, tracestate: str | None = None) -> TraceParent:
    """Parse a W3C ``traceparent`` header (Trace Context Level 1/2).

    Version ``00`` must be exactly ``00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>``; a higher
    version may carry more fields after a ``-`` (ignored, as the W3C spec asks); version ``ff``, upper-case
    hex and all-zero ids are invalid.

    Raises:
        TraceparentError: naming the part that is wrong (never echoing the value).
    """
    if not isinstance(value, str):
        raise TraceparentError(f"traceparent: expected a string, got {type(value).__name__}")
    text = value.strip()
    match = _TRACEPARENT.fullmatch(text)
    if match is None:
        raise TraceparentError("traceparent: expected '<version>-<32 lower-case hex trace id>-<16 lower-case hex "
                               "parent id>-<2 hex flags>'")
    version, trace, span, flags, rest = match.groups()
    if version == "ff":
        raise TraceparentError("traceparent: version 'ff' is invalid")
    if version == "00" and rest:
        raise TraceparentError("traceparent: version 00 has exactly four fields")
    trace_id, span_id = int(trace, 16), int(span, 16)
    if trace_id == 0:
        raise TraceparentError("traceparent: the trace id is all zeros")
    if span_id == 0:
        raise TraceparentError("traceparent: the parent id is all zeros")
    state = tracestate.strip() if isinstance(tracestate, str) and tracestate.strip() else None
    return TraceParent(trace_id, span_id, bool(int(flags, 16) & _SAMPLED), True, state)


def format_traceparent(trace_id: int, span_id: int, sampled: bool = True) -> str:
    """``00-<trace id>-<span id>-<01|00>``."""
    return f"00-{trace_id:032x}-{span_id:016x}-{'01' if sampled else '00'}"


def random_trace_id() -> int:
    """A random, non-zero 128-bit trace id (as the SDK's ``RandomIdGenerator`` draws them)."""
    value = random.getrandbits(128)
    while value == 0:  # pragma: no cover - 2^-128
        value = random.getrandbits(128)
    return value


def random_span_id() -> int:
    """A random, non-zero 64-bit span id."""
    value = random.getrandbits(64)
    while value == 0:  # pragma: no cover - 2^-64
        value = random.getrandbits(64)
    return value


def from_otel(value: Any) -> TraceParent | None:
    """The parent named by an OpenTelemetry ``Context``, ``Span`` or ``SpanContext``; ``None`` when it names no
    valid span (an empty context, ``INVALID_SPAN``)."""
    context = value
    if hasattr(value, "get_span_context"):
        context = value.get_span_context()
    elif isinstance(value, dict) or type(value).__name__ == "Context":  # an opentelemetry.context.Context
        from opentelemetry import trace

        context = trace.get_current_span(value).get_span_context()
    trace_id = getattr(context, "trace_id", 0)
    span_id = getattr(context, "span_id", 0)
    if not isinstance(trace_id, int) or not isinstance(span_id, int) or not trace_id or not span_id:
        return None
    flags = int(getattr(context, "trace_flags", 0) or 0)
    state = getattr(context, "trace_state", None)
    text = ",".join(f"{k}={v}" for k, v in state.items()) if state else None
    return TraceParent(trace_id, span_id, bool(flags & _SAMPLED), bool(getattr(context, "is_remote", False)),
                       text or None)


def resolve_parent(traceparent: str | None = None, parent: Any = None, tracestate: str | None = None) -> TraceParent | None:
    """An explicit parent given to the host API: a ``traceparent`` string, or an OpenTelemetry context object
    (``Context``, ``Span``, ``SpanContext``) or a :class:`TraceParent`.

    Raises:
        TraceparentError: for a malformed ``traceparent`` or when both are given.
    """
    if traceparent is not None and parent is not None:
        raise TraceparentError("pass either traceparent or parent, not both")
    if traceparent is not None:
        return parse_traceparent(traceparent, tracestate)
    if parent is None or isinstance(parent, TraceParent):
        return parent
    return from_otel(parent)


# ------------------------------------------------------------------ the caller-thread capture

_lock = threading.Lock()
_users = 0
_get_span: Callable[[], Any] | None = None


def enable() -> bool:
    """An OTLP trace pipeline starts: capture the application's active span at every turn start from now on.

    Returns whether the ``opentelemetry`` API is importable (without it nothing is captured). Pair every
    call with :func:`disable`.
    """
    global _users, _get_span
    with _lock:
        _users += 1
        if _get_span is None:
            try:
                from opentelemetry import trace
            except ImportError:
                return False
            _get_span = trace.get_current_span
        return True


def disable() -> None:
    """An OTLP trace pipeline stopped (see :func:`enable`)."""
    global _users
    with _lock:
        _users = max(_users - 1, 0)


def enabled() -> bool:
    """Whether an OTLP trace pipeline of this process wants the application's context."""
    return _users > 0 and _get_span is not None


def capture_current() -> TraceParent | None:
    """The application's active span on this thread, when an OTLP pipeline is active (else ``None``)."""
    get = _get_span
    if _users <= 0 or get is None:
        return None
    try:
        context = get().get_span_context()
    except Exception:  # a broken API shim never breaks the host
        return None
    if not context.is_valid:
        return None
    state = context.trace_state
    return TraceParent(context.trace_id, context.span_id, bool(context.trace_flags & _SAMPLED), context.is_remote,
                       ",".join(f"{k}={v}" for k, v in state.items()) if state else None)


# ------------------------------------------------------------------ host → span builder


class TurnIds:
    """A turn's OTLP identity drawn on the host's thread: its parent (or ``None``), trace id and root span id,
    and whether a foreign GenAI instrumentation records its LLM calls (then ours step aside). (A plain slotted
    class: one is made per turn on the host's thread, and a frozen dataclass costs several times more.)"""

    __slots__ = ("foreign_genai", "parent", "span_id", "trace_id")

    def __init__(self, parent: TraceParent | None, trace_id: int, span_id: int, foreign_genai: bool = False) -> None:
        self.parent = parent
        self.trace_id = trace_id
        self.span_id = span_id
        self.foreign_genai = foreign_genai

    @property
    def sampled(self) -> bool:
        return self.parent.sampled if self.parent is not None else True

    def headers(self) -> dict[str, str]:
        """``traceparent`` (and ``tracestate``) naming the turn's root span, for an outgoing request."""
        out = {"traceparent": format_traceparent(self.trace_id, self.span_id, self.sampled)}
        if self.parent is not None and self.parent.trace_state:
            out["tracestate"] = self.parent.trace_state
        return out


_parents: dict[tuple[str, str], TraceParent | TurnIds] = {}
"""Insertion-ordered: the oldest entries are forgotten first. Reads take no lock (one ``dict.get`` is atomic)."""


def remember(session_id: str, turn_id: str, parent: TraceParent | TurnIds | None) -> None:
    """Record the parent of a turn (``turn_id``) or of a whole session (``turn_id = ""``)."""
    if parent is None:
        return
    parents = _parents
    with _lock:
        parents.pop((session_id, turn_id), None)
        parents[(session_id, turn_id)] = parent
        if len(parents) > _LIMIT:
            del parents[next(iter(parents))]


def session_started(session_id: str, traceparent: str | None = None, parent: Any = None) -> str:
    """A session opens with an explicit parent for all its turns (host API); returns ``session_id``.

    Raises:
        TraceparentError: for a malformed ``traceparent``.
    """
    remember(session_id, "", resolve_parent(traceparent, parent))
    return session_id


def turn_started(session_id: str, turn_id: str, traceparent: str | None = None, parent: Any = None) -> None:
    """A turn starts (host API, caller's thread): record its explicit parent, else (an OTLP pipeline on, the
    session without an explicit parent) the application's active span.

    Raises:
        TraceparentError: for a malformed ``traceparent``.
    """
    explicit = resolve_parent(traceparent, parent)
    if _users <= 0 or _get_span is None:  # no OTLP pipeline: only an explicit parent is kept
        remember(session_id, turn_id, explicit)
        return
    if explicit is None:
        explicit = lookup(session_id) or capture_current()
    # the turn's trace id and root span id are drawn here, on the caller's thread, so that outgoing requests can
    # carry them (traceparent) before the span builder has seen the turn
    trace_id = explicit.trace_id if explicit is not None else random_trace_id()
    remember(session_id, turn_id, TurnIds(explicit, trace_id, random_span_id(), _foreign_genai()))


def lookup(session_id: Any, turn_id: Any = "") -> TraceParent | None:
    """The parent recorded for a turn, else for its session, else ``None``."""
    found = lookup_turn(session_id, turn_id) if turn_id else None
    if isinstance(found, TurnIds):
        return found.parent
    if found is not None:
        return found
    if not isinstance(session_id, str):
        return None
    session = _parents.get((session_id, ""))
    return session if isinstance(session, TraceParent) else None


def lookup_turn(session_id: Any, turn_id: Any) -> TraceParent | TurnIds | None:
    """What the host recorded for one turn (:class:`TurnIds` while an OTLP pipeline is on)."""
    if not isinstance(session_id, str) or not isinstance(turn_id, str) or not turn_id:
        return None
    return _parents.get((session_id, turn_id))


# ------------------------------------------------------------------ outgoing requests and foreign instrumentations

_propagate = True


def set_propagation(on: bool) -> None:
    """``opentelemetry.propagate_traceparent``: whether :func:`outgoing_headers` gives headers (default on)."""
    global _propagate
    _propagate = bool(on)


def outgoing_headers(session_id: str, turn_id: str) -> dict[str, str]:
    """W3C headers for a provider request of this turn (empty without an OTLP pipeline or with propagation off):
    the provider's and HTTP client's spans then join the turn's trace, as children of the turn's root span."""
    if not _propagate or _users <= 0:
        return {}
    found = lookup_turn(session_id, turn_id)
    return found.headers() if isinstance(found, TurnIds) else {}


GENAI_INSTRUMENTATIONS: Final = ("opentelemetry.instrumentation.openai_v2",)
"""Modules of GenAI instrumentations that record every LLM call as a span of their own. While one of them is
instrumented, the agent's own ``chat`` spans step aside (see docs/backends.md, "One span per LLM call")."""


def _foreign_genai() -> bool:
    modules = sys.modules
    for name in GENAI_INSTRUMENTATIONS:
        module = modules.get(name)
        if module is None:
            continue
        instrumentor = getattr(module, "OpenAIInstrumentor", None)
        if instrumentor is not None:
            try:
                if getattr(instrumentor(), "is_instrumented_by_opentelemetry", False):
                    return True
            except Exception:
                continue
    return False


def enter_turn(session_id: str, turn_id: str) -> object | None:
    """Make the turn's root span the current OpenTelemetry span while the provider is called ("ours parents
    theirs"): spans that instrumentations open inside (HTTP clients, a GenAI instrumentation) join the turn's
    trace under it. Returns a token for :func:`exit_turn`, or ``None`` (no OTLP pipeline, nothing recorded)."""
    if _users <= 0 or _get_span is None:
        return None
    found = lookup_turn(session_id, turn_id)
    if not isinstance(found, TurnIds):
        return None
    try:
        from opentelemetry import context, trace

        flags = trace.TraceFlags(trace.TraceFlags.SAMPLED if found.sampled else trace.TraceFlags.DEFAULT)
        span = trace.NonRecordingSpan(trace.SpanContext(found.trace_id, found.span_id, False, flags))
        return context.attach(trace.set_span_in_context(span))
    except Exception:  # an API shim without these names: nothing is attached
        return None


def exit_turn(token: object | None) -> None:
    """Undo :func:`enter_turn`."""
    if token is None:
        return
    try:
        from opentelemetry import context

        context.detach(token)  # type: ignore[arg-type]
    except Exception:
        pass
