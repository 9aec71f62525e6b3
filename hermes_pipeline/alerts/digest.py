"""A-L1, the daily digest (spec 06 BOOK-43): the previous day's tasks, success rate and cost,
skill changes, and the top 5 error patterns."""

from __future__ import annotations

import sqlite3
from datetime import datetime
from typing import Any

from .rules import sql_time


def daily_digest(conn: sqlite3.Connection, start: datetime, end: datetime) -> dict[str, Any]:
    """Totals of the day ``[start, end)``: tasks, success rate, cost, skill changes, error patterns."""
    lo, hi = sql_time(start), sql_time(end)
    tasks, ok = conn.execute("SELECT COUNT(*), COALESCE(SUM(outcome = 'success'), 0) FROM task_runs "
                             "WHERE ended_at >= ? AND ended_at < ?", (lo, hi)).fetchone()
    cost_row = conn.execute("SELECT SUM(cost_usd) FROM llm_calls WHERE ended_at >= ? AND ended_at < ?",
                            (lo, hi)).fetchone()
    changes = {kind: 0 for kind in ("create", "refine", "deprecate", "restore")}
    for kind, count in conn.execute("SELECT change_type, COUNT(*) FROM skill_history WHERE changed_at >= ? AND "
                                    "changed_at < ? GROUP BY change_type", (lo, hi)):
        changes[str(kind)] = int(count)
    patterns = conn.execute(
        "SELECT pattern, COUNT(*) AS n FROM ("
        " SELECT 'task ' || COALESCE(task_class, '?') || ': ' || COALESCE(error_type, outcome) AS pattern"
        "   FROM task_runs WHERE ended_at >= ? AND ended_at < ? AND outcome != 'success'"
        " UNION ALL SELECT 'llm ' || COALESCE(provider, '?') || ': ' || COALESCE(error_type, 'error')"
        "   FROM llm_calls WHERE ended_at >= ? AND ended_at < ? AND status = 'error'"
        " UNION ALL SELECT 'skill ' || COALESCE(skill_name, '?') || ': ' || COALESCE(outcome, '?')"
        "   FROM skill_runs WHERE ended_at >= ? AND ended_at < ? AND outcome IN ('failed', 'failure', 'error',"
        "   'timed_out')"
        " UNION ALL SELECT 'tool ' || COALESCE(tool_name, '?') || ': ' || COALESCE(error_type, status, 'error')"
        "   FROM tool_errors WHERE ended_at >= ? AND ended_at < ?"
        ") GROUP BY pattern ORDER BY n DESC, pattern LIMIT 5", (lo, hi, lo, hi, lo, hi, lo, hi)).fetchall()
    return {"day_start": lo, "day_end": hi, "tasks": int(tasks),
            "success_rate": (int(ok) / int(tasks)) if tasks else None,
            "cost_usd": None if cost_row[0] is None else round(float(cost_row[0]), 6),
            "skills": changes, "top_errors": [{"pattern": p, "count": int(n)} for p, n in patterns]}


def digest_text(digest: dict[str, Any], folded: list[dict[str, Any]]) -> str:
    """The digest as plain text (chat and e-mail)."""
    rate = "n/a" if digest["success_rate"] is None else f"{digest['success_rate']:.0%}"
    cost = "n/a" if digest["cost_usd"] is None else f"${digest['cost_usd']:.2f}"
    skills = digest["skills"]
    lines = [f"Daily digest {digest['day_start'][:10]}: {digest['tasks']} tasks, success {rate}, cost {cost}",
             f"skills: {skills['create']} created, {skills['refine']} refined, {skills['deprecate']} deprecated"]
    if digest["top_errors"]:
        lines.append("top errors: " + "; ".join(f"{e['pattern']} x{e['count']}" for e in digest["top_errors"]))
    if folded:
        lines.append(f"{len(folded)} alert(s) held back by the hourly cap:")
        lines.extend(f"  [{f['severity']}] {f['rule']} {f['key']}: {f['summary']}" for f in folded)
    return "\n".join(lines)
