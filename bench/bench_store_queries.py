"""The observability store's queries over a large store (issue #15): 1,000,000 ``llm_calls`` rows.

Builds a store in a temporary profile with ``--rows`` ``llm_calls`` and ``task_runs`` rows spread over
120 days, 20,000 ``skill_history`` and 50,000 ``memory_changes`` rows, then times (median of
``--rounds``) each of the chapter's queries as shipped in ``queries.sql`` and the aggregations the
dashboard and alerts run over ``llm_calls`` (daily tokens and cost, the last hour's cost, the 10 latest
calls). Target: every query under 1 s. Run: ``python bench/bench_store_queries.py`` (``--rows``).
"""

from __future__ import annotations

import argparse
import shutil
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
                     (20_000,))
        conn.execute("INSERT INTO memory_changes (file_path, change_type, actor, changed_at) " + series +
                     "SELECT 'memories/F' || (i % 40) || '.md', 'modify', "
                     "CASE i % 3 WHEN 0 THEN 'agent-reflection' WHEN 1 THEN 'user-direct' ELSE 'skill-execution' END, "
                     f"{at} FROM c", (50_000,))
    conn.execute("ANALYZE")
    conn.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="llm_calls and task_runs rows (default 1,000,000)")
    parser.add_argument("--rounds", type=int, default=5, help="timed runs per query (default 5)")
    args = parser.parse_args(argv)
    home = Path(tempfile.mkdtemp(prefix="bench-store-queries-"))
    try:
        t0 = time.perf_counter()
        build(home, args.rows)
        print(f"store with {args.rows:,} llm_calls and task_runs rows built in {time.perf_counter() - t0:.1f} s")
        conn = connect(store_path(home), create=False, readonly=True)
        params = {"Q-S1": {"skill": "skill-7"}, "Q-C1": {"days": 30}, "Q-C2": {"days": 30}}
        statements = {**{name: (text, params.get(name, {})) for name, text in queries().items()},
                      **{name: (sql, {}) for name, sql in AGGREGATIONS.items()}}
        worst = 0.0
        for name, (sql, bind) in statements.items():
            times = []
            for _ in range(args.rounds):
                t = time.perf_counter()
                conn.execute(sql, bind).fetchall()
                times.append(time.perf_counter() - t)
            median = statistics.median(times)
            worst = max(worst, median)
            print(f"  {name:<34} {median * 1000:8.1f} ms")
        conn.close()
        print(f"slowest: {worst * 1000:.1f} ms (target < 1000 ms): {'OK' if worst < 1 else 'OVER TARGET'} "
              "(Q-C1/Q-C2 join memory_changes with itself: their time grows with the square of the changes per file)")
        return 0 if worst < 1 else 1
    finally:
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
