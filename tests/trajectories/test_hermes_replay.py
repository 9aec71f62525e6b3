"""A real Hermes Agent run through the bridge, recorded by the trajectory store alone (no pipeline file),
replayed offline with the reference agent (spec 06 BOOK-28, BOOK-31, BOOK-33). Skipped without
``hermes-agent`` (``pip install '.[hermes]'``)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from hermes_pipeline.cli.main import main

from ._support import no_network, only_file

HERMES = shutil.which("hermes")
pytestmark = pytest.mark.skipif(HERMES is None, reason="hermes-agent is not installed")


def test_book_28_31_a_hermes_run_is_recorded_and_replays_identically(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """BOOK-28: with only ``observability.trajectories.enabled`` (no pipeline file) the bridge starts and the
    store records Hermes' turn; BOOK-31 / BOOK-33: the reference agent replays it offline, ``identical``,
    although Hermes' long system prompt was cut by the sanitizer in the recorded requests."""
    work, home = tmp_path / "work", tmp_path / "hermes"
    for d in (work, home, tmp_path / "user"):
        d.mkdir()
    (work / "notes.txt").write_text("buy milk\n")
    script = tmp_path / "script.yaml"
    script.write_text(textwrap.dedent(f"""\
        steps:
          - tool_calls: [{{name: read_file, arguments: {{path: {work / 'notes.txt'}}}, id: call_read}}]
          - "Your notes say: buy milk."
        """))
    server = subprocess.Popen([sys.executable, "-m", "hermes_pipeline.demo.model_server", "--script", str(script),
                               "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        port = re.search(r"port (\d+)", server.stdout.readline())
        assert port is not None
        (home / "config.yaml").write_text(textwrap.dedent(f"""\
            model: {{provider: custom, default: hermes-demo-1, base_url: "http://127.0.0.1:{port.group(1)}/v1",
                     api_key: unused}}
            auxiliary: {{title_generation: {{enabled: false}}}}
            observability: {{trajectories: {{enabled: true}}}}
            plugins: {{enabled: [hermes_pipeline]}}
            """))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "OPENAI_", "OTEL_"))}
        env.update(HOME=str(tmp_path / "user"), HERMES_HOME=str(home), NO_COLOR="1", HERMES_ACCEPT_HOOKS="1")
        done = subprocess.run([HERMES or "hermes", "chat", "-Q", "-q", "What do my notes say?"], cwd=work, env=env,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180)
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert done.returncode == 0 and "buy milk" in done.stdout, done.stderr[-2000:]
    path = only_file(home / "trajectories")
    with no_network() as attempts:
        code = main(["replay", str(path), "--home", str(home), "--output", str(tmp_path / "replayed.json")])
    out = capsys.readouterr().out
    assert attempts == [] and code == 0 and out.splitlines()[-1] == "identical", out
