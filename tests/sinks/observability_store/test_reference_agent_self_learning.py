"""The reference agent's Hermes-shaped ``skill_manage`` and ``memory`` through the host API (issue #27).

The same record as with the real Hermes (``tests/hermes/test_self_learning_e2e.py``): every ``skill_manage``
action in a category folder is one ``skill_history`` version with the action, the reason, the session, the
SKILL.md hashes and the changed files (BOOK-18, BOOK-19); every ``memory`` shape on both targets is rows of the
agent with the whole old entry quoted (BOOK-21, BOOK-22).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from hermes_pipeline.demo.profile_tools import ProfileTools
from tests.sinks.observability_store._support import rows, store

SKILL = "---\nname: etl\ndescription: Load data\n---\n1. Load\n"


def test_every_skill_action_and_memory_shape_of_the_reference_agent(tmp_path: Path) -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("skill_manage", {"action": "create", "name": "etl", "category": "data", "content": SKILL,
                          "reason": "loads recur"}),
        ("skill_manage", {"action": "patch", "name": "etl", "old_string": "1. Load", "new_string": "1. Load\n2. Check",
                          "reason": "checks catch bad rows"}),
        ("skill_manage", {"action": "write_file", "name": "etl", "file_path": "scripts/load.sh",
                          "file_content": "echo load\n"}),
        ("skill_manage", {"action": "patch", "name": "etl", "file_path": "scripts/load.sh", "old_string": "load",
                          "new_string": "load --all"}),
        ("skill_manage", {"action": "edit", "name": "etl", "content": SKILL + "2. Report\n"}),
        ("skill_manage", {"action": "view", "name": "etl"}),
        ("skill_manage", {"action": "remove_file", "name": "etl", "file_path": "scripts/load.sh"}),
        ("memory", {"action": "add", "content": "Builds use uv"}),
        ("memory", {"action": "replace", "old_text": "uv", "content": "Builds use uv 0.5"}),
        ("memory", {"target": "user", "operations": [{"action": "add", "content": "Name: Ana"},
                                                      {"action": "add", "content": "Likes tea"},
                                                      {"action": "remove", "old_text": "tea"}]}),
        ("skill_manage", {"action": "delete", "name": "etl", "absorbed_into": "data-jobs"}),
    ]
    with store(tmp_path) as (host, handle):
        tools = ProfileTools(tmp_path, host).tools()
        with host.session() as session:
            with session.turn("learn") as turn:
                for name, args in calls:
                    turn.call_tool(name, args, tools[name].fn)
                turn.complete("ok")
        sid = session.session_id
    assert not (tmp_path / "skills" / "data").exists()  # the empty category folder went with the skill
    history = rows(tmp_path, "SELECT version, change_type, hermes_action, reason, trigger_session_id, skill_path, "
                             "changed_files FROM skill_history ORDER BY version")
    assert [(h[0], h[1], h[2], h[3]) for h in history] == [
        (1, "create", "created", "loads recur"), (2, "refine", "patched", "checks catch bad rows"),
        (3, "refine", "file_written", None), (4, "refine", "patched", None), (5, "refine", "edited", None),
        (6, "refine", "file_removed", None), (7, "deprecate", "deleted", "absorbed into data-jobs")]
    assert {h[4] for h in history} == {sid} and {h[5] for h in history} == {"data/etl"}
    assert [json.loads(h[6]) for h in history] == [["SKILL.md"], ["SKILL.md"], ["scripts/load.sh"],
                                                   ["scripts/load.sh"], ["SKILL.md"], ["scripts/load.sh"],
                                                   ["SKILL.md"]]
    hashes = rows(tmp_path, "SELECT before_hash, after_hash FROM skill_history ORDER BY version")
    assert hashes[0][0] is None and hashes[-1][1] is None
    assert hashes[4][1] == hashlib.sha256((SKILL + "2. Report\n").encode()).hexdigest()
    assert all(hashes[i][0] == hashes[i - 1][1] for i in range(1, len(hashes)))
    assert rows(tmp_path, "SELECT skill_name, outcome FROM skill_runs") == [("etl", "success")]
    memory = rows(tmp_path, "SELECT file_path, change_type, actor, trigger_session_id, before_excerpt, after_excerpt "
                            "FROM memory_changes ORDER BY id")
    assert memory == [
        ("memories/MEMORY.md", "add", "skill-execution", sid, None, "Builds use uv"),
        ("memories/MEMORY.md", "modify", "skill-execution", sid, "Builds use uv", "Builds use uv 0.5"),
        ("memories/USER.md", "add", "skill-execution", sid, None, "Name: Ana"),
        ("memories/USER.md", "add", "skill-execution", sid, None, "Likes tea"),
        ("memories/USER.md", "delete", "skill-execution", sid, "Likes tea", None)]


def test_a_staged_or_unchanged_memory_write_is_no_row(tmp_path: Path) -> None:
    """Hermes' write gate answers ``{"success": true, "staged": true}`` and writes nothing until approved; an
    ``add`` of an entry already there leaves the file as it was: neither is a change (BOOK-22)."""
    with store(tmp_path) as (host, handle):
        tools = ProfileTools(tmp_path, host).tools()
        with host.session() as session:
            with session.turn("t") as turn:
                turn.call_tool("memory", {"action": "add", "content": "kept"}, tools["memory"].fn)
                turn.call_tool("memory", {"action": "add", "content": "kept"}, tools["memory"].fn)
                turn.call_tool("memory", {"action": "add", "content": "later"},
                               lambda **kw: '{"success": true, "staged": true, "pending_id": "p1"}')
                turn.complete("ok")
    assert rows(tmp_path, "SELECT change_type, after_excerpt FROM memory_changes") == [("add", "kept")]
