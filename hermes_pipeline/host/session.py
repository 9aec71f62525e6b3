"""The host instrumentation API: :class:`Host` (one per profile / runtime) and :class:`Session`.

A host author creates one :class:`Host` with the runtime facts every payload carries (platform,
model, provider, base URL, API mode), then for each conversation::

    with host.session() as session:            # on_session_finalize when the block ends
        with session.turn("hello") as turn:     # pre_llm_call now, on_session_end at the end
            response = turn.call_llm(request, provider_call)
            text = turn.call_tool("read_file", {"path": "a.txt"}, read_file, tool_call_id="call_1")
            turn.complete(final_text)           # transform_llm_output, post_llm_call

Every method is fail-open: a failing plugin never raises into the host.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final, TypeAlias

from ..engine import ids, trace_parent
from ..engine.core import Engine
from .context import current_context
from .interaction import Approval, HumanInput
from .segments import SegmentPolicy, SegmentState
from .turn import Turn  # at import time: a function-level import costs each turn about a microsecond

if TYPE_CHECKING:
    from .subagent import SubagentRun

logger: Final = logging.getLogger("hermes_pipeline.host")

HISTORY_LIMIT: Final = 200

ToolsetSource: TypeAlias = Mapping[str, str] | Callable[[str], "str | None"]
"""The host's tool registry: a ``tool name → toolset`` mapping, or a function answering the same."""

VERSIONED_HOOKS: Final = frozenset({"on_session_start", "pre_llm_call"})
"""Hooks whose payloads carry the host's ``agent_version`` (when the host declared one)."""
"""``subagent_stop.tool_call_history`` keeps at most this many newest entries (OBS-49)."""


def _default_engine() -> Engine:
    from ..runtime import get_engine

    return get_engine()


class Host:
    """What an agent runtime holds to report its lifecycle to ``hermes_pipeline``.

    Args:
        engine: the engine to dispatch to; the process-wide default when omitted.
        platform: execution surface (``cli``, ``gateway``, ...).
        model, provider, base_url, api_mode: the configured provider route, copied into payloads.
        segments: session segmentation policy from the profile's ``config.yaml``.
        agent_version: the host agent's own version (e.g. ``"0.19.0"`` for Hermes Agent). It rides on
            ``on_session_start`` and ``pre_llm_call`` as ``agent_version`` and becomes ATIF
            ``agent.version`` (unless ``atif.agent_version`` is configured) and the shared-metrics
            ``resource.hermes_version``. Without it those fall back to this package's version.
        toolsets: the host's tool registry, ``tool name → toolset`` (a mapping, or a function
            returning the toolset or ``None``). ``pre_tool_call`` / ``post_tool_call`` then carry
            ``toolset``, from which shared metrics derive ``tool_category`` (a tool it does not know is
            ``unknown``, an unrecognised toolset ``other``).
    """

    def __init__(
        self,
        engine: Engine | None = None,
        *,
        platform: str = "cli",
        model: str = "",
        provider: str = "",
        base_url: str = "",
        api_mode: str = "chat_completions",
        segments: SegmentPolicy | None = None,
        agent_version: str | None = None,
        toolsets: ToolsetSource | None = None,
    ) -> None:
        if agent_version is not None and not isinstance(agent_version, str):
            raise TypeError(f"agent_version must be a str or None, not {type(agent_version).__name__}")
        if toolsets is not None and not (isinstance(toolsets, Mapping) or callable(toolsets)):
            raise TypeError(f"toolsets must be a mapping or a callable, not {type(toolsets).__name__}")
        self.engine = engine if engine is not None else _default_engine()
        self.segments = segments or SegmentPolicy()
        """Session segmentation policy (spec 03 §14); the default keeps one scope per session."""
        self.platform = platform
        self.model = model
        self.provider = provider
        self.base_url = base_url
        self.api_mode = api_mode
        self.agent_version: str | None = (agent_version.strip() or None) if agent_version is not None else None
        """The host agent's version (stripped; ``None`` when not declared)."""
        self.toolsets = toolsets
        """The host's tool registry as given (``None``: tool hooks carry no ``toolset``)."""

    def toolset_of(self, tool_name: str) -> str | None:
        """The toolset declaring ``tool_name`` in the host's registry; ``None`` when unknown. Never raises."""
        source = self.toolsets
        if source is None:
            return None
        try:
            toolset = source.get(tool_name) if isinstance(source, Mapping) else source(tool_name)
        except Exception as exc:  # a failing registry lookup never breaks the tool call
            logger.debug("hermes_pipeline: toolset lookup for %r failed: %s", tool_name, exc)
            return None
        return toolset if isinstance(toolset, str) and toolset else None

    def context_snapshot(self, home: str | Path | None = None, *, toolsets: Iterable[str] | None = None,
                         config: Any = None, skills_dir: str = "skills",
                         memory_dirs: Iterable[str] = ("memories",)) -> dict[str, Any]:
        """A context snapshot of this host for ``session.turn(..., context=...)``: its model and provider,
        the given toolsets, the SHA-256 of ``config``, and the skill and memory hashes of the profile at
        ``home`` (see :func:`hermes_pipeline.host.snapshot.context_snapshot`)."""
        from .snapshot import context_snapshot

        return context_snapshot(home, model=self.model, provider=self.provider, toolsets=toolsets, config=config,
                                skills_dir=skills_dir, memory_dirs=memory_dirs)

    def session(self, session_id: str | None = None, *, resumed: bool = False, traceparent: str | None = None,
                parent: Any = None) -> Session:
        """Open a session. ``on_session_start`` fires before its first turn unless ``resumed``. ``traceparent`` (W3C
        header) or ``parent`` (OpenTelemetry ``Context`` / ``Span`` / ``SpanContext``): the OTLP parent of its turns
        (:mod:`~hermes_pipeline.engine.trace_parent`; a bad ``traceparent`` raises ``TraceparentError``)."""
        sid = session_id or ids.new_session_id()
        return Session(self, trace_parent.session_started(sid, traceparent, parent), resumed=resumed)

    def emit(self, hook: str, payload: dict[str, Any]) -> list[Any]:
        """Dispatch ``hook`` if anyone listens; never raises ``Exception`` (OBS-15, OBS-23).

        ``on_session_start`` and ``pre_llm_call`` payloads gain the host's ``agent_version`` when
        they lack one (so payloads an adapter forwards through here carry it too).
        """
        engine = self.engine
        if hook not in engine.hook_listeners:
            return []
        if self.agent_version is not None and hook in VERSIONED_HOOKS and payload.get("agent_version") is None:
            payload = {**payload, "agent_version": self.agent_version}
        try:
            return engine.dispatch(hook, payload)
        except Exception as exc:  # pragma: no cover - dispatch already isolates callbacks
            logger.debug("hermes_pipeline: dispatch of %s failed: %s", hook, exc)
            return []
        except BaseException as exc:  # Ctrl-C, exit, cancellation: propagates, but the turn closes first
            turn = current_context().turn
            if turn is not None:
                turn.hook_raised(exc)
            raise

    def skill_lifecycle(self, action: str, skill_name: str, *, provenance: str | None = None,
                        reason: str | None = None, session_id: str | None = None, turn_id: str | None = None,
                        use_count: int | None = None, reused: bool | None = None,
                        reuse_after_patch: bool | None = None) -> None:
        """Report a skill mutation or load that succeeded (``on_skill_lifecycle``, FMT-24 rows 18-20).

        ``action`` is ``created``, ``patched``, ``edited``, ``file_written``, ``file_removed`` (a
        supporting file), ``stale``, ``archived``, ``deleted``, ``restored``, ``installed`` or ``loaded``; ``reason`` the natural-language reason of a change (never
        invented); the session and turn default to the calling code's. A load inside a turn opens
        a ``skill.run`` scope that ends with the turn. Raises ``ValueError`` for an unknown action
        or a skill name that is not a directory name; never raises from listeners.
        """
        from .skills import report_skill

        report_skill(self, action, skill_name, provenance=provenance, reason=reason, session_id=session_id,
                     turn_id=turn_id, use_count=use_count, reused=reused, reuse_after_patch=reuse_after_patch)

    def approval(
        self,
        command: str,
        *,
        description: str = "",
        pattern_key: str = "",
        pattern_keys: list[str] | None = None,
        session_key: str = "",
        surface: str | None = None,
    ) -> Approval:
        """Start an approval prompt (``pre_approval_request`` now); see :class:`Approval`.

        ``turn_id``, ``tool_call_id`` and ``session_id`` come from the current call context.
        """
        ctx = current_context()
        return Approval(
            self,
            {
                "command": command,
                "description": description,
                "pattern_key": pattern_key,
                "pattern_keys": list(pattern_keys if pattern_keys is not None else ([pattern_key] if pattern_key else [])),
                "session_key": session_key,
                "surface": surface or ("gateway" if self.platform == "gateway" else "cli"),
                "turn_id": ctx.turn.turn_id if ctx.turn is not None else "",
                "tool_call_id": ctx.tool_call_id,
                "session_id": ctx.session.session_id if ctx.session is not None else "",
            },
        )

    def human_input(
        self, kind: str, prompt: str, *, session_key: str = "", metadata: Mapping[str, Any] | None = None
    ) -> HumanInput:
        """Start a human-input wait (``on_human_input_request`` now); see :class:`HumanInput`.

        ``prompt`` is always redacted (OBS-64); ``metadata`` must not contain human answers.
        """
        ctx = current_context()
        return HumanInput(
            self,
            kind=kind,
            prompt=prompt,
            session_id=ctx.session.session_id if ctx.session is not None else "",
            session_key=session_key,
            metadata=metadata,
        )


class Session:
    """One conversation identity. Use as a context manager, or call :meth:`finalize` yourself."""

    def __init__(
        self,
        host: Host,
        session_id: str,
        *,
        resumed: bool = False,
        subagent: SubagentRun | None = None,
    ) -> None:
        self.host = host
        self.session_id = session_id
        self.subagent = subagent
        """The :class:`SubagentRun` when this session is a delegated child, else ``None``."""
        self._started = resumed
        self._resumed = resumed
        self._finalized = False
        self._lock = threading.Lock()
        self.turn_count = 0
        self._history: deque[dict[str, Any]] | None = None
        self.history_seen = 0
        self.segments = SegmentState()
        """Segment number and turn counters of this session (spec 03 §14)."""
        self._pending_rotation: str | None = None

    @property
    def subagent_id(self) -> str | None:
        """This session's subagent ID when it is a delegated child, else ``None``."""
        return self.subagent.child_subagent_id if self.subagent is not None else None

    # ------------------------------------------------------------------ turns

    def turn(
        self,
        user_message: str,
        *,
        conversation_history: list[dict[str, Any]] | None = None,
        task_id: str | None = None,
        turn_id: str | None = None,
        sender_id: str | None = None,
        context: Mapping[str, Any] | None = None,
        traceparent: str | None = None, parent: Any = None,
    ) -> Turn:
        """Start a user turn now (``on_session_start`` first if due, then ``pre_llm_call``).

        Use it as a context manager so the turn always ends (``on_session_end``) with the right
        status, also on exceptions and cancellation.

        ``context`` is an optional context snapshot of the run (see :meth:`Host.context_snapshot`:
        model, provider, toolsets, configuration hash, skill and memory hashes); it is reported right
        after ``pre_llm_call`` (``on_context_snapshot``) and recorded in the run's trajectory;
        ``traceparent`` / ``parent``: this turn's OTLP parent (see :meth:`Host.session`).
        """
        with self._lock:
            first = self.turn_count == 0 and not self._resumed
            self.turn_count += 1
            start = not self._started
            self._started = True
        if start:
            self.host.emit(
                "on_session_start",
                {"session_id": self.session_id, "model": self.host.model, "platform": self.host.platform},
            )
        turn_id = turn_id or ids.new_turn_id()
        trace_parent.turn_started(self.session_id, turn_id, traceparent, parent)  # on the caller's thread
        rotation = self.segments.turn_started(self.host.segments)
        if rotation is not None:
            try:
                self.host.emit("on_session_segment", {
                    "session_id": self.session_id, "segment": rotation[0], "segment_reason": rotation[1],
                    "platform": self.host.platform, "model": self.host.model, "turn_id": turn_id,
                })
            except BaseException:  # the turn never started: it is not left counted as live
                self._turn_ended()
                raise
        return Turn(
            self,
            user_message,
            conversation_history=conversation_history,
            task_id=task_id or ids.new_task_id(),
            turn_id=turn_id,
            sender_id=sender_id,
            is_first_turn=first,
            context_snapshot=context,
        )

    # ------------------------------------------------------------------ identity lifecycle

    def finalize(self, reason: str = "shutdown") -> None:
        """Tear down this identity: ``on_session_finalize`` exactly once (OBS-36)."""
        with self._lock:
            if self._finalized:
                return
            self._finalized = True
        self.host.emit(
            "on_session_finalize", {"session_id": self.session_id, "platform": self.host.platform, "reason": reason}
        )

    def reset(self, *, reason: str = "new_session", new_session_id: str | None = None) -> Session:
        """Switch to a new identity (e.g. ``/new``): finalize this one, then ``on_session_reset``."""
        self.finalize(reason="session_boundary")
        new = Session(self.host, new_session_id or ids.new_session_id())
        self.host.emit(
            "on_session_reset",
            {
                "session_id": new.session_id,
                "platform": self.host.platform,
                "reason": reason,
                "old_session_id": self.session_id,
                "new_session_id": new.session_id,
            },
        )
        return new

    def report_compaction(self, new_session_id: str | None = None) -> Session:
        """The host finished compacting this session's context.

        In place (no new ID): with ``on_compaction`` segmentation the next turn rotates the session
        scope. ID-rotating (a new ID): the old session's scope closes (after its live turn, if any) and
        the returned :class:`Session` continues under the new ID. Fires ``on_compaction`` (CFG-75).
        """
        if not new_session_id or new_session_id == self.session_id:
            self.segments.compacted(self.host.segments)
            self._emit_compaction(self.session_id)
            return self
        if self.segments.live_turns > 0:
            self._pending_rotation = new_session_id  # reported when the live turn ends
        else:
            self._emit_compaction(new_session_id)
        return Session(self.host, new_session_id, resumed=True, subagent=self.subagent)

    def _emit_compaction(self, new_session_id: str) -> None:
        self.host.emit("on_compaction", {
            "session_id": self.session_id, "new_session_id": new_session_id,
            "rotated": new_session_id != self.session_id, "platform": self.host.platform,
        })

    def _turn_ended(self) -> None:
        if self.segments.turn_ended() == 0 and self._pending_rotation is not None:
            new_id, self._pending_rotation = self._pending_rotation, None
            self._emit_compaction(new_id)

    @property
    def finalized(self) -> bool:
        """Whether :meth:`finalize` ran."""
        return self._finalized

    def __enter__(self) -> Session:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        # the reason says how the block ended: "shutdown" is for identities torn down with the process
        if exc_type is None:
            reason = "completed"
        elif issubclass(exc_type, KeyboardInterrupt | asyncio.CancelledError):
            reason = "interrupted"
        else:
            reason = "error"
        self.finalize(reason=reason)

    # ------------------------------------------------------------------ subagent tool history

    def record_tool(self, entry: dict[str, Any]) -> None:
        """Keep a metadata-only tool-call record for ``subagent_stop`` (bounded, OBS-49)."""
        with self._lock:
            if self._history is None:
                self._history = deque(maxlen=HISTORY_LIMIT)
            self._history.append(entry)
            self.history_seen += 1

    def tool_history(self) -> tuple[list[dict[str, Any]], int]:
        """The kept history and how many older entries were dropped."""
        with self._lock:
            kept = list(self._history or ())
            return kept, self.history_seen - len(kept)

