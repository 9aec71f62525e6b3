"""Noise control in the store's ``alert_state(rule, key, status, first_fired_at, last_notified_at)``
table (spec 06 BOOK-44), safe across restarts and across several evaluators of one profile.

Rows of a rule (``A-...``) have one of these statuses:

``pending``         firing, nobody told yet;
``firing``          told; ``last_notified_at`` is when, so a still-firing alert is told again
                    only after the re-notify interval (30 min critical, 4 h medium by default);
``folded``          firing, but held back by the hourly cap: it goes into the next digest;
``folded_resolved`` held back and cleared since: the digest reports it as resolved;
``resolving``       cleared after it was told: one "resolved" message is due;
``resolved``        done (retention prunes these);
``claimed:<s>``     an evaluator took it for sending at ``last_notified_at``; it becomes ``<s>``'s
                    successor when the send succeeds and ``<s>`` again when it fails or when the
                    claim is older than :data:`LEASE` (the evaluator died mid-send: the notifiers
                    its ``~partial`` rows name were being sent it and are skipped, so the
                    retaken claim never makes a copy).

Claims are taken inside one ``BEGIN IMMEDIATE`` transaction, so two evaluators never claim the
same notification. Bookkeeping rows use rule names starting with ``~``: ``~sent`` (one per
notification, for the hourly cap), ``~digest`` (key = the local date of a digest) and ``~restarts``
(samples of a systemd unit's restart counter), ``~partial`` (per state change, the notifiers it was
sent to, written before each request leaves: at most once per notifier and state change).
"""

from __future__ import annotations

import sqlite3
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

from ..config.alert_settings import AlertSettings
from .rules import CRITICAL, MEDIUM, SEVERITY, Finding, parse_sql_time, sql_time

LEASE: Final = timedelta(minutes=10)
"""A claim older than this is taken back: its evaluator died before it could finish."""
BOOKKEEPING_DAYS: Final = 2
"""``~sent`` and ``~restarts`` rows older than this many days are deleted."""


@dataclass(frozen=True)
class Row:
    """One ``alert_state`` row."""

    rule: str
    key: str
    status: str
    first_fired_at: str | None
    last_notified_at: str | None


@dataclass(frozen=True)
class Claim:
    """A notification this evaluator took: ``kind`` is ``alert``, ``renotify`` or ``resolved``."""

    rule: str
    key: str
    kind: str
    previous: str
    claimed_at: str
    sent_key: str

    @property
    def severity(self) -> str:
        """The rule's severity."""
        return SEVERITY.get(self.rule, MEDIUM)


def rows(conn: sqlite3.Connection) -> list[Row]:
    """Every rule row (bookkeeping rows left out), oldest first firing first."""
    return [Row(*r) for r in conn.execute(
        "SELECT rule, key, status, first_fired_at, last_notified_at FROM alert_state WHERE rule NOT LIKE '~%' "
        "ORDER BY first_fired_at, rule, key")]


def _set(conn: sqlite3.Connection, rule: str, key: str, status: str, notified: str | None,
         first: str | None = None) -> None:
    if first is None:
        conn.execute("UPDATE alert_state SET status = ?, last_notified_at = ? WHERE rule = ? AND key = ?",
                     (status, notified, rule, key))
    else:
        conn.execute("INSERT INTO alert_state (rule, key, status, first_fired_at, last_notified_at) "
                     "VALUES (?, ?, ?, ?, ?) ON CONFLICT (rule, key) DO UPDATE SET status = excluded.status, "
                     "first_fired_at = excluded.first_fired_at, last_notified_at = excluded.last_notified_at",
                     (rule, key, status, first, notified))


def _revert(conn: sqlite3.Connection, row: Row, now: datetime, cfg: AlertSettings) -> None:
    """Undo a claim that failed or expired: the notification is due again, nothing is lost."""
    previous = row.status.split(":", 1)[1]
    if previous == "firing":  # a re-notify: make it due at once
        minutes = cfg.critical_renotify_minutes if SEVERITY.get(row.rule) == CRITICAL else cfg.medium_renotify_minutes
        _set(conn, row.rule, row.key, "firing", sql_time(now - timedelta(minutes=minutes)))
    else:
        _set(conn, row.rule, row.key, previous, None if previous == "pending" else row.last_notified_at)


def reconcile(conn: sqlite3.Connection, findings: list[Finding], now: datetime, cfg: AlertSettings) -> None:
    """Bring the rule rows in line with what fires now (inside the caller's transaction)."""
    stamp = sql_time(now)
    firing = {(f.rule, f.key) for f in findings}
    known = {(r.rule, r.key): r for r in rows(conn)}
    for stale in known.values():
        if stale.status.startswith("claimed:") and stale.last_notified_at and \
                parse_sql_time(stale.last_notified_at) <= now - LEASE:
            _revert(conn, stale, now, cfg)
    known = {(r.rule, r.key): r for r in rows(conn)}
    for rule, key in sorted(firing):
        found = known.get((rule, key))
        if found is None or found.status == "resolved":
            _set(conn, rule, key, "pending", None, first=stamp)
        elif found.status == "resolving":  # fired again before its "resolved" went out: still the same alert
            _set(conn, rule, key, "firing", found.last_notified_at)
        elif found.status == "folded_resolved":
            _set(conn, rule, key, "folded", found.last_notified_at)
    for (rule, key), row in known.items():
        if (rule, key) in firing:
            continue
        if row.status == "pending":  # cleared before anybody was told: nothing to resolve
            _set(conn, rule, key, "resolved", row.last_notified_at)
        elif row.status == "firing":
            _set(conn, rule, key, "resolving", row.last_notified_at)
        elif row.status == "folded":
            _set(conn, rule, key, "folded_resolved", row.last_notified_at)


def sent_last_hour(conn: sqlite3.Connection, now: datetime) -> int:
    """Notifications sent (or being sent) in the hour before ``now``."""
    return int(conn.execute("SELECT COUNT(*) FROM alert_state WHERE rule = '~sent' AND last_notified_at > ?",
                            (sql_time(now - timedelta(hours=1)),)).fetchone()[0])


def _due(row: Row, now: datetime, cfg: AlertSettings) -> str | None:
    """The kind of notification ``row`` needs now, or ``None``."""
    if row.status == "resolving":
        return "resolved"
    severity = SEVERITY.get(row.rule)
    if row.status == "pending":
        if severity == CRITICAL:
            return "alert"
        if severity == MEDIUM and row.first_fired_at and \
                parse_sql_time(row.first_fired_at) + timedelta(minutes=cfg.medium_collect_minutes) <= now:
            return "alert"
        return None
    if row.status == "firing" and row.last_notified_at:
        minutes = cfg.critical_renotify_minutes if severity == CRITICAL else cfg.medium_renotify_minutes
        if parse_sql_time(row.last_notified_at) + timedelta(minutes=minutes) <= now:
            return "renotify"
    return None


def claim(conn: sqlite3.Connection, now: datetime, cfg: AlertSettings) -> list[list[Claim]]:
    """Take the notifications due now, grouped into messages (each critical alone, the medium ones
    as one batch); the messages over the hourly cap are folded into the next digest instead."""
    stamp = sql_time(now)
    due = [(row, kind) for row in rows(conn) if (kind := _due(row, now, cfg))]
    critical = [[item] for item in due if SEVERITY.get(item[0].rule) == CRITICAL]
    medium_items = [item for item in due if SEVERITY.get(item[0].rule) == MEDIUM]
    if any(kind == "alert" for _, kind in medium_items):  # the batch goes once its oldest member waited enough
        medium_items += [(row, "alert") for row in rows(conn) if row.status == "pending"
                         and SEVERITY.get(row.rule) == MEDIUM and (row, "alert") not in medium_items]
    messages = critical + ([medium_items] if medium_items else [])
    room = max(0, cfg.max_per_hour - sent_last_hour(conn, now))
    claimed: list[list[Claim]] = []
    for message in messages:
        if room <= 0:
            for row, kind in message:
                _set(conn, row.rule, row.key, "folded_resolved" if kind == "resolved" else "folded",
                     row.last_notified_at)
            continue
        room -= 1
        sent_key = uuid.uuid4().hex
        conn.execute("INSERT INTO alert_state VALUES ('~sent', ?, 'sent', ?, ?)", (sent_key, stamp, stamp))
        group = []
        for row, kind in message:
            _set(conn, row.rule, row.key, "claimed:" + row.status, stamp)
            group.append(Claim(row.rule, row.key, kind, row.status, stamp, sent_key))
        claimed.append(group)
    return claimed


def finish(conn: sqlite3.Connection, group: list[Claim], delivered: bool, now: datetime,
           cfg: AlertSettings) -> None:
    """Record the outcome of one message (inside the caller's transaction)."""
    for item in group:
        current = conn.execute("SELECT rule, key, status, first_fired_at, last_notified_at FROM alert_state "
                               "WHERE rule = ? AND key = ?", (item.rule, item.key)).fetchone()
        if current is None or current[2] != "claimed:" + item.previous or current[4] != item.claimed_at:
            continue  # the claim expired and another evaluator took over
        if delivered:
            _set(conn, item.rule, item.key, "resolved" if item.kind == "resolved" else "firing", sql_time(now))
        else:
            _revert(conn, Row(*current), now, cfg)
    if not delivered and group:
        conn.execute("DELETE FROM alert_state WHERE rule = '~sent' AND key = ?", (group[0].sent_key,))


def _partial_key(item: Claim) -> str:
    return f"{item.rule}\x1f{item.key}\x1f{item.kind}"


def attempt_keys(group: list[Claim]) -> list[str]:
    """The ``~partial`` keys of a message: one per alert and kind of notification (its state change)."""
    return [_partial_key(item) for item in group]


def digest_keys(local_date: str) -> list[str]:
    """The ``~partial`` key of the digest of ``local_date``."""
    return [f"~digest\x1f{local_date}"]


def _names(conn: sqlite3.Connection, key: str) -> set[str]:
    row = conn.execute("SELECT status FROM alert_state WHERE rule = '~partial' AND key = ?", (key,)).fetchone()
    return set(str(row[0]).split(",")) - {""} if row else set()


def _store_names(conn: sqlite3.Connection, key: str, names: set[str], now: datetime) -> None:
    if not names:
        conn.execute("DELETE FROM alert_state WHERE rule = '~partial' AND key = ?", (key,))
        return
    stamp = sql_time(now)
    conn.execute("INSERT OR REPLACE INTO alert_state VALUES ('~partial', ?, ?, ?, ?)",
                 (key, ",".join(sorted(names)), stamp, stamp))


def accepted_for(conn: sqlite3.Connection, keys: list[str]) -> frozenset[str]:
    """Notifiers that took (or were sent, unconfirmed) every state change of ``keys`` in an earlier attempt."""
    sets = [_names(conn, key) for key in keys]
    return frozenset(set.intersection(*sets)) if sets else frozenset()


def already_accepted(conn: sqlite3.Connection, group: list[Claim]) -> frozenset[str]:
    """Notifiers that accepted every alert of ``group`` in an earlier, partly failed attempt."""
    return accepted_for(conn, attempt_keys(group))


def mark_attempt(conn: sqlite3.Connection, keys: list[str], name: str, now: datetime) -> None:
    """Record, before the request leaves, that notifier ``name`` is being sent these state changes: if the
    process dies mid-send, or the answer never comes, they are not sent to it again (at most once)."""
    for key in keys:
        _store_names(conn, key, _names(conn, key) | {name}, now)


def unmark_attempt(conn: sqlite3.Connection, keys: list[str], name: str, now: datetime) -> None:
    """The request to ``name`` surely did not go out: it may be sent again."""
    for key in keys:
        _store_names(conn, key, _names(conn, key) - {name}, now)


def record_partial(conn: sqlite3.Connection, group: list[Claim], accepted: list[str], delivered: bool,
                   now: datetime, keys: list[str] | None = None) -> None:
    """Remember which notifiers took a message that others refused (forgotten once all took it)."""
    for key in attempt_keys(group) if keys is None else keys:
        if delivered:
            conn.execute("DELETE FROM alert_state WHERE rule = '~partial' AND key = ?", (key,))
        else:
            _store_names(conn, key, set(accepted), now)


def folded(conn: sqlite3.Connection) -> list[Row]:
    """The alerts held back by the cap, for the digest."""
    return [r for r in rows(conn) if r.status in ("folded", "folded_resolved")]


def claim_digest(conn: sqlite3.Connection, local_date: str, now: datetime) -> bool:
    """Take the digest of ``local_date``; ``False`` when it was already sent or is being sent."""
    stamp = sql_time(now)
    cur = conn.execute("INSERT OR IGNORE INTO alert_state VALUES ('~digest', ?, 'claimed', ?, ?)",
                       (local_date, stamp, stamp))
    if cur.rowcount:
        return True
    row = conn.execute("SELECT status, last_notified_at FROM alert_state WHERE rule = '~digest' AND key = ?",
                       (local_date,)).fetchone()
    if row[0] == "claimed" and parse_sql_time(row[1]) <= now - LEASE:
        conn.execute("UPDATE alert_state SET last_notified_at = ? WHERE rule = '~digest' AND key = ?",
                     (stamp, local_date))
        return True
    return False


def finish_digest(conn: sqlite3.Connection, local_date: str, delivered: bool, included: list[Row],
                  now: datetime) -> None:
    """Mark the digest sent (and its folded alerts told), or release it for the next run."""
    if not delivered:
        conn.execute("DELETE FROM alert_state WHERE rule = '~digest' AND key = ?", (local_date,))
        return
    conn.execute("UPDATE alert_state SET status = 'sent' WHERE rule = '~digest' AND key = ?", (local_date,))
    for row in included:
        after = "resolved" if row.status == "folded_resolved" else "firing"
        conn.execute("UPDATE alert_state SET status = ?, last_notified_at = ? WHERE rule = ? AND key = ? "
                     "AND status = ?", (after, sql_time(now), row.rule, row.key, row.status))


def restarts_in_window(conn: sqlite3.Connection, unit: str, count: int | None, now: datetime,
                       cfg: AlertSettings) -> int:
    """Record a sample of the unit's restart counter; how much it grew within the restart window."""
    stamp = sql_time(now)
    if count is not None:
        conn.execute("INSERT OR REPLACE INTO alert_state VALUES ('~restarts', ?, ?, ?, ?)",
                     (f"{unit} {stamp}", str(count), stamp, stamp))
    since = sql_time(now - timedelta(minutes=cfg.restart_window_minutes))
    values = [int(r[0]) for r in conn.execute(
        "SELECT status FROM alert_state WHERE rule = '~restarts' AND key LIKE ? AND last_notified_at >= ?",
        (unit + " %", since)) if str(r[0]).isdigit()]
    return (max(values) - min(values)) if values else 0


def prune(conn: sqlite3.Connection, now: datetime) -> None:
    """Delete old bookkeeping rows."""
    conn.execute("DELETE FROM alert_state WHERE rule IN ('~sent', '~restarts', '~partial') AND last_notified_at < ?",
                 (sql_time(now - timedelta(days=BOOKKEEPING_DAYS)),))
