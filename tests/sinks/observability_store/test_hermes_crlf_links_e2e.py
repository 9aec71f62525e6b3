"""The real Hermes Agent with memory files saved with CRLF endings and skills linked into ``skills/`` (BOOK-18,
BOOK-19, BOOK-21, BOOK-22).

Hermes reads its memory files with universal newlines, so a file converted to CRLF (a Windows editor) has the same
entries: no row; the agent's ``replace`` in such a file quotes the entry it replaced, not the whole file; an entry
appended by hand in CRLF is one ``add``. Hermes lists and loads a skill folder that is a symbolic link (its index
follows links): the store discovers it and records a hand edit of it, and a link looping back to ``skills/`` neither
hangs the run nor repeats a skill. Real ``hermes chat`` runs against the scripted model server (helpers of
``tests/hermes/test_self_learning_e2e.py``); skipped without ``hermes-agent``.
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.hermes.test_bridge_e2e import pytestmark  # noqa: F401
from tests.hermes.test_self_learning_e2e import _rows, _session_with

SKILL = "---\nname: {name}\ndescription: d {name}\n---\n1. x\n"


def test_book_21_22_memory_files_with_crlf_endings_are_read_as_hermes_reads_them(tmp_path: Path) -> None:
    """BOOK-22: MEMORY.md converted to CRLF by hand is no row; the agent's replace and remove in the CRLF file
    quote the whole entries they changed (BOOK-21); an entry appended to USER.md by hand in CRLF is one ``add``."""
    home = tmp_path / "hermes"
    memories = home / "memories"
    session = _session_with(tmp_path, home, [
        ("memory", {"action": "add", "target": "memory", "content": "Alpha fact"}),
        ("memory", {"action": "add", "target": "memory", "content": "Beta fact\nsecond line of beta"}),
        ("memory", {"action": "add", "target": "memory", "content": "Gamma fact"}),
        ("memory", {"action": "add", "target": "user", "content": "Name: Ana"})], "Remember.")
    memory_md = memories / "MEMORY.md"
    memory_md.write_bytes(memory_md.read_bytes().replace(b"\n", b"\r\n"))
    assert [e.strip() for e in memory_md.read_text(encoding="utf-8").split("\n§\n")] == \
        ["Alpha fact", "Beta fact\nsecond line of beta", "Gamma fact"]  # Hermes' reading: the same entries
    _session_with(tmp_path, home, [
        ("memory", {"action": "replace", "target": "memory", "old_text": "Beta fact", "content": "Beta fact v2"}),
        ("memory", {"action": "remove", "target": "memory", "old_text": "Gamma"})], "Update.", "--resume", session)
    assert memory_md.read_text(encoding="utf-8") == "Alpha fact\n§\nBeta fact v2"
    user_md = memories / "USER.md"
    user_md.write_bytes(user_md.read_bytes().replace(b"\n", b"\r\n") + b"\r\n\xc2\xa7\r\nTimezone: CET")
    _session_with(tmp_path, home, [("memory", {"action": "add", "target": "user", "content": "Likes tea"})],
                  "More.", "--resume", session)
    rows = _rows(home, "SELECT file_path, change_type, actor, before_excerpt, after_excerpt FROM memory_changes "
                       "WHERE id > 4 ORDER BY id")
    assert rows == [
        ("memories/MEMORY.md", "modify", "agent-reflection", "Beta fact\nsecond line of beta", "Beta fact v2"),
        ("memories/MEMORY.md", "delete", "agent-reflection", "Gamma fact", None),
        ("memories/USER.md", "add", "user-direct", None, "Timezone: CET"),
        ("memories/USER.md", "add", "agent-reflection", None, "Likes tea")]


def test_book_18_19_a_skill_linked_into_skills_is_discovered_and_its_hand_edits_recorded(tmp_path: Path) -> None:
    """BOOK-18/19: ``skills/linked -> <outside>/linked``, which Hermes lists and loads, is a ``discovered`` skill at
    the first start and its hand edit an ``external_edit`` at the next; a link from a skill back to ``skills/`` (a
    loop) neither hangs the run nor repeats a skill."""
    home = tmp_path / "hermes"
    skills = home / "skills"
    (skills / "good").mkdir(parents=True)
    (skills / "good" / "SKILL.md").write_text(SKILL.format(name="good"), encoding="utf-8")
    os.symlink("../..", skills / "good" / "extra-loop")
    outside = tmp_path / "outside" / "linked"
    outside.mkdir(parents=True)
    (outside / "SKILL.md").write_text(SKILL.format(name="linked"), encoding="utf-8")
    os.symlink(outside, skills / "linked")
    _session_with(tmp_path, home, [("skill_view", {"name": "linked"})], "Use the linked skill.")
    (outside / "SKILL.md").write_text(SKILL.format(name="linked") + "2. hand edit\n", encoding="utf-8")
    _session_with(tmp_path, home, [], "Again.")
    rows = _rows(home, "SELECT skill_name, version, change_type, hermes_action, trigger_session_id, skill_path, "
                       "changed_files FROM skill_history ORDER BY skill_name, version")
    assert rows == [
        ("good", 1, "create", "discovered", None, "good", '["SKILL.md"]'),
        ("linked", 1, "create", "discovered", None, "linked", '["SKILL.md"]'),
        ("linked", 2, "refine", "external_edit", None, "linked", '["SKILL.md"]')]
