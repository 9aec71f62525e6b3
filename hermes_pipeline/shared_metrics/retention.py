"""Local retention: 30 days of exported history (SM-63, SM-64).

Only history that is already safe on disk is pruned: package files and rows exported more than 30
days ago (whatever their send state), old latency samples, and fully packaged counter rows of old
periods with no unexported package left. Pending deltas and unexported packages survive any age.
A prune failure is logged and never undoes or fails the export that preceded it.
"""

from __future__ import annotations

import logging
import sqlite3
from datetime import datetime, timedelta
from typing import Final

from .clock import period_of, stamp
from .store import MetricsStore, transaction

logger: Final = logging.getLogger("hermes_pipeline.shared_metrics")

RETENTION: Final = timedelta(days=30)


def prune(store: MetricsStore, conn: sqlite3.Connection, now: datetime) -> dict[str, int]:
    """Apply SM-63 with ``cutoff = now - 30 days``; returns counts of what was removed (``{}`` on failure)."""
    cutoff = now - RETENTION
    cutoff_stamp = stamp(cutoff)
    removed = {"packages": 0, "files": 0, "samples": 0, "counters": 0}
    try:
        old = [row[0] for row in conn.execute(
            "SELECT package_id FROM package_outbox WHERE exported_at IS NOT NULL AND exported_at < ?",
            (cutoff_stamp,))]
        for package_id in old:
            try:
                (store.outbox / f"{package_id}.json").unlink()
                removed["files"] += 1
            except FileNotFoundError:
                pass
        with transaction(conn):
            if old:
                conn.executemany("DELETE FROM package_outbox WHERE package_id = ? AND exported_at IS NOT NULL "
                                 "AND exported_at < ?", [(p, cutoff_stamp) for p in old])
                removed["packages"] = len(old)
            removed["samples"] = conn.execute("DELETE FROM local_latency_samples WHERE recorded_at < ?",
                                              (cutoff_stamp,)).rowcount
            removed["counters"] = conn.execute("""
                DELETE FROM counter_aggregates
                WHERE period_start < ? AND value = packaged_value
                  AND NOT EXISTS (SELECT 1 FROM package_outbox p WHERE p.exported_at IS NULL
                                  AND p.period_start = counter_aggregates.period_start || 'T00:00:00.000000Z')""",
                (period_of(cutoff),)).rowcount
    except Exception as exc:  # SM-64: logged, never raised into the export
        logger.warning("hermes_pipeline: shared metrics: retention prune failed: %s: %s", type(exc).__name__, exc)
        return {}
    return removed
