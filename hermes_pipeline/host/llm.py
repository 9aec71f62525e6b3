"""The provider-attempt path (spec 02 §8.1, spec 01 §7.4).

One :class:`LLMRequest` is one logical request (one agent-loop iteration, one ``api_call_count``);
each :meth:`LLMRequest.attempt` is one provider attempt: ``llm_request`` middleware →
``pre_api_request`` → ``llm_execution`` chain around the provider → ``post_api_request`` or
``api_request_error``. Retries reuse the ``api_request_id`` (OBS-26).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from ..contract.errors import LLMExecutionBlocked
from ..engine import ids, sanitized_fields, trace_parent
from ..engine.callbacks import lanes_read
from ..engine.plain_twin import plain_twin, sanitize_with_part
from ..engine.request_field import build_request_field
from ..engine.sanitize import build_error_field, sanitize
from ..engine.usage import normalize_usage
from .facts import message_count, request_facts, response_facts
from .message import FrozenList, MessageView, message_view, message_view_with_calls, plain_tool_calls

if TYPE_CHECKING:
    from .turn import Turn

logger: Final = logging.getLogger("hermes_pipeline.host")

Provider = Callable[[dict[str, Any]], Any]
"""The host's real provider call: receives the effective request, returns the provider response."""
AsyncProvider = Callable[[dict[str, Any]], Awaitable[Any]]


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    """How the host classifies a failed attempt."""

    reason: str | None
    retryable: bool
    status_code: int | None = None


ErrorClassifier = Callable[[BaseException], ErrorInfo]

_BY_STATUS: Final = {401: ("auth", False), 403: ("auth", False), 404: ("model_not_found", False),
                     408: ("timeout", True), 409: ("server_error", True), 413: ("payload_too_large", False),
                     400: ("format_error", False), 429: ("rate_limit", True), 503: ("overloaded", True),
                     529: ("overloaded", True)}


def classify_error(exc: BaseException) -> ErrorInfo:
    """Default classification from ``status_code``, ``retryable`` and ``reason`` attributes.

    Works with this package's demo client and with SDK errors that carry ``status_code`` (directly
    or on ``.response``); timeouts and connection errors are retryable.
    """
    status = getattr(exc, "status_code", None)
    if status is None:
        status = getattr(getattr(exc, "response", None), "status_code", None)
    status = status if isinstance(status, int) and not isinstance(status, bool) else None
    reason, retryable = _BY_STATUS.get(status, (None, False)) if status is not None else (None, False)
    if status is not None and status >= 500 and reason is None:
        reason, retryable = "server_error", True
    if isinstance(exc, TimeoutError):
        reason, retryable = "timeout", True
    elif isinstance(exc, ConnectionError):
        reason, retryable = reason or "server_error", True
    own_reason, own_retryable = getattr(exc, "reason", None), getattr(exc, "retryable", None)
    return ErrorInfo(
        own_reason if isinstance(own_reason, str) and own_reason else reason,
        own_retryable if isinstance(own_retryable, bool) else retryable,
        status,
    )


@dataclass(slots=True)
class _Attempt:
    effective: dict[str, Any]
    original: dict[str, Any]
    trace: list[dict[str, str]]
    started_at: float
    started_ns: int


class LLMRequest:
    """One logical provider request of a turn; call :meth:`attempt` once per provider attempt."""

    def __init__(self, turn: Turn, *, max_retries: int = 0, classify: ErrorClassifier | None = None) -> None:
        self.turn = turn
        self.api_call_count = turn._next_api_call()
        self.api_request_id = ids.api_request_id(turn.turn_id, self.api_call_count)
        self.max_retries = max_retries
        self.retry_count = -1
        """0 during the first attempt, 1 during the first retry, ..."""
        self._classify = classify or classify_error

    def context(self) -> dict[str, Any]:
        """Group A fields (spec 01 §7.1), also the middleware context (spec 02 §4)."""
        turn = self.turn
        host = turn.session.host
        return {
            "session_id": turn.session.session_id, "task_id": turn.task_id, "turn_id": turn.turn_id,
            "api_request_id": self.api_request_id, "platform": host.platform, "model": host.model,
            "provider": host.provider, "base_url": host.base_url, "api_mode": host.api_mode,
            "api_call_count": self.api_call_count,
        }

    # ---------------------------------------------------------------- stages

    def _begin(self, request: dict[str, Any]) -> tuple[_Attempt, dict[str, Any]]:
        self.retry_count += 1
        self.turn._inflight = self.api_request_id
        engine = self.turn.session.host.engine
        ctx = self.context()
        effective, original, trace = request, request, []
        if "llm_request" in engine.middleware_listeners:
            try:
                outcome = engine.apply_llm_request_middleware(request, **ctx)
                effective, original, trace = outcome.payload, outcome.original_payload, outcome.trace
            except Exception as exc:  # MW-19: the runner failed: go on with the unmodified request, empty trace
                logger.debug("hermes_pipeline: llm_request middleware runner failed: %s", exc)
        attempt = _Attempt(effective, original, trace, time.time(), time.perf_counter_ns())
        entries = engine.hook_listeners.get("pre_api_request")
        if entries:
            try:
                facts = request_facts(effective)
                lanes = engine.record_lanes("pre_api_request", entries)
                if lanes is not None:  # recorders only: the fields in hookspec order, no payload dict, no dispatch
                    fields = (
                        *ctx.values(), self.turn.user_message,
                        lane_history(facts["request_messages"], lanes),
                        facts["request_messages"], facts["message_count"], facts["tool_count"],
                        facts["approx_input_tokens"], facts["request_char_count"], facts["max_tokens"],
                        attempt.started_at, list(trace),
                        sanitized_fields.mark(build_request_field(effective), facts["request_char_count"]),
                        self.retry_count,
                        facts["system_prompt"],
                    )
                else:
                    payload = {  # the history is this attempt's running message list (the request's messages)
                        **ctx, "user_message": self.turn.user_message,
                        "conversation_history": list(facts["request_messages"]), **facts,
                        "started_at": attempt.started_at, "middleware_trace": list(trace),
                        "request": sanitized_fields.mark(build_request_field(effective), facts["request_char_count"]),
                        "retry_count": self.retry_count,
                    }
            except Exception as exc:  # OBS-23: a payload that fails to build is dropped, never raised
                logger.debug("hermes_pipeline: building pre_api_request failed: %s", exc)
            else:
                if lanes is not None:
                    for lane in lanes:
                        lane(fields)
                else:
                    self.turn.session.host.emit("pre_api_request", payload)
        return attempt, ctx

    def _succeeded(self, attempt: _Attempt, ctx: dict[str, Any], response: Any) -> None:
        self.turn._inflight = None
        self.turn.last_api_request_id = self.api_request_id
        host = self.turn.session.host
        entries = host.engine.hook_listeners.get("post_api_request")
        if not entries:
            return
        try:
            ended = time.time()
            facts = response_facts(response)
            usage = normalize_usage(facts["usage"])
            sanitized = {
                "model": facts["response_model"], "finish_reason": facts["finish_reason"],
                "assistant_message": {"role": facts["role"], "content": facts["content"],
                                      "tool_calls": facts["tool_calls"]},
                "usage": usage,
            }
            if isinstance(facts["response_id"], str) and facts["response_id"]:  # gen_ai.response.id
                sanitized["id"] = facts["response_id"]
            if facts["upstream_provider"] is not None:
                sanitized["upstream_provider"] = facts["upstream_provider"]
            lanes = host.engine.record_lanes("post_api_request", entries)
            # the frozen view of the provider's message is built for listeners; lanes that do not read it get None
            sanitized_response, view = _response_and_message(sanitized, facts, lanes is None
                                                             or lanes_read(lanes, "assistant_message"))
            sanitized_fields.mark(sanitized_response, _response_chars(facts))
            if lanes is not None:  # recorders only: the fields in hookspec order, no payload dict, no dispatch
                fields = (
                    *ctx.values(), max(ended - attempt.started_at, 0.0), attempt.started_at, ended,
                    facts["finish_reason"], message_count(attempt.effective), facts["response_model"], usage,
                    facts["content_chars"], len(facts["tool_calls"]), sanitized_response, view, self.retry_count,
                )
            else:
                payload = {
                    **ctx, "api_duration": max(ended - attempt.started_at, 0.0), "started_at": attempt.started_at,
                    "ended_at": ended, "finish_reason": facts["finish_reason"],
                    "message_count": message_count(attempt.effective),
                    "response_model": facts["response_model"], "usage": usage,
                    "assistant_content_chars": facts["content_chars"],
                    "assistant_tool_call_count": len(facts["tool_calls"]),
                    "response": sanitized_response, "assistant_message": view,
                    "retry_count": self.retry_count,
                }
        except Exception as exc:  # OBS-23: a payload that fails to build is dropped, never raised
            logger.debug("hermes_pipeline: building post_api_request failed: %s", exc)
            return
        if lanes is not None:
            for lane in lanes:
                lane(fields)
        else:
            host.emit("post_api_request", payload)

    def _failed(self, attempt: _Attempt, ctx: dict[str, Any], exc: BaseException) -> ErrorInfo:
        if isinstance(exc, LLMExecutionBlocked):
            info = ErrorInfo("provider_policy_blocked", False)
        elif not isinstance(exc, Exception):
            info = ErrorInfo("interrupted", False)
        else:
            try:
                info = self._classify(exc)
            except Exception:
                info = ErrorInfo(None, False)
        retryable = info.retryable and self.retry_count < self.max_retries
        info = ErrorInfo(info.reason, retryable, info.status_code)
        if isinstance(exc, Exception):
            self.turn._inflight = None
        host = self.turn.session.host
        if "api_request_error" not in host.engine.hook_listeners:  # OBS-70: no listener, no error payload
            return info
        try:
            ended = time.time()
            payload = {
                **ctx, "api_duration": max(ended - attempt.started_at, 0.0), "started_at": attempt.started_at,
                "ended_at": ended, "status_code": info.status_code, "retry_count": self.retry_count,
                "max_retries": self.max_retries, "retryable": retryable, "reason": info.reason,
                "error": build_error_field(type(exc).__name__, str(exc)),
                "request": sanitized_fields.mark(build_request_field(attempt.effective)),
            }
        except Exception as build_exc:  # OBS-23: a payload that fails to build is dropped, never raised
            logger.debug("hermes_pipeline: building api_request_error failed: %s", build_exc)
            return info
        host.emit("api_request_error", payload)
        return info

    # ---------------------------------------------------------------- attempts

    def attempt(self, request: dict[str, Any], provider: Provider) -> Any:
        """One provider attempt; re-raises the provider's error after ``api_request_error``.

        After a failure, :attr:`last_error` says whether a retry is allowed.
        """
        attempt, ctx = self._begin(request)
        engine = self.turn.session.host.engine
        otel = trace_parent.enter_turn(self.turn.session.session_id, self.turn.turn_id) if trace_parent.enabled() \
            else None
        try:
            if "llm_execution" in engine.middleware_listeners:
                response = engine.run_llm_execution_middleware(
                    attempt.effective, provider, original_request=attempt.original,
                    middleware_trace=attempt.trace, **ctx)
            else:
                response = provider(attempt.effective)
        except BaseException as exc:
            self.last_error = self._failed(attempt, ctx, exc)
            raise
        finally:
            trace_parent.exit_turn(otel)
        self._succeeded(attempt, ctx, response)
        return response

    async def aattempt(self, request: dict[str, Any], provider: AsyncProvider) -> Any:
        """Async twin of :meth:`attempt`; the synchronous middleware chain runs on a worker thread."""
        attempt, ctx = self._begin(request)
        engine = self.turn.session.host.engine
        try:
            if "llm_execution" in engine.middleware_listeners:
                loop = asyncio.get_running_loop()

                def terminal(payload: dict[str, Any]) -> Any:
                    return asyncio.run_coroutine_threadsafe(_awaited(provider(payload)), loop).result()

                response = await asyncio.to_thread(
                    engine.run_llm_execution_middleware, attempt.effective, terminal,
                    original_request=attempt.original, middleware_trace=attempt.trace, **ctx)
            else:
                otel = trace_parent.enter_turn(self.turn.session.session_id, self.turn.turn_id) \
                    if trace_parent.enabled() else None
                try:
                    response = await provider(attempt.effective)
                finally:
                    trace_parent.exit_turn(otel)
        except BaseException as exc:
            self.last_error = self._failed(attempt, ctx, exc)
            raise
        self._succeeded(attempt, ctx, response)
        return response

    last_error: ErrorInfo | None = None


async def _awaited(value: Awaitable[Any]) -> Any:
    return await value


_CALLS_PATH: Final = ("assistant_message", "tool_calls")
"""Where the response's tool calls sit in the sanitized ``response`` (at depth 2)."""


def _response_and_message(sanitized: dict[str, Any], facts: dict[str, Any],
                          view: bool = True) -> tuple[Any, MessageView | None]:
    """``response`` (``sanitize(sanitized)``) and ``assistant_message`` (:func:`_assistant_view`) of a
    ``post_api_request`` payload. When the provider's message is a plain dict whose tool calls are plain JSON
    (the common case), one walk over the tool calls makes both their sanitized copy and their frozen view
    (:func:`~hermes_pipeline.engine.plain_twin.plain_twin`); otherwise each is made on its own. Without ``view``
    (no listener reads ``assistant_message``) only the response is made, and the message is ``None``."""
    message, calls = facts["assistant_message"], facts["tool_calls"]
    if calls and type(message) is dict and plain_tool_calls(calls):
        shared = plain_twin(calls, len(_CALLS_PATH), MessageView if view else None, FrozenList if view else None)
        if shared is not None:
            return (sanitize_with_part(sanitized, _CALLS_PATH, shared[0]),
                    message_view_with_calls(message, shared[1]) if view else None)
    return sanitize(sanitized), _assistant_view(facts) if view else None


def lane_history(history: list[Any], lanes: tuple[Any, ...]) -> list[Any] | None:
    """A hook's ``conversation_history`` for record ``lanes``: the copy a listener gets, or ``None`` when no lane
    reads it (the scope plugin's do not: a long history is not copied for nobody, twice a turn and once per call)."""
    return list(history) if lanes_read(lanes, "conversation_history") else None


def _response_chars(facts: dict[str, Any]) -> int | None:
    """The characters of text a response holds as far as they are cheaply known (its charge in the table of sanitized
    fields): its content and its chat-completions tool calls' arguments, plus :data:`_CALL_CHARS` for each call's id,
    type and name; ``None`` (charged as the largest a sanitized value may be) for tool calls of any other shape."""
    chars = facts["content_chars"]
    if type(chars) is not int:
        return None
    try:
        for call in facts["tool_calls"]:
            chars += len(call["function"]["arguments"]) + _CALL_CHARS
    except (TypeError, KeyError, IndexError):
        return None
    return chars


_CALL_CHARS: Final = 64
"""What a chat-completions tool call holds beside its arguments (its id, type and name), as charged."""


def _assistant_view(facts: dict[str, Any]) -> MessageView | None:
    """``assistant_message``: the provider's message, readable as a mapping and by attribute alike;
    for responses without a chat message (Anthropic messages) the response's role, content and tool calls."""
    message = facts["assistant_message"]
    if message is None:
        message = {"role": facts["role"], "content": facts["content"], "tool_calls": facts["tool_calls"]}
    return message_view(message)
