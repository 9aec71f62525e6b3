"""Running an awaitable returned by a synchronous call site (OBS-20), never on the host's event loop.

Every awaitable a callback returns runs on one background event loop owned by the engine (a daemon
thread, started on first use), inside a copy of the caller's ``contextvars`` context, and under a
deadline that is on by default (:data:`ASYNC_CALLBACK_TIMEOUT`): a callback that never completes is
cancelled, not waited for. What the caller does meanwhile depends on its thread:

- no event loop running there (a synchronous host, a worker thread): it waits for the result, at most
  the deadline;
- an event loop running there (an async host dispatching from a coroutine): it does not wait at all.
  Waiting would freeze every coroutine of the host for as long as the callback takes; the callback
  runs to completion in the background and its return value is not used (the engine says so once per
  callback, and counts its failures and timeouts).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import threading
from collections.abc import Awaitable
from typing import Any, Final, TypeVar

T = TypeVar("T")

ASYNC_CALLBACK_TIMEOUT: Final = 5.0
"""Default seconds an async callback may run before it is cancelled (``Engine(async_callback_timeout=...)``)."""
WAIT_SLACK: Final = 0.5
"""Seconds a waiting caller allows beyond the deadline for the cancellation itself (a callback that blocks
the background loop cannot even be cancelled: the caller stops waiting anyway)."""


class AsyncCallbackTimeout(TimeoutError):
    """An async callback did not complete within its deadline and was cancelled."""


async def _bounded(awaitable: Awaitable[T], timeout: float) -> T:
    try:
        return await asyncio.wait_for(awaitable, timeout)
    except TimeoutError:
        raise AsyncCallbackTimeout(f"async callback still running after {timeout:g} s; cancelled") from None


class _BackgroundLoop:
    """One event loop on a daemon thread, for every async callback of the process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None

    def loop(self) -> asyncio.AbstractEventLoop:
        loop = self._loop
        if loop is not None and not loop.is_closed():
            return loop
        with self._lock:
            if self._loop is None or self._loop.is_closed():
                ready = threading.Event()
                new = asyncio.new_event_loop()

                def run() -> None:
                    asyncio.set_event_loop(new)
                    ready.set()
                    new.run_forever()

                threading.Thread(target=run, name="hermes-async-callbacks", daemon=True).start()
                ready.wait()
                self._loop = new
            return self._loop


_background = _BackgroundLoop()


def in_running_loop() -> bool:
    """Whether the calling thread is running an event loop (waiting here would block it)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def submit(awaitable: Awaitable[T], timeout: float = ASYNC_CALLBACK_TIMEOUT) -> concurrent.futures.Future[T]:
    """Start ``awaitable`` on the background loop in a copy of the caller's context, cancelled after
    ``timeout`` seconds (it then fails with :class:`AsyncCallbackTimeout`); returns its future."""
    loop = _background.loop()
    future: concurrent.futures.Future[T] = concurrent.futures.Future()
    context = contextvars.copy_context()

    def start() -> None:
        if not future.set_running_or_notify_cancel():
            _close(awaitable)
            return
        task = loop.create_task(_bounded(awaitable, timeout), context=context)

        def done(finished: asyncio.Task[T]) -> None:
            if finished.cancelled():
                future.set_exception(AsyncCallbackTimeout("async callback was cancelled"))
            elif finished.exception() is not None:
                future.set_exception(finished.exception())
            else:
                future.set_result(finished.result())

        task.add_done_callback(done)

    loop.call_soon_threadsafe(start)
    return future


def run_awaitable(awaitable: Awaitable[T], timeout: float = ASYNC_CALLBACK_TIMEOUT) -> T:
    """Run ``awaitable`` to completion on the background loop and wait for its result (at most ``timeout``).

    Raises what the awaitable raised, or :class:`AsyncCallbackTimeout`. For callers with no event loop
    running in their thread (see :func:`in_running_loop`); the others must not wait (:func:`submit`).
    """
    return wait_result(submit(awaitable, timeout), timeout)


def wait_result(future: concurrent.futures.Future[T], timeout: float) -> T:
    """The result of a :func:`submit` future, waiting at most ``timeout`` + :data:`WAIT_SLACK` seconds."""
    try:
        return future.result(timeout + WAIT_SLACK)
    except concurrent.futures.TimeoutError as exc:
        if isinstance(exc, AsyncCallbackTimeout):
            raise
        future.cancel()
        raise AsyncCallbackTimeout(f"async callback still running after {timeout:g} s; abandoned") from None


def _close(awaitable: Any) -> None:
    close = getattr(awaitable, "close", None)
    if callable(close):
        try:
            close()
        except Exception:  # noqa: BLE001
            pass
