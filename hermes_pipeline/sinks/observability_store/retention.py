"""Retention of the store's rows (BOOK-48): runs 90 days, histories 365 days (defaults).

``task_runs``, ``llm_calls``, ``skill_runs`` and resolved ``alert_state`` rows older than
``runs_days`` and ``skill_history`` / ``memory_changes`` rows older than ``history_days`` are
deleted; ``0`` keeps a class forever. Only this store is touched (trajectory files have their own
pruning; pipeline outputs and shared metrics are never touched here).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Final

from . import db

RUN_TABLES: Final = (("task_runs", "ended_at"), ("llm_calls", "ended_at"), ("skill_runs", "ended_at"),
                     ("approvals", "decided_at"), ("tool_errors", "ended_at"))
HISTORY_TABLES: Final = (("skill_history", "changed_at"), ("memory_changes", "changed_at"))


def plan(runs_days: int, history_days: int) -> list[tuple[str, str, str]]:
    """``(table, WHERE clause, window)`` of every expired-row condition (``window`` binds ``datetime('now', ?)``)."""
    out: list[tuple[str, str, str]] = []
    if runs_days > 0:
        out.extend((table, f"{column} < datetime('now', ?)", f"-{int(runs_days)} days") for table, column in RUN_TABLES)
        out.append(("alert_state", "status = 'resolved' AND last_notified_at < datetime('now', ?)",
                    f"-{int(runs_days)} days"))
    if history_days > 0:
        out.extend((table, f"{column} < datetime('now', ?)", f"-{int(history_days)} days")
                   for table, column in HISTORY_TABLES)
    return out


def delete_expired(conn: sqlite3.Connection, runs_days: int, history_days: int) -> dict[str, int]:
    """Delete the expired rows inside the caller's transaction; ``table → rows deleted``."""
    return {table: conn.execute(f"DELETE FROM {table} WHERE {where}", (window,)).rowcount
            for table, where, window in plan(runs_days, history_days)}


def prune_store(home: Path, *, runs_days: int = 90, history_days: int = 365, dry_run: bool = False) -> dict[str, int]:
    """Delete (or, with ``dry_run``, count) the expired rows of the store of ``home``; no store: ``{}``."""
    path = db.store_path(Path(home))
    if not path.is_file():
        return {}
    conn = db.connect(path, create=not dry_run, readonly=dry_run)
    try:
        if dry_run:
            return {table: conn.execute(f"SELECT COUNT(*) FROM {table} WHERE {where}", (window,)).fetchone()[0]
                    for table, where, window in plan(runs_days, history_days)}
        with db.transaction(conn):
            return delete_expired(conn, runs_days, history_days)
    finally:
        conn.close()
