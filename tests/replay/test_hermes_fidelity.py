"""An unchanged Hermes run replays ``identical`` with retries and approvals too (issue #28 item 2; spec 06
BOOK-31a, BOOK-33): the real ``hermes`` records against the scripted model server, then replays offline in a
network namespace with Hermes' own loop."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline.replay import load_trajectory

from ._hermes import HERMES, Recorded, record, replay, tree_digest

pytestmark = pytest.mark.skipif(HERMES is None, reason="needs the hermes command (pip install '.[hermes]')")


def _replays_identical(run: Recorded, tmp_path: Path) -> dict[str, Any]:
    tmp_path.mkdir(exist_ok=True)
    before, requests = tree_digest(run.home), len(run.server.requests)
    output = tmp_path / "replayed.json"
    done = replay([str(run.path), "--home", str(run.home), "--output", str(output)], tmp_path)
    assert done.returncode == 0 and done.stdout.splitlines()[-1] == "identical", done.stdout + done.stderr
    assert tree_digest(run.home) == before and len(run.server.requests) == requests  # no profile change, no network
    return load_trajectory(output)


def test_book_31a_a_run_with_a_provider_retry_replays_identical(tmp_path: Path) -> None:
    """The provider answers 503 once, Hermes retries and goes on: the recording keeps the failed attempt, and the
    replay serves the same failure and the same retry, so the run is ``identical``."""
    work = tmp_path / "rec" / "work"
    run = record(tmp_path / "rec", [
        {"error_status": 503, "error_message": "overloaded"},
        {"tool_calls": [{"name": "read_file", "arguments": {"path": str(work / "notes.txt")}, "id": "call_read"}]},
        "Your notes say: buy milk.",
    ], "What do my notes say?")
    try:
        recorded = load_trajectory(run.path)
        attempts = [a for s in recorded["steps"] for a in ((s.get("extra") or {}).get("hermes") or {})
                    .get("failed_attempts") or []]
        assert attempts and attempts[0]["status_code"] == 503
        new = _replays_identical(run, tmp_path / "replay")
        assert new["extra"]["hermes"]["replay"]["diverged_at_step"] is None
    finally:
        run.server.close()


def test_book_31a_a_run_with_an_approval_replays_identical(tmp_path: Path) -> None:
    """A ``terminal`` command Hermes flags as dangerous asks for an approval nobody gives (manual mode, a 2 s
    timeout): the recorded denial is served again and the run replays ``identical`` without running anything."""
    work = tmp_path / "rec" / "work"
    run = record(tmp_path / "rec", [
        {"tool_calls": [{"name": "terminal", "arguments": {"command": f"rm -rf {work / 'junk'}"}, "id": "call_rm"}]},
        "I could not tidy up: the command was not approved.",
    ], "Tidy up my junk folder.", config="approvals:\n  mode: manual\n  timeout: 2\n")
    try:
        (run.work / "junk").mkdir()
        recorded = load_trajectory(run.path)
        approvals = [r["extra"]["hermes"]["approval"] for s in recorded["steps"]
                     for r in (s.get("observation") or {}).get("results", []) if "approval" in (r.get("extra") or {})
                     .get("hermes", {})]
        assert approvals and approvals[0]["decided_by"] == "timeout"
        _replays_identical(run, tmp_path / "replay")
        assert (run.work / "junk").is_dir()  # nothing was run again
    finally:
        run.server.close()
