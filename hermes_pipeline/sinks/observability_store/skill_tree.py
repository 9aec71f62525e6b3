"""Where the skills of a profile are, and what each one holds, in every layout Hermes uses.

Which directories are skills and which files belong to one is Hermes' own rule
(:mod:`hermes_pipeline.host.skill_layout`): a skill is a directory holding ``SKILL.md``, directly under the
skills root (``skills/<name>/``), in a category folder (``skills/<category>/<name>/``, what ``skill_manage``
``create`` with a ``category`` makes) or deeper; its name is its directory's name; the files beside ``SKILL.md``
(``references/``, ``templates/``, ``scripts/``, ``assets/``, any other folder, hidden files too) are its files.
Where two skills share a name, the first in Hermes' order is the one Hermes reads and writes, and the one
tracked here. A skill reached through a symbolic link to a folder (a skill repository linked into ``skills/``) is
tracked as any other, by the link's path (each folder once: a loop of links is not followed again); a file of a
skill that is itself a link is not one of its files.

A skill is known to the store by its *public name*: its directory's name passed through the credential scrubber
(the name every row, the scan state and the exported events carry). A name that holds no credential is its own
public name.

:class:`SkillTree` is what the store knows of one skill: its path relative to the skills root, the
SHA-256 of its ``SKILL.md`` (the ``before_hash`` / ``after_hash`` of ``skill_history``, spec BOOK-18,
the same hash the context snapshot records) and the SHA-256 of every file of the skill, so that a
change of a supporting file is a change of the skill too. Only hashes: never a file's text. Every file is read
with the package's safe reader (never blocking on a FIFO, at most 8 MiB: :mod:`hermes_pipeline.host.profile_files`).
Its ``path`` and file names are public names too (scrubbed, as in the rows and the scan state); the names on disk, needed to read
the files again, are kept beside them in :attr:`SkillTree.disk_names` and never stored.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ...engine.scrub import safe_scrub
from ...host.profile_files import MAX_PROFILE_FILE_BYTES, sha256_of_file, warn_unreadable
from ...host.skill_layout import SKILL_FILE, external_skill_dirs, skill_dirs, skill_files

logger: Final = logging.getLogger("hermes_pipeline.sinks.observability_store")

__all__ = ["Roots", "SkillRoots", "SkillTree", "all_skills", "changed_files", "find_skill", "public_name",
           "read_tree"]

MAX_FILES: Final = 2000
"""At most this many files of one skill are hashed (a skill is a handful; the rest is not tracked)."""


def _sha256(path: Path) -> str | None:
    """The SHA-256 of a skill's file, read with the package's safe reader (this runs on the agent's thread, in the
    skill probe): ``None`` when it is gone, or (one warning naming it) a FIFO, a device, larger than
    :data:`~hermes_pipeline.host.profile_files.MAX_PROFILE_FILE_BYTES` (8 MiB) or unreadable."""
    try:
        return sha256_of_file(path, MAX_PROFILE_FILE_BYTES)
    except FileNotFoundError:
        return None
    except OSError as exc:
        warn_unreadable(logger, exc, "skill file", path=path, event="skill_file_unreadable")
        return None


def public_name(name: str) -> str:
    """The name a skill is known by in the store (see the module docstring)."""
    return safe_scrub(name)


@dataclass(frozen=True)
class SkillTree:
    """One skill as found on disk (see the module docstring). Its path and file names are public: scrubbed as every
    string the store keeps (a name on disk holding a credential is compared, hashed and kept by its scrubbed form);
    where each file is on disk is kept beside them, for reading the files, and never compared nor stored."""

    path: str
    """Its directory relative to the skills root (``data/my-skill``), POSIX separators."""
    skill_md: str | None
    """SHA-256 of ``SKILL.md``."""
    files: dict[str, str] = field(default_factory=dict)
    """SHA-256 of each of its files, by path relative to the skill directory."""
    on_disk: Path | None = field(default=None, compare=False)
    """The skill's directory (``None`` for a tree from the scan state)."""
    disk_names: dict[str, str] = field(default_factory=dict, compare=False)
    """The path on disk (relative to :attr:`on_disk`) of each file whose public path differs from it."""

    def digest(self) -> str:
        """One SHA-256 of all its files (paths and hashes): equal digests, equal skills."""
        listing = "\n".join(f"{path}\0{sha}" for path, sha in sorted(self.files.items()))
        return hashlib.sha256(listing.encode("utf-8")).hexdigest()

    def disk_path(self, rel: str) -> Path | None:
        """Where the file ``rel`` (a key of :attr:`files`) is on disk, ``None`` for a tree from the scan state."""
        return None if self.on_disk is None else self.on_disk / self.disk_names.get(rel, rel)

    def to_state(self) -> dict[str, Any]:
        """The scan-state form (hashes and public names only)."""
        return {"path": self.path, "sha256": self.skill_md, "files": dict(self.files)}

    @classmethod
    def from_state(cls, raw: object) -> SkillTree | None:
        """A tree from the scan state; an older state kept only the ``SKILL.md`` hash of ``<name>/``."""
        if isinstance(raw, str):  # the files beside SKILL.md are unknown: only SKILL.md is compared
            return cls("", raw, {})
        if not isinstance(raw, Mapping):
            return None
        files = raw.get("files")
        files = {safe_scrub(str(k)): str(v) for k, v in files.items()} if isinstance(files, Mapping) else {}
        digest = raw.get("sha256")
        return cls(safe_scrub(str(raw.get("path") or "")), digest if isinstance(digest, str) else None, files)


def read_tree(skill_dir: Path, root: Path) -> SkillTree | None:
    """The tree of the skill at ``skill_dir``, ``None`` when it has no ``SKILL.md`` (anymore)."""
    skill_md = _sha256(skill_dir / SKILL_FILE)
    if skill_md is None:
        return None
    files: dict[str, str] = {}
    disk_names: dict[str, str] = {}
    for path in skill_files(skill_dir, MAX_FILES):
        digest = _sha256(path)
        if digest is not None:
            rel = path.relative_to(skill_dir).as_posix()
            public = safe_scrub(rel)
            files[public] = digest
            if public != rel:
                disk_names[public] = rel
    try:
        rel = skill_dir.relative_to(root).as_posix()
    except ValueError:
        rel = skill_dir.name
    return SkillTree(safe_scrub(rel), skill_md, files, skill_dir, disk_names)


class SkillRoots:
    """The skills directories of a profile in Hermes' order: its own (``<home>/skills``), then the
    ``skills.external_dirs`` of its ``config.yaml`` (:func:`~hermes_pipeline.host.skill_layout.external_skill_dirs`:
    ``~`` and ``${VAR}`` expanded, relative ones under the profile, the existing ones only, each once), read again
    when ``config.yaml`` changes. A skill in an external directory is known by its absolute path; one in the
    profile's own by its path relative to it (a skill reached through a symbolic link by the link's path)."""

    def __init__(self, home: Path, skills_dir: str = "skills") -> None:
        self.home = home
        self.local = home / skills_dir

    def dirs(self) -> list[Path]:
        """The directories, the profile's own first."""
        return [self.local, *external_skill_dirs(self.home, self.local)]


Roots = Path | SkillRoots
"""Where skills are: one directory, or a profile's :class:`SkillRoots`."""


def _dirs(roots: Roots) -> list[Path]:
    return roots.dirs() if isinstance(roots, SkillRoots) else [roots]


def _found(roots: Roots) -> Iterator[tuple[Path, Path, bool]]:
    """``(skill directory, its skills directory, whether that is the profile's own)`` in Hermes' order."""
    for index, root in enumerate(_dirs(roots)):
        for path in skill_dirs(root):
            yield path, root, index == 0


def _tree(path: Path, root: Path, own: bool) -> SkillTree | None:
    tree = read_tree(path, root)
    if tree is None or own:
        return tree
    return SkillTree(safe_scrub(path.as_posix()), tree.skill_md, tree.files, tree.on_disk, tree.disk_names)


def all_skills(roots: Roots) -> dict[str, SkillTree]:
    """``public name → tree`` of every skill (of two with one name, the first in Hermes' order)."""
    out: dict[str, SkillTree] = {}
    for path, root, own in _found(roots):
        name = public_name(path.name)
        if name in out:
            continue
        tree = _tree(path, root, own)
        if tree is not None:
            out[name] = tree
    return out


def find_skill(roots: Roots, name: str) -> SkillTree | None:
    """The tree of the skill ``name`` (its name on disk or its public name) as Hermes resolves that name: the first
    such skill in its order; ``None`` when there is none."""
    if not name or "/" in name or "\\" in name or name in (".", ".."):
        return None
    for path, root, own in _found(roots):
        if path.name == name or public_name(path.name) == name:
            tree = _tree(path, root, own)
            if tree is not None:
                return tree
    return None


def changed_files(before: SkillTree | None, after: SkillTree | None) -> list[str]:
    """The skill-relative paths that differ between two trees (added, changed or removed), sorted."""
    old = before.files if before is not None else {}
    new = after.files if after is not None else {}
    return sorted(p for p in old.keys() | new.keys() if old.get(p) != new.get(p))
