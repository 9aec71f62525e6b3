"""Running an awaitable returned by a synchronous call site (OBS-20)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable
from typing import Any, TypeVar

T = TypeVar("T")


async def _await(awaitable: Awaitable[T]) -> T:
    return await awaitable


def run_awaitable(awaitable: Awaitable[T]) -> T:
    """Run ``awaitable`` to completion from synchronous code and return its result.

    With no event loop running in this thread it runs on a fresh loop; otherwise on a helper thread
    that owns its own loop (the calling thread waits, as for any synchronous callback).
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_await(awaitable))
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["value"] = asyncio.run(_await(awaitable))
        except BaseException as exc:  # handed back to the caller below
            box["error"] = exc

    helper = threading.Thread(target=work, name="hermes-async-callback", daemon=True)
    helper.start()
    helper.join()
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]
