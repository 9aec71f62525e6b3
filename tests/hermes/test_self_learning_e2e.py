"""The real Hermes Agent rewriting its own skills and memory, read back from the observability store (issue #27).

Each test runs the installed ``hermes chat -Q -q`` (and ``--resume``) against the project's scripted model
server, in a Hermes profile under ``tmp_path`` with the bridge enabled and ``observability.audit.enabled``
on, drives ``skill_manage`` and ``memory`` with every action and shape Hermes' tool schemas have, and reads
``skill_history`` / ``memory_changes`` back (BOOK-18, BOOK-19, BOOK-21, BOOK-22), through ``audit skills
history`` too. Helpers come from ``tests/hermes/test_bridge_e2e.py``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.hermes.test_bridge_e2e import HERMES, _config, _start_model_server, _stop, pytestmark  # noqa: F401

SKILL_V1 = "---\nname: csv-report\ndescription: Build a CSV report\n---\n# Steps\n1. Load the data\n2. Write report.csv\n"
SKILL_V3 = "---\nname: csv-report\ndescription: Build a CSV report\n---\n# Steps\n1. Load\n2. Check\n3. Write\n"
OLD_ENTRY = "The user's build runs on Python 3.10 with poetry"
REDACTED = re.compile(r"<redacted(:[0-9a-f]{4,})?>")


def _audit_config(home: Path, port: int) -> None:
    _config(home, port, enabled=["hermes_pipeline"])
    with open(home / "config.yaml", "a", encoding="utf-8") as fh:
        fh.write("observability:\n  audit:\n    enabled: true\n")


def _script(path: Path, calls: list[tuple[str, dict[str, Any]]], final: str = "done") -> Path:
    steps: list[Any] = [{"tool_calls": [{"name": name, "arguments": args, "id": f"call_{i}"}]}
                        for i, (name, args) in enumerate(calls)]
    steps.append(final)
    path.write_text(json.dumps({"steps": steps}), encoding="utf-8")
    return path


def _run(tmp: Path, home: Path, prompt: str, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "OPENAI_", "OTEL_"))}
    env.update(HOME=str(tmp / "user"), HERMES_HOME=str(home), NO_COLOR="1", HERMES_ACCEPT_HOOKS="1")
    (tmp / "user").mkdir(exist_ok=True)
    (tmp / "work").mkdir(exist_ok=True)
    proc = subprocess.run([HERMES or "hermes", "chat", "-Q", *extra, "-q", prompt], cwd=tmp / "work", env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def _session(proc: subprocess.CompletedProcess[str]) -> str:
    match = re.search(r"session_id:\s*(\S+)", proc.stdout + proc.stderr)
    assert match, proc.stdout[-2000:]
    return match.group(1)


def _rows(home: Path, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    with sqlite3.connect(home / "observability" / "observability.sqlite3") as db:
        return list(db.execute(sql, params))


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _session_with(tmp: Path, home: Path, calls: list[tuple[str, dict[str, Any]]], prompt: str,
                  *extra: str) -> str:
    server, port = _start_model_server(_script(tmp / f"script-{len(list(tmp.glob('script-*')))}.json", calls))
    try:
        _audit_config(home, port)
        return _session(_run(tmp, home, prompt, *extra))
    finally:
        _stop(server)


def test_every_skill_manage_action_in_a_category_is_a_version(tmp_path: Path) -> None:
    """BOOK-18/BOOK-19 with Hermes: create (category ``data``), patch of SKILL.md and of a supporting file,
    edit, write_file, remove_file and delete each give one row: versions 1..n, the action, the session, the
    SKILL.md hashes before and after (equal to the files Hermes wrote), where the skill lives and which file
    changed; ``audit skills history`` lists them."""
    home = tmp_path / "hermes"
    skill_md = home / "skills" / "data" / "csv-report" / "SKILL.md"
    calls = [
        ("skill_manage", {"action": "create", "name": "csv-report", "category": "data", "content": SKILL_V1,
                          "reason": "reports are requested weekly"}),
        ("skill_manage", {"action": "patch", "name": "csv-report", "old_string": "2. Write report.csv",
                          "new_string": "2. Write report.csv with a header row"}),
        ("skill_manage", {"action": "write_file", "name": "csv-report", "file_path": "references/columns.md",
                          "file_content": "date, amount\n"}),
        ("skill_manage", {"action": "patch", "name": "csv-report", "file_path": "references/columns.md",
                          "old_string": "amount", "new_string": "amount, currency"}),
        ("skill_manage", {"action": "edit", "name": "csv-report", "content": SKILL_V3}),
        ("skill_manage", {"action": "remove_file", "name": "csv-report", "file_path": "references/columns.md"}),
    ]
    session = _session_with(tmp_path, home, calls, "Make a csv-report skill and refine it.")
    assert skill_md.read_text(encoding="utf-8") == SKILL_V3
    v3 = _sha(skill_md)
    history = _rows(home, "SELECT version, change_type, hermes_action, reason, trigger_session_id, skill_path, "
                          "changed_files, before_hash IS NULL, after_hash FROM skill_history "
                          "WHERE skill_name = 'csv-report' ORDER BY version")
    assert [r[:3] for r in history] == [(1, "create", "created"), (2, "refine", "patched"),
                                        (3, "refine", "file_written"), (4, "refine", "patched"),
                                        (5, "refine", "edited"), (6, "refine", "file_removed")]
    assert history[0][3] == "reports are requested weekly" and all(r[3] is None for r in history[1:])
    assert {r[4] for r in history} == {session}
    assert {r[5] for r in history} == {"data/csv-report"}
    assert [json.loads(r[6]) for r in history] == [["SKILL.md"], ["SKILL.md"], ["references/columns.md"],
                                                   ["references/columns.md"], ["SKILL.md"], ["references/columns.md"]]
    assert history[0][7] == 1 and all(r[7] == 0 for r in history[1:])  # no before_hash on create only
    assert history[-1][8] == v3 and history[4][8] == v3
    chain = _rows(home, "SELECT before_hash, after_hash FROM skill_history WHERE skill_name = 'csv-report' "
                        "ORDER BY version")
    assert all(chain[i][0] == chain[i - 1][1] for i in range(1, len(chain)))  # each version starts where one ended

    from hermes_pipeline.cli.main import main as cli

    assert cli(["audit", "skills", "history", "csv-report", "--home", str(home), "--json"]) == 0

    # a later session deletes it (absorbed into another skill): a deprecate row with no after_hash
    other = "---\nname: reports\ndescription: All reports\n---\n# Reports\nUse csv-report steps.\n"
    session2 = _session_with(tmp_path, home, [
        ("skill_manage", {"action": "create", "name": "reports", "content": other}),
        ("skill_manage", {"action": "delete", "name": "csv-report", "absorbed_into": "reports"})],
        "Merge the skills.")
    assert not skill_md.parent.exists()
    assert _rows(home, "SELECT version, change_type, hermes_action, reason, trigger_session_id, before_hash, "
                       "after_hash FROM skill_history WHERE skill_name = 'csv-report' AND version > 6") == \
        [(7, "deprecate", "deleted", "absorbed into reports", session2, v3, None)]
    assert _rows(home, "SELECT change_type, hermes_action, skill_path FROM skill_history "
                       "WHERE skill_name = 'reports'") == [("create", "created", "reports")]
    # no rescan claimed any of it
    assert _rows(home, "SELECT COUNT(*) FROM skill_history WHERE trigger_session_id IS NULL") == [(0,)]


def test_hand_edits_between_runs_are_rows(tmp_path: Path) -> None:
    """A hand edit of a categorised SKILL.md, a hand edit of a supporting file, a skill dropped in by hand
    (nested two folders deep) and a skill removed by hand, all while Hermes is stopped, are rows at the
    next start (``external_edit`` / ``discovered`` / ``external_delete``, no session); the agent's own
    change in that run stays the agent's (``--resume`` of the first session)."""
    home = tmp_path / "hermes"
    session = _session_with(tmp_path, home, [
        ("skill_manage", {"action": "create", "name": "etl", "category": "data", "content": SKILL_V1}),
        ("skill_manage", {"action": "write_file", "name": "etl", "file_path": "templates/job.yaml",
                          "file_content": "steps: []\n"}),
        ("skill_manage", {"action": "create", "name": "scratch", "content": SKILL_V1})], "Make skills.")
    skill_dir = home / "skills" / "data" / "etl"
    (skill_dir / "SKILL.md").write_text(SKILL_V1 + "3. Tell the user\n", encoding="utf-8")
    (skill_dir / "templates" / "job.yaml").write_text("steps: [load]\n", encoding="utf-8")
    dropped = home / "skills" / "ops" / "cloud" / "deploy"
    dropped.mkdir(parents=True)
    (dropped / "SKILL.md").write_text(SKILL_V1, encoding="utf-8")
    import shutil

    shutil.rmtree(home / "skills" / "scratch")
    session2 = _session_with(tmp_path, home, [
        ("skill_manage", {"action": "patch", "name": "etl", "old_string": "3. Tell the user",
                          "new_string": "3. Tell the user the row count"})], "Refine etl.", "--resume", session)
    rows = _rows(home, "SELECT skill_name, version, change_type, hermes_action, trigger_session_id, skill_path, "
                       "changed_files FROM skill_history WHERE version > 1 OR hermes_action = 'discovered' "
                       "ORDER BY skill_name, version")
    assert rows == [
        ("deploy", 1, "create", "discovered", None, "ops/cloud/deploy", '["SKILL.md"]'),
        ("etl", 2, "refine", "file_written", session, "data/etl", '["templates/job.yaml"]'),
        ("etl", 3, "refine", "external_edit", None, "data/etl", '["SKILL.md", "templates/job.yaml"]'),
        ("etl", 4, "refine", "patched", session2, "data/etl", '["SKILL.md"]'),
        ("scratch", 2, "deprecate", "external_delete", None, "scratch", '["SKILL.md"]'),
    ]
    assert session2 == session  # --resume continued the same Hermes session


def test_every_memory_tool_shape_is_the_agents_with_the_real_entries(tmp_path: Path) -> None:
    """BOOK-21/BOOK-22 with Hermes: single add / replace / remove and the batch ``operations`` shape, on both
    targets, are rows of actor ``agent-reflection`` with the session; ``replace`` and ``remove`` quote the
    whole old entry (not the search text), a batch gives one row per operation, a credential in an entry is
    scrubbed, and no row is ``user-direct``."""
    home = tmp_path / "hermes"
    memories = home / "memories"
    memories.mkdir(parents=True)
    (memories / "MEMORY.md").write_text(OLD_ENTRY, encoding="utf-8")
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    calls = [
        ("memory", {"action": "add", "target": "memory", "content": "Deploys go through the staging cluster"}),
        ("memory", {"action": "replace", "target": "memory", "old_text": "Python 3.10",
                    "content": "The user's build runs on Python 3.12 with uv"}),
        ("memory", {"action": "remove", "target": "memory", "old_text": "staging cluster"}),
        ("memory", {"target": "user", "operations": [
            {"action": "add", "content": "Name: Ana"},
            {"action": "add", "content": "Prefers short answers"},
            {"action": "replace", "old_text": "short", "content": "Prefers short answers with code"}]}),
        ("memory", {"target": "memory", "operations": [
            {"action": "remove", "old_text": "Python 3.12"},
            {"action": "add", "content": f"CI token for the mirror is {token}"}]}),
    ]
    session = _session_with(tmp_path, home, calls, "Remember things about me.")
    rows = _rows(home, "SELECT file_path, change_type, actor, trigger_session_id, before_excerpt, after_excerpt "
                       "FROM memory_changes ORDER BY id")
    assert [r[:4] for r in rows] == [
        ("memories/MEMORY.md", "add", "agent-reflection", session),
        ("memories/MEMORY.md", "modify", "agent-reflection", session),
        ("memories/MEMORY.md", "delete", "agent-reflection", session),
        ("memories/USER.md", "add", "agent-reflection", session),
        ("memories/USER.md", "add", "agent-reflection", session),
        ("memories/USER.md", "modify", "agent-reflection", session),
        ("memories/MEMORY.md", "delete", "agent-reflection", session),
        ("memories/MEMORY.md", "add", "agent-reflection", session)]
    assert rows[0][4:] == (None, "Deploys go through the staging cluster")
    assert rows[1][4:] == (OLD_ENTRY, "The user's build runs on Python 3.12 with uv")  # the old entry itself
    assert rows[2][4:] == ("Deploys go through the staging cluster", None)
    assert rows[5][4:] == ("Prefers short answers", "Prefers short answers with code")
    assert rows[6][4:] == ("The user's build runs on Python 3.12 with uv", None)
    assert token not in str(rows) and REDACTED.search(rows[7][5])
    hashes = _rows(home, "SELECT file_path, file_hash FROM memory_changes ORDER BY id DESC LIMIT 1")
    assert hashes == [("memories/MEMORY.md", _sha(memories / "MEMORY.md"))]
    state = (home / "observability" / "scan-state.json").read_text(encoding="utf-8")
    assert token not in state


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _post_chat(port: int, key: str, session: str, text: str) -> dict[str, Any]:
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        conn.request("POST", "/v1/chat/completions", json.dumps({"model": "hermes-agent", "messages": [
            {"role": "user", "content": text}]}), {"Authorization": f"Bearer {key}", "Content-Type": "application/json",
                                                    "X-Hermes-Session-Id": session})
        response = conn.getresponse()
        body = response.read().decode("utf-8")
        assert response.status == 200, body[:2000]
        return dict(json.loads(body))
    finally:
        conn.close()


def _stop_gateway(gateway: subprocess.Popen[str], log: Any) -> None:
    """A graceful stop (the store writes what it holds before the process ends), a kill after a minute."""
    gateway.terminate()
    try:
        gateway.wait(timeout=60)
    except subprocess.TimeoutExpired:
        gateway.kill()
        gateway.wait(timeout=10)
    log.close()


def _wait_healthy(proc: subprocess.Popen[str], port: int, deadline: float) -> None:
    import http.client
    import time

    while time.monotonic() < deadline:  # readiness: the gateway has no signal to wait on but its port
        assert proc.poll() is None, "the gateway exited before its API server was up"
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/health")
            if conn.getresponse().status == 200:
                return
        except OSError:
            pass
        finally:
            conn.close()
        time.sleep(0.2)
    pytest.fail("the gateway's API server did not come up")


def test_the_api_server_records_the_agents_skill_and_memory_changes(tmp_path: Path) -> None:
    """Through ``hermes gateway run`` with the OpenAI-compatible API server: two requests of one session
    (``X-Hermes-Session-Id``) create a categorised skill and patch it, and write memory in the batch and the
    single shape; every row carries that session and the agent as actor."""
    import secrets
    import time

    home = tmp_path / "hermes"
    skill = "---\nname: gw-skill\ndescription: Ops runbook\n---\n1. Check the service\n"
    calls = [
        ("memory", {"target": "user", "operations": [{"action": "add", "content": "Name: Ana"},
                                                     {"action": "add", "content": "On call on Mondays"}]}),
        ("skill_manage", {"action": "create", "name": "gw-skill", "category": "ops", "content": skill}),
    ]
    steps: list[Any] = [{"tool_calls": [{"name": n, "arguments": a, "id": f"call_a{i}"}]} for i, (n, a) in
                        enumerate(calls)]
    steps.append("noted")
    steps += [{"tool_calls": [{"name": "skill_manage", "arguments": {
                  "action": "patch", "name": "gw-skill", "old_string": "1. Check the service",
                  "new_string": "1. Check the service\n2. Page the owner"}, "id": "call_b0"}]},
              {"tool_calls": [{"name": "memory", "arguments": {"action": "replace", "target": "user",
                                                               "old_text": "Mondays",
                                                               "content": "On call on Tuesdays"}, "id": "call_b1"}]},
              "updated"]
    script = tmp_path / "gateway-script.json"
    script.write_text(json.dumps({"steps": steps}), encoding="utf-8")
    server, model_port = _start_model_server(script)
    key, port = secrets.token_hex(24), _free_port()
    (tmp_path / "user").mkdir()
    (tmp_path / "work").mkdir()
    try:
        _audit_config(home, model_port)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "OPENAI_", "OTEL_", "API_SERVER"))}
        env.update(HOME=str(tmp_path / "user"), HERMES_HOME=str(home), NO_COLOR="1", HERMES_ACCEPT_HOOKS="1",
                   API_SERVER_ENABLED="true", API_SERVER_KEY=key, API_SERVER_PORT=str(port),
                   API_SERVER_HOST="127.0.0.1")
        log = open(tmp_path / "gateway.log", "w", encoding="utf-8")  # noqa: SIM115 - closed below
        gateway = subprocess.Popen([HERMES or "hermes", "gateway", "run"], cwd=tmp_path / "work", env=env,
                                   stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, text=True)
        try:
            _wait_healthy(gateway, port, time.monotonic() + 60)
            assert _post_chat(port, key, "api-session-1", "Remember me")["choices"][0]["message"]["content"] == "noted"
            assert _post_chat(port, key, "api-session-1", "Update")["choices"][0]["message"]["content"] == "updated"
        finally:
            _stop_gateway(gateway, log)
    finally:
        _stop(server)
    assert _rows(home, "SELECT version, hermes_action, trigger_session_id, skill_path FROM skill_history "
                       "WHERE skill_name = 'gw-skill' ORDER BY version") == \
        [(1, "created", "api-session-1", "ops/gw-skill"), (2, "patched", "api-session-1", "ops/gw-skill")]
    assert _rows(home, "SELECT file_path, change_type, actor, trigger_session_id, before_excerpt, after_excerpt "
                       "FROM memory_changes ORDER BY id") == [
        ("memories/USER.md", "add", "agent-reflection", "api-session-1", None, "Name: Ana"),
        ("memories/USER.md", "add", "agent-reflection", "api-session-1", None, "On call on Mondays"),
        ("memories/USER.md", "modify", "agent-reflection", "api-session-1", "On call on Mondays",
         "On call on Tuesdays")]
