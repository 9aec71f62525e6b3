"""Bytes written per LLM call by a real ``hermes chat -Q -q`` session, before and after (issue #27 item 9).

Hermes sends its whole tool list (its real tool schemas) and its system prompt with every provider
request. Before, the ATOF file and the trajectory store wrote them with every LLM call; now each is
written once per session and referred to by hash (``hermes_pipeline/export/definitions.py``).

One run measures both: the ``before`` variant runs the bridge from ``git main`` (exported with
``git archive`` into a temporary directory and put first on ``PYTHONPATH``), the ``after`` variant
runs this checkout. Each variant runs the same session with the installed ``hermes`` command in its
own profile under a temporary directory, against the project's scripted model server on 127.0.0.1:
N model requests (N - 1 ``read_file`` calls, then the answer; N = 3 and 12 by default), with the bridge writing an ATOF file
and ATIF files (pipeline file) and the profile's trajectory store on (``observability.trajectories``).

Printed per variant: ATOF bytes per LLM call (the file's bytes / its ``llm.call`` starts), the size of
an ``llm.call`` start line after the session's first (what each further call costs), exported
ATIF bytes per session, trajectory-store bytes per stored trajectory, and the after/before ratios.
Target: ATOF bytes per LLM call at most a fifth of before.

Run: ``python bench/bench_bytes.py`` (``--ref REF`` for another baseline; needs ``pip install '.[hermes]'``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _export(ref: str, into: Path) -> Path:
    """``hermes_pipeline`` of ``ref`` extracted under ``into`` (the directory to put on ``PYTHONPATH``)."""
    archive = into / "src.tar"
    with archive.open("wb") as out:
        subprocess.run(["git", "-C", str(ROOT), "archive", ref, "hermes_pipeline"], stdout=out, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    archive.unlink()
    return into


def _session(hermes: str, root: Path, source: Path, calls: int) -> dict[str, float]:
    """Run one session of ``calls`` model requests with the bridge from ``source``; the byte counts of
    what it wrote."""
    notes = root / "work" / "notes.txt"
    for sub in ("work", "user", "out"):
        (root / sub).mkdir(parents=True)
    notes.write_text("buy milk\n", encoding="utf-8")
    script = root / "script.yaml"
    steps = [f"  - tool_calls: [{{name: read_file, arguments: {{path: {notes}}}}}]"] * (calls - 1)
    script.write_text("\n".join(["steps:", *steps, '  - "Your notes say: buy milk."']) + "\n", encoding="utf-8")
    server = subprocess.Popen([sys.executable, "-m", "hermes_pipeline.demo.model_server", "--script", str(script),
                               "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert server.stdout is not None
        match = re.search(r"port (\d+)", server.stdout.readline())
        if match is None:
            raise SystemExit("the model server did not start")
        home = root / "home"
        home.mkdir()
        (home / "config.yaml").write_text(textwrap.dedent(f"""\
            model:
              provider: custom
              default: hermes-demo-1
              base_url: http://127.0.0.1:{match.group(1)}/v1
              api_key: unused
            auxiliary:
              title_generation:
                enabled: false
            observability:
              trajectories:
                enabled: true
            plugins:
              enabled:
                - hermes_pipeline
            """), encoding="utf-8")
        out = root / "out"
        pipeline = root / "pipeline.toml"
        pipeline.write_text(textwrap.dedent(f"""\
            version = 1
            [[components]]
            kind = "observability"
            [components.config]
            version = 4
            [components.config.atof]
            enabled = true
            [[components.config.atof.sinks]]
            type = "file"
            output_directory = "{out}"
            filename = "events.jsonl"
            mode = "append"
            [components.config.atif]
            enabled = true
            output_directory = "{out}"
            """), encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "OPENAI_", "OTEL_"))}
        env.update(HOME=str(root / "user"), HERMES_HOME=str(home), NO_COLOR="1", HERMES_ACCEPT_HOOKS="1",
                   HERMES_NEMO_RELAY_PLUGINS_TOML=str(pipeline), PYTHONPATH=str(source))
        proc = subprocess.run([hermes, "chat", "-Q", "-q", "What do my notes say?"], cwd=root / "work", env=env,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
        if proc.returncode != 0 or "buy milk" not in proc.stdout:
            raise SystemExit(f"hermes failed ({proc.returncode}): {proc.stdout[-500:]} {proc.stderr[-1500:]}")
    finally:
        server.terminate()
        server.wait(timeout=10)
    events = out / "events.jsonl"
    lines = [json.loads(line) for line in events.read_text(encoding="utf-8").splitlines() if line.strip()]
    starts = [len(json.dumps(e)) for e in lines if e.get("name") == "llm.call" and e.get("scope_category") == "start"]
    calls = len(starts)
    exported = sorted(out.glob("*.json"))
    stored = sorted((home / "trajectories").rglob("*.json"))
    if not calls or not exported or not stored:
        raise SystemExit(f"nothing recorded: {calls} LLM calls, {len(exported)} ATIF files, {len(stored)} stored")
    return {"llm_calls": calls, "atof_per_call": events.stat().st_size / calls,
            "start_after_first": sum(starts[1:]) / max(len(starts) - 1, 1),
            "atif_per_session": sum(p.stat().st_size for p in exported) / len(exported),
            "store_per_trajectory": sum(p.stat().st_size for p in stored) / len(stored),
            "store_per_call": sum(p.stat().st_size for p in stored) / calls}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ref", default="main", help="the baseline's git ref (default: main)")
    parser.add_argument("--calls", type=int, nargs="+", default=[3, 12],
                        help="model requests per session, one session per value (default: 3 12)")
    args = parser.parse_args()
    hermes = shutil.which("hermes")
    if hermes is None:
        print("skipped: the hermes command is not installed (pip install '.[hermes]')")
        return 0
    with tempfile.TemporaryDirectory(prefix="bench-bytes-") as tmp:
        root = Path(tmp)
        (root / "before-src").mkdir()
        before_src = _export(args.ref, root / "before-src")
        runs = {calls: {"before": _session(hermes, root / f"before-{calls}", before_src, calls),
                        "after": _session(hermes, root / f"after-{calls}", ROOT, calls)} for calls in args.calls}
    rows = [("ATOF bytes per LLM call", "atof_per_call"),
            ("ATOF llm.call start, 2nd call onwards", "start_after_first"),
            ("exported ATIF bytes per session", "atif_per_session"),
            ("trajectory store bytes per trajectory", "store_per_trajectory"),
            ("trajectory store bytes per LLM call", "store_per_call")]
    for calls, results in runs.items():
        print(f"\none hermes chat -q session, {int(results['after']['llm_calls'])} LLM calls "
              f"(before = {args.ref}, after = this checkout)")
        print(f"{'':40} {'before':>10} {'after':>10} {'after/before':>13}")
        for label, key in rows:
            before, after = results["before"][key], results["after"][key]
            print(f"{label:40} {before:10.0f} {after:10.0f} {after / before:13.3f}")
        ratio = results["after"]["atof_per_call"] / results["before"]["atof_per_call"]
        print(f"target (ATOF bytes per LLM call at most 1/5 of before): {'met' if ratio <= 0.2 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    from _results import run_with_results  # --write-results: the figures also go to bench/RESULTS.md

    raise SystemExit(run_with_results("bench_bytes", main))
