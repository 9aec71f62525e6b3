"""The tool-call path (spec 02 §8.2, spec 01 §7.5), shared by the sync and async host APIs.

(Over 400 lines on purpose: the full path, the observed fast path and the payload helpers they share
must stay step for step alike, so they are read side by side here.)

Order: ``tool_request`` middleware → host allowlist → ``pre_tool_call`` (block / modify) → host
guardrail → host approval → ``tool_execution`` chain around the tool → ``post_tool_call`` →
``transform_tool_result``. With no plugin loaded at all the tool is called directly; with hook
listeners but no middleware and no host gate, :func:`call_tool` (which *is* ``Turn.call_tool``) runs the
same steps from locals; otherwise the call is a :class:`ToolCall` (:func:`call_gated`, ``Turn.acall_tool``).

One shape per hook: the fields in hookspec order (:func:`pre_tool_fields`, :func:`post_tool_fields`), which
the exporters' recorders take as they are through their record lanes, and from which the payload dict is
made (:func:`pre_tool_payload`, :func:`post_tool_payload`) only when a listener needs a dict.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import time
from time import perf_counter_ns
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

from ..contract.status import ToolErrorType, ToolStatus
from ..contract.versions import TELEMETRY_SCHEMA_VERSION
from ..engine.callbacks import Entry
from ..engine.readonly import read_only
from ..engine.reentry import in_hook, refuse_in_hook
from ..engine.returns import first_str, tool_directive
from ..engine.scrub import scrub_message, url_target
from ..engine.tool_status import DEFERRED_STATUS, derive_status
from .context import CallContext, _reset, current
from .render import render_result

if TYPE_CHECKING:
    from .session import Session
    from .turn import Turn

ToolFn = Callable[..., Any]
"""A tool: called with the effective arguments as keyword arguments."""
Guardrail = Callable[[str, dict[str, Any]], "str | None"]
"""Host policy: return a block message to refuse the call, ``None`` to allow it."""
Approver = Callable[[str, dict[str, Any]], bool]
"""Host approval gate: return ``False`` to refuse the call (drive prompts with ``Host.approval``)."""

_PREFIX: Final = "call_" + os.urandom(4).hex() + "_"
_counter = itertools.count(1)

_PATH_KEYS: Final = frozenset({"path", "file_path", "paths", "file", "filename", "directory", "dir", "workdir",
                               "cwd", "destination", "dest"})
_URL_KEYS: Final = frozenset({"url", "urls", "uri", "endpoint"})
MAX_ARG_NAMES: Final = 50
MAX_TARGETS: Final = 8


def result_text(result: Any) -> str:
    """The text a tool result becomes in the model context: ``str`` as is, else JSON; never raises.

    A value that cannot be rendered faithfully is rendered bounded, with ``<...>`` markers
    (:func:`~hermes_pipeline.host.render.render_result`).
    """
    return result if type(result) is str else render_result(result)


def error_text(message: str) -> str:
    """The JSON error text returned to the model: ``{"error": message}``."""
    return json.dumps({"error": message}, ensure_ascii=False)


def exception_text(exc: BaseException) -> str:
    """``Type: message`` of an exception."""
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


ADMIT: Final = "admit"
RUN: Final = "run"
RENDER: Final = "render"
FINISH: Final = "finish"

_OK: Final = ToolStatus.OK.value
_ERROR: Final = ToolStatus.ERROR.value
_BLOCKED: Final = ToolStatus.BLOCKED.value
_CANCELLED: Final = ToolStatus.CANCELLED.value
_TOOL_ERROR: Final = ToolErrorType.TOOL_ERROR.value


def history_entry(tool_name: str, args: Mapping[str, Any], result: str, outcome: str) -> dict[str, Any]:
    """A metadata-only ``tool_call_history`` record: names, counts, bounded targets (spec 01 §7.9)."""
    targets: list[str] = []
    for key, value in args.items():
        if key in _PATH_KEYS or key in _URL_KEYS:
            for item in value if isinstance(value, list | tuple) else (value,):
                if isinstance(item, str) and len(targets) < MAX_TARGETS:
                    targets.append(url_target(item))
    try:
        input_bytes = len(json.dumps(args, ensure_ascii=False, default=str).encode("utf-8", "surrogatepass"))
    except Exception:  # noqa: BLE001 - arguments that cannot be rendered count as 0 bytes
        input_bytes = 0
    return {
        "tool_name": tool_name,
        "arg_names": [str(k) for k in itertools.islice(args, MAX_ARG_NAMES)],
        "targets": targets,
        "input_bytes": input_bytes,
        "output_bytes": len(result.encode("utf-8", "surrogatepass")),
        "outcome": outcome,
    }


def call_identity(turn: Turn, tool_name: str, tool_call_id: str,
                  api_request_id: str | None) -> tuple[str, str, str | None]:
    """``(tool_call_id, api_request_id, toolset)`` of a new call (see :meth:`ToolCall.open`)."""
    host = turn.session.host
    return (tool_call_id or f"{_PREFIX}{next(_counter)}",
            turn.last_api_request_id if api_request_id is None else api_request_id,
            None if host.toolsets is None else host.toolset_of(tool_name))


def pre_tool_fields(turn: Turn, tool_name: str, args: dict[str, Any], tool_call_id: str, api_request_id: str | None,
                    trace: list[dict[str, str]], toolset: str | None) -> tuple[Any, ...]:
    """The ``pre_tool_call`` fields in hookspec order (``OBSERVER_HOOKS["pre_tool_call"].fields``): what record
    lanes receive (:meth:`Engine.record_lanes`), and what :func:`pre_tool_payload` turns into the payload dict."""
    return (tool_name, args, turn.task_id, turn.session.session_id, tool_call_id, turn.turn_id, api_request_id, trace,
            toolset)


def post_tool_fields(turn: Turn, tool_name: str, args: dict[str, Any], tool_call_id: str, api_request_id: str | None,
                     result: str, duration_ms: int, status: Any, error_type: str | None,
                     error_message: str | None, trace: list[dict[str, str]], toolset: str | None,
                     exit_code: int | None = None) -> tuple[Any, ...]:
    """The ``post_tool_call`` fields in hookspec order (see :func:`pre_tool_fields`); its first :data:`IDENTITY`
    fields (the call's identity) are its ``pre_tool_call``'s, read once per call by :func:`call_tool`."""
    return (tool_name, args, turn.task_id, turn.session.session_id, tool_call_id, turn.turn_id, api_request_id, result,
            duration_ms, status, error_type, error_message, trace, toolset, exit_code)


NO_TRACE: Final[tuple[()]] = ()
"""The empty ``middleware_trace`` of a call no middleware ran, as record lanes receive it: the one empty tuple rather
than a new list per hook, one tracked object less for the garbage collector to trace while the record waits on the
publication queue (issue #29). Lanes only test a trace for emptiness and read its entries; observers given a payload
dict still get a list."""

IDENTITY: Final = 7
"""How many leading fields ``pre_tool_call`` and ``post_tool_call`` share (``tool_name`` .. ``api_request_id``)."""


def pre_tool_payload(fields: tuple[Any, ...], args: Any) -> dict[str, Any]:
    """The ``pre_tool_call`` payload of ``fields`` (:func:`pre_tool_fields`), with ``args`` as observers see them
    (the read-only view); one literal with the schema key, so dispatch never re-sizes it. Built only when a
    listener needs a dict (a recorder takes the fields)."""
    tool_name, _, task_id, session_id, tool_call_id, turn_id, api_request_id, trace, toolset = fields
    return {
        "tool_name": tool_name, "args": args, "task_id": task_id, "session_id": session_id,
        "tool_call_id": tool_call_id, "turn_id": turn_id, "api_request_id": api_request_id,
        "middleware_trace": trace, "toolset": toolset, "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION,
    }


def post_tool_payload(fields: tuple[Any, ...], args: Any) -> dict[str, Any]:
    """The ``post_tool_call`` payload of ``fields`` (:func:`post_tool_fields`; see :func:`pre_tool_payload`)."""
    (tool_name, _, task_id, session_id, tool_call_id, turn_id, api_request_id, result, duration_ms, status, error_type,
     error_message, trace, toolset, exit_code) = fields
    return {
        "tool_name": tool_name, "args": args, "task_id": task_id, "session_id": session_id,
        "tool_call_id": tool_call_id, "turn_id": turn_id, "api_request_id": api_request_id, "result": result,
        "duration_ms": duration_ms, "status": status, "error_type": error_type, "error_message": error_message,
        "middleware_trace": trace, "toolset": toolset, "exit_code": exit_code,
        "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION,
    }


class ToolCall(CallContext):
    """One tool call going through the instrumented path.

    It is also the :class:`CallContext` made current while the tool runs, so approvals and human
    input raised inside the tool carry its ``tool_call_id`` without another allocation.
    """

    __slots__ = ("api_request_id", "args", "blocked", "engine", "original_args", "reported", "stage", "started_ns",
                 "toolset", "trace", "view")

    if TYPE_CHECKING:  # narrowed types of the inherited slots: a tool call always has both
        session: Session
        turn: Turn

    def __init__(self, turn: Turn, tool_name: str, args: dict[str, Any], tool_call_id: str, api_request_id: str,
                 toolset: str | None, *, stage: str = ADMIT, started_ns: int = 0) -> None:
        session = turn.session
        self.session = session
        self.turn = turn
        self.tool_name = tool_name
        self.tool_call_id = tool_call_id
        self.api_request_id = api_request_id
        self.engine = session.host.engine
        self.toolset = toolset
        """The toolset declaring the tool in the host's registry (``Host(toolsets=...)``), or ``None``."""
        self.args = args
        self.original_args = args
        self.trace: list[dict[str, str]] = []
        self.blocked: tuple[str, str] | None = None
        """``(error_type, message)`` when pre-execution refused the call."""
        self.stage = stage
        """Where the call is: :data:`ADMIT` (middleware, hooks, gates), :data:`RUN` (the tool),
        :data:`RENDER` (its value becomes text) or :data:`FINISH` (``post_tool_call`` and after)."""
        self.reported = False
        """Whether ``post_tool_call`` was dispatched (or nobody needed it): it fires at most once."""
        self.started_ns = started_ns
        """``perf_counter_ns`` when the tool started running; 0 before."""
        self.view: tuple[dict[str, Any], Any] | None = None
        """``(args, read_only(args))`` last handed to observers (see :meth:`observed_args`)."""

    def observed_args(self) -> Any:
        """The read-only copy of :attr:`args` that observers receive: editing it cannot change the tool's input
        (observers are read-only); made once per effective ``args``, shared by every hook of the call."""
        view = self.view
        if view is None or view[0] is not self.args:
            view = self.view = (self.args, read_only(self.args))
        return view[1]

    @classmethod
    def open(cls, turn: Turn, tool_name: str, args: dict[str, Any], tool_call_id: str,
             api_request_id: str | None) -> ToolCall:
        """A new call: a generated ``tool_call_id`` when empty, the turn's latest ``api_request_id`` when
        ``None``, and the toolset from the host's registry (:func:`call_identity`)."""
        return cls(turn, tool_name, args, *call_identity(turn, tool_name, tool_call_id, api_request_id))

    # ---------------------------------------------------------------- stages

    def admit(self, deny: str | None, guardrail: Guardrail | None, approve: Approver | None) -> bool:
        """Run everything before execution (spec 02 §8.2 steps 2-3); ``False`` when refused."""
        engine = self.engine
        if "tool_request" in engine.middleware_listeners:
            try:
                outcome = engine.apply_tool_request_middleware(self.tool_name, self.args, **self._mw_context())
                self.args, self.original_args, self.trace = outcome.payload, outcome.original_payload, outcome.trace
            except Exception:  # MW-19: continue with the unmodified payload
                pass
        if deny is not None:  # OBS-31: refused before hooks; pre_tool_call is not dispatched
            self.blocked = (ToolErrorType.TOOL_SCOPE_BLOCK.value, deny)
            return False
        entries = engine.hook_listeners.get("pre_tool_call")
        if entries and not self.pre_tool_call(entries):
            return False
        if guardrail is not None:
            message = guardrail(self.tool_name, self.args)
            if message:
                self.blocked = (ToolErrorType.GUARDRAIL_BLOCK.value, message)
                return False
        if approve is not None:
            token = current.set(self)
            try:
                approved = approve(self.tool_name, self.args)
            finally:
                _reset(token)
            if not approved:
                self.blocked = ("approval_denied", f"tool {self.tool_name!r} was not approved")
                return False
        return True

    def pre_tool_call(self, entries: tuple[Entry, ...]) -> bool:
        """Dispatch ``pre_tool_call`` to ``entries`` (its listeners) and apply the directives; ``False`` when
        a plugin blocked the call."""
        engine = self.engine
        fields = pre_tool_fields(self.turn, self.tool_name, self.args, self.tool_call_id, self.api_request_id,
                                 self.trace[:], self.toolset)
        lanes = engine.record_lanes("pre_tool_call", entries)
        if lanes is not None:  # recorders only: nothing can block or modify
            for lane in lanes:
                lane(fields)
            return True
        results = engine.dispatch("pre_tool_call", pre_tool_payload(fields, self.observed_args()), entries)
        if results:
            directive = tool_directive(results, self.args)
            self.args = directive.args
            if directive.block_message is not None:
                self.blocked = (ToolErrorType.PLUGIN_BLOCK.value, directive.block_message)
                return False
        return True

    def run_chain(self, fn: ToolFn) -> Any:
        """Run the ``tool_execution`` middleware chain around ``fn``."""
        return self.engine.run_tool_execution_middleware(
            self.tool_name, self.args, lambda a: fn(**a), original_args=self.original_args,
            middleware_trace=self.trace, **self._mw_context(),
        )

    async def aexecute(self, fn: Callable[..., Awaitable[Any]] | ToolFn) -> Any:
        """Async twin of :meth:`execute`; the (synchronous) middleware chain runs on a worker thread."""
        engine = self.engine
        token = current.set(self)
        try:
            if "tool_execution" not in engine.middleware_listeners:
                value = fn(**self.args)
                return await value if asyncio.iscoroutine(value) or isinstance(value, Awaitable) else value
            loop = asyncio.get_running_loop()

            def terminal(a: dict[str, Any]) -> Any:
                value = fn(**a)
                if asyncio.iscoroutine(value):
                    return asyncio.run_coroutine_threadsafe(value, loop).result()
                return value

            return await asyncio.to_thread(
                engine.run_tool_execution_middleware, self.tool_name, self.args, terminal,
                original_args=self.original_args, middleware_trace=self.trace, **self._mw_context(),
            )
        finally:
            _reset(token)

    def finish(self, result: str, duration_ms: int, status: str | None = None,
               error_type: str | None = None, error_message: str | None = None) -> str:
        """Emit ``post_tool_call`` and, for returned results, ``transform_tool_result``."""
        self.stage = FINISH
        self.reported = True
        engine = self.engine
        hook_map = engine.hook_listeners
        post = hook_map.get("post_tool_call")
        transform = hook_map.get("transform_tool_result") if status is None else None
        record = self.session.subagent is not None and "subagent_stop" in hook_map
        lanes = engine.record_lanes("post_tool_call", post) if post else None
        if status is None and (transform or record or (post and lanes is None)):  # OBS-69: only for listeners
            status, error_type, error_message = derive_status(result)  # parses only text that can be a JSON object
        if post:
            fields = post_tool_fields(self.turn, self.tool_name, self.args, self.tool_call_id, self.api_request_id,
                                      result, duration_ms, DEFERRED_STATUS if status is None else status, error_type,
                                      error_message, self.trace[:], self.toolset)
            if lanes is not None:  # recorders only: a status left to derive is derived off this thread
                for lane in lanes:
                    lane(fields)
            else:
                engine.dispatch("post_tool_call", post_tool_payload(fields, self.observed_args()), post)
        if record:
            self.session.record_tool(history_entry(self.tool_name, self.args, result, status or _OK))
        if transform:
            replaced = first_str(engine.dispatch("transform_tool_result", {
                **self._identity(), "result": result, "duration_ms": duration_ms, "status": status,
                "error_type": error_type, "error_message": error_message,
            }))
            if replaced is not None:
                return replaced
        return result

    def finish_blocked(self) -> str:
        """Emit ``post_tool_call`` with ``status="blocked"`` and return the error text (OBS-40)."""
        assert self.blocked is not None
        error_type, message = self.blocked
        return self.finish(error_text(message), 0, _BLOCKED, error_type, message)

    def finish_raised(self, exc: Exception, duration_ms: int) -> str:
        """The execution chain raised: ``status="error"`` and the error text (OBS-39)."""
        message = exception_text(exc)
        return self.finish(error_text(message), duration_ms, _ERROR, _TOOL_ERROR, scrub_message(message))

    def finish_cancelled(self, exc: BaseException, duration_ms: int) -> None:
        """The call was cancelled (interrupt, task cancellation): ``status="cancelled"``."""
        error_type = (ToolErrorType.KEYBOARD_INTERRUPT.value if isinstance(exc, KeyboardInterrupt)
                      else ToolErrorType.CANCELLED.value)
        message = exception_text(exc)
        self.finish(error_text(message), duration_ms, _CANCELLED, error_type, scrub_message(message))

    # ---------------------------------------------------------------- payload parts

    def _identity(self) -> dict[str, Any]:
        turn = self.turn
        return {
            "tool_name": self.tool_name, "args": self.observed_args(), "task_id": turn.task_id,
            "session_id": self.session.session_id, "tool_call_id": self.tool_call_id,
            "turn_id": turn.turn_id, "api_request_id": self.api_request_id,
        }

    def _mw_context(self) -> dict[str, Any]:
        turn = self.turn
        host = turn.session.host
        return {
            "session_id": turn.session.session_id, "task_id": turn.task_id, "turn_id": turn.turn_id,
            "api_request_id": self.api_request_id, "tool_call_id": self.tool_call_id,
            "platform": host.platform, "model": host.model, "provider": host.provider, "api_mode": host.api_mode,
        }


def call_tool(turn: Turn, tool_name: str, args: dict[str, Any], fn: ToolFn, *, tool_call_id: str = "",
              api_request_id: str | None = None, deny: str | None = None, guardrail: Guardrail | None = None,
              approve: Approver | None = None) -> str:
    """Run one tool call through middleware and hooks; returns the text for the model context (:meth:`Turn.call_tool`).

    ``fn`` is called with the effective arguments as keyword arguments. A tool that raises
    gives ``{"error": "..."}``; a blocked call gives ``{"error": <block message>}``. ``deny``
    refuses the call before hooks (an allowlist), ``guardrail`` after ``pre_tool_call``, and
    ``approve`` is the approval gate. ``KeyboardInterrupt`` and cancellation propagate after
    ``post_tool_call`` reported ``cancelled``. Safe to call from several threads at once.

    The one synchronous path, bound as the method itself (no extra frame on the agent's thread). With
    middleware or a host gate the call is a :class:`ToolCall` (:func:`call_gated`). With hook listeners
    only, the same steps run from locals: the call's identity fields are read once and shared by its
    ``pre_tool_call`` and ``post_tool_call`` fields, and the engine's listeners are read once per stage
    (:class:`~hermes_pipeline.engine.tool_route.ToolRoute`); a hook whose listeners are all recorders gets those
    fields through its record lanes (no payload dict, no dispatch, no status scan of the result here);
    any other gets the payload dict of the same fields. A plugin directive, a raising tool, a
    ``transform_tool_result`` listener, a subagent's tool record or a BaseException hands the call over to
    a :class:`ToolCall` carrying the state reached.
    """
    if in_hook.get() is not None:  # a hook running tools would re-enter its own hook (reentry.py)
        refuse_in_hook("call_tool", tool_name)
    session = turn.session
    host = session.host
    engine = host.engine
    gated, observed, pre, pre_lanes, _, _, _, _ = engine.tool_route or engine.route_tools()  # the listeners
    if deny is not None or guardrail is not None or approve is not None or gated:
        return call_gated(turn, tool_name, args, fn, tool_call_id, api_request_id, deny, guardrail, approve)
    if not observed and session.subagent is None:
        try:  # nobody listens: no payload, no copy, no clock
            value = fn(**args)
        except Exception as exc:
            return error_text(exception_text(exc))
        return value if type(value) is str else result_text(value)
    if not tool_call_id:
        tool_call_id = f"{_PREFIX}{next(_counter)}"
    if api_request_id is None:
        api_request_id = turn.last_api_request_id
    toolset = None if host.toolsets is None else host.toolset_of(tool_name)
    task_id, session_id, turn_id = turn.task_id, session.session_id, turn.turn_id
    call: ToolCall | None = None
    stage = ADMIT
    started = 0
    view: Any = None  # read_only(args) once handed to observers (see ToolCall.observed_args)
    try:
        if pre:  # the hook of ToolCall.pre_tool_call (no middleware: an empty trace)
            fields: tuple[Any, ...] = (tool_name, args, task_id, session_id, tool_call_id, turn_id, api_request_id,
                                       NO_TRACE if pre_lanes is not None else [], toolset)
            if pre_lanes is not None:  # recorders only (nothing can block or modify): their lanes, no payload
                for lane in pre_lanes:
                    lane(fields)
            else:
                view = read_only(args)
                results = engine.dispatch("pre_tool_call", pre_tool_payload(fields, view), pre)
                if results:
                    directive = tool_directive(results, args)
                    if directive.args is not args:
                        args, view = directive.args, None
                    if directive.block_message is not None:
                        call = ToolCall(turn, tool_name, args, tool_call_id, api_request_id, toolset)
                        call.blocked = (ToolErrorType.PLUGIN_BLOCK.value, directive.block_message)
                        return call.finish_blocked()
        token = current.set(CallContext(session, turn, tool_call_id, tool_name))
        stage = RUN
        started = perf_counter_ns()
        try:
            value = fn(**args)
        except Exception as exc:
            call = ToolCall(turn, tool_name, args, tool_call_id, api_request_id, toolset, stage=RUN,
                            started_ns=started)
            return call.finish_raised(exc, elapsed_ms(started))
        finally:
            current.reset(token)
        stage = RENDER
        result = value if type(value) is str else result_text(value)
        duration_ms = (perf_counter_ns() - started) // 1_000_000
        _, _, _, _, post, post_lanes, transform, subagent_stop = engine.tool_route or engine.route_tools()
        if transform or (subagent_stop and session.subagent is not None):
            call = ToolCall(turn, tool_name, args, tool_call_id, api_request_id, toolset, stage=RENDER,
                            started_ns=started)
            return call.finish(result, duration_ms)
        stage = FINISH
        if post:  # the hook of ToolCall.finish
            if post_lanes is not None:  # recorders only: they derive the status from the result, off this thread
                fields = (tool_name, args, task_id, session_id, tool_call_id, turn_id, api_request_id, result,
                          duration_ms, DEFERRED_STATUS, None, None, NO_TRACE, toolset, None)
                for lane in post_lanes:
                    lane(fields)
            else:
                fields = (tool_name, args, task_id, session_id, tool_call_id, turn_id, api_request_id, result,
                          duration_ms, *derive_status(result), [], toolset, None)
                engine.dispatch("post_tool_call", post_tool_payload(fields, read_only(args) if view is None else view),
                                post)
        return result
    except BaseException as exc:
        if call is None:
            call = ToolCall(turn, tool_name, args, tool_call_id, api_request_id, toolset, stage=stage,
                            started_ns=started)
            call.reported = stage == FINISH
        turn._tool_stopped(call, exc)
        raise


def call_gated(turn: Turn, tool_name: str, args: dict[str, Any], fn: ToolFn, tool_call_id: str,
               api_request_id: str | None, deny: str | None, guardrail: Guardrail | None,
               approve: Approver | None) -> str:
    """:func:`call_tool` with middleware or a host gate: the call is a :class:`ToolCall` from the start."""
    call = ToolCall.open(turn, tool_name, args, tool_call_id, api_request_id)
    try:
        if not call.admit(deny, guardrail, approve):
            return call.finish_blocked()
        token = current.set(call)
        call.stage = RUN
        started = call.started_ns = perf_counter_ns()
        try:
            value = call.run_chain(fn) if "tool_execution" in call.engine.middleware_listeners else fn(**call.args)
        except Exception as exc:
            return call.finish_raised(exc, elapsed_ms(started))
        finally:
            current.reset(token)
        call.stage = RENDER
        return call.finish(value if type(value) is str else result_text(value),
                           (perf_counter_ns() - started) // 1_000_000)
    except BaseException as exc:
        turn._tool_stopped(call, exc)
        raise


def elapsed_ms(started_ns: int) -> int:
    """Whole milliseconds since ``started_ns`` (a ``perf_counter_ns`` reading); 0 when it never started."""
    return (time.perf_counter_ns() - started_ns) // 1_000_000 if started_ns else 0
