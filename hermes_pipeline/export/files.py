"""A JSON-Lines file destination (spec 04 §2.14, FMT-34..FMT-37, FMT-87a).

All file-system work happens in :meth:`JsonlFileDestination.open` / :meth:`~JsonlFileDestination.write`,
i.e. on the writer's worker thread. Lines are written unbuffered, a batch with vectored writes and without a
joined copy (:func:`write_lines`), so a delivered line is complete and nothing waits in a user-space buffer; a
failed write is rolled back to the last complete line where the platform allows it. Several processes append
to one file: each batch and its rollback hold the file's ``flock`` (bounded wait), so a rollback removes only
its own bytes (:meth:`JsonlFileDestination.write`). Files are created ``0600``
and directories ``0700``. No ``fsync`` per line.
"""

from __future__ import annotations

import errno
import logging
import os
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from .locks import FileLockTimeout, flock_within, funlock

logger: Final = logging.getLogger("hermes_pipeline.export")

DATE_PLACEHOLDER: Final = "{date}"
DAY_SECONDS: Final = 86_400
APPEND_LOCK_TIMEOUT: Final = 2.0
"""Seconds a batch waits for another process's append to the same file (which holds its lock for one batch's
write, milliseconds); past it the batch is retried or counted by the writer, never written unlocked."""


def utc_date(epoch_seconds: float | None = None) -> str:
    """``YYYY-MM-DD`` (UTC) of ``epoch_seconds`` (default: now)."""
    return time.strftime("%Y-%m-%d", time.gmtime(time.time() if epoch_seconds is None else epoch_seconds))


def default_events_filename(epoch_seconds: float | None = None) -> str:
    """The default ATOF file name, ``hermes-events-<UTC YYYYMMDDTHHMMSSZ>.jsonl`` (FMT-35)."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(time.time() if epoch_seconds is None else epoch_seconds))
    return f"hermes-events-{stamp}.jsonl"


DEFAULT_NAME_PATTERN: Final = re.compile(r"hermes-events-\d{8}T\d{6}Z\.jsonl")


def filename_pattern(filename: str) -> re.Pattern[str]:
    """Which file names in the output directory belong to a sink with this ``filename`` (FMT-87a)."""
    if DEFAULT_NAME_PATTERN.fullmatch(filename):
        return DEFAULT_NAME_PATTERN
    parts = filename.split(DATE_PLACEHOLDER)
    return re.compile(r"\d{4}-\d{2}-\d{2}".join(re.escape(p) for p in parts))


def prune_files(directory: Path, pattern: re.Pattern[str], days: int, keep: Path | None = None) -> int:
    """Delete regular files in ``directory`` whose names match ``pattern`` and that were last modified
    more than ``days`` days ago, except ``keep``; returns how many were deleted (errors skipped)."""
    cutoff = time.time() - days * DAY_SECONDS
    deleted = 0
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return 0
    for entry in entries:
        try:
            if not pattern.fullmatch(entry.name) or not entry.is_file(follow_symlinks=False):
                continue
            if keep is not None and Path(entry.path) == keep:
                continue
            if entry.stat(follow_symlinks=False).st_mtime < cutoff:
                os.unlink(entry.path)
                deleted += 1
        except OSError:
            continue
    return deleted


def _iov_max() -> int:
    try:
        return max(1, min(1024, os.sysconf("SC_IOV_MAX")))
    except (AttributeError, OSError, ValueError):  # no sysconf, or no such name on this platform
        return 1024


_IOV_MAX: Final = _iov_max()
"""Buffers per ``os.writev`` call: the platform's ``IOV_MAX``, at most 1,024 (Linux's)."""
_BYTES: Final = frozenset({bytes})
"""A chunk of only ``bytes`` lines (whose lengths are their sizes) is known written whole from the count alone."""


def _as_bytes(item: Any) -> bytes:
    if type(item) is bytes:
        return item
    return bytes(item) if isinstance(item, (bytes, bytearray, memoryview)) else str(item).encode()


def write_lines(fd: int, lines: list[Any], progress: list[int] | None = None) -> None:
    """Write ``lines`` (encoded lines; anything else is written as its text) to ``fd`` in order, all of them.

    One ``os.writev`` per :data:`_IOV_MAX` lines, from the lines themselves: no joined copy of the batch. A batch
    of encoded events joined first is a few hundred KB, which the C allocator hands out as fresh memory (and takes
    back) on every batch, a page fault per 4 KB touched. A partial write goes on from the byte where it stopped;
    an error is raised after what was written (the caller rolls back). ``lines`` is not changed. ``progress``:
    its first item is increased by every byte written (what a rollback must remove)."""
    if not hasattr(os, "writev"):  # no vectored writes on this platform: one joined write
        data = memoryview(b"".join(_as_bytes(item) for item in lines))
        while data:
            done = os.write(fd, data)
            if progress is not None:
                progress[0] += done
            data = data[done:]
        return
    pending: list[Any] = lines
    at = 0
    converted = False
    while at < len(pending):
        chunk = pending[at:at + _IOV_MAX]
        try:
            written = os.writev(fd, chunk)
            if progress is not None:
                progress[0] += written
        except (TypeError, BufferError):  # something else than bytes among them (not an encoder's output): its text
            if converted:
                raise
            converted = True
            pending = pending[:at] + [_as_bytes(item) for item in pending[at:]]
            continue
        progressed = written > 0
        if written == sum(map(len, chunk)) and set(map(type, chunk)) == _BYTES:  # all of it (the usual case)
            at += len(chunk)
            continue
        for item in chunk:
            size = item.nbytes if isinstance(item, memoryview) else len(item)
            if written < size:
                break
            written -= size
            at += 1
        else:
            continue
        if written:  # the line at ``at`` went out in part: the rest of it next
            if pending is lines:
                pending = list(lines)
            pending[at] = memoryview(_as_bytes(pending[at]))[written:]
        elif not progressed:
            raise OSError(errno.EIO, "write made no progress")


class JsonlFileDestination:
    """Appends already-encoded lines (``bytes`` ending in ``\\n``) to ``<directory>/<filename>``.

    Args:
        directory: absolute output directory (created ``0700`` when missing).
        filename: file name; may contain ``{date}`` (UTC ``YYYY-MM-DD`` of the write) to roll daily.
        mode: ``"append"`` keeps existing content; ``"overwrite"`` truncates the first file at open.
        retention_days: delete this sink's files older than that many days at open and every 24 h.
        label: how log messages name the sink (``atof.sinks[0]``); paths are never logged.
        day: the ``{date}`` a batch is written for (default: the UTC day of the write); an encoder whose lines
            depend on the file they start (the ATOF history delta) gives the day it encoded them for.
    """

    def __init__(self, directory: Path, filename: str, *, mode: str = "append", retention_days: int | None = None,
                 label: str = "file", day: Callable[[], str] | None = None) -> None:
        self.directory = directory
        self._day = day
        self.filename = filename
        self.mode = mode
        self.retention_days = retention_days
        self.label = label
        self._fd: int | None = None
        self.lock_timeout = APPEND_LOCK_TIMEOUT
        """Seconds a batch waits for the file's lock (:meth:`write`)."""
        self._path: Path | None = None
        self._truncate = mode == "overwrite"
        self._next_prune = 0.0
        self.opened_paths: list[Path] = []
        self.definitions_pruned = 0
        """Files of the directory's ``definitions/`` sidecar deleted after retention deleted old files."""

    def path_for(self, epoch_seconds: float | None = None) -> Path:
        """The file written at ``epoch_seconds`` (default: now)."""
        name = self.filename
        if DATE_PLACEHOLDER in name:
            day = self._day() if self._day is not None and epoch_seconds is None else utc_date(epoch_seconds)
            name = name.replace(DATE_PLACEHOLDER, day)
        return self.directory / name

    def describe(self) -> str:
        """``file <path>`` (the path of the current or next file)."""
        return f"file {self._path or self.path_for()}"

    def open(self) -> None:
        """Prepare the sink without creating anything: nothing exists on disk before the first event
        is written (FMT-35: the file is created at the first write, never before). An existing file
        is truncated now in ``overwrite`` mode; old files are pruned when retention is configured."""
        if self._truncate and DATE_PLACEHOLDER not in self.filename:
            try:
                fd = os.open(self.path_for(), os.O_WRONLY | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0))
            except FileNotFoundError:
                pass
            else:
                os.close(fd)
                self._truncate = False
        self._maybe_prune()

    def _ensure(self) -> int:
        path = self.path_for()
        if self._fd is not None and path == self._path:
            return self._fd
        self._close_fd()
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)
        if self._truncate:
            flags |= os.O_TRUNC
        fd = os.open(path, flags, 0o600)
        self._truncate = False
        self._fd, self._path = fd, path
        self.opened_paths.append(path)
        self._maybe_prune()
        return fd

    def _maybe_prune(self) -> None:
        if self.retention_days is None or time.monotonic() < self._next_prune:
            return
        self._next_prune = time.monotonic() + DAY_SECONDS
        deleted = prune_files(self.directory, filename_pattern(self.filename), self.retention_days, keep=self._path)
        if deleted:
            logger.info("hermes_pipeline: export %s: retention removed %d file(s) older than %d day(s)",
                        self.label, deleted, self.retention_days)
            # The definitions only the deleted files referred to go too (unused for a day; any ``.json`` or
            # ``.jsonl`` file of the directory, an ATIF output's included, keeps what it refers to).
            from .definition_files import prune_unreferenced

            unused = prune_unreferenced(self.directory, time.time(), suffixes=(".json", ".jsonl"))
            self.definitions_pruned += unused
            if unused:
                logger.info("hermes_pipeline: export %s: removed %d definition file(s) no file refers to",
                            self.label, unused)

    def write(self, batch: list[Any]) -> None:
        """Append the lines of ``batch``; on failure roll back to the last complete line and raise.

        Every process of a profile may append to the same file, so the append and its rollback happen under
        an advisory ``flock`` of the file (one lock and unlock per batch): a rollback then removes only this
        batch's own bytes, never a line another process appended meanwhile, and no torn line is ever left
        for another process's line to be glued to. The lock is waited for at most :data:`APPEND_LOCK_TIMEOUT`
        (a peer stuck in a write must not hang this writer): then :class:`~.locks.FileLockTimeout` is raised
        with nothing written, and the writer retries the batch or counts it dropped (``dropped_after_errors``).
        Where the file system cannot lock at all, a failed batch is truncated only when the file's size is
        still exactly what this batch left (nothing appended behind it)."""
        fd = self._ensure()
        self._maybe_prune()
        try:
            locked = flock_within(fd, self.lock_timeout)
        except OSError:  # no locks on this file system (ENOLCK, EOPNOTSUPP): the guarded rollback below
            locked = None
        if locked is False:
            raise FileLockTimeout(None, self.lock_timeout)
        try:
            try:
                start = os.fstat(fd).st_size
            except OSError:
                start = None
            progress = [0]
            try:
                write_lines(fd, batch, progress)
            except OSError:
                self._roll_back(fd, start, progress[0], bool(locked))
                self._close_fd()  # reopen on the next batch (the lock goes with the descriptor)
                raise
        finally:
            if locked and self._fd == fd:
                try:
                    funlock(fd)
                except OSError:
                    pass

    @staticmethod
    def _roll_back(fd: int, start: int | None, written: int, locked: bool) -> None:
        """Cut the file back to ``start``, the size before this batch. Under the lock everything past ``start`` is
        this batch's own (whatever the failed call reported). Without a lock (a file system that has none), only
        while the file ends with exactly the ``written`` bytes this batch reported: another process may have
        appended behind them, and its lines are never cut (the torn part then stays, counted with the batch)."""
        if start is None:
            return
        try:
            size = os.fstat(fd).st_size
            if size > start and (locked or (written and size == start + written)):
                os.ftruncate(fd, start)
        except OSError:
            pass

    def _close_fd(self) -> None:
        if self._fd is not None:
            try:
                os.close(self._fd)
            except OSError:
                pass
            self._fd = None

    def close(self) -> None:
        """Close the file."""
        self._close_fd()
