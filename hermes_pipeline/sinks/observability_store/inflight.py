"""In-flight marks: which files some tool call of any process of the profile is writing, or has written without
its rows in the store yet.

A probe (:mod:`.skill_probe`, :mod:`.memory_probe`) puts a mark for a call in ``observability/inflight/`` (one
small file per call, naming the process, the memory files, and for a skill call the skill and the files the call
names) before the tool runs; the store writer removes it once the call's rows are committed. A rescan in any
process leaves a file or skill with a live mark alone (:func:`inflight_files`, :func:`inflight_skills`): while a
tool is writing it, or its row has not reached the store, what the rescan sees is the agent's, even content no
probe read (another process wrote again before this one's ``post_tool_call``). The same marks tell a writer
comparing the files before a call with the store's state which differences are other calls' writes, not the
user's. A mark of a dead process, or older than :data:`~.attribution.WINDOW`, is stale and removed.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any, Final

from ...host.profile_files import MAX_SMALL_FILE_BYTES, read_regular_bytes
from .attribution import WINDOW

__all__ = ["INFLIGHT_DIR", "MAX_PENDING", "drop_mark", "expire_open", "inflight_files", "inflight_skills",
           "mark_name", "process_alive", "put_mark"]

MAX_PENDING: Final = 256
"""Calls a probe keeps open at most (their ends never came: the oldest are forgotten)."""
INFLIGHT_DIR: Final = "inflight"


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` exists (owned by anyone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True



def _live_marks(directory: Path, now: float | None, exclude: Collection[str]) -> list[dict[str, Any]]:
    """The live marks in ``directory`` (not named in ``exclude``); stale ones are removed."""
    now = time.time() if now is None else now
    out: list[dict[str, Any]] = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return out
    for entry in entries:
        if not entry.name.endswith(".json") or entry.name in exclude:
            continue
        try:
            raw = json.loads(read_regular_bytes(entry.path, MAX_SMALL_FILE_BYTES))  # never a FIFO's hang
            pid, at = int(raw["pid"]), float(raw["at"])
        except (OSError, ValueError, KeyError, TypeError):
            continue  # being written, or not ours: ignored
        if not process_alive(pid) or not now - WINDOW <= at <= now + WINDOW:
            try:
                os.unlink(entry.path)
            except OSError:
                pass
            continue
        out.append(raw)
    return out


def inflight_files(directory: Path, now: float | None = None, exclude: Collection[str] = ()) -> set[str]:
    """The memory files (relative to the profile) some live tool call of any process is writing or has
    written without its row in the store yet; stale marks are removed (see the module docstring). ``exclude``:
    names of marks not to count (a call's own)."""
    out: set[str] = set()
    for raw in _live_marks(directory, now, exclude):
        files = raw.get("files")
        if isinstance(files, list):
            out.update(str(f) for f in files if isinstance(f, str))
    return out


def inflight_skills(directory: Path, now: float | None = None, exclude: Collection[str] = ()) -> dict[str, set[str]]:
    """``public skill name → files`` (relative to the skill; :data:`WHOLE` for the whole skill) that some live
    ``skill_manage`` call of any process is writing or has written without its row in the store yet."""
    out: dict[str, set[str]] = {}
    for raw in _live_marks(directory, now, exclude):
        skills = raw.get("skills")
        if not isinstance(skills, Mapping):
            continue
        for name, paths in skills.items():
            if isinstance(name, str) and isinstance(paths, list):
                out.setdefault(name, set()).update(str(p) for p in paths if isinstance(p, str))
    return out


def mark_name(tool_call_id: str) -> str:
    return f"{os.getpid()}-{hashlib.sha256(tool_call_id.encode('utf-8')).hexdigest()[:20]}.json"


def put_mark(directory: Path | None, tool_call_id: str, content: dict[str, Any]) -> Path | None:
    """Write the in-flight mark of one call; ``None`` when it cannot be written."""
    if directory is None:
        return None
    name = mark_name(tool_call_id)
    path = directory / name
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        tmp = path.with_name(f".{name}.tmp")
        tmp.write_text(json.dumps({"pid": os.getpid(), "at": time.time(), **content}), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        return None
    return path


def drop_mark(path: Path | None) -> None:
    if path is not None:
        try:
            os.unlink(path)
        except OSError:
            pass


def expire_open(open_calls: dict[str, Any], marks: dict[str, Path]) -> None:
    """Forget calls open longer than :data:`~.attribution.WINDOW` (their rows never came; their marks are stale)."""
    if len(open_calls) <= MAX_PENDING:
        return
    since = time.time() - WINDOW
    for call_id in [c for c, v in open_calls.items() if v[-1] < since]:
        del open_calls[call_id]
        marks.pop(call_id, None)
