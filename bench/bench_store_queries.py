"""The observability store's queries over a large store (issue #15): 1,000,000 ``llm_calls`` rows.

Builds a store in a temporary profile with ``--rows`` ``llm_calls`` and ``task_runs`` rows spread over
120 days, 20,000 ``skill_history`` and 50,000 ``memory_changes`` rows, then times (median of
``--rounds``) each of the chapter's queries as shipped in ``queries.sql`` and the aggregations the
dashboard and alerts run over ``llm_calls`` (daily tokens and cost, the last hour's cost, the 10 latest
calls). Target: every query under 1 s. Run: ``python bench/bench_store_queries.py`` (``--rows``;
``--plans`` prints each query's ``EXPLAIN QUERY PLAN``).

Each query is timed twice: on the store as written (no ``ANALYZE`` statistics, as in use) and after
``ANALYZE``. The memory changes carry generated excerpts and sessions, so Q-C1 / Q-C2 return real
conflicts (a few thousand in 30 days) rather than an empty join.
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hermes_pipeline.sinks.observability_store import connect, store_path  # noqa: E402
from hermes_pipeline.sinks.observability_store.queries import queries  # noqa: E402

AGGREGATIONS = {
    "daily tokens and cost (30 d)": "SELECT date(ended_at) AS day, SUM(input_tokens), SUM(output_tokens), "
                                    "SUM(cost_usd) FROM llm_calls WHERE ended_at >= datetime('now', '-30 days') "
                                    "GROUP BY day ORDER BY day",
    "cost of the last hour": "SELECT SUM(cost_usd) FROM llm_calls WHERE ended_at >= datetime('now', '-60 minutes')",
    "10 latest calls": "SELECT status FROM llm_calls ORDER BY ended_at DESC LIMIT 10",
    "task success rate by day (14 d)": "SELECT date(ended_at), AVG(outcome = 'success') FROM task_runs "
                                       "WHERE ended_at >= datetime('now', '-14 days') GROUP BY 1",
}


SKILL_HISTORY = 20_000
MEMORY_CHANGES = 50_000


def build(home: Path, rows: int) -> None:
    """Fill the store with generated rows, inside SQLite (a recursive CTE: C speed, not a Python loop)."""
    conn = connect(store_path(home))
    series = "WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < ? - 1) "
    at = "datetime('now', '-' || (abs(random()) % 10368000) || ' seconds')"  # within 120 days
    with conn:
        conn.execute("INSERT INTO llm_calls (started_at, ended_at, session_id, turn_id, api_request_id, provider, "
                     "model, status, input_tokens, output_tokens, cache_read_tokens, cost_usd) " + series +
                     f"SELECT t, t, 's' || (i % 5000), 't' || i, 't' || i || ':api:1', 'openai', 'm1', "
                     "CASE WHEN i % 50 THEN 'ok' ELSE 'error' END, 1000, 200, 0, "
                     f"CASE WHEN i % 7 THEN 0.002 END FROM (SELECT i, {at} AS t FROM c)", (rows,))
        conn.execute("INSERT INTO task_runs (trajectory_id, session_id, turn_id, started_at, ended_at, outcome) " +
                     series + "SELECT 'u' || i, 's' || (i % 5000), 't' || i, t, t, "
                     f"CASE WHEN i % 9 THEN 'success' ELSE 'failed' END FROM (SELECT i, {at} AS t FROM c)", (rows,))
        conn.execute("INSERT INTO skill_history (skill_name, version, change_type, changed_at) " + series +
                     "SELECT 'skill-' || (i % 500), i / 500 + 1, "
                     f"CASE i % 4 WHEN 0 THEN 'create' WHEN 3 THEN 'deprecate' ELSE 'refine' END, {at} FROM c",
                     (SKILL_HISTORY,))
        # Memory changes as the audit writes them: 40 files, one session in three a user edit outside any
        # session, one change in ten an add (no "before"), passages of 200 characters drawn from 10,000 per
        # file, so that some later changes revert or rewrite differently what another session wrote (Q-C1,
        # Q-C2 find a few thousand conflicts in 30 days).
        passage = "printf('%-200s', 'passage ' || (({n}) % 10000))"
        conn.execute("INSERT INTO memory_changes (file_path, change_type, actor, trigger_session_id, before_excerpt, "
                     "after_excerpt, changed_at) " + series +
                     "SELECT 'memories/F' || (i % 40) || '.md', CASE WHEN i % 10 THEN 'modify' ELSE 'add' END, "
                     "CASE i % 3 WHEN 0 THEN 'agent-reflection' WHEN 1 THEN 'user-direct' ELSE 'skill-execution' END, "
                     "CASE WHEN i % 3 = 1 THEN NULL ELSE 's' || (i % 5000) END, "
                     f"CASE WHEN i % 10 THEN {passage.format(n='i')} END, {passage.format(n='i + 40 + i / 10000 * 40')}, "
                     f"{at} FROM c", (MEMORY_CHANGES,))
    conn.close()


def _time(conn: sqlite3.Connection, sql: str, bind: dict[str, object], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        conn.execute(sql, bind).fetchall()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="llm_calls and task_runs rows (default 1,000,000)")
    parser.add_argument("--rounds", type=int, default=5, help="timed runs per query (default 5)")
    parser.add_argument("--plans", action="store_true", help="print each query's EXPLAIN QUERY PLAN")
    args = parser.parse_args(argv)
    home = Path(tempfile.mkdtemp(prefix="bench-store-queries-"))
    try:
        t0 = time.perf_counter()
        build(home, args.rows)
        print(f"store with {args.rows:,} llm_calls and task_runs rows, {SKILL_HISTORY:,} skill_history and "
              f"{MEMORY_CHANGES:,} memory_changes rows built in {time.perf_counter() - t0:.1f} s")
        params = {"Q-S1": {"skill": "skill-7"}, "Q-C1": {"days": 30}, "Q-C2": {"days": 30}}
        statements = {**{name: (text, params.get(name, {})) for name, text in queries().items()},
                      **{name: (sql, {}) for name, sql in AGGREGATIONS.items()}}
        # A store in use has no statistics (nothing runs ANALYZE): the first column is what a reader gets;
        # the second shows the planner keeps its choices once statistics exist.
        timings: dict[str, list[float]] = {name: [] for name in statements}
        counts: dict[str, int] = {}
        for analyzed in (False, True):
            if analyzed:
                writer = connect(store_path(home))
                writer.execute("ANALYZE")
                writer.close()
            conn = connect(store_path(home), create=False, readonly=True)
            for name, (sql, bind) in statements.items():
                timings[name].append(_time(conn, sql, bind, args.rounds))
                counts[name] = len(conn.execute(sql, bind).fetchall())
                if args.plans:
                    plan = " / ".join(r[3] for r in conn.execute("EXPLAIN QUERY PLAN " + sql, bind))
                    print(f"  {name}{' (ANALYZE)' if analyzed else ''}: {plan}")
            conn.close()
        print(f"  {'query':<34} {'no stats':>10} {'ANALYZE':>10} {'rows':>8}")
        for name, (first, second) in timings.items():
            print(f"  {name:<34} {first * 1000:7.1f} ms {second * 1000:7.1f} ms {counts[name]:>8,}")
        worst = max(max(pair) for pair in timings.values())
        print(f"slowest: {worst * 1000:.1f} ms (target < 1000 ms): {'OK' if worst < 1 else 'OVER TARGET'}")
        return 0 if worst < 1 else 1
    finally:
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    from _results import run_with_results  # --write-results: the figures also go to bench/RESULTS.md

    raise SystemExit(run_with_results("bench_store_queries", main))
