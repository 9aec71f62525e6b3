"""One evaluation of every rule: detect, update the noise-control state, send what is due.

:func:`run_once` is what ``hermes-pipeline alerts run`` does each minute. Critical alerts go out
in the run that detects them (so within a minute of detection under a one-minute timer); medium
alerts wait until 5 minutes after the first of them fired and then go out as one batch; the
digest goes out in the first run after the local digest time (BOOK-42). Sending happens outside
the store's write lock: the notifications are claimed first in one transaction and settled in a
second one, so a slow notifier never blocks the store's writer and two evaluators never send the
same notification twice. Each request to a notifier is recorded before it leaves (``~partial``), so
a slow endpoint that answers after the deadline, or an evaluator killed mid-send, never causes a
copy: delivery is at most once per state change and notifier, under a deadline per message and per
run (``send_timeout_seconds``, ``run_timeout_seconds``).
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, time as clock_time, timedelta, tzinfo
from typing import Any

from ..config.alert_settings import AlertSettings
from ..sinks.observability_store.db import transaction
from . import state
from .delivery import Message, Notifier, Outcome, deliver
from .digest import daily_digest, digest_text
from .rules import SEVERITY, TITLES, Finding, Runner, evaluate, systemctl_runner, unit_status


@dataclass
class RunReport:
    """What one evaluation found and sent."""

    firing: list[Finding] = field(default_factory=list)
    sent: list[dict[str, Any]] = field(default_factory=list)
    failed: list[dict[str, Any]] = field(default_factory=list)
    folded: int = 0

    def as_json(self) -> dict[str, Any]:
        """JSON-ready form (``alerts run --json``)."""
        return {"firing": [{"rule": f.rule, "key": f.key, "severity": f.severity, "summary": f.summary}
                           for f in self.firing], "sent": self.sent, "failed": self.failed, "folded": self.folded}


def _message(group: list[state.Claim], summaries: Mapping[tuple[str, str], str]) -> Message:
    items = tuple({"rule": c.rule, "key": c.key, "severity": c.severity, "kind": c.kind,
                   "title": TITLES.get(c.rule, c.rule), "summary": summaries.get((c.rule, c.key), "cleared")}
                  for c in group)
    lines = [("RESOLVED " if i["kind"] == "resolved" else "") + f"{i['rule']} {i['title']} [{i['key']}]: "
             + ("no longer firing" if i["kind"] == "resolved" else str(i["summary"])) for i in items]
    first = items[0]
    if len(items) == 1:
        kind = "resolved" if first["kind"] == "resolved" else "alert"
        title = ("Resolved: " if kind == "resolved" else "") + f"{first['rule']} {first['title']} ({first['key']})"
    else:
        kind, title = "batch", f"{len(items)} medium alerts"
    return Message(kind, str(first["severity"]), title, "\n".join(lines), items)


def digest_window(now: datetime, local: tzinfo | None) -> tuple[datetime, datetime, str]:
    """The previous local day as ``[start, end)`` and today's local date."""
    here = now.astimezone(local)
    midnight = datetime.combine(here.date(), clock_time(0), tzinfo=here.tzinfo)
    return midnight - timedelta(days=1), midnight, here.date().isoformat()


def digest_due(now: datetime, cfg: AlertSettings, local: tzinfo | None) -> bool:
    """Whether the local time is past today's digest time."""
    here = now.astimezone(local)
    hour, minute = (int(part) for part in cfg.digest_time.split(":"))
    return (here.hour, here.minute) >= (hour, minute)


def _send(conn: sqlite3.Connection, message: Message, notifiers: Sequence[Notifier], keys: list[str],
          now: datetime, cfg: AlertSettings, deadline: float, cancel: threading.Event | None,
          sleep: Callable[[float], None] | None) -> Outcome:
    """Deliver ``message`` at most once per notifier: each attempt is recorded under ``keys`` before the
    request leaves, and forgotten again only when it surely did not go out."""
    def before(name: str) -> None:
        with transaction(conn):
            state.mark_attempt(conn, keys, name, now)

    def not_sent(name: str) -> None:
        with transaction(conn):
            state.unmark_attempt(conn, keys, name, now)

    if (cancel is not None and cancel.is_set()) or time.monotonic() >= deadline:
        why = "stopped" if cancel is not None and cancel.is_set() else \
            f"the run's deadline ({cfg.run_timeout_seconds:g} s, observability.alerts.run_timeout_seconds) passed"
        return Outcome(False, [f"not sent: {why}; due again next run"])
    return deliver(message, notifiers, sleep=sleep, skip=state.accepted_for(conn, keys),
                   timeout=cfg.send_timeout_seconds, deadline=deadline, cancel=cancel, before_send=before,
                   not_sent=not_sent)


def _entry(message: Message, alerts: list[str], outcome: Outcome) -> dict[str, Any]:
    entry: dict[str, Any] = {"title": message.title, "severity": message.severity, "kind": message.kind,
                             "alerts": alerts}
    if outcome.unconfirmed:
        entry["unconfirmed"] = list(outcome.unconfirmed)
    if not outcome.delivered:
        entry["errors"] = outcome.errors
    return entry


def run_once(conn: sqlite3.Connection, now: datetime, cfg: AlertSettings, notifiers: Sequence[Notifier],
             runner: Runner = systemctl_runner, sleep: Callable[[float], None] | None = None,
             local: tzinfo | None = None, cancel: threading.Event | None = None) -> RunReport:
    """Evaluate every rule once at ``now`` (aware) and send what is due; never raises for a notifier.

    The run ends its sending by ``cfg.run_timeout_seconds`` after it started, each message to each
    notifier within ``cfg.send_timeout_seconds``; ``cancel`` (SIGTERM in the daemon) stops it at once.
    What is not sent stays due for the next run; what was sent, confirmed or not, is never sent again.
    """
    deadline = time.monotonic() + cfg.run_timeout_seconds
    report = RunReport()
    unit = cfg.systemd_unit
    status = unit_status(unit, runner) if unit else None
    count = status.get("NRestarts") if status else None
    with transaction(conn):
        restarts = state.restarts_in_window(conn, unit, int(count) if count and count.isdigit() else None,
                                            now, cfg) if unit else 0
    report.firing = evaluate(conn, now, cfg, restarts, status if status else None)
    summaries = {(f.rule, f.key): f.summary for f in report.firing}
    with transaction(conn):
        state.reconcile(conn, report.firing, now, cfg)
        groups = state.claim(conn, now, cfg)
        report.folded = len(state.folded(conn))
        digest_date = None
        if digest_due(now, cfg, local):
            start, end, today = digest_window(now, local)
            if state.claim_digest(conn, today, now):
                digest_date = today
                included = state.folded(conn)
                body = daily_digest(conn, start, end)
        state.prune(conn, now)
    for group in groups:
        message = _message(group, summaries).scrubbed()  # the report quotes it too, not only the notifiers
        outcome = _send(conn, message, notifiers, state.attempt_keys(group), now, cfg, deadline, cancel, sleep)
        with transaction(conn):
            state.finish(conn, group, outcome.delivered, now, cfg)
            state.record_partial(conn, group, outcome.accepted, outcome.delivered, now)
        (report.sent if outcome.delivered else report.failed).append(
            _entry(message, [f"{c.rule}:{c.key}" for c in group], outcome))
    if digest_date is not None:
        folded_items = [{"rule": r.rule, "key": r.key, "severity": SEVERITY.get(r.rule, "?"),
                         "summary": summaries.get((r.rule, r.key), "resolved since" if r.status ==
                                                  "folded_resolved" else "still firing")} for r in included]
        message = Message("digest", "low", f"A-L1 daily digest {body['day_start'][:10]}",
                          digest_text(body, folded_items), ({"digest": body, "folded": folded_items},)).scrubbed()
        keys = state.digest_keys(digest_date)
        outcome = _send(conn, message, notifiers, keys, now, cfg, deadline, cancel, sleep)
        with transaction(conn):
            state.finish_digest(conn, digest_date, outcome.delivered, included, now)
            state.record_partial(conn, [], outcome.accepted, outcome.delivered, now, keys=keys)
        (report.sent if outcome.delivered else report.failed).append(_entry(message, ["A-L1"], outcome))
    return report


def environment() -> Mapping[str, str]:
    """The process environment (the only source of notifier secrets)."""
    return os.environ
