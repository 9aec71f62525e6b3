"""Middleware runners (spec 02): request middleware and execution chains.

Request middleware (``llm_request``, ``tool_request``): every callback sees the same deep copy of
the input, results are applied afterwards in registration order and the last valid one wins
(MW-11..MW-19). Execution middleware (``llm_execution``, ``tool_execution``): callbacks nest in
registration order around the host's terminal call, each with a single-use ``next_call``, and the
failure table of MW-32 decides what a raising callback means.
"""

from __future__ import annotations

import copy
import inspect
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from ..contract.errors import LLMExecutionBlocked, NextCallAfterReturnError, NextCallReusedError
from ..contract.versions import MIDDLEWARE_SCHEMA_VERSION, TELEMETRY_SCHEMA_VERSION
from .callbacks import Entry

FailureReporter = Callable[[str, Entry, BaseException], None]
"""What a middleware runner reports a callback failure to (the engine's ``FailureLog.callback_failed``)."""

logger: Final = logging.getLogger("hermes_pipeline.middleware")

_TRACE_KEYS: Final = ("source", "reason", "name")


@dataclass(frozen=True, slots=True)
class RequestMiddlewareResult:
    """Outcome of a request-middleware pass (MW-16)."""

    payload: Any
    """The effective request or args."""
    original_payload: Any
    """The pre-middleware copy (the input itself when nobody listens)."""
    changed: bool
    """``True`` iff ``trace`` is non-empty."""
    trace: list[dict[str, str]] = field(default_factory=list)
    """One entry per applied result (MW-17)."""


_ATOMS: Final = (str, int, float, bool, type(None))


def _plain_copy(value: Any) -> Any:
    """Deep copy of JSON-shaped data (dict / list of atoms), much cheaper than ``copy.deepcopy``.

    Raises ``TypeError`` for anything else so that the caller falls back to ``copy.deepcopy``.
    Shared sub-objects are copied separately (JSON data has none worth preserving).
    """
    kind = type(value)
    if kind is dict:
        return {k if type(k) is str else _atom(k): _plain_copy(v) for k, v in value.items()}
    if kind is list:
        return [_plain_copy(v) for v in value]
    if kind in _ATOMS:
        return value
    raise TypeError(kind)


def _atom(key: Any) -> Any:
    if type(key) in _ATOMS:
        return key
    raise TypeError(type(key))


def safe_deepcopy(value: Any) -> Any:
    """Deep copy, falling back to a shallow dict copy (or the object itself) when that fails (MW-13)."""
    try:
        return _plain_copy(value)
    except (TypeError, RecursionError):
        pass
    try:
        return copy.deepcopy(value)
    except Exception as exc:
        logger.debug("hermes_pipeline: middleware payload is not deep-copyable (%s); sharing nested objects", exc)
        return dict(value) if isinstance(value, dict) else value


def _with_versions(call: dict[str, Any]) -> dict[str, Any]:
    call.setdefault("telemetry_schema_version", TELEMETRY_SCHEMA_VERSION)
    call.setdefault("middleware_schema_version", MIDDLEWARE_SCHEMA_VERSION)
    return call


def _trace_entry(result: dict[str, Any]) -> dict[str, str]:
    entry = {k: result[k] for k in _TRACE_KEYS if isinstance(result.get(k), str) and result[k]}
    return entry or {"source": "plugin"}


def apply_request_middleware(
    entries: tuple[Entry, ...], on_failure: FailureReporter, kind: str, key: str, payload: Any,
    context: dict[str, Any],
) -> RequestMiddlewareResult:
    """Run the request middleware ``entries`` of ``kind`` over ``payload`` (``key`` is ``request`` or ``args``);
    a callback that raises is reported to ``on_failure(kind, entry, exc)`` and skipped."""
    if not entries:
        return RequestMiddlewareResult(payload, payload, False, [])  # MW-11: no callback: the input itself, no copy at all
    original = safe_deepcopy(payload)
    current = safe_deepcopy(original)
    call = _with_versions({**context, key: current, "original_" + key: original})
    results: list[Any] = []
    for entry in entries:
        try:
            result = entry.invoke(call)
            if inspect.isawaitable(result):
                _close(result)
                raise TypeError("middleware returned an awaitable; hermes.middleware.v1 callbacks are synchronous")
        except Exception as exc:  # MW-18: isolate, warn once, keep going
            on_failure(kind, entry, exc)
            continue
        results.append(result)
    effective, trace = current, []
    for result in results:
        if isinstance(result, dict) and isinstance(result.get(key), dict):
            effective = safe_deepcopy(result[key])
            trace.append(_trace_entry(result))
    return RequestMiddlewareResult(effective, original, bool(trace), trace)


def _close(awaitable: Any) -> None:
    close = getattr(awaitable, "close", None)
    if callable(close):
        try:
            close()
        except Exception:
            pass


class _Frame:
    """Per-frame state of an execution chain: ``next_call`` is single-use (MW-29), dead once its callback
    returned, and failures follow the fail-open table (MW-32)."""

    __slots__ = ("called", "error", "result", "returned", "succeeded")

    def __init__(self) -> None:
        self.called = False
        self.returned = False
        self.succeeded = False
        self.result: Any = None
        self.error: BaseException | None = None


def run_execution_chain(
    entries: tuple[Entry, ...],
    on_failure: FailureReporter,
    kind: str,
    key: str,
    payload: Any,
    terminal: Callable[[Any], Any],
    *,
    original: Any,
    trace: list[dict[str, str]],
    context: dict[str, Any],
) -> Any:
    """Run the execution middleware ``entries`` of ``kind`` around ``terminal`` (MW-25..MW-35); failures that
    are skipped go to ``on_failure(kind, entry, exc)``."""
    if not entries:
        return terminal(payload)  # MW-25: no callback registered: call the terminal directly, no copy
    base = _with_versions({**context, "original_" + key: original})
    blockable = kind == "llm_execution"

    def frame(index: int, current: Any) -> Any:
        if index == len(entries):
            return terminal(current)
        entry = entries[index]
        state = _Frame()

        def next_call(replacement: Any = None) -> Any:
            if state.returned:  # a kept next_call would run the terminal outside the chain, unseen
                raise NextCallAfterReturnError(
                    f"next_call of {kind} middleware {entry.qualname!r} was called after that middleware returned; "
                    "call it inside the callback only (MW-29)"
                )
            if state.called:
                raise NextCallReusedError(
                    f"next_call was already called in {kind} middleware {entry.qualname!r}; "
                    "it is single-use per frame (MW-29)"
                ) from state.error
            state.called = True
            try:
                result = frame(index + 1, current if replacement is None else replacement)
            except BaseException as exc:
                state.error = exc
                raise
            state.succeeded = True
            state.result = result
            return result

        call = dict(base)
        call[key] = current
        call["next_call"] = next_call
        call["middleware_trace"] = list(trace)
        try:
            try:
                result = entry.invoke(call)
            finally:
                state.returned = True
            if inspect.isawaitable(result):
                _close(result)
                raise TypeError("middleware returned an awaitable; hermes.middleware.v1 callbacks are synchronous")
            return result
        except LLMExecutionBlocked as blocked:
            if not blockable:
                return _fail_open(on_failure, kind, entry, blocked, state, index, current, frame)
            blocked.metadata.setdefault("checked_by", entry.qualname)
            raise
        except Exception as exc:
            return _fail_open(on_failure, kind, entry, exc, state, index, current, frame)

    return frame(0, payload)


def _fail_open(
    on_failure: FailureReporter,
    kind: str,
    entry: Entry,
    exc: Exception,
    state: _Frame,
    index: int,
    current: Any,
    frame: Callable[[int, Any], Any],
) -> Any:
    """Apply the MW-32 table to a callback that raised ``exc``."""
    if not state.called:  # raised before next_call: skip this middleware
        on_failure(kind, entry, exc)
        return frame(index + 1, current)
    if state.succeeded:  # raised after a successful next_call: keep the downstream result
        on_failure(kind, entry, exc)
        return state.result
    raise exc  # downstream failed: propagate (original or translated) unchanged
