"""Rescans that turn out-of-band edits into rows (BOOK-19, BOOK-22).

The store remembers the hashes of every skill's files (in any layout, :mod:`.skill_tree`) and the
last SHA-256 of every ``*.md`` file under the memory directories (and, for memory files, their text,
to quote the change, and a SHA-256 of their entries as Hermes reads them) in ``observability/scan-state.json``
(0600, beside the database). A memory file's text is decoded as Hermes decodes it
(:func:`~hermes_pipeline.export.memory_changes.memory_text`: universal newlines, so CRLF and LF files with
the same entries are the same memory); its hash stays that of its bytes. A rescan
compares the files on disk with that state: a skill whose files changed without a lifecycle event
gives a ``refine`` row with ``hermes_action = 'external_edit'`` (one first seen, a ``create`` row
``discovered``; one gone, a ``deprecate`` row ``external_delete``); a memory file that appeared,
changed or disappeared without a recorded tool write gives ``user-direct`` rows typed and quoted as
the agent's rows are (:func:`~hermes_pipeline.export.memory_changes.entry_diff`): one per Hermes
entry (entries are joined by ``\n§\n``) that appeared (``add``), disappeared (``delete``) or changed
in place (``modify``, the old and the new entry). A file not in Hermes' format is one entry, its
whole text. A change that leaves the entries as they were (blank lines, an entry moved, other line
endings) gives no row; a file too large to keep its text, or whose entries changed only where the
scrubber hides them, gives one row without excerpts. Changes the store recorded
itself (lifecycle events, memory tool writes) update the state as they are written, so they are
never reported twice.

Every memory file, and the state itself, is read with the package's safe reader
(:mod:`hermes_pipeline.host.profile_files`): a memory file that is a FIFO (a hung NFS home), a device or larger
than :data:`MEMORY_FILE_LIMIT` (8 MiB) is *unreadable*: skipped at once with one warning naming it, never
reported as deleted (its state entry stays as it was until it can be read again).

The state is read and written under an inter-process file lock, so two processes of one profile
never both report the same edit; the rows and the new state are committed together (the state is
saved only after the rows' transaction committed, so an edit is never lost to a busy database).
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ...engine.scrub import marker_cut, safe_scrub
from ...export.memory_changes import ENTRY_DELIMITER, EntryChange, entries, entry_diff, memory_text
from ...host.profile_files import MAX_PROFILE_FILE_BYTES, MAX_SMALL_FILE_BYTES, read_regular_bytes
from ...host.profile_files import warn_unreadable

logger: Final = logging.getLogger("hermes_pipeline.sinks.observability_store")

STATE_NAME: Final = "scan-state.json"
STATE_LIMIT: Final = 256 * MAX_SMALL_FILE_BYTES
"""The largest scan state read (256 MiB; it is the store's own file, read with the safe reader all the same)."""
MAX_TEXT: Final = 1 << 20
"""Memory files larger than this keep only their hash in the state (their excerpts are then NULL)."""
MEMORY_FILE_LIMIT: Final = MAX_PROFILE_FILE_BYTES
"""Memory files larger than this (8 MiB) are not read at all: unreadable (see the module docstring)."""


def excerpt(text: str | None, limit: int) -> str | None:
    """``text`` cut to at most ``limit`` code points, the last being ``…`` when cut (BOOK-21); never inside a
    redaction marker (the cut falls before it)."""
    if text is None:
        return None
    if len(text) <= limit:
        return text
    return text[: marker_cut(text, max(limit - 1, 0))] + "…"


@dataclass
class ScanState:
    """The last seen state of one profile: skills (hashes only, :class:`~.skill_tree.SkillTree`), memory
    files, and the bookkeeping of the rule that a store writer's row wins over a rescan (:mod:`.attribution`)."""

    skills: dict[str, Any] = field(default_factory=dict)
    memory: dict[str, dict[str, Any]] = field(default_factory=dict)
    initialised: bool = False
    agent: dict[str, list[list[Any]]] = field(default_factory=dict)
    """``key → [[hash, epoch seconds], …]``: what agent writes recently produced (any process)."""
    claims: list[dict[str, Any]] = field(default_factory=list)
    """Rows a rescan wrote recently, with the hash it saw: a later agent row with that hash takes them over."""
    recorded: dict[str, Any] = field(default_factory=dict)
    """``skill name → tree`` of its newest row (what the next row's ``before_hash`` and changed files start
    from; ``skills`` is what the next rescan compares the disk with)."""

    @classmethod
    def load(cls, path: Path) -> ScanState:
        try:
            raw = json.loads(read_regular_bytes(path, STATE_LIMIT).decode("utf-8"))
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
        agent: Any = raw.get("agent")
        claims: Any = raw.get("claims")
        recorded: Any = raw.get("recorded")
        memory = {k: _scrubbed_entry(v) for k, v in memory.items()} if isinstance(memory, dict) else {}
        return cls(dict(skills) if isinstance(skills, dict) else {}, memory,
                   True, dict(agent) if isinstance(agent, dict) else {},
                   [c for c in claims if isinstance(c, dict)] if isinstance(claims, list) else [],
                   dict(recorded) if isinstance(recorded, dict) else {})

    def rehydrate(self, skills: Iterable[str], memory: Iterable[str]) -> None:
        """Give the entries the file keeps under ``sha256:`` keys (:func:`state_key`) their names back, from the
        skill names and memory paths on disk (a name gone from disk keeps its hashed key)."""
        for names, tables, prefix in ((skills, (self.skills, self.recorded), "skill:"),
                                      (memory, (self.memory,), "memory:")):
            for name in names:
                key = state_key(name)
                if key == name:
                    continue
                for table in tables:
                    if key in table:
                        table[name] = table.pop(key)
                agent_key = state_key(f"{prefix}{name}")
                if agent_key in self.agent:
                    self.agent[f"{prefix}{name}"] = self.agent.pop(agent_key)

    def save(self, path: Path) -> None:
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump({"version": 2, "skills": _keyed_trees(self.skills), "memory": _keyed(self.memory),
                       "agent": _keyed(self.agent),
                       "claims": [{**c, "key": state_key(str(c.get("key", "")))} for c in self.claims],
                       "recorded": _keyed_trees(self.recorded)}, fh, ensure_ascii=False)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)


def state_key(name: str) -> str:
    """The state file's key for a skill name or a memory file path: itself, or ``sha256:<hex>`` of it when the
    scrubber would change it (a file named after a credential never puts it in the state file)."""
    if name.startswith("sha256:") or safe_scrub(name) == name:
        return name
    return "sha256:" + hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()


def _keyed(mapping: dict[str, Any]) -> dict[str, Any]:
    return {state_key(str(k)): v for k, v in mapping.items()}


def _scrubbed_entry(entry: Any) -> Any:
    """A memory entry of a loaded state with its text scrubbed (an older state kept it raw)."""
    if isinstance(entry, dict) and isinstance(entry.get("text"), str):
        return {**entry, "text": safe_scrub(entry["text"])}
    return entry


def _keyed_trees(mapping: dict[str, Any]) -> dict[str, Any]:
    """Skill trees as the state file keeps them: names and file names keyed, the path scrubbed."""
    out: dict[str, Any] = {}
    for name, tree in mapping.items():
        if isinstance(tree, dict):
            tree = dict(tree)
            if isinstance(tree.get("path"), str):
                tree["path"] = safe_scrub(tree["path"])
            if isinstance(tree.get("files"), dict):
                tree["files"] = _keyed(tree["files"])
        out[state_key(str(name))] = tree
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


@dataclass(frozen=True, slots=True)
class MemoryRead:
    """A memory file as read now: the SHA-256 of its bytes, its text as Hermes reads it (``None`` when larger than
    :data:`MAX_TEXT`), the SHA-256 of its entries (:func:`entries_sha256`) and the SHA-256 of its bytes with LF
    line endings."""

    sha256: str
    text: str | None
    entries_sha256: str
    lf_sha256: str


def entries_sha256(text: str) -> str:
    """One SHA-256 of the entries Hermes reads from a memory file's text, in any order: equal for texts that differ
    only where the rescan reports no change (line endings, blank space, repeated or moved entries)."""
    listing = ENTRY_DELIMITER.join(sorted(set(entries(text))))
    return hashlib.sha256(listing.encode("utf-8", "surrogatepass")).hexdigest()


UNREADABLE: Final = "unreadable"
"""What :func:`read_memory_seen` gives for a file that exists but is not read (see the module docstring)."""


def read_memory_file(path: Path) -> MemoryRead | None:
    """A memory file as read now (:class:`MemoryRead`), ``None`` when it is gone or cannot be read. Its text is
    decoded by :func:`~hermes_pipeline.export.memory_changes.memory_text`, as Hermes reads it (its entries are
    hashed from the bytes that are not UTF-8 too, so a change of those is a change)."""
    seen = read_memory_seen(path)
    return seen if isinstance(seen, MemoryRead) else None


def read_memory_seen(path: Path) -> MemoryRead | str | None:
    """:func:`read_memory_file`, telling a file that is gone (``None``) from one that is there but not read
    (:data:`UNREADABLE`: a FIFO, a device, larger than :data:`MEMORY_FILE_LIMIT`, no permission; one warning names
    it). Never blocks: the file is read with the package's safe reader."""
    try:
        data = read_regular_bytes(path, MEMORY_FILE_LIMIT)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        warn_unreadable(logger, exc if isinstance(exc, OSError) else OSError(0, str(exc)), "memory file", path=path,
                        event="memory_file_unreadable")
        return UNREADABLE
    exact = memory_text(data, "surrogateescape")
    return MemoryRead(hashlib.sha256(data).hexdigest(), memory_text(data) if len(data) <= MAX_TEXT else None,
                      entries_sha256(exact), hashlib.sha256(exact.encode("utf-8", "surrogateescape")).hexdigest())


def read_memory(path: Path) -> tuple[str | None, str | None]:
    """``(sha256 of its bytes, text as Hermes reads it)`` of a memory file (:func:`read_memory_file`); text ``None``
    when too large; ``(None, None)`` if gone."""
    seen = read_memory_file(path)
    return (None, None) if seen is None else (seen.sha256, seen.text)


def memory_state(sha256: str, text: str | None) -> dict[str, Any]:
    """The scan state's entry of a memory file whose bytes hash to ``sha256`` and whose text (as Hermes reads it,
    :func:`~hermes_pipeline.export.memory_changes.memory_text`; ``None``: unknown) is ``text``: the hash, the
    scrubbed text and the hash of its entries (what tells a change of line endings from a change Hermes sees)."""
    out: dict[str, Any] = {"sha256": sha256, "text": safe_scrub(text) if text is not None else None}
    if text is not None and "\ufffd" not in text:  # a replaced byte: which one is not known (see read_memory_file)
        out["entries_sha256"] = entries_sha256(text)
    return out


@dataclass(frozen=True, slots=True)
class MemoryDiff:
    """One out-of-band change of a memory file and the rows it gives."""

    file_path: str
    change_type: str
    """What happened to the file: ``add`` (it appeared), ``modify`` or ``delete`` (it is gone)."""
    changes: tuple[EntryChange, ...]
    """One per entry added, removed or changed in place; one without excerpts when a side's text is unknown."""


def file_diff(rel: str, change_type: str, before: str | None, after: str | None, *,
              same_entries: bool | None = None) -> MemoryDiff | None:
    """The change of one memory file from text ``before`` to ``after`` (``""`` for a side where the file does not
    exist, ``None`` where its text is unknown), ``None`` when no entry changed. ``same_entries``: whether Hermes
    reads the same entries from both sides (known from their unscrubbed texts; ``None``: unknown)."""
    if same_entries:
        return None
    if before is None or after is None:
        changes: tuple[EntryChange, ...] = (EntryChange(change_type, None, None),)
    else:
        changes = tuple(entry_diff(before, after))
        if not changes and change_type == "modify" and (same_entries is False or before == after):
            changes = (EntryChange(change_type, None, None),)  # only what the scrubber hides changed: no quote
    return MemoryDiff(rel, change_type, changes) if changes else None


def _same_entries(old: dict[str, Any], seen: MemoryRead) -> bool | None:
    """Whether the state's entry ``old`` and the file ``seen`` have the same entries for Hermes; ``None`` when the
    state cannot tell (it has no hash of the entries, and the file is not the state's bytes with other line
    endings)."""
    known = old.get("entries_sha256")
    if isinstance(known, str):
        return known == seen.entries_sha256
    if seen.lf_sha256 == old.get("sha256"):
        return True  # the state's file was this one with LF endings (as Hermes writes it)
    return None


def diff_memory(state: ScanState, current: dict[str, Path]) -> tuple[list[MemoryDiff], dict[str, dict[str, Any]]]:
    """Memory changes since the state (files whose entries changed), and the new memory state."""
    diffs: list[MemoryDiff | None] = []
    new_state: dict[str, dict[str, Any]] = {}
    for rel, path in current.items():
        seen = read_memory_seen(path)
        if seen is None:
            continue
        if not isinstance(seen, MemoryRead):  # there, but not read: never a deletion; the state stays as it was
            if rel in state.memory:
                new_state[rel] = state.memory[rel]
            continue
        entry = {**memory_state(seen.sha256, seen.text), "entries_sha256": seen.entries_sha256}  # scrubbed text
        new_state[rel] = entry
        text = entry["text"]
        old = state.memory.get(rel)
        if old is None:
            if state.initialised:
                diffs.append(file_diff(rel, "add", "", text))
        elif old.get("sha256") != seen.sha256:
            diffs.append(file_diff(rel, "modify", old.get("text"), text, same_entries=_same_entries(old, seen)))
    for rel, old in state.memory.items():
        if rel not in new_state:
            diffs.append(file_diff(rel, "delete", old.get("text"), ""))
    return [d for d in diffs if d is not None], new_state
