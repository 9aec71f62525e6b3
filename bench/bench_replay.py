"""Offline replay of a recorded Hermes run, against Hermes' own start-up, and a batch of replays (issue #28).

One run is recorded with the real ``hermes`` (hermes-agent 0.19) against the scripted model server, in a
temporary Hermes home: ``--steps`` LLM calls (a ``read_file`` call each, then the answer). Then, each measured
``--rounds`` times in this process's machine and the median taken:

- ``hermes --version``: Hermes' CLI start-up alone;
- ``hermes chat`` of a one-call run (the model answers at once): Hermes' start-up for a run, the yardstick;
- ``hermes-pipeline replay`` of the recorded run, offline (every LLM response and tool result served): the
  target is at most the yardstick + 50 ms per recorded step;
- ``hermes-pipeline replay --batch`` of ``--runs`` copies of the recording on the machine's cores, against the
  sum of as many single replays (the median of the single replays measured before and after the batch ×
  ``--runs``): the target is a wall time of at most 0.6 × that sum. The 1-minute load average is printed
  beside them: other processes on the machine change every figure.

Run: ``python bench/bench_replay.py`` (``--help``); the figures go into ``bench/RESULTS.md`` by hand.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hermes_pipeline.demo.model_script import parse_script  # noqa: E402
from hermes_pipeline.demo.model_server import ScriptedModelServer  # noqa: E402

HERMES = shutil.which("hermes")


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "OPENAI_", "OTEL_"))}
    env.update(HOME=str(home.parent / "user"), HERMES_HOME=str(home), NO_COLOR="1", HERMES_ACCEPT_HOOKS="1",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    return env


def _home(base: Path, server: ScriptedModelServer) -> Path:
    home = base / "hermes"
    for d in (home, base / "user", base / "work"):
        d.mkdir(parents=True, exist_ok=True)
    (base / "work" / "notes.txt").write_text("buy milk\n", encoding="utf-8")
    skill = home / "skills" / "notes-helper"
    skill.mkdir(parents=True, exist_ok=True)
    (skill / "SKILL.md").write_text("---\nname: notes-helper\ndescription: Read notes.txt.\n---\nRead it.\n",
                                    encoding="utf-8")
    (home / "config.yaml").write_text(textwrap.dedent(f"""\
        model: {{provider: custom, default: hermes-demo-1, base_url: "{server.base_url}", api_key: unused}}
        auxiliary: {{title_generation: {{enabled: false}}}}
        observability: {{trajectories: {{enabled: true}}}}
        plugins: {{enabled: [hermes_pipeline]}}
        """), encoding="utf-8")
    return home


def _timed(command: list[str], env: dict[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=900)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0,):
        raise SystemExit(f"{' '.join(command[:4])} exited {done.returncode}: {done.stderr[-800:]}")
    return elapsed


def _record(base: Path, steps: int) -> tuple[Path, Path, ScriptedModelServer]:
    work = base / "work"
    script: list[Any] = [{"tool_calls": [{"name": "read_file", "arguments": {"path": str(work / "notes.txt")},
                                          "id": f"call_{i}"}]} for i in range(steps - 1)]
    script.append("Your notes say: buy milk.")
    server = ScriptedModelServer(parse_script({"steps": script})[0])
    home = _home(base, server)
    _timed([HERMES or "hermes", "chat", "-Q", "-q", "What do my notes say?"], _env(home), work)
    (path,) = sorted((home / "trajectories").glob("*.json"))
    return home, path, server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=4, help="LLM calls of the recorded run (default 4)")
    parser.add_argument("--rounds", type=int, default=5, help="measurements of each single command (default 5)")
    parser.add_argument("--runs", type=int, default=50, help="recordings in the batch (default 50)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    if HERMES is None:
        print("hermes-agent is not installed: pip install 'hermes_pipeline[hermes]'", file=sys.stderr)
        return 2
    base = Path(tempfile.mkdtemp(prefix="bench-replay-"))
    try:
        home, path, server = _record(base / "rec", args.steps)
        server.close()
        out = base / "out"
        out.mkdir()
        replay = [sys.executable, "-m", "hermes_pipeline.cli.main", "replay"]
        env = _env(home)
        version, chat, single = [], [], []
        for round_ in range(args.rounds):  # interleaved, so that load on the machine touches all three alike
            version.append(_timed([HERMES, "--version"], env, base))
            yard = base / f"yard{round_}"
            with ScriptedModelServer(parse_script({"steps": ["ok"]})[0]) as one:
                chat.append(_timed([HERMES, "chat", "-Q", "-q", "hi"], _env(_home(yard, one)), yard / "work"))
            single.append(_timed([*replay, str(path), "--home", str(home), "--output", str(out / f"{round_}.json")],
                                 env, base))
        batch_dir = base / "batch"
        batch_dir.mkdir()
        for index in range(args.runs):
            shutil.copy(path, batch_dir / f"{index:03d}-{path.name}")
        workers = os.cpu_count() or 1
        load = [os.getloadavg()[0]]
        batch = _timed([*replay, "--batch", str(batch_dir), "--home", str(home), "--output", str(base / "bout"),
                        "--workers", str(workers)], env, base)
        load.append(os.getloadavg()[0])
        for round_ in range(args.rounds):  # single replays after the batch too: the sum is taken around it
            single.append(_timed([*replay, str(path), "--home", str(home), "--output",
                                  str(out / f"after{round_}.json")], env, base))
        load.append(os.getloadavg()[0])
        figures = {"steps": args.steps, "rounds": args.rounds, "runs": args.runs, "workers": workers,
                   "hermes_version_s": statistics.median(version), "hermes_chat_one_call_s": statistics.median(chat),
                   "replay_single_s": statistics.median(single),
                   "replay_budget_s": statistics.median(chat) + 0.05 * args.steps,
                   "batch_wall_s": batch, "sum_of_singles_s": statistics.median(single) * args.runs,
                   "load_average_1m": load}
        figures["replay_vs_budget"] = figures["replay_single_s"] / figures["replay_budget_s"]
        figures["batch_vs_sum"] = batch / figures["sum_of_singles_s"]
    finally:
        shutil.rmtree(base, ignore_errors=True)
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    print(f"recorded run: {args.steps} LLM calls; medians of {args.rounds} rounds; {workers} cores; load average "
          f"(1 min) before / after the batch / at the end: {' / '.join(f'{x:.1f}' for x in load)}")
    print(f"hermes --version                  {figures['hermes_version_s'] * 1000:8.0f} ms")
    print(f"hermes chat, one call (yardstick) {figures['hermes_chat_one_call_s'] * 1000:8.0f} ms")
    print(f"replay, offline                   {figures['replay_single_s'] * 1000:8.0f} ms   budget (yardstick + "
          f"50 ms x {args.steps}) {figures['replay_budget_s'] * 1000:.0f} ms -> {figures['replay_vs_budget']:.2f}x")
    print(f"batch of {args.runs} on {workers} workers      {batch:8.1f} s    sum of singles "
          f"{figures['sum_of_singles_s']:.1f} s -> {figures['batch_vs_sum']:.2f}x (target <= 0.60)")
    return 0


if __name__ == "__main__":
    from _results import run_with_results  # --write-results: the figures also go to bench/RESULTS.md

    raise SystemExit(run_with_results("bench_replay", main))
