"""Which recorded runs are replays, and of what: the reads behind "a run lists its replays" and "a replay links
to its original" (issue #31 item 5, issue #28 item 5).

``replay`` writes the new run's trajectory with ``extra.hermes.replay = {"of": <original id>, "mode", …,
"diverged_at_step"}``: the reference agent's replay as a store file (``<date>-<id>.json``), Hermes' replay as
``replay-<session>.json`` beside the store's files. The store keeps no row for a replay, so the trajectory
directory is the only record. The ``replay`` record is the last key the writer adds to ``extra.hermes``, and
``extra`` is the document's last key, so each file is classified by reading its last :data:`TAIL_BYTES` bytes;
a file that looks like a replay there is then read whole (bounded, checked) before it counts. A file is
classified once per process (a run file is never turned into a replay after it is written); only new names
are read, so a page costs one directory listing once the index is warm.
"""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path
from typing import Any, Final

from .sources import TRAJECTORY_ID, Sources, read_part

__all__ = ["ReplayIndex", "REPLAYS_SHOWN", "replay_index"]

TAIL_BYTES: Final = 8192
"""Bytes read from the end of each trajectory file to find its ``replay`` record."""
REPLAYS_SHOWN: Final = 20
"""Replays a run page lists (newest first; the count covers all)."""
_MARK: Final = re.compile(rb'"replay"\s*:\s*\{[^{}]*?"of"\s*:\s*"([0-9a-f-]{36})"')
_NAME: Final = re.compile(r"(?:\d{4}-\d{2}-\d{2}-[0-9a-f-]{36}|replay-[A-Za-z0-9_.:-]{1,128})\.json")


class ReplayIndex:
    """The replays of one trajectory directory: ``of`` (original id → replay ids), ``files`` (replay id → file)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._seen: dict[str, tuple[str, str] | None] = {}  # file name → (replay id, original id) or not a replay
        self._replays: dict[str, tuple[str, str]] = {}
        self._ids: dict[str, str] = {}  # run id → store file name
        self._stamp: int | None = None  # the directory's mtime at the last listing
        self._lock = threading.Lock()

    def _classify(self, name: str) -> tuple[str, str] | None:
        from .queries import _read

        path = self.directory / name
        tail = read_part(path, TAIL_BYTES, tail=True)
        if tail is None or _MARK.search(tail) is None:
            return None
        doc, problem = _read(path)
        if doc is None or problem is not None:
            return None
        hermes = (doc.get("extra") or {}).get("hermes") if isinstance(doc.get("extra"), dict) else None
        record = hermes.get("replay") if isinstance(hermes, dict) else None
        original = record.get("of") if isinstance(record, dict) else None
        own = doc.get("trajectory_id")
        if not (isinstance(original, str) and TRAJECTORY_ID.fullmatch(original) and isinstance(own, str)
                and TRAJECTORY_ID.fullmatch(own)) or own == original:
            return None
        return own, original

    def refresh(self) -> dict[str, tuple[str, str]]:
        """``{file name: (replay id, original id)}`` of the directory now (new names read, gone ones dropped). The
        directory is listed again only when its modification time changed (a file added, renamed or removed)."""
        try:
            stamp = os.stat(self.directory).st_mtime_ns
        except OSError:
            return {}
        with self._lock:
            if stamp == self._stamp:
                return self._replays
            try:
                names = [n for n in os.listdir(self.directory) if _NAME.fullmatch(n)]
            except OSError:
                return {}
            fresh = {n: self._seen[n] if n in self._seen else self._classify(n) for n in names}
            self._seen, self._stamp = fresh, stamp
            self._replays = {n: v for n, v in fresh.items() if v is not None}
            self._ids = {n[11:47]: n for n in names if n[:1].isdigit()}
            return self._replays

    def store_file(self, ref: str) -> tuple[str, Path] | None:
        """``(id, file)`` of the one store file whose id is ``ref`` or starts with it, from the cached listing;
        ``None`` when there is none or several (then the store's own lookup decides, and says which)."""
        self.refresh()
        name = self._ids.get(ref)
        if name is not None:
            return ref, self.directory / name
        found = [tid for tid in self._ids if tid.startswith(ref)]
        return (found[0], self.directory / self._ids[found[0]]) if len(found) == 1 else None

    def replays_of(self, original: str) -> list[tuple[str, str]]:
        """``(replay id, file name)`` of every replay of ``original``, newest file name first."""
        found = [(own, name) for name, (own, of) in self.refresh().items() if of == original]
        return sorted(found, key=lambda item: item[1], reverse=True)

    def file_of(self, ref: str) -> tuple[str, Path] | None:
        """``(id, file)`` of the replay whose id is ``ref`` or starts with it (unique), for a replay the store's
        lookup cannot name (Hermes' ``replay-<session>.json``)."""
        key = ref.strip().lower()
        matches = {own: name for name, (own, _) in self.refresh().items() if own.startswith(key)}
        if len(matches) != 1:
            return None
        ((own, name),) = matches.items()
        return own, self.directory / name


_INDEXES: dict[Path, ReplayIndex] = {}
_INDEXES_LOCK: Final = threading.Lock()


def replay_index(sources: Sources) -> ReplayIndex:
    """The process's index of ``sources``' trajectory directory (one per directory)."""
    with _INDEXES_LOCK:
        index = _INDEXES.get(sources.trajectories)
        if index is None:
            index = _INDEXES[sources.trajectories] = ReplayIndex(sources.trajectories)
        return index


def replay_summary(sources: Sources, original_doc: dict[str, Any], replay_id: str, name: str) -> dict[str, Any]:
    """One replay as a run page lists it: id, file date, mode and agent, where it diverged, and the verdict of
    the comparison with the original (the diff page's own)."""
    from ..replay.diff import diff_trajectories
    from .queries import _read

    doc, _ = _read(sources.trajectories / name)
    hermes = ((doc or {}).get("extra") or {}).get("hermes") or {}
    replay = hermes.get("replay")
    record = replay if isinstance(replay, dict) else {}
    try:
        verdict = diff_trajectories(original_doc, doc).verdict if doc is not None else "cannot be read"
    except (TypeError, ValueError, KeyError, AttributeError):
        verdict = "cannot be compared"
    return {"id": replay_id, "file": name, "date": name[:10] if name[:4].isdigit() else None,
            "mode": record.get("mode"), "agent": record.get("agent") or "reference",
            "diverged_at_step": record.get("diverged_at_step"), "verdict": verdict}
