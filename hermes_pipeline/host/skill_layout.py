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

A folder that is a symbolic link (a skill repository linked into ``skills/``) is a place Hermes lists and loads
skills from too (its index walks with ``os.walk(followlinks=True)``), although ``skill_manage``'s lookup
(``rglob``) does not enter it. So the real folders come first, in that lookup's order, and then the folders
reached through links, each link followed where it stands (the same exclusions apply to its name). Every folder is
walked once, by the first path that reaches it (a set of visited folders, by device and inode): a link to an
ancestor, to a folder already walked or a loop of links is not followed again. Inside a skill, its *files* are
never read through a link (:func:`skill_files`): a link to ``/etc/passwd`` in ``assets/`` is no file of the skill.

:func:`external_skill_dirs` are the profile's ``skills.external_dirs`` as Hermes resolves them. ``config.yaml``
is read with the package's safe reader (:mod:`.profile_files`): it runs on the agent's thread (the store's skill
probe, the context snapshot of every turn), so a ``config.yaml`` that is a FIFO (a hung NFS home), a device or
larger than 1 MiB is skipped at once with one warning naming it; it is parsed with PyYAML's pure-Python loader,
so one nested too deep is a ``RecursionError`` (skipped, one warning), never a crash of the C composer.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from .profile_files import MAX_CONFIG_BYTES, read_regular_bytes, warn_unreadable

logger: Final = logging.getLogger("hermes_pipeline.host")

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


def _kind(entry: os.DirEntry[str]) -> str | None:
    """``"dir"`` for a real folder, ``"link"`` for a symbolic link to a folder, ``None`` for anything else."""
    try:
        if entry.is_symlink():
            return "link" if entry.is_dir() else None
        return "dir" if entry.is_dir() else None
    except OSError:
        return None


def _identity(path: Path | os.DirEntry[str], follow: bool = True) -> tuple[int, int] | None:
    """``(device, inode)`` of a folder (through links unless ``follow`` is false), ``None`` when it cannot be
    read (gone, a loop of links too deep to resolve)."""
    try:
        stat = path.stat(follow_symlinks=follow) if isinstance(path, os.DirEntry) else os.stat(path)
    except OSError:
        return None
    return stat.st_dev, stat.st_ino


def skill_dirs(root: Path) -> Iterator[Path]:
    """Every skill directory under ``root`` (not ``root`` itself), in the order Hermes finds them, then the ones
    reached through symbolic links to folders, each folder once (see the module docstring). A skill reached
    through a link is named by that path (``root/linked``), not by where the link points."""
    seen: set[tuple[int, int]] = set()
    links: list[Path] = []
    here = _identity(root)
    if here is not None:
        seen.add(here)
    yield from _below(root, False, seen, links)
    while links:
        link = links.pop(0)
        target = _identity(link)
        if target is None or target in seen:
            continue  # a loop, a link to a folder already walked (an ancestor, a sibling), or a dangling one
        seen.add(target)
        nested = (link / SKILL_FILE).is_file()
        if nested:
            yield link
        yield from _below(link, nested, seen, links)


def _below(directory: Path, is_skill: bool, seen: set[tuple[int, int]], links: list[Path]) -> Iterator[Path]:
    """The skills under ``directory`` (real folders, in Hermes' lookup order); links met are added to ``links``."""
    for entry in _listing(directory):
        name = entry.name
        if name in EXCLUDED_DIRS or (is_skill and name in SUPPORT_DIRS):
            continue
        kind = _kind(entry)
        if kind is None:
            continue
        path = Path(entry.path)
        if kind == "link":
            links.append(path)
            continue
        identity = _identity(entry, follow=False)
        if identity is None or identity in seen:
            continue  # a folder mounted twice
        seen.add(identity)
        nested = (path / SKILL_FILE).is_file()
        if nested:
            yield path
        yield from _below(path, nested, seen, links)


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


_EXTERNAL_CACHE: dict[tuple[str, str], tuple[tuple[int, int], list[Path]]] = {}
"""``(config path, local skills dir) → ((mtime_ns, size) of config.yaml, its external dirs)``."""


def external_skill_dirs(home: Path, local: Path | None = None) -> list[Path]:
    """The ``skills.external_dirs`` of the profile at ``home`` as Hermes resolves them
    (``agent.skill_utils.get_external_skills_dirs``): each entry with ``~`` and ``${VAR}`` expanded, a relative
    one under ``home``, resolved; only existing folders, each once, never the profile's own skills directory
    (``local``, default ``home/skills``); in the order of the configuration. Read again when ``config.yaml``
    changes; ``[]`` when it is missing or cannot be read (one warning names it, :mod:`.profile_files`)."""
    config = home / "config.yaml"
    local = local if local is not None else home / "skills"
    try:
        stat = config.stat()
    except OSError:
        return []
    key, mark = (str(config), str(local)), (stat.st_mtime_ns, stat.st_size)
    cached = _EXTERNAL_CACHE.get(key)
    if cached is not None and cached[0] == mark:
        return list(cached[1])
    dirs = _read_external_dirs(home, config, local)
    _EXTERNAL_CACHE[key] = (mark, dirs)
    return list(dirs)


def _read_external_dirs(home: Path, config: Path, local: Path) -> list[Path]:
    try:
        text = read_regular_bytes(config, MAX_CONFIG_BYTES).decode("utf-8")
    except FileNotFoundError:
        return []
    except OSError as exc:  # a FIFO, a device, too large, unreadable: never read on the agent's thread
        warn_unreadable(logger, exc, "the profile's configuration", path=config)
        return []
    except ValueError:
        return []
    if "external_dirs" not in text:
        return []  # the common case, without loading a YAML parser (a replay of a file loads none)
    import yaml

    try:
        parsed: Any = yaml.safe_load(text)  # the pure-Python loader: a deep file is a RecursionError, never a crash
    except RecursionError:
        warn_unreadable(logger, OSError(0, "nesting too deep"), "the profile's configuration", path=config)
        return []
    except (ValueError, yaml.YAMLError):
        return []
    skills = parsed.get("skills") if isinstance(parsed, dict) else None
    raw = skills.get("external_dirs") if isinstance(skills, dict) else None
    entries = [raw] if isinstance(raw, str) else raw if isinstance(raw, list) else []
    out: list[Path] = []
    try:
        own = local.resolve()
    except OSError:
        own = local
    for entry in entries:
        text = str(entry).strip()
        if not text:
            continue
        path = Path(os.path.expanduser(os.path.expandvars(text)))
        try:
            path = (path if path.is_absolute() else home / path).resolve()
        except (OSError, RuntimeError):
            continue
        if path != own and path not in out and path.is_dir():
            out.append(path)
    return out
