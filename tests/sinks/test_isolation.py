"""A sink that blocks stalls only itself (issue #26): it loses only its own events, counted, and never holds
up the scope plugin, the other sinks, ``flush`` or the process exit (FMT-79, FMT-80, FMT-83, FMT-84, FMT-85).

The end-to-end case is a real host process with a real third-party sink installed as an entry point (a
``dist-info`` under ``tmp_path`` on the child's ``PYTHONPATH``) whose ``__call__`` never returns, beside the
built-in ATOF file sink: the process exits within the documented exit deadline (``SHUTDOWN_DEADLINE``) plus
10 %, the ATOF file has every event and the blocked sink's loss is counted and reported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline.components.observability_sinks import attach_sinks
from hermes_pipeline.engine.core import Engine
from hermes_pipeline.engine.deadline import SHUTDOWN_DEADLINE
from hermes_pipeline.export.isolation import IsolatedSink, needs_isolation
from hermes_pipeline.export.scope_hooks import ScopePlugin
from hermes_pipeline.host import Host
from hermes_pipeline.sink_testing import MemorySink
from hermes_pipeline.sinks.base import BaseSink
from tests._pipelines import write_pipeline

BLOCKING_SINK = '''
"""A third-party sink whose __call__ never returns (a destination that never answers)."""
import threading
from hermes_pipeline.sinks.base import BaseSink


class BlockingSink(BaseSink):
    @classmethod
    def validate_config(cls, config, vctx):
        for key in config:
            if key != "enabled":
                vctx.unknown_field(key, "enabled")

    def __init__(self, config, ctx):
        self._lock = threading.Lock()
        self._never = threading.Event()

    def __call__(self, event):
        with self._lock:  # held for ever, as by a sink stuck in a request
            self._never.wait()

    def flush(self, timeout):
        with self._lock:  # the flush of the issue: a lock the blocked call holds, with no timeout
            return True

    def shutdown(self, deadline):
        return self.flush(deadline)
'''

HOST = '''
import json, sys, time
from hermes_pipeline import Host
from hermes_pipeline.runtime import get_engine

host = Host(get_engine(), platform="cli", model="m", provider="p")
with host.session() as session:
    for n in range(TURNS):
        with session.turn(f"turn {n}") as turn:
            turn.call_llm({"model": "m", "messages": []}, lambda request: {"choices": [
                {"message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}]})
            turn.call_tool("read_file", {"path": "x"}, lambda path: "contents", tool_call_id=f"c{n}")
            turn.complete("done")
print(json.dumps({"session_ended": time.monotonic()}), flush=True)
# no release, no flush: the process just exits, as a host does
'''

TURNS = 20


def _blocking_distribution(root: Path) -> Path:
    site = root / "site"
    info = site / "blocking_sink-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: blocking_sink\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[hermes_pipeline.sinks]\nblocking_sink = blocking_sink:BlockingSink\n",
                                           encoding="utf-8")
    (site / "blocking_sink.py").write_text(BLOCKING_SINK, encoding="utf-8")
    return site


def _env(root: Path) -> dict[str, str]:
    pipeline = write_pipeline(root, "atof-file", extra="\n[components.config.blocking_sink]\nenabled = true\n",
                              atof_directory=root / "out")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(_blocking_distribution(root)), env.get("PYTHONPATH", "")])
    env["HERMES_NEMO_RELAY_PLUGINS_TOML"] = str(pipeline)
    env["HERMES_HOME"] = str(root / "home")
    env["HERMES_PIPELINE_SYSTEM_PLUGINS_TOML"] = str(root / "no-system.toml")
    env["XDG_CONFIG_HOME"] = str(root / "xdg")
    return env


@pytest.mark.timeout(120)
def test_a_host_with_a_blocked_entry_point_sink_exits_within_the_deadline_and_the_atof_sink_gets_every_event(
        tmp_path: Path) -> None:
    """FMT-85 (exit waits at most the shutdown deadline), FMT-83 (a failing sink never harms the others),
    FMT-80 (every loss counted): a real process, a real entry-point sink blocked for ever."""
    env = _env(tmp_path)
    validated = subprocess.run([sys.executable, "-m", "hermes_pipeline.cli.main", "config", "validate"], env=env,
                               cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert validated.returncode == 0, validated.stdout + validated.stderr
    child = subprocess.Popen([sys.executable, "-c", HOST.replace("TURNS", str(TURNS))], env=env, cwd=tmp_path,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = child.stdout.readline() if child.stdout is not None else ""
        child.wait(timeout=SHUTDOWN_DEADLINE * 10)  # the guard; the bound is asserted below
        exited = time.monotonic()  # CLOCK_MONOTONIC is one clock for every process of the machine
    finally:
        if child.poll() is None:
            child.kill()
    stderr = child.stderr.read() if child.stderr is not None else ""
    assert child.returncode == 0, stderr
    took = exited - json.loads(line)["session_ended"]
    assert took <= SHUTDOWN_DEADLINE * 1.1, f"exit took {took:.2f} s after the session, deadline {SHUTDOWN_DEADLINE} s"
    atof = [json.loads(row) for row in (tmp_path / "out" / "events.jsonl").read_text().splitlines()]
    assert len(atof) == 2 + TURNS * 6  # session, then per turn: agent.run, llm, tool; start and end each
    assert {row["scope_category"] for row in atof} == {"start", "end"}
    # the blocked sink's loss is counted, exactly, and said once at exit
    assert f"sink blocking_sink shut down with events_dropped={len(atof)}" in stderr, stderr
    assert "Traceback" not in stderr


# --------------------------------------------------------------------------- in process


class Blocked(BaseSink):
    """``__call__`` waits until released (and counts the calls that got in)."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.entered = threading.Event()
        self.calls = 0

    def __call__(self, event: object) -> None:
        self.calls += 1
        self.entered.set()
        self.release.wait()


def _attach(tmp_path: Path, sinks: Mapping[str, Any]) -> tuple[Engine, Any]:
    engine = Engine()
    config: dict[str, Any] = {"version": 4, **{name: {"enabled": True} for name in sinks}}
    attached = attach_sinks(config, base_dir=tmp_path, register=engine.add_plugin,
                            builders={name: (lambda sink: lambda c, ctx: sink)(sink) for name, sink in sinks.items()})
    assert attached is not None
    return engine, attached


def _session(engine: Engine, turns: int = 3) -> None:
    host = Host(engine, platform="cli", model="m", provider="p")
    with host.session() as session:
        for n in range(turns):
            with session.turn(f"turn {n}") as turn:
                turn.call_tool("read_file", {"path": "x"}, lambda path: "contents", tool_call_id=f"c{n}")
                turn.complete("done")


@pytest.mark.timeout(60)
def test_a_blocked_sink_never_holds_the_scope_plugin_the_other_sinks_or_flush(tmp_path: Path) -> None:
    """FMT-83 / FMT-84: the other sink gets every event, flush and shutdown return (False) and the
    blocked sink's events are counted as dropped."""
    blocked, memory = Blocked(), MemorySink()
    engine, attached = _attach(tmp_path, {"blocked": blocked, "memory": memory})
    _session(engine, 3)
    assert blocked.entered.wait(30)
    assert attached.sinks["blocked"].flush(0.2) is False  # the stalled sink: a timely False, not a hang
    assert attached.sinks["memory"].flush(30)  # neither the scope plugin nor the other sink was held
    assert len(memory.events) == 2 + 3 * 4
    assert attached.shutdown(0.5) is False  # the blocked sink did not finish, the call returns anyway
    stats = attached.stats()["blocked"]
    assert stats["events_dropped"] == len(memory.events)  # the one in its call and every queued one
    assert memory.closed
    blocked.release.set()


@pytest.mark.timeout(60)
def test_a_sink_that_blocks_in_flush_or_stats_is_waited_for_only_until_the_deadline(tmp_path: Path) -> None:
    """FMT-84: ``flush(t)`` honours ``t`` even when a sink's own ``flush`` never returns."""
    never = threading.Event()

    class StuckFlush(MemorySink):
        def flush(self, timeout: float) -> bool:
            never.wait()
            return True

        def stats(self) -> Mapping[str, Any]:
            never.wait()
            return {}

    stuck, memory = StuckFlush(), MemorySink()
    engine, attached = _attach(tmp_path, {"stuck": stuck, "memory": memory})
    _session(engine, 1)
    assert attached.flush(0.5) is False
    assert len(memory.events) == 6 and len(stuck.events) == 6  # __call__ worked: every event got in
    assert attached.stats()["stuck"]["events_dropped"] == 0  # its own stats() did not answer: ours still do
    assert attached.shutdown(0.5) is False
    never.set()


@pytest.mark.timeout(60)
def test_a_slow_sink_loses_only_its_own_events_and_counts_them(tmp_path: Path) -> None:
    """FMT-80 / FMT-81: a sink slower than the host fills and drops its own queue (counted); the other
    sink and the scope plugin keep every event; received + dropped is every event."""
    gate = threading.Event()

    class Slow(MemorySink):
        def __call__(self, event: Any) -> None:
            gate.wait()
            super().__call__(event)

    slow, memory = Slow(), MemorySink()
    isolated = IsolatedSink(slow, name="slow", max_queue_size=8)
    engine = Engine()
    scope_plugin = ScopePlugin((isolated, memory), deferred=True)
    engine.add_plugin(scope_plugin)
    _session(engine, 5)
    assert scope_plugin.flush(30)
    assert len(memory.events) == 2 + 5 * 4
    assert isolated.stats()["events_dropped"] > 0  # counted while it was stuck
    gate.set()
    assert isolated.shutdown(30)
    dropped = isolated.stats()["events_dropped"]
    assert len(slow.events) + dropped == len(memory.events)
    # never half a scope: every start it received has its end
    starts = {e.uuid for e in slow.events if e.phase == "start"}
    ends = {e.uuid for e in slow.events if e.phase == "end"}
    assert starts == ends


@pytest.mark.timeout(60)
def test_a_sink_that_raises_is_counted_and_the_others_keep_every_event(tmp_path: Path) -> None:
    """FMT-83: failures of a sink are counted (``sink_failures``) and never reach the host."""

    class Raising(BaseSink):
        def __call__(self, event: object) -> None:
            raise RuntimeError("boom")

    memory = MemorySink()
    engine, attached = _attach(tmp_path, {"raising": Raising(), "memory": memory})
    _session(engine, 2)
    assert attached.flush(30) and len(memory.events) == 2 + 2 * 4
    assert attached.stats()["raising"]["sink_failures"] == len(memory.events)
    assert attached.shutdown(30)


def test_only_sinks_that_do_not_declare_never_blocks_are_isolated(tmp_path: Path) -> None:
    """The built-in sinks only queue on their own writers: no second hand-off for them."""
    from hermes_pipeline.sinks.atof.sink import AtofSink

    assert not needs_isolation(AtofSink) and needs_isolation(MemorySink())
    engine, attached = _attach(tmp_path, {"memory": MemorySink()})
    assert isinstance(attached.sinks["memory"], IsolatedSink)
    assert attached.shutdown(30)


@pytest.mark.timeout(60)
def test_flush_and_shutdown_wait_for_the_tracker_lock_only_until_their_deadline() -> None:
    """FMT-84 / FMT-85: a scope plugin whose lock is held elsewhere answers ``False`` in time, never hangs."""
    scope_plugin = ScopePlugin(deferred=True)
    held, done = threading.Event(), threading.Event()

    def hold() -> None:
        with scope_plugin.tracker.lock:
            held.set()
            done.wait()

    thread = threading.Thread(target=hold, daemon=True)
    thread.start()
    assert held.wait(10)
    assert scope_plugin.flush(0.2) is False
    assert scope_plugin.shutdown(0.2) is False
    done.set()
    thread.join(10)
    assert scope_plugin.shutdown(5) is True  # once the lock is free the scopes are closed after all
