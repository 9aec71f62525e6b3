"""Skill, memory and persona texts kept once per distinct content (spec 06 BOOK-29; issue #28): what a replay
rebuilds a recorded run's state from."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from hermes_pipeline.export.blobs import BLOB_DIR, blob_path, keep_snapshot_files, read_blob, snapshot_files
from hermes_pipeline.host.snapshot import context_snapshot

MARKER = re.compile(r"<redacted(:[0-9a-f]{4,})?>")


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@given(st.text(max_size=80))
def test_only_a_sha256_names_a_kept_text(name: str) -> None:
    """A name that is not 64 lowercase hex digits never becomes a path (no '..', no '/', nothing else)."""
    path = blob_path(Path("/h"), name)
    assert (path is None) == (re.fullmatch(r"[0-9a-f]{64}", name) is None)


def test_every_file_of_a_snapshot_is_kept_once_scrubbed_and_read_back(tmp_path: Path) -> None:
    """BOOK-29: each skill file, memory file and ``SOUL.md`` a snapshot names is kept under its hash; a second
    snapshot of the same content writes nothing; a credential is kept as a marker; a file that is not text, or
    changed after the snapshot hashed it, is counted as not kept."""
    skill = tmp_path / "skills" / "cat" / "etl"
    (skill / "assets").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: etl\n---\nbody\n", encoding="utf-8")
    (skill / "assets" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe")
    (tmp_path / "memories").mkdir()
    secret = "sk-proj-" + "Zq3dE5gH7jK9mN1pQ3sT5vX7zB9dF1hJ"
    (tmp_path / "memories" / "MEMORY.md").write_text(f"key: OPENAI_API_KEY={secret}\n", encoding="utf-8")
    (tmp_path / "SOUL.md").write_text("You are kind.", encoding="utf-8")
    context = context_snapshot(tmp_path)
    assert sorted(rel for rel, _ in snapshot_files(context)) == [
        "SOUL.md", "memories/MEMORY.md", "skills/cat/etl/SKILL.md", "skills/cat/etl/assets/logo.png"]
    assert keep_snapshot_files(tmp_path, context) == {"kept": 3, "present": 0, "not_kept": 1}  # the PNG
    assert keep_snapshot_files(tmp_path, context) == {"kept": 0, "present": 3, "not_kept": 1}
    assert read_blob(tmp_path, _sha((skill / "SKILL.md").read_bytes())) == "---\nname: etl\n---\nbody\n"
    memory = read_blob(tmp_path, context["memory"][0]["sha256"])
    assert memory is not None and secret not in memory and MARKER.search(memory)
    (tmp_path / "SOUL.md").write_text("You are terse.", encoding="utf-8")  # changed after the snapshot
    for blob in (tmp_path / BLOB_DIR).rglob("*"):
        if blob.is_file() and blob.read_text(encoding="utf-8") == "You are kind.":
            blob.unlink()
    assert keep_snapshot_files(tmp_path, context)["not_kept"] == 2
    assert read_blob(tmp_path, context["persona"]["sha256"]) is None


def test_a_snapshot_naming_a_path_outside_the_home_reads_nothing(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("private", encoding="utf-8")
    home = tmp_path / "home"
    home.mkdir()
    context = {"memory": [{"path": "../outside.txt", "sha256": _sha(b"private")}]}
    assert keep_snapshot_files(home, context) == {"kept": 0, "present": 0, "not_kept": 1}
    assert not (home / BLOB_DIR).exists()
