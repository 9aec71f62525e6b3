"""Server-side time of each dashboard route on a large profile, and the command's start-up time (issue #16).

The profile is generated under a temporary directory: a Hermes 0.19 ``state.db`` (Hermes' own DDL,
``hermes_state.SCHEMA_SQL``) with 10,000 sessions and 10 messages each, an observability store (the
store's own DDL) with 1,000,000 ``llm_calls`` rows, 30,000 ``task_runs``, 20,000 ``skill_runs`` over
90 days, 5,000 trajectory files, 50 skills and 200 memory files. Each route is rendered through
``Dashboard.respond`` (routing, queries and HTML, without the socket) ``--rounds`` times; the table
prints the median and the maximum in milliseconds. Start-up: the median time from starting
``hermes-pipeline dashboard --port 0`` to its first output line (the server is listening then).

Targets: every page under 200 ms server-side; start-up under 1 s.
Run: ``python bench/bench_dashboard.py`` (``--quick``: a tenth of the rows and files).
"""

from __future__ import annotations

import argparse
import json
import random
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

SESSIONS, MESSAGES, LLM_CALLS, TASKS, SKILL_RUNS, TRAJECTORIES = 10_000, 10, 1_000_000, 30_000, 20_000, 5_000
DAYS = 90


def _stamp(epoch: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(epoch))


def _state_db(home: Path, sessions: int, now: float) -> list[str]:
    import hermes_state

    conn = sqlite3.connect(home / "state.db")
    conn.executescript(hermes_state.SCHEMA_SQL)
    ids = []
    rows, messages = [], []
    for i in range(sessions):
        started = now - (sessions - i) * (DAYS * 86400 / sessions)
        sid = time.strftime("%Y%m%d_%H%M%S", time.localtime(started)) + f"_{i:06x}"
        ids.append(sid)
        rows.append((sid, "cli", "model-a", started, started + 60, "user_exit", MESSAGES, 2, 1000, 200))
        for k in range(MESSAGES):
            messages.append((sid, ("user", "assistant", "tool")[k % 3], f"message {k} of {sid} " + "x" * 200,
                             started + k))
    conn.executemany("INSERT INTO sessions (id, source, model, started_at, ended_at, end_reason, message_count, "
                     "tool_call_count, input_tokens, output_tokens) VALUES (?,?,?,?,?,?,?,?,?,?)", rows)
    conn.executemany("INSERT INTO messages (session_id, role, content, timestamp) VALUES (?,?,?,?)", messages)
    conn.commit()
    conn.close()
    return ids


def _store(home: Path, scale: float, now: float, trajectories: list[str], sessions: list[str]) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from hermes_pipeline.sinks.observability_store.schema import INDEXES, TABLES

    (home / "observability").mkdir()
    conn = sqlite3.connect(home / "observability" / "observability.sqlite3")
    for ddl in (*TABLES.values(), *INDEXES):
        conn.execute(ddl)
    rnd = random.Random(7)
    span = DAYS * 86400
    n = int(LLM_CALLS * scale)
    conn.executemany("INSERT INTO llm_calls (started_at, ended_at, session_id, provider, model, status, input_tokens, "
                     "output_tokens, cost_usd) VALUES (?,?,?,?,?,?,?,?,?)",
                     ((s, s, sessions[i % len(sessions)], "p", "m", "error" if i % 50 == 0 else "ok", 1000, 200, 0.002)
                      for i in range(n) for s in (_stamp(now - span * (n - i) / n),)))
    n = int(TASKS * scale)
    conn.executemany("INSERT INTO task_runs (trajectory_id, session_id, platform, started_at, ended_at, outcome, "
                     "input_tokens, output_tokens, cost_usd) VALUES (?,?,?,?,?,?,?,?,?)",
                     ((trajectories[i % len(trajectories)], sessions[i % len(sessions)], "cli", s, s,
                       "failed" if rnd.random() < 0.1 else "success", 30000, 6000, 0.06)
                      for i in range(n) for s in (_stamp(now - span * (n - i) / n),)))
    n = int(SKILL_RUNS * scale)
    conn.executemany("INSERT INTO skill_runs (skill_name, started_at, ended_at, outcome) VALUES (?,?,?,?)",
                     ((f"skill-{i % 50}", s, s, "failed" if i % 50 == 7 or rnd.random() < 0.1 else "success")
                      for i in range(n) for s in (_stamp(now - span * (n - i) / n),)))
    conn.executemany("INSERT INTO skill_history (skill_name, version, change_type, changed_at) VALUES (?,?,?,?)",
                     ((f"skill-{i % 50}", i // 50 + 1, "refine", _stamp(now - i * 600)) for i in range(500)))
    conn.executemany("INSERT INTO memory_changes (file_path, change_type, actor, after_excerpt, changed_at) VALUES "
                     "(?,?,?,?,?)", ((f"memories/f{i % 200}.md", "modify", "agent-reflection", "y" * 300,
                                      _stamp(now - i * 60)) for i in range(5000)))
    conn.commit()
    conn.close()


def _trajectory(tid: str, steps: int, payload: int) -> str:
    body = [{"step_id": k + 1, "source": "agent" if k else "user", "message": f"step {k} " + "z" * 200,
             "timestamp": "2026-12-01T10:00:00.000000Z", "metrics": {"prompt_tokens": 100, "completion_tokens": 20},
             "tool_calls": [{"tool_call_id": f"c{k}", "function_name": "read_file", "arguments": {"path": "a"}}],
             "observation": {"results": [{"source_call_id": f"c{k}", "content": "r" * 500}]},
             "extra": {"hermes": {"llm_request": {"body": {"messages": ["m" * payload]}}}}} for k in range(steps)]
    return json.dumps({"schema_version": "ATIF-v1.7", "session_id": tid, "trajectory_id": tid,
                       "agent": {"name": "hermes", "model_name": "m"}, "steps": body,
                       "final_metrics": {"total_prompt_tokens": 100 * steps, "total_completion_tokens": 20 * steps}})


def build(root: Path, scale: float) -> tuple[Path, list[str], list[str]]:
    """Generate the profile; return its home, trajectory ids and session ids."""
    now = time.time()
    home = root / "home"
    (home / "trajectories").mkdir(parents=True)
    tids = [str(uuid.uuid4()) for _ in range(int(TRAJECTORIES * scale))]
    for i, tid in enumerate(tids):
        day = time.strftime("%Y-%m-%d", time.gmtime(now - (len(tids) - i) * 600))
        big = i >= len(tids) - 2
        (home / "trajectories" / f"{day}-{tid}.json").write_text(_trajectory(tid, 40 if big else 6,
                                                                             20_000 if big else 200))
    try:
        sessions = _state_db(home, int(SESSIONS * scale), now)
    except ImportError:
        print("hermes-agent is not installed: no state.db (sessions come from the store)")
        sessions = [uuid.uuid4().hex for _ in range(int(SESSIONS * scale))]
    _store(home, scale, now, tids, sessions)
    for i in range(50):
        (home / "skills" / f"skill-{i}").mkdir(parents=True)
        (home / "skills" / f"skill-{i}" / "SKILL.md").write_text(f"---\nname: skill-{i}\ndescription: d\n---\n")
    (home / "memories").mkdir()
    for i in range(200):
        (home / "memories" / f"f{i}.md").write_text("fact\n" * 20)
    return home, tids, sessions


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a tenth of the rows and files")
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    from hermes_pipeline.dashboard import Dashboard, load_sources

    with tempfile.TemporaryDirectory(prefix="bench-dashboard-") as tmp:
        started = time.perf_counter()
        home, tids, sessions = build(Path(tmp), 0.1 if args.quick else 1.0)
        print(f"profile generated in {time.perf_counter() - started:.1f} s: {len(sessions):,} sessions, "
              f"{int(LLM_CALLS * (0.1 if args.quick else 1)):,} llm_calls, {len(tids):,} trajectories")
        app = Dashboard(load_sources(home))
        routes = ["/", "/sessions", f"/sessions/{sessions[-1]}", "/skills", "/memory", f"/trajectories/{tids[-1]}",
                  f"/trajectories/{tids[-2]}/diff/{tids[-1]}"]
        print(f"{'route':<26} {'median ms':>10} {'max ms':>8}  bytes")
        for route in routes:
            samples = []
            for _ in range(args.rounds):
                t0 = time.perf_counter()
                response = app.respond(route)
                samples.append((time.perf_counter() - t0) * 1000)
                assert response.status == 200, (route, response.status)
            label = route if len(route) < 26 else route[:12] + "…" + route[-12:]
            print(f"{label:<26} {statistics.median(samples):>10.1f} {max(samples):>8.1f}  {len(response.body):,}")
        starts = []
        for _ in range(5):
            t0 = time.perf_counter()
            proc = subprocess.Popen([sys.executable, "-m", "hermes_pipeline.cli.main", "dashboard", "--home",
                                     str(home), "--port", "0"], stdout=subprocess.PIPE, text=True)
            assert proc.stdout is not None
            line = proc.stdout.readline()
            starts.append((time.perf_counter() - t0) * 1000)
            proc.send_signal(signal.SIGTERM)
            proc.wait(10)
            assert line.startswith("dashboard: http://"), line
        print(f"start-up (command start to listening): median {statistics.median(starts):.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
