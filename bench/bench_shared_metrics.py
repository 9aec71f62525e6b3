"""Shared-metrics throughput: counter events into SQLite, and exporting a package from 100,000 rows.

Part 1, counter events per second (medians of ``--rounds`` runs, each ``--events`` tool calls):

* ``caller thread``: the CPU time (``time.thread_time``) on the agent's thread of one ``pre_tool_call`` +
  ``post_tool_call`` pair through the engine: shared metrics has no hook implementation, so this is the
  profile stream's scope plugin stamping and queueing each hook (the stream's publication thread projects
  them and hands the scope events to the shared-metrics writer, which counts them), measured while the
  writer is held (the events then accumulate, so the garbage collector's passes over them are part of
  the figure); ``host tool path``: the same through :meth:`Turn.call_tool` of a :class:`Host` (its
  record lane, no payload dict);
* ``end to end``: the same pairs until :meth:`SharedMetrics.flush` returns, i.e. until every
  counter is committed to ``metrics.sqlite3`` by the background writer in batched transactions, with the
  process CPU (all threads) per tool call;
* ``reference``: the same two dispatches to a no-op observer (the engine's own cost);
* ``beside another consumer``: what shared metrics adds to a profile whose stream runs anyway (the trajectory
  store, an exporter): host tool calls through a deferred scope plugin with a no-op listener, with and without
  shared metrics listening to the same scope plugin; caller-thread CPU and process CPU (all threads, until
  every counter is committed) per tool call, the difference of the two;
* ``alone, 4 KB result``: shared metrics as the only consumer (its own stream), host tool calls whose result is
  4 KB of text: caller-thread and process CPU per tool call;
* ``baseline``: one ``INSERT ... ON CONFLICT DO UPDATE`` per counter in its own ``BEGIN
  IMMEDIATE`` transaction on the same database settings (WAL, ``synchronous = FULL``), measured
  in the same run.

Durability guarantee of the batched path: a counter write is *acknowledged* when the batch
transaction containing it has committed; ``flush()`` returns ``True`` only after everything
submitted before it is committed. With WAL and ``synchronous = FULL`` an acknowledged write
survives ``SIGKILL`` of the process (tested in ``tests/shared_metrics/test_crash.py``) and, on a
conforming filesystem, power loss. Writes still queued when the process dies were never
acknowledged; a batch is one transaction, so nothing is ever half-applied.

Part 2, export: ``--rows`` distinct counter rows of one period (``hermes.model_route.count`` with
distinct models, the only dimension that is not a small enum) are packaged into one v2 package
(one write transaction including closed-schema validation) and exported to ``outbox/`` (atomic
write, ``fsync``, rename). Reported: packaging, export, and the share of schema validation.

Run: ``python bench/bench_shared_metrics.py`` (``--quick`` for a short run).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import string
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hermes_pipeline import Engine, Host  # noqa: E402
from hermes_pipeline.shared_metrics import MetricsStore, attach_shared_metrics, validate_package  # noqa: E402
from hermes_pipeline.shared_metrics import packages as pk  # noqa: E402
from hermes_pipeline.shared_metrics import store as st  # noqa: E402
from hermes_pipeline.shared_metrics.clock import SystemClock  # noqa: E402
from hermes_pipeline.shared_metrics.resource import Resource  # noqa: E402

RESOURCE = Resource("0.1.0", "linux", "x86_64", "pip")
TOOL_DIMS = pk.canonical({"approval_outcome": "not_required", "latency_bucket": "lt_100ms", "outcome": "success",
                          "retry_count_bucket": "unknown", "tool_category": "file"})


def tool_pairs(engine: Engine, count: int, offset: int) -> None:
    for i in range(offset, offset + count):
        call = {"tool_name": "read_file", "args": {}, "task_id": "bench-task", "session_id": "s",
                "tool_call_id": f"c{i}", "turn_id": "t", "api_request_id": "r"}
        engine.dispatch("pre_tool_call", dict(call))
        engine.dispatch("post_tool_call", {**call, "result": "x", "duration_ms": 3, "status": "ok",
                                           "error_type": None, "error_message": None, "middleware_trace": []})


def host_tool_calls(engine: Engine, count: int) -> float:
    """CPU seconds of the caller's thread for ``count`` tool calls through a host's tool path."""
    host = Host(engine, platform="cli", model="m", provider="p", toolsets={"read_file": "file"})
    with host.session("hs") as session, session.turn("q", task_id="host-task", turn_id="ht") as turn:
        start = time.thread_time()
        for i in range(count):
            turn.call_tool("read_file", {}, lambda: "x", tool_call_id=f"h{i}")
        spent = time.thread_time() - start
        turn.complete("ok")
    return spent


def events_per_second(events: int, rounds: int) -> dict[str, float]:
    hook, hook_wall, host_path, end_to_end, all_cpu, baseline = [], [], [], [], [], []
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as tmp:
            engine = Engine().child()
            metrics = attach_shared_metrics(engine, tmp, enabled=True, toolsets={"read_file": "file"},
                                            resource=RESOURCE, queue_size=8 * events + 100)
            assert metrics is not None
            engine.dispatch("pre_llm_call", {"session_id": "s", "task_id": "bench-task", "turn_id": "t",
                                             "platform": "cli"})
            metrics.flush()
            gate = threading.Event()  # hold the writer so that the caller-thread cost is measured alone
            metrics.subscriber.call_soon(gate.wait)
            start, cpu = time.perf_counter(), time.thread_time()
            tool_pairs(engine, events // 2, 0)
            hook.append((time.thread_time() - cpu) / (events // 2) * 1e9)
            hook_wall.append((time.perf_counter() - start) / (events // 2) * 1e9)
            host_path.append(host_tool_calls(engine, events // 2) / (events // 2) * 1e9)
            gate.set()
            assert metrics.flush(600)
            start, cpu = time.perf_counter(), time.process_time()
            tool_pairs(engine, events, events)
            assert metrics.flush(600)
            done, cpu_done = time.perf_counter(), time.process_time()
            assert metrics.subscriber.stats.dropped == 0
            committed = sum(r["value"] for r in st.counters(metrics.store.connect())
                            if r["metric_name"] == "hermes.tool_call.count")
            assert committed == 2 * events, committed
            metrics.close()
            end_to_end.append(events / (done - start))
            all_cpu.append((cpu_done - cpu) / events * 1e9)
        with tempfile.TemporaryDirectory() as tmp:
            store = MetricsStore(tmp)
            conn = store.connect()
            n = max(events // 10, 200)
            start = time.perf_counter()
            for _ in range(n):
                with st.transaction(conn):
                    st.increment(conn, "2026-09-01", "hermes.tool_call.count", TOOL_DIMS, 1, RESOURCE)
            baseline.append(n / (time.perf_counter() - start))
            conn.close()
    noop = Engine()
    for hook_name in ("pre_tool_call", "post_tool_call"):
        noop.register_hook(hook_name, lambda **kwargs: None)
    start = time.thread_time()
    tool_pairs(noop, events, 0)
    reference = (time.thread_time() - start) / events * 1e9
    return {"hook_ns": statistics.median(hook), "hook_wall_ns": statistics.median(hook_wall),
            "host_ns": statistics.median(host_path), "end_to_end": statistics.median(end_to_end),
            "all_cpu_ns": statistics.median(all_cpu), "baseline": statistics.median(baseline),
            "noop_ns": reference}


def _stream_run(events: int, with_metrics: bool) -> tuple[float, float]:
    """``(caller-thread CPU, process CPU)`` seconds of ``events`` host tool calls on a stream with a no-op
    listener, with or without shared metrics listening to it too, until everything is delivered."""
    from hermes_pipeline.export.scope_hooks import ScopePlugin

    with tempfile.TemporaryDirectory() as tmp:
        engine = Engine().child()
        stream = ScopePlugin((lambda event: None,), deferred=True, max_queue_size=8 * events + 100)
        engine.add_plugin(stream, name="stream")
        metrics = None
        if with_metrics:
            try:
                metrics = attach_shared_metrics(engine, tmp, enabled=True, resource=RESOURCE, stream=stream,
                                                queue_size=8 * events + 100)
            except TypeError:  # a tree whose shared metrics has hooks of its own (no stream to listen to)
                metrics = attach_shared_metrics(engine, tmp, enabled=True, resource=RESOURCE,
                                                queue_size=8 * events + 100)
        host = Host(engine, platform="cli", model="m", provider="p", toolsets={"read_file": "file"})
        with host.session("bs") as session, session.turn("q", task_id="b-task", turn_id="bt") as turn:
            stream.flush(60)
            if metrics is not None:
                metrics.flush(60)
            cpu, thread = time.process_time(), time.thread_time()
            for i in range(events):
                turn.call_tool("read_file", {}, lambda: "x", tool_call_id=f"b{i}")
            caller = time.thread_time() - thread
            assert stream.flush(600) and (metrics is None or metrics.flush(600))
            total = time.process_time() - cpu
            turn.complete("ok")
        if metrics is not None:
            assert metrics.subscriber.stats.dropped == 0
            metrics.close()
        stream.shutdown(60)
    return caller, total


def beside_another_consumer(events: int, rounds: int) -> dict[str, float]:
    """Medians over ``rounds`` of what shared metrics adds per tool call to a stream that runs anyway (ns)."""
    caller, total = [], []
    for _ in range(rounds):
        ref = _stream_run(events, False)
        with_metrics = _stream_run(events, True)
        caller.append((with_metrics[0] - ref[0]) / events * 1e9)
        total.append((with_metrics[1] - ref[1]) / events * 1e9)
    return {"caller_ns": statistics.median(caller), "all_cpu_ns": statistics.median(total)}


def alone_with_payload(events: int, rounds: int, size: int = 4096) -> dict[str, float]:
    """Medians over ``rounds`` of caller-thread and process CPU (ns) per host tool call returning ``size``
    characters of text, shared metrics being the only consumer."""
    rnd = random.Random(1)
    result = " ".join("".join(rnd.choice(string.ascii_lowercase) for _ in range(rnd.randint(2, 9)))
                      for _ in range(size // 4))[:size]
    caller, total = [], []
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as tmp:
            engine = Engine().child()
            metrics = attach_shared_metrics(engine, tmp, enabled=True, resource=RESOURCE, queue_size=8 * events + 100)
            assert metrics is not None
            host = Host(engine, platform="cli", model="m", provider="p", toolsets={"read_file": "file"})
            with host.session("ps") as session, session.turn("q", task_id="p-task", turn_id="pt") as turn:
                assert metrics.flush(60)
                cpu, thread = time.process_time(), time.thread_time()
                for i in range(events):
                    turn.call_tool("read_file", {"path": f"/x/{i}"}, lambda path: result, tool_call_id=f"p{i}")
                caller.append((time.thread_time() - thread) / events * 1e9)
                assert metrics.flush(600)
                total.append((time.process_time() - cpu) / events * 1e9)
                turn.complete("ok")
            metrics.close()
    return {"caller_ns": statistics.median(caller), "all_cpu_ns": statistics.median(total)}


def export_time(rows: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        store = MetricsStore(tmp)
        conn = store.connect()
        row = RESOURCE.as_row()
        with st.transaction(conn):
            conn.executemany(st._UPSERT, [("2026-09-01", "hermes.model_route.count", *row,
                                           pk.canonical({"model": f"vendor/model-{i:06d}", "provider": "openrouter"}),
                                           1 + i % 7) for i in range(rows)])
        now = SystemClock().now()
        start = time.perf_counter()
        _, created = pk.create_packages(conn, now, force=True)
        packaged = time.perf_counter()
        exported = pk.export_pending(store, conn, now)
        done = time.perf_counter()
        assert len(created) == 1 and exported == created
        payload: dict[str, Any] = json.loads((store.outbox / f"{created[0]}.json").read_text())
        assert len(payload["metrics"]) == rows
        start_v = time.perf_counter()
        validate_package(payload)
        validation = time.perf_counter() - start_v
        start_j = time.perf_counter()
        json.dumps(payload, indent=2, sort_keys=True)
        dumps = time.perf_counter() - start_j
        size = (store.outbox / f"{created[0]}.json").stat().st_size
        conn.close()
    return {"package_s": packaged - start, "export_s": done - packaged, "validate_s": validation,
            "dumps_s": dumps, "bytes": float(size)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer events and rows")
    parser.add_argument("--events", type=int, default=None, help="tool calls per round (default 20000)")
    parser.add_argument("--rows", type=int, default=None, help="counter rows to export (default 100000)")
    parser.add_argument("--rounds", type=int, default=None, help="rounds of part 1 (default 5)")
    args = parser.parse_args()
    events = args.events or (2_000 if args.quick else 20_000)
    rows = args.rows or (10_000 if args.quick else 100_000)
    rounds = args.rounds or (3 if args.quick else 5)
    print(f"shared metrics: {events} tool calls x {rounds} rounds; export of {rows} counter rows\n")
    rate = events_per_second(events, rounds)
    print(f"{'case':<44}{'median':>14}  ratio to baseline")
    print(f"{'baseline: one transaction per counter':<44}{rate['baseline']:>10.0f} /s  1.00")
    print(f"{'end to end: hook -> stream -> SQLite':<44}{rate['end_to_end']:>10.0f} /s  "
          f"{rate['end_to_end'] / rate['baseline']:.2f}")
    print(f"{'  all-CPU per tool call, end to end':<44}{rate['all_cpu_ns']:>10.0f} ns")
    print(f"{'caller-thread CPU per tool call (pre+post)':<44}{rate['hook_ns']:>10.0f} ns  "
          f"(wall {rate['hook_wall_ns']:.0f} ns)")
    print(f"{'caller-thread CPU per host tool call':<44}{rate['host_ns']:>10.0f} ns")
    print(f"{'  reference: same dispatches, no-op observer':<44}{rate['noop_ns']:>10.0f} ns  "
          f"(the path adds {rate['hook_ns'] - rate['noop_ns']:.0f} ns)")
    beside = beside_another_consumer(events, rounds)
    print(f"{'beside another consumer of the stream: added':<44}{beside['caller_ns']:>10.0f} ns caller-thread CPU, "
          f"{beside['all_cpu_ns']:.0f} ns all-CPU per host tool call")
    alone = alone_with_payload(max(events // 5, 200), rounds)
    print(f"{'alone, 4 KB tool result':<44}{alone['caller_ns']:>10.0f} ns caller-thread CPU, "
          f"{alone['all_cpu_ns']:.0f} ns all-CPU per host tool call")
    result = export_time(rows)
    print(f"\nexport of {rows} counter rows -> one package of {result['bytes'] / 1e6:.1f} MB:")
    print(f"  packaging transaction (incl. schema validation) {result['package_s']:8.2f} s")
    print(f"  export (atomic write, fsync, rename)            {result['export_s']:8.2f} s")
    print(f"  of which closed-schema validation alone         {result['validate_s']:8.2f} s")
    print(f"  reference: json.dumps of the same package       {result['dumps_s']:8.2f} s")


if __name__ == "__main__":
    from _results import run_with_results  # --write-results: the figures also go to bench/RESULTS.md

    raise SystemExit(run_with_results("bench_shared_metrics", main))
