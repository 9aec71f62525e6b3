"""The ``definitions/`` sidecar of an output directory is pruned with the files that refer to it (spec 04
FMT-87a, spec 06 BOOK-37): an ATOF file sink's retention deletes its old files, then every definition no file
of the directory refers to any more and unused for a day; one any file refers to never goes."""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_pipeline.export import definition_files
from hermes_pipeline.export.definition_files import SIDECAR, prune_unreferenced
from hermes_pipeline.export.files import JsonlFileDestination

OLD = time.time() - 10 * 86400


def _definition(directory: Path, value: str, *, mtime: float | None = OLD) -> str:
    """A sidecar definition of ``value``; its reference."""
    text = json.dumps(value).encode()
    hexdigest = hashlib.sha256(text).hexdigest()
    path = directory / SIDECAR / f"{hexdigest}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return f"sha256:{hexdigest}"


def _line(ref: str) -> str:
    return json.dumps({"kind": "scope", "data": {"tools": {"$ref": ref}}}) + "\n"


def _left(directory: Path) -> set[str]:
    return {f"sha256:{p.stem}" for p in (directory / SIDECAR).glob("*.json")}


def test_fmt_87a_atof_retention_prunes_the_definitions_only_deleted_files_referred_to(tmp_path: Path) -> None:
    """FMT-87a: the ATOF sink's retention deletes its file of ten days ago; the definition only it referred to
    goes, those of the kept ATOF file and of an ATIF file in the same directory stay, and so does one unused
    for less than a day."""
    gone, kept, atif, recent = (_definition(tmp_path, v) for v in ("gone", "kept", "atif", "recent"))
    os.utime(tmp_path / SIDECAR / f"{recent[7:]}.json")  # used just now (a writer touches it first)
    old = tmp_path / "hermes-events-20200101T000000Z.jsonl"
    old.write_text(_line(gone))
    os.utime(old, (OLD, OLD))
    (tmp_path / "hermes-events-20990101T000000Z.jsonl").write_text(_line(kept))
    (tmp_path / "trajectory.json").write_text(json.dumps({"steps": [{"$ref": atif}]}))
    destination = JsonlFileDestination(tmp_path, "hermes-events-20990101T000000Z.jsonl", retention_days=1)
    destination.open()
    assert not old.exists()
    assert _left(tmp_path) == {kept, atif, recent} and destination.definitions_pruned == 1


def test_fmt_87a_without_retention_nothing_is_pruned(tmp_path: Path) -> None:
    orphan = _definition(tmp_path, "orphan")
    JsonlFileDestination(tmp_path, "events.jsonl").open()
    assert _left(tmp_path) == {orphan}


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=10), st.integers(8, 200))
def test_every_referenced_definition_stays_and_no_unreferenced_old_one(tmp_path: Path,
                                                                     cases: list[tuple[bool, bool]],
                                                                     chunk: int) -> None:
    """Property: over random definitions, referred to or not by lines of one file read in random chunk sizes
    (a reference across two chunks counts), used recently or not: after the prune the referenced and the recent
    ones are there, and no other."""
    directory = tmp_path / os.urandom(8).hex()
    directory.mkdir()
    definition_files._CHUNK = chunk  # restored below
    try:
        expected: set[str] = set()
        lines = []
        for i, (referenced, recent) in enumerate(cases):
            ref = _definition(directory, f"value {i}", mtime=None if recent else OLD)
            if referenced:
                lines.append(_line(ref))
            if referenced or recent:
                expected.add(ref)
        (directory / "a.jsonl").write_text("".join(lines))
        prune_unreferenced(directory, time.time(), suffixes=(".jsonl",))
    finally:
        definition_files._CHUNK = 1 << 20
    assert _left(directory) == expected


def test_an_unreadable_file_prunes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a file that cannot be read refers to is unknown: nothing is deleted (a directory or a symbolic
    link named like a file is not read at all)."""
    (tmp_path / "a.jsonl").mkdir()
    (tmp_path / "b.jsonl").symlink_to(tmp_path / "missing")
    _definition(tmp_path, "first")
    assert prune_unreferenced(tmp_path, time.time(), suffixes=(".jsonl",)) == 1
    orphan = _definition(tmp_path, "orphan")
    (tmp_path / "c.jsonl").write_text("x")

    def unreadable(path: Path, out: set[bytes]) -> None:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(definition_files, "_refs_of", unreadable)
    assert prune_unreferenced(tmp_path, time.time(), suffixes=(".jsonl",)) == 0
    assert _left(tmp_path) == {orphan}
