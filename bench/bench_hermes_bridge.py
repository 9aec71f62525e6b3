"""Wall time of a real ``hermes chat -Q -q`` session with the Hermes bridge off and on (issue #12 target).

Each round runs one session per variant, in an order that alternates between rounds, so that load
changes on a shared machine hit every variant alike; the medians and their ratio to the baseline
are printed. Every session makes the same two model requests (a ``read_file`` tool call, then the
answer) against the project's streaming model server on 127.0.0.1, in its own Hermes profile under
a temporary directory (``HERMES_HOME`` and ``HOME`` there, nothing else contacted).

Variants:
1. ``off``: the bridge not enabled in ``config.yaml`` (Hermes as installed);
2. ``on, no pipeline``: the bridge enabled, ``HERMES_NEMO_RELAY_PLUGINS_TOML`` unset (it stays inert);
3. ``on, ATOF+ATIF``: the bridge enabled with a pipeline file writing ATOF and ATIF files;
4. ``on, ATOF+ATIF+OTLP``: the same plus OTLP/HTTP to the loopback receiver.

Target: variant 3 and 4 add at most 5 % to the median wall time of variant 1.
Run: ``python bench/bench_hermes_bridge.py`` (``--rounds N``, default 7; needs ``pip install '.[hermes]'``).

Three clocks per session. Hermes' exit is quantised: its terminal tool starts a cleanup thread at the
first tool call that sleeps in steps of one second, and an ``atexit`` handler joins it, so every
session's wall time from its first tool call to its exit is rounded up to a whole second (measured
with ``py-spy --idle``: 0.1 to 0.9 s of every session is that join, in every variant alike). That
makes the total wall time a noisy, stepped figure (about +-0.15 s on a median of 6 rounds, larger than
the 5 % budget). So the bench prints, beside it, the wall time until Hermes has printed its answer
(everything up to the exit: start-up, plugin loading, both model requests, the tool call and every
hook; the sessions run with ``PYTHONUNBUFFERED=1`` so the answer is seen when it is printed), and the
CPU time (user + system). The bridge's own exit work (closing the profile: the last ATIF file and
OTLP batch) runs in the exit phase, before Hermes' join, and is in the total and the CPU time.

Bytecode: the sessions inherit this environment. With ``PYTHONDONTWRITEBYTECODE`` set and the
package installed in editable mode, nothing caches hermes_pipeline's bytecode, so every enabled
session compiles the package's modules from source, which an ordinary installation does once.
``--bytecode-cache`` gives every session (all variants alike) a bytecode cache under the temporary
directory (``PYTHONPYCACHEPREFIX``), filled by the warm-up round; the figures say which was used.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hermes_pipeline.demo.otlp_receiver import OTLPReceiver  # noqa: E402

VARIANTS = ("off", "on, no pipeline", "on, ATOF+ATIF", "on, ATOF+ATIF+OTLP")


def _profile(root: Path, name: str, port: int, bridge: bool) -> Path:
    home = root / name
    home.mkdir(parents=True)
    enabled = "plugins:\n  enabled:\n    - hermes_pipeline\n" if bridge else "plugins:\n  enabled: []\n"
    (home / "config.yaml").write_text(textwrap.dedent(f"""\
        model:
          provider: custom
          default: hermes-demo-1
          base_url: http://127.0.0.1:{port}/v1
          api_key: unused
        auxiliary:
          title_generation:
            enabled: false
        """) + enabled, encoding="utf-8")
    return home


def _pipeline(root: Path, receiver: OTLPReceiver | None) -> Path:
    out = root / ("out-otlp" if receiver else "out")
    text = textwrap.dedent(f"""\
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
        """)
    if receiver is not None:
        text += textwrap.dedent(f"""\
            [components.config.opentelemetry]
            enabled = true
            [[components.config.opentelemetry.endpoints]]
            type = "gen_ai"
            endpoint = "{receiver.endpoint}/v1/traces"
            """)
    path = root / ("otlp.toml" if receiver else "files.toml")
    path.write_text(text, encoding="utf-8")
    return path


def _script(path: Path, notes: Path, sessions: int) -> None:
    lines = ["steps:"]
    for _ in range(sessions):
        lines.append(f"  - tool_calls: [{{name: read_file, arguments: {{path: {notes}}}}}]")
        lines.append('  - "Your notes say: buy milk."')
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _run(hermes: str, root: Path, home: Path, pipeline: Path | None, bytecode_cache: bool) -> tuple[float, float, float]:
    """Wall time, wall time until the answer was printed, and CPU time (user + system of the session's
    process and the children it waited for)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "OPENAI_", "OTEL_"))}
    env.update(HOME=str(root / "user"), HERMES_HOME=str(home), NO_COLOR="1", PYTHONUNBUFFERED="1")
    if bytecode_cache:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(root / "pycache")
    if pipeline is not None:
        env["HERMES_NEMO_RELAY_PLUGINS_TOML"] = str(pipeline)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    answered = 0.0
    out: list[str] = []
    with subprocess.Popen([hermes, "chat", "-Q", "-q", "What do my notes say?"], cwd=root / "work", env=env,
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        for line in proc.stdout:
            out.append(line)
            if not answered and "buy milk" in line:
                answered = time.perf_counter() - start
        err = proc.stderr.read()
        returncode = proc.wait(timeout=300)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if returncode != 0 or not answered:
        raise SystemExit(f"hermes failed ({returncode}): {''.join(out)[-500:]} {err[-1500:]}")
    return elapsed, answered, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="measured rounds (one session per variant each)")
    parser.add_argument("--bytecode-cache", action="store_true",
                        help="cache bytecode for the sessions under the temporary directory (see the docstring)")
    args = parser.parse_args()
    hermes = shutil.which("hermes")
    if hermes is None:
        print("skipped: the hermes command is not installed (pip install '.[hermes]')")
        return 0
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="bench-hermes-bridge-") as tmp, OTLPReceiver(discard=True) as receiver:
        root = Path(tmp)
        for sub in ("work", "user"):
            (root / sub).mkdir()
        notes = root / "work" / "notes.txt"
        notes.write_text("buy milk\n", encoding="utf-8")
        script = root / "script.yaml"
        _script(script, notes, (args.rounds + 1) * len(VARIANTS))
        server = subprocess.Popen([sys.executable, "-m", "hermes_pipeline.demo.model_server", "--script", str(script),
                                   "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            assert server.stdout is not None
            match = re.search(r"port (\d+)", server.stdout.readline())
            if match is None:
                raise SystemExit("the model server did not start")
            port = int(match.group(1))
            setups = {
                "off": (_profile(root, "off", port, bridge=False), None),
                "on, no pipeline": (_profile(root, "inert", port, bridge=True), None),
                "on, ATOF+ATIF": (_profile(root, "files", port, bridge=True), _pipeline(root, None)),
                "on, ATOF+ATIF+OTLP": (_profile(root, "otlp", port, bridge=True), _pipeline(root, receiver)),
            }
            times: dict[str, list[float]] = {v: [] for v in VARIANTS}
            answer: dict[str, list[float]] = {v: [] for v in VARIANTS}
            cpu: dict[str, list[float]] = {v: [] for v in VARIANTS}
            for rnd in range(args.rounds + 1):  # round 0 warms caches (page cache, bytecode if cached) and is not counted
                order = VARIANTS if rnd % 2 == 0 else tuple(reversed(VARIANTS))
                for variant in order:
                    home, pipeline = setups[variant]
                    elapsed, answered, used = _run(hermes, root, home, pipeline, args.bytecode_cache)
                    if rnd:
                        times[variant].append(elapsed)
                        answer[variant].append(answered)
                        cpu[variant].append(used)
        finally:
            server.terminate()
            server.wait(timeout=10)
    cached = "cached under the temporary directory" if args.bytecode_cache else (
        "not written (PYTHONDONTWRITEBYTECODE)" if os.environ.get("PYTHONDONTWRITEBYTECODE") else "as the environment does")
    load_after = os.getloadavg()
    print(f"hermes chat -Q -q, {args.rounds} interleaved rounds; bytecode {cached}")
    print(f"load average (1 min) {load_before[0]:.2f} before, {load_after[0]:.2f} after, on {os.cpu_count()} CPUs "
          "(other work on the machine makes every figure noisier)")
    for title, values in (("wall time per session (seconds; its exit is rounded up to a whole second, see the docstring)",
                           times),
                          ("wall time until the answer is printed (seconds; the session without Hermes' exit wait)", answer),
                          ("CPU time per session (seconds; steadier than wall time on a loaded machine)", cpu)):
        base = statistics.median(values["off"])
        print(title)
        print(f"{'variant':<22} {'median':>8} {'min':>8} {'max':>8} {'ratio':>7} {'added':>8} {'paired':>7}")
        for variant in VARIANTS:
            med = statistics.median(values[variant])
            print(f"{variant:<22} {med:8.3f} {min(values[variant]):8.3f} {max(values[variant]):8.3f} "
                  f"{med / base:7.3f} {1000 * (med - base):+7.0f}ms {_paired(values, variant):7.3f}")
    print("ratio: median over median of 'off'; paired: the median of the per-round ratios (each round runs every "
          "variant back to back, so a slow minute of the machine cancels out)")
    print(f"target: at most +5 % of the wall time ({1000 * 0.05 * statistics.median(times['off']):.0f} ms) "
          "for the enabled variants")
    for variant in VARIANTS[2:]:
        verdicts = []
        for name, values in (("wall", times), ("until the answer", answer), ("CPU", cpu)):
            ratio, paired = statistics.median(values[variant]) / statistics.median(values["off"]), _paired(values, variant)
            verdicts.append(f"{name} {ratio:.3f}x / paired {paired:.3f}x ({'OK' if max(ratio, paired) <= 1.05 else 'OVER'})")
        print(f"{variant}: {', '.join(verdicts)}")
    return 0


def _paired(values: dict[str, list[float]], variant: str) -> float:
    """The median of ``variant``'s per-round ratios to ``off`` of the same round."""
    return statistics.median(v / off for v, off in zip(values[variant], values["off"], strict=True))


if __name__ == "__main__":
    from _results import run_with_results  # --write-results: the figures also go to bench/RESULTS.md

    raise SystemExit(run_with_results("bench_hermes_bridge", main))
