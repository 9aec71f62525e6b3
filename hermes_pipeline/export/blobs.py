"""The texts of a profile's skills, memory and persona file, kept once per distinct content (spec 06 BOOK-29).

A run's context snapshot (:mod:`hermes_pipeline.host.snapshot`) names every skill file, memory file and the
persona file by the SHA-256 of its bytes; :func:`keep_snapshot_files` keeps the text of each of them under
``<home>/observability/blobs/<first two hex>/<sha256>``, written once (a content already kept is not
written again, whichever run or process kept it). A replay rebuilds the skills and memory of the recorded
run from these texts (:func:`read_blob`), and a reader shows a skill at any recorded version.

Every text is scrubbed before it is written (a credential in a skill or memory file never reaches the
disk a second time): the name stays the hash of the file's own bytes, so the recording still refers to it.
A file that is not UTF-8 text, is larger than :data:`MAX_BLOB_BYTES`, or changed between the snapshot and
the copy (its hash no longer matches) is not kept, and counted as such in what the function returns.
Nothing here deletes a blob: trajectory retention never removes a text a kept recording refers to.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Final

from ..engine.scrub import safe_scrub
from .atomic import write_atomically

__all__ = ["BLOB_DIR", "MAX_BLOB_BYTES", "blob_path", "keep_file", "keep_snapshot_files", "read_blob",
           "snapshot_files"]

BLOB_DIR: Final = "observability/blobs"
"""Where, relative to the profile's home, the kept texts are."""
MAX_BLOB_BYTES: Final = 1 << 20
"""Files larger than this are not kept (a skill or memory file is a few kilobytes)."""
_SHA256: Final = re.compile(r"^[0-9a-f]{64}$")


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
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_BLOB_BYTES * 4 + 1)
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


def keep_file(home: Path, source: Path, sha256: str) -> bool | None:
    """Keep the text of ``source`` under ``home``'s blobs as content ``sha256``: ``True`` written now, ``None``
    kept before, ``False`` not kept (not UTF-8 text, too large, unreadable, or its bytes no longer hash to
    ``sha256``)."""
    import hashlib

    target = blob_path(home, sha256)
    if target is None:
        return False
    if target.is_file():
        return None
    try:
        with open(source, "rb") as fh:
            data = fh.read(MAX_BLOB_BYTES + 1)
        if len(data) > MAX_BLOB_BYTES or hashlib.sha256(data).hexdigest() != sha256:
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
    for rel, sha in snapshot_files(context, skills_dir):
        source = _inside(home, rel)
        kept = keep_file(home, source, sha) if source is not None else False
        counts["kept" if kept else "present" if kept is None else "not_kept"] += 1
    return counts
