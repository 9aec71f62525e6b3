"""Write failures of the store: classified, counted, logged once per kind and period, and kept on disk.

Every row the store was handed and could not write is counted here, by the kind of failure:

``full``      the disk (or SQLite's page limit) is full: ``SQLITE_FULL``, ``ENOSPC``;
``damaged``   the file is not a database or its pages are damaged (``SQLITE_CORRUPT``, ``SQLITE_NOTADB``);
``locked``    another process held the write lock past the busy timeout;
``readonly``  the file or its directory cannot be written;
``io``        another I/O error of the operating system;
``error``     anything else (a row SQLite refused).

A failure is logged at once the first time its kind occurs, then at most once per
:data:`LOG_PERIOD_S` with the counts since the last line, so a full disk cannot flood the log.
The counters also go to ``observability/write-failures.json`` beside the database (merged across
the processes of one profile, under the store's scan lock), so that ``hermes-pipeline doctor``
and the dashboard, which run in other processes, can say that writes fail and how much was lost.
That file is written only when a failure kind is first seen in a period, on recovery and at close.
A full disk must not silence it: the first successful write of a process reserves
:data:`RESERVED_BYTES` for it (JSON padded with spaces), and when the usual replace-by-rename finds
no space the record is overwritten in place, inside the blocks it already owns.

The record also says *which* skills and memory files have changes the store did not record
(``unrecorded``, by the scan state's keys ``skill:<name>`` / ``memory:<path>``, :func:`~.scan.state_key`):
those whose rows were given up (``pid`` 0), and those whose rows wait for a retry in a process (its ``pid``;
they count as lost once that process is gone without writing them). Rows given up without knowing
what they were (events dropped from the queue, a close stuck in a write) put the whole kind there
(:data:`ANY_SKILL`, :data:`ANY_MEMORY`). A rescan that finds such a skill or file changed cannot say who
changed it: the agent's lost change or the user's. It records the change as not attributed, saying why
(:class:`~.unrecorded.Unrecorded`), instead of blaming the user; the entries go once a rescan has looked
(:func:`~.unrecorded.forget_unrecorded`).

The record is read without ever blocking (:func:`~hermes_pipeline.host.profile_files.read_regular_bytes`): a FIFO,
device, directory or oversized file at its name is refused at once, warned once naming it, and replaced by this
process's counts. Over 400 lines on purpose: the counters and the record on disk they merge into are one piece.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import sqlite3
import stat
import threading
import time
from pathlib import Path
from collections.abc import Collection, Mapping
from typing import Any, Final

from ...export.locks import FileLockTimeout, file_lock
from ...host.profile_files import MAX_SMALL_FILE_BYTES, ProfileFileError, read_regular_bytes, warn_unreadable

logger: Final = logging.getLogger("hermes_pipeline.sinks.observability_store")

FILENAME: Final = "write-failures.json"
LOG_PERIOD_S: Final = 300.0
"""At most one log line per failure kind in this many seconds (the first one at once)."""
KINDS: Final = ("full", "damaged", "locked", "readonly", "io", "error", "queue")
"""``queue``: events dropped before they reached the store (its queue full, or still queued at close)."""
RESERVED_BYTES: Final = 16_384
ANY_SKILL: Final = "*skill"
ANY_MEMORY: Final = "*memory"
SAVE_LOCK_TIMEOUT: Final = 1.0
"""Seconds a save waits for the scan lock (a commit holds it for a transaction); past it the counts wait here."""
CLOSING_LOCK_TIMEOUT: Final = 0.05
"""The shortest wait of a save once the close's deadline is near or past (one more look, never a hang)."""
MAX_UNRECORDED: Final = 64
"""Skills and memory files named in ``unrecorded`` at most; beyond, their kind as a whole (:data:`ANY_SKILL`)."""


def failures_path(store: Path) -> Path:
    """The failure record beside the database file ``store``."""
    return store.with_name(FILENAME)


def classify(exc: BaseException) -> str:
    """The kind (one of :data:`KINDS`) of a failed write."""
    from .db import StoreBusy

    if isinstance(exc, StoreBusy | FileLockTimeout):
        return "locked"
    text = str(exc).lower()
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(exc, UnicodeDecodeError):  # a damaged page's bytes in a name or message
        return "damaged"
    if isinstance(exc, OSError):
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            return "full"
        if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
            return "readonly"
        return "io"
    if code == sqlite3.SQLITE_FULL or "disk is full" in text:
        return "full"
    if code in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB) or "malformed" in text or "not a database" in text:
        return "damaged"
    if code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED) or "locked" in text or "busy" in text:
        return "locked"
    if code == sqlite3.SQLITE_READONLY or "readonly" in text or "read-only" in text or "cannot create" in text:
        return "readonly"
    if code == sqlite3.SQLITE_IOERR or "i/o error" in text:
        return "io"
    return "error"


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class WriteFailures:
    """The failure counters of one store writer (one thread: the sink's writer).

    Args:
        store: the database file (the record goes beside it).
        log_period: seconds between two log lines of one kind.
    """

    def __init__(self, store: Path, *, log_period: float = LOG_PERIOD_S) -> None:
        self.path = failures_path(store)
        self.lock_path = store.with_name(".scan.lock")
        self.log_period = log_period
        self.failures: dict[str, int] = {}
        """Failed write attempts by kind (a busy store retried later counts each attempt)."""
        self.rows_lost: dict[str, int] = {}
        """Rows given up by kind: never written, never to be."""
        self.last_reason: str | None = None
        self.last_kind: str | None = None
        self.failing = False
        """The last write attempt failed (cleared by the next one that succeeds)."""
        self._checked_record = False
        """Whether the record on disk was looked at since start (another process may have left it failing)."""
        self._counts_lock = threading.RLock()
        """Guards the counters and the unsaved deltas: the writer thread counts, a closing thread may too."""
        self._logged_at: dict[str, float] = {}
        self._since_log: dict[str, list[int]] = {}
        self._unsaved: dict[str, list[int]] = {}
        """Per kind ``[failures, rows_lost]`` not yet merged into the record on disk."""
        self._unsaved_reason: dict[str, str] = {}
        self._unsaved_keys: dict[str, int] = {}
        """Skills / memory files with changes not recorded → 0 (rows given up) or this pid (rows waiting)."""
        self._waiting_saved: set[str] = set()
        self._recovered_unsaved = False  # a recovery not in the record yet (its save found the scan lock held)
        self._save_lock = threading.Lock()
        """One save at a time (the writer thread's, a closing thread's), taken with a timeout."""
        self.close_by: float | None = None
        """``time.monotonic()`` by which a closing store must be done: saves then wait less for the scan lock."""
        self.lock_timeouts = 0
        """Saves that found the scan lock held past their wait (the counts stayed for the next save)."""
        self.unsaved_at_close = 0

    # ------------------------------------------------------------------ counting

    def failed(self, exc: BaseException, *, waiting: int, lost: int = 0,
               unrecorded: Collection[str] | None = ()) -> str:
        """Count one failed write (``waiting`` rows kept for a retry, ``lost`` given up, ``unrecorded`` the skills and
        memory files those lost rows were about: ``None`` when unknown); its kind."""
        kind = classify(exc)
        if lost:
            self._unrecorded(unrecorded)
        reason = f"{kind}: {str(exc)[:200] or type(exc).__name__}"
        with self._counts_lock:  # stats() copies these from other threads
            self.failures[kind] = self.failures.get(kind, 0) + 1
        self.last_reason, self.last_kind, self.failing = reason, kind, True
        self._add(kind, 1, lost, reason)
        now = time.monotonic()
        last = self._logged_at.get(kind)
        if last is None or now - last >= self.log_period:
            failures, dropped = self._since_log.pop(kind, [0, 0])
            self._logged_at[kind] = now
            more = "" if last is None else f" ({failures} failure(s) and {dropped} lost row(s) of this kind since " \
                                           "the last report)"
            logger.warning("hermes_pipeline: observability store: a write failed (%s); %d row(s) wait for a retry, "
                           "%d lost, counted in %s and shown by hermes-pipeline doctor%s", reason, waiting,
                           self.rows_lost.get(kind, 0), self.path.name, more,
                           extra={"event": "observability_store_write_failed", "kind": kind})
            self.save()
        return kind

    def lost(self, kind: str, count: int, unrecorded: Collection[str] | None = ()) -> None:
        """Count ``count`` rows given up after failures of ``kind`` (a bounded backlog, or the close); ``unrecorded``:
        the skills and memory files (scan state keys) those rows were about, ``None`` when unknown."""
        if count <= 0:
            return
        self._unrecorded(unrecorded)
        self._add(kind, 0, count, self.last_reason or kind)
        now = time.monotonic()
        last = self._logged_at.get("lost:" + kind)
        if last is not None and now - last < self.log_period:
            return
        self._logged_at["lost:" + kind] = now
        logger.warning("hermes_pipeline: observability store: %d row(s) could not be written and were dropped "
                       "(%s); %d lost in all", count, self.last_reason or kind, sum(self.rows_lost.values()),
                       extra={"event": "observability_store_rows_lost", "kind": kind})

    def _add(self, kind: str, failures: int, lost: int, reason: str) -> None:
        with self._counts_lock:
            if lost:
                self.rows_lost[kind] = self.rows_lost.get(kind, 0) + lost
            for table in (self._since_log, self._unsaved):
                entry = table.setdefault(kind, [0, 0])
                entry[0] += failures
                entry[1] += lost
            self._unsaved_reason[kind] = reason

    def _unrecorded(self, keys: Collection[str] | None) -> None:
        """Rows about ``keys`` (``None``: about anything) are given up: saved at once (a scan must know)."""
        with self._counts_lock:
            for key in (ANY_SKILL, ANY_MEMORY) if keys is None else keys:
                self._unsaved_keys[key] = 0
        if keys is None or keys:
            self.save()

    def waiting(self, keys: Collection[str]) -> None:
        """Rows about ``keys`` wait for a retry in this process: named in the record (lost if it dies first)."""
        with self._counts_lock:
            new = [k for k in keys if k not in self._waiting_saved]
            if not new:
                return
            for key in new:
                self._unsaved_keys.setdefault(key, os.getpid())
                self._waiting_saved.add(key)
        self.save()

    def succeeded(self) -> None:
        """A write went through: the store is writable again (recorded if it was failing)."""
        with self._counts_lock:  # nothing of this process waits any more (the writer's commit took its names off)
            self._waiting_saved.clear()
            self._unsaved_keys = {k: v for k, v in self._unsaved_keys.items() if v == 0}
        if self.failing:
            self.failing = False
            self.save(recovered=True)
        elif not self._checked_record:  # once per process: a failure left by an earlier writer is over now
            self._checked_record = True
            try:
                reserved = self.path.stat().st_size >= RESERVED_BYTES
            except OSError:
                reserved = False
            if not reserved or read_failures_file(self.path).get("failing_since"):
                self.save(recovered=True)  # also reserves the record's space while the disk has some

    # ------------------------------------------------------------------ the record on disk

    def save(self, *, recovered: bool = False, timeout: float | None = None) -> bool:
        """Merge the counts not saved yet into the record (best effort: a full disk may refuse it); ``True`` when
        nothing is left unsaved. The scan lock is waited for at most ``timeout`` seconds (default
        :data:`SAVE_LOCK_TIMEOUT`, less once :attr:`close_by` nears): a peer holding it keeps the counts here, for
        the next save; the counters in memory (:meth:`stats`) have them at once either way."""
        if timeout is None:
            timeout = SAVE_LOCK_TIMEOUT if self.close_by is None else \
                min(SAVE_LOCK_TIMEOUT, max((self.close_by - time.monotonic()) / 2, CLOSING_LOCK_TIMEOUT))
        end = time.monotonic() + timeout
        if not self._save_lock.acquire(timeout=timeout):  # another thread's save waits for the lock: it has them
            return False
        try:
            return self._save(recovered, max(end - time.monotonic(), 0.0))
        finally:
            self._save_lock.release()

    def _save(self, recovered: bool, timeout: float) -> bool:
        with self._counts_lock:  # taken off under the counters' lock, put back if not saved: never held while waiting
            recovered = recovered or self._recovered_unsaved
            if not self._unsaved and not self._unsaved_keys and not recovered:
                return True
            unsaved, reasons, keys = self._unsaved, self._unsaved_reason, self._unsaved_keys
            self._unsaved, self._unsaved_reason, self._unsaved_keys = {}, {}, {}
            self._recovered_unsaved = False
            failing, last_reason = self.failing, self.last_reason
        try:
            with file_lock(self.lock_path, timeout=timeout):
                record = read_failures_file(self.path)
                kinds = record.setdefault("kinds", {})
                stamp = _now()
                for kind, (failures, lost) in unsaved.items():
                    entry = kinds.setdefault(kind, {"failures": 0, "rows_lost": 0, "first_at": stamp})
                    entry["failures"] = int(entry.get("failures", 0)) + failures
                    entry["rows_lost"] = int(entry.get("rows_lost", 0)) + lost
                    entry["last_at"] = stamp
                    entry["last_reason"] = reasons.get(kind, kind)
                if failing:
                    record["failing_since"] = record.get("failing_since") or stamp
                    record["last_reason"] = last_reason
                if recovered:
                    record["failing_since"] = None
                    record["recovered_at"] = stamp
                if keys or "unrecorded" not in record:
                    _merge_unrecorded(record, keys, stamp)
                write_record(self.path, record)
        except OSError as exc:  # FileLockTimeout among them: kept for the next save
            with self._counts_lock:
                for kind, (failures, lost) in unsaved.items():
                    entry = self._unsaved.setdefault(kind, [0, 0])
                    entry[0] += failures
                    entry[1] += lost
                    self._unsaved_reason.setdefault(kind, reasons.get(kind, kind))
                for key, pid in keys.items():  # a wait that ended meanwhile (its rows are in) is not put back
                    if self._unsaved_keys.get(key) != 0 and (pid == 0 or key in self._waiting_saved):
                        self._unsaved_keys[key] = pid
                self._recovered_unsaved = self._recovered_unsaved or recovered
            self.lock_timeouts += isinstance(exc, FileLockTimeout)
            return False
        return True

    def unsaved(self) -> int:
        """Rows counted lost (and failures) not in the record on disk yet."""
        with self._counts_lock:
            return sum(lost + failures for failures, lost in self._unsaved.values()) + len(self._unsaved_keys)

    def final_save(self) -> bool:
        """The last save of a closing store, within :attr:`close_by`: what stays unsaved (the scan lock held by a peer
        past the deadline, a full disk) is warned about with its counts, which :meth:`stats` keeps
        (``rows_lost``, ``record_unsaved``); ``True`` when the record has everything."""
        if self.save():
            return True
        with self._counts_lock:
            lost, self.unsaved_at_close = sum(entry[1] for entry in self._unsaved.values()), self.unsaved()
        logger.warning("hermes_pipeline: observability store: %d lost row(s) and their failures could not be added to "
                       "%s at close (%s); they are counted in this process's stats only", lost, self.path.name,
                       "the store's scan lock is held by another process" if self.lock_timeouts else "it cannot be "
                       "written", extra={"event": "observability_failure_record_unsaved"})
        return False

    def dropped(self, events: int, why: str) -> None:
        """Count events dropped before they reached the store (kind ``queue``): any skill or memory change may be
        among them."""
        if events > 0:
            self._unrecorded(None)
            self._add("queue", 0, events, f"queue: {why}")
            logger.warning("hermes_pipeline: observability store: %d event(s) were dropped before reaching the "
                           "store (%s)", events, why, extra={"event": "observability_store_rows_lost", "kind": "queue"})

    def stats(self) -> dict[str, Any]:
        """``write_failures``, ``rows_lost``, by kind, and the last failure's reason (``None`` when writable)."""
        with self._counts_lock:
            failures, lost = dict(self.failures), dict(self.rows_lost)
        return {"write_failures": sum(failures.values()), "rows_lost": sum(lost.values()),
                "write_failures_by_kind": failures, "rows_lost_by_kind": lost,
                "failed": self.last_reason if self.failing else None, "record_unsaved": self.unsaved(),
                "record_lock_timeouts": self.lock_timeouts}


def read_failures_file(path: Path) -> dict[str, Any]:
    """The record at ``path``; ``{}`` when missing or unreadable (it is advisory)."""
    try:  # never blocks: a FIFO here would stall the writer thread and the close
        data = json.loads(read_regular_bytes(path, MAX_SMALL_FILE_BYTES).decode("utf-8"))
    except ProfileFileError as exc:
        warn_unreadable(logger, exc, "observability store: failure record",
                        event="observability_failure_record_unreadable")
        return {}
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def read_failures(store: Path) -> dict[str, Any]:
    """What the record beside ``store`` says: ``failing`` (the reason, or ``None``), ``rows_lost``,
    ``write_failures`` and ``kinds`` (per kind counts, first and last time, last reason)."""
    record = read_failures_file(failures_path(store))
    listed = record.get("kinds")
    kinds = {k: v for k, v in listed.items() if isinstance(v, dict)} if isinstance(listed, dict) else {}
    return {"failing": record.get("last_reason") if record.get("failing_since") else None,
            "failing_since": record.get("failing_since"), "recovered_at": record.get("recovered_at"),
            "rows_lost": sum(int(v.get("rows_lost", 0) or 0) for v in kinds.values()),
            "write_failures": sum(int(v.get("failures", 0) or 0) for v in kinds.values()), "kinds": kinds}


def write_record(path: Path, record: Mapping[str, Any]) -> None:
    """Write the failure record (the caller holds the store's scan lock): replaced by a rename, padded to
    :data:`RESERVED_BYTES`; when the disk has no room for that, overwritten in place in the blocks it owns."""
    data = json.dumps(record, indent=1, sort_keys=True).encode("utf-8")
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.ljust(RESERVED_BYTES - 1) + b"\n")
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
        fd = os.open(path, os.O_RDWR | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))  # never waits
        with os.fdopen(fd, "r+b") as fh:
            info = os.fstat(fh.fileno())
            size = info.st_size if stat.S_ISREG(info.st_mode) else 0
            if len(data) >= size:  # also a FIFO or a device: nothing is written to it
                raise OSError(errno.ENOSPC, "no room for the failure record") from None
            fh.write(data.ljust(size - 1) + b"\n")


def _merge_unrecorded(record: dict[str, Any], keys: Mapping[str, int], stamp: str) -> None:
    """Add ``keys`` (→ 0 given up, or the pid whose rows wait) to the record's ``unrecorded``, bounded."""
    from .scan import state_key

    listed = record.get("unrecorded")
    entries: dict[str, Any] = dict(listed) if isinstance(listed, Mapping) else {}
    for key, pid in keys.items():
        name = state_key(key)
        old = entries.get(name)
        if pid and isinstance(old, Mapping) and old.get("pid") == 0:
            continue  # already given up: a retry elsewhere does not make it recorded
        entries[name] = {"at": old.get("at", stamp) if isinstance(old, Mapping) else stamp, "pid": int(pid)}
    named = [k for k in entries if k not in (ANY_SKILL, ANY_MEMORY)]
    if len(named) > MAX_UNRECORDED:  # too many to name: their kinds as a whole (given up if any of them was)
        for key in named:
            entry = entries.pop(key)
            entry = dict(entry) if isinstance(entry, Mapping) else {"at": stamp, "pid": 0}
            wild = ANY_MEMORY if key.startswith("memory:") else ANY_SKILL
            for target in (wild,) if key.startswith(("skill:", "memory:")) else (ANY_SKILL, ANY_MEMORY):
                kept = entries.setdefault(target, entry)
                if entry.get("pid") == 0:
                    kept["pid"] = 0
    record["unrecorded"] = entries
