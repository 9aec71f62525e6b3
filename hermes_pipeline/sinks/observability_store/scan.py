"""Rescans that turn out-of-band edits into rows (BOOK-19, BOOK-22).

The store remembers the last SHA-256 it saw of every ``skills/*/SKILL.md`` and of every ``*.md``
file under the memory directories (and, for memory files, their *scrubbed* text, to quote the change) in
``observability/scan-state.json`` (0600, beside the database).

Memory files are where users paste credentials, so no raw memory text is ever kept or stored: a file's
text goes through the credential scrubber the moment it is read (:func:`read_memory`), and the state, the
diff and the excerpts are all made from that scrubbed text. The state keeps a scrubbed copy rather than only
the hash because the excerpt of the next change quotes the previous text, which a hash cannot give back; the
hash (of the raw bytes) is what decides whether the file changed. A state written by an older version, which
held raw text, is scrubbed when it is loaded and so rewritten scrubbed at the next save. Skill directory
names and memory file paths are keys of the state: one the scrubber would change is kept as ``sha256:<hex>``
of it instead (:func:`state_key`). A rescan compares the files on disk
with that state: a skill whose hash changed without a lifecycle event gives a ``refine`` row with
``hermes_action = 'external_edit'``; a memory file that appeared, changed or disappeared without a
recorded tool write gives a ``user-direct`` row whose excerpts quote the first differing hunk of a
line diff. Changes the store recorded itself (lifecycle events, memory tool writes) update the state
as they are written, so they are never reported twice.

The state is read and written under an inter-process file lock, so two processes of one profile
never both report the same edit; the rows and the new state are committed together (the state is
saved only after the rows' transaction committed, so an edit is never lost to a busy database).
"""

from __future__ import annotations

import difflib
import errno
import hashlib
import json
import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ...engine.scrub import safe_scrub

logger: Final = logging.getLogger("hermes_pipeline.sinks.observability_store")

STATE_NAME: Final = "scan-state.json"
STATE_VERSION: Final = 2
"""2: memory texts are scrubbed, skill names the scrubber changes are hashed (1 kept raw text)."""
MAX_TEXT: Final = 1 << 20
"""Memory files larger than this keep only their hash in the state (their excerpts are then NULL)."""


def sha256_file(path: Path) -> str | None:
    """Lowercase hex SHA-256 of a regular file, ``None`` when it does not exist or cannot be read."""
    try:
        with open(path, "rb") as fh:
            return hashlib.sha256(fh.read()).hexdigest()
    except OSError:
        return None


def excerpt(text: str | None, limit: int) -> str | None:
    """``text`` cut to at most ``limit`` code points, the last being ``…`` when cut (BOOK-21)."""
    if text is None:
        return None
    if len(text) <= limit:
        return text
    return text[: max(limit - 1, 0)] + "…"


def first_hunk(before: str, after: str) -> tuple[str | None, str | None]:
    """The passages of the first differing hunk of a line diff (``None`` for an empty side)."""
    a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            old, new = "".join(a[i1:i2]), "".join(b[j1:j2])
            return (old or None), (new or None)
    return None, None


@dataclass
class ScanState:
    """The last seen hashes (and scrubbed memory texts) of one profile."""

    skills: dict[str, str] = field(default_factory=dict)
    memory: dict[str, dict[str, Any]] = field(default_factory=dict)
    initialised: bool = False

    @classmethod
    def load(cls, path: Path) -> ScanState:
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return cls()
        except (OSError, ValueError) as exc:
            logger.warning("hermes_pipeline: observability store: %s is unreadable (%s); the next scan takes the "
                           "files as they are as its baseline", path, type(exc).__name__,
                           extra={"event": "observability_scan_state_unreadable"})
            return cls()
        if not isinstance(raw, dict):
            return cls()
        skills: Any = raw.get("skills")
        memory: Any = raw.get("memory")
        skills = {state_key(str(k)): v for k, v in skills.items()} if isinstance(skills, dict) else {}
        memory = {state_key(str(k)): _scrubbed_entry(v) for k, v in memory.items()} if isinstance(memory, dict) else {}
        return cls(skills, memory, True)

    def save(self, path: Path) -> None:
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump({"version": STATE_VERSION, "skills": self.skills, "memory": self.memory}, fh, ensure_ascii=False)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)


def state_key(name: str) -> str:
    """The state's key for a skill name or a memory file path: itself, or ``sha256:<hex>`` of it when the
    scrubber would change it."""
    if name.startswith("sha256:") or safe_scrub(name) == name:
        return name
    return "sha256:" + hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()


def _scrubbed_entry(entry: Any) -> Any:
    """A memory entry of a loaded state with its text scrubbed (states of version 1 kept it raw)."""
    if isinstance(entry, dict) and isinstance(entry.get("text"), str):
        return {**entry, "text": safe_scrub(entry["text"])}
    return entry


def skill_files(home: Path, skills_dir: str) -> dict[str, str]:
    """``skill name → SHA-256`` of every ``<skills_dir>/<name>/SKILL.md`` (hidden directories skipped).

    The names are the directory names on disk, raw: :func:`skill_key` makes them state keys and the
    recorder scrubs them before they become rows."""
    root = home / skills_dir
    out: dict[str, str] = {}
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return out
    for entry in entries:
        if entry.name.startswith("."):
            continue
        digest = sha256_file(Path(entry.path) / "SKILL.md")
        if digest is not None:
            out[entry.name] = digest
    return out


def _walk(directory: Path, warned: set[str]) -> Iterable[Path]:
    try:
        os.stat(directory)
    except OSError as exc:
        if exc.errno == errno.ELOOP and str(directory) not in warned:
            warned.add(str(directory))
            logger.warning("hermes_pipeline: observability store: memory directory %s is a symlink loop; it is not "
                           "audited", directory, extra={"event": "memory_dir_symlink_loop"})
        return
    for base, dirs, names in os.walk(directory, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            if name.endswith(".md"):
                yield Path(base) / name


def memory_files(home: Path, dirs: Iterable[str], warned: set[str] | None = None) -> dict[str, Path]:
    """``path relative to home → absolute path`` of every ``*.md`` under the memory directories."""
    seen = warned if warned is not None else set()
    out: dict[str, Path] = {}
    for name in dirs:
        for path in _walk(home / name, seen):
            try:
                if not path.is_file():
                    continue
                rel = path.relative_to(home).as_posix()
            except (OSError, ValueError):
                continue
            out[rel] = path
    return out


def read_memory(path: Path) -> tuple[str | None, str | None]:
    """``(sha256, scrubbed text)`` of a memory file; text ``None`` when too large; ``(None, None)`` if gone.

    The hash is of the raw bytes (it decides whether the file changed); the text is scrubbed here, where it
    enters, so neither the state nor an excerpt ever holds a credential the scrubber recognises."""
    try:
        data = path.read_bytes()
    except OSError:
        return None, None
    text = safe_scrub(data.decode("utf-8", errors="replace")) if len(data) <= MAX_TEXT else None
    return hashlib.sha256(data).hexdigest(), text


@dataclass(frozen=True, slots=True)
class MemoryDiff:
    """One out-of-band memory change (``file_path`` as on disk, raw; ``key`` its :func:`state_key`)."""

    file_path: str
    change_type: str
    before: str | None
    after: str | None
    key: str


def diff_skills(state: ScanState, current: dict[str, str]) -> list[tuple[str, str, str]]:
    """``(name, before_hash, after_hash)`` of skills whose ``SKILL.md`` changed since the state.

    New or removed skills are not edits (their lifecycle events say what happened): new ones only
    join the baseline.
    """
    changed = []
    for name, digest in current.items():
        before = state.skills.get(state_key(name))
        if before is not None and before != digest:
            changed.append((name, before, digest))
    return changed


def diff_memory(state: ScanState, current: dict[str, Path]) -> tuple[list[MemoryDiff], dict[str, dict[str, Any]]]:
    """Memory changes since the state, and the new memory state."""
    diffs: list[MemoryDiff] = []
    new_state: dict[str, dict[str, Any]] = {}
    for rel, path in current.items():
        digest, text = read_memory(path)
        if digest is None:
            continue
        key = state_key(rel)
        new_state[key] = {"sha256": digest, "text": text}
        old = state.memory.get(key)
        if old is None:
            if state.initialised:
                diffs.append(MemoryDiff(rel, "add", None, text, key))
        elif old.get("sha256") != digest:
            before, after = first_hunk(old.get("text") or "", text or "") \
                if old.get("text") is not None and text is not None else (None, None)
            diffs.append(MemoryDiff(rel, "modify", before, after, key))
    for key, old in state.memory.items():
        if key not in new_state:
            diffs.append(MemoryDiff(key, "delete", old.get("text"), None, key))
    return diffs, new_state
