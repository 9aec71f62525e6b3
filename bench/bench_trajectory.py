"""The trajectory store and replay (issue #14): caller-thread cost per tool call, and a 100-step replay.

Rows, measured side by side in one process:

1. ``Turn.call_tool`` with no plugins, and with the profile's trajectory store attached (its own
   deferred scope plugin on the engine; the ATIF writer on its thread), per tool call: wall clock
   (interleaved rounds) and the caller thread's CPU time (``time.thread_time_ns``: what the caller
   itself spends), beside one no-op hookimpl on the two tool hooks (the host's payloads and the
   engine's dispatch, which any listener costs). Target: the store adds <= 1 us on the caller's
   thread per tool call. The wall-clock rows also pay for the store's publication thread projecting
   events while any row runs (one GIL; rounds are interleaved), and a loop this tight overflows its
   queue (drops are counted): read the CPU rows for the caller's own cost. Then the trajectory store
   and the observability store together, each on a scope plugin of its own (a tool call enqueued and
   projected twice) and both on one scope plugin (what a profile makes for its consumers: once).
   Then the paced rows, which the target line reads: the same tool calls timed in batches of
   :data:`PACE` calls, with the store flushed (its queue projected and written) outside the timed
   region before every batch, as in an agent whose tool calls take milliseconds and whose store
   keeps up; the caller thread's CPU per call over no plugins and over the no-op listener. The
   tight-loop figure stays printed beside it: there the publication thread cannot keep up and some
   ten thousand records pile up (the queue overflows; drops are counted). Both are shown; the
   target line names the paced row. Two floor rows measure how low the store's caller cost can go:
   the smallest caller code a host needs when anyone listens (the tool's context, a duration, the
   result's status) without any record, and the same plus the store's two records through the
   engine's record lanes, into the same store.
2. A 100-step run (99 LLM calls asking for ``read_file``, then an answer) of the reference agent
   against the scripted model server on 127.0.0.1, recorded by the store: its duration; then the
   fully recorded replay of that file (load, run the reference agent with every call served, write
   the new trajectory, diff), in process and as the ``hermes-pipeline replay`` command (interpreter
   start included; the median of 7 runs, 3 with ``--quick``). Target: the replay under 1 s end to end.

Run: ``python bench/bench_trajectory.py`` (``--quick`` for a short run).
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _timing import interleaved, per_call_thread_ns, table  # noqa: E402
from bench_atof import NoOpToolHooks  # noqa: E402

from hermes_pipeline import Engine, Host  # noqa: E402
from hermes_pipeline.demo.agent import ReferenceAgent  # noqa: E402
from hermes_pipeline.demo.model_server import ScriptedModelServer, ScriptStep, ToolCallSpec  # noqa: E402
from hermes_pipeline.demo.openai_client import ChatCompletionsClient  # noqa: E402
from hermes_pipeline.demo.tools import Workspace  # noqa: E402
from hermes_pipeline.replay import Recording  # noqa: E402
from hermes_pipeline.replay.runner import run_replay  # noqa: E402
from hermes_pipeline.sinks.trajectory_store import attach_store  # noqa: E402


PACE = 10
"""Tool calls per timed batch in the paced rows (the store catches up between batches)."""


def read_file(path: str) -> str:
    return "contents"


def _tool_call(turn: Any) -> Callable[[], object]:
    """One ``read_file`` tool call on ``turn`` (the same call in every row)."""
    return lambda: turn.call_tool("read_file", {"path": "n"}, read_file, tool_call_id="c")


def paced_thread_ns(cases: list[tuple[str, Callable[[], object]]], between: Callable[[], object], *,
                    batches: int, rounds: int, pace: int = PACE) -> list[tuple[str, float]]:
    """Caller-thread CPU per call, timed in batches of ``pace`` calls with ``between()`` run before each
    batch outside the timed region (the same for every case); per case the median over ``rounds`` of
    the mean over ``batches`` batches, cases taken round-robin so that load changes hit each alike."""
    for _, fn in cases:  # warm-up
        for _ in range(batches):
            between()
            for _ in range(pace):
                fn()
    samples: dict[str, list[float]] = {name: [] for name, _ in cases}
    clock = time.thread_time_ns
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(rounds):
            for name, fn in cases:
                spent = 0
                for _ in range(batches):
                    between()
                    start = clock()
                    for _ in range(pace):
                        fn()
                    spent += clock() - start
                samples[name].append(spent / (batches * pace))
    finally:
        if gc_was_enabled:
            gc.enable()
    return [(name, statistics.median(samples[name])) for name, _ in cases]


def _both_stores(root: Path, name: str, *, one_scope_plugin: bool) -> tuple[Engine, list[object], object | None]:
    """An engine with the trajectory store and the observability store: each on a scope plugin of its own (one
    scope plugin per consumer, as profiles had), or both on one scope plugin (what a profile makes now)."""
    from hermes_pipeline.config.observability_settings import ObservabilitySettings
    from hermes_pipeline.export.scope_hooks import ScopePlugin
    from hermes_pipeline.sinks.observability_store import attach_store as attach_audit

    engine = Engine()
    home = root / name
    shared = ScopePlugin(deferred=True) if one_scope_plugin else None
    if shared is not None:
        engine.add_plugin(shared, name="bench.profile.scope_plugin")
    handles: list[object] = [
        attach_store(engine, home, home / "trajectories", retention_days=0, stream=shared),
        attach_audit(engine, home, ObservabilitySettings(audit_enabled=True), stream=shared)]
    return engine, handles, shared


def paced_rows(root: Path, batches: int, rounds: int) -> tuple[float, float]:
    """The paced rows on engines of their own (a fresh store: no backlog from the tight loop); returns the
    store's added caller CPU per call over no plugins and over the no-op listener, in ns."""
    bare = Engine()
    floor = Engine()
    floor.add_plugin(NoOpToolHooks(), name="noop")
    stored = Engine()
    handle = attach_store(stored, root / "paced", root / "paced" / "trajectories", retention_days=0)
    turns = []
    cases: list[tuple[str, Callable[[], object]]] = []
    for name, engine in (("call_tool, no plugins", bare), ("one no-op pre/post_tool_call hookimpl", floor),
                         ("call_tool, trajectory store on", stored)):
        session = Host(engine, model="m").session()
        turn = session.turn("bench")
        turns.append((session, turn))
        cases.append((name, _tool_call(turn)))

    floor_turn = turns[2][1]  # the store's engine: the two floor rows feed the same store
    cases.append(("floor: context, clocks, no record", _floor_call(floor_turn, None)))
    cases.append(("floor: the same + the store's two records", _floor_call(floor_turn, stored)))

    def catch_up() -> None:
        if not handle.flush(30.0):
            raise RuntimeError("the trajectory store did not catch up within 30 s")

    cpu = paced_thread_ns(cases, catch_up, batches=batches, rounds=rounds)
    dropped = handle.sink.stats()
    for session, turn in turns:
        turn.end()
        session.finalize()
    handle.close()
    print(f"per tool call, caller thread CPU, paced (batches of {PACE} calls; before each batch, outside the timed "
          "region, the store is flushed: its queue projected and written):")
    print(table(cpu))
    print(f"  (store counters after the paced rows: {_counters(dropped)})")
    print(f"floor of the store's caller cost (the smallest caller code that records the tool call into the same "
          f"store): {(cpu[4][1] - cpu[0][1]) / 1000:.2f} us over no plugins, of which "
          f"{(cpu[3][1] - cpu[0][1]) / 1000:.2f} us before any record is made")
    return cpu[2][1] - cpu[0][1], cpu[2][1] - cpu[1][1]


def _floor_call(turn: Any, engine: Engine | None) -> Callable[[], object]:
    """The smallest honest caller-side tool call that records into ``engine``'s store: what any host must do
    when someone listens (the tool's context made current while it runs, a duration, the status of the
    result) plus, with ``engine``, the two records through the engine's record lanes
    (:meth:`Engine.record_lanes`), with none of :meth:`Turn.call_tool`'s checks, fallbacks and bookkeeping.
    Without ``engine`` the records are left out: the host side alone."""
    from time import perf_counter_ns

    from hermes_pipeline.host.context import CallContext, current
    from hermes_pipeline.host.tools import derive_status, post_tool_fields, pre_tool_fields

    session = turn.session
    if engine is None:
        def bare_host() -> str:  # the tool's context, its duration and the result's status: no fields, no record
            args = {"path": "n"}
            token = current.set(CallContext(session, turn, "c", "read_file"))
            started = perf_counter_ns()
            try:
                result = read_file(**args)
            finally:
                current.reset(token)
            duration_ms = (perf_counter_ns() - started) // 1_000_000
            derive_status(result)
            return result if duration_ms >= 0 else ""

        return bare_host
    pre = engine.record_lanes("pre_tool_call", engine.hook_listeners["pre_tool_call"])
    post = engine.record_lanes("post_tool_call", engine.hook_listeners["post_tool_call"])
    if pre is None or post is None:
        raise RuntimeError("the store's scope plugin offers no record lanes")

    def call() -> str:
        args = {"path": "n"}
        fields = pre_tool_fields(turn, "read_file", args, "c", "", [], None)
        for lane in pre:
            lane(fields)
        token = current.set(CallContext(session, turn, "c", "read_file"))
        started = perf_counter_ns()
        try:
            result = read_file(**args)
        finally:
            current.reset(token)
        duration_ms = (perf_counter_ns() - started) // 1_000_000
        status, error_type, error_message = derive_status(result)
        ended = post_tool_fields(turn, "read_file", args, "c", "", result, duration_ms, status, error_type,
                                 error_message, [], None)
        for lane in post:
            lane(ended)
        return result

    return call


def _counters(stats: object) -> str:
    """The ATIF writer's event counters of a store's ``stats()`` (submitted, written, drops, queue depth)."""
    events = stats.get("events") if isinstance(stats, dict) else None
    if not isinstance(events, dict):
        return "n/a"
    return ", ".join(f"{k}={v}" for k, v in events.items() if isinstance(v, int) and v or k == "queue_depth")


def tool_rows(root: Path, inner: int, rounds: int, batches: int) -> None:
    bare = Engine()
    floor = Engine()
    floor.add_plugin(NoOpToolHooks(), name="noop")
    stored = Engine()
    handle = attach_store(stored, root / "home", root / "home" / "trajectories", retention_days=0)
    own, own_handles, _ = _both_stores(root, "own", one_scope_plugin=False)
    one, one_handles, one_scope_plugin = _both_stores(root, "one", one_scope_plugin=True)
    turns = []
    cases: list[tuple[str, Callable[[], object]]] = []
    for name, engine in (("call_tool, no plugins", bare), ("one no-op pre/post_tool_call hookimpl", floor),
                         ("call_tool, trajectory store on", stored),
                         ("call_tool, traj. + obs. stores, own scope plugins", own),
                         ("call_tool, traj. + obs. stores, one scope plugin", one)):
        session = Host(engine, model="m").session()
        turn = session.turn("bench")
        turns.append((session, turn))
        cases.append((name, _tool_call(turn)))
    wall = interleaved(cases, inner=inner, rounds=rounds)
    cpu = [(name, per_call_thread_ns(fn, inner=inner, rounds=rounds)) for name, fn in cases]
    for session, turn in turns:
        turn.end()
        session.finalize()
    handle.close()
    for each in (*own_handles, *one_handles):
        each.close()  # type: ignore[attr-defined]
    if one_scope_plugin is not None:
        one_scope_plugin.shutdown(5.0)  # type: ignore[attr-defined]
    print("per tool call, wall clock (interleaved rounds):")
    print(table(wall))
    print("\nper tool call, caller thread CPU, tight loop (back-to-back calls; the store's backlog grows):")
    print(table(cpu))
    tight_added = cpu[2][1] - cpu[0][1]
    tight_floor = cpu[2][1] - cpu[1][1]
    print(f"both stores: {(cpu[3][1] - cpu[0][1]) / 1000:.2f} us added with a scope plugin each, "
          f"{(cpu[4][1] - cpu[0][1]) / 1000:.2f} us with one scope plugin for both (tight loop)\n")
    paced_added, paced_floor = paced_rows(root, batches, rounds)
    print(f"\nstore, paced rows (the target's row): {paced_added / 1000:.2f} us added on the caller's thread per tool "
          f"call over no plugins (target <= 1 us); {paced_floor / 1000:.2f} us over the engine's own dispatch of the "
          "two tool hooks to one no-op listener")
    print(f"store, tight loop (shown for comparison; backlog of queued records): {tight_added / 1000:.2f} us over no "
          f"plugins; {tight_floor / 1000:.2f} us over the no-op listener\n")


def hundred_steps(root: Path, runs: int) -> None:
    files = root / "files"
    files.mkdir()
    (files / "notes.txt").write_text("oats\n")
    home = root / "rec"
    engine = Engine()
    handle = attach_store(engine, home, home / "trajectories", retention_days=0)
    script = [ScriptStep(tool_calls=[ToolCallSpec("read_file", {"path": "notes.txt"})]) for _ in range(99)]
    script.append(ScriptStep(content="done"))
    with ScriptedModelServer(script) as server:
        host = Host(engine, model=server.model, provider="local", base_url=server.base_url)
        agent = ReferenceAgent(host, ChatCompletionsClient(server.base_url), Workspace(files).tools(),
                               max_iterations=200)
        started = time.perf_counter()
        with host.session() as session:
            agent.run_turn(session, "read it 99 times")
        original = time.perf_counter() - started
    handle.close()
    path = next((home / "trajectories").glob("*.json"))
    started = time.perf_counter()
    recording = Recording.from_file(path)
    result = run_replay(recording, overrides={"max_iterations": 200}, output=root / "replayed.json")
    replayed = time.perf_counter() - started
    assert result.diff.identical, result.diff.to_text()
    commands = []
    for _ in range(runs):  # one new interpreter each; the median, as one run on a shared machine says little
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "hermes_pipeline.cli.main", "replay", str(path), "--set",
                               "max_iterations=200", "--output", str(root / "cli.json")], capture_output=True, text=True)
        commands.append(time.perf_counter() - started)
        assert done.returncode == 0, done.stderr
    command = statistics.median(commands)
    print(f"100-step run ({len(recording.calls)} LLM calls, {len(recording.tool_results)} tool results):")
    print(f"  original run against the model server      {original * 1000:8.0f} ms")
    print(f"  fully recorded replay, in process           {replayed * 1000:8.0f} ms  ({replayed / original:.2f}x)")
    print(f"  hermes-pipeline replay (a new interpreter)  {command * 1000:8.0f} ms  (target < 1000 ms; median of {runs}, "
          f"min {min(commands) * 1000:.0f}, max {max(commands) * 1000:.0f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-trajectory-"))
    print("load average (1, 5, 15 min): " + ", ".join(f"{x:.2f}" for x in os.getloadavg()) + "\n")
    try:
        hundred_steps(root, runs=3 if args.quick else 7)  # first: the tool rows leave the store's writer busy with one huge trajectory
        print()
        tool_rows(root, inner=500 if args.quick else 2000, rounds=7 if args.quick else 21,
                  batches=50 if args.quick else 200)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    from _results import run_with_results  # --write-results: the figures also go to bench/RESULTS.md

    raise SystemExit(run_with_results("bench_trajectory", main))
