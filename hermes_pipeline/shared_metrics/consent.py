"""Send consent as explicit time windows (spec 05 §13, seed Appendix A.1/A.4).

:func:`reconcile` is the only writer of ``send_consent_windows`` and of the ``obs`` mark (SM-86,
SM-87). The package writer raises the ``data`` mark (:mod:`.packages`). :func:`GATE_SQL` is the
read-only consent gate applied at claim time (SM-88): a package is eligible only if its whole
period lies inside one window, so the gate fails closed.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

from .clock import parse_stamp, stamp
from .store import transaction

CAP: Final = timedelta(days=30)
"""One reconcile call moves the ``obs`` mark forward by at most this much (SM-87 step 2)."""

GATE_SQL: Final = """EXISTS (SELECT 1 FROM send_consent_windows w
    WHERE {p}.period_start >= w.opened_at
      AND {p}.period_end <= COALESCE(w.closed_at, w.last_confirmed_at))"""
"""The consent gate over a ``package_outbox`` alias (format ``p`` with the alias), SM-88."""


@dataclass(frozen=True, slots=True)
class Window:
    """One consent window; ``closed_at`` is ``None`` while it is open."""

    opened_at: str
    last_confirmed_at: str
    closed_at: str | None

    @property
    def end(self) -> str:
        """The last moment a package period may reach: ``closed_at`` or ``last_confirmed_at``."""
        return self.closed_at if self.closed_at is not None else self.last_confirmed_at


def _mark(conn: sqlite3.Connection, name: str) -> str | None:
    row = conn.execute("SELECT stamp FROM consent_marks WHERE name = ?", (name,)).fetchone()
    return row[0] if row else None


def reconcile(conn: sqlite3.Connection, send_enabled: bool, now: datetime) -> None:
    """SM-87 in one write transaction: advance ``obs`` (bounded, never backwards), then open,
    confirm or close the window. Idempotent for a repeated observation."""
    with transaction(conn):
        raw = stamp(now)
        new = raw
        obs = _mark(conn, "obs")
        if obs is not None:
            try:
                new = min(new, stamp(parse_stamp(obs) + CAP))
            except (ValueError, OverflowError):
                pass
        conn.execute("""INSERT INTO consent_marks (name, stamp) VALUES ('obs', ?)
                        ON CONFLICT(name) DO UPDATE SET stamp = MAX(stamp, excluded.stamp)""", (new,))
        obs = _mark(conn, "obs")
        assert obs is not None
        data = _mark(conn, "data")
        open_row = conn.execute("SELECT rowid, last_confirmed_at FROM send_consent_windows "
                                "WHERE closed_at IS NULL").fetchone()
        if send_enabled:
            if open_row is None:
                start = max(obs, data) if data is not None else obs
                conn.execute("INSERT INTO send_consent_windows (opened_at, last_confirmed_at, closed_at) "
                             "VALUES (?, ?, NULL)", (start, start))
            else:
                conn.execute("UPDATE send_consent_windows SET last_confirmed_at = MAX(last_confirmed_at, ?) "
                             "WHERE rowid = ?", (obs, open_row[0]))
        elif open_row is not None:
            conn.execute("UPDATE send_consent_windows SET closed_at = MIN(last_confirmed_at, ?) WHERE rowid = ?",
                         (raw, open_row[0]))


def windows(conn: sqlite3.Connection) -> list[Window]:
    """Every consent window, oldest first."""
    return [Window(*row) for row in conn.execute(
        "SELECT opened_at, last_confirmed_at, closed_at FROM send_consent_windows ORDER BY rowid")]


def marks(conn: sqlite3.Connection) -> dict[str, str]:
    """The ``obs`` and ``data`` marks that exist."""
    return dict(conn.execute("SELECT name, stamp FROM consent_marks").fetchall())


def is_eligible(conn: sqlite3.Connection, period_start: str, period_end: str) -> bool:
    """Whether a period lies inside a consent window, so its package may be sent (SM-88); read-only."""
    sql = "SELECT " + GATE_SQL.format(p="p") + " FROM (SELECT ? AS period_start, ? AS period_end) p"
    return bool(conn.execute(sql, (period_start, period_end)).fetchone()[0])
