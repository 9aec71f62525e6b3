"""Timestamps as the stores write them: SQLite's ``YYYY-MM-DD HH:MM:SS`` in UTC (spec 06 BOOK-17), shared by the
rows derived from scope events (:mod:`.task_runs`, :mod:`.decisions`) and the observability store."""

from __future__ import annotations

import time

__all__ = ["sqlite_utc"]


def sqlite_utc(timestamp_us: int | None = None) -> str:
    """``YYYY-MM-DD HH:MM:SS`` in UTC (BOOK-17) of epoch microseconds (now when ``None``)."""
    seconds = time.time() if timestamp_us is None else timestamp_us / 1_000_000
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(seconds))
