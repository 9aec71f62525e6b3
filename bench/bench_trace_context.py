"""Caller-thread cost of joining the application's OpenTelemetry trace (issue #30, spec 04 FMT-56b).

Rows (medians in ns per call, ratio and added ns against the first row), measured round-robin in one process:

1. ``turn_started`` with no OTLP pipeline in the process (what every host pays: one test, nothing captured);
2. with an OTLP pipeline on and no active application span (random trace and root span ids drawn, recorded);
3. with an OTLP pipeline on inside an active span of the application's own ``TracerProvider`` (captured);
4. with an explicit ``traceparent`` string (parsed, recorded);
5. ``enter_turn`` + ``exit_turn`` around a provider call (the turn's span made current for instrumentations).

For scale: one ``Host`` turn with the OTel sink attached (``session.turn`` + ``complete``), so the capture's
share of a turn is visible.

Run: ``python bench/bench_trace_context.py`` (``--quick`` for a short run).
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _timing import interleaved, per_call_ns, table  # noqa: E402

from hermes_pipeline import Engine, Host  # noqa: E402
from hermes_pipeline.demo.otlp_receiver import OTLPReceiver  # noqa: E402
from hermes_pipeline.engine import trace_parent  # noqa: E402
from hermes_pipeline.sinks.otel import build_otel_plugin  # noqa: E402

TP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    inner, rounds = (500, 7) if args.quick else (2000, 31)
    logging.disable(logging.WARNING)
    from opentelemetry.sdk.trace import TracerProvider

    tracer = TracerProvider().get_tracer("app")
    counter = iter(range(10**9))

    def off() -> None:
        trace_parent.turn_started("s", f"t{next(counter)}")

    [(name_off, ns_off)] = interleaved([("turn start, no OTLP pipeline", off)], inner=inner, rounds=rounds)
    trace_parent.enable()
    try:
        def on() -> None:
            trace_parent.turn_started("s", f"t{next(counter)}")

        def explicit() -> None:
            trace_parent.turn_started("s", f"t{next(counter)}", TP)

        def around() -> None:
            trace_parent.exit_turn(trace_parent.enter_turn("s", "bench-turn"))

        rows = [(name_off, ns_off)] + interleaved([("turn start, OTLP on, no active span", on),
                                                   ("turn start, explicit traceparent", explicit)],
                                                  inner=inner, rounds=rounds)
        trace_parent.turn_started("s", "bench-turn")  # after the rows above, which push older turns out
        rows += interleaved([("enter_turn + exit_turn (per provider attempt)", around)], inner=inner, rounds=rounds)
        with tracer.start_as_current_span("app.request"):
            rows += interleaved([("turn start, OTLP on, inside an app span", on)], inner=inner, rounds=rounds)
    finally:
        trace_parent.disable()
    print(table(rows))

    with OTLPReceiver(discard=True) as receiver:
        engine = Engine()
        plugin = build_otel_plugin({"enabled": True, "endpoints": [{"type": "gen_ai", "endpoint": receiver.endpoint}]})
        engine.add_plugin(plugin, name="otel")
        host = Host(engine, platform="bench", model="m", provider="openai")
        session = host.session()

        def turn() -> None:
            with session.turn("q") as t:
                t.complete("a")

        per_turn = per_call_ns(turn, inner=max(inner // 10, 50), rounds=rounds)
        plugin.shutdown(10)
    print(f"\none host turn with the OTel sink: {per_turn:.0f} ns (the capture is rows 2-4 minus row 1 of it)")


if __name__ == "__main__":
    from _results import run_with_results  # --write-results: the figures also go to bench/RESULTS.md

    raise SystemExit(run_with_results("bench_trace_context", main))
