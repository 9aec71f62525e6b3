"""Correlation-ID generation (spec 01 §4).

Session IDs come from ``os.urandom`` (``uuid4``). Task, turn, tool-call and subagent IDs are made
several times per turn on the agent's thread, so they come from a per-process pseudo-random
generator seeded from ``os.urandom`` (re-seeded after ``fork``): no system call, so the caller
never gives up the GIL for an ID. They are correlation IDs, not secrets.
"""

from __future__ import annotations

import os
import random
import uuid

_rng = random.Random(os.urandom(32))


def _reseed() -> None:
    _rng.seed(os.urandom(32))


os.register_at_fork(after_in_child=_reseed)


def _hex(digits: int) -> str:
    return f"{_rng.getrandbits(digits * 4):0{digits}x}"


def new_session_id() -> str:
    """A fresh session identity."""
    return uuid.uuid4().hex


def new_task_id() -> str:
    """A fresh task identity."""
    return "task_" + _hex(16)


def new_turn_id() -> str:
    """A fresh turn identity."""
    return "turn_" + _hex(16)


def api_request_id(turn_id: str, api_call_count: int) -> str:
    """An opaque logical-request identity, shared by all retries of that request (OBS-24, OBS-26).

    Consumers must not parse it; its shape may change.
    """
    return f"{turn_id}:api:{api_call_count}"


def new_tool_call_id() -> str:
    """A tool-call identity for calls whose provider supplied none."""
    return "call_" + _hex(24)


def new_request_id() -> str:
    """A human-input request identity: 32 lowercase hex characters (spec 01 §7.8)."""
    return os.urandom(16).hex()


def new_subagent_id() -> str:
    """A subagent identity."""
    return "subagent_" + _hex(16)
