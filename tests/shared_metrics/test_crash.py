"""Crash safety (SM-54, SM-55, SM-56): a process killed with SIGKILL while counting and writing packages
leaves no partial package file and loses no acknowledged counter."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from hermes_pipeline.shared_metrics import MetricsStore, package_errors
from hermes_pipeline.shared_metrics import packages as pk

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")


def run_and_kill(home: Path, acks_before_kill: int, point: str | None = None) -> int:
    """Start the child, wait for ``acks_before_kill`` acknowledgements (or for it to reach the crash
    ``point``), SIGKILL it; returns the last acknowledged total."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    child = subprocess.Popen([sys.executable, "-m", "tests.shared_metrics._crash_child", str(home),
                              *([point] if point else [])], cwd=ROOT, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    acked = 0
    try:
        assert child.stdout is not None
        while True:
            line = child.stdout.readline()
            if not line:
                raise AssertionError(f"child died early: {child.stderr.read() if child.stderr else ''}")
            if line.startswith("AT "):
                break
            acked = int(line.split()[1])
            acks_before_kill -= 1
            if point is None and acks_before_kill <= 0:
                break
        child.send_signal(signal.SIGKILL)  # the child is somewhere in its next round, at a random point
        child.wait(30)
        for line in child.stdout:  # acknowledgements written just before the kill still count
            if line.startswith("ACK"):
                acked = int(line.split()[1])
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == -signal.SIGKILL
    return acked


def check_invariants(store: MetricsStore, acked: int, runs: int, *, recovered: bool) -> None:
    conn = store.connect()
    rows = {r[0]: (r[1], r[2]) for r in conn.execute("SELECT package_id, payload_json, exported_at FROM package_outbox")}
    counters = conn.execute("SELECT value, packaged_value FROM counter_aggregates "
                            "WHERE metric_name = 'hermes.model_route.count'").fetchall()
    conn.close()
    # no partial file: every package file is complete, valid, and exactly its committed row's bytes
    for path in store.outbox.glob("*.json"):
        package_id = path.stem
        assert package_id in rows, f"file without a committed package row: {path.name}"
        data = path.read_bytes()
        assert data == pk.file_bytes(rows[package_id][0]), f"partial or foreign bytes in {path.name}"
        assert package_errors(json.loads(data)) == []
    for package_id, (_, exported_at) in rows.items():
        if exported_at is not None:
            assert (store.outbox / f"{package_id}.json").is_file()
    # no counter lost: everything acknowledged is there, and packaged deltas add up exactly
    total = sum(value for value, _ in counters)
    assert acked <= total <= acked + 40 * runs  # at most the unacknowledged round in flight per run
    assert all(0 <= packaged <= value for value, packaged in counters)
    packaged_sum = sum(m["value"] for payload_json, _ in rows.values()
                       for m in json.loads(payload_json)["metrics"] if m["name"] == "hermes.model_route.count")
    assert packaged_sum == sum(packaged for _, packaged in counters)
    if recovered:
        assert [p.name for p in store.outbox.iterdir() if not p.name.endswith(".json")] == []
        assert all(exported_at is not None for _, exported_at in rows.values())


@pytest.mark.parametrize("point", ["in-transaction", "mid-write", "before-rename", "after-rename"])
def test_sm54_sm55_sigkill_at_each_step_of_writing_a_package(tmp_path: Path, point: str) -> None:
    """Killed inside the packaging transaction, halfway through the temporary file, before and after the
    rename: no package file is ever partial, nothing acknowledged is lost, and the next export recovers."""
    home = tmp_path / "home"
    store = MetricsStore(home)
    acked = run_and_kill(home, 0, point)
    leftovers = [p.name for p in store.outbox.iterdir() if not p.name.endswith(".json")]
    if point in ("mid-write", "before-rename"):
        assert leftovers, "the crash point should have left a temporary file behind"
    check_invariants(store, acked, 1, recovered=False)
    result = pk.package_and_export(store, datetime(2026, 9, 2, tzinfo=UTC), force=True)
    assert result.error is None
    check_invariants(store, acked, 1, recovered=True)


@pytest.mark.parametrize("seed", range(2))
def test_sm54_sm55_sigkill_while_writing_packages_leaves_no_partial_file_and_loses_no_counter(
        tmp_path: Path, seed: int) -> None:
    home = tmp_path / "home"
    store = MetricsStore(home)
    rng = random.Random(seed)
    acked = 0
    for runs in (1, 2):  # kill, restart on the same store, kill again
        acked += run_and_kill(home, rng.randint(1, 6))
        check_invariants(store, acked, runs, recovered=False)
    result = pk.package_and_export(store, datetime(2026, 9, 2, tzinfo=UTC), force=True)  # within retention
    assert result.error is None
    check_invariants(store, acked, 2, recovered=True)
    conn = store.connect()
    value, packaged = conn.execute("SELECT SUM(value), SUM(packaged_value) FROM counter_aggregates").fetchone()
    conn.close()
    assert value == packaged  # recovery packaged every remaining delta exactly once
