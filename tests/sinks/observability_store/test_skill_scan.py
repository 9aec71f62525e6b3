"""Rescans of the skills in every layout Hermes uses (issue #27, BOOK-19).

Skills in ``skills/<name>/``, ``skills/<category>/<name>/`` and deeper are found; a skill's own folders and
hidden folders are not skills; a change of a supporting file is a change of the skill; a skill seen for the
first time, changed or removed by hand is a row with no session, saying which files changed; a scan state
written by an older version (``{name: SKILL.md hash}``) is read without a spurious row.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_pipeline.engine import scrub
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


def test_book_18_skills_in_categories_named_build_or_dist_and_their_hidden_files_are_versions(tmp_path: Path) -> None:
    """BOOK-18/19: a category called ``build`` or ``dist`` holds skills like any other, and ``scripts/build/…``,
    ``assets/dist/…`` and ``references/.env.example`` are files of a skill: the agent's changes are versions with
    their path, hashes and files, and a later hand edit of any of them is a row."""
    release = _skill(tmp_path, "build/make-release")
    bundle = _skill(tmp_path, "dist/bundle")
    with store(tmp_path) as (host, handle):
        with host.session() as session, session.turn("go") as turn:
            for rel in ("scripts/build/make.sh", "references/.env.example"):
                (release / rel).parent.mkdir(parents=True, exist_ok=True)
                (release / rel).write_text("v1\n", encoding="utf-8")
                host.skill_lifecycle("file_written", "make-release", reason=rel)
            turn.complete("ok")
        handle.flush()
    (release / "scripts" / "build" / "make.sh").write_text("v2\n", encoding="utf-8")
    (bundle / "SKILL.md").write_text("changed by hand\n", encoding="utf-8")
    with store(tmp_path) as (_, handle):
        handle.flush()
    found = rows(tmp_path, "SELECT skill_name, version, hermes_action, skill_path, changed_files, "
                           "after_hash IS NOT NULL FROM skill_history ORDER BY skill_name, version")
    assert found == [
        ("bundle", 1, "discovered", "dist/bundle", '["SKILL.md"]', 1),
        ("bundle", 2, "external_edit", "dist/bundle", '["SKILL.md"]', 1),
        ("make-release", 1, "discovered", "build/make-release", '["SKILL.md"]', 1),
        ("make-release", 2, "file_written", "build/make-release", '["scripts/build/make.sh"]', 1),
        ("make-release", 3, "file_written", "build/make-release", '["references/.env.example"]', 1),
        ("make-release", 4, "external_edit", "build/make-release", '["scripts/build/make.sh"]', 1)]


def test_book_19_a_skill_moved_by_hand_to_another_category_is_a_row(tmp_path: Path) -> None:
    """BOOK-19: moving a skill's folder to another category changes where Hermes reads it: a row saying where it is
    now, though no file changed."""
    _skill(tmp_path, "data/etl")
    with store(tmp_path) as (_, handle):
        handle.flush()
    (tmp_path / "skills" / "ops").mkdir()
    shutil.move(tmp_path / "skills" / "data" / "etl", tmp_path / "skills" / "ops" / "etl")
    with store(tmp_path) as (_, handle):
        handle.flush()
    with store(tmp_path) as (_, handle):
        handle.flush()  # and once recorded, not again
    assert rows(tmp_path, "SELECT version, hermes_action, skill_path, changed_files FROM skill_history "
                          "WHERE skill_name = 'etl' ORDER BY version") == [
        (1, "discovered", "data/etl", '["SKILL.md"]'), (2, "external_edit", "ops/etl", None)]


def test_book_18_a_change_of_a_name_shared_by_two_skills_is_the_one_hermes_changes(tmp_path: Path) -> None:
    """BOOK-18: with ``alpha/dup`` and ``beta/dup``, Hermes changes the first its lookup meets; that one's hashes
    are the version's and the rescan's discovery of it stays."""
    for category in ("alpha", "beta"):
        _skill(tmp_path, f"{category}/dup", body=category)
    with store(tmp_path) as (_, handle):
        handle.flush()
    tracked = find_skill(tmp_path / "skills", "dup")
    assert tracked is not None and tracked.on_disk is not None
    with store(tmp_path) as (host, handle):
        with host.session() as session, session.turn("go") as turn:
            (tracked.on_disk / "SKILL.md").write_text("patched\n", encoding="utf-8")
            host.skill_lifecycle("patched", "dup", reason="fix")
            turn.complete("ok")
        handle.flush()
    after = hashlib.sha256(b"patched\n").hexdigest()
    found = rows(tmp_path, "SELECT version, hermes_action, skill_path, before_hash = after_hash, after_hash "
                           "FROM skill_history WHERE skill_name = 'dup' ORDER BY version")
    assert found == [(1, "discovered", tracked.path, None, found[0][4]), (2, "patched", tracked.path, 0, after)]


def test_book_18_a_skill_named_like_a_credential_keeps_its_versions_under_its_scrubbed_name(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """BOOK-18 with OBS-58: a skill whose name is a token is stored, looked up and rescanned by its scrubbed name:
    every version has its path and hashes, a restart finds nothing new, and neither the store nor the scan state
    holds the token."""
    token = "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789ab"[:36]
    skill = _skill(tmp_path, f"ops/{token}")
    key = os.urandom(32)  # the profile's marker key, as an activated profile keeps it
    (tmp_path / "observability").mkdir(mode=0o700)
    (tmp_path / "observability" / "redaction.key").write_bytes(key)
    monkeypatch.setattr(scrub, "_redaction_key", scrub._redaction_key)  # put back after the test
    monkeypatch.delenv("HERMES_PIPELINE_REDACTION_KEY", raising=False)
    scrub.set_redaction_key(key)
    with store(tmp_path) as (host, handle):
        with host.session() as session, session.turn("go") as turn:
            (skill / "references").mkdir()
            (skill / "references" / "k.md").write_text("k\n", encoding="utf-8")
            host.skill_lifecycle("file_written", token, reason="add a reference")
            (skill / "SKILL.md").write_text("patched\n", encoding="utf-8")
            host.skill_lifecycle("patched", token, reason="fix")
            turn.complete("ok")
        handle.flush()
    with store(tmp_path) as (_, handle):
        handle.flush()
    found = rows(tmp_path, "SELECT skill_name, version, hermes_action, skill_path, changed_files, "
                           "after_hash IS NOT NULL FROM skill_history ORDER BY version")
    assert [row[1:3] for row in found] == [(1, "discovered"), (2, "file_written"), (3, "patched")]
    name = found[0][0]
    assert name.startswith("<redacted:") and {row[0] for row in found} == {name}
    assert all(row[3] == f"ops/{name}" and row[5] == 1 for row in found)
    assert [row[4] for row in found[1:]] == ['["references/k.md"]', '["SKILL.md"]']
    for path in (tmp_path / "observability").rglob("*"):
        if path.is_file():
            assert token.encode() not in path.read_bytes(), path
    # another process (its own marker key, read from the profile) finds the history by the name on disk
    listed = subprocess.run([sys.executable, "-m", "hermes_pipeline.cli.main", "audit", "skills", "history", token,
                             "--home", str(tmp_path), "--json"], capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0, listed.stderr
    assert sorted(row["version"] for row in json.loads(listed.stdout)) == [1, 2, 3]
    assert token not in listed.stdout


def test_book_18_a_change_that_changes_nothing_is_a_version_saying_so(tmp_path: Path) -> None:
    """BOOK-18: every successful ``skill_manage`` call is a version, one that wrote the same text back too (several
    processes may write one skill at once: the hashes alone cannot tell a repeat from a change another process's
    row already holds); such a version's ``before_hash`` equals its ``after_hash`` and it lists no changed file."""
    with store(tmp_path) as (host, handle):
        with host.session() as session, session.turn("go") as turn:
            skill = _skill(tmp_path, "ops/deploy")
            host.skill_lifecycle("created", "deploy", reason="new")
            host.skill_lifecycle("edited", "deploy", reason="same text")
            (skill / "SKILL.md").write_text("new text\n", encoding="utf-8")
            host.skill_lifecycle("edited", "deploy", reason="real edit")
            turn.complete("ok")
        handle.flush()
    found = rows(tmp_path, "SELECT version, hermes_action, reason, before_hash = after_hash, changed_files "
                           "FROM skill_history ORDER BY version")
    assert found == [(1, "created", "new", None, '["SKILL.md"]'), (2, "edited", "same text", 1, None),
                     (3, "edited", "real edit", 0, '["SKILL.md"]')]


def test_book_18_an_agents_version_names_its_run_and_turn(tmp_path: Path) -> None:
    """BOOK-18, BOOK-25: a version the agent made says which run (``task_runs.trajectory_id``) and turn made it; a
    rescan's row is nobody's run."""
    _skill(tmp_path, "ops/deploy")
    with store(tmp_path) as (host, handle):
        with host.session() as session:
            for text in ("one", "two"):
                with session.turn(text) as turn:
                    (tmp_path / "skills" / "ops" / "deploy" / "SKILL.md").write_text(text, encoding="utf-8")
                    host.skill_lifecycle("edited", "deploy", reason=text)
                    turn.complete("ok")
        handle.flush()
    runs = rows(tmp_path, "SELECT trajectory_id, turn_id FROM task_runs ORDER BY id")
    versions = rows(tmp_path, "SELECT hermes_action, trajectory_id, turn_id FROM skill_history ORDER BY version")
    assert len(runs) == 2 and runs[0][0] != runs[1][0] and all(run[0] and run[1] for run in runs)
    assert versions == [("discovered", None, None), ("edited", *runs[0]), ("edited", *runs[1])]


def test_book_18_19_skills_in_the_profiles_external_dirs_are_tracked(tmp_path: Path) -> None:
    """BOOK-18/19: Hermes also reads skills from ``skills.external_dirs`` of the profile's ``config.yaml``: they are
    discovered, the agent's changes of them are versions with their hashes, and hand edits are rows; such a skill is
    known by its absolute path. A name of the profile's own skills comes first, as in Hermes."""
    home = tmp_path / "hermes"
    external = tmp_path / "shared-skills"
    (external / "tools" / "extskill").mkdir(parents=True)
    (external / "tools" / "extskill" / "SKILL.md").write_text("v1\n", encoding="utf-8")
    (external / "dup").mkdir()
    (external / "dup" / "SKILL.md").write_text("external copy\n", encoding="utf-8")
    _skill(home, "dup", body="own copy")
    home.mkdir(exist_ok=True)
    (home / "config.yaml").write_text("skills:\n  external_dirs:\n    - ../shared-skills\n    - /no/such/dir\n",
                                      encoding="utf-8")
    with store(home) as (host, handle):
        with host.session() as session, session.turn("go") as turn:
            (external / "tools" / "extskill" / "SKILL.md").write_text("v2\n", encoding="utf-8")
            host.skill_lifecycle("patched", "extskill", reason="fix")
            turn.complete("ok")
        handle.flush()
    (external / "tools" / "extskill" / "references").mkdir()
    (external / "tools" / "extskill" / "references" / "a.md").write_text("a\n", encoding="utf-8")
    with store(home) as (_, handle):
        handle.flush()
    where = (external / "tools" / "extskill").resolve().as_posix()
    found = rows(home, "SELECT skill_name, version, hermes_action, skill_path, changed_files, after_hash FROM "
                       "skill_history ORDER BY skill_name, version")
    assert found == [
        ("dup", 1, "discovered", "dup", '["SKILL.md"]', found[0][5]),
        ("extskill", 1, "discovered", where, '["SKILL.md"]', hashlib.sha256(b"v1\n").hexdigest()),
        ("extskill", 2, "patched", where, '["SKILL.md"]', hashlib.sha256(b"v2\n").hexdigest()),
        ("extskill", 3, "external_edit", where, '["references/a.md"]', hashlib.sha256(b"v2\n").hexdigest())]
    assert found[0][5] == hashlib.sha256((home / "skills" / "dup" / "SKILL.md").read_bytes()).hexdigest()
