"""Cost of the tool-call path, side by side in one process (issue: engine core).

Rows (medians in ns per call, ratios and added ns against the first row):
1. a bare call of the tool function;
2. the same tool call through ``Turn.call_tool`` with no plugins;
3. with one no-op observer on ``post_tool_call``;
3b. with one no-op observer on ``pre_tool_call`` (observers get a read-only copy of the arguments: this row
   is one listener's cost including that copy);
4. with all tool-path hooks (pre_tool_call, post_tool_call, transform_tool_result) and one
   middleware of each tool kind (tool_request, tool_execution);
and, as references, a pluggy hook call with one implementation and an OpenTelemetry SDK span
start/end (when ``opentelemetry-sdk`` is installed).

Targets: row 2 adds at most 1,500 ns over row 1; row 3 adds at most 5,000 ns.
Run: ``python bench/bench_tool_path.py`` (``--quick`` for a short run).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _timing import interleaved, pluggy_reference, table  # noqa: E402

from hermes_pipeline import Engine, Host  # noqa: E402


def read_file(path: str) -> str:
    return "contents"


ARGS = {"path": "notes.txt"}


def tool_call(engine: Engine) -> Any:
    host = Host(engine, model="bench-model", provider="bench")
    session = host.session("bench-session")
    turn = session.turn("bench")
    return lambda: turn.call_tool("read_file", ARGS, read_file, tool_call_id="call_1")


def noop(**kwargs: Any) -> None:
    return None


def otel_reference() -> Any | None:
    try:
        from opentelemetry.sdk.trace import TracerProvider
    except ImportError:
        return None
    tracer = TracerProvider().get_tracer("bench")

    def span() -> None:
        tracer.start_span("execute_tool read_file").end()

    return span


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer rounds (noisier)")
    args = parser.parse_args(argv)
    rounds = 15 if args.quick else 101

    bare = lambda: read_file(**ARGS)  # noqa: E731
    no_plugins = tool_call(Engine())
    one = Engine()
    one.register_hook("post_tool_call", noop)
    one_observer = tool_call(one)
    pre = Engine()
    pre.register_hook("pre_tool_call", noop)
    pre_observer = tool_call(pre)
    full = Engine()
    for hook in ("pre_tool_call", "post_tool_call", "transform_tool_result"):
        full.register_hook(hook, noop)
    full.register_middleware("tool_request", noop)
    full.register_middleware("tool_execution", lambda **kw: kw["next_call"]())
    all_hooks = tool_call(full)

    cases = [
        ("bare tool function", bare),
        ("call_tool, no plugins", no_plugins),
        ("call_tool, 1 no-op post_tool_call observer", one_observer),
        ("call_tool, 1 no-op pre_tool_call observer", pre_observer),
        ("call_tool, 3 tool hooks + 2 tool middlewares", all_hooks),
        ("reference: pluggy hook call, 1 impl", pluggy_reference()),
    ]
    otel = otel_reference()
    if otel is not None:
        cases.append(("reference: OTel SDK span start/end", otel))
    else:
        print("(opentelemetry-sdk not installed: OTel reference row skipped; pip install '.[bench]')")
    rows = interleaved(cases, inner=500, rounds=rounds)
    print(table(rows))
    added_none = rows[1][1] - rows[0][1]
    added_one = max(rows[2][1], rows[3][1]) - rows[0][1]
    print(f"\nno-plugin path adds {added_none:.0f} ns (target <= 1500): {'OK' if added_none <= 1500 else 'MISSED'}")
    print(f"one no-op observer adds at most {added_one:.0f} ns (target <= 5000): {'OK' if added_one <= 5000 else 'MISSED'}")
    return 0


if __name__ == "__main__":
    from _results import run_with_results  # --write-results: the figures also go to bench/RESULTS.md

    raise SystemExit(run_with_results("bench_tool_path", main))
