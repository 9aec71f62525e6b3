"""An inter-process advisory file lock (``flock`` on POSIX; a process-local lock elsewhere), shared by the
stores of shared metrics and of the observability store."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

try:  # POSIX
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

_local_locks: dict[str, threading.Lock] = {}
_registry_lock = threading.Lock()


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created 0600 if missing) for the ``with`` block.

    Serialises the holders across processes (``flock``) and across threads of this process.
    """
    with _registry_lock:
        local = _local_locks.setdefault(str(path), threading.Lock())
    with local:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                yield
            finally:
                if fcntl is not None:
                    fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
