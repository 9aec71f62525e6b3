"""The real Hermes Agent changing its own skills and memory with its file and terminal tools, not ``skill_manage`` /
``memory`` (BOOK-19, BOOK-22): each change is the agent's, in the session, run and turn of the tool call that made it,
never a later rescan's ``external_edit`` / ``discovered`` / ``user-direct`` row. Helpers come from
``tests/hermes/test_self_learning_e2e.py``."""

from __future__ import annotations

import json
from pathlib import Path

from tests.hermes.test_bridge_e2e import pytestmark  # noqa: F401
from tests.hermes.test_self_learning_e2e import SKILL_V1, _rows, _session_with, _sha


def test_skill_written_by_file_and_terminal_tools_is_the_agents(tmp_path: Path) -> None:
    """``write_file`` and ``patch`` of a skill's SKILL.md, ``terminal`` appending to it with ``echo >>`` and
    ``write_file`` of a new skill's SKILL.md each give one version with the call's session, run and turn; the next
    start (``--resume``) finds nothing left to explain."""
    home = tmp_path / "hermes"
    skill_md = home / "skills" / "etl" / "SKILL.md"
    new_md = home / "skills" / "notes" / "SKILL.md"
    session = _session_with(tmp_path, home, [
        ("skill_manage", {"action": "create", "name": "etl", "content": SKILL_V1}),
        ("write_file", {"path": str(skill_md), "content": SKILL_V1 + "3. Tell the user\n"}),
        ("patch", {"mode": "replace", "path": str(skill_md), "old_string": "3. Tell the user",
                   "new_string": "3. Tell the user the row count"}),
        ("terminal", {"command": f"echo '4. Done' >> '{skill_md}'"}),
        ("write_file", {"path": str(new_md), "content": SKILL_V1.replace("csv-report", "notes")}),
    ], "Make and refine etl.")
    assert skill_md.read_text(encoding="utf-8").endswith("3. Tell the user the row count\n4. Done\n")
    rows = _rows(home, "SELECT skill_name, version, change_type, hermes_action, trigger_session_id, reason, "
                       "changed_files, after_hash FROM skill_history ORDER BY id")
    assert [r[:6] for r in rows] == [
        ("etl", 1, "create", "created", session, None),
        ("etl", 2, "refine", "edited", session, None),
        ("etl", 3, "refine", "edited", session, None),
        ("etl", 4, "refine", "edited", session, None),
        ("notes", 1, "create", "created", session, None),
    ]
    assert [json.loads(r[6]) for r in rows[1:4]] == [["SKILL.md"]] * 3
    assert rows[3][7] == _sha(skill_md) and rows[4][7] == _sha(new_md)
    chain = _rows(home, "SELECT before_hash, after_hash FROM skill_history WHERE skill_name = 'etl' ORDER BY version")
    assert all(chain[i][0] == chain[i - 1][1] for i in range(1, len(chain)))
    run = _rows(home, "SELECT trajectory_id, turn_id FROM task_runs WHERE session_id = ?", (session,))
    assert len(run) == 1
    assert set(_rows(home, "SELECT trajectory_id, turn_id FROM skill_history")) == set(run)

    # the next process start rescans: nothing unexplained is left for an external_edit / discovered row
    _session_with(tmp_path, home, [], "Hello again.", "--resume", session)
    assert _rows(home, "SELECT COUNT(*) FROM skill_history WHERE trigger_session_id IS NULL") == [(0,)]


def test_memory_written_by_file_and_terminal_tools_is_the_agents(tmp_path: Path) -> None:
    """BOOK-22: ``write_file`` of MEMORY.md and ``terminal`` appending an entry to a new USER.md are rows of actor
    ``agent-reflection`` with the call's session, run and turn, quoting the entry added; no ``user-direct`` row, at the
    end of the run or at the next start."""
    home = tmp_path / "hermes"
    mem = home / "memories" / "MEMORY.md"
    mem.parent.mkdir(parents=True)
    mem.write_text("The user likes tea", encoding="utf-8")
    session = _session_with(tmp_path, home, [
        ("write_file", {"path": str(mem), "content": "The user likes tea\n§\nThe user lives in Oslo"}),
        ("terminal", {"command": f"printf 'Deploys on Fridays' >> '{home}/memories/USER.md'"}),
    ], "Remember where I live.")
    run = _rows(home, "SELECT trajectory_id, turn_id FROM task_runs WHERE session_id = ?", (session,))
    assert len(run) == 1
    rows = _rows(home, "SELECT file_path, change_type, actor, trigger_session_id, before_excerpt, after_excerpt, "
                       "trajectory_id, turn_id, file_hash FROM memory_changes ORDER BY id")
    assert rows == [
        ("memories/MEMORY.md", "add", "agent-reflection", session, None, "The user lives in Oslo", *run[0], _sha(mem)),
        ("memories/USER.md", "add", "agent-reflection", session, None, "Deploys on Fridays", *run[0],
         _sha(home / "memories" / "USER.md")),
    ]
    _session_with(tmp_path, home, [], "Hello again.", "--resume", session)
    assert _rows(home, "SELECT COUNT(*) FROM memory_changes") == [(2,)]
