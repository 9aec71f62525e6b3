"""Cost of the tool-call path, side by side in one process (issue: engine core).

Rows (medians in ns per call, ratios and added ns against the first row):
1. a bare call of the tool function;
2. the same tool call through ``Turn.call_tool`` with no plugins;
3. with one no-op observer on ``post_tool_call``;
3b. with one no-op observer on ``pre_tool_call`` (observers get a read-only copy of the arguments: this row
   is one listener's cost including that copy);
4. with all tool-path hooks (pre_tool_call, post_tool_call, transform_tool_result) and one
   middleware of each tool kind (tool_request, tool_execution);
5. with the exporters' recorder (a deferred ``ScopePlugin``, no sink): the record lanes, the publication queue
   and its thread, as with ATOF + ATIF on;
6. the caller floor of row 5: one pluggy hook call before the tool and one after, each appending
   ``(clock, fields)`` to a deque that a writer thread drains, the arguments copied and the tool's context made
   current while it runs (what any recorded tool call must do on the agent's thread; the same row runs in
   ``bench_real_payloads.py`` on real payloads);
and, as references, a pluggy hook call with one implementation and an OpenTelemetry SDK span
start/end (when ``opentelemetry-sdk`` is installed).

Targets: row 2 adds at most 1,500 ns over row 1; row 3 adds at most 5,000 ns. Rows 5 and 6 include the
GIL hand-overs to their writer thread (wall time).
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

import statistics  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from collections import deque  # noqa: E402

import pluggy  # noqa: E402

from hermes_pipeline import Engine, Host  # noqa: E402
from hermes_pipeline.export import ScopePlugin  # noqa: E402
from hermes_pipeline.host.context import CallContext, current  # noqa: E402


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


_spec, _impl = pluggy.HookspecMarker("caller-floor"), pluggy.HookimplMarker("caller-floor")


class _FloorSpec:
    @_spec
    def pre_tool_call(self, fields: tuple[Any, ...]) -> None:
        """Before the tool runs."""

    @_spec
    def post_tool_call(self, fields: tuple[Any, ...]) -> None:
        """After it returned."""


class _FloorRecorder:
    """Appends ``(clock, fields)`` per hook; a daemon thread drains the deque (a wake-up per 256, else a poll)."""

    def __init__(self) -> None:
        self.queue: deque[tuple[Any, ...]] = deque()
        self.wake = threading.Condition()
        threading.Thread(target=self._drain, name="caller-floor", daemon=True).start()

    @_impl
    def pre_tool_call(self, fields: tuple[Any, ...]) -> None:
        self._append((time.time_ns(), fields))

    @_impl
    def post_tool_call(self, fields: tuple[Any, ...]) -> None:
        self._append((time.time_ns(), fields))

    def _append(self, record: tuple[Any, ...]) -> None:
        self.queue.append(record)
        if len(self.queue) >= 256:
            with self.wake:
                self.wake.notify()

    def _drain(self) -> None:  # takes what is queued in one go, then waits again (the engine's writer lingers too)
        queue = self.queue
        while True:
            with self.wake:
                self.wake.wait(0.05)
            for _ in range(len(queue)):
                queue.popleft()


def caller_floor() -> Any:
    """Row 6: the least a recorded tool call costs the caller (see the module docstring)."""
    plugins = pluggy.PluginManager("caller-floor")
    plugins.add_hookspecs(_FloorSpec)
    plugins.register(_FloorRecorder())
    hooks = plugins.hook
    turn = Host(Engine(), model="bench-model").session("bench-session").turn("bench")
    session = turn.session

    def call() -> str:
        hooks.pre_tool_call(fields=("read_file", ARGS.copy(), "call_1"))
        token = current.set(CallContext(session, turn, "call_1", "read_file"))
        try:
            value = read_file(**ARGS)
        finally:
            current.reset(token)
        hooks.post_tool_call(fields=("call_1", value))
        return value

    return call


def interleaved_cpu(cases: list[tuple[str, Any]], *, inner: int, rounds: int) -> list[tuple[str, float]]:
    """``_timing.interleaved`` on the calling thread's CPU clock: median over rounds of the mean per call."""
    for _, fn in cases:  # warm-up
        for _ in range(inner // 10):
            fn()
    samples: dict[str, list[float]] = {name: [] for name, _ in cases}
    for _ in range(rounds):
        for name, fn in cases:
            start = time.thread_time_ns()
            for _ in range(inner):
                fn()
            samples[name].append((time.thread_time_ns() - start) / inner)
    return [(name, statistics.median(samples[name])) for name, _ in cases]


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
    recorded = Engine()
    recorded.add_plugin(ScopePlugin(deferred=True, max_queue_size=10_000_000), name="scopes")
    recorder = tool_call(recorded)

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
    # Rows 5 and 6 after the others, so that their writer threads never run during another row, on the caller
    # thread's CPU clock (what the agent's thread itself spends, not its waits for the interpreter lock).
    recorded_rows = interleaved_cpu([("bare tool function", bare),
                                     ("call_tool, exporters' recorder (record lanes)", recorder),
                                     ("caller floor: 2 pluggy calls -> deque, context", caller_floor())],
                                    inner=500, rounds=rounds)
    print("\ncaller-thread CPU (thread_time_ns):\n" + table(recorded_rows))
    engine_added = recorded_rows[1][1] - recorded_rows[0][1]
    floor_added = recorded_rows[2][1] - recorded_rows[0][1]
    print(f"\nthe exporters' recorder adds {engine_added:.0f} ns of caller CPU, its caller floor {floor_added:.0f} ns "
          f"({engine_added / floor_added:.2f}x the floor)")
    return 0


if __name__ == "__main__":
    from _results import run_with_results  # --write-results: the figures also go to bench/RESULTS.md

    raise SystemExit(run_with_results("bench_tool_path", main))
