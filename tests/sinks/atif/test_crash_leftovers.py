"""Temporary files left by a writer killed mid-write are removed at the next start (spec 04 FMT-52).

A real child process writes an ATIF trajectory and is stopped (by a test hook, not a sleep) once
its temporary file is written and before the rename, then killed with SIGKILL. A new ATIF sink
on the same directory removes that leftover when it starts, and leaves alone: the finished
trajectories, files that merely look alike (another target name, no pid), and the in-progress
temporary file of a process that is still alive.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from hermes_pipeline.export.atomic import PAUSE_ENV, is_leftover, remove_leftovers, write_atomically
from hermes_pipeline.sinks.atif import build_atif_sink

CHILD = """
import sys
from hermes_pipeline import Engine, Host
from hermes_pipeline.sinks.atif import build_atif_plugin

engine = Engine()
plugin = build_atif_plugin({"enabled": True, "output_directory": sys.argv[1]})
engine.add_plugin(plugin, name="atif")
host = Host(engine, model="m")
with host.session() as session:
    with session.turn("hello") as turn:
        turn.complete("hi")
plugin.shutdown(600)  # the trajectory write pauses (test hook) until this process is killed
"""

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo") or not hasattr(signal, "SIGKILL"),
                                reason="needs POSIX FIFOs and SIGKILL")


def _killed_mid_write(out: Path, tmp_path: Path) -> Path:
    """Run the child until its temporary file is written, kill -9 it; return the leftover."""
    ready = tmp_path / "ready.fifo"
    os.mkfifo(ready)
    env = {**os.environ, PAUSE_ENV: str(ready)}
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(out)], env=env, cwd=tmp_path,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    watchdog = threading.Timer(120, lambda: open(ready, "w").close())  # never hang if the child fails early
    watchdog.start()
    try:
        with open(ready, encoding="utf-8") as fh:  # blocks until the child has written and closed it
            leftover = Path(fh.read())
        assert leftover.parent == out and leftover.exists(), child.stderr
    finally:
        watchdog.cancel()
        child.send_signal(signal.SIGKILL)
        child.wait(30)
    assert child.returncode == -signal.SIGKILL
    return leftover


def test_fmt_52_a_new_atif_sink_removes_the_leftover_of_a_killed_writer(tmp_path: Path) -> None:
    """FMT-52: kill -9 between the temporary file and the rename; the next start removes only that file."""
    out = tmp_path / "atif"
    leftover = _killed_mid_write(out, tmp_path)
    assert leftover.name.startswith(".hermes-atif-") and leftover.name.endswith(".tmp")
    assert leftover.stat().st_size > 0
    live = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        target = "hermes-atif-01a05c77-08a0-7c3a-9d10-5e41a7c90001.json"
        keep = {
            target: b"{}",  # a finished trajectory
            f".{target}.{live.pid}.abcdefgh.tmp": b"in progress",  # a live process is writing it
            f".{target}.{os.getpid()}.abcdefgh.tmp": b"this process",  # possibly one of our own writers
            f".{target}.abcdefgh.tmp": b"old naming, fresh",  # no pid: only by age
            ".notes.txt.999999.abcdefgh.tmp": b"not ours",  # another target name
            "notes.tmp": b"unrelated",
        }
        for name, data in keep.items():
            (out / name).write_bytes(data)
        sink = build_atif_sink({"enabled": True, "output_directory": str(out)})
        assert sink.flush(10.0)  # the writer has opened its output (the cleanup ran there)
        sink.shutdown(10.0)
        assert not leftover.exists()
        assert sorted(p.name for p in out.iterdir()) == sorted(keep)
    finally:
        live.kill()
        live.wait(30)


def test_fmt_52_the_pid_named_temporary_file_is_removed_on_failure_and_after_the_rename(tmp_path: Path) -> None:
    """FMT-52: a normal atomic write leaves only the target; its temporary name carries the writer's pid."""
    target = tmp_path / "doc.json"
    write_atomically(target, b"data")
    assert [p.name for p in tmp_path.iterdir()] == ["doc.json"] and target.read_bytes() == b"data"
    name = f".doc.json.{os.getpid()}.abcdefgh.tmp"
    now = time.time()
    assert not is_leftover(name, now, owns=lambda t: t == "doc.json", now=now)
    assert is_leftover(name, now - 3600, owns=lambda t: t == "doc.json", now=now)


def test_leftovers_only_in_the_writers_own_directory_levels(tmp_path: Path) -> None:
    """Subdirectories deeper than the template allows are never searched."""
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    dead = ".x.json.999999999.abcdefgh.tmp"
    for directory in (tmp_path, tmp_path / "a", deep):
        (directory / dead).write_bytes(b"x")
    assert remove_leftovers(tmp_path, lambda t: t.endswith("x.json"), depth=1) == 2
    assert (deep / dead).exists() and not (tmp_path / "a" / dead).exists() and not (tmp_path / dead).exists()
