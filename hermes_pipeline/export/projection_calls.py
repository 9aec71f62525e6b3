"""Hermes hooks → scope events for provider attempts and tool calls (spec 04 §2.11 rows 7-11, notes 2-3).

:class:`CallHooks` is a mixin of :class:`~hermes_pipeline.export.projection.ScopePlugin`; the tool
hooks are the hot path of the projection and inline the tracker's start/end primitives.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import orjson

from ..contract.versions import TELEMETRY_SCHEMA_VERSION
from .classify import exit_code_failed, llm_error_type, strip_url, tool_error_type, tool_span_kind
from .events import END, LLM_SCOPE, SCOPE, START, ScopeEvent
from .ids import new_uuid7
from .publication import attempt_key, deferrable, tool_key
from .scopes import SCHEMA_KEY, SESSION_KEY, ScopeTracker, SessionState, base_meta

_V: Final = TELEMETRY_SCHEMA_VERSION
_HEADER_KEYS: Final = frozenset({"authorization", "proxy-authorization", "cookie", "x-api-key", "api-key",
                                 "anthropic-api-key", "x-goog-api-key"})
_USAGE_KEYS: Final = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens")
_PARALLEL: Final = ("parallel",)


def strip_header_keys(value: Any) -> Any:
    """``value`` without the credential header keys of FMT-28 at any depth (same object if none).

    Runs over every recorded request, whose history grows with the conversation, so it first asks
    :func:`_may_hold_header_key` (one encoding in C) and walks only when a header name may be a key.
    The walk descends only dict and list values; a string key seen not to be a header key is one set
    lookup next time.
    """
    if isinstance(value, dict):
        return _strip_mapping(value) if _may_hold_header_key(value) else value
    if isinstance(value, list):
        return _strip_sequence(value) if _may_hold_header_key(value) else value
    return value


_QUOTED_HEADER_KEYS: Final = tuple(b'"' + key.encode("ascii") + b'"' for key in sorted(_HEADER_KEYS))


def _may_hold_header_key(value: Any) -> bool:
    """``False`` only when no key of ``value`` at any depth can be a credential header key.

    A string key ``k`` with ``k.lower()`` a header name is encoded as ``"k"`` (header names need no
    escapes), so an ASCII encoding in which no quoted header name appears, ASCII-lowercased, holds
    none. Anything orjson refuses (other key or value types, deep nesting) and any non-ASCII output
    (``"\u212a".lower() == "k"``) answers ``True``: the caller walks. A header name that is only a
    string value answers ``True`` too, which costs the walk and nothing else.
    """
    try:
        encoded = orjson.dumps(value)
    except Exception:  # noqa: BLE001 - not plain JSON data: walk it
        return True
    if not encoded.isascii():
        return True
    lowered = encoded.lower()
    return any(key in lowered for key in _QUOTED_HEADER_KEYS)


_plain_keys: Final[set[str]] = set()
"""String keys seen not to be credential header keys (bounded by :data:`_PLAIN_KEYS_MAX`)."""
_PLAIN_KEYS_MAX: Final = 4096


def _is_header_key(key: Any) -> bool:
    if type(key) is str:
        if key in _plain_keys:
            return False
        if key.lower() in _HEADER_KEYS:
            return True
        if len(_plain_keys) >= _PLAIN_KEYS_MAX:
            _plain_keys.clear()
        _plain_keys.add(key)
        return False
    return isinstance(key, str) and key.lower() in _HEADER_KEYS


def _strip_child(item: Any) -> Any:
    cls = type(item)
    if cls is str or item is None or cls is int or cls is float or cls is bool:
        return item
    if isinstance(item, dict):
        return _strip_mapping(item)
    if isinstance(item, list):
        return _strip_sequence(item)
    return item


def _strip_mapping(value: dict[Any, Any]) -> dict[Any, Any]:
    out: dict[Any, Any] | None = None
    for key, item in value.items():
        if _is_header_key(key):
            if out is None:
                out = dict(value.items())
            del out[key]
            continue
        new = _strip_child(item)
        if new is not item:
            if out is None:
                out = dict(value.items())
            out[key] = new
    return value if out is None else out


def _strip_sequence(value: list[Any]) -> list[Any]:
    out: list[Any] | None = None
    for index, item in enumerate(value):
        new = _strip_child(item)
        if new is not item:
            if out is None:
                out = list(value)
            out[index] = new
    return value if out is None else out


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


def _us(epoch_seconds: Any) -> int | None:
    if isinstance(epoch_seconds, int | float) and not isinstance(epoch_seconds, bool) and epoch_seconds > 0:
        return int(epoch_seconds * 1_000_000)
    return None


def _middleware(meta: dict[str, Any], trace: Any) -> None:
    if trace:
        sources = [str(t.get("source", "")) for t in trace if isinstance(t, Mapping)]
        meta["hermes.middleware.changed"] = bool(sources)
        meta["hermes.middleware.sources"] = sources


class CallHooks(ScopeTracker):
    """Rows 7-11: provider attempts (``llm.call``) and tool calls."""

    def _turn_parent(self, st: SessionState, turn_id: str) -> int:
        turn = st.turns.get(turn_id)
        if turn is not None:
            return turn.scope.uuid
        assert st.scope is not None
        return st.scope.uuid

    # ------------------------------------------------------------------ provider attempts (rows 7-9)

    @deferrable(opens=attempt_key)
    def pre_api_request(self, session_id: str, task_id: str, turn_id: str, api_request_id: str, platform: str,
                        model: str, provider: str, base_url: str, api_mode: str, api_call_count: int,
                        started_at: float, middleware_trace: list[dict[str, str]], request: dict[str, Any]) -> None:
        ts = _us(started_at) or self._now()
        request = strip_header_keys(request)
        body = request.get("body") if isinstance(request, dict) else None
        attributes = ("streaming",) if isinstance(body, dict) and body.get("stream") is True else ()
        meta = {SCHEMA_KEY: _V, SESSION_KEY: session_id, "hermes.task_id": task_id, "hermes.turn_id": turn_id,
                "hermes.api_request_id": api_request_id, "hermes.api_call_count": api_call_count,
                "hermes.provider": provider, "hermes.api_mode": api_mode,
                "hermes.base_url": strip_url(base_url) if isinstance(base_url, str) else "",
                "hermes.span_kind": LLM_SCOPE}
        _middleware(meta, middleware_trace)
        if _truncated(request):
            meta["hermes.truncated"] = True
        with self._lock:
            st = self._implicit_session(session_id, model, platform)
            stale = st.llm.pop(api_request_id, None)
            if stale is not None:  # an attempt that never ended
                self._end(st, stale, None, {**base_meta(session_id), "hermes.close_reason": "orphan",
                                            "otel.status_code": "ERROR", "error.type": "cancelled"}, ts)
            st.llm[api_request_id] = self._start(st, self._turn_parent(st, turn_id), LLM_SCOPE, "llm", attributes,
                                                 {"model_name": model}, {"request": request}, meta, ts)

    @deferrable(closes=attempt_key)
    def post_api_request(self, session_id: str, task_id: str, turn_id: str, api_request_id: str, model: str,
                         api_duration: float, started_at: float, ended_at: float, finish_reason: str | None,
                         response_model: str | None, usage: dict[str, Any] | None, response: dict[str, Any]) -> None:
        data = {"response": response, "usage": _usage(usage), "finish_reason": finish_reason}
        meta = {SCHEMA_KEY: _V, SESSION_KEY: session_id, "hermes.api_request_id": api_request_id,
                "hermes.duration_ms": _ms(api_duration), "otel.status_code": "OK"}
        if _truncated(response):
            meta["hermes.truncated"] = True
        self._end_attempt(session_id, task_id, turn_id, api_request_id, model, started_at, ended_at, data, meta,
                          {"model_name": response_model or model})

    @deferrable(closes=attempt_key)
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
        self._end_attempt(session_id, task_id, turn_id, api_request_id, model, started_at, ended_at, data, meta,
                          {"model_name": model})

    def _end_attempt(self, session_id: str, task_id: str, turn_id: str, api_request_id: str, model: str,
                     started_at: Any, ended_at: Any, data: dict[str, Any], meta: dict[str, Any],
                     profile: dict[str, Any]) -> None:
        end = _us(ended_at) or self._now()
        with self._lock:
            st = self._implicit_session(session_id, model)
            scope = st.llm.pop(api_request_id, None)
            if scope is None:  # note 2: no open attempt, make its start from the hook's times
                start_meta = {SCHEMA_KEY: _V, SESSION_KEY: session_id, "hermes.task_id": task_id,
                              "hermes.turn_id": turn_id, "hermes.api_request_id": api_request_id,
                              "hermes.span_kind": LLM_SCOPE}
                start = min(_us(started_at) or end, end - 1)
                scope = self._start(st, self._turn_parent(st, turn_id), LLM_SCOPE, "llm", (), {"model_name": model},
                                    None, start_meta, start)
            turn = st.turns.get(turn_id)
            if turn is not None:  # the cause a failing turn ends with (see classify.turn_error_type)
                failed = meta.get("otel.status_code") == "ERROR"
                turn.provider_error = meta.get("error.type") if failed else None
                message = data.get("error_message") if failed else None
                turn.provider_message = message if isinstance(message, str) else None
            self._end(st, scope, data, meta, end, profile)

    # ------------------------------------------------------------------ tools (rows 10, 11)

    @deferrable(opens=tool_key, snapshot="args")
    def pre_tool_call(self, tool_name: str, args: dict[str, Any], task_id: str, session_id: str, tool_call_id: str,
                      turn_id: str, api_request_id: str, middleware_trace: list[dict[str, str]],
                      toolset: str | None) -> None:
        ts = self._now()
        meta: dict[str, Any] = {
                SCHEMA_KEY: _V, SESSION_KEY: session_id, "hermes.task_id": task_id, "hermes.turn_id": turn_id,
                "hermes.api_request_id": api_request_id,
                "hermes.span_kind": "tool.execute" if tool_name not in self._special_tools
                else tool_span_kind(tool_name, args, self.memory_tools)}
        attributes: tuple[str, ...]
        if toolset and isinstance(toolset, str):  # the host's registry named the toolset on the hook
            meta["hermes.toolset"] = toolset
            attributes = ("remote",) if toolset.lower().startswith("mcp") else ()
        else:
            attributes = self._tool_flags(tool_name, meta) if self.toolsets or tool_name[:4] == "mcp_" else ()
        if middleware_trace:
            _middleware(meta, middleware_trace)
        if type(args) is dict:
            data = {"arguments": args if self._publication is not None else args.copy()}
            if args.get("_truncated") is True:
                meta["hermes.truncated"] = True
        else:
            data = {"arguments": args}
        profile = {"tool_call_id": tool_call_id} if tool_call_id else None
        with self._lock:  # the hot path: _start() inlined
            st = self._sessions.get(session_id) or self._implicit_session(session_id)
            tools = st.tools
            turn = st.turns.get(turn_id)
            session = st.scope
            assert session is not None
            concurrent = bool(tools)
            if concurrent:  # every tool scope overlapping another carries "parallel", the first one included
                attributes = tuple(sorted({*attributes, "parallel"})) if attributes else _PARALLEL
                taken = self._held.take_parallel(session.uuid, self._publish)
                if taken is not None:
                    held, flagged = taken
                    for open_key, open_start in tools.items():
                        if open_start is held:
                            tools[open_key] = flagged
                            break
            uuid = new_uuid7(ts // 1000)
            event = ScopeEvent(SCOPE, START, uuid, turn.scope.uuid if turn is not None else session.uuid, ts,
                               tool_name, "tool", attributes, profile, data, meta, session.uuid, st.root)
            tools[tool_call_id or f"{turn_id}:{tool_name}"] = event
            if concurrent or not self._held.may_hold(event):
                self._emit(event)
            else:  # alone so far: published when a sibling starts, or before its session moves on (overlap)
                self._held.hold(event)

    def _tool_flags(self, tool_name: str, meta: dict[str, Any]) -> tuple[str, ...]:
        toolsets = self.toolsets
        if toolsets:
            toolset = toolsets.get(tool_name)
            if toolset is not None:
                meta["hermes.toolset"] = toolset
                return ("remote",) if toolset.lower().startswith("mcp") else ()
        return ("remote",) if tool_name.startswith("mcp_") else ()

    @deferrable(closes=tool_key)
    def post_tool_call(self, tool_name: str, args: dict[str, Any], task_id: str, session_id: str,
                       tool_call_id: str, turn_id: str, api_request_id: str, result: str, duration_ms: int,
                       status: str, error_type: str | None, error_message: str | None,
                       middleware_trace: list[dict[str, str]] | None = None, toolset: str | None = None,
                       exit_code: int | None = None) -> None:
        ts = self._now()
        data: dict[str, Any] = {"result": result}
        meta: dict[str, Any]
        if status == "ok":
            meta = {SCHEMA_KEY: _V, SESSION_KEY: session_id, "hermes.tool.status": status,
                    "hermes.duration_ms": duration_ms, "otel.status_code": "OK"}
            if exit_code is not None and exit_code_failed(exit_code):
                meta["hermes.tool.command_failed"] = True  # the host's status is kept as it reported it
        else:
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
        if type(exit_code) is int:  # the OTel process semantic convention's name, in every output
            meta["process.exit.code"] = exit_code
        key = tool_call_id or f"{turn_id}:{tool_name}"
        with self._lock:
            st = self._sessions.get(session_id) or self._implicit_session(session_id)
            scope = st.tools.pop(key, None)
            if scope is not None and ts > scope.timestamp_us:  # the hot path: _end() inlined
                event = ScopeEvent(SCOPE, END, scope.uuid, scope.parent_uuid, ts, scope.name, "tool", scope.attributes,
                                   scope.profile, data, meta, scope.session_uuid, scope.root_uuid)
                self._emit(event)
                return
            if scope is None:  # note 3: e.g. refused before pre_tool_call
                start_meta = {SCHEMA_KEY: _V, SESSION_KEY: session_id, "hermes.task_id": task_id,
                              "hermes.turn_id": turn_id, "hermes.api_request_id": api_request_id,
                              "hermes.span_kind": tool_span_kind(tool_name, args, self.memory_tools)}
                flags = self._tool_flags(tool_name, start_meta)
                start = ts - 1000 * (duration_ms if isinstance(duration_ms, int) else 0) - 1
                scope = self._start(st, self._turn_parent(st, turn_id), tool_name, "tool", flags,
                                    {"tool_call_id": tool_call_id} if tool_call_id else None,
                                    {"arguments": dict(args) if type(args) is dict else args}, start_meta, start)
            self._end(st, scope, data, meta, ts)

