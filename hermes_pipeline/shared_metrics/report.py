"""Read-only summaries of a profile's shared-metrics state (``metrics status`` / ``metrics show``)."""

from __future__ import annotations

import sqlite3
from typing import Any

from .consent import marks, windows
from .store import INSTALL_ID_KEY, MetricsStore, counters, get_state


def _percentile(conn: sqlite3.Connection, metric: str, q: float) -> int | None:
    total = conn.execute("SELECT COUNT(*) FROM local_latency_samples WHERE metric_name = ?", (metric,)).fetchone()[0]
    if not total:
        return None
    offset = min(int(q * total), total - 1)
    row = conn.execute("SELECT duration_ms FROM local_latency_samples WHERE metric_name = ? "
                       "ORDER BY duration_ms LIMIT 1 OFFSET ?", (metric, offset)).fetchone()
    return int(row[0])


def store_status(store: MetricsStore) -> dict[str, Any]:
    """Counts of pending counters and packages, consent windows and marks, local latency p50/p90 (SM-50)."""
    if not store.exists():
        return {"exists": False, "path": str(store.directory)}
    conn = store.connect()
    try:
        pending_counters, counter_rows = conn.execute(
            "SELECT COALESCE(SUM(value > packaged_value), 0), COUNT(*) FROM counter_aggregates").fetchone()
        packages = dict(conn.execute("""
            SELECT CASE WHEN exported_at IS NULL THEN 'unexported'
                        WHEN send_state IS NULL THEN 'unsent'
                        ELSE send_state END, COUNT(*)
            FROM package_outbox GROUP BY 1""").fetchall())
        return {
            "exists": True,
            "path": str(store.directory),
            "install_id": get_state(conn, INSTALL_ID_KEY),
            "counter_rows": counter_rows,
            "pending_counters": pending_counters,
            "packages": {key: packages.get(key, 0) for key in ("unexported", "unsent", "pending", "sent", "rejected")},
            "outbox_files": sum(1 for _ in store.outbox.glob("*.json")) if store.outbox.is_dir() else 0,
            "windows": [{"opened_at": w.opened_at, "last_confirmed_at": w.last_confirmed_at, "closed_at": w.closed_at}
                        for w in windows(conn)],
            "marks": marks(conn),
            "latency_ms": {metric: {"p50": _percentile(conn, metric, 0.5), "p90": _percentile(conn, metric, 0.9)}
                           for metric in ("task", "model_call")},
        }
    finally:
        conn.close()


def counter_rows(store: MetricsStore) -> list[dict[str, Any]]:
    """Every counter row (empty when the store does not exist)."""
    if not store.exists():
        return []
    conn = store.connect()
    try:
        return counters(conn)
    finally:
        conn.close()
