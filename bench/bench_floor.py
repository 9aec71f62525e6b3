"""The floor of the exporter path, obligation by obligation (issue #13's all-CPU target).

``bench_exporters.py`` prints two floors: the smallest code that writes the engine's ATOF lines and
ATIF files, and the same code with the engine's obligations added. This script adds the obligations
one at a time, in one process, rounds interleaved (a shared machine's load hits every case alike), so
each one's price is measured rather than estimated:

- ``floor``: the lines and documents written inline on the caller's thread (``_floor.py``);
- ``+ writer thread``: the events appended to a queue that one writer thread drains (encoding and ATIF
  assembly move there);
- ``+ hook call``: every scope event through one pluggy hook call on its way to that queue;
- ``+ scrubber``: the engine's credential scrubber over every event before both outputs;
- ``+ FMT-52 files``: each ATIF file written as FMT-52 says (a temporary file, ``fsync``, rename over the target:
  the obliged floor of ``bench_exporters.py``);
- ``hermes ATOF + ATIF``: the shipped engine with its default ATOF + ATIF sinks, for comparison.

The workload is ``bench_exporters.py``'s (sessions x turns x one LLM call + K tool calls). Figures:
all-CPU (``time.process_time()``, every thread) per tool call, median over rounds, and one pluggy hook
call's thread CPU in the same run as the yardstick. Run: ``python bench/bench_floor.py`` (``--help``).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_exporters as bench  # noqa: E402
from _floor import floor_run  # noqa: E402
from _receiver import Receiver, ReceiverProcess  # noqa: E402
from _timing import per_call_thread_ns, pluggy_reference  # noqa: E402


CASES: tuple[tuple[str, tuple[str, ...] | None], ...] = (
    ("floor", ()),
    ("+ writer thread", ("thread",)),
    ("+ hook call", ("thread", "hook")),
    ("+ scrubber", ("thread", "hook", "scrub")),
    ("+ FMT-52 files (obliged floor)", ("thread", "hook", "scrub", "durable")),
    ("hermes ATOF + ATIF", None),
)


def _floor(w: bench.Workload, obligations: tuple[str, ...]) -> Callable[[Path, Receiver], None]:
    def run(directory: Path, receiver: Receiver) -> None:
        floor_run(w.sessions, w.turns, w.tools, directory, bench.REQUEST, w.response(), bench.USER, bench.ARGS,
                  bench.read_file, lambda fn: fn(), obligations=obligations)
    return run


def _hermes(w: bench.Workload) -> Callable[[Path, Receiver], None]:
    def run(directory: Path, receiver: Receiver) -> None:
        bench.hermes_run(w, directory, receiver, exporters=True, otlp=False)
    return run


def measure(w: bench.Workload, rounds: int) -> tuple[dict[str, float], float]:
    """Median all-CPU microseconds per tool call of each case, and one pluggy call's thread-CPU microseconds."""
    cases = [(name, _hermes(w) if parts is None else _floor(w, parts)) for name, parts in CASES]
    cpu: dict[str, list[float]] = {name: [] for name, _ in cases}
    stick: list[float] = []
    reference = pluggy_reference()
    root = Path(tempfile.mkdtemp(prefix="bench-floor-"))
    try:
        with ReceiverProcess() as receiver:
            for r in range(rounds + 1):  # round 0 warms up
                for i in range(len(cases)):
                    name, run = cases[(i + r) % len(cases)]
                    directory = root / f"{r}-{i}"
                    directory.mkdir()
                    t = time.process_time()
                    run(directory, receiver)
                    spent = time.process_time() - t
                    lines, files = bench.count_outputs(directory)
                    if (lines, files) != (w.events(), w.sessions):
                        raise SystemExit(f"{name}: {lines}/{w.events()} ATOF lines, {files}/{w.sessions} ATIF files")
                    shutil.rmtree(directory)
                    if r:
                        cpu[name].append(spent / w.tool_calls * 1e6)
                if r:
                    stick.append(per_call_thread_ns(reference, inner=500, rounds=11) / 1e3)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return {name: statistics.median(v) for name, v in cpu.items()}, statistics.median(stick)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=20, help="sessions per run (default 20; many more outrun the engine's bounded queues, which then drop by design, and the run stops with the count)")
    parser.add_argument("--turns", type=int, default=10, help="turns per session (default 10)")
    parser.add_argument("--tools", type=int, default=10, help="tool calls per turn (default 10)")
    parser.add_argument("--rounds", type=int, default=21, help="interleaved rounds, medians (default 21)")
    args = parser.parse_args(argv)
    w = bench.Workload(args.sessions, args.turns, args.tools)
    medians, stick = measure(w, args.rounds)
    print(f"workload: {args.sessions} sessions x {args.turns} turns x (1 LLM call + {args.tools} tool calls) = "
          f"{w.tool_calls:,} tool calls, {w.events():,} ATOF events; {args.rounds} interleaved rounds, medians")
    print(f"{'case':<30} {'all-CPU us/tool call':>21} {'step us':>8} {'pluggy calls':>13}")
    before = None
    for name, _ in CASES:
        value = medians[name]
        step = "" if before is None or name.startswith("hermes") else f"{value - before:+.1f}"
        print(f"{name:<30} {value:>21.1f} {step:>8} {value / stick:>13.1f}")
        before = value
    obliged = medians["+ FMT-52 files (obliged floor)"]
    print(f"one pluggy hook call: {stick:.2f} us of thread CPU in this run")
    print(f"target <= 20 us all-CPU per tool call: the obliged floor is {obliged:.1f} us "
          f"({'under' if obliged <= 20 else 'over'} it); hermes / obliged floor "
          f"{medians['hermes ATOF + ATIF'] / obliged:.2f}x")
    return 0


if __name__ == "__main__":
    from _results import run_with_results  # --write-results: the figures also go to bench/RESULTS.md

    raise SystemExit(run_with_results("bench_floor", main))
