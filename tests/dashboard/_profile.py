"""A fixture profile for the dashboard tests: a real Hermes ``state.db`` (written by Hermes' own
``SessionDB``), skills, memory files, two trajectories recorded by the reference agent through the
trajectory store, and an observability store created with the store's own DDL — with hostile text
planted in every field the dashboard shows."""

from __future__ import annotations

import shutil
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from hermes_pipeline.dashboard import load_sources, make_server
from hermes_pipeline.dashboard.server import DashboardServer
from hermes_pipeline.dashboard.stats import local_day_bounds, utc_text

PLANT = "<script>document.title='pwned'</script><img src=x onerror=\"document.title='pwned'\">"
"""Markup that would change the page title if it ever ran."""
SESSION_ID = "20261201_120000_ab12cd"
OTHER_SESSION = "20261201_130000_ef34ab"
HOSTILE_SKILL = "<img src=x onerror=alert(1)>"
HOSTILE_MEMORY = "<script>document.title=1<script>.md"


@dataclass
class FixtureProfile:
    """What the fixture holds, for assertions."""

    home: Path
    trajectories: list[str]
    session_id: str = SESSION_ID


def _hermes_state(home: Path) -> None:
    """Two sessions with messages, written by Hermes 0.19's own session store."""
    from hermes_state import SessionDB

    db = SessionDB(home / "state.db")
    try:
        db.create_session(SESSION_ID, "cli", model="hermes-demo-1")
        db.append_message(SESSION_ID, "user", "What do my notes say? " + PLANT)
        db.append_message(SESSION_ID, "assistant", None, tool_calls=[{
            "id": "call_1", "type": "function", "function": {"name": "read_file",
                                                              "arguments": "{\"path\": \"" + PLANT + "\"}"}}])
        db.append_message(SESSION_ID, "tool", "oats, apples " + PLANT, tool_name="read_file", tool_call_id="call_1")
        db.append_message(SESSION_ID, "assistant", "Your notes say: oats, apples.")
        db.end_session(SESSION_ID, "user_exit")
        db.create_session(OTHER_SESSION, "telegram", model="m2")
        db.append_message(OTHER_SESSION, "user", "hello")
        draft = db.append_message(OTHER_SESSION, "user", "a draft the user rewound")
        db.append_message(OTHER_SESSION, "assistant", "an answer to the draft")
        db.rewind_to_message(OTHER_SESSION, draft)
    finally:
        db.close()


def _store(home: Path, trajectories: list[str], now: float) -> None:
    """The observability store with the store's own tables, populated for every panel."""
    from hermes_pipeline.sinks.observability_store.schema import INDEXES, TABLES

    path = home / "observability" / "observability.sqlite3"
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    try:
        for ddl in TABLES.values():
            conn.execute(ddl)
        for ddl in INDEXES:
            conn.execute(ddl)
        start, _ = local_day_bounds(now)
        today = max(start, utc_text(now - 120))
        for i, tid in enumerate(trajectories):
            conn.execute("INSERT INTO task_runs (trajectory_id, session_id, turn_id, platform, task_class, started_at, "
                         "ended_at, outcome, llm_calls, tool_calls, input_tokens, output_tokens, cost_usd) VALUES "
                         "(?, ?, ?, 'cli', 'cli:chat', ?, ?, ?, 2, 1, 120, 30, 0.0125)",
                         (tid, SESSION_ID, f"turn_{i}", today, today, "success" if i == 0 else "failed"))
        for day in range(1, 20):  # history for the charts and the cost-spike rule
            stamp = utc_text(now - day * 86400)
            conn.execute("INSERT INTO task_runs (session_id, platform, started_at, ended_at, outcome, input_tokens, "
                         "output_tokens, cost_usd) VALUES (?, 'cli', ?, ?, 'success', 1000, 200, 0.01)",
                         (OTHER_SESSION, stamp, stamp))
        for i in range(3):  # a failure streak of 3
            stamp = utc_text(now - 300 - i)
            conn.execute("INSERT INTO task_runs (session_id, platform, started_at, ended_at, outcome, cost_usd) "
                         "VALUES (?, 'cli', ?, ?, 'failed', 5.0)", (OTHER_SESSION, stamp, stamp))
        for i in range(6):
            stamp = utc_text(now - 60 * (i + 1))
            conn.execute("INSERT INTO llm_calls (started_at, ended_at, session_id, provider, model, status, "
                         "input_tokens, output_tokens, cost_usd) VALUES (?, ?, ?, 'p', 'm', ?, 10, 5, 0.001)",
                         (stamp, stamp, SESSION_ID, "error" if i == 0 else "ok"))
            conn.execute("INSERT INTO skill_runs (skill_name, trajectory_id, started_at, ended_at, outcome) VALUES "
                         "('flaky-skill', ?, ?, ?, 'failed')", (trajectories[0], stamp, stamp))
            conn.execute("INSERT INTO skill_runs (skill_name, trajectory_id, started_at, ended_at, outcome) VALUES "
                         "('good-skill', ?, ?, ?, 'success')", (trajectories[0], stamp, stamp))
        conn.execute("INSERT INTO skill_runs (skill_name, started_at, ended_at, outcome) VALUES (?, ?, ?, 'success')",
                     (HOSTILE_SKILL, utc_text(now), utc_text(now)))
        for version, change in enumerate(("create", "refine", "refine"), 1):
            conn.execute("INSERT INTO skill_history (skill_name, version, change_type, reason, changed_at) VALUES "
                         "('flaky-skill', ?, ?, ?, ?)", (version, change, PLANT, utc_text(now - version)))
        for i in range(3):
            conn.execute("INSERT INTO memory_changes (file_path, change_type, actor, trigger_session_id, "
                         "before_excerpt, after_excerpt, changed_at) VALUES (?, 'modify', 'agent-reflection', ?, "
                         "'old', ?, ?)", ("memories/MEMORY.md", SESSION_ID, f"fact {i} {PLANT}", utc_text(now - i)))
        conn.commit()
    finally:
        conn.close()


def _record_two_runs(tmp_path: Path) -> list[Path]:
    """Two runs of the reference agent, recorded by the trajectory store, that differ in their answer."""
    from hermes_pipeline.demo.model_server import ScriptStep, ToolCallSpec

    from ..trajectories._support import record_reference_run

    out = []
    for i, answer in enumerate(("Your notes say: oats, apples. " + PLANT, "The notes mention oats.")):
        script = [ScriptStep(tool_calls=[ToolCallSpec("read_file", {"path": "notes.txt"})]), ScriptStep(content=answer)]
        path, _ = record_reference_run(tmp_path / f"run{i}", script)
        out.append(path)
    return out


def build_profile(tmp_path: Path, *, hermes: bool = True, now: float | None = None) -> FixtureProfile:
    """Build the fixture profile under ``tmp_path / "home"``."""
    now = time.time() if now is None else now
    home = tmp_path / "home"
    (home / "trajectories").mkdir(parents=True)
    if hermes:
        _hermes_state(home)
    for name, desc in (("good-skill", "Reads notes"), ("flaky-skill", PLANT), (HOSTILE_SKILL, "hostile name"),
                       ("empty-skill", "never used")):
        (home / "skills" / name).mkdir(parents=True)
        (home / "skills" / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {desc}\n---\nBody\n")
    (home / "memories" / "notes").mkdir(parents=True)
    (home / "memories" / "MEMORY.md").write_text("- the user likes oats\n")
    (home / "memories" / "USER.md").write_text("- name: Ada\n")
    (home / "memories" / "notes" / HOSTILE_MEMORY).write_text(PLANT)
    ids = []
    for path in _record_two_runs(tmp_path / "recorded"):
        shutil.copy(path, home / "trajectories" / path.name)
        # the store keeps tool lists and system prompts once, in its definitions/ sidecar: copied along
        shutil.copytree(path.parent / "definitions", home / "trajectories" / "definitions", dirs_exist_ok=True)
        ids.append(path.name[11:47])
    _store(home, ids, now)
    (home / "secret.txt").write_text("outside the dashboard's reach\n")
    return FixtureProfile(home, ids)


@contextmanager
def serving(home: Path) -> Iterator[DashboardServer]:
    """A dashboard for ``home`` on 127.0.0.1 (a free port), stopped and closed on exit."""
    server = make_server(load_sources(home), "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
