"""Cost of the ATOF exporter on the caller's thread, and its end-to-end throughput (issue #4).

Rows (medians in ns per ``Turn.call_tool``, ratios and added ns against the first row), measured
side by side in one process, twice: wall clock (``per_call_ns``) and the caller thread's CPU time
(the writer thread competes for the GIL, so wall clock also contains its encoding work):

1. ``call_tool`` with no plugins;
2. with one no-op hookimpl plugin on ``pre_tool_call`` + ``post_tool_call`` (the engine's own
   dispatch cost for the two hooks the scope plugin needs);
3. with the ATOF plugin (deferred scope plugin + one file sink): the hook callbacks only
   enqueue; the scope kinds and encoding run on the publication and writer threads;
4. the same with ``deferred=False``: the scope plugin runs on the caller's thread;
5. the ATOF plugin with queues of size 1 (almost every record is dropped and counted).

Then the end-to-end rate: tool calls through the host with the file sink, including the final
``flush()``, in events per second.

Target (issue #4): ATOF + ATIF together ≤ 10 µs median added per tool call on the caller's thread.
Run: ``python bench/bench_atof.py`` (``--quick`` for a short run).
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _timing import per_call_ns, per_call_thread_ns, table  # noqa: E402

from hermes_pipeline import Engine, Host, hookimpl  # noqa: E402
from hermes_pipeline.sinks.atof import AtofPlugin, build_atof_plugin  # noqa: E402

ARGS = {"path": "notes.txt"}


def read_file(path: str) -> str:
    return "contents"


class NoOpToolHooks:
    @hookimpl
    def pre_tool_call(self, tool_name: str, args: dict[str, Any], session_id: str, tool_call_id: str) -> None:
        return None

    @hookimpl
    def post_tool_call(self, tool_name: str, session_id: str, tool_call_id: str, result: str, status: str) -> None:
        return None


def tool_call(engine: Engine) -> Any:
    host = Host(engine, model="bench-model", provider="bench")
    session = host.session("bench-session")
    turn = session.turn("bench")
    return lambda: turn.call_tool("read_file", ARGS, read_file, tool_call_id="call_1")


def atof_plugin(directory: str, max_queue_size: int = 100_000, *, deferred: bool = True) -> AtofPlugin:
    return build_atof_plugin({"enabled": True, "sinks": [
        {"type": "file", "output_directory": directory, "filename": "bench.jsonl", "mode": "overwrite",
         "max_queue_size": max_queue_size}]}, deferred=deferred)


def end_to_end(directory: str, calls: int) -> tuple[float, int]:
    engine = Engine()
    plugin = atof_plugin(directory, max_queue_size=2 * calls + 10)
    engine.add_plugin(plugin, name="atof")
    fn = tool_call(engine)
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    assert plugin.flush(60.0)
    elapsed = time.perf_counter() - start
    written = plugin.stats()["sinks"][0]["written"]
    plugin.shutdown()
    return elapsed, written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer rounds (noisier)")
    args = parser.parse_args(argv)
    rounds = 7 if args.quick else 15
    logging.getLogger("hermes_pipeline").setLevel(logging.ERROR)  # row 4 drops on purpose
    with tempfile.TemporaryDirectory() as directory:
        plain = tool_call(Engine())
        noop = Engine()
        noop.add_plugin(NoOpToolHooks(), name="noop")
        noop_call = tool_call(noop)
        engine = Engine()
        plugin = atof_plugin(directory, max_queue_size=10_000_000)
        engine.add_plugin(plugin, name="atof")
        atof_call = tool_call(engine)
        inline_engine = Engine()
        inline = atof_plugin(directory + "/inline", max_queue_size=10_000_000, deferred=False)
        inline_engine.add_plugin(inline, name="atof")
        inline_call = tool_call(inline_engine)
        full = Engine()
        saturated = atof_plugin(directory + "/saturated", max_queue_size=1)
        full.add_plugin(saturated, name="atof")
        saturated_call = tool_call(full)
        cases = [("call_tool, no plugins", plain), ("call_tool, no-op pre/post_tool_call hookimpls", noop_call),
                 ("call_tool, ATOF (deferred scope plugin) + file sink", atof_call),
                 ("call_tool, ATOF (inline scope plugin) + file sink", inline_call),
                 ("call_tool, ATOF, queues full (drops)", saturated_call)]
        cycles = 1 if args.quick else 4
        best_wall = {name: float("inf") for name, _ in cases}
        best_cpu = dict(best_wall)
        for _ in range(cycles):  # rows interleaved; the best median of each row (load on shared machines)
            for name, fn in cases:
                best_wall[name] = min(best_wall[name], per_call_ns(fn, rounds=rounds))
                best_cpu[name] = min(best_cpu[name], per_call_thread_ns(fn, rounds=rounds))
                plugin.flush(120.0)  # the next row starts with idle background threads
                inline.flush(120.0)
        wall = list(best_wall.items())
        cpu = list(best_cpu.items())
        print("wall clock on the caller (includes waiting for the GIL while the writer encodes):")
        print(table(wall))
        print("\ncaller thread CPU time (work done on the caller's thread itself):")
        print(table(cpu))
        plugin.shutdown(120.0)
        inline.shutdown(120.0)
        saturated.shutdown(5.0)
        added = cpu[2][1] - cpu[0][1]
        scope_cost = cpu[2][1] - cpu[1][1]
        print(f"\nATOF adds {added:.0f} ns of caller-thread CPU per tool call "
              f"({scope_cost:.0f} ns over the engine's own dispatch of the two hooks).")
        calls = 5_000 if args.quick else 50_000
        elapsed, written = end_to_end(directory + "/e2e", calls)
        print(f"end to end: {calls} tool calls -> {written} events written in {elapsed:.3f} s including flush: "
              f"{written / elapsed:,.0f} events/s")
    return 0


if __name__ == "__main__":
    from _results import run_with_results  # --write-results: the figures also go to bench/RESULTS.md

    raise SystemExit(run_with_results("bench_atof", main))
