"""The demo ends with the command that opens its profile in the dashboard, and that profile (written
by the real trajectory store and observability store) renders on every route (spec 06 BOOK-40)."""

from __future__ import annotations

import io
import shlex
import urllib.request
from pathlib import Path

from hermes_pipeline.demo.run import print_report, run_demo

from ._profile import serving


def test_the_demo_prints_the_dashboard_command_and_its_profile_renders(tmp_path: Path) -> None:
    """BOOK-40: the demo's profile in the dashboard: its runs, sessions, skill and memory changes."""
    result = run_demo(tmp_path / "demo")
    out = io.StringIO()
    print_report(result, out)
    last = out.getvalue().rstrip("\n").splitlines()[-1]
    command = shlex.split(last.split(": ", 1)[1])
    assert command[:2] == ["hermes-pipeline", "dashboard"] and "--open" in command
    home = Path(command[command.index("--home") + 1])
    assert home == tmp_path / "demo" / "hermes-home" and (home / "observability" / "observability.sqlite3").is_file()
    with serving(home) as server:
        base = server.url.rstrip("/")
        pages = {route: urllib.request.urlopen(base + route, timeout=10).read().decode()
                 for route in ("/", "/sessions", "/skills", "/memory")}
        assert "from store" in pages["/sessions"] and "<td><a href=\"/skills/weekly-summary\">weekly-summary</a></td><td>Weekly summary</td>" in pages["/skills"]
        assert "memories/USER.md" in pages["/memory"] and "user-direct" in pages["/memory"]
        runs = [p.name[11:47] for p in sorted((home / "trajectories").glob("*.json"))]
        assert runs and all(f'href="/trajectories/{tid}"' in pages["/"] for tid in runs)
        tree = urllib.request.urlopen(f"{base}/trajectories/{runs[0]}", timeout=10).read().decode()
        assert '<details class="step" id="step-' in tree
