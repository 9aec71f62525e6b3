"""A tool call's outcome read from its result text (OBS-38), and the marker that defers reading it.

Here, below the host and the export layers, because both read it: the host for hook payloads, and the
publication thread for record lanes, where the host hands over :data:`DEFERRED_STATUS` instead of the
status so that the scan of a kilobytes-long result text leaves the agent's thread.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any, Final, TypeVar

from ..contract.status import ToolErrorType, ToolStatus
from .scrub import scrub_message

OK_STATUS: Final = (ToolStatus.OK.value, None, None)
"""``(status, error_type, error_message)`` of a call whose result says nothing of an error."""
_ERROR: Final = ToolStatus.ERROR.value
_TOOL_ERROR: Final = ToolErrorType.TOOL_ERROR.value

_TRUTHY_ERROR: Final = re.compile(r'"error"\s*:(?!\s*(?:null|false|"")\s*[,}\]])')
"""An ``"error"`` key whose value may be truthy."""
_ESCAPED_ERROR_LETTER: Final = re.compile(r"\\u00(?:65|72|6[fF])")
"""A ``\\u`` escape of ``e``, ``r`` or ``o``: the only other way JSON can spell the key ``error``."""


class DeferredStatus:
    """The type of :data:`DEFERRED_STATUS` (one instance; a readable repr in a failing test)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "DEFERRED_STATUS"


DEFERRED_STATUS: Final = DeferredStatus()
"""Stands for ``post_tool_call``'s ``status`` in a record lane's fields (its ``error_type`` and
``error_message`` then ``None``): the lane's consumer derives the three from ``result`` with
:func:`derive_status`, off the agent's thread (:func:`resolve_status`)."""


def derive_status(result: str) -> tuple[str, str | None, str | None]:
    """``(status, error_type, error_message)`` from a result text (OBS-38).

    Only text that can be a JSON object (first non-blank character ``{``) is parsed, and only when it may hold a
    truthy ``"error"`` key: a tool's JSON result is often kilobytes (a file read, a command's output) with no
    error key or ``"error": null``.
    """
    first = result[:1]
    if (first == "{" or (first.isspace() and result.lstrip()[:1] == "{")) and (
            _TRUTHY_ERROR.search(result) is not None or _ESCAPED_ERROR_LETTER.search(result) is not None):
        try:
            parsed = json.loads(result)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and parsed.get("error"):
            return _ERROR, _TOOL_ERROR, scrub_message(str(parsed["error"]))
    return OK_STATUS


F = TypeVar("F", bound=Callable[..., None])

DERIVES_STATUS: Final = "derives_deferred_status"
"""The attribute :func:`derives_status` sets on a hook method."""


def derives_status(method: F) -> F:
    """Say that ``method`` (a hook method with ``status`` and ``result``) takes :data:`DEFERRED_STATUS` as its
    ``status`` and derives the three fields itself, with :func:`derive_status`: a record lane then hands it the
    fields as they came instead of a copy with the three replaced (:func:`resolve_status`)."""
    setattr(method, DERIVES_STATUS, True)
    return method


def resolve_status(fields: Sequence[Any], result_at: int, status_at: int) -> Sequence[Any]:
    """``fields`` with a :data:`DEFERRED_STATUS` at ``status_at`` (followed by ``error_type`` and
    ``error_message``) replaced by :func:`derive_status` of the result at ``result_at`` (a tuple); as given
    otherwise."""
    if fields[status_at] is not DEFERRED_STATUS:
        return fields
    result = fields[result_at]
    derived = derive_status(result) if isinstance(result, str) else OK_STATUS
    return (*fields[:status_at], *derived, *fields[status_at + 3:])
