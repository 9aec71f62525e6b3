"""Deadlines are global: ``flush(t)`` and shutdown return within ``t`` whatever the exporters do (FMT-84, FMT-85).

A real TCP server on 127.0.0.1 accepts every connection and never answers (a black-holing
collector). With 1, 2 and 3 exporters pointed at it (ATOF ``http_post`` streams and OTLP
endpoints, each with a 10 s request timeout), ``flush(t)`` and ``shutdown(t)`` of the
observability exporters, the component's removal from the engine, and the exit of a process
whose pipeline file names them all return within ``t`` plus a small constant. The constant is
generous (the bound is the behaviour under test, not a benchmark).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import tomli_w

from hermes_pipeline import Engine, Host
from hermes_pipeline.components.observability_sinks import attach_sinks

SLACK = 0.5
"""Seconds allowed beyond the deadline (thread wake-ups, a loaded 2-core machine)."""
T = 0.75
"""The deadline given to flush and shutdown: small, but above the slack so that twice it shows."""


@contextmanager
def black_hole() -> Iterator[int]:
    """A TCP server on 127.0.0.1 that accepts connections, reads and discards, never replies."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    server.settimeout(0.1)
    stop = threading.Event()
    conns: list[socket.socket] = []

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except (TimeoutError, socket.timeout):
                continue
            except OSError:
                return
            conn.settimeout(0.1)
            conns.append(conn)
        server.close()

    def drain() -> None:
        while not stop.is_set():
            for conn in list(conns):
                try:
                    conn.recv(65536)
                except (TimeoutError, socket.timeout, BlockingIOError):
                    pass
                except OSError:
                    conns.remove(conn)
            if not conns:
                stop.wait(0.05)

    threads = [threading.Thread(target=serve, daemon=True), threading.Thread(target=drain, daemon=True)]
    for thread in threads:
        thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        for thread in threads:
            thread.join(5)
        for conn in conns:
            conn.close()


def exporters_config(port: int, count: int) -> dict[str, Any]:
    """``count`` exporters against the black hole: ATOF streams and OTLP endpoints alternately."""
    streams = [{"type": "stream", "url": f"http://127.0.0.1:{port}/atof/{i}", "timeout_millis": 10_000}
               for i in range(count) if i % 2 == 0]
    endpoints = [{"type": "gen_ai", "endpoint": f"http://127.0.0.1:{port}/v1/traces", "timeout_millis": 10_000,
                  "scheduled_delay_millis": 1} for i in range(count) if i % 2 == 1]
    config: dict[str, Any] = {"version": 4, "atof": {"enabled": True, "sinks": streams}}
    if endpoints:
        config["opentelemetry"] = {"enabled": True, "endpoints": endpoints}
    return config


def run_session(engine: Engine, turns: int = 3) -> None:
    host = Host(engine, model="m")
    with host.session() as session:
        for n in range(turns):
            with session.turn(f"turn {n}") as turn:
                turn.call_tool("t", {"n": n}, lambda n: f"r{n}", tool_call_id=f"c{n}")
                turn.complete("ok")


@pytest.mark.parametrize("count", [1, 2, 3])
def test_fmt_84_85_flush_and_shutdown_hold_one_deadline_for_all_exporters(count: int, tmp_path: Path) -> None:
    """FMT-84 / FMT-85: with ``count`` exporters stuck on a black hole, flush(t) and shutdown(t) take ≤ t + slack."""
    with black_hole() as port:
        engine = Engine()
        sinks = attach_sinks(exporters_config(port, count), base_dir=tmp_path,
                             register=lambda plugin: engine.add_plugin(plugin, name="observability-test"))
        assert sinks is not None
        run_session(engine)
        started = time.monotonic()
        flushed = sinks.flush(T)
        flush_took = time.monotonic() - started
        run_session(engine, 1)
        started = time.monotonic()
        sinks.shutdown(T)
        shutdown_took = time.monotonic() - started
    assert flushed is False  # nothing was answered: the barrier timed out
    assert flush_took <= T + SLACK, f"flush({T}) took {flush_took:.2f} s with {count} exporter(s)"
    assert shutdown_took <= T + SLACK, f"shutdown({T}) took {shutdown_took:.2f} s with {count} exporter(s)"


def test_fmt_85_removing_the_component_holds_its_flush_timeout(tmp_path: Path) -> None:
    """FMT-85: ``engine.plugins.remove(name, flush_timeout=t)`` (flush, then shutdown) returns within t + slack."""
    with black_hole() as port:
        engine = Engine()
        config = exporters_config(port, 3)
        name = engine.plugins.add(_component_class(), name="observability", config=config)
        run_session(engine)
        started = time.monotonic()
        assert engine.plugins.remove(name, flush_timeout=T)
        took = time.monotonic() - started
    assert took <= T + SLACK, f"remove(flush_timeout={T}) took {took:.2f} s"


def _component_class() -> Any:
    from hermes_pipeline.components.observability import ObservabilityComponent

    return ObservabilityComponent


CHILD = """
import sys, time
from hermes_pipeline import Host
from hermes_pipeline.profile import open_profile

profile = open_profile(sys.argv[1])
assert profile.activation.state.value == "ACTIVE", profile.activation
host = profile.host(platform="cli", model="m")
with host.session() as session:
    for n in range(3):
        with session.turn("go") as turn:
            turn.call_tool("t", {}, lambda: "r", tool_call_id=f"c{n}")
            turn.complete("ok")
print("done", flush=True)
"""


def test_fmt_85_process_exit_waits_at_most_the_shutdown_deadline(tmp_path: Path) -> None:
    """FMT-85: at interpreter exit the atexit shutdown of 3 stuck exporters takes at most the shutdown deadline."""
    from hermes_pipeline.components.observability import SHUTDOWN_DEADLINE

    with black_hole() as port:
        pipeline = tmp_path / "plugins.toml"
        pipeline.write_text(tomli_w.dumps({"version": 1, "components": [
            {"kind": "observability", "enabled": True, "config": exporters_config(port, 3)}]}), encoding="utf-8")
        home = tmp_path / "home"
        home.mkdir()
        env = {**os.environ, "HERMES_NEMO_RELAY_PLUGINS_TOML": str(pipeline), "HERMES_HOME": str(home),
               "XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HERMES_PIPELINE_SYSTEM_PLUGINS_TOML": str(tmp_path / "none")}
        child = subprocess.Popen([sys.executable, "-c", CHILD, str(home)], env=env, cwd=tmp_path,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert child.stdout is not None
            line = child.stdout.readline()
            started = time.monotonic()
            child.wait(60)
            took = time.monotonic() - started
        finally:
            if child.poll() is None:
                child.kill()
                child.wait(10)
    assert line.strip() == "done", child.stderr.read() if child.stderr else ""
    assert child.returncode == 0
    assert took <= SHUTDOWN_DEADLINE + 1.0, f"exit took {took:.2f} s (shutdown deadline {SHUTDOWN_DEADLINE} s)"
