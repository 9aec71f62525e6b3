"""The dashboard on a profile written by a real Hermes Agent 0.19 (``hermes chat -Q -q`` against the
local model server, the bridge enabled with the observability store and the trajectory store on):
the session Hermes stored, its messages, its run and its trajectory (spec 06 BOOK-39, BOOK-40).

Skipped when the ``hermes`` command is not installed (``pip install '.[hermes]'``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from ._profile import serving

HERMES = shutil.which("hermes")
pytestmark = pytest.mark.skipif(HERMES is None, reason="the hermes command (hermes-agent 0.19) is not installed; "
                                                       "pip install '.[hermes]'")
ANSWER = "Your notes say <script>document.title='pwned'</script>"


def _page(base: str, route: str) -> str:
    with urllib.request.urlopen(base + route, timeout=10) as response:
        return str(response.read().decode())


def test_a_real_hermes_profile_in_the_dashboard(tmp_path: Path) -> None:
    """BOOK-39, BOOK-40: Hermes' own state.db, the bridge's store rows and trajectory, joined by session id."""
    (tmp_path / "script.json").write_text(json.dumps([ANSWER]))
    server = subprocess.Popen([sys.executable, "-m", "hermes_pipeline.demo.model_server", "--script",
                               str(tmp_path / "script.json"), "--port", "0"], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        port = re.search(r"port (\d+)", server.stdout.readline())
        assert port is not None
        home, work = tmp_path / "home", tmp_path / "work"
        for d in (home, work, tmp_path / "user"):
            d.mkdir()
        (home / "config.yaml").write_text(
            f"model:\n  provider: custom\n  default: hermes-demo-1\n  base_url: http://127.0.0.1:{port.group(1)}/v1\n"
            "  api_key: unused\nauxiliary:\n  title_generation:\n    enabled: false\nplugins:\n  enabled:\n"
            "    - hermes_pipeline\nobservability:\n  audit:\n    enabled: true\n  trajectories:\n    enabled: true\n")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "OPENAI_", "OTEL_"))}
        env.update(HOME=str(tmp_path / "user"), HERMES_HOME=str(home), NO_COLOR="1", HERMES_ACCEPT_HOOKS="1")
        run = subprocess.run([HERMES or "hermes", "chat", "-Q", "-q", "What do my notes say? <b>x</b>"], cwd=work,
                             env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180)
    finally:
        server.terminate()
        server.wait(timeout=10)
    match = re.search(r"session_id:\s*(\S+)", run.stdout + run.stderr)
    assert run.returncode == 0 and match is not None, run.stderr[-2000:]
    session_id = match.group(1)
    runs = [p.name[11:47] for p in (home / "trajectories").glob("*.json")]
    assert len(runs) == 1
    with serving(home) as dashboard:
        base = dashboard.url.rstrip("/")
        listing = _page(base, "/sessions")
        assert "from state.db" in listing and f'href="/sessions/{session_id}"' in listing
        session = _page(base, f"/sessions/{session_id}")
        assert "What do my notes say? &lt;b&gt;x&lt;/b&gt;" in session
        assert "Your notes say &lt;script&gt;document.title=&#x27;pwned&#x27;&lt;/script&gt;" in session
        assert f'href="/trajectories/{runs[0]}"' in session and "success" in session
        today = _page(base, "/")
        assert f'href="/trajectories/{runs[0]}"' in today
        tree = _page(base, f"/trajectories/{runs[0]}")
        assert '<details class="step" id="step-' in tree and "hermes-demo-1" in tree
