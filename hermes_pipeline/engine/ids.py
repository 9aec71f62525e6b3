"""Correlation-ID generation (spec 01 §4)."""

from __future__ import annotations

import os
import uuid


def new_session_id() -> str:
    """A fresh session identity."""
    return uuid.uuid4().hex


def new_task_id() -> str:
    """A fresh task identity."""
    return "task_" + uuid.uuid4().hex[:16]


def new_turn_id() -> str:
    """A fresh turn identity."""
    return "turn_" + uuid.uuid4().hex[:16]


def api_request_id(turn_id: str, api_call_count: int) -> str:
    """An opaque logical-request identity, shared by all retries of that request (OBS-24, OBS-26).

    Consumers must not parse it; its shape may change.
    """
    return f"{turn_id}:api:{api_call_count}"


def new_tool_call_id() -> str:
    """A tool-call identity for calls whose provider supplied none."""
    return "call_" + uuid.uuid4().hex[:24]


def new_request_id() -> str:
    """A human-input request identity: 32 lowercase hex characters (spec 01 §7.8)."""
    return os.urandom(16).hex()


def new_subagent_id() -> str:
    """A subagent identity."""
    return "subagent_" + uuid.uuid4().hex[:16]
