"""Pure computations over rows the queries fetched: time windows, chart series and the anomaly rules
of spec 06 §10 (no I/O here)."""

from __future__ import annotations

import time
from collections import defaultdict
from typing import Any, Final

__all__ = ["SKILL_WINDOW_DAYS", "anomalies_from", "daily_series", "hourly_series", "local_day_bounds",
           "skill_alarm", "utc_text"]

FAILED: Final = ("failed", "timed_out")
"""Task outcomes that count as failures."""
SKILL_WINDOW_DAYS: Final = 7
"""The one window of skill health: the Today alarm and the ``/skills`` page count runs over the same days."""
SKILL_MIN_RUNS: Final = 5
"""Runs a skill needs in the window (and latest runs all failed) before it is judged."""


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


def _cost_spikes(days: list[dict[str, Any]], now: float, first_day: str | None = None) -> list[dict[str, Any]]:
    """Days among the last 14 whose cost is above 3 times the mean daily cost of the 14 days before
    them (days without activity count as 0, days before the profile's first record ``first_day`` do not
    count at all: a young profile has no quiet history), judged only when at least 3 of those days were
    active."""
    cost = {str(r.get("day")): _num(r.get("cost")) for r in days}
    active = {str(r.get("day")) for r in days if _num(r.get("tasks")) > 0}
    out = []
    for back in range(13, -1, -1):
        day = time.strftime("%Y-%m-%d", time.gmtime(now - back * 86400))
        before = [d for d in (time.strftime("%Y-%m-%d", time.gmtime(now - (back + k) * 86400)) for k in range(1, 15))
                  if first_day is None or d >= first_day]
        if not before:
            continue
        mean = sum(cost.get(d, 0.0) for d in before) / len(before)
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


def skill_alarm(latest: list[str], window: list[str]) -> str | None:
    """Why a skill is failing, or ``None``: its :data:`SKILL_MIN_RUNS` most recent runs (``latest``, newest
    first, any age) all failed, or at least half of at least that many runs in the window (``window``, each
    run once) failed. The Today panel and ``/skills`` both judge with this one rule."""
    failures = sum(o != "success" for o in window)
    if len(latest) >= SKILL_MIN_RUNS and all(o != "success" for o in latest[:SKILL_MIN_RUNS]):
        return f"its {SKILL_MIN_RUNS} most recent runs failed"
    if len(window) >= SKILL_MIN_RUNS and 2 * failures >= len(window):
        return f"{failures} of {len(window)} runs failed in {SKILL_WINDOW_DAYS} days"
    return None


def _skill_alarms(rows: list[dict[str, Any]], now: float) -> list[dict[str, Any]]:
    """Skills :func:`skill_alarm` flags. ``rows`` holds each skill's latest runs (``rn`` 1..5) and, apart
    from them, its runs of the window (``rn`` ``None``): a run in both lists is counted once per list."""
    since = utc_text(now - SKILL_WINDOW_DAYS * 86400)
    latest: dict[str, list[tuple[int, str]]] = defaultdict(list)
    recent: dict[str, list[str]] = defaultdict(list)
    for row in rows:
        name, outcome = str(row.get("skill_name")), str(row.get("outcome"))
        if isinstance(row.get("rn"), int):
            latest[name].append((row["rn"], outcome))
        elif str(row.get("ended_at") or "") >= since:
            recent[name].append(outcome)
    out = []
    for name in sorted(set(latest) | set(recent)):
        why = skill_alarm([o for _, o in sorted(latest.get(name, []))], recent.get(name, []))
        if why is not None:
            out.append({"kind": "skill", "skill": name, "why": why})
    return out


def anomalies_from(days: list[dict[str, Any]] | None, outcomes: list[dict[str, Any]] | None,
                   skill_runs: list[dict[str, Any]] | None, now: float,
                   first_day: str | None = None) -> list[dict[str, Any]]:
    """Every anomaly the store's rows show (skills, task failure streaks, cost spikes); ``first_day``: the
    UTC day of the profile's first recorded run."""
    return [*_skill_alarms(skill_runs or [], now), *_failure_streaks(outcomes or []),
            *_cost_spikes(days or [], now, first_day)]
