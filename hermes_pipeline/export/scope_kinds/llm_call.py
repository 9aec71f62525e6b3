"""Provider attempts → the ``llm.call`` scope (spec 04 §2.11 FMT-24 rows 7-9, note 2).

One scope per attempt (``api_request_id``) under its turn's ``agent.run``: ``pre_api_request`` starts it
with the request (credential header keys removed, :mod:`~hermes_pipeline.export.header_keys`),
``post_api_request`` ends it with the response and the usage counters, ``api_request_error`` with the
error. An end without a start (note 2) gets its start made from the hook's times. The turn remembers
the type of its last failed attempt, which its end may report (``classify.turn_error_type``).

Two hook fields no rendered field holds go to first-party listeners as ``facts`` (never rendered, made only
when such a listener listens): the start's ``retry_count`` (a fallback that reset the ordinal still counts a
retry, SM-20) and a successful end's ``provider`` (the route is the provider ``post_api_request`` names,
SM-22; the start's ``hermes.provider`` metadata is ``pre_api_request``'s).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ...contract.versions import TELEMETRY_SCHEMA_VERSION
from ..classify import llm_error_type, strip_url
from ..events import LLM_SCOPE
from ..header_keys import strip_header_keys
from ..scopes import SCHEMA_KEY, SESSION_KEY, ScopeTracker, base_meta
from .fields import middleware_meta

_V: Final = TELEMETRY_SCHEMA_VERSION
_USAGE_KEYS: Final = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens")


def _truncated(value: Any) -> bool:
    return type(value) is dict and value.get("_truncated") is True


def _usage(usage: Any) -> dict[str, Any] | None:
    """FMT-26: the five counters, ``input_tokens`` including cached input; unreported ones omitted."""
    if not isinstance(usage, Mapping):
        return None
    reported = usage.get("reported_usage_fields")
    out = {key: usage[key] for key in _USAGE_KEYS if usage.get(key) is not None
           and (not isinstance(reported, list) or key in reported)}
    prompt = usage.get("prompt_tokens")
    if "input_tokens" in out and isinstance(prompt, int) and not isinstance(prompt, bool):
        out["input_tokens"] = prompt  # the host's prompt_tokens = input + cache read + cache write
    return out


def _ms(seconds: Any) -> int | None:
    return round(seconds * 1000) if isinstance(seconds, int | float) and not isinstance(seconds, bool) else None


def _count(value: Any) -> bool:
    return type(value) is int and value >= 0


def _us(epoch_seconds: Any) -> int | None:
    if isinstance(epoch_seconds, int | float) and not isinstance(epoch_seconds, bool) and epoch_seconds > 0:
        return int(epoch_seconds * 1_000_000)
    return None


class LlmCalls:
    """Rows 7-9: provider attempts (see the module docstring)."""

    def __init__(self, tracker: ScopeTracker) -> None:
        self.tracker = tracker

    def pre_api_request(self, session_id: str, task_id: str, turn_id: str, api_request_id: str, platform: str,
                        model: str, provider: str, base_url: str, api_mode: str, api_call_count: int,
                        started_at: float, middleware_trace: list[dict[str, str]], request: dict[str, Any],
                        retry_count: int | None) -> None:
        tracker = self.tracker
        ts = _us(started_at) or tracker.now()
        request = strip_header_keys(request)
        body = request.get("body") if isinstance(request, dict) else None
        attributes = ("streaming",) if isinstance(body, dict) and body.get("stream") is True else ()
        meta = {SCHEMA_KEY: _V, SESSION_KEY: session_id, "hermes.task_id": task_id, "hermes.turn_id": turn_id,
                "hermes.api_request_id": api_request_id, "hermes.api_call_count": api_call_count,
                "hermes.provider": provider, "hermes.api_mode": api_mode,
                "hermes.base_url": strip_url(base_url) if isinstance(base_url, str) else "",
                "hermes.span_kind": LLM_SCOPE}
        middleware_meta(meta, middleware_trace)
        if _truncated(request):
            meta["hermes.truncated"] = True
        with tracker.lock:
            st = tracker.implicit_session(session_id, model, platform)
            stale = st.llm.pop(api_request_id, None)
            if stale is not None:  # an attempt that never ended
                tracker.end(st, stale, None, {**base_meta(session_id), "hermes.close_reason": "orphan",
                                              "otel.status_code": "ERROR", "error.type": "cancelled"}, ts)
            facts = {"retry_count": retry_count} if tracker.reads_facts and _count(retry_count) else None
            st.llm[api_request_id] = tracker.start(st, tracker.turn_parent(st, turn_id), LLM_SCOPE, "llm", attributes,
                                                   {"model_name": model}, {"request": request}, meta, ts, facts=facts)

    def post_api_request(self, session_id: str, task_id: str, turn_id: str, api_request_id: str, model: str,
                         api_duration: float, started_at: float, ended_at: float, finish_reason: str | None,
                         response_model: str | None, usage: dict[str, Any] | None, response: dict[str, Any],
                         provider: str | None) -> None:
        data = {"response": response, "usage": _usage(usage), "finish_reason": finish_reason}
        meta = {SCHEMA_KEY: _V, SESSION_KEY: session_id, "hermes.api_request_id": api_request_id,
                "hermes.duration_ms": _ms(api_duration), "otel.status_code": "OK"}
        if _truncated(response):
            meta["hermes.truncated"] = True
        facts = {"provider": provider} if self.tracker.reads_facts and isinstance(provider, str) and provider else None
        self._end(session_id, task_id, turn_id, api_request_id, model, started_at, ended_at, data, meta,
                  {"model_name": response_model or model}, facts)

    def api_request_error(self, session_id: str, task_id: str, turn_id: str, api_request_id: str, model: str,
                          api_duration: float, started_at: float, ended_at: float, status_code: int | None,
                          retry_count: int | None, max_retries: int | None, retryable: bool | None,
                          reason: str | None, error: dict[str, str]) -> None:
        error = error if isinstance(error, Mapping) else {}
        data = {"error": {"type": error.get("type"), "status_code": status_code, "retryable": retryable,
                          "retry_count": retry_count, "max_retries": max_retries},
                "error_message": error.get("message")}
        meta = {SCHEMA_KEY: _V, SESSION_KEY: session_id, "hermes.api_request_id": api_request_id,
                "hermes.duration_ms": _ms(api_duration), "otel.status_code": "ERROR",
                "error.type": llm_error_type(reason, status_code, error.get("type"))}
        self._end(session_id, task_id, turn_id, api_request_id, model, started_at, ended_at, data, meta,
                  {"model_name": model})

    def _end(self, session_id: str, task_id: str, turn_id: str, api_request_id: str, model: str,
             started_at: Any, ended_at: Any, data: dict[str, Any], meta: dict[str, Any],
             profile: dict[str, Any], facts: dict[str, Any] | None = None) -> None:
        tracker = self.tracker
        end = _us(ended_at) or tracker.now()
        with tracker.lock:
            st = tracker.implicit_session(session_id, model)
            scope = st.llm.pop(api_request_id, None)
            if scope is None:  # note 2: no open attempt, make its start from the hook's times
                start_meta = {SCHEMA_KEY: _V, SESSION_KEY: session_id, "hermes.task_id": task_id,
                              "hermes.turn_id": turn_id, "hermes.api_request_id": api_request_id,
                              "hermes.span_kind": LLM_SCOPE}
                start = min(_us(started_at) or end, end - 1)
                scope = tracker.start(st, tracker.turn_parent(st, turn_id), LLM_SCOPE, "llm", (),
                                      {"model_name": model}, None, start_meta, start)
            turn = st.turns.get(turn_id)
            if turn is not None:  # the cause a failing turn ends with (see classify.turn_error_type)
                failed = meta.get("otel.status_code") == "ERROR"
                turn.provider_error = meta.get("error.type") if failed else None
                message = data.get("error_message") if failed else None
                turn.provider_message = message if isinstance(message, str) else None
            tracker.end(st, scope, data, meta, end, profile, facts=facts)
