"""A skill's files at any version the observability store recorded (spec 06 BOOK-18; issue #28).

Each ``skill_history`` row (schema 5 on) lists the SHA-256 of every file of the skill at that version
(``files``), and the text of each distinct content is kept once under ``observability/blobs``
(:mod:`hermes_pipeline.export.blobs`, scrubbed of credentials). :func:`skill_files` gives ``{path in the
skill: text}`` for a name and version, so two versions can be shown side by side or diffed as text;
:func:`skill_version` also says which of the version's files have no kept text. A row written before
schema 5 knows only its ``SKILL.md`` hash (``after_hash``): that file alone is given, when its text was kept.

The store is opened read-only (``mode=ro``): nothing is created, upgraded or written.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final
from urllib.parse import quote

from ..export.blobs import read_blob

__all__ = ["SkillVersion", "SkillVersionError", "skill_files", "skill_version"]

STORE: Final = "observability/observability.sqlite3"
"""The observability store, relative to the profile's home."""


class SkillVersionError(Exception):
    """The store exists but cannot be read (damaged, locked past the wait, or not a store)."""


@dataclass
class SkillVersion:
    """One recorded version of a skill."""

    name: str
    version: int
    change_type: str | None
    files: dict[str, str] = field(default_factory=dict)
    """``{path relative to the skill: text}`` of the files whose text was kept."""
    missing: list[str] = field(default_factory=list)
    """Files of the version whose text was not kept (not text, too large, or recorded before texts were)."""


def _connect(path: Path) -> sqlite3.Connection:
    try:
        conn = sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True, timeout=2.0)
        conn.text_factory = lambda raw: raw.decode("utf-8", "replace")
        conn.execute("PRAGMA query_only = ON")
        return conn
    except sqlite3.Error as exc:
        raise SkillVersionError(f"the observability store at {path} cannot be read: {exc}") from None


def skill_version(home: str | Path, name: str, version: int, *, store: Path | None = None) -> SkillVersion | None:
    """Skill ``name`` at ``version`` from the store of the profile at ``home``; ``None`` when the store has no
    such row (or there is no store). A version that deleted the skill has no files.

    Raises:
        SkillVersionError: the store cannot be read (the message names it).
    """
    root = Path(home)
    path = store if store is not None else root / STORE
    if not path.is_file():
        return None
    conn = _connect(path)
    try:
        columns = {row[1] for row in conn.execute("PRAGMA table_info(skill_history)")}
        listed = "files" if "files" in columns else "NULL"
        row = conn.execute(f"SELECT change_type, after_hash, {listed} FROM skill_history "
                           "WHERE skill_name = ? AND version = ?", (name, int(version))).fetchone()
    except sqlite3.Error as exc:
        raise SkillVersionError(f"the observability store at {path} cannot be read: {exc}") from None
    finally:
        conn.close()
    if row is None:
        return None
    change_type, after_hash, listed_files = row
    hashes: dict[str, str] = {}
    if isinstance(listed_files, str):
        try:
            loaded = json.loads(listed_files)
        except ValueError:
            loaded = None
        if isinstance(loaded, dict):
            hashes = {str(k): str(v) for k, v in loaded.items() if isinstance(v, str)}
    elif isinstance(after_hash, str):  # a row from before schema 5: only SKILL.md is known
        hashes = {"SKILL.md": after_hash}
    out = SkillVersion(name, int(version), change_type if isinstance(change_type, str) else None)
    for rel, sha in sorted(hashes.items()):
        text = read_blob(root, sha)
        if text is None:
            out.missing.append(rel)
        else:
            out.files[rel] = text
    return out


def skill_files(home: str | Path, name: str, version: int, *, store: Path | None = None) -> dict[str, str] | None:
    """``{path in the skill: text}`` of skill ``name`` at ``version`` (see :func:`skill_version`; files whose text
    was not kept are left out, :func:`skill_version` names them); ``None`` when the store has no such version.

    Raises:
        SkillVersionError: the store cannot be read.
    """
    found = skill_version(home, name, version, store=store)
    return None if found is None else found.files
