"""Retention of the store's rows (BOOK-48): runs 90 days, histories 365 days (defaults).

``task_runs``, ``llm_calls``, ``skill_runs`` and resolved ``alert_state`` rows older than
``runs_days`` and ``skill_history`` / ``memory_changes`` / ``staged_writes`` rows older than ``history_days`` are
deleted; ``0`` keeps a class forever. Only this store is touched (trajectory files have their own
pruning; pipeline outputs and shared metrics are never touched here), and, once its rows are gone, the
skill, memory and persona texts under ``observability/blobs`` that no kept row and no kept recording refers
to any more (:mod:`.blob_sweep`: mark-and-sweep, never a text written or used in the day before the sweep).

Retention acts only on a clock it can trust and never deletes a row for having been written under a wrong
clock (:mod:`hermes_pipeline.export.clock_trust`; its ledger is ``observability/.retention-clock``): each
trusted prune records a checkpoint (its time and each table's largest row id), and a row is deleted only when
its timestamp is past the window *and* it was already there at a checkpoint older than the window. Row ids
only grow (checkpoints are clamped to each table's largest id, so an id freed at the top is never mistaken for
an old row).
"""

from __future__ import annotations

import calendar
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ...export.blobs import SweepCounts
from ...export.clock_trust import DAY_S, LEDGER_NAME, BootClock, Ledger, boot_clock
from . import db
from .blob_sweep import sweep_blobs
from .schema import sqlite_utc

RUN_TABLES: Final = (("task_runs", "ended_at"), ("llm_calls", "ended_at"), ("skill_runs", "ended_at"),
                     ("approvals", "decided_at"), ("tool_errors", "ended_at"))
HISTORY_TABLES: Final = (("skill_history", "changed_at"), ("memory_changes", "changed_at"),
                          ("staged_writes", "staged_at"))


def plan(runs_days: int, history_days: int) -> list[tuple[str, str, int]]:
    """``(table, timestamp column, window in days)`` of every class of rows that expires."""
    out: list[tuple[str, str, int]] = []
    if runs_days > 0:
        out.extend((table, column, int(runs_days)) for table, column in RUN_TABLES)
        out.append(("alert_state", "last_notified_at", int(runs_days)))
    if history_days > 0:
        out.extend((table, column, int(history_days)) for table, column in HISTORY_TABLES)
    return out


def _expired(table: str, column: str) -> str:
    extra = "status = 'resolved' AND " if table == "alert_state" else ""
    return f"{extra}{column} < datetime(?, ?) AND rowid <= ?"


def delete_expired(conn: sqlite3.Connection, runs_days: int, history_days: int, *, now: float | None = None,
                   boot: BootClock | None | bool = True, dry_run: bool = False) -> dict[str, int]:
    """Delete (``dry_run``: count) the expired rows inside the caller's transaction; ``table -> rows``.

    ``now`` (epoch seconds) and ``boot`` (the boot clock; :func:`boot_clock` when ``True``) are injectable for
    tests. On a clock that cannot be trusted nothing is deleted: a warning, and the verdict kept in the ledger
    for ``doctor`` (see the module text).
    """
    return expire(conn, runs_days, history_days, now=now, boot=boot, dry_run=dry_run)[0]


def expire(conn: sqlite3.Connection, runs_days: int, history_days: int, *, now: float | None,
                    boot: BootClock | None | bool, dry_run: bool) -> tuple[dict[str, int], bool]:
    """:func:`delete_expired`, and whether the clock was trusted (``True`` when no class expires: nothing to
    judge)."""
    classes = plan(runs_days, history_days)
    if not classes:
        return {}, True
    now = time.time() if now is None else now
    ledger = Ledger(_ledger_path(conn))
    top = _top(conn)
    if ledger.created:  # rows older than the rule are judged by their own timestamps
        ledger.checkpoints = [(0.0, dict(top))]
    elif ledger.damaged:  # what the ledger knew is lost: no row vouches, every row is kept a window from now
        ledger.checkpoints = []
    ledger.checkpoints = [(t, {k: min(r, top.get(k, r)) for k, r in rows.items()}) for t, rows in ledger.checkpoints]
    vouched = ledger.checkpoints[-1][1] if ledger.checkpoints else {}
    stamps = [_epoch(conn.execute(f"SELECT MAX({column}) FROM {table} WHERE rowid <= ?",
                                  (vouched.get(table, 0),)).fetchone()[0])
              for table, column in RUN_TABLES + HISTORY_TABLES]
    newest = max((v for v in stamps if v is not None), default=None)
    verdict = ledger.judge(now, newest, min(days for _, _, days in classes) * DAY_S,
                           boot=boot_clock() if boot is True else boot if boot is not False else None)
    if not verdict.trusted:
        if not dry_run:
            ledger.untrusted(verdict, "observability store")
            ledger.save()
        return {table: 0 for table, _, _ in classes}, False
    stamp = sqlite_utc(int(now * 1_000_000))
    out: dict[str, int] = {}
    for table, column, days in classes:
        seen_before = [rows.get(table, 0) for t, rows in ledger.checkpoints if t <= now - days * DAY_S]
        params = (stamp, f"-{days} days", max(seen_before, default=0))
        where = _expired(table, column)
        out[table] = (conn.execute(f"SELECT COUNT(*) FROM {table} WHERE {where}", params).fetchone()[0] if dry_run
                      else conn.execute(f"DELETE FROM {table} WHERE {where}", params).rowcount)
    if not dry_run:
        top = _top(conn)
        ledger.checkpoints = [(t, {k: min(r, top.get(k, r)) for k, r in rows.items()}) for t, rows in ledger.checkpoints]
        _checkpoint(ledger, now, top, max(days for _, _, days in classes) * DAY_S)
        ledger.trusted(now)
        ledger.save()
    return out, True


def _top(conn: sqlite3.Connection) -> dict[str, int]:
    """Each table's largest row id (0 when empty)."""
    return {table: int(conn.execute(f"SELECT COALESCE(MAX(rowid), 0) FROM {table}").fetchone()[0])
            for table in (*(t for t, _ in RUN_TABLES + HISTORY_TABLES), "alert_state")}


def _checkpoint(ledger: Ledger, now: float, top: dict[str, int], longest_s: float) -> None:
    """Add ``(now, top)``: at most one a UTC day (a later one would only be less conservative), and drop those no
    window needs (older than the newest checkpoint that is already older than the longest window)."""
    points = ledger.checkpoints
    if not points or int(points[-1][0] // DAY_S) != int(now // DAY_S):
        points.append((now, dict(top)))
    old = [i for i, (t, _) in enumerate(points) if t <= now - longest_s]
    ledger.checkpoints = points[old[-1]:] if old else points


def _ledger_path(conn: sqlite3.Connection) -> Path:
    row = conn.execute("PRAGMA database_list").fetchone()
    return Path(row[2]).with_name(LEDGER_NAME)


def _epoch(value: object) -> float | None:
    """Epoch seconds of a ``YYYY-MM-DD HH:MM:SS`` store timestamp; ``None`` when absent or unreadable."""
    if not isinstance(value, str):
        return None
    try:
        return float(calendar.timegm(time.strptime(value[:19], "%Y-%m-%d %H:%M:%S")))
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class Retention:
    """What one application of the store's retention did: rows by table, and the sweep of the kept texts."""

    rows: dict[str, int]
    blobs: SweepCounts


def retain(home: Path, *, runs_days: int = 90, history_days: int = 365, dry_run: bool = False,
           now: float | None = None, boot: BootClock | None | bool = True,
           directories: Iterable[Path] | None = None) -> Retention:
    """Delete (or, with ``dry_run``, count) the expired rows of the store of ``home``, then the kept texts no
    kept row or recording refers to (:mod:`.blob_sweep`; ``directories``: where the recordings are, default
    the profile's). No texts are swept on a clock retention does not trust. A dry run counts the texts
    unreferenced before the rows go (the rows it would delete still refer to theirs).

    Raises:
        StoreError: the store is damaged, full or locked past the busy timeout (typed, see :func:`db.store_error`).
    """
    home = Path(home)
    started = time.time() if now is None else now
    path = db.store_path(home)
    if not path.is_file():
        return Retention({}, sweep_blobs(home, directories=directories, now=started, dry_run=dry_run))
    conn = db.connect(path, create=not dry_run, readonly=dry_run)
    try:
        if dry_run:
            rows, trusted = expire(conn, runs_days, history_days, now=started, boot=boot, dry_run=True)
        else:
            with db.transaction(conn):
                rows, trusted = expire(conn, runs_days, history_days, now=started, boot=boot,
                                                dry_run=False)
        blobs = sweep_blobs(home, conn=conn, directories=directories, now=started, dry_run=dry_run) if trusted \
            else SweepCounts(skipped="a clock retention cannot trust")
        return Retention(rows, blobs)
    except (sqlite3.Error, UnicodeDecodeError, OSError, db.StoreError) as exc:
        raise db.store_error(path, exc) from None
    finally:
        conn.close()


def prune_store(home: Path, *, runs_days: int = 90, history_days: int = 365, dry_run: bool = False,
                now: float | None = None, boot: BootClock | None | bool = True) -> dict[str, int]:
    """:func:`retain`'s rows: delete (or, with ``dry_run``, count) the expired rows of the store of ``home``
    (and sweep its unreferenced texts); no store: ``{}``.

    Raises:
        StoreError: the store is damaged, full or locked past the busy timeout (typed, see :func:`db.store_error`).
    """
    return retain(home, runs_days=runs_days, history_days=history_days, dry_run=dry_run, now=now, boot=boot).rows
