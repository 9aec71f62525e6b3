"""The dashboard names who changed a skill or a memory file when the store cannot: rows the store lost.

A rescan that finds a skill or memory file changed where the store had given up rows records the change as not
attributed (skill ``hermes_action = 'unattributed'``, memory ``actor`` NULL, each with a reason), and a skill
back after a recorded deletion as ``external_restore`` (BOOK-19, BOOK-22, BOOK-38). The pages say so in words.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from hermes_pipeline.dashboard import load_sources
from hermes_pipeline.dashboard.params import ListQuery
from hermes_pipeline.dashboard.queries_pages import SCAN_ACTIONS, UNKNOWN_ACTOR, memory, memory_file, skill

from ._profile import build_profile


def test_book_38_unattributed_restored_and_actorless_changes_are_named(tmp_path: Path) -> None:
    profile = build_profile(tmp_path)
    sources = load_sources(profile.home)
    with sqlite3.connect(sources.store_db) as conn:
        for version, change, action in ((1, "create", "unattributed"), (2, "deprecate", "external_delete"),
                                        (3, "restore", "external_restore")):
            conn.execute("INSERT INTO skill_history (skill_name, version, change_type, hermes_action, reason, "
                         "provenance, changed_at) VALUES ('lost-skill', ?, ?, ?, 'why', 'unknown', ?)",
                         (version, change, action, f"2026-01-0{version} 10:00:00"))
        conn.execute("INSERT INTO memory_changes (file_path, change_type, actor, reason, after_excerpt, changed_at) "
                     "VALUES ('memories/USER.md', 'add', NULL, 'not attributed: the store lost changes', 'x', "
                     "'2026-01-01 10:00:00')")
    page = skill(sources, "lost-skill")
    assert page is not None
    actors = {v["version"]: v["actor"] for v in page["versions"]}
    assert actors == {1: SCAN_ACTIONS["unattributed"], 2: SCAN_ACTIONS["external_delete"],
                      3: SCAN_ACTIONS["external_restore"]}
    changes = memory_file(sources, "memories/USER.md", ListQuery())
    assert changes is not None and [r["actor"] for r in changes["rows"]] == [UNKNOWN_ACTOR]
    listed = memory(sources)["changes"]
    assert UNKNOWN_ACTOR in {c["actor"] for c in listed} and None not in {c["actor"] for c in listed}
