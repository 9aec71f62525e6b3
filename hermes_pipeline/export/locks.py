"""An inter-process advisory file lock (``flock`` on POSIX; a process-local lock elsewhere), shared by the
stores of shared metrics and of the observability store, and the bounded wait every holder of one uses.

No wait for a lock is unbounded: a peer that hangs while holding it (a stuck process, a lock on a home
that stopped answering) must not hang the waiter's thread, a close or the interpreter's exit. A wait past
its ``timeout`` raises :class:`FileLockTimeout` (a :class:`TimeoutError`, so an ``OSError``: a caller that
already handles a lock file it cannot open handles it too); the caller counts what it could not do.
"""

from __future__ import annotations

import errno
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final

try:  # POSIX
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["DEFAULT_LOCK_TIMEOUT", "FileLockTimeout", "file_lock", "flock_within", "funlock"]

DEFAULT_LOCK_TIMEOUT: Final = 30.0
"""Seconds :func:`file_lock` waits unless told otherwise (a holder keeps these locks for milliseconds)."""
_FIRST_POLL: Final = 0.001
_LAST_POLL: Final = 0.05
"""The polls of a held lock back off from 1 ms to 50 ms apart."""

_local_locks: dict[str, threading.Lock] = {}
_registry_lock = threading.Lock()


class FileLockTimeout(TimeoutError):
    """A lock stayed held (by another process, or another thread of this one) past the wait allowed.

    Attributes:
        path: the lock file (``None`` for a lock on an open file).
        waited: the seconds waited.
    """

    retryable = True
    """A later attempt may find the lock free (:func:`hermes_pipeline.export.writer.is_retryable`)."""

    def __init__(self, path: Path | str | None, waited: float) -> None:
        self.path = None if path is None else str(path)
        self.waited = waited
        super().__init__(errno.ETIMEDOUT, f"lock held by another process past {waited:.1f} s")

    @property
    def kind(self) -> str:
        """The warn-once key of the writers (no path)."""
        return "FileLockTimeout"


def flock_within(fd: int, timeout: float | None) -> bool:
    """Take an exclusive ``flock`` on ``fd`` waiting at most ``timeout`` seconds (``None``: as long as it takes);
    ``False`` when it stayed held. Polls without blocking, backing off from 1 ms to 50 ms. Raises ``OSError``
    when the file system cannot lock at all (``ENOLCK``, ``EOPNOTSUPP``); a no-op ``True`` without ``fcntl``."""
    if fcntl is None:  # pragma: no cover - Windows
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # the usual case: free, one call
        return True
    except BlockingIOError:
        pass
    if timeout is not None and timeout <= 0:
        return False
    end = None if timeout is None else time.monotonic() + timeout
    delay = _FIRST_POLL
    while True:
        if end is not None:
            left = end - time.monotonic()
            if left <= 0:
                return False
            delay = min(delay, left)
        time.sleep(delay)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            delay = min(delay * 2, _LAST_POLL)


def funlock(fd: int) -> None:
    """Release a ``flock`` taken by :func:`flock_within` (closing ``fd`` releases it too)."""
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_UN)


@contextmanager
def file_lock(path: Path, *, timeout: float | None = DEFAULT_LOCK_TIMEOUT) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created 0600 if missing) for the ``with`` block.

    Serialises the holders across processes (``flock``) and across threads of this process. Waits at most
    ``timeout`` seconds in all (``None``: as long as it takes; only for a caller that may wait forever).

    Raises:
        FileLockTimeout: the lock stayed held past ``timeout``; nothing was done under it.
        OSError: the lock file cannot be opened (or the file system cannot lock).
    """
    end = None if timeout is None else time.monotonic() + timeout
    with _registry_lock:
        local = _local_locks.setdefault(str(path), threading.Lock())
    if not local.acquire(timeout=-1 if timeout is None else max(timeout, 0.0)):
        raise FileLockTimeout(path, timeout or 0.0)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
        try:
            if not flock_within(fd, None if end is None else max(end - time.monotonic(), 0.0)):
                raise FileLockTimeout(path, timeout or 0.0)
            try:
                yield
            finally:
                funlock(fd)
        finally:
            os.close(fd)
    finally:
        local.release()
