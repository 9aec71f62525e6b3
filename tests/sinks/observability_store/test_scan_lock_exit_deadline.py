"""Another process holds the store's ``observability/.scan.lock`` for ever (a hung peer, a lock on a home that
stopped answering): the store's close and the interpreter's exit still end within their deadline (FMT-85,
BOOK-16, BOOK-25), and what could not be written is counted (``rows_lost``, ``write_failures``) and warned, never
lost silently. The peer is this test process holding a real ``flock``; the store runs in a real child process,
which must end within a generous bound. No sleeps: the child runs to its end by itself."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

CLOSE_CHILD = r'''
import json, sys, time
from pathlib import Path
from hermes_pipeline import Engine, Host
from hermes_pipeline.config.observability_settings import ObservabilitySettings
from hermes_pipeline.sinks.observability_store import attach_store
from hermes_pipeline.testing import chat_response

home = Path(sys.argv[1])
engine = Engine()
handle = attach_store(engine, home, ObservabilitySettings(audit_enabled=True))
host = Host(engine, model="m1", provider="openai")
started = time.monotonic()
with host.session() as session:
    for i in range(3):
        with session.turn(f"question {i}") as turn:
            turn.call_llm({"model": "m1", "messages": [{"role": "user", "content": "q"}]},
                          lambda request: chat_response("answer"))
            turn.call_tool("read_file", {"path": "f"}, lambda path: "text", tool_call_id=f"c{i}")
            turn.complete("done")
turns = time.monotonic() - started
started = time.monotonic()
handle.close()
closed = time.monotonic() - started
print(json.dumps({"turns": turns, "close": closed, "stats": dict(handle.sink.stats())}, default=str), flush=True)
'''

EXIT_CHILD = r'''
import sys
from pathlib import Path
from hermes_pipeline.config.discovery import PipelineSettings
from hermes_pipeline.profile import open_profile
from hermes_pipeline.testing import chat_response

root = Path(sys.argv[1])
settings = PipelineSettings(xdg_config_home=str(root / "no-user-config"), home=str(root),
                            system_plugins_toml=str(root / "no-system.toml"), plugins_toml=None)
profile = open_profile(root / "hermes-home", settings=settings)
host = profile.host(platform="cli", model="m", provider="p")
with host.session() as session:
    with session.turn("question") as turn:
        turn.call_llm({"model": "m", "messages": [{"role": "user", "content": "q"}]}, lambda r: chat_response("a"))
        turn.call_tool("read_file", {"path": "f"}, lambda path: "text", tool_call_id="c1")
        turn.complete("done")
print("turns done", flush=True)
sys.exit(0)  # the profile closes at exit (atexit): it must not wait for the scan lock for ever
'''


def _hold(lock: Path) -> int:
    lock.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def test_store_close_with_the_scan_lock_held_for_ever_ends_in_its_deadline_and_counts_the_loss(tmp_path: Path) -> None:
    """BOOK-25/FMT-85: the child's turns stay fast, its store closes within the 5 s deadline (bound asserted
    generously), every row not written is counted in ``rows_lost`` and the failures in ``write_failures``; what
    ``write-failures.json`` could not get (the lock held) is counted in ``record_unsaved``."""
    home = tmp_path / "home"
    fd = _hold(home / "observability" / ".scan.lock")
    try:
        started = time.monotonic()
        child = subprocess.run([sys.executable, "-c", CLOSE_CHILD, str(home)], capture_output=True, text=True,
                               timeout=120)
        elapsed = time.monotonic() - started
    finally:
        os.close(fd)
    assert child.returncode == 0, child.stderr[-2000:]
    report = json.loads(child.stdout.strip().splitlines()[-1])
    assert elapsed < 20 and report["close"] < 10 and report["turns"] < 5
    stats = report["stats"]
    assert stats["rows_written"] == 0 and stats["rows_lost"] > 0 and stats["write_failures"] > 0
    assert stats["rows_lost_by_kind"].get("locked", 0) > 0 or stats["rows_lost_by_kind"].get("queue", 0) > 0
    assert stats["record_unsaved"] > 0 and stats["record_lock_timeouts"] > 0


@pytest.mark.parametrize("release_before_exit", [False, True])
def test_process_exit_with_the_scan_lock_held_ends_within_the_bound(tmp_path: Path, release_before_exit: bool) -> None:
    """FMT-85: a Hermes process whose store cannot take the scan lock exits by itself within the bound (it hung
    for ever before the fix) and warns about the rows it lost; with the lock free the same run writes its rows."""
    home = tmp_path / "hermes-home"
    home.mkdir()
    (home / "config.yaml").write_text("observability:\n  audit: {enabled: true}\n", encoding="utf-8")
    fd = _hold(home / "observability" / ".scan.lock")
    try:
        if release_before_exit:
            os.close(fd)
        started = time.monotonic()
        child = subprocess.run([sys.executable, "-c", EXIT_CHILD, str(tmp_path)], capture_output=True, text=True,
                               timeout=120)
        elapsed = time.monotonic() - started
    finally:
        if not release_before_exit:
            os.close(fd)
    assert child.returncode == 0 and "turns done" in child.stdout, child.stderr[-2000:]
    assert elapsed < 20
    log_file = home / "logs" / "hermes-pipeline.jsonl"  # made at the first warning
    log = log_file.read_text(encoding="utf-8") if log_file.exists() else ""
    events = {json.loads(line).get("event") for line in log.splitlines() if line.strip()}
    if release_before_exit:
        assert "observability_store_rows_lost" not in events
    else:
        assert "observability_store_rows_lost" in events or "observability_store_write_failed" in events
        assert "observability_failure_record_unsaved" in events
