"""Why a real Hermes run failed, on the dashboard (issue #31, deliverable 1): ``hermes chat -Q -q`` (Hermes Agent
0.19, the bridge on, both stores on) against the scripted model server, which answers HTTP 503 (retried), then
asks for a ``terminal`` command that exits 3 and a ``read_file`` of a missing file, then answers HTTP 429
(retried) and HTTP 400, which fails the turn. The run page shows each failed attempt with its HTTP status and
the provider's message, the command with its exit code and output, the failed tool with its error, and the
turn's cause; ``/failures`` lists all of them with their messages (spec 06 BOOK-25, BOOK-38; FMT-66).

Skipped when the ``hermes`` command is not installed (``pip install '.[hermes]'``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import textwrap
import urllib.request
from pathlib import Path

import pytest

from ._profile import serving

HERMES = shutil.which("hermes")
pytestmark = pytest.mark.skipif(HERMES is None, reason="the hermes command (hermes-agent 0.19) is not installed; "
                                                       "pip install '.[hermes]'")
SCRIPT = """\
steps:
  - {error_status: 503, error_message: "upstream overloaded, shard 7", retry_after: 0}
  - tool_calls:
      - {name: terminal, arguments: {command: "echo cannot reach the database; exit 3"}, id: call_exit}
      - {name: read_file, arguments: {path: "no/such/notes.txt"}, id: call_missing}
  - {error_status: 429, error_message: "rate limit: 3 requests per minute", retry_after: 0}
  - {error_status: 400, error_message: "unsupported parameter: temperature=9"}
  - {error_status: 400, error_message: "unsupported parameter: temperature=9"}
  - {error_status: 400, error_message: "unsupported parameter: temperature=9"}
"""


def _page(base: str, route: str) -> str:
    with urllib.request.urlopen(base + route, timeout=10) as response:
        return str(response.read().decode())


@pytest.fixture(scope="module")
def failed_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The profile of one real Hermes turn that failed as described above."""
    tmp = tmp_path_factory.mktemp("hermes-failing")
    (tmp / "script.yaml").write_text(SCRIPT, encoding="utf-8")
    server = subprocess.Popen([sys.executable, "-m", "hermes_pipeline.demo.model_server", "--script",
                               str(tmp / "script.yaml"), "--port", "0"], stdout=subprocess.PIPE, text=True)
    home, work = tmp / "home", tmp / "work"
    try:
        assert server.stdout is not None
        port = re.search(r"port (\d+)", server.stdout.readline())
        assert port is not None
        for d in (home, work, tmp / "user"):
            d.mkdir()
        (home / "config.yaml").write_text(textwrap.dedent(f"""\
            model:
              provider: custom
              default: hermes-demo-1
              base_url: http://127.0.0.1:{port.group(1)}/v1
              api_key: unused
            auxiliary:
              title_generation:
                enabled: false
            agent:
              api_max_retries: 3
            plugins:
              enabled:
                - hermes_pipeline
            observability:
              audit:
                enabled: true
              trajectories:
                enabled: true
            """), encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "OPENAI_", "OTEL_"))}
        env.update(HOME=str(tmp / "user"), HERMES_HOME=str(home), NO_COLOR="1", HERMES_ACCEPT_HOOKS="1",
                   HERMES_YOLO_MODE="1")
        subprocess.run([HERMES or "hermes", "chat", "-Q", "-q", "check the database"], cwd=work, env=env,
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=240)
    finally:
        server.terminate()
        server.wait(timeout=10)
    return home


def _rows(home: Path, sql: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(home / "observability" / "observability.sqlite3") as db:
        return list(db.execute(sql))


def test_the_store_and_the_trajectory_keep_every_message(failed_run: Path) -> None:
    """BOOK-25 (schema 5), FMT-66: the provider's words on each failed attempt and on the run, the tool's error,
    the command's exit code and output."""
    llm = _rows(failed_run, "SELECT error_type, error_message FROM llm_calls WHERE status = 'error' ORDER BY id")
    text = json.dumps(llm)
    assert "upstream overloaded, shard 7" in text and "rate limit: 3 requests per minute" in text
    assert "unsupported parameter: temperature=9" in text
    ((outcome, run_message),) = _rows(failed_run, "SELECT outcome, error_message FROM task_runs")
    assert outcome == "failed" and "unsupported parameter: temperature=9" in str(run_message)
    tools = {r[0]: r for r in _rows(failed_run, "SELECT tool_call_id, error_type, exit_code, error_message "
                                                "FROM tool_errors")}
    assert tools["call_exit"][1:3] == ("command_failed", 3) and "cannot reach the database" in str(tools["call_exit"][3])
    assert tools["call_missing"][3], tools  # the failed read says why
    (path,) = (failed_run / "trajectories").glob("*.json")
    doc = json.loads(path.read_text(encoding="utf-8"))
    attempts = [a for s in doc["steps"] for a in ((s.get("extra") or {}).get("hermes") or {}).get("failed_attempts", [])]
    assert {a.get("status_code") for a in attempts} >= {503, 429, 400}
    assert all(a.get("message") for a in attempts)


def test_the_run_page_and_failures_say_why(failed_run: Path) -> None:
    """BOOK-38: the run page and ``/failures`` show the type and the message of every failure, the command's exit
    code included."""
    (path,) = (failed_run / "trajectories").glob("*.json")
    tid = path.name[11:47]
    with serving(failed_run) as dashboard:
        base = dashboard.url.rstrip("/")
        run = _page(base, f"/trajectories/{tid}")
        failures = _page(base, "/failures")
    assert re.search(r"<dt>error</dt><dd><b class=\"errtype\">[a-z_]+</b>: <span class=\"errmsg\">[^<]*unsupported "
                     r"parameter: temperature=9", run.replace('\\"', '"'))
    assert re.search(r"\(HTTP 503\): [^<]*upstream overloaded, shard 7", run)
    assert re.search(r"\(HTTP 429\): [^<]*rate limit: 3 requests per minute", run)
    assert re.search(r'id="call-call_exit" open>.*?exit 3 failed.*?<span class="errmsg">[^<]*cannot reach the '
                     r"database", run, re.S)
    assert re.search(r'id="call-call_missing" open>.*?<span class="errmsg">', run, re.S)
    for text in ("upstream overloaded, shard 7", "rate limit: 3 requests per minute",
                 "unsupported parameter: temperature=9", "cannot reach the database"):
        assert text in failures, text
    assert re.search(r"<td>3</td>", failures)  # the command's exit code
    # every failed provider attempt is linked to the step that holds it, a request that never succeeded too
    for (request,) in _rows(failed_run, "SELECT api_request_id FROM llm_calls WHERE status = 'error'"):
        assert f'href="/trajectories/{tid}#req-{request}"' in failures and f'<a id="req-{request}"></a>' in run
