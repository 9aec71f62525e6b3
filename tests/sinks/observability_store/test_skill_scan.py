"""Rescans of the skills in every layout Hermes uses (issue #27, BOOK-19).

Skills in ``skills/<name>/``, ``skills/<category>/<name>/`` and deeper are found; a skill's own folders and
hidden folders are not skills; a change of a supporting file is a change of the skill; a skill seen for the
first time, changed or removed by hand is a row with no session, saying which files changed; a scan state
written by an older version (``{name: SKILL.md hash}``) is read without a spurious row.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from hermes_pipeline.sinks.observability_store.skill_tree import all_skills, find_skill
from tests.sinks.observability_store._support import rows, store


def _skill(root: Path, rel: str, body: str = "body") -> Path:
    path = root / "skills" / rel
    path.mkdir(parents=True, exist_ok=True)
    (path / "SKILL.md").write_text(f"---\nname: {path.name}\n---\n{body}\n", encoding="utf-8")
    return path


def test_every_layout_is_found_and_a_skills_own_folders_are_not_skills(tmp_path: Path) -> None:
    _skill(tmp_path, "plain")
    etl = _skill(tmp_path, "data/etl")
    _skill(tmp_path, "ops/cloud/deploy")
    _skill(tmp_path, ".archive/old")
    _skill(tmp_path, "data/etl/references/inner")  # inside a skill: a supporting file, not a skill
    (etl / "scripts").mkdir()
    (etl / "scripts" / "run.sh").write_text("echo\n", encoding="utf-8")
    found = all_skills(tmp_path / "skills")
    assert {n: t.path for n, t in found.items()} == {"plain": "plain", "etl": "data/etl",
                                                      "deploy": "ops/cloud/deploy"}
    assert sorted(found["etl"].files) == ["SKILL.md", "references/inner/SKILL.md", "scripts/run.sh"]
    assert found["etl"].skill_md == hashlib.sha256((etl / "SKILL.md").read_bytes()).hexdigest()
    tree = find_skill(tmp_path / "skills", "deploy")
    assert tree is not None and tree.path == "ops/cloud/deploy"
    assert find_skill(tmp_path / "skills", "old") is None and find_skill(tmp_path / "skills", "../plain") is None


def test_hand_changes_while_stopped_are_rows_saying_what_changed(tmp_path: Path) -> None:
    etl = _skill(tmp_path, "data/etl")
    (etl / "templates").mkdir()
    (etl / "templates" / "job.yaml").write_text("a\n", encoding="utf-8")
    _skill(tmp_path, "gone")
    with store(tmp_path) as (_, handle):
        handle.flush()
    (etl / "templates" / "job.yaml").write_text("b\n", encoding="utf-8")
    shutil.rmtree(tmp_path / "skills" / "gone")
    _skill(tmp_path, "new/fresh")
    with store(tmp_path) as (_, handle):
        handle.flush()
    found = rows(tmp_path, "SELECT skill_name, version, change_type, hermes_action, trigger_session_id, skill_path, "
                           "changed_files, before_hash IS NULL, after_hash IS NULL FROM skill_history "
                           "ORDER BY skill_name, version")
    assert found == [
        ("etl", 1, "create", "discovered", None, "data/etl", '["SKILL.md", "templates/job.yaml"]', 1, 0),
        ("etl", 2, "refine", "external_edit", None, "data/etl", '["templates/job.yaml"]', 0, 0),
        ("fresh", 1, "create", "discovered", None, "new/fresh", '["SKILL.md"]', 1, 0),
        ("gone", 1, "create", "discovered", None, "gone", '["SKILL.md"]', 1, 0),
        ("gone", 2, "deprecate", "external_delete", None, "gone", '["SKILL.md"]', 0, 1)]


def test_a_scan_state_of_an_older_version_gives_no_spurious_row(tmp_path: Path) -> None:
    skill = _skill(tmp_path, "pdf")
    (skill / "references").mkdir()
    (skill / "references" / "api.md").write_text("x\n", encoding="utf-8")  # the old state knew only SKILL.md
    digest = hashlib.sha256((skill / "SKILL.md").read_bytes()).hexdigest()
    state = tmp_path / "observability" / "scan-state.json"
    state.parent.mkdir(mode=0o700)
    state.write_text(json.dumps({"version": 1, "skills": {"pdf": digest}, "memory": {}}), encoding="utf-8")
    with store(tmp_path) as (_, handle):
        handle.flush()
    assert rows(tmp_path, "SELECT COUNT(*) FROM skill_history") == [(0,)]


def test_skills_hermes_installed_itself_are_discovered_as_installed(tmp_path: Path) -> None:
    """Bundled skills (``.bundled_manifest``) and hub installs (``.hub/lock.json``) get provenance ``installed``."""
    for rel in ("bundled-one", "tools/from-hub", "mine"):
        _skill(tmp_path, rel)
    (tmp_path / "skills" / ".bundled_manifest").write_text("bundled-one:abc123\n", encoding="utf-8")
    (tmp_path / "skills" / ".hub").mkdir()
    (tmp_path / "skills" / ".hub" / "lock.json").write_text(json.dumps({"version": 1, "installed": {
        "from-hub": {"source": "hub"}}}), encoding="utf-8")
    with store(tmp_path) as (_, handle):
        handle.flush()
    assert rows(tmp_path, "SELECT skill_name, hermes_action, provenance FROM skill_history ORDER BY skill_name") == [
        ("bundled-one", "discovered", "installed"), ("from-hub", "discovered", "installed"),
        ("mine", "discovered", "unknown")]
