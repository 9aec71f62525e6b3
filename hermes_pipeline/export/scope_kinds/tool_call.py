"""Tool calls → the tool scope (spec 04 §2.11 FMT-24 rows 10-11, note 3).

``pre_tool_call`` starts a scope named for the tool (category ``tool``) under its turn's ``agent.run``,
with the arguments as ``data`` and ``hermes.span_kind`` saying whether it is a tool execution or a
memory read/write (``classify.tool_span_kind``); ``post_tool_call`` ends it with the result, the
status and, on failure, ``error.type``. A call that overlaps another of its session carries the
``parallel`` flag, so a start alone so far is held back until that is known
(:mod:`~hermes_pipeline.export.overlap`). An end without a start (note 3: a call refused before
``pre_tool_call``) gets its start made from the reported duration.

This is the hot path of the publication thread: both hooks build their event in place instead of calling the
tracker's ``start``/``end`` primitives, and say which fields they made only of their own constants, numbers and
hook strings known clean (:attr:`~hermes_pipeline.export.events.ScopeEvent.clean`), which the credential walk
then keeps as they are; the arguments, and a result not known yet, are always walked (raw by contract).
"""

from __future__ import annotations

from typing import Any, Final

from ...contract.versions import TELEMETRY_SCHEMA_VERSION
from ...engine import tool_status
from ...engine.tool_status import OK_STATUS, DeferredStatus, derives_status
from ..classify import command_timed_out, exit_code_failed, tool_error_type, tool_span_kind
from ..events import CLEAN_DATA, CLEAN_META, CLEAN_NAME, CLEAN_PROFILE, END, SCOPE, START, ScopeEvent
from ..ids import new_uuid7
from ..scope_state import TurnState
from ..scopes import SCHEMA_KEY, SESSION_KEY, ScopeTracker
from .fields import known_clean_text, middleware_meta

_V: Final = TELEMETRY_SCHEMA_VERSION
_PARALLEL: Final = ("parallel",)
_NUMBERS: Final = frozenset({int, float, type(None)})


def _ids_clean(turn: TurnState | None, session_id: str, task_id: str, turn_id: str, api_request_id: str) -> bool:
    """Whether the four ids of a tool start are strings known clean (:func:`known_clean_text`).

    Every tool call of a turn passes the same id objects: the first one found clean is remembered on the turn
    (``TurnState.clean_ids``), and a later call passing these very objects (identity, not equality) needs no
    look-up. A string known clean stays so: it is one the scrubber leaves unchanged, which depends on nothing but
    the text (the redaction key only names the markers of what it changes), or an id the engine made. Only a
    positive answer is remembered: a string not known clean yet is looked up again next time."""
    memo = turn.clean_ids if turn is not None else None
    if memo is not None and memo[0] is session_id and memo[1] is task_id and memo[2] is turn_id \
            and memo[3] is api_request_id:
        return True
    if known_clean_text(session_id) and known_clean_text(task_id) and known_clean_text(turn_id) \
            and known_clean_text(api_request_id):
        if turn is not None:
            turn.clean_ids = (session_id, task_id, turn_id, api_request_id)
        return True
    return False


class ToolCalls:
    """Rows 10-11 (see the module docstring).

    Args:
        tracker: the scope tracker.
        copy_arguments: keep a copy of a dict of arguments (the hooks run inline, so the host may change
            the dict afterwards); a deferred record already holds a copy made on the caller's thread.
    """

    def __init__(self, tracker: ScopeTracker, *, copy_arguments: bool) -> None:
        self.tracker = tracker
        self.copy_arguments = copy_arguments

    def pre_tool_call(self, tool_name: str, args: dict[str, Any], task_id: str, session_id: str, tool_call_id: str,
                      turn_id: str, api_request_id: str, middleware_trace: list[dict[str, str]],
                      toolset: str | None) -> None:
        tracker = self.tracker
        ts = tracker.now()
        special = tool_name in tracker.special_tools
        meta: dict[str, Any] = {
                SCHEMA_KEY: _V, SESSION_KEY: session_id, "hermes.task_id": task_id, "hermes.turn_id": turn_id,
                "hermes.api_request_id": api_request_id,
                "hermes.span_kind": tool_span_kind(tool_name, args, tracker.memory_tools) if special
                else "tool.execute"}
        attributes: tuple[str, ...]
        if toolset and isinstance(toolset, str):  # the host's registry named the toolset on the hook
            meta["hermes.toolset"] = toolset
            attributes = ("remote",) if toolset.lower().startswith("mcp") else ()
        else:
            attributes = self._flags(tool_name, meta) if tracker.toolsets or tool_name[:4] == "mcp_" else ()
        if middleware_trace:
            middleware_meta(meta, middleware_trace)
        if type(args) is dict:
            data = {"arguments": args.copy() if self.copy_arguments else args}
            if args.get("_truncated") is True:
                meta["hermes.truncated"] = True
        else:
            data = {"arguments": args}
        profile = {"tool_call_id": tool_call_id} if tool_call_id else None
        # The fields made only of this module's constants and strings known clean are not walked again
        # (ScopeEvent.clean): the name, the tool call id, the ids and toolset of the metadata
        clean = CLEAN_NAME if known_clean_text(tool_name) else 0
        if profile is None or known_clean_text(tool_call_id):
            clean |= CLEAN_PROFILE
        own_meta_clean = not middleware_trace and (not special or known_clean_text(meta["hermes.span_kind"])) \
            and ("hermes.toolset" not in meta or known_clean_text(meta["hermes.toolset"]))
        with tracker.lock:  # the hot path: tracker.start() inlined
            st = tracker.sessions.get(session_id) or tracker.implicit_session(session_id)
            tools = st.tools
            turn = st.turns.get(turn_id)
            if own_meta_clean and _ids_clean(turn, session_id, task_id, turn_id, api_request_id):
                clean |= CLEAN_META
            session = st.scope
            assert session is not None
            held = tracker.held
            concurrent = bool(tools)
            if concurrent:  # every tool scope overlapping another carries "parallel", the first one included
                attributes = tuple(sorted({*attributes, "parallel"})) if attributes else _PARALLEL
                held.take_parallel(session.uuid, tracker.publish)  # flags the held start in place
            uuid = new_uuid7(ts // 1000)
            event = ScopeEvent(SCOPE, START, uuid, turn.scope.uuid if turn is not None else session.uuid, ts,
                               tool_name, "tool", attributes, profile, data, meta, session.uuid, st.root, clean=clean)
            tools[tool_call_id or f"{turn_id}:{tool_name}"] = event
            if concurrent or not held.may_hold(event):
                tracker.emit(event)
            else:  # alone so far: published when a sibling starts, or before its session moves on (overlap)
                held.hold(event)

    def _flags(self, tool_name: str, meta: dict[str, Any]) -> tuple[str, ...]:
        toolsets = self.tracker.toolsets
        if toolsets:
            toolset = toolsets.get(tool_name)
            if toolset is not None:
                meta["hermes.toolset"] = toolset
                return ("remote",) if toolset.lower().startswith("mcp") else ()
        return ("remote",) if tool_name.startswith("mcp_") else ()

    @derives_status
    def post_tool_call(self, tool_name: str, args: dict[str, Any], task_id: str, session_id: str,
                       tool_call_id: str, turn_id: str, api_request_id: str, result: str, duration_ms: int,
                       status: str | DeferredStatus, error_type: str | None, error_message: str | None,
                       middleware_trace: list[dict[str, str]] | None = None, toolset: str | None = None,
                       exit_code: int | None = None) -> None:
        tracker = self.tracker
        ts = tracker.now()
        if isinstance(status, DeferredStatus):  # derived from the result here, off the agent's thread (tool_status)
            status, error_type, error_message = tool_status.derive_status(result) if isinstance(result, str) \
                else OK_STATUS
        data: dict[str, Any] = {"result": result}
        meta: dict[str, Any]
        if status == "ok":
            meta = {SCHEMA_KEY: _V, SESSION_KEY: session_id, "hermes.tool.status": status,
                    "hermes.duration_ms": duration_ms, "otel.status_code": "OK"}
            if exit_code is not None and exit_code_failed(exit_code):
                meta["hermes.tool.command_failed"] = True  # the host's status is kept as it reported it
                if command_timed_out(exit_code, result):
                    meta["hermes.tool.command_timed_out"] = True
        else:
            if status == "blocked":  # refused before it ran: no command ran, so none failed (Hermes says exit -1)
                exit_code = None
            meta = {SCHEMA_KEY: _V, SESSION_KEY: session_id, "hermes.tool.status": status,
                    "hermes.duration_ms": duration_ms}
            if error_message is not None:
                data["error_message"] = error_message
            if error_type is not None:
                meta["hermes.tool.error_type"] = error_type
            meta["otel.status_code"] = "ERROR"
            meta["error.type"] = tool_error_type(status, error_type)
            if exit_code is not None and exit_code_failed(exit_code):
                meta["hermes.tool.command_failed"] = True
                if command_timed_out(exit_code, result):
                    meta["hermes.tool.command_timed_out"] = True
        if type(exit_code) is int:  # the OTel process semantic convention's name, in every output
            meta["process.exit.code"] = exit_code
        key = tool_call_id or f"{turn_id}:{tool_name}"
        # a successful call's metadata is constants, numbers, the status and the session id, its data the result:
        # not walked again when those are known clean (ScopeEvent.clean); the name and profile are the start's
        # (the walk knows them)
        clean = 0
        if status == "ok":
            if type(duration_ms) in _NUMBERS and known_clean_text(status) and known_clean_text(session_id):
                clean = CLEAN_META
            if known_clean_text(result):
                clean |= CLEAN_DATA
        with tracker.lock:
            st = tracker.sessions.get(session_id) or tracker.implicit_session(session_id)
            scope = st.tools.pop(key, None)
            if scope is not None and ts > scope.timestamp_us:  # the hot path: tracker.end() inlined
                event = ScopeEvent(SCOPE, END, scope.uuid, scope.parent_uuid, ts, scope.name, "tool", scope.attributes,
                                   scope.profile, data, meta, scope.session_uuid, scope.root_uuid, clean=clean)
                held = tracker.held
                if held.sessions and held.release_alone(scope, tracker.publish):  # its start, held alone, goes first
                    tracker.publish(event)
                else:
                    tracker.emit(event)
                return
            if scope is None:  # note 3: e.g. refused before pre_tool_call
                start_meta = {SCHEMA_KEY: _V, SESSION_KEY: session_id, "hermes.task_id": task_id,
                              "hermes.turn_id": turn_id, "hermes.api_request_id": api_request_id,
                              "hermes.span_kind": tool_span_kind(tool_name, args, tracker.memory_tools)}
                flags = self._flags(tool_name, start_meta)
                start = ts - 1000 * (duration_ms if isinstance(duration_ms, int) else 0) - 1
                scope = tracker.start(st, tracker.turn_parent(st, turn_id), tool_name, "tool", flags,
                                      {"tool_call_id": tool_call_id} if tool_call_id else None,
                                      {"arguments": dict(args) if type(args) is dict else args}, start_meta, start)
            tracker.end(st, scope, data, meta, ts)


__all__ = ["ToolCalls"]
