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
from pathlib import Path
from typing import Any, Final

from ...export.definition_files import SHARED_KEY
from ...export.definitions import DEFINITIONS_KEY
from ...export.jsonenc import indented
from .filenames import FilenameTemplate
from .values import final_metrics

__all__ = ["SCAN_LIMIT", "SessionFiles", "merge_session"]

SCAN_LIMIT: Final = 512
"""The newest trajectory files of the directory read to find a resumed session's earlier file."""
_SEGMENT_KEYS: Final = ("segment", "previous_trajectory_id")


def _hermes(doc: dict[str, Any]) -> dict[str, Any]:
    extra = doc.get("extra")
    hermes = extra.get("hermes") if isinstance(extra, dict) else None
    return hermes if isinstance(hermes, dict) else {}


def _failed_attempts(doc: dict[str, Any]) -> int:
    metrics = doc.get("final_metrics")
    extra = metrics.get("extra") if isinstance(metrics, dict) else None
    value = extra.get("failed_attempts") if isinstance(extra, dict) else None
    return value if isinstance(value, int) else 0


def merge_session(base: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """``new`` (one process's part of a session) appended to ``base`` (the earlier processes' file).

    The result keeps ``base``'s identity (``trajectory_id``, ``session_id``, ``trajectory_date``), has the
    steps of both in order with ``step_id`` renumbered, the subagents of both, the task ids of both,
    ``final_metrics`` over all steps, and ``new``'s agent, final output and notes (its latest state).
    """
    doc = copy.copy(new)
    old_steps = [s for s in base.get("steps") or [] if isinstance(s, dict)]
    steps = list(old_steps)
    for index, step in enumerate(new.get("steps") or [], start=len(old_steps) + 1):
        if isinstance(step, dict):
            steps.append({**step, "step_id": index})
    doc["steps"] = steps
    doc["trajectory_id"] = base.get("trajectory_id", new.get("trajectory_id"))
    doc["session_id"] = base.get("session_id", doc["trajectory_id"])
    children = [*(base.get("subagent_trajectories") or []), *(new.get("subagent_trajectories") or [])]
    if children:
        doc["subagent_trajectories"] = children
    metrics = final_metrics(steps, _failed_attempts(base) + _failed_attempts(new))
    if metrics is not None:
        doc["final_metrics"] = metrics
    else:
        doc.pop("final_metrics", None)
    old, fresh = _hermes(base), _hermes(new)
    hermes = {**old, **fresh}
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
    extra = dict(new.get("extra") or {})
    extra["hermes"] = hermes
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
    first whose ``extra.hermes.session_id`` is the same whole-session trajectory is the base. Nothing else
    is written to the directory.

    Args:
        directory: the output directory.
        template: the filename template (its pattern selects the files looked at).
    """

    def __init__(self, directory: Path, template: FilenameTemplate) -> None:
        self.directory = directory
        self.template = template
        self._bases: dict[str, tuple[str, dict[str, Any]] | None] = {}
        """Hermes session id → (file name, the document as earlier processes left it), or ``None`` (none)."""
        self.merged = 0
        self.unreadable = 0

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

    def _find(self, session_id: str, name: str) -> tuple[str, dict[str, Any]] | None:
        if session_id in self._bases:
            return self._bases[session_id]
        base: tuple[str, dict[str, Any]] | None = None
        for _, relative in self._candidates(name):
            try:
                doc = json.loads((self.directory / relative).read_bytes())
            except (OSError, ValueError):
                self.unreadable += 1
                continue
            if isinstance(doc, dict) and isinstance(doc.get("steps"), list) and self.mergeable(doc) == session_id:
                base = (relative, doc)
                break
        self._bases[session_id] = base
        return base

    def prepare(self, name: str, document: dict[str, Any] | None, content: bytes) -> tuple[str, bytes]:
        """``(name, content)`` to write for one trajectory: a resumed session's part goes, merged, into the
        session's earlier file under that file's name; anything else is written as it is."""
        if not isinstance(document, dict) or _hermes(document).get("resumed") is not True:
            return name, content
        session_id = self.mergeable(document)
        if session_id is None:
            return name, content
        base = self._find(session_id, name)
        if base is None:
            return name, content
        self.merged += 1
        return base[0], indented(merge_session(base[1], document))
