"""The store as a sink of the projection's event stream (spec 06 BOOK-16, BOOK-25).

:class:`ObservabilityStoreSink` follows the sink contract (:mod:`hermes_pipeline.sinks.base`): it is
called on the projection's publication thread and only enqueues; its own writer thread
(:class:`~hermes_pipeline.export.writer.BoundedWriter`) turns events into rows
(:class:`~.rows.RowBuilder`) and commits each batch in one transaction (:class:`~.recorder.Recorder`).
Rescans are requests on the same queue (:meth:`request_scan`), so every database write happens on
that one thread. A store that cannot be opened (read-only profile, locked past every retry) is
reported once and its events are counted as dropped; the agent never sees it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Final

from ...export.events import ScopeEvent, submit_paired
from ...export.writer import BoundedWriter
from ..base import BaseSink, SinkContext
from .db import StoreError
from .pricing import parse_pricing
from .recorder import SCAN_FINAL, Recorder
from .rows import RowBuilder

logger: Final = logging.getLogger("hermes_pipeline.sinks.observability_store")

SCAN_ALL: Final = "scan_all"


class _Destination:
    """The writer thread's side: rows from events, one transaction per batch."""

    def __init__(self, recorder: Recorder, builder: RowBuilder) -> None:
        self.recorder = recorder
        self.builder = builder
        self.failed: str | None = None
        self.events = 0

    def describe(self) -> str:
        return "observability store"

    def write(self, batch: list[Any]) -> None:
        for item in batch:
            if isinstance(item, ScopeEvent):
                self.events += 1
                self.recorder.add(self.builder.feed(item))
            else:
                self.recorder.add([item])
        if self.failed is not None:
            return
        try:
            self.recorder.commit()  # busy: kept, written with the next batch
        except (StoreError, OSError) as exc:
            self.failed = str(exc)
            logger.warning("hermes_pipeline: observability store disabled for this process: %s", exc,
                           extra={"event": "observability_store_failed"})
        except Exception as exc:  # a broken row never stops the stream
            logger.warning("hermes_pipeline: observability store: a batch could not be written (%s: %s)",
                           type(exc).__name__, str(exc)[:200], extra={"event": "observability_store_write_failed"})

    def close(self) -> None:
        if self.failed is None:
            try:
                if not self.recorder.commit():
                    self.recorder.commit()
            except Exception as exc:
                logger.warning("hermes_pipeline: observability store: the last rows could not be written (%s)",
                               type(exc).__name__, extra={"event": "observability_store_write_failed"})
        self.recorder.close()


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
        self.recorder = Recorder(home, memory_dirs=config.get("memory_dirs") or ("memories",),
                                 skills_dir=str(config.get("skills_dir") or "skills"),
                                 excerpt_chars=int(config.get("excerpt_chars") or 500),
                                 runs_days=int(config.get("runs_days", 90)),
                                 history_days=int(config.get("history_days", 365)))
        self._dest = _Destination(self.recorder, RowBuilder(parse_pricing(config.get("pricing"))))
        self._dropped_starts: set[int] = set()
        self._writer = BoundedWriter(self._dest, name="observability_store",
                                     max_queue_size=int(config.get("max_queue_size") or 100_000), max_attempts=1)
        self._writer.start()

    def __call__(self, event: ScopeEvent) -> None:
        submit_paired(self._writer, event, self._dropped_starts)

    def request_scan(self, kind: str = SCAN_ALL) -> bool:
        """Queue a rescan (``scan_all``, ``scan_skills``, ``scan_memory``) or the retention cleanup (``prune``)
        on the writer thread."""
        return self._writer.submit(kind, force=True)

    def flush(self, timeout: float) -> bool:
        """Write every queued event and scan; ``True`` when done in time and nothing is left pending."""
        return self._writer.flush(timeout) and self.recorder.pending == 0

    def shutdown(self, deadline: float) -> bool:
        """Write what is queued and a last memory scan (every event is in by then), then close the database."""
        self._writer.submit(SCAN_FINAL, force=True)
        return self._writer.close(deadline)

    def stats(self) -> Mapping[str, Any]:
        """Writer counters plus rows written, pending items and busy retries."""
        out: dict[str, Any] = dict(self._writer.stats())
        out.update({"rows_written": self.recorder.rows_written, "rows_pending": self.recorder.pending,
                    "busy_retries": self.recorder.busy_retries, "rows_pruned": self.recorder.pruned,
                    "failed": self._dest.failed})
        return out

    def destinations(self) -> list[str]:
        """The database file."""
        return [str(self.recorder.path)]
