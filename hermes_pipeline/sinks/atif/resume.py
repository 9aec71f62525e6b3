"""One Hermes session, one trajectory file, across processes (issue #27; FMT-42, FMT-52).

A Hermes session continued in another process (``hermes chat --resume`` / ``-c``, a restarted gateway or
API server) opens a new session scope there: the ATOF stream, append-only, gets a second session scope
whose start says ``resumed: true`` (each process pairs its own scopes). Its ATIF trajectory, though, is
the session's one file: when the local output writes a session trajectory whose Hermes ``session_id``
already has a file in that directory (written by an earlier process), the new process's trajectory is
appended to it and the file is rewritten atomically, keeping its name and ``trajectory_id``. Each turn is
still its own trace and its own run id (``extra.hermes.trajectory_id`` of its user step).

:class:`SessionFiles` looks for the earlier file only for a trajectory whose session start said
``resumed`` (the session scope kind's mark of a session whose first turn here was not its first turn), among the
newest files the template names. Only whole-session trajectories merge (``group_by = "agent"``; per-run
files and rotated segments, which have their own continuation links, never do).
"""

from __future__ import annotations

import copy
import json
import os
import stat
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

from ...export.definition_files import SHARED_KEY
from ...export.definitions import DEFINITIONS_KEY
from ...export.jsonenc import indented
from ...export.locks import FileLockTimeout, flock_within
from ...config.errors import ConfigError
from ...config.files import read_config_bytes
from .filenames import FilenameTemplate
from .values import final_metrics

__all__ = ["SCAN_LIMIT", "SessionFiles", "merge_session"]

SCAN_LIMIT: Final = 512
"""The newest trajectory files of the directory read to find a resumed session's earlier file."""
_SEGMENT_KEYS: Final = ("segment", "previous_trajectory_id")
PARTS_KEY: Final = "resumed_parts"
"""``extra`` key of a merged file: its parts in order (see :func:`merge_session`); beside ``extra.hermes``, whose
keys the ATIF schema closes."""
MAX_READ_BYTES: Final = 256 * 1024 * 1024
"""The largest earlier file read to merge into (the readers' limit); a larger one is counted unreadable."""
LOCK_TIMEOUT: Final = 5.0
"""Seconds a merge waits for another process's merge in the same directory (one read, merge and write)."""


def _hermes(doc: dict[str, Any]) -> dict[str, Any]:
    extra = doc.get("extra")
    hermes = extra.get("hermes") if isinstance(extra, dict) else None
    return hermes if isinstance(hermes, dict) else {}


def _failed_attempts(doc: dict[str, Any]) -> int:
    metrics = doc.get("final_metrics")
    extra = metrics.get("extra") if isinstance(metrics, dict) else None
    value = extra.get("failed_attempts") if isinstance(extra, dict) else None
    return value if isinstance(value, int) else 0


def _children(doc: dict[str, Any]) -> list[Any]:
    value = doc.get("subagent_trajectories")
    return list(value) if isinstance(value, list) else []


def _part(doc: dict[str, Any]) -> dict[str, Any]:
    """What the merged file remembers of one process's part: its id and how much of the file is its own."""
    steps = sum(isinstance(step, dict) for step in doc.get("steps") or [])
    return {"trajectory_id": doc.get("trajectory_id"), "steps": steps,
            "subagents": len(_children(doc)), "failed_attempts": _failed_attempts(doc)}


def _parts(base: dict[str, Any], steps: int, children: int) -> list[dict[str, Any]]:
    """The parts of ``base`` (its first process's included), in file order; one part when it lists none or
    its list does not add up (a file edited by hand: it is then extended, never cut)."""
    extra = base.get("extra")
    listed = extra.get(PARTS_KEY) if isinstance(extra, dict) else None
    whole = {**_part(base), "steps": steps, "subagents": children}
    if not isinstance(listed, list) or not listed:
        return [whole]
    parts = []
    for entry in listed:
        if not isinstance(entry, dict) or not all(isinstance(entry.get(k), int) and entry[k] >= 0
                                                  for k in ("steps", "subagents", "failed_attempts")):
            return [whole]
        parts.append(dict(entry))
    if sum(p["steps"] for p in parts) != steps or sum(p["subagents"] for p in parts) != children:
        return [whole]
    return parts


def merge_session(base: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """``new`` (one process's part of a session) merged into ``base`` (the session's file as it is now).

    The file lists its parts (``extra.resumed_parts``: each part's ``trajectory_id`` and how many steps and
    subagents are its own), so a part written again (a rewrite of the same process's trajectory, e.g. a late
    subagent) replaces its own steps in place, and a new part is appended: any number of resumes, in any
    processes, keeps every step once. The result keeps ``base``'s identity (``trajectory_id``, ``session_id``,
    ``trajectory_date``), has the steps of all parts in order with ``step_id`` renumbered, the subagents of all,
    the task ids of all, ``final_metrics`` over all steps, and the latest part's agent, final output and notes.
    """
    old_steps = [s for s in base.get("steps") or [] if isinstance(s, dict)]
    old_children = _children(base)
    parts = _parts(base, len(old_steps), len(old_children))
    new_steps = [s for s in new.get("steps") or [] if isinstance(s, dict)]
    new_children = _children(new)
    failed = sum(p["failed_attempts"] for p in parts)
    tid = new.get("trajectory_id")
    index = next((i for i, p in enumerate(parts) if tid is not None and p.get("trajectory_id") == tid), None)
    if index is None:
        steps, children = old_steps + new_steps, old_children + new_children
        parts.append(_part(new))
    else:  # this part again: its own steps and subagents replaced where they are
        step_at = sum(p["steps"] for p in parts[:index])
        child_at = sum(p["subagents"] for p in parts[:index])
        steps = old_steps[:step_at] + new_steps + old_steps[step_at + parts[index]["steps"]:]
        children = old_children[:child_at] + new_children + old_children[child_at + parts[index]["subagents"]:]
        failed -= parts[index]["failed_attempts"]
        parts[index] = _part(new)
    failed += _failed_attempts(new)
    latest = index is None or index == len(parts) - 1
    doc = copy.copy(new if latest else base)
    doc["steps"] = [step if step.get("step_id") == i else {**step, "step_id": i} for i, step in enumerate(steps, 1)]
    doc["trajectory_id"] = base.get("trajectory_id", new.get("trajectory_id"))
    doc["session_id"] = base.get("session_id", doc["trajectory_id"])
    if children:
        doc["subagent_trajectories"] = children
    else:
        doc.pop("subagent_trajectories", None)
    metrics = final_metrics(doc["steps"], failed)
    if metrics is not None:
        doc["final_metrics"] = metrics
    else:
        doc.pop("final_metrics", None)
    old, fresh = _hermes(base), _hermes(new)
    hermes = {**old, **fresh} if latest else {**fresh, **old}
    hermes["trajectory_date"] = old.get("trajectory_date", fresh.get("trajectory_date"))
    task_ids = [*(old.get("task_ids") or []), *(t for t in fresh.get("task_ids") or [] if t not in
                                                 (old.get("task_ids") or []))]
    if task_ids:
        hermes["task_ids"] = task_ids
    for key, merged in ((DEFINITIONS_KEY, _merged_definitions(old, fresh)), (SHARED_KEY, _merged_shared(old, fresh))):
        if merged:  # the earlier steps' references stay defined
            hermes[key] = merged
    if "context" in old:
        hermes["context"] = old["context"]  # the session's first snapshot, as a single-process file keeps it
    extra = dict((new if latest else base).get("extra") or {})
    extra["hermes"] = hermes
    extra[PARTS_KEY] = parts
    doc["extra"] = extra
    return doc


def _merged_definitions(old: dict[str, Any], fresh: dict[str, Any]) -> dict[str, Any]:
    """The definitions both parts' steps refer to (each defined once)."""
    out: dict[str, Any] = {}
    for part in (old, fresh):
        value = part.get(DEFINITIONS_KEY)
        if isinstance(value, dict):
            out.update(value)
    return out


def _merged_shared(old: dict[str, Any], fresh: dict[str, Any]) -> list[str]:
    """The sidecar references of both parts, sorted."""
    refs: set[str] = set()
    for part in (old, fresh):
        value = part.get(SHARED_KEY)
        if isinstance(value, list):
            refs.update(r for r in value if isinstance(r, str))
    return sorted(refs)


class SessionFiles:
    """Finds the earlier file of a resumed session in one output directory, and merges on write.

    Only a trajectory whose session start said ``resumed`` (``extra.hermes.resumed``) is looked up: the
    directory's files named by the template are read newest first (at most :data:`SCAN_LIMIT`), and the
    first whose ``extra.hermes.session_id`` is the same whole-session trajectory is the base. The base is read
    again from disk for every merge (never a copy kept from an earlier one: another resume, here or in another
    process, may have extended it since), with the package's safe reader (regular files only, no blocking open,
    size capped; anything else is counted in :attr:`unreadable` and skipped). A trajectory written again into a
    file that already holds merged parts (its first process's part, rewritten) is merged the same way.
    :meth:`write` holds the directory's ``flock`` (bounded wait) around the read, the merge and the write, so
    two processes merging into one file never drop each other's part. Nothing else is written to the directory.

    Args:
        directory: the output directory.
        template: the filename template (its pattern selects the files looked at).
    """

    def __init__(self, directory: Path, template: FilenameTemplate) -> None:
        self.directory = directory
        self.template = template
        self._names: OrderedDict[str, str] = OrderedDict()
        """Hermes session id → the name of its merged file (where to look first; the file is read each time)."""
        self.merged = 0
        self.unreadable = 0
        """Candidate files that could not be read (not a regular file, too large, not JSON): skipped."""
        self.lock_timeouts = 0
        """Merges not written because another process's merge held the directory's lock past :data:`LOCK_TIMEOUT`."""

    @staticmethod
    def mergeable(document: dict[str, Any]) -> str | None:
        """The Hermes session id of a whole-session trajectory, ``None`` for anything else."""
        hermes = _hermes(document)
        session_id = hermes.get("session_id")
        if not isinstance(session_id, str) or not session_id or any(k in hermes for k in _SEGMENT_KEYS) \
                or document.get("continued_trajectory_ref"):
            return None
        return session_id

    def _candidates(self, name: str) -> list[tuple[float, str]]:
        pattern = self.template.pattern()
        found: list[tuple[float, str]] = []
        for root, dirs, files in os.walk(self.directory):
            if len(Path(root).relative_to(self.directory).parts) >= self.template.max_depth:
                dirs[:] = []
            for file in files:
                path = Path(root) / file
                relative = path.relative_to(self.directory).as_posix()
                if relative != name and pattern.fullmatch(relative):
                    try:
                        found.append((path.stat().st_mtime, relative))
                    except OSError:
                        continue
        found.sort(reverse=True)
        return found[:SCAN_LIMIT]

    def _read(self, relative: str, *, missing_ok: bool = False) -> dict[str, Any] | None:
        """The document of ``relative``; ``None`` (counted unless missing and ``missing_ok``) when it is no
        regular file, too large, unreadable or not a JSON object. Never blocks on a FIFO or device."""
        try:  # the package's safe reader: stat first, O_NONBLOCK, fstat, regular files only, size capped
            doc = json.loads(read_config_bytes(self.directory / relative, limit=MAX_READ_BYTES, code="atif.unreadable"))
        except ConfigError as exc:
            if not (missing_ok and exc.code == "pipeline.file_missing"):
                self.unreadable += 1
            return None
        except ValueError:
            self.unreadable += 1
            return None
        return doc if isinstance(doc, dict) and isinstance(doc.get("steps"), list) else None

    def _find(self, session_id: str, name: str) -> tuple[str, dict[str, Any]] | None:
        hint = self._names.get(session_id)
        if hint is not None and hint != name:
            doc = self._read(hint, missing_ok=True)
            if doc is not None and self.mergeable(doc) == session_id:
                self._names.move_to_end(session_id)
                return hint, doc
            del self._names[session_id]
        for _, relative in self._candidates(name):
            doc = self._read(relative)
            if doc is not None and self.mergeable(doc) == session_id:
                self._names[session_id] = relative
                while len(self._names) > SCAN_LIMIT:
                    self._names.popitem(last=False)
                return relative, doc
        return None

    def _target(self, name: str, document: dict[str, Any] | None) -> str | None:
        """Why ``document`` may merge: ``"resumed"`` (a later process's part), ``"again"`` (written over a file
        that may hold merged parts), ``None`` (written as it is)."""
        if not isinstance(document, dict) or self.mergeable(document) is None:
            return None
        if _hermes(document).get("resumed") is True:
            return "resumed"
        try:
            return "again" if stat.S_ISREG(os.lstat(self.directory / name).st_mode) else None
        except OSError:
            return None

    def prepare(self, name: str, document: dict[str, Any] | None, content: bytes) -> tuple[str, bytes]:
        """``(name, content)`` to write for one trajectory: a resumed session's part goes, merged, into the
        session's earlier file under that file's name (read now); a part written again over a merged file
        replaces its own steps there; anything else is written as it is."""
        why = self._target(name, document)
        if why is None or not isinstance(document, dict):
            return name, content
        session_id = self.mergeable(document)
        if why == "again":
            current = self._read(name, missing_ok=True)
            if current is None or PARTS_KEY not in (current.get("extra") or {}) \
                    or session_id != self.mergeable(current) \
                    or current.get("trajectory_id") != document.get("trajectory_id"):
                return name, content
            return name, indented(merge_session(current, document))
        assert session_id is not None
        base = self._find(session_id, name)
        if base is None:
            return name, content
        self.merged += 1
        return base[0], indented(merge_session(base[1], document))

    def write(self, name: str, document: dict[str, Any] | None, content: bytes,
              write_file: Callable[[str, bytes], None]) -> str:
        """Write one trajectory with ``write_file(name, content)``, merged as :meth:`prepare` says, under the
        directory's lock when it merges; the name written.

        Raises:
            FileLockTimeout: another process's merge held the lock past :data:`LOCK_TIMEOUT` (nothing written:
                the writer counts the trajectory).
        """
        if self._target(name, document) is None:
            write_file(name, content)
            return name
        with self._locked():
            name, content = self.prepare(name, document, content)
            write_file(name, content)
        return name

    @contextmanager
    def _locked(self) -> Iterator[None]:
        """The directory's ``flock`` (no file of its own is made); without it where the file system cannot lock."""
        try:
            fd = os.open(self.directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
        except OSError:  # no directory yet: no earlier file to merge with either
            yield
            return
        try:
            try:
                held = flock_within(fd, LOCK_TIMEOUT)
            except OSError:
                held = True  # this file system has no locks: merged unlocked
            if not held:
                self.lock_timeouts += 1
                raise FileLockTimeout(None, LOCK_TIMEOUT)
            yield
        finally:
            os.close(fd)
