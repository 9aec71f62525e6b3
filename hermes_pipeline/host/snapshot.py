"""The context snapshot a host passes with a turn start (spec 04 §2.11 row 22, spec 06 BOOK-29).

:func:`context_snapshot` builds the ``hermes.context`` data from what the host knows: the model
configuration, the enabled toolsets, a SHA-256 of the effective configuration, and SHA-256 hashes of
the profile's skills (``skills/**/SKILL.md``, and every file of each skill under ``files``), memory files
(``memories/*``) and persona file (``SOUL.md``). It carries hashes and sizes, never skill or memory text:
the texts themselves are kept once per distinct content beside the store (``export/blobs.py``), so a
replay rebuilds the skills and memory exactly as the run saw them, and can tell what changed since.

The skills are every skill Hermes loads (:mod:`.skill_layout`), from each of its skills directories:

- ``skills``: the profile's own directory; ``name`` is the skill's path relative to it. A skill reached through
  a symbolic link to a folder (a skill repository linked into ``skills/``) is named by the link's path and
  marked ``"linked": true`` (its files are not under the profile's home);
- ``external_skills``: the directories of ``skills.external_dirs`` in the profile's ``config.yaml``
  (:func:`~.skill_layout.external_skill_dirs`, in Hermes' order); ``root`` is the directory (absolute, resolved
  as Hermes resolves it) and ``name`` the skill's path relative to it. The list is there (maybe empty) whenever
  the skills are, so a replay knows the run had no external skill rather than a recording from before they
  were named.

Every file is read with the package's safe reader (:mod:`.profile_files`), since the snapshot is taken on the
agent's thread (the Hermes bridge takes one on every ``pre_llm_call``): a file that is a FIFO (a hung NFS home), a
device, or larger than :data:`~.profile_files.MAX_PROFILE_FILE_BYTES` (8 MiB) is left out of the snapshot at once
(a skill whose ``SKILL.md`` is such a file is left out whole), with one warning naming it; a ``config.yaml`` that
is such a file gives no external skills (:func:`~.skill_layout.external_skill_dirs`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Final

from .profile_files import MAX_PROFILE_FILE_BYTES, ProfileFileError, read_regular_bytes, sha256_of_file
from .profile_files import warn_unreadable
from .skill_layout import SKILL_FILE, external_skill_dirs, skill_dirs, skill_files

logger: Final = logging.getLogger("hermes_pipeline.host")

__all__ = ["EXTERNAL_SKILLS", "context_snapshot", "external_roots", "file_sha256"]

MAX_FILES = 1000
"""At most this many skill and memory files are hashed each (a snapshot stays small)."""
PERSONA_FILE = "SOUL.md"
"""The persona file of a Hermes home: it shapes the system prompt as skills and memory do."""
EXTERNAL_SKILLS = "external_skills"
"""The snapshot's key for the skills of ``skills.external_dirs`` (see the module docstring)."""


def file_sha256(path: Path) -> str:
    """The hex SHA-256 of a regular file's bytes (at most :data:`~.profile_files.MAX_PROFILE_FILE_BYTES`).

    Raises:
        OSError: it is gone, or a :class:`~.profile_files.ProfileFileError` (a FIFO, a device, too large, unreadable).
    """
    return sha256_of_file(path, MAX_PROFILE_FILE_BYTES)


def _sha256_or_skip(path: Path) -> str | None:
    """:func:`file_sha256`, ``None`` (with one warning naming it) for a file that is not read."""
    try:
        return file_sha256(path)
    except FileNotFoundError:
        return None  # gone since it was listed
    except OSError as exc:
        warn_unreadable(logger, exc, "the snapshot's file", path=path, event="context_snapshot_file_skipped")
        return None


def _config_sha256(config: Any) -> str:
    text = json.dumps(config, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _skill_files(skill_dir: Path) -> dict[str, str]:
    """SHA-256 of every file of the skill at ``skill_dir`` (Hermes' rule: :mod:`.skill_layout`)."""
    out: dict[str, str] = {}
    for path in skill_files(skill_dir, MAX_FILES):
        digest = _sha256_or_skip(path)
        if digest is not None:
            out[path.relative_to(skill_dir).as_posix()] = digest
    return out


def _skills(directory: Path) -> list[dict[str, Any]]:
    """The skills under ``directory`` (those reached through a symbolic link marked ``linked``)."""
    out: list[dict[str, Any]] = []
    if not directory.is_dir():
        return out
    real = os.path.realpath(directory)
    for path in sorted(skill_dirs(directory))[:MAX_FILES]:
        skill_md = path / SKILL_FILE
        digest = _sha256_or_skip(skill_md) if skill_md.is_file() else None
        if digest is not None:
            name = path.relative_to(directory).as_posix()
            entry: dict[str, Any] = {"name": name, "sha256": digest, "files": _skill_files(path)}
            if os.path.realpath(path) != os.path.join(real, *name.split("/")):
                entry["linked"] = True
            out.append(entry)
    return out


def _external_skills(home: Path, local: Path) -> list[dict[str, Any]]:
    """The skills of the profile's ``skills.external_dirs``, each with its ``root`` (see the module docstring)."""
    out: list[dict[str, Any]] = []
    for root in external_skill_dirs(home, local):
        out.extend({"root": str(root), **entry} for entry in _skills(root))
    return out[:MAX_FILES]


def external_roots(context: Mapping[str, Any]) -> list[str]:
    """The external skills directories a snapshot names, in Hermes' order (each once)."""
    roots: list[str] = []
    for entry in context.get(EXTERNAL_SKILLS) or []:
        root = entry.get("root") if isinstance(entry, Mapping) else None
        if isinstance(root, str) and root not in roots:
            roots.append(root)
    return roots


def _memory(home: Path, directories: Iterable[str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for name in directories:
        directory = home / name
        if not directory.is_dir():
            continue
        for path in sorted(p for p in directory.rglob("*") if p.is_file())[:MAX_FILES]:
            try:
                data = read_regular_bytes(path, MAX_PROFILE_FILE_BYTES)
            except FileNotFoundError:
                continue
            except ProfileFileError as exc:
                warn_unreadable(logger, exc, "the snapshot's file", event="context_snapshot_file_skipped")
                continue
            out.append({"path": path.relative_to(home).as_posix(), "sha256": hashlib.sha256(data).hexdigest(),
                        "chars": len(data.decode("utf-8", errors="replace"))})
    return out


def context_snapshot(home: str | Path | None = None, *, model: str | None = None, provider: str | None = None,
                     toolsets: Iterable[str] | None = None, config: Any = None, skills_dir: str = "skills",
                     memory_dirs: Iterable[str] = ("memories",)) -> dict[str, Any]:
    """The ``hermes.context`` data of a run: only the keys given or found.

    Args:
        home: the profile directory (``$HERMES_HOME``); skills and memory are read below it (and the skills of
            its ``skills.external_dirs`` where they are). Without it no file is hashed.
        model, provider: the turn's model configuration.
        toolsets: names of the enabled toolsets (sorted in the snapshot).
        config: the effective (already sanitized) configuration; only its SHA-256 is kept
            (canonical JSON: sorted keys, compact separators).
        skills_dir: the skills directory relative to ``home``.
        memory_dirs: memory directories relative to ``home`` (memory paths are kept relative to it).
    """
    out: dict[str, Any] = {}
    if model:
        out["model"] = model
    if provider:
        out["provider"] = provider
    if toolsets is not None:
        out["toolsets"] = sorted({str(name) for name in toolsets})
    if config is not None:
        out["config_sha256"] = _config_sha256(config)
    if home is not None:
        root = Path(home).expanduser()
        try:
            out["skills"] = _skills(root / skills_dir)
            out[EXTERNAL_SKILLS] = _external_skills(root, root / skills_dir)
            out["memory"] = _memory(root, memory_dirs)
            persona = root / PERSONA_FILE
            digest = _sha256_or_skip(persona) if persona.is_file() and not persona.is_symlink() else None
            if digest is not None:
                out["persona"] = {"path": PERSONA_FILE, "sha256": digest}
        except OSError:  # an unreadable file never stops the turn: the snapshot then has no file hashes
            out.pop("skills", None)
            out.pop(EXTERNAL_SKILLS, None)
            out.pop("memory", None)
            out.pop("persona", None)
    return out


def merge_snapshot(base: Mapping[str, Any], **overrides: Any) -> dict[str, Any]:
    """``base`` with the non-``None`` ``overrides`` applied (a host's defaults, refined per turn)."""
    out = dict(base)
    out.update({k: v for k, v in overrides.items() if v is not None})
    return out
