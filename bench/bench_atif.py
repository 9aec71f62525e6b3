"""Caller-thread cost of ATOF + ATIF sharing one scope plugin, per tool call (issue #4).

Rows (medians in ns per ``Turn.call_tool``; ratio and added ns against the first row), measured side
by side in one process:

1. ``call_tool`` with no plugins;
1b. one no-op hookimpl plugin on ``pre_tool_call`` + ``post_tool_call`` (the engine's own dispatch of
    the two hooks the scope plugin needs: a floor no exporter can go under);
2. ATOF only: a deferred ``ScopePlugin`` with the ATOF file sink as listener;
3. ATOF + ATIF on ONE deferred ``ScopePlugin`` (JSONL file + trajectory directory): the target row;
4. the same with ``deferred=False`` (scope plugin and both listeners on the caller's thread), for scale.

Each round opens a fresh session and turn (untimed), times ``--inner`` tool calls, then ends the turn
and session and waits for the exporters (untimed), so trajectories are written between rounds and
the ATIF assembler does not accumulate events across rounds. Two columns: wall clock, and the caller
thread's CPU time (``time.thread_time_ns``: the work done on the caller's thread itself; wall clock
also contains time spent waiting for the GIL while the writer threads encode and build documents).

Then the end-to-end rate: one session with ``--e2e`` tool calls, closed, flushed: events per second
through ATOF and the time ATIF takes to build and write that trajectory.

Target (issue #4): ATOF + ATIF together ≤ 10 µs median added per tool call on the caller's thread.
Run: ``python bench/bench_atif.py`` (``--quick`` for a short run).
"""

from __future__ import annotations

import argparse
import gc
import logging
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _timing import table  # noqa: E402
from bench_atof import NoOpToolHooks  # noqa: E402

from hermes_pipeline import Engine, Host  # noqa: E402
from hermes_pipeline.export import ScopePlugin  # noqa: E402
from hermes_pipeline.sinks.atif import AtifSink, build_atif_sink  # noqa: E402
from hermes_pipeline.sinks.atof import AtofSink, build_atof_sink  # noqa: E402

ARGS = {"path": "notes.txt"}


def read_file(path: str) -> str:
    return "contents"


class Case:
    """One row: an engine with its exporters, and how to wait for them between rounds."""

    def __init__(self, name: str, directory: Path | None, *, atif: bool = False, deferred: bool = True,
                 noop: bool = False) -> None:
        self.name = name
        self.engine = Engine()
        if noop:
            self.engine.add_plugin(NoOpToolHooks(), name="noop")
        self.sinks: list[AtofSink | AtifSink] = []
        self.scopes: ScopePlugin | None = None
        if directory is not None:
            self.scopes = ScopePlugin(deferred=deferred, max_queue_size=10_000_000)
            self.engine.add_plugin(self.scopes, name="scopes")
            self.sinks.append(build_atof_sink({"enabled": True, "sinks": [{
                "type": "file", "output_directory": str(directory), "filename": "bench.jsonl", "mode": "overwrite",
                "max_queue_size": 10_000_000}]}))
            if atif:
                self.sinks.append(build_atif_sink({"enabled": True, "output_directory": str(directory / "atif"),
                                                   "max_queue_size": 10_000_000}))
            for sink in self.sinks:
                self.scopes.add_listener(sink)
        self.host = Host(self.engine, model="bench-model", provider="bench")

    def settle(self) -> None:
        if self.scopes is not None:
            self.scopes.flush(300.0)
        for sink in self.sinks:
            sink.flush(300.0)

    def round(self, inner: int, clock: Callable[[], int]) -> float:
        """Mean ns per call of ``inner`` tool calls in a fresh session (setup and teardown untimed)."""
        session = self.host.session()
        turn = session.turn("bench")
        call = turn.call_tool
        for _ in range(inner // 10):  # warm-up inside the round
            call("read_file", ARGS, read_file, tool_call_id="call_1")
        start = clock()
        for _ in range(inner):
            call("read_file", ARGS, read_file, tool_call_id="call_1")
        elapsed = clock() - start
        turn.complete("done")
        turn.end()
        session.finalize()
        self.settle()
        return elapsed / inner

    def close(self) -> None:
        if self.scopes is not None:
            self.scopes.shutdown(300.0)
        for sink in self.sinks:
            sink.shutdown(300.0)


def measure(cases: list[Case], *, inner: int, rounds: int, cycles: int) -> dict[str, tuple[float, float]]:
    """Best-of-``cycles`` median of ``rounds`` rounds per case, wall and caller-CPU, rows interleaved."""
    best = {case.name: (float("inf"), float("inf")) for case in cases}
    for _ in range(cycles):
        for case in cases:
            gc.collect()
            gc.disable()
            try:
                wall = statistics.median(case.round(inner, time.perf_counter_ns) for _ in range(rounds))
                cpu = statistics.median(case.round(inner, time.thread_time_ns) for _ in range(rounds))
            finally:
                gc.enable()
            best[case.name] = (min(best[case.name][0], wall), min(best[case.name][1], cpu))
    return best


def end_to_end(directory: Path, calls: int) -> dict[str, Any]:
    case = Case("e2e", directory, atif=True)
    session = case.host.session()
    turn = session.turn("bench")
    start = time.perf_counter()
    for index in range(calls):
        turn.call_tool("read_file", ARGS, read_file, tool_call_id=f"call_{index}")
    turn.complete("done")
    turn.end()
    session.finalize()
    case.settle()
    elapsed = time.perf_counter() - start
    atof, atif = case.sinks
    assert isinstance(atof, AtofSink) and isinstance(atif, AtifSink)
    written = atof.stats()["sinks"][0]["written"]
    trajectories = atif.stats()["trajectories"]["trajectories_written"]
    case.close()
    return {"elapsed": elapsed, "events": written, "trajectories": trajectories}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer rounds (noisier)")
    parser.add_argument("--inner", type=int, default=2000, help="tool calls per timed round")
    parser.add_argument("--e2e", type=int, default=20_000, help="tool calls of the end-to-end session")
    args = parser.parse_args(argv)
    rounds, cycles = (5, 1) if args.quick else (11, 3)
    logging.getLogger("hermes_pipeline").setLevel(logging.ERROR)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        cases = [Case("call_tool, no plugins", None),
                 Case("call_tool, no-op pre/post_tool_call hookimpls", None, noop=True),
                 Case("call_tool, ATOF (deferred scope plugin)", root / "atof"),
                 Case("call_tool, ATOF + ATIF on one deferred scope plugin", root / "both", atif=True),
                 Case("call_tool, ATOF + ATIF, inline scope plugin", root / "inline", atif=True, deferred=False)]
        best = measure(cases, inner=args.inner, rounds=rounds, cycles=cycles)
        for case in cases:
            case.close()
        wall = [(name, values[0]) for name, values in best.items()]
        cpu = [(name, values[1]) for name, values in best.items()]
        print("wall clock on the caller (includes waiting for the GIL while writer threads work):")
        print(table(wall))
        print("\ncaller thread CPU time (work done on the caller's thread itself):")
        print(table(cpu))
        added = cpu[3][1] - cpu[0][1]
        print(f"\nATOF + ATIF add {added:.0f} ns of caller-thread CPU per tool call "
              f"(median; target <= 10000 ns): {'OK' if added <= 10_000 else 'OVER TARGET'}; "
              f"{cpu[3][1] - cpu[1][1]:.0f} ns over the engine's own dispatch of the two hooks; "
              f"ATIF's share (ATOF + ATIF minus ATOF alone): {cpu[3][1] - cpu[2][1]:.0f} ns")
        calls = 2_000 if args.quick else args.e2e
        result = end_to_end(root / "e2e", calls)
        print(f"end to end: {calls} tool calls -> {result['events']} ATOF events and {result['trajectories']} "
              f"ATIF trajectory written in {result['elapsed']:.3f} s including flush "
              f"({result['events'] / result['elapsed']:,.0f} events/s)")
    return 0


if __name__ == "__main__":
    from _results import run_with_results  # --write-results: the figures also go to bench/RESULTS.md

    raise SystemExit(run_with_results("bench_atif", main))
