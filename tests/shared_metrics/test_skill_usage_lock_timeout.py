"""A hung peer holding ``skills/.usage.json.lock`` never stalls the host's thread (SM-31, SM-32; the reporter
runs on the agent's thread): a load or mutation waits at most ``LOCK_TIMEOUT``, is still reported, and the update
the usage state could not take is counted (``SkillReporter.unsaved``), never written without the lock.

The peer is a real process holding a real ``flock``; ordered by a pipe, never by sleeps."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from hermes_pipeline import Engine
from hermes_pipeline.shared_metrics import SkillReporter

LOCK_HOLDER = r'''
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
sys.stdin.readline()
'''


def test_a_held_usage_lock_delays_a_skill_event_boundedly_and_the_unsaved_update_is_counted(tmp_path: Path) -> None:
    """SM-31/SM-32: with the lock held by another process the events still go out within the bound; the usage
    state keeps what it had and ``unsaved`` counts the updates it missed; after the peer lets go it is updated."""
    engine = Engine()
    seen: list[dict[str, object]] = []
    engine.register_hook("on_skill_lifecycle", lambda **payload: seen.append(payload))
    skills = SkillReporter(tmp_path, engine=engine)
    skills.created("etl")
    (tmp_path / "skills").mkdir(exist_ok=True)
    peer = subprocess.Popen([sys.executable, "-c", LOCK_HOLDER, str(tmp_path / "skills" / ".usage.json.lock")],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert peer.stdout is not None and peer.stdin is not None
        assert peer.stdout.readline().strip() == "held"
        started = time.monotonic()
        use = skills.loaded("etl")
        skills.patched("etl")
        assert time.monotonic() - started < 10  # two waits of LOCK_TIMEOUT at most, never for ever
        assert (use.use_count, use.reused) == (1, False) and skills.unsaved == 2
        state = json.loads((tmp_path / "skills" / ".usage.json").read_text())
        assert state["skills"]["etl"]["use_count"] == 0 and state["skills"]["etl"]["patch_generation"] == 0
        peer.stdin.write("release\n")
        peer.stdin.flush()
        assert peer.wait(timeout=30) == 0
    finally:
        peer.kill()
        peer.wait()
    assert skills.loaded("etl").use_count == 1
    assert [p.get("action") for p in seen] == ["created", "loaded", "patched", "loaded"]  # every one reported
