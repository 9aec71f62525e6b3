"""Correlation-ID generation (spec 01 §4).

Session IDs come from ``os.urandom`` (``uuid4``). Task, turn, tool-call and subagent IDs are made
several times per turn on the agent's thread, so they come from a per-process pseudo-random
generator seeded from ``os.urandom`` (re-seeded after ``fork``): no system call, so the caller
never gives up the GIL for an ID. They are correlation IDs, not secrets.

Every ID made here is recorded as clean where it is made (:func:`~hermes_pipeline.engine.scrub_once.mark_made`):
a fixed prefix, lowercase hex digits and a decimal count, which no credential rule matches, so the export's
credential walk keeps it without scanning it (issue #29 item 5: scrub once, where a string enters; these never
entered from outside). An ``api_request_id`` is recorded only when its turn ID was made here too: one built on a
host-supplied turn ID carries that foreign text and is scanned like it.
"""

from __future__ import annotations

import os
import random
import uuid

from .scrub_once import made_clean, mark_made

_rng = random.Random(os.urandom(32))


def _reseed() -> None:
    _rng.seed(os.urandom(32))


os.register_at_fork(after_in_child=_reseed)


def _hex(digits: int) -> str:
    return f"{_rng.getrandbits(digits * 4):0{digits}x}"


def new_session_id() -> str:
    """A fresh session identity."""
    return mark_made(uuid.uuid4().hex)


def new_task_id() -> str:
    """A fresh task identity."""
    return mark_made("task_" + _hex(16))


def new_turn_id() -> str:
    """A fresh turn identity."""
    return mark_made("turn_" + _hex(16))


def api_request_id(turn_id: str, api_call_count: int) -> str:
    """An opaque logical-request identity, shared by all retries of that request (OBS-24, OBS-26).

    Consumers must not parse it; its shape may change.
    """
    request_id = f"{turn_id}:api:{api_call_count}"
    if turn_id in made_clean and type(api_call_count) is int:  # made here from parts made here
        mark_made(request_id)
    return request_id


def new_tool_call_id() -> str:
    """A tool-call identity for calls whose provider supplied none."""
    return mark_made("call_" + _hex(24))


def new_request_id() -> str:
    """A human-input request identity: 32 lowercase hex characters (spec 01 §7.8)."""
    return mark_made(os.urandom(16).hex())


def new_subagent_id() -> str:
    """A subagent identity."""
    return mark_made("subagent_" + _hex(16))
