"""Where the skills of a profile are, and what each one holds, in every layout Hermes uses.

Hermes keeps a skill in a directory holding ``SKILL.md``: directly under the skills root
(``skills/<name>/``), in a category folder (``skills/<category>/<name>/``, what ``skill_manage``
``create`` with a ``category`` makes) or deeper; the skill's name is its directory's name, and the
files beside ``SKILL.md`` (``references/``, ``templates/``, ``scripts/``, ``assets/``) belong to it.
A directory holding ``SKILL.md`` is a skill and is not searched for further skills; hidden
directories and dependency or cache folders are skipped, as Hermes' own scanner skips them.

:class:`SkillTree` is what the store knows of one skill: its path relative to the skills root, the
SHA-256 of its ``SKILL.md`` (the ``before_hash`` / ``after_hash`` of ``skill_history``, spec BOOK-18,
the same hash the context snapshot records) and the SHA-256 of every file of the skill, so that a
change of a supporting file is a change of the skill too. Only hashes: never a file's text.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

SKILL_FILE: Final = "SKILL.md"
SKIPPED_DIRS: Final = frozenset({"node_modules", "__pycache__", "venv", "site-packages", "dist", "build"})
"""Folders never searched for skills nor counted as a skill's files (besides hidden ones)."""
MAX_FILES: Final = 2000
"""At most this many files of one skill are hashed (a skill is a handful; the rest is not tracked)."""


def _sha256(path: Path) -> str | None:
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 16), b""):
                digest.update(block)
    except OSError:
        return None
    return digest.hexdigest()


def _skipped(name: str) -> bool:
    return name.startswith(".") or name in SKIPPED_DIRS


@dataclass(frozen=True)
class SkillTree:
    """One skill as found on disk (see the module docstring)."""

    path: str
    """Its directory relative to the skills root (``data/my-skill``), POSIX separators."""
    skill_md: str | None
    """SHA-256 of ``SKILL.md``."""
    files: dict[str, str] = field(default_factory=dict)
    """SHA-256 of each of its files, by path relative to the skill directory."""

    def digest(self) -> str:
        """One SHA-256 of all its files (paths and hashes): equal digests, equal skills."""
        listing = "\n".join(f"{path}\0{sha}" for path, sha in sorted(self.files.items()))
        return hashlib.sha256(listing.encode("utf-8")).hexdigest()

    def to_state(self) -> dict[str, Any]:
        """The scan-state form (hashes only)."""
        return {"path": self.path, "sha256": self.skill_md, "files": dict(self.files)}

    @classmethod
    def from_state(cls, raw: object) -> SkillTree | None:
        """A tree from the scan state; an older state kept only the ``SKILL.md`` hash of ``<name>/``."""
        if isinstance(raw, str):  # the files beside SKILL.md are unknown: only SKILL.md is compared
            return cls("", raw, {})
        if not isinstance(raw, Mapping):
            return None
        files = raw.get("files")
        files = {str(k): str(v) for k, v in files.items()} if isinstance(files, Mapping) else {}
        digest = raw.get("sha256")
        return cls(str(raw.get("path") or ""), digest if isinstance(digest, str) else None, files)


def read_tree(skill_dir: Path, root: Path) -> SkillTree | None:
    """The tree of the skill at ``skill_dir``, ``None`` when it has no ``SKILL.md`` (anymore)."""
    skill_md = _sha256(skill_dir / SKILL_FILE)
    if skill_md is None:
        return None
    files: dict[str, str] = {}
    for base, dirs, names in os.walk(skill_dir, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not _skipped(d))
        for name in sorted(names):
            if name.startswith(".") or len(files) >= MAX_FILES:
                continue
            path = Path(base) / name
            digest = _sha256(path) if path.is_file() else None
            if digest is not None:
                files[path.relative_to(skill_dir).as_posix()] = digest
    try:
        rel = skill_dir.relative_to(root).as_posix()
    except ValueError:
        rel = skill_dir.name
    return SkillTree(rel, skill_md, files)


def skill_dirs(root: Path) -> Iterator[Path]:
    """Every skill directory under ``root``, in sorted order (see the module docstring)."""
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        if _skipped(entry.name) or not entry.is_dir(follow_symlinks=False):
            continue
        path = Path(entry.path)
        if (path / SKILL_FILE).is_file():
            yield path
        else:
            yield from skill_dirs(path)


def all_skills(root: Path) -> dict[str, SkillTree]:
    """``name → tree`` of every skill under ``root`` (the first of two with one name wins, as in Hermes)."""
    out: dict[str, SkillTree] = {}
    for path in skill_dirs(root):
        if path.name in out:
            continue
        tree = read_tree(path, root)
        if tree is not None:
            out[path.name] = tree
    return out


def find_skill(root: Path, name: str, hint: str | None = None) -> SkillTree | None:
    """The tree of the skill called ``name``, looked for at ``hint`` (its last known path), at
    ``<root>/<name>`` and then anywhere under ``root``; ``None`` when there is none."""
    if not name or "/" in name or "\\" in name or name in (".", ".."):
        return None
    for rel in (hint, name):
        if rel:
            candidate = root / rel
            if candidate.name == name:
                tree = read_tree(candidate, root)
                if tree is not None:
                    return tree
    for path in skill_dirs(root):
        if path.name == name:
            return read_tree(path, root)
    return None


def changed_files(before: SkillTree | None, after: SkillTree | None) -> list[str]:
    """The skill-relative paths that differ between two trees (added, changed or removed), sorted."""
    old = before.files if before is not None else {}
    new = after.files if after is not None else {}
    return sorted(p for p in old.keys() | new.keys() if old.get(p) != new.get(p))
