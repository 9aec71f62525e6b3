"""The real Hermes Agent's memory files edited by hand between runs, read back from the observability store.

Hermes keeps ``memories/MEMORY.md`` / ``USER.md`` as entries joined by ``\\n§\\n``. A hand edit made while Hermes
is stopped is found by the rescan at the next start: one ``user-direct`` row per entry that appeared, disappeared
or changed, quoting whole entries as the agent's rows do; the agent's ``replace`` of an entry by its own text is
no row (BOOK-21, BOOK-22). Helpers come from ``tests/hermes/test_self_learning_e2e.py``.
"""

from __future__ import annotations

from pathlib import Path

from tests.hermes.test_bridge_e2e import pytestmark  # noqa: F401
from tests.hermes.test_self_learning_e2e import _rows, _session_with


def test_hand_edits_of_hermes_memory_files_are_one_row_per_entry(tmp_path: Path) -> None:
    """BOOK-22 with Hermes: an entry changed and one appended in ``MEMORY.md`` are a ``modify`` and an ``add``;
    two entries written into the ``USER.md`` the agent emptied are two ``add`` rows; an entry removed by hand is
    a ``delete``; the next session's ``replace`` by the same text is no row and leaves the user's rows the user's,
    its real change is a row (BOOK-21: entries without delimiter or newline)."""
    home = tmp_path / "hermes"
    memories = home / "memories"
    session = _session_with(tmp_path, home, [
        ("memory", {"target": "memory", "operations": [{"action": "add", "content": "Builds use uv"},
                                                       {"action": "add", "content": "Deploys go through staging"},
                                                       {"action": "add", "content": "Standup is at 9"}]}),
        ("memory", {"action": "add", "target": "user", "content": "Name: Ana"}),
        ("memory", {"action": "remove", "target": "user", "old_text": "Ana"})], "Remember things.")
    assert (memories / "USER.md").read_text(encoding="utf-8") == ""
    (memories / "MEMORY.md").write_text("Builds use uv 0.5\n§\nStandup is at 9\n§\nHand added entry\n",
                                        encoding="utf-8")  # one changed, one removed, one appended
    (memories / "USER.md").write_text("Name: Ana Maria\n§\nTimezone: CET", encoding="utf-8")
    session2 = _session_with(tmp_path, home, [
        ("memory", {"action": "replace", "target": "user", "old_text": "CET", "content": "Timezone: CET"}),
        ("memory", {"action": "replace", "target": "user", "old_text": "CET", "content": "Timezone: CEST"})],
        "Update me.")
    assert (memories / "USER.md").read_text(encoding="utf-8") == "Name: Ana Maria\n§\nTimezone: CEST"
    rows = _rows(home, "SELECT file_path, change_type, actor, trigger_session_id, before_excerpt, after_excerpt "
                       "FROM memory_changes ORDER BY id")
    assert rows[:5] == [
        ("memories/MEMORY.md", "add", "agent-reflection", session, None, "Builds use uv"),
        ("memories/MEMORY.md", "add", "agent-reflection", session, None, "Deploys go through staging"),
        ("memories/MEMORY.md", "add", "agent-reflection", session, None, "Standup is at 9"),
        ("memories/USER.md", "add", "agent-reflection", session, None, "Name: Ana"),
        ("memories/USER.md", "delete", "agent-reflection", session, "Name: Ana", None)]
    assert sorted(rows[5:10]) == [  # the rescan at the second start; the replace by the same text takes none
        ("memories/MEMORY.md", "add", "user-direct", None, None, "Hand added entry"),
        ("memories/MEMORY.md", "delete", "user-direct", None, "Deploys go through staging", None),
        ("memories/MEMORY.md", "modify", "user-direct", None, "Builds use uv", "Builds use uv 0.5"),
        ("memories/USER.md", "add", "user-direct", None, None, "Name: Ana Maria"),
        ("memories/USER.md", "add", "user-direct", None, None, "Timezone: CET")]
    assert rows[10:] == [("memories/USER.md", "modify", "agent-reflection", session2, "Timezone: CET",
                          "Timezone: CEST")]
