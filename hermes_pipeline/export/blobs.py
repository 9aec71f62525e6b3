"""The texts of a profile's skills, memory and persona file, kept once per distinct content (spec 06 BOOK-29).

A run's context snapshot (:mod:`hermes_pipeline.host.snapshot`) names every skill file, memory file and the
persona file by the SHA-256 of its bytes; :func:`keep_snapshot_files` keeps the text of each of them under
``<home>/observability/blobs/<first two hex>/<sha256>``, written once (a content already kept is not
written again, whichever run or process kept it). A replay rebuilds the skills and memory of the recorded
run from these texts (:func:`read_blob`), and a reader shows a skill at any recorded version.

Every text is scrubbed before it is written (a credential in a skill or memory file never reaches the
disk a second time): the name stays the hash of the file's own bytes, so the recording still refers to it.
A file that is not UTF-8 text, is larger than :data:`MAX_BLOB_BYTES`, or changed between the snapshot and
the copy (its hash no longer matches) is not kept, and counted as such in what the function returns. The
source is read with :func:`~hermes_pipeline.host.profile_files.read_regular_bytes` (this runs on the agent's
thread, before each LLM call): a FIFO (a file on a home that stopped answering), a device, a directory or an
oversized file is refused at once, never waited for, with one warning naming it, and counted as not kept.

Each time a snapshot names a text that is already kept, its modification time is set to now: a blob's
``mtime`` is the last time any run or skill version referred to it. :func:`sweep` (the store's retention,
:mod:`hermes_pipeline.sinks.observability_store.blob_sweep`) deletes only texts that nothing kept refers to
*and* that were not written or used for :data:`UNUSED_GRACE_S` before the sweep started (a run in progress
refers to its texts only once its trajectory is written). The touch and the deletion both happen under one
lock (``observability/.blobs.lock``, :mod:`.locks`), so a text a snapshot has just found kept is never deleted
behind it: either the touch comes first (the sweep sees a fresh ``mtime`` and keeps it) or the deletion does
(the snapshot finds it gone and writes it again). The lock is waited for briefly (:data:`SNAPSHOT_LOCK_TIMEOUT`
on the agent's thread: a peer that hangs holding it never stalls a turn): a snapshot that did not get it goes
on without it, which stays safe because the sweep deletes a text by renaming it away first and reading its
``mtime`` again after the rename (:func:`_delete_unused`).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Collection, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final

from ..engine.scrub import safe_scrub
from ..host.profile_files import ProfileFileError, read_regular_bytes, warn_unreadable
from .atomic import write_atomically
from .clock_trust import DAY_S
from .locks import file_lock

__all__ = ["BLOB_DIR", "LOCK_NAME", "MAX_BLOB_BYTES", "UNUSED_GRACE_S", "SweepCounts", "blob_path", "keep_file",
           "keep_snapshot_files", "read_blob", "snapshot_files", "sweep"]

logger: Final = logging.getLogger("hermes_pipeline.export.blobs")

BLOB_DIR: Final = "observability/blobs"
"""Where, relative to the profile's home, the kept texts are."""
MAX_BLOB_BYTES: Final = 1 << 20
"""Files larger than this are not kept (a skill or memory file is a few kilobytes)."""
_SHA256: Final = re.compile(r"^[0-9a-f]{64}$")
LOCK_NAME: Final = "observability/.blobs.lock"
"""The lock, relative to the home, that a snapshot's touch and the sweep's deletions take (module docstring)."""
UNUSED_GRACE_S: Final = DAY_S
SNAPSHOT_LOCK_TIMEOUT: Final = 0.2
"""Seconds a snapshot (the agent's thread, before each LLM call) waits for the blobs' lock before going on
without it (a sweep holds it while it deletes; a hung peer may hold it for ever)."""
SWEEP_LOCK_TIMEOUT: Final = 5.0
"""Seconds a sweep (the store's writer thread) waits for the lock before skipping this sweep (counted)."""
_SWEEP_SUFFIX: Final = ".sweep"
"""A text written or used less than this long before a sweep started is kept even when nothing refers to it."""


def blob_path(home: Path, sha256: str) -> Path | None:
    """Where the text of content ``sha256`` is (or would be) kept; ``None`` for a value that is no SHA-256."""
    if not isinstance(sha256, str) or not _SHA256.match(sha256):
        return None
    return home / BLOB_DIR / sha256[:2] / sha256


def read_blob(home: Path, sha256: str) -> str | None:
    """The kept text of content ``sha256``, ``None`` when it was not kept (or cannot be read)."""
    path = blob_path(home, sha256)
    if path is None or not path.is_file() or path.is_symlink():
        return None
    try:  # never blocks: a FIFO or a device swapped in after the check is refused
        data = read_regular_bytes(path, MAX_BLOB_BYTES * 4)
        return data.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def snapshot_files(context: Mapping[str, Any], skills_dir: str = "skills") -> Iterator[tuple[str, str]]:
    """``(path relative to the home, sha256)`` of every file a context snapshot names: each skill's files
    (only ``SKILL.md`` for a snapshot that did not list them), the memory files and the persona file."""
    for skill in context.get("skills") or []:
        if not isinstance(skill, Mapping) or not isinstance(skill.get("name"), str):
            continue
        files = skill.get("files")
        if not isinstance(files, Mapping):
            files = {"SKILL.md": skill.get("sha256")}
        for rel, sha in files.items():
            if isinstance(rel, str) and isinstance(sha, str):
                yield f"{skills_dir}/{skill['name']}/{rel}", sha
    for entry in context.get("memory") or []:
        if isinstance(entry, Mapping) and isinstance(entry.get("path"), str) and isinstance(entry.get("sha256"), str):
            yield str(entry["path"]), str(entry["sha256"])
    persona = context.get("persona")
    if isinstance(persona, Mapping) and isinstance(persona.get("path"), str) and isinstance(persona.get("sha256"), str):
        yield str(persona["path"]), str(persona["sha256"])


def _inside(home: Path, rel: str) -> Path | None:
    path = home / rel
    try:
        path.resolve().relative_to(home.resolve())
    except (OSError, ValueError):
        return None
    return path


@contextmanager
def _blob_lock(home: Path, timeout: float = SNAPSHOT_LOCK_TIMEOUT) -> Iterator[bool]:
    """Hold the blobs' lock, waiting at most ``timeout`` seconds; yields ``False`` (not held) when it cannot be
    taken (no writable ``observability/``, or a peer holds it past the wait): a writer then goes on without it
    (safe: :func:`sweep` deletes by rename-then-check), and :func:`sweep` deletes nothing."""
    lock = home / LOCK_NAME
    taken = file_lock(lock, timeout=timeout)
    held: AbstractContextManager[None] | None = taken
    try:
        lock.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        taken.__enter__()
    except OSError:  # FileLockTimeout among them
        held = None
    if held is None:
        yield False
        return
    try:
        yield True
    finally:
        held.__exit__(None, None, None)


def _delete_unused(path: str, cutoff: float) -> bool:
    """Delete the kept text ``path`` unless it was used at or after ``cutoff``; ``False`` when it was (kept).

    The text is first renamed to a name no snapshot looks for, then its ``mtime`` is read again: a snapshot that
    touched it before the rename is seen (the text goes back), one that comes after finds it gone and writes it
    again. So a text in use is never lost, even to a snapshot that went on without the lock."""
    directory, name = os.path.split(path)
    tomb = os.path.join(directory, f".{name}.{os.getpid()}{_SWEEP_SUFFIX}")
    os.rename(path, tomb)
    try:
        used = os.lstat(tomb).st_mtime >= cutoff
    except OSError:
        used = True
    if used:
        os.replace(tomb, path)  # a copy written meanwhile holds the same text
        return False
    os.unlink(tomb)
    return True


def _touch(path: Path) -> bool:
    """Set ``path``'s modification time to now; ``False`` when it is not (or no longer) a kept file."""
    try:
        if path.is_symlink():
            return False
        os.utime(path)
    except OSError:
        return False
    return True


def keep_file(home: Path, source: Path, sha256: str, *, locked: bool = False) -> bool | None:
    """Keep the text of ``source`` under ``home``'s blobs as content ``sha256``: ``True`` written now, ``None``
    kept before (its ``mtime`` set to now: used again), ``False`` not kept (not UTF-8 text, too large,
    unreadable, or its bytes no longer hash to ``sha256``). ``locked``: the caller holds the blobs' lock."""
    import hashlib

    target = blob_path(home, sha256)
    if target is None:
        return False
    if target.is_file():
        with nullcontext() if locked else _blob_lock(home):
            if _touch(target):
                return None
    try:
        data = read_regular_bytes(source, MAX_BLOB_BYTES)  # the agent's thread: a FIFO is refused, never waited for
    except ProfileFileError as exc:  # a FIFO, device or directory, too large, or unreadable: warned once
        warn_unreadable(logger, exc, "snapshot file", event="snapshot_file_not_kept")
        return False
    except OSError:  # gone since the snapshot
        return False
    try:
        if hashlib.sha256(data).hexdigest() != sha256:
            return False
        text = safe_scrub(data.decode("utf-8"))
        target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        write_atomically(target, text.encode("utf-8"))
    except (OSError, ValueError):  # UnicodeDecodeError is a ValueError
        return False
    return True


def keep_snapshot_files(home: Path, context: Mapping[str, Any], skills_dir: str = "skills") -> dict[str, int]:
    """Keep the text of every file ``context`` names (see the module docstring).

    Returns:
        ``{"kept": n, "present": n, "not_kept": n}``: written now, kept before, and not kept (not text, too
        large, unreadable, or changed since the snapshot hashed it).
    """
    counts = {"kept": 0, "present": 0, "not_kept": 0}
    named = list(snapshot_files(context, skills_dir))
    if not named:
        return counts
    with _blob_lock(home):  # once for the whole snapshot (a sweep holds it only while it deletes)
        for rel, sha in named:
            source = _inside(home, rel)
            kept = keep_file(home, source, sha, locked=True) if source is not None else False
            counts["kept" if kept else "present" if kept is None else "not_kept"] += 1
    return counts


def _sweep_leftover(entry: os.DirEntry[str], cutoff: float) -> None:
    """A text a dead sweep renamed away: back under its name when used since ``cutoff``, else deleted."""
    name = entry.name[1:].split(".", 1)[0]
    try:
        if _SHA256.match(name) and entry.stat(follow_symlinks=False).st_mtime >= cutoff:
            os.replace(entry.path, os.path.join(os.path.dirname(entry.path), name))
        else:
            os.unlink(entry.path)
    except OSError:
        pass


@dataclass(slots=True)
class SweepCounts:
    """What a :func:`sweep` found among the kept texts."""

    deleted: int = 0
    """Texts nothing referred to, unused for :data:`UNUSED_GRACE_S` (deleted, or that a dry run would delete)."""
    referenced: int = 0
    """Texts a kept row or recording refers to (kept)."""
    recent: int = 0
    """Texts nothing refers to but written or used within the grace (kept: a run in progress may need them)."""
    failed: int = 0
    """Texts that could not be deleted (kept; counted so that a loss of space is visible)."""
    skipped: str | None = None
    """Why nothing was deleted at all (what is referenced could not be known, or the lock not taken)."""

    def as_dict(self) -> dict[str, Any]:
        """The counts, for a report."""
        return asdict(self)


def sweep(home: Path, referenced: Collection[str], started: float, *, dry_run: bool = False) -> SweepCounts:
    """Delete (``dry_run``: count) the kept texts of ``home`` whose hash is not in ``referenced`` and whose
    ``mtime`` is older than ``started - UNUSED_GRACE_S`` (see the module docstring). Only names of the
    ``<2 hex>/<64 hex>`` layout are looked at; symbolic links and anything else are left alone."""
    counts = SweepCounts()
    root = home / BLOB_DIR
    try:
        shards = sorted(entry.name for entry in os.scandir(root)
                        if len(entry.name) == 2 and entry.is_dir(follow_symlinks=False))
    except FileNotFoundError:
        return counts
    except OSError as exc:
        counts.skipped = f"the blobs directory cannot be listed ({exc.strerror or exc})"
        return counts
    cutoff = started - UNUSED_GRACE_S
    with _blob_lock(home, SWEEP_LOCK_TIMEOUT) as held:
        if not held and not dry_run:
            counts.skipped = "the blobs' lock cannot be taken"
            return counts
        for shard in shards:
            try:
                entries = list(os.scandir(root / shard))
            except OSError:
                continue
            for entry in entries:
                if entry.name.endswith(_SWEEP_SUFFIX) and not dry_run:  # left by a sweep that died mid-delete
                    _sweep_leftover(entry, cutoff)
                    continue
                if not _SHA256.match(entry.name) or entry.name[:2] != shard:
                    continue
                try:
                    if not entry.is_file(follow_symlinks=False):
                        continue
                    if entry.name in referenced:
                        counts.referenced += 1
                        continue
                    if entry.stat(follow_symlinks=False).st_mtime >= cutoff:
                        counts.recent += 1
                        continue
                    if not dry_run and not _delete_unused(entry.path, cutoff):
                        counts.recent += 1
                        continue
                except OSError:
                    counts.failed += 1
                    continue
                counts.deleted += 1
    return counts
