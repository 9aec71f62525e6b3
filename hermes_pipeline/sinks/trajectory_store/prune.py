"""Retention of the store: trajectories older than ``retention_days`` are deleted (spec 06 BOOK-37).

Only files matching the store's naming pattern directly inside the store directory are touched;
the log records counts, never names.
"""

from __future__ import annotations

import logging
import re
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Final

from .files import store_files, trajectory_date

__all__ = ["parse_age", "prune_store"]

logger: Final = logging.getLogger("hermes_pipeline.sinks.trajectory_store")
_AGE: Final = re.compile(r"\s*(\d+)\s*([dhw]?)\s*")


def parse_age(text: str) -> int:
    """Days in ``90d``, ``12w`` or a bare ``90`` (days).

    Raises:
        ValueError: not of that form.
    """
    match = _AGE.fullmatch(text)
    if match is None:
        raise ValueError(f"expected an age such as '90d' or '12w', not {text!r}")
    number, unit = int(match.group(1)), match.group(2) or "d"
    if unit == "h":
        raise ValueError(f"ages are whole days ('90d', '12w'), not hours: {text!r}")
    return number * (7 if unit == "w" else 1)


def prune_store(directory: Path, older_than_days: int, *, dry_run: bool = False,
                today: date | None = None) -> list[Path]:
    """Delete (or with ``dry_run`` only list) the store files of runs started more than
    ``older_than_days`` days before ``today`` (UTC). ``older_than_days <= 0`` keeps everything.

    Returns the files deleted (or that would be). A file that cannot be deleted is skipped.
    """
    if older_than_days <= 0:
        return []
    today = today or datetime.now(timezone.utc).date()
    cutoff = today - timedelta(days=older_than_days)
    out: list[Path] = []
    for path in store_files(directory):
        try:
            if trajectory_date(path) >= cutoff:
                continue
            if not dry_run:
                path.unlink()
        except OSError:
            continue
        out.append(path)
    if out and not dry_run:
        logger.info("hermes_pipeline: trajectory store: retention removed %d trajectory file(s) older than %d day(s)",
                    len(out), older_than_days)
    return out
