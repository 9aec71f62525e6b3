"""A failed scope's span status and ``exception`` event (spec 04 FMT-58 as amended 2026-12, FMT-66).

A span that ended in error says why in the two places trace backends read: the status description
(the error banner) and an ``exception`` span event. With the content gate closed both carry only the
error's type, never a message; with it open the description is ``<error.type>: <message>`` (the
message already credential-scrubbed upstream, cut to 200 code points) and the event carries the
message as ``exception.message``. ``exception.type`` is the exception class when the event names one
outside the content fields (an LLM error's ``error.type``), else the ``error.type`` value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ...export.events import ScopeEvent
from .attrs import status_error
from .record import Event, Status, StatusCode

MESSAGE_LIMIT: Final = 200
"""Longest message (code points) in a status description or ``exception.message``."""
_UNSET: Final = Status(StatusCode.UNSET)
_OK: Final = Status(StatusCode.OK)


def _message(data: Mapping[str, Any]) -> str | None:
    """The human-readable reason of a failed end: the tool / provider error message, else the turn's reason."""
    for key in ("error_message", "reason"):
        value = data.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()[:MESSAGE_LIMIT]
    return None


def exception_type(end: ScopeEvent, error_type: str) -> str:
    """The exception class named by the end event's ``error`` field, else ``error_type``."""
    error = (end.data or {}).get("error")
    name = error.get("type") if isinstance(error, Mapping) else None
    return name if isinstance(name, str) and name.strip() else error_type


def span_status(end: ScopeEvent, gate_open: bool, *, ok_on_success: bool = False) -> tuple[Status, list[Event]]:
    """The status of a finished scope's span and, when it failed, its ``exception`` event.

    Success is ``UNSET`` (``OK`` with ``ok_on_success``, as OpenInference instrumentations do); an end
    whose ``otel.status_code`` is ``ERROR`` gets status ``ERROR`` described as explained in the module
    docstring.
    """
    error_type = status_error(end.metadata)
    if error_type is None:
        return (_OK if ok_on_success else _UNSET), []
    message = _message(end.data or {}) if gate_open else None
    attrs: dict[str, Any] = {"exception.type": exception_type(end, error_type)}
    description = error_type
    if message is not None:
        attrs["exception.message"] = message
        description = f"{error_type}: {message}"
    return Status(StatusCode.ERROR, description), [Event("exception", attrs, end.timestamp_us * 1000)]
