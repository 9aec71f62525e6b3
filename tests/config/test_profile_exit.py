"""A host that opens a profile and simply exits (no ``profile.close()``, no ``release_all()``) loses nothing: at
interpreter exit every open profile is closed, so its first-party consumers (here the trajectory store, BOOK-28)
write what they hold. Real processes, since only a real interpreter exit runs the exit path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = textwrap.dedent("""
    from hermes_pipeline.profile import open_profile

    profile = open_profile()
    with profile.host(model="m", platform="cli").session() as session:
        for n in range(3):
            with session.turn(f"question {n}") as turn:
                turn.complete(f"answer {n}")
    # no profile.close(): the process just ends
""")


def test_book_28_an_open_profile_is_closed_at_exit_and_its_trajectory_written(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text("observability:\n  trajectories:\n    enabled: true\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "OTEL_"))}
    env["HERMES_HOME"] = str(home)
    for _ in range(3):  # a race lost at exit would show up in some of the runs
        subprocess.run([sys.executable, "-c", SCRIPT], env=env, cwd=tmp_path, check=True, timeout=120)
    files = sorted((home / "trajectories").glob("*.json"))
    questions = sorted(s["message"] for path in files for s in json.loads(path.read_text())["steps"]
                       if s.get("source") == "user")
    assert questions == sorted(f"question {n}" for n in range(3) for _ in range(3))  # one run per turn, none lost
