"""One Hermes session, one trajectory file, across processes (issue #27; FMT-42, FMT-52).

A Hermes session continued in another process (``hermes chat --resume`` / ``-c``, a restarted gateway or
API server) opens a new session scope there: the ATOF stream, append-only, gets a second session scope
whose start says ``resumed: true`` (each process pairs its own scopes). Its ATIF trajectory, though, is
the session's one file: when the local output writes a session trajectory whose Hermes ``session_id``
already has a file in that directory (written by an earlier process), the new process's trajectory is
appended to it and the file is rewritten atomically, keeping its name and ``trajectory_id``. Each turn is
still its own trace and its own run id (``extra.hermes.trajectory_id`` of its user step).

:class:`SessionFiles` finds the earlier file through a small index in the output directory
(``.sessions/<sha256 of the Hermes session id>``: the file's relative name), written atomically beside
each session file, so no trajectory is ever opened to find it. Only whole-session trajectories merge
(``group_by = "agent"``; per-run files and rotated segments, which have their own continuation links,
never do).
"""

from __future__ import annotations

import copy
import hashlib
import json
import logging
from pathlib import Path
from typing import Any, Final

from ...export.atomic import write_atomically
from ...export.jsonenc import indented
from .values import final_metrics

__all__ = ["INDEX_DIR", "SessionFiles", "merge_session"]

logger: Final = logging.getLogger("hermes_pipeline.sinks.atif")

INDEX_DIR: Final = ".sessions"
"""The index directory inside the output directory (never matched by the filename template: a dot name)."""
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
    if "context" in old:
        hermes["context"] = old["context"]  # the session's first snapshot, as a single-process file keeps it
    extra = dict(new.get("extra") or {})
    extra["hermes"] = hermes
    doc["extra"] = extra
    return doc


class SessionFiles:
    """The index of whole-session trajectory files of one output directory, and the merge on write.

    Args:
        directory: the output directory.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._bases: dict[str, tuple[str, dict[str, Any]]] = {}
        """Hermes session id → (file name, the document as earlier processes left it), for this process."""
        self._mine: set[str] = set()
        """Hermes session ids whose file this process created (nothing to merge)."""
        self.merged = 0
        self.failures = 0

    def _index(self, session_id: str) -> Path:
        return self.directory / INDEX_DIR / hashlib.sha256(session_id.encode("utf-8")).hexdigest()[:40]

    @staticmethod
    def mergeable(document: dict[str, Any]) -> str | None:
        """The Hermes session id of a whole-session trajectory, ``None`` for anything else."""
        hermes = _hermes(document)
        session_id = hermes.get("session_id")
        if not isinstance(session_id, str) or not session_id or any(k in hermes for k in _SEGMENT_KEYS) \
                or document.get("continued_trajectory_ref"):
            return None
        return session_id

    def _base(self, session_id: str, name: str) -> tuple[str, dict[str, Any]] | None:
        known = self._bases.get(session_id)
        if known is not None or session_id in self._mine:
            return known
        try:
            earlier = self._index(session_id).read_text(encoding="utf-8").strip()
        except OSError:
            earlier = ""
        base: tuple[str, dict[str, Any]] | None = None
        if earlier and earlier != name and "/.." not in f"/{earlier}":
            try:
                doc = json.loads((self.directory / earlier).read_bytes())
                if isinstance(doc, dict) and isinstance(doc.get("steps"), list):
                    base = (earlier, doc)
            except FileNotFoundError:  # pruned by retention, or removed: this part starts the file anew
                pass
            except (OSError, ValueError):
                self.failures += 1
                logger.warning("hermes_pipeline: atif: the earlier trajectory file %s of a resumed session cannot "
                               "be read; this part is written as a file of its own", earlier)
        if base is None:
            self._mine.add(session_id)
        else:
            self._bases[session_id] = base
        return base

    def prepare(self, name: str, document: dict[str, Any] | None, content: bytes) -> tuple[str, bytes]:
        """``(name, content)`` to write for one trajectory: an earlier file of the same session takes the
        merged document under its own name; the index names the file written."""
        session_id = self.mergeable(document) if isinstance(document, dict) else None
        if session_id is None:
            return name, content
        base = self._base(session_id, name)
        if base is not None:
            name, content = base[0], indented(merge_session(base[1], document))  # type: ignore[arg-type]
            self.merged += 1
        else:
            index = self._index(session_id)
            try:
                index.parent.mkdir(mode=0o700, exist_ok=True)
                write_atomically(index, name.encode("utf-8"))
            except OSError:
                self.failures += 1
        return name, content
