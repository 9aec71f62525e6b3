"""The store as a sink of a scope stream (spec 06 BOOK-16, BOOK-25).

:class:`ObservabilityStoreSink` follows the sink contract (:mod:`hermes_pipeline.sinks.base`): it is
called on the scope plugin's publication thread and only enqueues; its own writer thread
(:class:`~hermes_pipeline.export.writer.BoundedWriter`) turns events into rows
(:class:`~hermes_pipeline.export.task_runs.RowBuilder`) and commits each batch in one transaction (:class:`~.store_writer.StoreWriter`).
Rescans are requests on the same queue (:meth:`request_scan`), so every database write happens on
that one thread. A store that cannot be written (disk full, damaged pages, read-only, locked past the
busy timeout) keeps its rows for a retry, within a bound; every failure and every row given up is
counted (:mod:`.failures`, shown by ``doctor`` and the dashboard) and logged once per kind and period.
The agent never sees it.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any, ClassVar, Final

from ...export.events import ScopeEvent, submit_paired, submit_paired_many
from ...export.sizes import event_bytes
from ...export.writer import BoundedWriter
from ..base import BaseSink, SinkContext
from .db import StoreBusy
from .failures import WriteFailures
from ...export.call_cost import parse_pricing
from .store_writer import SCAN_FINAL, StoreWriter
from ...export.task_runs import RowBuilder

logger: Final = logging.getLogger("hermes_pipeline.sinks.observability_store")

SCAN_ALL: Final = "scan_all"


CLOSE_SHARE: Final = 0.8
"""Share of the shutdown deadline the last writes may wait for a lock: the rest closes and counts."""
MAX_BACKLOG: Final = 10_000
"""Rows kept for a retry while the store cannot be written; beyond it the oldest are dropped and counted."""
_ROW_ERRORS: Final = (sqlite3.IntegrityError, sqlite3.InterfaceError, sqlite3.ProgrammingError, TypeError,
                      ValueError)
"""Failures of the rows themselves, not of the store: retrying them cannot help."""


class _Destination:
    """The writer thread's side: rows from events, one transaction per batch.

    A batch that cannot be written (disk full, damaged pages, the lock held past the busy timeout, a
    read-only file) stays queued in the store writer and is tried again with the next batch, up to
    :data:`MAX_BACKLOG` rows; every failure and every row given up is counted in
    :class:`~.failures.WriteFailures` and logged once per kind and period. Nothing is dropped silently.
    """

    def __init__(self, store_writer: StoreWriter, builder: RowBuilder, failures: WriteFailures,
                 max_backlog: int = MAX_BACKLOG) -> None:
        self.store_writer = store_writer
        self.builder = builder
        self.failures = failures
        self.max_backlog = max_backlog
        self.events = 0
        self._settle_lock = threading.Lock()
        self._settled = False
        self.close_by: float | None = None
        """``time.monotonic()`` by which :meth:`close` must have written or counted every row."""

    def describe(self) -> str:
        return "observability store"

    def write(self, batch: list[Any]) -> None:
        for item in batch:
            if isinstance(item, ScopeEvent):
                self.events += 1
                self.store_writer.add(self.builder.feed(item))
            else:
                self.store_writer.add([item])
        self.attempt()

    def attempt(self) -> bool:
        """Try to write everything queued; ``True`` when nothing is left. Once the sink is closing, each
        attempt waits for a lock at most half the time left, so every row is written or counted before
        the close's deadline."""
        store_writer = self.store_writer
        if self.close_by is not None:
            try:
                store_writer.wait_at_most(max(self.close_by - time.monotonic(), 0.0) / 2)
            except Exception:  # noqa: S110 (a broken connection: the attempt below says how)
                pass
        try:
            if store_writer.commit():
                self.failures.succeeded()
                return True
            error: BaseException = store_writer.busy_error or StoreBusy("database is locked")
        except Exception as exc:  # the store's failure, or a row's: counted either way
            error = exc
            store_writer.close()  # reopened by the next attempt: a file replaced or repaired is picked up
            if isinstance(exc, _ROW_ERRORS):
                lost = store_writer.discard()
                self.failures.failed(exc, waiting=0, lost=lost, unrecorded=store_writer.take_unrecorded())
                return True
        kind = self.failures.failed(error, waiting=store_writer.pending_rows)
        excess = store_writer.pending - self.max_backlog
        if excess > 0:
            self.failures.lost(kind, store_writer.discard(excess), store_writer.take_unrecorded())
        self.failures.waiting(store_writer.pending_keys())  # lost if this process ends before they are written
        return False

    def close(self) -> None:
        for _ in range(2):  # a busy store gets a second wait before the rows are given up
            if not self.store_writer.pending or (self.close_by is not None and time.monotonic() >= self.close_by):
                break
            if self.attempt():
                break
        rows = self.store_writer.discard()
        self.settle(rows, self.store_writer.take_unrecorded())
        self.store_writer.close()

    def settle(self, rows: int, unrecorded: Collection[str] | None = None) -> None:
        """Count ``rows`` never written as lost, once: from :meth:`close` on the writer thread, or from a
        shutdown whose deadline passed while the writer was stuck in a write (those rows are then counted
        at once, like the writer's ``dropped_at_close``, even if the stuck write completes later).
        ``unrecorded``: the skills and memory files those rows were about (``None``: not known)."""
        with self._settle_lock:
            if self._settled:
                return
            self._settled = True
        self.failures.lost(self.failures.last_kind or "error", rows, unrecorded)
        self.failures.save()


class ObservabilityStoreSink(BaseSink):
    """Rows of the local observability store from scope events (see the module docstring).

    Args:
        config: ``home`` (``$HERMES_HOME``, required), ``memory_dirs``, ``skills_dir``,
            ``excerpt_chars``, ``pricing`` (the ``observability.pricing`` table), ``runs_days``,
            ``history_days`` (retention), ``max_queue_size``.
        ctx: the sink context (its name only).

    Raises:
        PricingError: the price table has a negative or non-numeric price (the error names the key).
    """

    never_blocks: ClassVar[bool] = True
    """``__call__`` only queues on this sink's own bounded writers (or counts in memory): it is called on
    the publication thread directly (:mod:`hermes_pipeline.export.isolation`)."""

    def __init__(self, config: Mapping[str, Any], ctx: SinkContext | None = None) -> None:
        home = Path(str(config["home"]))
        self.store_writer = StoreWriter(home, memory_dirs=config.get("memory_dirs") or ("memories",),
                                 skills_dir=str(config.get("skills_dir") or "skills"),
                                 excerpt_chars=int(config.get("excerpt_chars") or 500),
                                 runs_days=int(config.get("runs_days", 90)),
                                 history_days=int(config.get("history_days", 365)))
        self.failures = WriteFailures(self.store_writer.path)
        self._dest = _Destination(self.store_writer, RowBuilder(parse_pricing(config.get("pricing"))), self.failures,
                                  int(config.get("max_backlog") or MAX_BACKLOG))
        self._dropped_starts: set[int] = set()
        queue_bytes = ctx.max_queue_bytes if ctx is not None else None  # the profile's observability.max_queue_bytes
        self._writer = BoundedWriter(self._dest, name="observability_store",
                                     max_queue_size=int(config.get("max_queue_size") or 100_000), max_attempts=1,
                                     max_queue_bytes=queue_bytes, size=event_bytes if queue_bytes is not None else None)
        self._writer.start()

    def __call__(self, event: ScopeEvent) -> None:
        submit_paired(self._writer, event, self._dropped_starts)

    def take_many(self, events: list[ScopeEvent]) -> None:
        """The events of one publication batch, as one call per event would: one hand-over to the writer."""
        submit_paired_many(self._writer, events, self._dropped_starts)

    def request_scan(self, kind: str = SCAN_ALL) -> bool:
        """Queue a rescan (``scan_all``, ``scan_skills``, ``scan_memory``) or the retention cleanup (``prune``)
        on the writer thread."""
        return self._writer.submit(kind, force=True, nbytes=0)

    def submit(self, item: object) -> bool:
        """Queue an item that is no scope event (a staged write's row, an approved write's change: :mod:`.staged`)
        on the writer thread; ``False`` when the writer is closed."""
        return self._writer.submit(item, force=True, nbytes=0)

    def flush(self, timeout: float) -> bool:
        """Write every queued event and scan; ``True`` when done in time and nothing is left pending."""
        return self._writer.flush(timeout) and self.store_writer.pending == 0

    def shutdown(self, deadline: float) -> bool:
        """Write what is queued and a last memory scan (every event is in by then), then close the database."""
        self._writer.submit(SCAN_FINAL, force=True)
        self._dest.close_by = time.monotonic() + deadline * CLOSE_SHARE
        self.failures.close_by = self._dest.close_by  # saves wait less for the scan lock from now on
        done = self._writer.close(deadline)
        if not done:  # the writer is stuck in a write past the deadline: what it holds is lost, counted now
            self._dest.settle(self.store_writer.pending_rows, None)
        counts = self._writer.stats()
        dropped = sum(counts.get(key, 0) for key in ("dropped_queue_full", "dropped_at_close", "dropped_closed",
                                                       "dropped_after_errors"))
        if dropped:  # events that never reached the rows: counted with the store's losses, for doctor
            self.failures.dropped(dropped, "the store's queue was full or still held events at close")
        self.failures.final_save()  # within the deadline: what the record cannot get is warned and stays in stats
        return done

    def stats(self) -> Mapping[str, Any]:
        """Writer counters plus rows written, pending items, busy retries, and the write failures:
        ``write_failures`` and ``rows_lost`` (in all and ``..._by_kind``), ``failed`` (the last failure's
        reason while the store cannot be written, else ``None``)."""
        out: dict[str, Any] = dict(self._writer.stats())
        out.update({"rows_written": self.store_writer.rows_written, "rows_pending": self.store_writer.pending_rows,
                    "busy_retries": self.store_writer.busy_retries, "rows_pruned": self.store_writer.pruned})
        out.update(self.failures.stats())
        return out

    def destinations(self) -> list[str]:
        """The database file."""
        return [str(self.store_writer.path)]
