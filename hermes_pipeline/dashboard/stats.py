"""Pure computations over rows the queries fetched: time windows, chart series and the anomaly rules
of spec 06 §10 (no I/O here)."""

from __future__ import annotations

import time
from collections import defaultdict
from typing import Any, Final

__all__ = ["anomalies_from", "daily_series", "hourly_series", "local_day_bounds", "utc_text"]

FAILED: Final = ("failed", "timed_out")
"""Task outcomes that count as failures."""


def utc_text(epoch: float) -> str:
    """``YYYY-MM-DD HH:MM:SS`` in UTC, the store's timestamp form (comparable as text)."""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(epoch))


def local_day_bounds(now: float) -> tuple[str, str]:
    """The dashboard host's local calendar day containing ``now``, as UTC store timestamps [start, end)."""
    local = time.localtime(now)
    start = time.mktime((local.tm_year, local.tm_mon, local.tm_mday, 0, 0, 0, 0, 0, -1))
    following = time.localtime(start + 26 * 3600)
    end = time.mktime((following.tm_year, following.tm_mon, following.tm_mday, 0, 0, 0, 0, 0, -1))
    return utc_text(start), utc_text(end)


def _num(value: Any) -> float:
    return float(value) if isinstance(value, int | float) else 0.0


def daily_series(rows: list[dict[str, Any]], now: float, days: int) -> list[dict[str, Any]]:
    """One entry per UTC day of the last ``days`` days (oldest first), zeros for days without runs;
    ``cost`` is ``None`` on a day whose runs have no known cost."""
    by_day = {str(r.get("day")): r for r in rows}
    out = []
    for back in range(days - 1, -1, -1):
        day = time.strftime("%Y-%m-%d", time.gmtime(now - back * 86400))
        row = by_day.get(day, {})
        out.append({"day": day, "input": int(_num(row.get("input"))), "output": int(_num(row.get("output"))),
                    "cost": _num(row.get("cost")) if row.get("costed") else None,
                    "tasks": int(_num(row.get("tasks")))})
    return out


def hourly_series(rows: list[dict[str, Any]], now: float) -> list[dict[str, Any]]:
    """The task success rate of each of the last 24 UTC hours (oldest first; ``rate`` ``None`` for an
    hour without tasks)."""
    by_hour = {str(r.get("hour")): r for r in rows}
    out = []
    for back in range(23, -1, -1):
        hour = time.strftime("%Y-%m-%d %H", time.gmtime(now - back * 3600))
        row = by_hour.get(hour, {})
        tasks, ok = int(_num(row.get("tasks"))), int(_num(row.get("ok")))
        out.append({"hour": hour, "tasks": tasks, "ok": ok, "rate": ok / tasks if tasks else None})
    return out


def _cost_spikes(days: list[dict[str, Any]], now: float) -> list[dict[str, Any]]:
    """Days among the last 14 whose cost is above 3 times the mean daily cost of the 14 days before
    them (days without activity count as 0), judged only when at least 3 of those days were active."""
    cost = {str(r.get("day")): _num(r.get("cost")) for r in days}
    active = {str(r.get("day")) for r in days if _num(r.get("tasks")) > 0}
    out = []
    for back in range(13, -1, -1):
        day = time.strftime("%Y-%m-%d", time.gmtime(now - back * 86400))
        before = [time.strftime("%Y-%m-%d", time.gmtime(now - (back + k) * 86400)) for k in range(1, 15)]
        mean = sum(cost.get(d, 0.0) for d in before) / 14
        if sum(d in active for d in before) >= 3 and mean > 0 and cost.get(day, 0.0) > 3 * mean:
            out.append({"kind": "cost", "day": day, "cost": cost.get(day, 0.0), "mean": mean})
    return out


def _failure_streaks(outcomes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Runs of 3 or more consecutive failed tasks among the latest ones (newest first)."""
    out: list[dict[str, Any]] = []
    streak = 0
    for index, row in enumerate([*outcomes, {"outcome": "success"}]):
        if row.get("outcome") in FAILED:
            streak += 1
            continue
        if streak >= 3:
            out.append({"kind": "tasks", "count": streak, "current": index == streak})
        streak = 0
    return out


def _skill_alarms(rows: list[dict[str, Any]], now: float) -> list[dict[str, Any]]:
    """Skills whose 5 most recent runs all failed, or that failed at least half of at least 5 runs
    over the last 7 days."""
    week = utc_text(now - 7 * 86400)
    latest: dict[str, list[str]] = defaultdict(list)
    recent: dict[str, list[str]] = defaultdict(list)
    for row in rows:
        name, outcome = str(row.get("skill_name")), str(row.get("outcome"))
        if isinstance(row.get("rn"), int) and row["rn"] <= 5:
            latest[name].append(outcome)
        if str(row.get("ended_at") or "") >= week:
            recent[name].append(outcome)
    out = []
    for name in sorted(set(latest) | set(recent)):
        last = latest.get(name, [])
        week_runs = recent.get(name, [])
        failures = sum(o != "success" for o in week_runs)
        if len(last) == 5 and all(o != "success" for o in last):
            out.append({"kind": "skill", "skill": name, "why": "its 5 most recent runs failed"})
        elif len(week_runs) >= 5 and failures / len(week_runs) >= 0.5:
            out.append({"kind": "skill", "skill": name,
                        "why": f"{failures} of {len(week_runs)} runs failed in 7 days"})
    return out


def anomalies_from(days: list[dict[str, Any]] | None, outcomes: list[dict[str, Any]] | None,
                   skill_runs: list[dict[str, Any]] | None, now: float) -> list[dict[str, Any]]:
    """Every anomaly the store's rows show (skills, task failure streaks, cost spikes)."""
    return [*_skill_alarms(skill_runs or [], now), *_failure_streaks(outcomes or []),
            *_cost_spikes(days or [], now)]
