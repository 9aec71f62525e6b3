"""Bytes written per LLM call by real ``hermes chat -Q -q`` sessions, before and after (issue #27 item 9).

Hermes sends its whole tool list (its real tool schemas, about 53 KB) and its system prompt with every
provider request. Before, the ATOF file and the trajectory store wrote them with every LLM call; then once
per session; now once per output directory, in its ``definitions/`` sidecar, content-addressed
(``hermes_pipeline/export/definition_files.py``), and every request refers to them by hash.

One run measures both variants: ``before`` runs the bridge from ``--ref`` (default ``1e1b745^1``, ``main``
before definitions were referenced by hash: the issue's "today"), exported with ``git archive`` into a
temporary directory and put first on ``PYTHONPATH``; ``after`` runs this checkout. Each variant runs, with the
installed ``hermes`` command, in a profile of its own under a temporary directory, against the project's
scripted model server on 127.0.0.1, with the bridge writing an ATOF file and exported ATIF files (pipeline
file) and the profile's trajectory store on (``observability.trajectories``):

1. a first one-shot session (one LLM call) in the fresh output directories: what the first session of a
   directory costs, sidecar included ("first session" rows);
2. then, in the same directories, the measured session: N model requests (N - 1 ``read_file`` calls, then
   the answer; N = 1, 3 and 12 by default). What it adds to the outputs, any sidecar file it adds included,
   divided by its LLM calls, is the "bytes per LLM call" the target is about.

Also printed: the uncompressed bytes of the session's full requests (as the provider received them, every
request written whole) per call, for scale. Target: ATOF and store bytes per LLM call at most a fifth of
before. :func:`run_session` is shared with ``tests/sinks/test_definition_bytes_hermes.py``.

Run: ``python bench/bench_bytes.py`` (``--ref REF`` for another baseline, ``--calls 1 3 12``; needs
``pip install '.[hermes]'``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import string
import subprocess
import sys
import tarfile
import tempfile
import textwrap
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_REF = "1e1b745^1"
PIPELINE = ROOT / "tests" / "data" / "pipelines" / "atof-atif-files.toml"
"""The pipeline file of the measured sessions (``${atof_directory}`` / ``${atif_directory}`` filled in)."""
QUESTION = "What do my notes say?"


def _export(ref: str, into: Path) -> Path:
    """``hermes_pipeline`` of ``ref`` extracted under ``into`` (the directory to put on ``PYTHONPATH``)."""
    archive = into / "src.tar"
    with archive.open("wb") as out:
        subprocess.run(["git", "-C", str(ROOT), "archive", ref, "hermes_pipeline"], stdout=out, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    archive.unlink()
    return into


def setup_profile(root: Path) -> dict[str, Path]:
    """A Hermes home with the bridge and the store on, a pipeline file writing ATOF and ATIF to ``root/out``,
    a work directory with a notes file. The model's address is filled in per session."""
    paths = {name: root / name for name in ("work", "user", "out", "home")}
    for path in paths.values():
        path.mkdir(parents=True, exist_ok=True)
    (paths["work"] / "notes.txt").write_text("buy milk\n", encoding="utf-8")
    paths["pipeline"] = root / "pipeline.toml"
    # the tests' pipeline file (ATOF events.jsonl, appended, and ATIF files, both to one directory)
    template = string.Template(PIPELINE.read_text(encoding="utf-8"))
    paths["pipeline"].write_text(template.substitute(atof_directory=paths["out"], atif_directory=paths["out"]),
                                 encoding="utf-8")
    paths["store"] = paths["home"] / "trajectories"
    return paths


def _config(home: Path, port: str) -> None:
    (home / "config.yaml").write_text(textwrap.dedent(f"""\
        model:
          provider: custom
          default: hermes-demo-1
          base_url: http://127.0.0.1:{port}/v1
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


def sizes(directory: Path) -> dict[str, int]:
    """Relative path → size of every file under ``directory``."""
    return {str(p.relative_to(directory)): p.stat().st_size for p in directory.rglob("*") if p.is_file()}


def grown(before: dict[str, int], after: dict[str, int], keep: Any = lambda name: True) -> int:
    """Bytes added between two :func:`sizes` snapshots (new files, and growth of existing ones)."""
    return sum(size - before.get(name, 0) for name, size in after.items() if keep(name))


def run_session(hermes: str, paths: dict[str, Path], source: Path, calls: int, tag: str) -> list[Any]:
    """One ``hermes chat -Q -q`` session of ``calls`` model requests with the bridge from ``source``; the
    request bodies the model server received (``--record``)."""
    notes = paths["work"] / "notes.txt"
    script = paths["work"].parent / f"script-{tag}.yaml"
    steps = [f"  - tool_calls: [{{name: read_file, arguments: {{path: {notes}}}}}]"] * (calls - 1)
    script.write_text("\n".join(["steps:", *steps, '  - "Your notes say: buy milk."']) + "\n", encoding="utf-8")
    record = script.with_suffix(".requests.json")
    server = subprocess.Popen([sys.executable, "-m", "hermes_pipeline.demo.model_server", "--script", str(script),
                               "--port", "0", "--record", str(record)], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert server.stdout is not None
        match = re.search(r"port (\d+)", server.stdout.readline())
        if match is None:
            raise RuntimeError("the model server did not start")
        _config(paths["home"], match.group(1))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "OPENAI_", "OTEL_"))}
        env.update(HOME=str(paths["user"]), HERMES_HOME=str(paths["home"]), NO_COLOR="1", HERMES_ACCEPT_HOOKS="1",
                   HERMES_NEMO_RELAY_PLUGINS_TOML=str(paths["pipeline"]), PYTHONPATH=str(source))
        proc = subprocess.run([hermes, "chat", "-Q", "-q", QUESTION], cwd=paths["work"], env=env,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
        if proc.returncode != 0 or "buy milk" not in proc.stdout:
            raise RuntimeError(f"hermes failed ({proc.returncode}): {proc.stdout[-500:]} {proc.stderr[-1500:]}")
    finally:
        server.terminate()
        server.wait(timeout=30)
    requests = json.loads(record.read_text(encoding="utf-8"))
    if len(requests) != calls:
        raise RuntimeError(f"the model server got {len(requests)} requests, not {calls}")
    return list(requests)


def _full_request_bytes(requests: list[Any]) -> int:
    """The requests' bytes as compact JSON: what writing each request whole costs."""
    return sum(len(json.dumps(r, ensure_ascii=False, separators=(",", ":")).encode()) for r in requests)


def measure(hermes: str, root: Path, source: Path, calls: int) -> dict[str, float]:
    """A first one-shot session in fresh directories, then the measured session of ``calls`` requests."""
    paths = setup_profile(root)
    out, store = paths["out"], paths["store"]
    run_session(hermes, paths, source, 1, "first")
    first_out, first_store = sizes(out), sizes(store)
    requests = run_session(hermes, paths, source, calls, "measured")
    then_out, then_store = sizes(out), sizes(store)
    lines = (out / "events.jsonl").read_bytes()[first_out.get("events.jsonl", 0):].decode().splitlines()
    starts = [json.loads(line) for line in lines if '"llm.call"' in line]
    llm_calls = sum(1 for e in starts if e.get("name") == "llm.call" and e.get("scope_category") == "start")
    if llm_calls != calls:
        raise RuntimeError(f"{llm_calls} llm.call starts recorded for {calls} requests")
    is_atof = lambda name: name == "events.jsonl" or name.startswith("definitions/")  # noqa: E731
    is_atif = lambda name: name.startswith("hermes-atif-")  # noqa: E731
    return {
        "llm_calls": llm_calls,
        "full_request_per_call": _full_request_bytes(requests) / calls,
        "atof_per_call": grown(first_out, then_out, is_atof) / calls,
        "store_per_call": grown(first_store, then_store) / calls,
        "atif_export_per_session": grown(first_out, then_out, is_atif),
        "first_atof": sum(s for n, s in first_out.items() if is_atof(n)),
        "first_store": sum(first_store.values()),
    }


ROWS = (("ATOF bytes per LLM call", "atof_per_call"),
        ("trajectory store bytes per LLM call", "store_per_call"),
        ("exported ATIF bytes per session", "atif_export_per_session"),
        ("first session in a fresh directory: ATOF", "first_atof"),
        ("first session in a fresh directory: store", "first_store"),
        ("full requests, uncompressed, per LLM call", "full_request_per_call"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ref", default=DEFAULT_REF, help=f"the baseline's git ref (default: {DEFAULT_REF})")
    parser.add_argument("--calls", type=int, nargs="+", default=[1, 3, 12],
                        help="model requests of the measured session, one session per value (default: 1 3 12)")
    args = parser.parse_args()
    hermes = shutil.which("hermes")
    if hermes is None:
        print("skipped: the hermes command is not installed (pip install '.[hermes]')")
        return 0
    with tempfile.TemporaryDirectory(prefix="bench-bytes-") as tmp:
        root = Path(tmp)
        (root / "before-src").mkdir()
        before_src = _export(args.ref, root / "before-src")
        runs = {calls: {"before": measure(hermes, root / f"before-{calls}", before_src, calls),
                        "after": measure(hermes, root / f"after-{calls}", ROOT, calls)} for calls in args.calls}
    met = True
    for calls, results in runs.items():
        print(f"\nhermes chat -q session of {calls} LLM call(s), after a first one-shot session in the same "
              f"directories (before = {args.ref}, after = this checkout)")
        print(f"{'':44} {'before':>10} {'after':>10} {'after/before':>13}")
        for label, key in ROWS:
            before, after = results["before"][key], results["after"][key]
            print(f"{label:44} {before:10.0f} {after:10.0f} {after / before if before else 0:13.3f}")
        for key in ("atof_per_call", "store_per_call"):
            met = met and results["after"][key] <= results["before"][key] / 5
    print(f"\ntarget (ATOF and store bytes per LLM call at most 1/5 of before, every session): "
          f"{'met' if met else 'NOT met'}")
    return 0


if __name__ == "__main__":
    from _results import run_with_results  # --write-results: the figures also go to bench/RESULTS.md

    raise SystemExit(run_with_results("bench_bytes", main))
