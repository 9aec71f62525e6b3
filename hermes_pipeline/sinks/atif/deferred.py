"""Trajectory files whose local write failed, kept and written again when the disk can take them (FMT-37, FMT-83).

A full disk (``ENOSPC``), a quota (``EDQUOT``), an I/O error or a directory made read-only for a while makes the
atomic write of a trajectory file fail. Such a file is not lost at once: :class:`DeferredWrites` keeps it in memory
(at most :data:`MAX_FILES` files and :data:`MAX_BYTES` bytes, oldest first) and writes it again before the next file,
after every batch of events the writer routes (so a :meth:`~.sink.AtifSink.flush` retries too) and at close. Files
keep their order: while one waits, later ones wait behind it. What still cannot be written at close, or what does
not fit in the bounds, is lost and counted (``write_errors``, ``atif.file_errors``) with one warning; a file written
late is counted too (``trajectories_deferred``, ``trajectories_recovered``).

Every method runs on the ATIF event writer's thread.
"""

from __future__ import annotations

import logging
from collections import deque
from typing import Any, Final

from ...export.writer import Destination
from .trajectory import TrajectoryFile

__all__ = ["MAX_BYTES", "MAX_FILES", "DeferredWrites"]

logger: Final = logging.getLogger("hermes_pipeline.sinks.atif")

MAX_FILES: Final = 256
"""Trajectory files kept for another try at most."""
MAX_BYTES: Final = 64 * 1024 * 1024
"""Bytes of trajectory files kept for another try at most (64 MiB)."""


class DeferredWrites:
    """Writes trajectory files to ``local``; a file whose write fails with an :class:`OSError` waits for another
    try (see the module).

    Args:
        local: the local output (:class:`~.files.TrajectoryDirectory` or a stand-in with ``write(batch)``).
    """

    def __init__(self, local: Destination) -> None:
        self.local = local
        self._waiting: deque[TrajectoryFile] = deque()
        self._bytes = 0
        self.counts = {"trajectories_deferred": 0, "trajectories_recovered": 0, "trajectories_lost": 0}
        self._warned: set[str] = set()

    @property
    def waiting(self) -> int:
        """Files waiting for another try now."""
        return len(self._waiting)

    def write(self, item: TrajectoryFile) -> None:
        """Write ``item`` (after the files waiting, which go first); keep it when the write fails with an
        ``OSError``. Raises what the output raised when the file cannot be kept (the bounds are full) or the
        failure is not an ``OSError``: the caller counts it as lost."""
        if self._waiting:
            self.retry()
        if self._waiting:
            self._keep(item, None)
            return
        try:
            self.local.write([item])
        except OSError as exc:
            self._keep(item, exc)

    def _keep(self, item: TrajectoryFile, exc: OSError | None) -> None:
        size = len(item.content)
        if len(self._waiting) >= MAX_FILES or self._bytes + size > MAX_BYTES:
            if exc is not None:
                raise exc
            raise OSError("trajectory files waiting for another write exceed their bound")
        self._waiting.append(item)
        self._bytes += size
        self.counts["trajectories_deferred"] += 1
        if exc is not None:
            self._warn(f"defer:{exc.errno}", "writing a trajectory failed (%s); it is kept and written again when "
                       "the output can take it", type(exc).__name__ if exc.errno is None else _errno_name(exc.errno))

    def retry(self) -> None:
        """Write the waiting files, oldest first, until one fails again."""
        while self._waiting:
            item = self._waiting[0]
            try:
                self.local.write([item])
            except OSError:
                return
            except Exception as exc:  # not the disk: this file cannot be written at all
                self._drop(exc)
                continue
            self._waiting.popleft()
            self._bytes -= len(item.content)
            self.counts["trajectories_recovered"] += 1

    def _drop(self, exc: BaseException) -> None:
        item = self._waiting.popleft()
        self._bytes -= len(item.content)
        self.counts["trajectories_lost"] += 1
        self._warn(f"lost:{type(exc).__name__}", "a kept trajectory could not be written (%s); it was dropped",
                   type(exc).__name__)

    def close(self) -> int:
        """A last try; what is still waiting is lost (counted, warned). Returns how many were lost now."""
        self.retry()
        lost = len(self._waiting)
        if lost:
            self.counts["trajectories_lost"] += lost
            self._waiting.clear()
            self._bytes = 0
            logger.warning("hermes_pipeline: atif: %d trajectory file(s) could not be written before close (the "
                           "output still failed); they were dropped", lost)
        return lost

    def _warn(self, key: str, message: str, *args: Any) -> None:
        if key not in self._warned:
            self._warned.add(key)
            logger.warning("hermes_pipeline: atif: " + message + "; later ones are counted silently", *args)


def _errno_name(number: int) -> str:
    import errno

    return errno.errorcode.get(number, str(number))
