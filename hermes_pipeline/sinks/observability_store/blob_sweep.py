"""Mark-and-sweep of the kept skill, memory and persona texts (``observability/blobs``, spec 06 BOOK-29, BOOK-48).

The texts are kept once per distinct content (:mod:`hermes_pipeline.export.blobs`) and referred to by hash from
two places: the store's ``skill_history.files`` (every file of a skill version; ``memory_changes.file_hash``
is counted too) and the context snapshot of every recorded run (``extra.hermes.context`` of a trajectory file).
Retention deletes rows and trajectory files, never the texts they referred to; this module does, after them:

* **mark**: every 64-hex-digit token of the kept rows and of every ``*.json`` file (a trajectory) directly in
  the recordings' directories (the profile's trajectory store and ``<home>/telemetry``, the default directory
  of ATIF outputs). A token that is not a text's hash only keeps a text that would otherwise go: the mark
  errs on the side of keeping, whatever the shape of the snapshot;
* **sweep**: :func:`hermes_pipeline.export.blobs.sweep` deletes the unmarked texts unused for a day before the
  sweep started, under the blobs' lock (a text written or used during the sweep is never deleted).

When anything that could refer to a text cannot be read (a damaged store, an unreadable trajectory file, a
profile configuration that does not load) nothing is deleted and the counts say why. Recordings kept in other
directories (an ATIF output configured elsewhere) are not read: see ``docs/observability-store.md``.
"""

from __future__ import annotations

import os
import re
import sqlite3
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Final

from ...export.blobs import BLOB_DIR, SweepCounts, sweep
from ...export.file_scan import find_all_in_file

__all__ = ["RECORDING_SUFFIXES", "profile_recording_dirs", "referenced_by_files", "referenced_by_rows",
           "sweep_blobs"]

_HEX64: Final = re.compile(rb"(?<![0-9a-f])[0-9a-f]{64}(?![0-9a-f])")
RECORDING_SUFFIXES: Final = (".json",)
"""What a recording is (an ATIF trajectory; ATOF ``.jsonl`` event files are not replayed)."""
_CHUNK: Final = 1 << 20
_ROW_QUERIES: Final = ("SELECT files FROM skill_history WHERE files IS NOT NULL",
                       "SELECT file_hash FROM memory_changes WHERE file_hash IS NOT NULL")


def profile_recording_dirs(home: Path) -> list[Path]:
    """The directories whose files may refer to ``home``'s texts: its trajectory store (``observability.
    trajectories.dir``) and ``<home>/telemetry``.

    Raises:
        ValueError: the profile's ``config.yaml`` cannot be read (the profile then runs on defaults, but the
            recordings of the directory it names may still be there: where they are is unknown).
    """
    from ...config.profile_config import CONFIG_NAME, load_profile_settings, read_yaml_checked
    from ...export.paths import TELEMETRY_DIR

    _, problem, error = read_yaml_checked(home / CONFIG_NAME)
    if error is not None or problem:
        raise ValueError(error.message if error is not None else problem)
    settings = load_profile_settings(home, log=False)
    return [settings.trajectories.directory(home), home / TELEMETRY_DIR]


def referenced_by_rows(conn: sqlite3.Connection) -> set[str]:
    """The hashes the store's kept rows refer to (see the module docstring)."""
    out: set[str] = set()
    for query in _ROW_QUERIES:
        for (value,) in conn.execute(query):
            if isinstance(value, str):
                out.update(m.decode() for m in _HEX64.findall(value.encode("utf-8", "replace")))
    return out


def referenced_by_files(directories: Iterable[Path]) -> set[str]:
    """The hashes the recordings directly in ``directories`` refer to (a missing directory refers to none).

    Raises:
        OSError: a directory or one of its recordings cannot be read.
    """
    out: set[bytes] = set()
    for directory in directories:
        try:
            entries = list(os.scandir(directory))
        except FileNotFoundError:
            continue
        for entry in entries:
            if entry.name.endswith(RECORDING_SUFFIXES) and entry.is_file(follow_symlinks=False):
                _scan(Path(entry.path), out)
    return {m.decode() for m in out}


def _scan(path: Path, out: set[bytes]) -> None:
    """Add every hash of ``path`` to ``out``, a chunk at a time (a hash across two chunks is found)."""
    find_all_in_file(path, _HEX64, 64, out, _CHUNK)


def sweep_blobs(home: Path, *, conn: sqlite3.Connection | None = None, directories: Iterable[Path] | None = None,
                now: float | None = None, dry_run: bool = False) -> SweepCounts:
    """Delete (``dry_run``: count) ``home``'s texts that no kept row (``conn``: the store, after its retention
    committed; ``None``: no store) and no recording in ``directories`` (default :func:`profile_recording_dirs`)
    refers to. ``now``: when the sweep starts (epoch seconds; injectable for tests). Never raises for a
    file-system or store problem: nothing is deleted and ``skipped`` says why."""
    started = time.time() if now is None else now
    if not (home / BLOB_DIR).is_dir():
        return SweepCounts()
    try:
        marked = referenced_by_rows(conn) if conn is not None else set()
    except (sqlite3.Error, UnicodeDecodeError) as exc:
        return SweepCounts(skipped=f"the store's rows cannot be read ({type(exc).__name__})")
    try:
        dirs = list(directories) if directories is not None else profile_recording_dirs(home)
    except (ValueError, OSError) as exc:  # a profile config that does not load: its store is unknown
        return SweepCounts(skipped=f"the profile's config.yaml cannot be read ({type(exc).__name__})")
    try:
        marked |= referenced_by_files(dirs)
    except OSError as exc:
        return SweepCounts(skipped=f"a recording cannot be read ({exc.strerror or type(exc).__name__})")
    return sweep(home, marked, started, dry_run=dry_run)
