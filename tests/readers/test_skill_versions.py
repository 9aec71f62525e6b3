"""Skill versions with their texts (spec 06 BOOK-18, BOOK-19; issue #28): every ``skill_history`` row lists the
SHA-256 of each file of the version (schema 5), each distinct text is kept once (scrubbed), and
``readers.skill_versions.skill_files`` gives any version's files back for a text diff."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from hermes_pipeline.export.blobs import BLOB_DIR
from hermes_pipeline.readers.skill_versions import SkillVersionError, skill_files, skill_version
from hermes_pipeline.sinks.observability_store import connect, sqlite_utc, store_path
from hermes_pipeline.sinks.observability_store.schema import ADDED_COLUMNS, COLUMNS, SCHEMA_VERSION, TABLES
from tests.sinks.observability_store._support import store

MARKER = re.compile(r"<redacted(:[0-9a-f]{4,})?>")
V1 = "---\nname: etl\ndescription: Load the data.\n---\nRun scripts/run.sh\n"
V2 = "---\nname: etl\ndescription: Load and check the data.\n---\nRun scripts/run.sh, then check.\n"


def _skill(home: Path, text: str, script: str = "echo load\n") -> Path:
    skill = home / "skills" / "data" / "etl"
    (skill / "scripts").mkdir(parents=True, exist_ok=True)
    (skill / "SKILL.md").write_text(text, encoding="utf-8")
    (skill / "scripts" / "run.sh").write_text(script, encoding="utf-8")
    return skill


def _blobs(home: Path) -> list[Path]:
    return sorted(p for p in (home / BLOB_DIR).rglob("*") if p.is_file())


def test_book_18_each_version_gives_back_its_files_and_each_text_is_kept_once(tmp_path: Path) -> None:
    """BOOK-18 / BOOK-19: a skill found, then edited by hand (its SKILL.md; the script unchanged), is two versions;
    each gives back exactly its files' texts; the unchanged script's text is kept once for both versions."""
    _skill(tmp_path, V1)
    with store(tmp_path) as (_, handle):
        handle.flush()
    assert len(_blobs(tmp_path)) == 2
    _skill(tmp_path, V2)
    with store(tmp_path) as (_, handle):
        handle.flush()
    assert skill_files(tmp_path, "etl", 1) == {"SKILL.md": V1, "scripts/run.sh": "echo load\n"}
    assert skill_files(tmp_path, "etl", 2) == {"SKILL.md": V2, "scripts/run.sh": "echo load\n"}
    assert len(_blobs(tmp_path)) == 3  # V1, V2, and the script once
    assert skill_files(tmp_path, "etl", 3) is None and skill_files(tmp_path, "other", 1) is None
    assert skill_files(tmp_path / "no-store", "etl", 1) is None


def test_a_credential_in_a_skill_file_is_not_kept(tmp_path: Path) -> None:
    """The kept texts pass the scrubber: a key in a skill's script is a redaction marker, the rest is kept."""
    secret = "sk-proj-" + "Ab3dE5gH7jK9mN1pQ3sT5vX7zB9dF1hJ"
    _skill(tmp_path, V1, script=f"export OPENAI_API_KEY={secret}\necho load\n")
    with store(tmp_path) as (_, handle):
        handle.flush()
    script = (skill_files(tmp_path, "etl", 1) or {})["scripts/run.sh"]
    assert secret not in script and MARKER.search(script) and script.endswith("echo load\n")
    assert all(secret.encode() not in p.read_bytes() for p in _blobs(tmp_path))


def test_a_version_whose_text_is_gone_names_the_missing_file(tmp_path: Path) -> None:
    _skill(tmp_path, V1)
    with store(tmp_path) as (_, handle):
        handle.flush()
    for blob in _blobs(tmp_path):
        if blob.read_text(encoding="utf-8") == V1:
            blob.unlink()
    found = skill_version(tmp_path, "etl", 1)
    assert found is not None and found.missing == ["SKILL.md"] and list(found.files) == ["scripts/run.sh"]


def test_a_version_4_store_gains_the_files_column_and_its_rows_give_their_skill_md(tmp_path: Path) -> None:
    """Schema 5: ``skill_history.files`` is added in place to a version-4 store, its rows are kept (``files``
    NULL), and such a row gives back its ``SKILL.md`` from its ``after_hash`` when that text is kept; a reader
    never upgrades the store."""
    path = store_path(tmp_path)
    path.parent.mkdir(parents=True)
    conn = sqlite3.connect(path)
    for ddl in TABLES.values():
        for later in ("files", "trajectory_id", "turn_id", "approved_by", "pending_id"):  # versions 6 to 8
            ddl = ddl.replace(f"        {later} TEXT NULL,\n", "").replace(f",\n        {later} TEXT NULL)", ")")
        conn.execute(ddl)
    assert "files" not in {r[1] for r in conn.execute("PRAGMA table_info(skill_history)")}
    import hashlib

    sha = hashlib.sha256(V1.encode()).hexdigest()
    conn.execute("INSERT INTO skill_history (skill_name, version, change_type, after_hash, changed_at) "
                 "VALUES ('etl', 1, 'create', ?, ?)", (sha, sqlite_utc()))
    conn.execute("PRAGMA user_version = 4")
    conn.commit()
    conn.close()
    assert skill_version(tmp_path, "etl", 1).missing == ["SKILL.md"]  # type: ignore[union-attr]
    (tmp_path / BLOB_DIR / sha[:2]).mkdir(parents=True)
    (tmp_path / BLOB_DIR / sha[:2] / sha).write_text(V1, encoding="utf-8")
    assert skill_files(tmp_path, "etl", 1) == {"SKILL.md": V1}  # read-only, before any upgrade
    assert int(sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0]) == 4
    upgraded = connect(path)
    assert tuple(r[1] for r in upgraded.execute("PRAGMA table_info(skill_history)")) == COLUMNS["skill_history"]
    assert ("files", "TEXT NULL") in ADDED_COLUMNS["skill_history"]
    assert upgraded.execute("SELECT skill_name, files FROM skill_history").fetchall() == [("etl", None)]
    assert int(upgraded.execute("PRAGMA user_version").fetchone()[0]) == SCHEMA_VERSION
    upgraded.close()
    assert skill_files(tmp_path, "etl", 1) == {"SKILL.md": V1}


def test_a_damaged_store_is_a_typed_error_naming_it(tmp_path: Path) -> None:
    path = store_path(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not a database at all" * 100)
    with pytest.raises(SkillVersionError, match="observability.sqlite3"):
        skill_files(tmp_path, "etl", 1)


def test_book_18_the_dashboard_shows_the_text_diff_of_two_kept_versions(tmp_path: Path) -> None:
    """Issue #31 item 3 end to end: the texts the store keeps for each version (not a stand-in reader) give the
    skill page's text diff: the changed line removed and added, the unchanged script not listed as changed."""
    from hermes_pipeline.dashboard import Dashboard, load_sources

    _skill(tmp_path, V1)
    with store(tmp_path) as (_, handle):
        handle.flush()
    _skill(tmp_path, V2)
    with store(tmp_path) as (_, handle):
        handle.flush()
    response = Dashboard(load_sources(tmp_path)).respond("/skills/etl")
    assert response.status == 200
    page = response.body.decode()
    assert "Text diff v1 → v2" in page and "<h4>SKILL.md (changed)</h4>" in page
    assert '<div class="dr">- Run scripts/run.sh</div>' in page
    assert '<div class="da">+ Run scripts/run.sh, then check.</div>' in page
    assert "scripts/run.sh (changed)" not in page
