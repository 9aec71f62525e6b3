"""The store's own files: the naming pattern and the date of a trajectory (spec 06 BOOK-27, BOOK-37)."""

from __future__ import annotations

import json
import os
import re
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Final

__all__ = ["FILENAME_TEMPLATE", "STORE_NAME", "is_store_file", "store_files", "trajectory_date"]

FILENAME_TEMPLATE: Final = "{date}-{session_id}.json"
"""The ATIF filename template of the store: the run's UTC start date and the ``agent.run`` UUID."""

STORE_NAME: Final = re.compile(
    r"(?P<date>\d{4}-\d{2}-\d{2})-(?P<id>[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.json")
"""A store file name; nothing else in the directory is ever touched (pruning, listing)."""


def is_store_file(path: Path) -> bool:
    """Whether ``path`` is named like a store file (``<YYYY-MM-DD>-<uuid>.json``)."""
    return STORE_NAME.fullmatch(path.name) is not None


def store_files(directory: Path) -> list[Path]:
    """The store files directly in ``directory``, sorted by name (date, then id); ``[]`` without it."""
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    return sorted(directory / name for name in names if STORE_NAME.fullmatch(name) and (directory / name).is_file())


def trajectory_date(path: Path) -> date:
    """The run's date: from the filename, else the document's ``extra.hermes.trajectory_date``, else
    the file's modification time (UTC)."""
    match = STORE_NAME.fullmatch(path.name)
    if match is not None:
        try:
            return date.fromisoformat(match.group("date"))
        except ValueError:
            pass
    try:
        with open(path, "rb") as fh:
            head = fh.read(1 << 20)
        doc = json.loads(head)
        value = doc["extra"]["hermes"]["trajectory_date"]
        return date.fromisoformat(str(value)[:10])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return datetime.fromtimestamp(path.stat().st_mtime, tz=timezone.utc).date()
