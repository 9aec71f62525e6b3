"""Runs ``scripts/smoke_shared_metrics.py`` as CI would (SM-94, SM-95, SM-96)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "smoke_shared_metrics.py"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, str(SCRIPT), *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)


def test_sm94_sm95_smoke_script_passes(tmp_path: Path) -> None:
    done = _run("--home", str(tmp_path / "home"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASS" in done.stdout and "FAIL" not in done.stdout
    assert list((tmp_path / "home" / "telemetry" / "shared_metrics" / "outbox").glob("*.json"))


def test_sm95_smoke_script_fails_when_a_canary_leaks() -> None:
    done = _run("--self-test-leak")
    assert done.returncode == 1
    assert "FAIL no canary" in done.stdout and "PROMPT_CANARY" in done.stdout
