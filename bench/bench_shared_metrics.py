"""Shared-metrics throughput: counter events into SQLite, and exporting a package from 100,000 rows.

Part 1, counter events per second (medians of ``--rounds`` runs, each ``--events`` tool calls):

* ``hook thread``: the cost on the agent's thread of one ``pre_tool_call`` + ``post_tool_call``
  pair through the engine and the collector, which only captures each hook's fields and time and
  queues them (the projector, event validation and counting run on the writer thread), measured
  while the writer is held so that its work does not compete for the GIL (the queued hooks then
  accumulate, so the garbage collector's passes over them are part of the figure);
* ``end to end``: the same pairs until :meth:`SharedMetrics.flush` returns, i.e. until every
  counter is committed to ``metrics.sqlite3`` by the background writer in batched transactions;
* ``reference``: the same two dispatches to a no-op observer (the engine's own cost);
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
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hermes_pipeline import Engine  # noqa: E402
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


def events_per_second(events: int, rounds: int) -> dict[str, float]:
    hook, end_to_end, baseline = [], [], []
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as tmp:
            engine = Engine().child()
            metrics = attach_shared_metrics(engine, tmp, enabled=True, toolsets={"read_file": "file"},
                                            resource=RESOURCE, queue_size=4 * events + 100)
            assert metrics is not None
            engine.dispatch("pre_llm_call", {"session_id": "s", "task_id": "bench-task", "turn_id": "t",
                                             "platform": "cli"})
            metrics.flush()
            gate = threading.Event()  # hold the writer so that the hook-thread cost is measured alone
            metrics.subscriber.call_soon(gate.wait)
            start = time.perf_counter()
            tool_pairs(engine, events // 2, 0)
            hook.append((time.perf_counter() - start) / (events // 2) * 1e9)
            gate.set()
            assert metrics.flush(600)
            start = time.perf_counter()
            tool_pairs(engine, events, events)
            assert metrics.flush(600)
            done = time.perf_counter()
            assert metrics.subscriber.stats.dropped == 0
            committed = sum(r["value"] for r in st.counters(metrics.store.connect())
                            if r["metric_name"] == "hermes.tool_call.count")
            assert committed == events + events // 2, committed
            metrics.close()
            end_to_end.append(events / (done - start))
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
    start = time.perf_counter()
    tool_pairs(noop, events, 0)
    reference = (time.perf_counter() - start) / events * 1e9
    return {"hook_ns": statistics.median(hook), "end_to_end": statistics.median(end_to_end),
            "baseline": statistics.median(baseline), "noop_ns": reference}


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
    print(f"{'end to end: hook -> projection -> SQLite':<44}{rate['end_to_end']:>10.0f} /s  "
          f"{rate['end_to_end'] / rate['baseline']:.2f}")
    print(f"{'hook thread cost per tool call (pre+post)':<44}{rate['hook_ns']:>10.0f} ns")
    print(f"{'  reference: same dispatches, no-op observer':<44}{rate['noop_ns']:>10.0f} ns  "
          f"(shared metrics add {rate['hook_ns'] - rate['noop_ns']:.0f} ns)")
    result = export_time(rows)
    print(f"\nexport of {rows} counter rows -> one package of {result['bytes'] / 1e6:.1f} MB:")
    print(f"  packaging transaction (incl. schema validation) {result['package_s']:8.2f} s")
    print(f"  export (atomic write, fsync, rename)            {result['export_s']:8.2f} s")
    print(f"  of which closed-schema validation alone         {result['validate_s']:8.2f} s")
    print(f"  reference: json.dumps of the same package       {result['dumps_s']:8.2f} s")


if __name__ == "__main__":
    from _results import run_with_results  # --write-results: the figures also go to bench/RESULTS.md

    raise SystemExit(run_with_results("bench_shared_metrics", main))
