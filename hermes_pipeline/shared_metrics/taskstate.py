"""In-memory records of the shared-metrics accounting: open tasks, logical model calls, open tool calls (spec 05 §4).

Identifiers are kept here only as keys for matching and deduplication; nothing in these records
is ever emitted.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Final

RETIRED_LIMIT: Final = 256
"""SM-21: retired task and turn ids kept so that late hooks never reopen a finished task."""


@dataclass(slots=True)
class ToolRecord:
    """An open tool call: identity (SM-27), category from its toolset (SM-25), the time its scope started."""

    identity: tuple[str, str, str]
    category: str
    started: float
    scope_id: str
    approval: str | None = None


@dataclass(slots=True)
class CallRecord:
    """A logical model call keyed by ``api_request_id`` (SM-20, SM-22)."""

    scope_id: str
    started: float
    closed: bool = False


@dataclass(slots=True)
class TaskRecord:
    """An open task run keyed by ``task_id`` (SM-18..SM-21)."""

    scope_id: str
    session_id: str
    started: float
    turn_ids: set[str] = field(default_factory=set)
    calls: dict[str, CallRecord] = field(default_factory=dict)
    retries: int = 0
    anonymous_calls: int = 0
    tools: dict[int, ToolRecord] = field(default_factory=dict)
    """Open tool calls by the UUID of their scope in the profile's stream (its end names the same scope)."""
    done: set[tuple[str, str, str]] = field(default_factory=set)
    tool_calls: int = 0


class RetiredIds:
    """A bounded set of the most recent ids (SM-21)."""

    def __init__(self, limit: int = RETIRED_LIMIT) -> None:
        self._order: deque[str] = deque()
        self._set: set[str] = set()
        self._limit = limit

    def add(self, key: str) -> None:
        """Remember ``key``, forgetting the oldest beyond the limit."""
        if key and key not in self._set:
            self._order.append(key)
            self._set.add(key)
            if len(self._order) > self._limit:
                self._set.discard(self._order.popleft())

    def __contains__(self, key: object) -> bool:
        return key in self._set


def tool_identity(api_request_id: object, turn_id: object, tool_call_id: object) -> tuple[str, str, str]:
    """SM-27 / OBS-27 tool identity ``(api_request_id, turn_id, tool_call_id)``; non-strings count as empty."""
    return (api_request_id if isinstance(api_request_id, str) else "",
            turn_id if isinstance(turn_id, str) else "",
            tool_call_id if isinstance(tool_call_id, str) else "")


def match_tool(tools: dict[int, ToolRecord], scope: int, identity: tuple[str, str, str]) -> ToolRecord | None:
    """Take the open record of a tool call that ended (SM-27): the record of its own scope (the stream pairs a
    start with its end once), else, when a repeated start of the same call was not recorded, the open record
    of the same full identity."""
    tool = tools.pop(scope, None)
    if tool is not None or not identity[2]:
        return tool
    for key, open_tool in tools.items():
        if open_tool.identity == identity:
            del tools[key]
            return open_tool
    return None
