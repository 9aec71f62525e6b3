"""Where ATIF trajectories go: atomic local files, HTTP storage, retention (spec 04 FMT-50..FMT-54, FMT-87a).

Every method here runs on an exporter worker thread, never on the hook caller's thread.

- :class:`TrajectoryDirectory` writes each :class:`~hermes_pipeline.sinks.atif.trajectory.TrajectoryFile`
  atomically (temporary file in the same directory, flush, ``fsync``, rename over the target), mode
  ``0600``, directories ``0700`` (FMT-52), and prunes its own old files when ``retention_days`` is set
  (at open and every 24 hours, FMT-87a); whole-session trajectories of a session resumed in a later
  process extend that session's earlier file (:mod:`.resume`).
- :class:`HttpTrajectoryStorage` POSTs one trajectory per request (FMT-53).
- :class:`StorageUploads` is the destination of the bounded upload queue: each trajectory goes to
  every storage destination; when all of them fail, a recovery copy is written locally (FMT-54).
"""

from __future__ import annotations

import http.client
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

from ...export.atomic import make_dirs, remove_leftovers, sync_directory_of, write_atomically
from ...export.definition_files import DefinitionFiles
from ...export.errors import DeliveryError
from ...export.files import DAY_SECONDS
from ...export.http import display_url
from ...export.writer import Destination
from .config import HttpStorageConfig
from .filenames import FilenameTemplate
from .resume import SessionFiles

logger: Final = logging.getLogger("hermes_pipeline.sinks.atif")


_KNOWN_DIRECTORIES_MAX: Final = 1024
"""Directories a :class:`TrajectoryDirectory` remembers having made (then forgotten all at once and looked at again)."""


def prune_trajectories(directory: Path, template: FilenameTemplate, days: int) -> int:
    """Delete files under ``directory`` whose relative path matches ``template`` and that were last
    modified more than ``days`` days ago; returns how many were deleted (errors skipped, FMT-87a)."""
    pattern = template.pattern()
    cutoff = time.time() - days * DAY_SECONDS
    depth = template.max_depth
    deleted = 0
    for root, dirs, files in os.walk(directory):
        level = len(Path(root).relative_to(directory).parts)
        if level >= depth:
            dirs[:] = []
        for name in files:
            path = Path(root) / name
            relative = path.relative_to(directory).as_posix()
            try:
                if pattern.fullmatch(relative) and path.is_file() and not path.is_symlink() \
                        and path.stat().st_mtime < cutoff:
                    path.unlink()
                    deleted += 1
            except OSError:
                continue
    return deleted


class TrajectoryDirectory:
    """The local output: ``<directory>/<rendered filename_template>`` (FMT-50, FMT-52, FMT-87a).

    Args:
        directory: absolute output directory (created ``0700`` when missing).
        template: the filename template (for retention matching and :meth:`describe`).
        retention_days: delete this output's files older than that many days at open and every 24 h.
    """

    def __init__(self, directory: Path, template: FilenameTemplate, *, retention_days: int | None = None,
                 merge_sessions: bool = False, shared_definitions: bool = False) -> None:
        self.directory = directory
        self.shared = DefinitionFiles(directory) if shared_definitions else None
        """The ``definitions/`` sidecar a trajectory's shared definitions are written to, before the file."""
        self.template = template
        self.retention_days = retention_days
        self.sessions = SessionFiles(directory, template) if merge_sessions else None
        """With ``merge_sessions``: a session resumed in this process extends its earlier file (:mod:`.resume`)."""
        self.written: deque[Path] = deque(maxlen=256)
        """The most recently written paths (bounded; for tests and diagnostics)."""
        self._next_prune = 0.0
        self._made: set[Path] = set()
        """Directories made (or found) here before: a file written into one needs no look for it first."""
        self._unsynced: set[Path] = set()
        """Directories renamed into and not synced yet (see :meth:`holding`)."""
        self._holding = 0

    def describe(self) -> str:
        """``directory <path>/<template>``."""
        return f"directory {self.directory / self.template.text}"

    def open(self) -> None:
        """Remove temporary files a crashed writer left here (only of this template, never a live
        writer's), then prune old files when retention is configured."""
        pattern = self.template.pattern()
        try:
            removed = remove_leftovers(self.directory, lambda target: pattern.fullmatch(target) is not None,
                                       depth=self.template.max_depth)
        except OSError:
            removed = 0
        if removed:
            logger.info("hermes_pipeline: atif: removed %d temporary file(s) left by an interrupted write", removed)
        self._maybe_prune()

    def _maybe_prune(self) -> None:
        if self.retention_days is None or time.monotonic() < self._next_prune:
            return
        self._next_prune = time.monotonic() + DAY_SECONDS
        deleted = prune_trajectories(self.directory, self.template, self.retention_days)
        if deleted:
            logger.info("hermes_pipeline: atif: retention removed %d trajectory file(s) older than %d day(s)",
                        deleted, self.retention_days)

    def write(self, batch: list[Any]) -> None:
        """Write each trajectory file atomically; raise on the first failure. Each directory renamed into is
        synced once, after the batch's last file (or when :meth:`holding` ends), before this returns."""
        self._maybe_prune()
        try:
            for item in batch:
                definitions = getattr(item, "definitions", None)
                if definitions and self.shared is not None:
                    self.shared.ensure(definitions)  # first: a reader of the file always finds them
                if self.sessions is not None:  # merged into the session's file, read and written under its lock
                    name = self.sessions.write(item.name, getattr(item, "document", None), item.content,
                                               self._write_named)
                else:
                    name = item.name
                    self._write_file(self.directory / name, item.content)
                self.written.append(self.directory / name)
        finally:
            if not self._holding:
                self.sync()

    def _write_named(self, name: str, content: bytes) -> None:
        self._write_file(self.directory / name, content)

    def _write_file(self, path: Path, content: bytes) -> None:
        directory = path.parent
        if directory not in self._made:
            make_dirs(directory)
            if len(self._made) >= _KNOWN_DIRECTORIES_MAX:
                self._made.clear()
            self._made.add(directory)
        try:
            write_atomically(path, content, sync_directory=False)
        except FileNotFoundError:  # the directory was removed since it was made: made again, once
            self._made.discard(directory)
            make_dirs(directory)
            write_atomically(path, content, sync_directory=False)
        self._unsynced.add(directory)

    def sync(self) -> None:
        """``fsync`` each directory renamed into since the last sync (FMT-52: the renames are durable)."""
        directories, self._unsynced = self._unsynced, set()
        for directory in directories:
            sync_directory_of(directory)

    @contextmanager
    def holding(self) -> Iterator[None]:
        """Within the block, :meth:`write` leaves the directories' syncs to its end: a writer batch that ends several
        sessions syncs each directory once, after its last rename and before the batch counts as written."""
        self._holding += 1
        try:
            yield
        finally:
            self._holding -= 1
            if not self._holding:
                self.sync()


def _retryable(status: int) -> bool:
    return status >= 500 or status in (408, 425, 429)


class HttpTrajectoryStorage:
    """``type = "http"``: one ``POST`` per trajectory, ``Content-Type: application/json`` (FMT-53)."""

    def __init__(self, config: HttpStorageConfig) -> None:
        self.config = config
        parts = urlsplit(config.endpoint)
        self._https = parts.scheme == "https"
        self._host = parts.hostname or ""
        self._port = parts.port
        self._target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        self._timeout = config.timeout_millis / 1000

    def describe(self) -> str:
        """``http <scheme://host:port/path>`` without credentials or query."""
        return f"http {display_url(self.config.endpoint)}"

    def write(self, batch: list[Any]) -> None:
        for item in batch:
            cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
            conn = cls(self._host, self._port, timeout=self._timeout)
            headers = {**self.config.headers, "Content-Type": "application/json",
                       "x-hermes-atif-filename": item.name, "x-hermes-atif-session-id": item.trajectory_id}
            try:
                conn.request("POST", self._target, body=item.content, headers=headers)
                response = conn.getresponse()
                response.read()
                status = response.status
            except (OSError, http.client.HTTPException) as exc:
                error = DeliveryError(type(exc).__name__, retryable=True)
                raise error from exc
            finally:
                conn.close()
            if not 200 <= status < 300:
                raise DeliveryError(f"HTTP {status}", retryable=_retryable(status), status=status)


class StorageUploads:
    """Destination of the upload queue: every storage destination, then a local recovery copy (FMT-54).

    Args:
        storage: ``(index, destination)`` pairs, in configuration order.
        local: where recovery copies go.
        attempts: tries per destination for retryable failures (short backoff between them).
    """

    def __init__(self, storage: Sequence[tuple[int, Destination]], local: Destination, *, attempts: int = 2,
                 backoff: float = 0.1) -> None:
        self.storage = list(storage)
        self.local = local
        self.attempts = max(attempts, 1)
        self.backoff = backoff
        self.failures: dict[int, int] = {index: 0 for index, _ in self.storage}
        self.recovery_copies = 0
        self.recovery_errors = 0
        self.delivered = 0
        self._warned: set[str] = set()
        self._stop = threading.Event()

    def describe(self) -> str:
        return "atif storage uploads"

    def open(self) -> None:
        fn = getattr(self.local, "open", None)
        if callable(fn):
            fn()

    def close(self) -> None:
        self._stop.set()

    def _warn_once(self, key: str, message: str, *args: Any) -> None:
        if key not in self._warned:
            self._warned.add(key)
            logger.warning("hermes_pipeline: atif: " + message + "; later failures are counted silently", *args)

    def _deliver(self, index: int, destination: Destination, item: Any) -> bool:
        for attempt in range(1, self.attempts + 1):
            try:
                destination.write([item])
                return True
            except Exception as exc:
                kind = getattr(exc, "kind", None) or type(exc).__name__
                retry = bool(getattr(exc, "retryable", isinstance(exc, ConnectionError | TimeoutError)))
                if not retry or attempt == self.attempts or self._stop.is_set():
                    self.failures[index] += 1
                    self._warn_once(f"{index}:{kind}", "atif.delivery_failures[%d]: storage destination failed (%s)",
                                    index, kind)
                    return False
                self._stop.wait(self.backoff * attempt)
        return False

    def write(self, batch: list[Any]) -> None:
        for item in batch:
            results = [self._deliver(index, destination, item) for index, destination in self.storage]
            if any(results):
                self.delivered += 1
                continue
            try:
                self.local.write([item])
                self.recovery_copies += 1
            except Exception as exc:
                self.recovery_errors += 1
                self._warn_once(f"recovery:{type(exc).__name__}", "writing a local recovery copy failed (%s)",
                                type(exc).__name__)

    def counters(self) -> Mapping[str, int]:
        return {f"atif.delivery_failures[{index}]": count for index, count in self.failures.items()}
