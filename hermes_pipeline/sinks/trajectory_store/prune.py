"""Retention of the store: trajectories older than ``retention_days`` are deleted (spec 06 BOOK-37).

Only files matching the store's naming pattern directly inside the store directory are touched;
the log records counts, never names. Retention acts only on a clock it can trust and never deletes a file
for having been written under a wrong clock (:mod:`hermes_pipeline.export.clock_trust`, whose ledger is
``.retention-clock`` in the store directory): a file goes once both its run date and the first time a
trusted prune saw it are older than the window.

The store's ``definitions/`` sidecar (tool lists and system prompts kept once for all its trajectories,
:mod:`hermes_pipeline.export.definition_files`) is pruned with it: a definition no trajectory file of the
directory refers to any more, and unused for a day (a writer touches each definition it refers to just
before it writes the trajectory), is deleted; one that any file still refers to never is.
"""

from __future__ import annotations

import logging
import re
import time
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Final

from ...export.clock_trust import DAY_S, LEDGER_NAME, BootClock, ClockVerdict, Ledger, boot_clock
from ...export.definition_files import UNUSED_GRACE_S, prune_unreferenced
from .files import store_files, trajectory_date

__all__ = ["parse_age", "prune_definitions", "prune_store", "prune_with_verdict"]

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
                today: date | None = None, now: float | None = None,
                boot: BootClock | None | bool = True) -> list[Path]:
    """Delete (or with ``dry_run`` only list) the store files of runs started more than
    ``older_than_days`` days before now (UTC). ``older_than_days <= 0`` keeps everything.

    ``now`` (epoch seconds; ``today`` is midnight UTC of that day) and ``boot`` (the boot clock,
    :func:`~hermes_pipeline.export.clock_trust.boot_clock` when ``True``) are injectable for tests. On a clock
    that cannot be trusted nothing is deleted (a warning; ``doctor`` reports it). Returns the files deleted (or
    that would be). A file that cannot be deleted is skipped.
    """
    return prune_with_verdict(directory, older_than_days, dry_run=dry_run, today=today, now=now, boot=boot)[0]


def prune_with_verdict(directory: Path, older_than_days: int, *, dry_run: bool = False,
                       today: date | None = None, now: float | None = None,
                       boot: BootClock | None | bool = True) -> tuple[list[Path], ClockVerdict | None]:
    """:func:`prune_store` and the verdict on the clock (``None`` when nothing was judged: retention off)."""
    if older_than_days <= 0:
        return [], None
    if now is None:
        now = (datetime(today.year, today.month, today.day, tzinfo=timezone.utc).timestamp() if today is not None
               else time.time())
    boot_now = boot_clock() if boot is True else boot if boot is not False else None
    window = older_than_days * DAY_S
    cutoff = now - now % DAY_S - window  # midnight UTC of today, less the window: run dates before it expire
    files = store_files(directory)
    if not files and not (directory / LEDGER_NAME).exists():
        return [], None  # nothing to judge, nothing to remember: no ledger in an empty or missing directory
    ledger = Ledger(directory / LEDGER_NAME)
    dated = {path.name: _day_start(path) for path in files}
    if ledger.created:  # a store older than the rule: what is here now is judged by its own date
        ledger.seen = {name: None for name in dated}
    # A vouched file's time: its date, but never after the trusted prune that first saw it (a future date says
    # nothing about the clock that is reading it now).
    vouched = [min(day, ledger.seen[name] or day) for name, day in dated.items()
               if name in ledger.seen and day is not None]
    verdict = ledger.judge(now, max(vouched, default=None), window, boot=boot_now)
    out: list[Path] = []
    if not verdict.trusted:
        ledger.untrusted(verdict, "trajectory store")
    else:
        if ledger.damaged:  # what the ledger knew is lost: everything here is kept a full window from now
            ledger.seen = {name: now for name in dated}
        for path in files:
            day = dated[path.name]
            first = ledger.seen.setdefault(path.name, now)
            stamp = day if day is not None and day <= now + DAY_S else None  # a future date says nothing
            if stamp is None or stamp >= cutoff or (first is not None and now - first <= window):
                continue
            try:
                if not dry_run:
                    path.unlink()
            except OSError:
                continue
            out.append(path)
        if not dry_run:
            for path in out:
                ledger.seen.pop(path.name, None)
            ledger.trusted(now)
            unused = prune_definitions(directory, now)
            if unused:
                logger.info("hermes_pipeline: trajectory store: removed %d definition file(s) no trajectory "
                            "refers to", unused)
    if not dry_run:
        present = {name for name in dated} - {p.name for p in out}
        ledger.seen = {name: first for name, first in ledger.seen.items() if name in present}
        ledger.save()
    if out and not dry_run:
        logger.info("hermes_pipeline: trajectory store: retention removed %d trajectory file(s) older than %d day(s)",
                    len(out), older_than_days)
    return out, verdict


def prune_definitions(directory: Path, now: float, *, grace: float = UNUSED_GRACE_S) -> int:
    """Delete the sidecar definitions no JSON file of ``directory`` refers to and unused for ``grace`` seconds
    before ``now``; how many were deleted (:func:`~hermes_pipeline.export.definition_files.prune_unreferenced`)."""
    return prune_unreferenced(directory, now, grace=grace)


def _day_start(path: Path) -> float | None:
    """Midnight UTC of the run's date (epoch seconds), ``None`` when it cannot be read."""
    try:
        day = trajectory_date(path)
    except OSError:
        return None
    return datetime(day.year, day.month, day.day, tzinfo=timezone.utc).timestamp()
