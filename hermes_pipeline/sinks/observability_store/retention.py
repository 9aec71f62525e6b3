"""Retention of the store's rows (BOOK-48): runs 90 days, histories 365 days (defaults).

``task_runs``, ``llm_calls``, ``skill_runs`` and resolved ``alert_state`` rows older than
``runs_days`` and ``skill_history`` / ``memory_changes`` rows older than ``history_days`` are
deleted; ``0`` keeps a class forever. Only this store is touched (trajectory files have their own
pruning; pipeline outputs and shared metrics are never touched here).
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from . import db

RUN_TABLES: Final = (("task_runs", "ended_at"), ("llm_calls", "ended_at"), ("skill_runs", "ended_at"))
HISTORY_TABLES: Final = (("skill_history", "changed_at"), ("memory_changes", "changed_at"))


def prune_store(home: Path, *, runs_days: int = 90, history_days: int = 365, dry_run: bool = False) -> dict[str, int]:
    """Delete (or, with ``dry_run``, count) the expired rows; ``table → rows``. No store: ``{}``."""
    path = db.store_path(Path(home))
    if not path.is_file():
        return {}
    conn = db.connect(path, create=not dry_run, readonly=dry_run)
    try:
        plan: list[tuple[str, str, str]] = []
        for days, tables in ((runs_days, RUN_TABLES), (history_days, HISTORY_TABLES)):
            if days > 0:
                plan.extend((table, column, f"-{int(days)} days") for table, column in tables)
        if runs_days > 0:
            plan.append(("alert_state", "last_notified_at", f"-{int(runs_days)} days"))
        counts: dict[str, int] = {}
        extra = {"alert_state": " AND status = 'resolved'"}
        if dry_run:
            for table, column, window in plan:
                counts[table] = conn.execute(f"SELECT COUNT(*) FROM {table} WHERE {column} < datetime('now', ?)"
                                             f"{extra.get(table, '')}", (window,)).fetchone()[0]
            return counts
        with db.transaction(conn):
            for table, column, window in plan:
                counts[table] = conn.execute(f"DELETE FROM {table} WHERE {column} < datetime('now', ?)"
                                             f"{extra.get(table, '')}", (window,)).rowcount
        return counts
    finally:
        conn.close()
