"""A user turn: provider requests, tool calls, the final answer and the turn's end (spec 01 §6)."""

from __future__ import annotations

import asyncio
import threading
import time
from time import perf_counter_ns
from collections.abc import Awaitable, Callable, Mapping
from contextvars import Token
from types import TracebackType
from typing import TYPE_CHECKING, Any

from ..engine import trace_parent
from ..engine.reentry import refuse_in_hook
from ..engine.returns import first_nonempty_str, llm_context
from ..engine.scrub import scrub_message
from .context import CallContext, _reset, _set, current
from .interaction import Approval, HumanInput
from .llm import AsyncProvider, ErrorClassifier, LLMRequest, Provider, lane_history
from .tools import RENDER, RUN, ToolCall, ToolFn, elapsed_ms, exception_text, result_text
from .tools import Approver, Guardrail
from .tools import call_tool as _call_tool

if TYPE_CHECKING:
    from .session import Session
    from .subagent import SubagentRun

RetryDelay = Callable[[int], float]
"""Seconds to wait before retry number ``n`` (1-based)."""


class Turn:
    """One user turn. ``pre_llm_call`` has fired when you hold it; ``on_session_end`` fires on :meth:`end`.

    Use it as a context manager: leaving the block by an exception ends the turn as failed, by
    ``KeyboardInterrupt`` or task cancellation as interrupted, and the exception propagates.
    """

    def __init__(
        self,
        session: Session,
        user_message: str,
        *,
        conversation_history: list[dict[str, Any]] | None,
        task_id: str,
        turn_id: str,
        sender_id: str | None,
        is_first_turn: bool,
        context_snapshot: Mapping[str, Any] | None = None,
    ) -> None:
        self.session = session
        self.user_message = user_message
        self.conversation_history = conversation_history if conversation_history is not None else []
        self.task_id = task_id
        self.turn_id = turn_id
        self.sender_id = sender_id
        self.is_first_turn = is_first_turn
        self.api_call_count = 0
        self.last_api_request_id = ""
        """``api_request_id`` of the latest successful provider response; tool calls default to it."""
        self.final_text: str | None = None
        self.interrupted = False
        self.failed = False
        self.exit_reason: str | None = None
        self.reason: str | None = None
        self._inflight: str | None = None
        self._lock = threading.Lock()
        self._ended = False
        self._hook_exc: BaseException | None = None
        """A BaseException a hook raised inside a tool call: the turn closes once the call reported it."""
        self._token = _set(CallContext(session, self))
        self.context: str | None = None
        """Ephemeral context returned by ``pre_llm_call`` plugins, joined (spec 01 §5); or ``None``."""
        host = session.host
        engine = host.engine
        entries = engine.hook_listeners.get("pre_llm_call")
        lanes = engine.record_lanes("pre_llm_call", entries) if entries else None
        if lanes is not None:  # recorders only (they return no context): the fields in hookspec order, no dispatch
            fields = (session.session_id, task_id, turn_id, user_message,
                      lane_history(self.conversation_history, lanes),
                      is_first_turn, host.model, host.platform, sender_id, host.agent_version)
            for lane in lanes:
                lane(fields)
        elif entries:
            self.context = llm_context(host.emit("pre_llm_call", {
                "session_id": session.session_id, "task_id": task_id, "turn_id": turn_id,
                "user_message": user_message, "conversation_history": list(self.conversation_history),
                "is_first_turn": is_first_turn, "model": host.model, "platform": host.platform,
                "sender_id": sender_id,
            }))
        if context_snapshot is not None and "on_context_snapshot" in host.engine.hook_listeners:
            host.emit("on_context_snapshot", {"session_id": session.session_id, "task_id": task_id,
                                              "turn_id": turn_id, "context": dict(context_snapshot),
                                              "platform": host.platform})

    @property
    def user_content(self) -> str:
        """The user message to send to the model: with plugin context appended when there is any.

        The context goes into the current user message only, never the system prompt, and should
        not be persisted to session storage.
        """
        return f"{self.user_message}\n\n{self.context}" if self.context else self.user_message

    def trace_headers(self) -> dict[str, str]:
        """W3C ``traceparent`` (and ``tracestate``) for an HTTP request the host sends for this turn (add them
        where it builds the provider request): the provider's and HTTP client's spans join the turn's trace under
        its root span. Empty without an OTLP pipeline or with ``opentelemetry.propagate_traceparent = false``."""
        return trace_parent.outgoing_headers(self.session.session_id, self.turn_id)

    def _next_api_call(self) -> int:
        with self._lock:
            self.api_call_count += 1
            return self.api_call_count

    # ---------------------------------------------------------------- provider calls

    def llm_request(self, *, max_retries: int = 0, classify: ErrorClassifier | None = None) -> LLMRequest:
        """A new logical provider request (next ``api_call_count``), for hosts with their own retry loop."""
        return LLMRequest(self, max_retries=max_retries, classify=classify)

    def call_llm(
        self,
        request: dict[str, Any],
        provider: Provider,
        *,
        max_retries: int = 0,
        classify: ErrorClassifier | None = None,
        retry_delay: RetryDelay | None = None,
    ) -> Any:
        """Call the provider with middleware and hooks, retrying retryable errors up to ``max_retries``.

        Every attempt shares one ``api_request_id`` and ends in ``post_api_request`` or
        ``api_request_error``. The last error is re-raised when no retry is left.
        """
        req = self.llm_request(max_retries=max_retries, classify=classify)
        while True:
            try:
                return req.attempt(request, provider)
            except Exception:
                if req.last_error is None or not req.last_error.retryable:
                    raise
            if retry_delay is not None:
                time.sleep(max(retry_delay(req.retry_count + 1), 0.0))

    async def acall_llm(
        self,
        request: dict[str, Any],
        provider: AsyncProvider,
        *,
        max_retries: int = 0,
        classify: ErrorClassifier | None = None,
        retry_delay: RetryDelay | None = None,
    ) -> Any:
        """Async twin of :meth:`call_llm` for an async provider."""
        req = self.llm_request(max_retries=max_retries, classify=classify)
        while True:
            try:
                return await req.aattempt(request, provider)
            except Exception:
                if req.last_error is None or not req.last_error.retryable:
                    raise
            if retry_delay is not None:
                await asyncio.sleep(max(retry_delay(req.retry_count + 1), 0.0))

    # ---------------------------------------------------------------- tool calls

    call_tool = _call_tool
    """Run one tool call through middleware and hooks (:func:`hermes_pipeline.host.tools.call_tool`, bound as
    this method: the agent's thread pays no extra frame per tool call)."""

    async def acall_tool(
        self,
        tool_name: str,
        args: dict[str, Any],
        fn: Callable[..., Awaitable[Any]] | ToolFn,
        *,
        tool_call_id: str = "",
        api_request_id: str | None = None,
        deny: str | None = None,
        guardrail: Guardrail | None = None,
        approve: Approver | None = None,
    ) -> str:
        """Async twin of :meth:`call_tool`; ``fn`` may be sync or async. Cancellation reports ``cancelled``."""
        refuse_in_hook("acall_tool", tool_name)
        call = ToolCall.open(self, tool_name, args, tool_call_id, api_request_id)
        try:
            if not call.admit(deny, guardrail, approve):
                return call.finish_blocked()
            call.stage = RUN
            started = call.started_ns = perf_counter_ns()
            try:
                value = await call.aexecute(fn)
            except Exception as exc:
                return call.finish_raised(exc, elapsed_ms(started))
            call.stage = RENDER
            return call.finish(result_text(value), elapsed_ms(started))
        except BaseException as exc:
            self._tool_stopped(call, exc)
            raise

    def _tool_stopped(self, call: ToolCall, exc: BaseException) -> None:
        """``exc`` stops ``call``: ``post_tool_call`` reports ``cancelled`` unless it already fired (OBS-37).

        When a hook, middleware or gate raised it (not the tool or its value), the turn closes as
        interrupted too before ``exc`` propagates.
        """
        from_hook = call.stage not in (RUN, RENDER)
        if not call.reported:
            try:
                call.finish_cancelled(exc, elapsed_ms(call.started_ns))
            except BaseException:  # noqa: BLE001 - post_tool_call raised too; exc propagates
                from_hook = True
        if from_hook or exc is self._hook_exc:
            self.abort(exc)

    # ---------------------------------------------------------------- approvals, input, subagents

    def approval(self, command: str, **fields: Any) -> Approval:
        """Start an approval prompt in this turn's context (see :meth:`Host.approval`)."""
        token = self._enter_context()
        try:
            return self.session.host.approval(command, **fields)
        finally:
            if token is not None:
                _reset(token)

    def human_input(self, kind: str, prompt: str, *, session_key: str = "",
                    metadata: Mapping[str, Any] | None = None) -> HumanInput:
        """Start a human-input wait in this turn's session (see :meth:`Host.human_input`)."""
        token = self._enter_context()
        try:
            return self.session.host.human_input(kind, prompt, session_key=session_key, metadata=metadata)
        finally:
            if token is not None:
                _reset(token)

    def _enter_context(self) -> Token[CallContext] | None:
        """Make this turn current unless it already is (keeping a current tool call's ID)."""
        if current.get().turn is self:
            return None
        return _set(CallContext(self.session, self))

    def subagent(self, *, role: str = "", goal: str = "", child_session_id: str | None = None) -> SubagentRun:
        """Delegate to a child agent: ``subagent_start`` now, ``subagent_stop`` when the run ends."""
        from .subagent import SubagentRun

        return SubagentRun(self, role=role, goal=goal, child_session_id=child_session_id)

    # ---------------------------------------------------------------- the end of the turn

    def hook_raised(self, exc: BaseException) -> None:
        """A BaseException escaped one of this turn's hooks: close the turn before it propagates.

        Inside a tool call the turn closes after that call's ``post_tool_call`` reported it
        (:meth:`call_tool`); elsewhere at once (:meth:`abort`).
        """
        if current.get().tool_call_id:
            self._hook_exc = exc
        else:
            self.abort(exc)

    def abort(self, exc: BaseException) -> None:
        """End the turn as interrupted because ``exc`` propagates (Ctrl-C, exit, cancellation); never raises.

        ``on_session_end`` fires exactly once, with ``interrupted=True``; a turn already ended is left alone.
        """
        if self._ended:
            return
        self.interrupt(_interrupt_reason(type(exc)))
        try:
            self.end()
        except BaseException:  # noqa: BLE001 - on_session_end raised as well; exc propagates
            pass

    def complete(self, text: str) -> str:
        """Final answer: ``transform_llm_output`` may replace it, then ``post_llm_call`` (OBS-32).

        Returns the final text to show. Not for interrupted turns.
        """
        host = self.session.host
        hooks = host.engine.hook_listeners
        if "transform_llm_output" in hooks:
            replaced = first_nonempty_str(host.emit("transform_llm_output", {
                "response_text": text, "session_id": self.session.session_id, "model": host.model,
                "platform": host.platform, "turn_id": self.turn_id,
            }))
            if replaced is not None:
                text = replaced
        self.final_text = text
        entries = hooks.get("post_llm_call")
        lanes = host.engine.record_lanes("post_llm_call", entries) if entries else None
        if lanes is not None:  # recorders only: the fields in hookspec order, no payload dict, no dispatch
            fields = (self.session.session_id, self.task_id, self.turn_id, self.user_message, text,
                      lane_history(self.conversation_history, lanes), host.model, host.platform)
            for lane in lanes:
                lane(fields)
        elif entries:
            host.emit("post_llm_call", {
                "session_id": self.session.session_id, "task_id": self.task_id, "turn_id": self.turn_id,
                "user_message": self.user_message, "assistant_response": text,
                "conversation_history": list(self.conversation_history), "model": host.model,
                "platform": host.platform,
            })
        return text

    def interrupt(self, reason: str = "interrupted_by_user") -> None:
        """Mark the turn interrupted (e.g. the user pressed Ctrl-C); :meth:`end` reports it."""
        self.interrupted = True
        self.exit_reason = self.exit_reason or reason

    def end(self, *, exit_reason: str | None = None, reason: str | None = None) -> None:
        """End the turn: ``on_session_end`` exactly once, with ``completed`` / ``interrupted`` / ``failed``."""
        with self._lock:
            if self._ended:
                return
            self._ended = True
        _reset(self._token)
        completed = self.final_text is not None and not self.interrupted and not self.failed
        if exit_reason:
            self.exit_reason = exit_reason
        elif self.exit_reason is None:
            self.exit_reason = "completed" if completed else "error" if self.failed else "incomplete"
        host = self.session.host
        try:
            self._emit_end(host, completed, reason)
        finally:  # the turn is over even if on_session_end raised a BaseException
            self.session._turn_ended()  # after on_session_end: a deferred ID-rotating compaction follows it

    def _emit_end(self, host: Any, completed: bool, reason: str | None) -> None:
        entries = host.engine.hook_listeners.get("on_session_end")
        lanes = host.engine.record_lanes("on_session_end", entries) if entries else None
        if lanes is not None:  # recorders only: the payload's optional keys absent are ``None`` fields
            fields = (self.session.session_id, self.task_id, self.turn_id, completed, self.interrupted, host.model,
                      host.platform, self.failed, self.exit_reason, reason or self.reason or None,
                      self._inflight if self.interrupted and self._inflight else None)
            for lane in lanes:
                lane(fields)
        elif entries:
            payload: dict[str, Any] = {
                "session_id": self.session.session_id, "task_id": self.task_id, "turn_id": self.turn_id,
                "completed": completed, "interrupted": self.interrupted, "model": host.model,
                "platform": host.platform, "failed": self.failed, "turn_exit_reason": self.exit_reason,
            }
            if reason or self.reason:
                payload["reason"] = reason or self.reason
            if self.interrupted and self._inflight:
                payload["api_request_id"] = self._inflight
            host.emit("on_session_end", payload)

    def __enter__(self) -> Turn:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc_type is not None:
            if not issubclass(exc_type, Exception):  # Ctrl-C, cancellation, SystemExit, other BaseExceptions
                self.interrupt(_interrupt_reason(exc_type))
            elif issubclass(exc_type, Exception):
                self.failed = True
                if self.reason is None and exc is not None:
                    self.reason = scrub_message(exception_text(exc), 500)
        self.end()


def _interrupt_reason(exc_type: type[BaseException]) -> str:
    """``turn_exit_reason`` of a turn stopped by a BaseException of ``exc_type``."""
    if issubclass(exc_type, KeyboardInterrupt):
        return "interrupted_by_user"
    if issubclass(exc_type, asyncio.CancelledError):
        return "cancelled"
    if issubclass(exc_type, SystemExit):
        return "exit"
    return "interrupted"
