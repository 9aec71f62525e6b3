"""The store's own files: the naming pattern and the date of a trajectory (spec 06 BOOK-27, BOOK-37)."""

from __future__ import annotations

import json
import os
import re
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Final

from ...host.profile_files import read_regular_bytes

__all__ = ["FILENAME_TEMPLATE", "ID_PREFIX", "STORE_NAME", "TrajectoryLookupError", "find_trajectory", "is_store_file",
           "store_files", "trajectory_date"]

FILENAME_TEMPLATE: Final = "{date}-{session_id}.json"
"""The ATIF filename template of the store: the run's UTC start date and the ``agent.run`` UUID."""

STORE_NAME: Final = re.compile(
    r"(?P<date>\d{4}-\d{2}-\d{2})-(?P<id>[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.json")
"""A store file name; nothing else in the directory is ever touched (pruning, listing)."""


ID_PREFIX: Final = re.compile(r"[0-9a-f][0-9a-f-]{0,35}")
"""What a trajectory id or a prefix of one may look like (lower-case hex and dashes); nothing else is looked up."""
MIN_PREFIX: Final = 4
"""The shortest prefix looked up (shorter ones would match most of a busy store)."""
CANDIDATES_SHOWN: Final = 10


class TrajectoryLookupError(LookupError):
    """No trajectory, or several, for an id or prefix: the message says which and what to do.

    Attributes:
        ref: what was looked up.
        candidates: the ids of an ambiguous prefix (sorted; empty when nothing matched).
    """

    def __init__(self, message: str, ref: str, candidates: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.ref = ref
        self.candidates = candidates


def find_trajectory(directory: Path, ref: str) -> tuple[str, Path]:
    """``(id, path)`` of the store file in ``directory`` whose id is ``ref`` or starts with it.

    The one lookup of a trajectory by id that the ``replay`` and ``trajectory`` commands and the dashboard
    share, so that a full id (the exported ATIF ``trajectory_id``, OTLP ``hermes.trajectory_id``,
    ``task_runs.trajectory_id`` are the same) and a unique prefix of one work alike everywhere. Case and
    surrounding blanks are ignored.

    Raises:
        TrajectoryLookupError: ``ref`` is not an id or a prefix of at least :data:`MIN_PREFIX` characters,
            nothing matches, or the prefix matches several runs (their ids are in ``candidates``).
    """
    key = ref.strip().lower()
    if not ID_PREFIX.fullmatch(key) or len(key) < MIN_PREFIX:
        raise TrajectoryLookupError(f"{ref!r} is not a trajectory id or a prefix of one (at least {MIN_PREFIX} "
                                    "hex characters)", ref)
    found: dict[str, Path] = {}
    # any entry of a store file's name counts (a FIFO, a directory, a link to a device): the reader that opens
    # it then says why it cannot be read, instead of "no trajectory"
    for path in store_files(directory, regular_only=False):
        match = STORE_NAME.fullmatch(path.name)
        if match is not None and match.group("id").startswith(key):
            found.setdefault(match.group("id"), path)  # one run, one file; a second date would be a copy
    if not found:
        raise TrajectoryLookupError(f"no trajectory with id {ref!r} in {directory}", ref)
    if len(found) > 1:
        ids = tuple(sorted(found))
        shown = ", ".join(ids[:CANDIDATES_SHOWN]) + (f", … ({len(ids) - CANDIDATES_SHOWN} more)"
                                                     if len(ids) > CANDIDATES_SHOWN else "")
        raise TrajectoryLookupError(f"the id prefix {ref!r} matches {len(ids)} trajectories ({shown}); "
                                    "give more characters", ref, ids)
    ((tid, path),) = found.items()
    return tid, path


def is_store_file(path: Path) -> bool:
    """Whether ``path`` is named like a store file (``<YYYY-MM-DD>-<uuid>.json``)."""
    return STORE_NAME.fullmatch(path.name) is not None


def store_files(directory: Path, *, regular_only: bool = True) -> list[Path]:
    """The store files directly in ``directory``, sorted by name (date, then id); ``[]`` without it. With
    ``regular_only=False``, every entry named like one (whatever it is)."""
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    return sorted(directory / name for name in names
                  if STORE_NAME.fullmatch(name) and (not regular_only or (directory / name).is_file()))


def trajectory_date(path: Path) -> date:
    """The run's date: from the filename, else the document's ``extra.hermes.trajectory_date``, else
    the file's modification time (UTC)."""
    match = STORE_NAME.fullmatch(path.name)
    if match is not None:
        try:
            return date.fromisoformat(match.group("date"))
        except ValueError:
            pass
    try:  # a FIFO or a device is refused at once; a file over 1 MiB is no single JSON head either way
        doc = json.loads(read_regular_bytes(path, 1 << 20))
        value = doc["extra"]["hermes"]["trajectory_date"]
        return date.fromisoformat(str(value)[:10])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return datetime.fromtimestamp(path.stat().st_mtime, tz=timezone.utc).date()
