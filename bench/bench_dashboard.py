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

Then the profile of issue #31 (2,000 sessions, :func:`build_issue_profile`; target: every list page under
100 ms). ``--issue-only`` skips the large profile. ``--against DIR`` (a checkout of another version, e.g.
``git archive main hermes_pipeline | tar -x -C DIR``) times the issue's routes with that version's
``hermes_pipeline`` and with this one, in alternating child processes on the same profile, and prints both
medians and their ratio: on a shared, loaded machine only a baseline measured in the same run is a fair one.
"""

from __future__ import annotations

import argparse
import calendar
import json
import os
import random
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from urllib.parse import quote_plus
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


TOPICS = ("summarise the inbox", "fix the failing build", "plan the trip", "draft the report", "clean the notes",
          "book the dentist", "review the pull request", "update the budget")
ERRORS = ("rate_limited", "upstream_error", "authentication", "command_failed")
ERROR_MESSAGES = {"rate_limited": "Error code: 429 - rate limit reached for model-a, retry after 20 s",
            "upstream_error": "Error code: 503 - the upstream provider is overloaded",
            "authentication": "Error code: 401 - invalid api key <redacted:0f3a9c1d>",
            "command_failed": "RuntimeError: agent gave up: make kept failing"}
"""The recorded message of each failure (schema 5 keeps it beside the type)."""
TOOL_MESSAGE = "make: *** [all] Error 2"
MEMORY_FILES = ("memories/MEMORY.md", "memories/USER.md", "memories/projects.md", "memories/people.md")


def _issue_trajectory(tid: str, sid: str, task: str, started: float, failed: str | None, request: str,
                      call: str) -> str:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime(started))
    later = time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime(started + 4))
    user: dict = {"step_id": 1, "source": "user", "message": task, "timestamp": stamp,
                  "extra": {"hermes": {"trajectory_id": tid}}}
    if failed:
        user["extra"]["hermes"].update({"turn_status": "error", "error_type": failed,
                                        "error_message": ERROR_MESSAGES[failed]})
    code = 2 if failed == "command_failed" else 0
    agent: dict = {"step_id": 2, "source": "agent", "message": "running it", "timestamp": later, "model_name": "model-a",
                   "metrics": {"prompt_tokens": 900, "completion_tokens": 120},
                   "tool_calls": [{"tool_call_id": call, "function_name": "terminal", "arguments": {"command": "make"}}],
                   "observation": {"results": [{"source_call_id": call, "content": TOOL_MESSAGE if code
                                                else "ok", "extra": {"hermes": {"status": "ok", "exit_code": code,
                                                                                "duration_ms": 812}}}]},
                   "extra": {"hermes": {"api_request_id": request}}}
    if failed in ("rate_limited", "upstream_error", "authentication"):
        agent["extra"]["hermes"]["failed_attempts"] = [{"attempt": 1, "error_type": failed, "status_code": 429,
                                                         "message": ERROR_MESSAGES[failed]}]
    return json.dumps({"schema_version": "ATIF-v1.7", "session_id": sid, "trajectory_id": tid,
                       "agent": {"name": "hermes", "model_name": "model-a"}, "steps": [user, agent],
                       "final_metrics": {"total_prompt_tokens": 900, "total_completion_tokens": 120},
                       "extra": {"hermes": {"session_id": sid}}})


def build_issue_profile(root: Path, sessions: int = 2000, days: int = 14, now: float | None = None) -> dict:
    """The profile of issue #31's review, generated: ``sessions`` Hermes sessions over ``days`` days (titles,
    user and tool messages), two runs each with a trajectory file, about 3 LLM calls per run, 15 % failed runs
    with provider error types or a command exiting 2 (``tool_errors``), 40 skills with up to 8 versions
    (reasons, sessions), 252 memory changes over 4 files (150 with a reason). Returns what it wrote, for
    assertions: ``home``, ``sessions``, ``runs`` (dicts), ``skills``, ``memory_files``."""
    import hermes_state

    now = time.time() if now is None else now
    rnd = random.Random(31)
    home = root / "home"
    (home / "trajectories").mkdir(parents=True)
    state = sqlite3.connect(home / "state.db")
    state.executescript(hermes_state.SCHEMA_SQL)
    store_dir = home / "observability"
    store_dir.mkdir()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from hermes_pipeline.sinks.observability_store.schema import INDEXES, TABLES

    store = sqlite3.connect(store_dir / "observability.sqlite3")
    for ddl in (*TABLES.values(), *INDEXES):
        store.execute(ddl)
    span = days * 86400 - 3600
    sids, runs = [], []
    session_rows, messages, task_rows, llm_rows, tool_rows, skill_rows = [], [], [], [], [], []
    for i in range(sessions):
        started = now - span * (sessions - i) / sessions
        sid = time.strftime("%Y%m%d_%H%M%S", time.gmtime(started)) + f"_{i:06x}"
        sids.append(sid)
        topic = TOPICS[i % len(TOPICS)]
        model = "model-a" if i % 3 else "model-b"
        session_rows.append((sid, "cli" if i % 4 else "telegram", model, f"{topic} #{i}", started, started + 40,
                             "user_exit", 6, 2, 1800, 240))
        for k in range(2):
            t0 = started + k * 15
            tid = str(uuid.UUID(int=rnd.getrandbits(128), version=4))
            task = f"please {topic}, request {i}.{k}"
            failed = ERRORS[rnd.randrange(len(ERRORS))] if rnd.random() < 0.15 else None
            turn, request, call = f"{sid}:t{k}", f"req-{tid[:8]}", f"call-{tid[:8]}"
            skill = f"skill-{(i * 2 + k) % 40}"
            messages += [(sid, "user", task, None, t0), (sid, "assistant", "running it", None, t0 + 2),
                         (sid, "tool", "make: ok", "terminal", t0 + 3)]
            run = {"trajectory_id": tid, "session_id": sid, "task": task, "error_type": failed, "skill": skill,
                   "started": _stamp(t0), "ended": _stamp(t0 + 10), "model": model, "turn_id": turn,
                   "request": request, "call": call}
            runs.append(run)
            task_rows.append((tid, sid, turn, "cli", "cli:chat", run["started"], run["ended"],
                              "failed" if failed else "success", 3, 1, 2700, 360, 0.012 + 0.001 * (i % 7), failed,
                              ERROR_MESSAGES[failed] if failed else None))
            for j in range(3):
                bad = failed in ("rate_limited", "upstream_error", "authentication") and j == 0
                llm_rows.append((run["started"], run["ended"], sid, turn, request if j == 1 else f"{request}-{j}",
                                 "p", model, "error" if bad else "ok", failed if bad else None, 900, 120, 0.004,
                                 ERROR_MESSAGES[failed] if bad and failed else None))
            if failed == "command_failed":
                tool_rows.append((run["ended"], sid, turn, tid, call, "terminal", "ok", "command_failed", 2,
                                  TOOL_MESSAGE))
            skill_rows.append((skill, tid, turn, run["started"], run["ended"], "failed" if failed else "success"))
            day = time.strftime("%Y-%m-%d", time.gmtime(t0))
            path = home / "trajectories" / f"{day}-{tid}.json"
            path.write_text(_issue_trajectory(tid, sid, task, t0, failed, request, call))
            # written when the run ended: the files' order is the runs' own, not the order in which this loop
            # happened to write them within one clock tick (files written in the same tick share an mtime)
            os.utime(path, (t0 + 10, t0 + 10))
    state.executemany("INSERT INTO sessions (id, source, model, title, started_at, ended_at, end_reason, message_count, "
                      "tool_call_count, input_tokens, output_tokens) VALUES (?,?,?,?,?,?,?,?,?,?,?)", session_rows)
    state.executemany("INSERT INTO messages (session_id, role, content, tool_name, timestamp) VALUES (?,?,?,?,?)",
                      messages)
    state.commit()
    state.close()
    store.executemany("INSERT INTO task_runs (trajectory_id, session_id, turn_id, platform, task_class, started_at, "
                      "ended_at, outcome, llm_calls, tool_calls, input_tokens, output_tokens, cost_usd, error_type, "
                      "error_message) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", task_rows)
    store.executemany("INSERT INTO llm_calls (started_at, ended_at, session_id, turn_id, api_request_id, provider, "
                      "model, status, error_type, input_tokens, output_tokens, cost_usd, error_message) VALUES "
                      "(?,?,?,?,?,?,?,?,?,?,?,?,?)", llm_rows)
    store.executemany("INSERT INTO tool_errors (ended_at, session_id, turn_id, trajectory_id, tool_call_id, tool_name, "
                      "status, error_type, exit_code, error_message) VALUES (?,?,?,?,?,?,?,?,?,?)", tool_rows)
    store.executemany("INSERT INTO skill_runs (skill_name, trajectory_id, turn_id, started_at, ended_at, outcome) "
                      "VALUES (?,?,?,?,?,?)", skill_rows)
    for n in range(40):
        name = f"skill-{n}"
        (home / "skills" / "tools" / name).mkdir(parents=True)
        (home / "skills" / "tools" / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: does {n}\n---\n")
        for v in range(1, n % 8 + 2):
            at = _stamp(now - span + (v - 1) * span / (n % 8 + 1))
            store.execute("INSERT INTO skill_history (skill_name, version, change_type, reason, trigger_session_id, "
                          "after_hash, changed_at, hermes_action, provenance, skill_path, changed_files) VALUES "
                          "(?,?,?,?,?,?,?,?,?,?,?)",
                          (name, v, "create" if v == 1 else "refine", f"v{v}: handle case {v} of {name}",
                           sids[min(len(sids) - 1, v * 10)], f"{n:04d}{v:04d}" * 8, at,
                           "create" if v == 1 else "patch", "agent_created", f"tools/{name}", '["SKILL.md"]'))
    (home / "memories").mkdir()
    for f in MEMORY_FILES:
        (home / f).write_text("- a fact\n")
    for m in range(252):
        run = runs[(m * 31) % len(runs)]
        store.execute("INSERT INTO memory_changes (file_path, change_type, actor, trigger_session_id, before_excerpt, "
                      "after_excerpt, reason, changed_at) VALUES (?,?,?,?,?,?,?,?)",
                      (MEMORY_FILES[m % 4], "modify", ("agent-reflection", "user-direct")[m % 2], run["session_id"],
                       f"- fact {m}\n- shared line", f"- fact {m} (updated)\n- shared line",
                       f"the user corrected fact {m}" if m < 150 else None, run["ended"]))
    store.commit()
    store.close()
    replayed, replays = runs[-6:-3], []
    for run in replayed:  # three recent runs were replayed (``replay`` writes no store row, only the file)
        rid = str(uuid.UUID(int=rnd.getrandbits(128), version=4))
        t0 = calendar.timegm(time.strptime(run["started"], "%Y-%m-%d %H:%M:%S"))
        doc = json.loads(_issue_trajectory(rid, run["session_id"], run["task"], t0, run["error_type"],
                                           run["request"], run["call"]))
        doc["extra"]["hermes"]["replay"] = {"of": run["trajectory_id"], "live_from_step": None, "mode": "strict",
                                            "diverged_at_step": None}
        path = home / "trajectories" / f"{time.strftime('%Y-%m-%d', time.gmtime(t0))}-{rid}.json"
        path.write_text(json.dumps(doc, indent=2))
        old = now - span  # written long ago: Today's latest runs stay the recorded ones
        os.utime(path, (old, old))
        replays.append(rid)
    return {"home": home, "sessions": sids, "runs": runs, "skills": [f"skill-{n}" for n in range(40)],
            "memory_files": list(MEMORY_FILES), "replayed": replayed, "replays": replays}


def _time(app: object, routes: list[str], rounds: int) -> None:
    """Print the median and maximum server time of each route (``Dashboard.respond``, no socket)."""
    print(f"{'route':<34} {'median ms':>10} {'max ms':>8}  bytes")
    for route in routes:
        samples = []
        for _ in range(rounds):
            t0 = time.perf_counter()
            response = app.respond(route)  # type: ignore[attr-defined]
            samples.append((time.perf_counter() - t0) * 1000)
            assert response.status == 200, (route, response.status)
        label = route if len(route) < 34 else route[:16] + "…" + route[-16:]
        print(f"{label:<34} {statistics.median(samples):>10.1f} {max(samples):>8.1f}  {len(response.body):,}")


def _issue_routes(made: dict) -> list[str]:
    run = made["runs"][len(made["runs"]) // 2]
    return ["/", "/sessions", "/sessions?page=40", "/sessions?outcome=failed", "/sessions?q=trip",
            "/runs", "/runs?page=80", "/runs?outcome=failed&since=7d", "/runs?error=rate_limited",
            "/runs?skill=skill-7", "/runs?tool=terminal", "/runs?model=model-b", "/runs?q=" + quote_plus(run["task"][-8:]),
            "/failures", "/failures?since=14d&page=2", "/skills", "/skills/skill-7", "/memory",
            "/memory?page=5", "/memory/memories/MEMORY.md", f"/trajectories/{run['trajectory_id']}",
            f"/trajectories/{made['replayed'][-1]['trajectory_id']}"]


def _child_times(home: Path, routes: list[str], rounds: int) -> None:
    """``--child``: time each route ``rounds`` times after one warm-up with the ``hermes_pipeline`` on
    ``PYTHONPATH``; print ``{route: [ms, ...]}`` as JSON."""
    from hermes_pipeline.dashboard import Dashboard, load_sources

    app = Dashboard(load_sources(home))
    out = {}
    for route in routes:
        app.respond(route)
        samples = []
        for _ in range(rounds):
            t0 = time.perf_counter()
            response = app.respond(route)
            samples.append((time.perf_counter() - t0) * 1000)
            assert response.status == 200, (route, response.status)
        out[route] = samples
    print(json.dumps(out))


def _against(made: dict, other: Path, rounds: int) -> None:
    """Both versions on the same profile, alternating child processes (see the module docstring)."""
    routes = _issue_routes(made)
    trees = {"this": str(Path(__file__).resolve().parents[1]), "other": str(other.resolve())}
    samples: dict[str, dict[str, list[float]]] = {k: {r: [] for r in routes} for k in trees}
    for _ in range(rounds):
        for label, tree in trees.items():
            done = subprocess.run([sys.executable, __file__, "--child", str(made["home"]), json.dumps(routes)],
                                  env={**os.environ, "PYTHONPATH": tree}, capture_output=True, text=True, timeout=600)
            if done.returncode != 0:
                raise SystemExit(f"the {label} version failed: {done.stderr[-1500:]}")
            for route, values in json.loads(done.stdout).items():
                samples[label][route] += values
    print(f"\nthis version against {other} (alternating, {rounds} x 3 samples each; load average "
          f"{os.getloadavg()[0]:.1f})")
    print(f"{'route':<34} {'this ms':>9} {'other ms':>9}  ratio")
    for route in routes:
        a, b = statistics.median(samples["this"][route]), statistics.median(samples["other"][route])
        label = route if len(route) < 34 else route[:16] + "…" + route[-16:]
        print(f"{label:<34} {a:>9.1f} {b:>9.1f}  {a / b:.2f}")


def main() -> int:
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        _child_times(Path(sys.argv[2]), json.loads(sys.argv[3]), 3)
        return 0
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a tenth of the rows and files")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--issue-only", action="store_true", help="only the profile of issue #31")
    parser.add_argument("--against", type=Path, metavar="DIR", help="also time another checkout's hermes_pipeline "
                                                                     "on the issue's profile, alternating")
    args = parser.parse_args()
    from hermes_pipeline.dashboard import Dashboard, load_sources

    if not args.issue_only:
        _large(args)
    with tempfile.TemporaryDirectory(prefix="bench-dashboard-issue-") as tmp:
        started = time.perf_counter()
        made = build_issue_profile(Path(tmp))
        print(f"\nissue #31 profile generated in {time.perf_counter() - started:.1f} s: {len(made['sessions']):,} "
              f"sessions, {len(made['runs']):,} runs (target: every list page under 100 ms, medians)")
        app = Dashboard(load_sources(made["home"]))
        _time(app, _issue_routes(made), args.rounds)
        if args.against is not None:
            _against(made, args.against, max(1, args.rounds // 3))
    return 0


def _large(args: argparse.Namespace) -> None:
    """The large profile: every route, then the command's start-up."""
    from hermes_pipeline.dashboard import Dashboard, load_sources

    with tempfile.TemporaryDirectory(prefix="bench-dashboard-") as tmp:
        started = time.perf_counter()
        home, tids, sessions = build(Path(tmp), 0.1 if args.quick else 1.0)
        print(f"profile generated in {time.perf_counter() - started:.1f} s: {len(sessions):,} sessions, "
              f"{int(LLM_CALLS * (0.1 if args.quick else 1)):,} llm_calls, {len(tids):,} trajectories")
        app = Dashboard(load_sources(home))
        _time(app, ["/", "/sessions", "/sessions?page=100", f"/sessions/{sessions[-1]}", "/runs", "/runs?page=200",
                    "/failures", "/skills", "/skills/skill-7", "/memory", "/memory/memories/f7.md",
                    f"/trajectories/{tids[-1]}", f"/trajectories/{tids[-2]}/diff/{tids[-1]}"], args.rounds)
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


if __name__ == "__main__":
    from _results import run_with_results  # --write-results: the figures also go to bench/RESULTS.md

    raise SystemExit(run_with_results("bench_dashboard", main))
