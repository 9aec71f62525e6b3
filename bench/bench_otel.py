"""Cost of the OpenTelemetry sink on the caller's thread, and its end-to-end span throughput (issue #4).

Rows (medians in ns per ``Turn.call_tool``, ratios and added ns against the first row), measured
side by side in one process, twice: wall clock (``per_call_ns``) and the caller thread's CPU time
(the sink's threads compete for the GIL, so wall clock also contains some of their work):

1. ``call_tool`` with no plugins;
2. with a deferred ``ScopePlugin`` and no listener (the shared scope plugin's hook cost: enqueue only);
3. with the OTel sink (``gen_ai``) as a listener of that ``ScopePlugin``, exporting through the real
   ``OTLPSpanExporter`` to a loopback ``OTLPReceiver(discard=True)``: the hooks only enqueue; the
   scope plugin (publication thread), span building and OTLP export (sink threads) run elsewhere;
4. the same with a ``full`` endpoint added (two projections, two exporters): the caller's cost
   must not grow with the number of endpoints.

Then the end-to-end rate: tool calls through the host with the sink, including the final
``flush()``, in spans per second delivered to the receiver.

Run: ``python bench/bench_otel.py`` (``--quick`` for a short run).
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _timing import per_call_ns, per_call_thread_ns, table  # noqa: E402

from hermes_pipeline import Engine, Host  # noqa: E402
from hermes_pipeline.demo.otlp_receiver import OTLPReceiver  # noqa: E402
from hermes_pipeline.export import ScopePlugin  # noqa: E402
from hermes_pipeline.sinks.otel import OtelSink, build_otel_sink  # noqa: E402

ARGS = {"path": "notes.txt"}
QUEUE = 10_000_000


def read_file(path: str) -> str:
    return "contents"


def tool_call(engine: Engine) -> Any:
    host = Host(engine, model="bench-model", provider="bench")
    session = host.session("bench-session")
    turn = session.turn("bench")
    return lambda: turn.call_tool("read_file", ARGS, read_file, tool_call_id="call_1")


def otel_sink(endpoint: str, *, full: bool = False) -> OtelSink:
    entries = [{"type": "gen_ai", "endpoint": endpoint, "max_queue_size": QUEUE, "scheduled_delay_millis": 200}]
    if full:
        entries.append({"type": "full", "endpoint": endpoint + "/full/v1/traces", "max_queue_size": QUEUE,
                        "scheduled_delay_millis": 200})
    return build_otel_sink({"enabled": True, "endpoints": entries})


def scope_plugin(*listeners: Any) -> tuple[Engine, ScopePlugin]:
    engine = Engine()
    plugin = ScopePlugin(tuple(listeners), deferred=True, max_queue_size=QUEUE)
    engine.add_plugin(plugin, name="scopes")
    return engine, plugin


def end_to_end(endpoint: str, receiver: OTLPReceiver, calls: int) -> tuple[float, int]:
    sink = otel_sink(endpoint)
    engine, plugin = scope_plugin(sink)
    fn = tool_call(engine)
    before = receiver.bytes_received
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    assert plugin.flush(120.0) and sink.flush(120.0)
    elapsed = time.perf_counter() - start
    exported = sink.stats()["exported"]
    assert receiver.bytes_received > before
    plugin.shutdown(10.0)
    sink.shutdown(10.0)
    return elapsed, exported


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer rounds (noisier)")
    args = parser.parse_args(argv)
    rounds = 7 if args.quick else 15
    logging.getLogger("hermes_pipeline").setLevel(logging.ERROR)
    with OTLPReceiver(discard=True) as receiver:
        plain = tool_call(Engine())
        bare_engine, bare = scope_plugin()
        bare_call = tool_call(bare_engine)
        sink = otel_sink(receiver.endpoint)
        otel_engine, otel_scope_plugin = scope_plugin(sink)
        otel_call = tool_call(otel_engine)
        sink2 = otel_sink(receiver.endpoint, full=True)
        two_engine, two_scope_plugin = scope_plugin(sink2)
        two_call = tool_call(two_engine)
        cases = [("call_tool, no plugins", plain), ("call_tool, ScopePlugin (deferred), no listener", bare_call),
                 ("call_tool, ScopePlugin + OTel sink (gen_ai → OTLP/HTTP)", otel_call),
                 ("call_tool, ScopePlugin + OTel sink (gen_ai + full)", two_call)]
        drains = [(bare, None), (otel_scope_plugin, sink), (two_scope_plugin, sink2)]
        cycles = 1 if args.quick else 3
        best_wall = {name: float("inf") for name, _ in cases}
        best_cpu = dict(best_wall)
        for _ in range(cycles):  # rows interleaved; the best median of each row (load on shared machines)
            for name, fn in cases:
                best_wall[name] = min(best_wall[name], per_call_ns(fn, rounds=rounds))
                best_cpu[name] = min(best_cpu[name], per_call_thread_ns(fn, rounds=rounds))
                for scope_plugin, otel in drains:  # the next row starts with idle background threads
                    scope_plugin.flush(300.0)
                    if otel is not None:
                        otel.flush(300.0)
        wall = list(best_wall.items())
        cpu = list(best_cpu.items())
        print("wall clock on the caller (includes waiting for the GIL while the sink's threads work):")
        print(table(wall))
        print("\ncaller thread CPU time (work done on the caller's thread itself):")
        print(table(cpu))
        print(f"\nOTel sink adds {cpu[2][1] - cpu[0][1]:.0f} ns of caller-thread CPU per tool call over no plugins "
              f"({cpu[2][1] - cpu[1][1]:.0f} ns over the bare deferred scope plugin).")
        exported = sink.stats()["exported"] + sink2.stats()["exported"]
        dropped = sink.stats()["dropped"] + sink2.stats()["dropped"]
        print(f"spans exported during the rows: {exported:,} (dropped {dropped})")
        for scope_plugin, otel in drains:
            scope_plugin.shutdown(60.0)
            if otel is not None:
                otel.shutdown(60.0)
        calls = 2_000 if args.quick else 20_000
        elapsed, spans = end_to_end(receiver.endpoint, receiver, calls)
        print(f"end to end: {calls} tool calls -> {spans} spans exported in {elapsed:.3f} s including flush: "
              f"{spans / elapsed:,.0f} spans/s")
    return 0


if __name__ == "__main__":
    from _results import run_with_results  # --write-results: the figures also go to bench/RESULTS.md

    raise SystemExit(run_with_results("bench_otel", main))
