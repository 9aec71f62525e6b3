"""Which directories of a profile are skills, and which files belong to a skill, as Hermes itself decides.

Hermes finds a skill by looking for ``SKILL.md`` under each skills directory (``rglob``: a directory first, then
its subdirectories, in the order the file system lists them) and skips two kinds of path:

- any path through a folder of :data:`EXCLUDED_DIRS` (version control, virtual environments, dependency and tool
  caches): nothing else, so a category called ``build`` or ``dist`` holds skills like any other, and a hidden file
  such as ``references/.env.example`` is a file of its skill;
- the support folders of a skill (:data:`SUPPORT_DIRS` directly inside a directory holding ``SKILL.md``): a
  ``SKILL.md`` kept there is a document of that skill, not a skill of its own.

Any other folder inside a skill is searched too, so skills may nest; a nested skill's files are its own, not its
parent's. Where two skills share a name, the first one found is the one Hermes reads and writes, so the order
here is Hermes' order: every caller that resolves a skill by name takes the first.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Final

SKILL_FILE: Final = "SKILL.md"
EXCLUDED_DIRS: Final = frozenset({".git", ".github", ".hub", ".archive", ".venv", "venv", "node_modules",
                                  "site-packages", "__pycache__", ".tox", ".nox", ".pytest_cache", ".mypy_cache",
                                  ".ruff_cache"})
"""Folders Hermes never looks into for skills (``agent.skill_utils.EXCLUDED_SKILL_DIRS``); never a skill's files."""
SUPPORT_DIRS: Final = frozenset({"references", "templates", "assets", "scripts"})
"""A skill's support folders (``agent.skill_utils.SKILL_SUPPORT_DIRS``): its files, never other skills."""
_IN_FLIGHT: Final = re.compile(r"^\..+\.tmp(\..*)?$")
"""An atomic write's temporary file (Hermes writes ``.SKILL.md.tmp.<random>`` beside the file, then renames it):
the write in flight, not a file of the skill."""


def _listing(directory: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(directory) as entries:
            return list(entries)
    except OSError:
        return []


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir() and not entry.is_symlink()
    except OSError:
        return False


def skill_dirs(root: Path) -> Iterator[Path]:
    """Every skill directory under ``root`` (not ``root`` itself), in the order Hermes finds them (see the module
    docstring)."""
    yield from _below(root, False)


def _below(directory: Path, is_skill: bool) -> Iterator[Path]:
    for entry in _listing(directory):
        name = entry.name
        if name in EXCLUDED_DIRS or (is_skill and name in SUPPORT_DIRS) or not _is_dir(entry):
            continue
        path = Path(entry.path)
        nested = (path / SKILL_FILE).is_file()
        if nested:
            yield path
        yield from _below(path, nested)


def _in_flight(name: str) -> bool:
    return name.startswith(".") and _IN_FLIGHT.match(name) is not None


def skill_files(skill_dir: Path, limit: int) -> Iterator[Path]:
    """The files of the skill at ``skill_dir`` (at most ``limit``: a directory's files in name order, then its
    subdirectories' in name order): everything under it but the excluded folders and the skills nested in it
    (outside its support folders, where a ``SKILL.md`` is a document)."""
    count = 0
    for base, dirs, names in os.walk(skill_dir, followlinks=False):
        here = Path(base)
        in_support = here != skill_dir and here.relative_to(skill_dir).parts[0] in SUPPORT_DIRS
        kept = []
        for name in sorted(dirs):
            if name in EXCLUDED_DIRS:
                continue
            nested = not in_support and not (here == skill_dir and name in SUPPORT_DIRS) \
                and (here / name / SKILL_FILE).is_file()
            if not nested:
                kept.append(name)
        dirs[:] = kept
        for name in sorted(names):
            if count >= limit:
                return
            if _in_flight(name):
                continue
            path = here / name
            if path.is_file() and not path.is_symlink():
                count += 1
                yield path
