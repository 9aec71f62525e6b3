"""The real Hermes Agent with its write-approval gate on: staged skill and memory writes, approved or denied later.

With ``skills.write_approval`` / ``memory.write_approval`` on in the profile's ``config.yaml``, ``skill_manage`` and
``memory`` only stage their writes (``$HERMES_HOME/pending/``); one-shot mode (``hermes -z``) stages memory writes
too (it has no inline prompt). The user then types ``/skills approve …`` / ``/memory deny …`` in the interactive
``hermes chat`` (its standard input piped), and Hermes applies the write outside any tool call. The observability
store must record the applied write as the agent's change, in the session and run that staged it, approved by the
user (BOOK-18/BOOK-19 skill versions, BOOK-21/BOOK-22 memory rows; ``staged_writes``), and a denied write as denied
with no content row; never as a rescan's ``discovered`` / ``external_edit`` / ``user-direct`` row. Helpers come from
``tests/hermes/test_bridge_e2e.py`` and ``tests/hermes/test_self_learning_e2e.py``.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
from pathlib import Path
from typing import Any

from tests.hermes.test_bridge_e2e import HERMES, _start_model_server, _stop, pytestmark  # noqa: F401
from tests.hermes.test_self_learning_e2e import _audit_config, _rows, _sha, _script

SKILL = "---\nname: weekly-report\ndescription: Weekly report\n---\n# Steps\n1. Load the data\n"
GATE = "skills:\n  write_approval: true\nmemory:\n  write_approval: true\n"


def _env(tmp: Path, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "OPENAI_", "OTEL_"))}
    env.update(HOME=str(tmp / "user"), HERMES_HOME=str(home), NO_COLOR="1", HERMES_ACCEPT_HOOKS="1")
    (tmp / "user").mkdir(exist_ok=True)
    (tmp / "work").mkdir(exist_ok=True)
    return env


def _stage(tmp: Path, home: Path, calls: list[tuple[str, dict[str, Any]]]) -> str:
    """One ``hermes -z`` run whose tool calls the gate stages; returns its session id (Hermes' ``state.db``)."""
    script = _script(tmp / f"script-{len(list(tmp.glob('script-*')))}.json", calls)
    server, port = _start_model_server(script)
    try:
        _audit_config(home, port)
        with open(home / "config.yaml", "a", encoding="utf-8") as fh:
            fh.write(GATE)
        proc = subprocess.run([HERMES or "hermes", "-z", "Learn this."], cwd=tmp / "work", env=_env(tmp, home),
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180)
    finally:
        _stop(server)
    assert proc.returncode == 0, proc.stderr[-3000:]
    import sqlite3

    with sqlite3.connect(home / "state.db") as db:
        return str(db.execute("SELECT id FROM sessions ORDER BY started_at DESC LIMIT 1").fetchone()[0])


_DECIDED = ("Approved ", "Rejected ", "No pending ", "Failed", "Usage:")
"""How Hermes' answer to ``/skills`` or ``/memory`` approve / deny starts (hermes_cli.write_approval_commands)."""


def _decide(tmp: Path, home: Path, *commands: str) -> str:
    """The user types each of ``commands`` in an interactive ``hermes chat`` and, once Hermes has answered it,
    ``/exit``; returns what they printed. One process per command (while a ``/skills`` command runs, Hermes' prompt
    drops what is typed): ``/exit`` is typed only after the answer is read from Hermes' output, so it can neither
    be dropped nor end the process before the approval is applied."""
    out = []
    for command in commands:
        proc = subprocess.Popen([HERMES or "hermes", "chat"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, cwd=tmp / "work", env={**_env(tmp, home),
                                                                             "PYTHONUNBUFFERED": "1"}, text=True)
        assert proc.stdin is not None and proc.stdout is not None
        lines: queue.Queue[str | None] = queue.Queue()
        reader = threading.Thread(target=lambda: ([lines.put(line) for line in proc.stdout], lines.put(None)),
                                  daemon=True)
        reader.start()
        proc.stdin.write(f"{command}\n")
        proc.stdin.flush()
        seen: list[str] = []
        try:
            while True:
                line = lines.get(timeout=180)
                if line is None:
                    break
                seen.append(line)
                if line.lstrip(" ⏳✓✗•").startswith(_DECIDED):
                    break
            proc.stdin.write("/exit\n")
            proc.stdin.close()
        except (queue.Empty, BrokenPipeError):
            pass
        try:
            proc.wait(timeout=180)
        finally:
            if proc.poll() is None:
                proc.kill()
        reader.join(30)
        while True:
            try:
                line = lines.get_nowait()
            except queue.Empty:
                break
            if line is not None:
                seen.append(line)
        stderr = proc.stderr.read() if proc.stderr is not None else ""
        assert proc.returncode == 0, stderr[-3000:]
        out.append("".join(seen))
    return "\n".join(out)


def _pending(home: Path, subsystem: str) -> dict[str, str]:
    """Hermes' pending records of ``subsystem``: what each is about (skill name, memory content) → its id."""
    out = {}
    for path in (home / "pending" / subsystem).glob("*.json"):
        record = json.loads(path.read_text(encoding="utf-8"))
        payload = record["payload"]
        out[str(payload.get("name") or payload.get("content") or payload.get("old_text"))] = record["id"]
    return out


def _run_of(home: Path, session: str) -> str:
    ((run,),) = _rows(home, "SELECT trajectory_id FROM task_runs WHERE session_id = ?", (session,))
    return str(run)


def test_approved_staged_writes_are_the_agents_with_the_approving_user(tmp_path: Path) -> None:
    """BOOK-19/BOOK-22 with the gate on: a staged ``create`` and a later staged ``patch`` of a skill, and a staged
    memory ``add`` then ``replace``, each approved in a later ``hermes chat`` (``/skills approve <id>``, ``/memory
    approve all``), are versions 1 and 2 (``created`` / ``patched``) and ``agent-reflection`` rows in the session,
    run and turn that staged them, with ``approved_by = 'user'`` and the pending id; ``staged_writes`` links each to
    its tool call. The next start's rescans find nothing more: no ``discovered``, ``external_edit`` or
    ``user-direct`` row."""
    home = tmp_path / "hermes"
    skill_md = home / "skills" / "weekly-report" / "SKILL.md"
    session1 = _stage(tmp_path, home, [
        ("skill_manage", {"action": "create", "name": "weekly-report", "content": SKILL}),
        ("memory", {"action": "add", "target": "memory", "content": "Reports go out on Fridays"})])
    assert not skill_md.exists() and not (home / "memories" / "MEMORY.md").exists()  # staged, nothing written
    skills, memory = _pending(home, "skills"), _pending(home, "memory")
    out = _decide(tmp_path, home, f"/skills approve {skills['weekly-report']}", "/memory approve all")
    assert "Approved 1 skills write(s)." in out and "Approved 1 memory write(s)." in out
    v1 = _sha(skill_md)

    session2 = _stage(tmp_path, home, [
        ("skill_manage", {"action": "patch", "name": "weekly-report", "old_string": "1. Load the data",
                          "new_string": "1. Load the data\n2. Mail it"}),
        ("memory", {"action": "replace", "target": "memory", "old_text": "Fridays",
                    "content": "Reports go out on Mondays"})])
    skills2, memory2 = _pending(home, "skills"), _pending(home, "memory")
    _decide(tmp_path, home, "/skills approve all", f"/memory approve {memory2['Reports go out on Mondays']}")
    assert "2. Mail it" in skill_md.read_text(encoding="utf-8")
    _stage(tmp_path, home, [])  # a later start: its rescans must find nothing the rows do not explain

    run1, run2 = _run_of(home, session1), _run_of(home, session2)
    assert _rows(home, "SELECT version, change_type, hermes_action, provenance, trigger_session_id, trajectory_id, "
                       "before_hash, after_hash, approved_by, pending_id FROM skill_history ORDER BY version") == [
        (1, "create", "created", "agent_created", session1, run1, None, v1, "user", skills["weekly-report"]),
        (2, "refine", "patched", "agent_created", session2, run2, v1, _sha(skill_md), "user",
         skills2["weekly-report"])]
    assert _rows(home, "SELECT change_type, actor, trigger_session_id, trajectory_id, before_excerpt, "
                       "after_excerpt, approved_by, pending_id FROM memory_changes ORDER BY id") == [
        ("add", "agent-reflection", session1, run1, None, "Reports go out on Fridays", "user",
         memory["Reports go out on Fridays"]),
        ("modify", "agent-reflection", session2, run2, "Reports go out on Fridays", "Reports go out on Mondays",
         "user", memory2["Reports go out on Mondays"])]
    staged = _rows(home, "SELECT pending_id, subsystem, action, subject, session_id, trajectory_id, tool_call_id, "
                         "status, decided_by, decided_at >= staged_at FROM staged_writes ORDER BY id")
    assert staged == [
        (skills["weekly-report"], "skills", "create", "weekly-report", session1, run1, "call_0", "approved", "user", 1),
        (memory["Reports go out on Fridays"], "memory", "add", "memories/MEMORY.md", session1, run1, "call_1",
         "approved", "user", 1),
        (skills2["weekly-report"], "skills", "patch", "weekly-report", session2, run2, "call_0", "approved", "user", 1),
        (memory2["Reports go out on Mondays"], "memory", "replace", "memories/MEMORY.md", session2, run2, "call_1",
         "approved", "user", 1)]
    # the turn is the staging call's too (the run's turn id in task_runs)
    assert _rows(home, "SELECT COUNT(*) FROM skill_history s JOIN task_runs t ON t.trajectory_id = s.trajectory_id "
                       "AND t.turn_id = s.turn_id") == [(2,)]


def test_denied_staged_writes_are_rows_saying_so_and_change_nothing(tmp_path: Path) -> None:
    """A staged skill ``create`` and memory ``add`` denied (``/skills deny <id>``, ``/memory reject all``) write no
    file and no ``skill_history`` / ``memory_changes`` row: their ``staged_writes`` rows say ``denied``, by whom
    and when, with the tool call and session that staged them; the write approved beside them is recorded as
    approved."""
    home = tmp_path / "hermes"
    session = _stage(tmp_path, home, [
        ("skill_manage", {"action": "create", "name": "weekly-report", "content": SKILL}),
        ("skill_manage", {"action": "create", "name": "kept-skill", "content": SKILL.replace("weekly-report",
                                                                                              "kept-skill")}),
        ("memory", {"action": "add", "target": "user", "content": "Prefers long answers"})])
    skills, memory = _pending(home, "skills"), _pending(home, "memory")
    out = _decide(tmp_path, home, f"/skills deny {skills['weekly-report']}", "/memory reject all",
                  "/skills approve all")
    assert "Rejected 1 pending memory write(s)." in out
    assert not (home / "skills" / "weekly-report").exists() and not (home / "memories" / "USER.md").exists()
    assert not list((home / "pending").rglob("*.json"))
    _stage(tmp_path, home, [])
    assert _rows(home, "SELECT pending_id, subsystem, subject, session_id, tool_call_id, status, decided_by, "
                       "decided_at IS NOT NULL FROM staged_writes ORDER BY id") == [
        (skills["weekly-report"], "skills", "weekly-report", session, "call_0", "denied", "user", 1),
        (skills["kept-skill"], "skills", "kept-skill", session, "call_1", "approved", "user", 1),
        (memory["Prefers long answers"], "memory", "memories/USER.md", session, "call_2", "denied", "user", 1)]
    assert _rows(home, "SELECT skill_name, hermes_action, trigger_session_id, approved_by FROM skill_history") == \
        [("kept-skill", "created", session, "user")]
    assert _rows(home, "SELECT COUNT(*) FROM memory_changes") == [(0,)]
