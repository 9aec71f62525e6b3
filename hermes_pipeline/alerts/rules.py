"""The alert rules of spec 06 BOOK-43, each a read-only query over the observability store.

Every rule takes an open connection, the current time (timezone-aware UTC, injected so tests
freeze it) and :class:`~hermes_pipeline.config.alert_settings.AlertSettings`, and returns the
:class:`Finding` objects that fire now, one per (rule, key). A condition that no longer holds
simply yields no finding; :mod:`.state` turns that into a "resolved" message.
"""

from __future__ import annotations

import sqlite3
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone
from typing import Any, Final

from ..config.alert_settings import AlertSettings
from ..engine.scrub import safe_scrub

CRITICAL: Final = "critical"
MEDIUM: Final = "medium"
LOW: Final = "low"
SEVERITY: Final = {"A-C1": CRITICAL, "A-C2": CRITICAL, "A-C3": CRITICAL, "A-M1": MEDIUM, "A-M2": MEDIUM,
                   "A-M3": MEDIUM, "A-L1": LOW}
"""Rule id → severity (the chapter's table)."""
TITLES: Final = {"A-C1": "cost spike", "A-C2": "agent crashed", "A-C3": "LLM outage", "A-M1": "skill failing",
                 "A-M2": "task class degraded", "A-M3": "write storm", "A-L1": "daily digest"}
FAILED_OUTCOMES: Final = ("failed", "failure", "error", "timed_out")
"""``skill_runs.outcome`` values that count as a failed run."""

Runner = Callable[[Sequence[str]], str]
"""Runs a command and returns its standard output (injectable so tests need no systemd)."""


@dataclass(frozen=True)
class Finding:
    """One firing condition: ``rule`` and ``key`` identify it for noise control."""

    rule: str
    key: str
    summary: str
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def severity(self) -> str:
        """The rule's severity level."""
        return SEVERITY[self.rule]


def sql_time(moment: datetime) -> str:
    """The store's ``YYYY-MM-DD HH:MM:SS`` UTC form of an aware datetime."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


def parse_sql_time(text: str) -> datetime:
    """The aware UTC datetime of a store timestamp."""
    return datetime.strptime(text[:19], "%Y-%m-%d %H:%M:%S").replace(tzinfo=timezone.utc)


def cost_spike(conn: sqlite3.Connection, now: datetime, cfg: AlertSettings) -> list[Finding]:
    """A-C1: the LLM cost of the last window (60 min) exceeds 3x the mean daily cost of the 14
    complete UTC days before today (idle days count as 0); inactive until 3 of those days had
    LLM calls and the mean is above 0."""
    today = now.astimezone(timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)
    start = today - timedelta(days=cfg.cost_baseline_days)
    row = conn.execute(
        "SELECT COALESCE(SUM(cost_usd), 0), COUNT(DISTINCT substr(ended_at, 1, 10)) FROM llm_calls "
        "WHERE ended_at >= ? AND ended_at < ?", (sql_time(start), sql_time(today))).fetchone()
    total, active_days = float(row[0]), int(row[1])
    mean = total / cfg.cost_baseline_days
    if active_days < cfg.cost_min_active_days or mean <= 0:
        return []
    window_start = now - timedelta(minutes=cfg.cost_window_minutes)
    recent = float(conn.execute(
        "SELECT COALESCE(SUM(cost_usd), 0) FROM llm_calls WHERE ended_at > ? AND ended_at <= ?",
        (sql_time(window_start), sql_time(now))).fetchone()[0])
    if recent <= cfg.cost_spike_factor * mean:
        return []
    return [Finding("A-C1", "cost", f"LLM cost of the last {cfg.cost_window_minutes} min is ${recent:.2f}, "
                    f"{recent / mean:.1f}x the daily average ${mean:.2f}",
                    {"window_cost_usd": round(recent, 6), "daily_average_usd": round(mean, 6)})]


def systemctl_runner(command: Sequence[str]) -> str:
    """Run ``command`` (a ``systemctl show``) and return its output ('' when it cannot run)."""
    try:
        done = subprocess.run(list(command), capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout


def unit_status(unit: str, runner: Runner) -> dict[str, str]:
    """``ActiveState``, ``SubState`` and ``NRestarts`` of a systemd unit, read through ``runner``."""
    out = runner(["systemctl", "show", unit, "-p", "ActiveState,SubState,NRestarts"])
    values: dict[str, str] = {}
    for line in out.splitlines():
        name, sep, value = line.partition("=")
        if sep:
            values[name.strip()] = value.strip()
    return values


def agent_crashed(status: dict[str, str], restarts_in_window: int, unit: str,
                  cfg: AlertSettings) -> list[Finding]:
    """A-C2: the unit is ``failed``, or its restart counter grew by 3 (default) within the window."""
    if status.get("ActiveState") == "failed":
        return [Finding("A-C2", unit, f"{unit} has failed ({status.get('SubState', '?')})", dict(status))]
    if restarts_in_window >= cfg.restart_count:
        return [Finding("A-C2", unit, f"{unit} restarted {restarts_in_window} times in "
                        f"{cfg.restart_window_minutes} min", {**status, "restarts": restarts_in_window})]
    return []


def llm_outage(conn: sqlite3.Connection, now: datetime, cfg: AlertSettings) -> list[Finding]:
    """A-C3: the 10 (default) most recent LLM calls, by end time, all have status ``error``."""
    rows = conn.execute("SELECT status, error_type FROM llm_calls WHERE ended_at <= ? "
                        "ORDER BY ended_at DESC, id DESC LIMIT ?", (sql_time(now), cfg.llm_failures)).fetchall()
    if len(rows) < cfg.llm_failures or any(status != "error" for status, _ in rows):
        return []
    kinds = sorted({str(err) for _, err in rows if err})
    return [Finding("A-C3", "llm", f"the last {len(rows)} LLM calls all failed"
                    + (f" ({', '.join(kinds)})" if kinds else ""), {"error_types": kinds})]


def skill_failing(conn: sqlite3.Connection, now: datetime, cfg: AlertSettings) -> list[Finding]:
    """A-M1: the 5 (default) most recent runs of one skill all failed."""
    found: list[Finding] = []
    skills = [r[0] for r in conn.execute("SELECT DISTINCT skill_name FROM skill_runs WHERE skill_name IS NOT NULL")]
    for skill in sorted(skills):
        outcomes = [r[0] for r in conn.execute(
            "SELECT outcome FROM skill_runs WHERE skill_name = ? AND ended_at <= ? ORDER BY ended_at DESC, id DESC "
            "LIMIT ?", (skill, sql_time(now), cfg.skill_failures))]
        if len(outcomes) == cfg.skill_failures and all(o in FAILED_OUTCOMES for o in outcomes):
            found.append(Finding("A-M1", skill, f"skill {skill} failed its last {len(outcomes)} runs"))
    return found


def task_class_degraded(conn: sqlite3.Connection, now: datetime, cfg: AlertSettings) -> list[Finding]:
    """A-M2: a task class's success rate over the last 60 min (default) is below 50%, with at
    least 4 runs (default) in the window."""
    start = now - timedelta(minutes=cfg.task_window_minutes)
    rows = conn.execute(
        "SELECT task_class, COUNT(*), SUM(outcome = 'success') FROM task_runs WHERE ended_at > ? AND ended_at <= ? "
        "AND task_class IS NOT NULL GROUP BY task_class ORDER BY task_class", (sql_time(start), sql_time(now)))
    found: list[Finding] = []
    for task_class, runs, ok in rows:
        rate = (ok or 0) / runs
        if runs >= cfg.task_min_runs and rate < cfg.task_success_rate:
            found.append(Finding("A-M2", task_class, f"task class {task_class}: {rate:.0%} success over {runs} "
                                 f"runs in {cfg.task_window_minutes} min", {"runs": runs, "success_rate": rate}))
    return found


def write_storm(conn: sqlite3.Connection, now: datetime, cfg: AlertSettings) -> list[Finding]:
    """A-M3: at least 100 (default) memory and skill writes within any 10-minute window (default)
    that ends in the last window (so a burst between two evaluations is still seen)."""
    span = timedelta(minutes=cfg.write_storm_minutes)
    since, until = sql_time(now - 2 * span), sql_time(now)
    times = sorted(parse_sql_time(r[0]) for r in conn.execute(
        "SELECT changed_at FROM memory_changes WHERE changed_at > ? AND changed_at <= ? UNION ALL "
        "SELECT changed_at FROM skill_history WHERE changed_at > ? AND changed_at <= ?", (since, until, since, until)))
    best, lo = 0, 0
    for hi, moment in enumerate(times):
        while moment - times[lo] >= span:
            lo += 1
        best = max(best, hi - lo + 1)
    if best < cfg.write_storm_count:
        return []
    return [Finding("A-M3", "writes", f"{best} memory/skill writes within {cfg.write_storm_minutes} min",
                    {"writes": best})]


def evaluate(conn: sqlite3.Connection, now: datetime, cfg: AlertSettings,
             restarts_in_window: int = 0, unit_state: dict[str, str] | None = None) -> list[Finding]:
    """Every store rule (A-C1, A-C3, A-M1..A-M3) plus A-C2 from an already read unit status.

    A finding's key and summary quote store rows (a skill name, a task class) and go on into the alert
    state, the notifiers and the run report: they are scrubbed here, where they enter the alerts."""
    found: list[Finding] = []
    for rule in (cost_spike, llm_outage, skill_failing, task_class_degraded, write_storm):
        found.extend(rule(conn, now, cfg))
    if cfg.systemd_unit and unit_state is not None:
        found.extend(agent_crashed(unit_state, restarts_in_window, cfg.systemd_unit, cfg))
    return [replace(f, key=safe_scrub(f.key), summary=safe_scrub(f.summary)) for f in found]
