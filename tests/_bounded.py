"""Calls that must not block: shared by the tests of reads of profile files that are no regular file (a FIFO, made
with the ``fifos`` fixture of ``tests/conftest.py``, stands in for a file on a home that stopped answering)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

BOUND_S = 20.0
"""How long a call may take before it counts as blocked (generous: a blocked read never returns)."""


def run_bounded(call: Callable[[], Any]) -> Any:
    """``call()`` in a thread; fails when it has not returned within :data:`BOUND_S` (it blocked)."""
    result: list[Any] = []
    errors: list[BaseException] = []

    def target() -> None:
        try:
            result.append(call())
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            errors.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(BOUND_S)
    assert not thread.is_alive(), "the read blocked"
    if errors:
        raise errors[0]
    return result[0]
