"""The export layer's reads of a profile's and a telemetry directory's files never block and never read without
bound (fault review D3, "lower severity"): a FIFO (how a file on a home that stopped answering behaves) or an
oversized file is refused at once with one warning naming it, and the caller goes on as for an unreadable file.

Requirements: spec 01 OBS-15 and 03 CFG-49 (runtime faults are fail-open, never stall the host); 06 BOOK-29 (the
snapshot's texts kept in ``observability/blobs``), BOOK-37 (retention and its clock ledger), BOOK-34 (the
profile's ``.gitignore``). Each call runs in a thread joined with a bound: a hang is a failed assertion.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline.export.blobs import keep_snapshot_files
from hermes_pipeline.export.clock_trust import LEDGER_NAME, Ledger, read_skew
from hermes_pipeline.export.content import canonical_json
from hermes_pipeline.export.definition_files import MAX_DEFINITION_BYTES, DefinitionFiles, definition_path
from hermes_pipeline.export.file_scan import find_all_in_file
from hermes_pipeline.export.gitignore import ensure_gitignore
from hermes_pipeline.host.profile_files import ProfileFileError
from hermes_pipeline.sinks.trajectory_store.files import trajectory_date

from tests._bounded import run_bounded


def mkfifo(path: Path, made: list[Path]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    made.append(path)
    return path


def sparse(path: Path, size: int) -> Path:
    """A file of ``size`` bytes that takes no disk."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        fh.truncate(size)
    return path


def make(kind: str, path: Path, made: list[Path], size: int = 9 * 1024 * 1024) -> Path:
    """A FIFO (``kind`` ``"fifo"``) or an oversized sparse file at ``path``."""
    return mkfifo(path, made) if kind == "fifo" else sparse(path, size)


def warned(caplog: pytest.LogCaptureFixture, name: str, why: str) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.levelno >= logging.WARNING and name in r.getMessage() and why in r.getMessage()]


SHA = "a" * 64


@pytest.mark.parametrize("kind", ["fifo", "big"])
def test_a_snapshot_file_that_hangs_or_is_huge_is_not_kept_at_once_with_a_warning(
        tmp_path: Path, kind: str, fifos: list[Path], caplog: pytest.LogCaptureFixture) -> None:
    """BOOK-29 / OBS-15: the bridge's per-turn snapshot (``keep_snapshot_files``, on the agent's thread) counts a
    memory file that is a FIFO or over the cap as not kept, at once, and warns naming it."""
    home = tmp_path / "home"
    target = home / "memories" / "MEMORY.md"
    make(kind, target, fifos)
    context = {"memory": [{"path": "memories/MEMORY.md", "sha256": SHA}]}
    with caplog.at_level(logging.WARNING):
        counts = run_bounded(lambda: keep_snapshot_files(home, context))
    assert counts == {"kept": 0, "present": 0, "not_kept": 1}
    assert warned(caplog, "MEMORY.md", "FIFO" if kind == "fifo" else "too large"), caplog.text


def test_a_regular_snapshot_file_is_kept_as_before(tmp_path: Path) -> None:
    """BOOK-29: a regular file's text is kept under its hash, unchanged."""
    home = tmp_path / "home"
    (home / "memories").mkdir(parents=True)
    data = "a fact\r\nanother\n".encode("utf-8")
    (home / "memories" / "MEMORY.md").write_bytes(data)
    sha = hashlib.sha256(data).hexdigest()
    counts = keep_snapshot_files(home, {"memory": [{"path": "memories/MEMORY.md", "sha256": sha}]})
    assert counts["kept"] == 1
    assert (home / "observability" / "blobs" / sha[:2] / sha).read_bytes() == data


@pytest.mark.parametrize("kind", ["fifo", "big"])
def test_a_retention_ledger_that_hangs_or_is_huge_counts_as_damaged(
        tmp_path: Path, kind: str, fifos: list[Path], caplog: pytest.LogCaptureFixture) -> None:
    """BOOK-37: the ledger (read on a store's thread) is refused at once, taken as damaged (every record kept a
    full window, nothing deleted on its word), and the warning names it; the doctor's reader says nothing."""
    path = tmp_path / LEDGER_NAME
    make(kind, path, fifos)
    with caplog.at_level(logging.WARNING):
        ledger = run_bounded(lambda: Ledger(path))
        assert run_bounded(lambda: read_skew(path)) is None
    assert ledger.damaged and not ledger.created
    assert warned(caplog, LEDGER_NAME, "FIFO" if kind == "fifo" else "too large"), caplog.text


def test_a_regular_ledger_is_read_as_before(tmp_path: Path) -> None:
    path = tmp_path / LEDGER_NAME
    path.write_text('{"version": 1, "last_trusted": 5.0, "skew": {"store": "x"}}', encoding="utf-8")
    ledger = Ledger(path)
    assert not ledger.damaged and ledger.last_trusted == 5.0
    assert read_skew(path) == {"store": "x"}


def _definition(directory: Path) -> tuple[str, dict[str, Any], Path]:
    value = {"tools": ["read_file"]}
    ref = "sha256:" + hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()
    return ref, value, definition_path(directory, ref)


def test_a_definition_that_is_a_fifo_is_written_over_at_once(tmp_path: Path, fifos: list[Path]) -> None:
    """A FIFO under a definition's name (the sidecar, on the output's worker thread) is never waited for: the
    definition is written again in its place."""
    ref, value, path = _definition(tmp_path)
    mkfifo(path, fifos)
    run_bounded(lambda: DefinitionFiles(tmp_path).ensure({ref: value}))
    assert path.is_file() and path.read_bytes() == canonical_json(value).encode("utf-8")


def test_a_huge_definition_file_is_refused_with_a_warning_and_written_again(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    ref, value, path = _definition(tmp_path)
    sparse(path, MAX_DEFINITION_BYTES + 1)
    with caplog.at_level(logging.WARNING):
        run_bounded(lambda: DefinitionFiles(tmp_path).ensure({ref: value}))
    assert path.read_bytes() == canonical_json(value).encode("utf-8")
    assert warned(caplog, path.name, "too large"), caplog.text


def test_a_scan_for_references_refuses_a_fifo_at_once(tmp_path: Path, fifos: list[Path]) -> None:
    """The sweeps' scan (retention of the sidecar and of the kept texts) raises for a FIFO (the sweep then
    deletes nothing) instead of waiting for a writer."""
    path = mkfifo(tmp_path / "events.jsonl", fifos)
    with pytest.raises(ProfileFileError, match="FIFO"):
        run_bounded(lambda: find_all_in_file(path, re.compile(rb"x"), 1, set(), 1 << 20))
    regular = tmp_path / "trajectory.json"
    regular.write_bytes(b'{"a": "sha256:' + b"b" * 64 + b'"}')
    found: set[bytes] = set()
    find_all_in_file(regular, re.compile(rb"sha256:([0-9a-f]{64})"), 71, found, 8)
    assert found == {b"b" * 64}


@pytest.mark.parametrize("kind", ["fifo", "big"])
def test_a_gitignore_that_hangs_or_is_huge_is_left_alone_with_a_warning(
        tmp_path: Path, kind: str, fifos: list[Path], caplog: pytest.LogCaptureFixture) -> None:
    """BOOK-34: opening a store in a home inside a git work tree reads ``$HERMES_HOME/.gitignore``; a FIFO or an
    oversized one there is left alone (nothing appended), at once, with a warning naming it."""
    home = tmp_path / "home"
    (home / ".git").mkdir(parents=True)
    path = home / ".gitignore"
    make(kind, path, fifos)
    with caplog.at_level(logging.WARNING):
        assert run_bounded(lambda: ensure_gitignore(home, "observability/")) is False
    assert warned(caplog, ".gitignore", "FIFO" if kind == "fifo" else "too large"), caplog.text


def test_a_regular_gitignore_is_appended_to_as_before(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".git").mkdir(parents=True)
    (home / ".gitignore").write_bytes(b"*.pyc\r\nbuild/")
    assert ensure_gitignore(home, "observability/") is True
    assert (home / ".gitignore").read_bytes() == b"*.pyc\r\nbuild/\nobservability/\n"
    assert ensure_gitignore(home, "observability/") is False


def test_a_trajectory_named_otherwise_that_is_a_fifo_is_dated_at_once(tmp_path: Path, fifos: list[Path]) -> None:
    """BOOK-37: retention dates a store file whose name has no date by its head; a FIFO is never waited for (its
    modification time dates it)."""
    path = mkfifo(tmp_path / "odd.json", fifos)
    assert run_bounded(lambda: trajectory_date(path)) is not None
