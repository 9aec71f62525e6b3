"""The query parameters of the list pages, checked strictly before any query runs.

A list URL (``/runs?since=2026-12-01&outcome=failed&page=3``) is a bookmark: the same URL shows the
same rows. Every parameter has one accepted form; anything else (an unknown name, a repeated name, a
malformed value) is a :class:`BadParameter` that the server answers with a 400 page naming the
parameter, never a silently ignored filter that would show more rows than the user asked for. The
values only ever reach SQL as bound parameters.
"""

from __future__ import annotations

import calendar
import re
import time
from dataclasses import dataclass, fields, replace
from typing import Any, Final
from urllib.parse import parse_qsl, urlencode

__all__ = ["BadParameter", "ListQuery", "PAGE_SIZE", "parse_query", "time_range"]

PAGE_SIZE: Final = 50
"""Rows on one page of a list."""
MAX_PAGE: Final = 100_000
OUTCOMES: Final = ("success", "failed", "cancelled", "timed_out", "unknown")
"""The outcomes of ``task_runs`` (the store's CHECK constraint)."""
_NAME: Final = re.compile(r"[^\x00-\x1f\x7f]{1,128}")
"""A model, skill, tool or error-type name: up to 128 printable characters (any the store may hold: an
error type like ``(not recorded)``, a scrubbed name with its marker); only ever a bound SQL parameter."""
_TIME: Final = re.compile(r"(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?)?Z?")
_RELATIVE: Final = re.compile(r"(\d{1,4})([hd])")
MAX_Q: Final = 200


class BadParameter(ValueError):
    """A query parameter the page does not accept: ``name`` and ``reason`` are shown on the 400 page."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(f"query parameter {name!r}: {reason}")
        self.name = name
        self.reason = reason


@dataclass(frozen=True)
class ListQuery:
    """The filters and the page of a list (``None``: not filtered). Times are store timestamps (UTC text)."""

    since: str | None = None
    until: str | None = None
    outcome: str | None = None
    model: str | None = None
    skill: str | None = None
    tool: str | None = None
    error: str | None = None
    q: str | None = None
    page: int = 1

    @property
    def until_before(self) -> str | None:
        """The exclusive upper bound of ``until``: the second after it, so that ``until`` covers its whole
        last second (a row stamped ``23:59:59.7`` is in ``until=…T23:59:59``); ``None`` when not set."""
        if self.until is None:
            return None
        epoch = calendar.timegm(time.strptime(self.until, "%Y-%m-%d %H:%M:%S"))
        return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(epoch + 1))

    @property
    def offset(self) -> int:
        """Rows before this page."""
        return (self.page - 1) * PAGE_SIZE

    def url(self, path: str, **changes: object) -> str:
        """The bookmarkable URL of this query on ``path`` with ``changes`` (``page=2``) applied; parameters
        in a fixed order, the default page left out."""
        query = replace(self, **changes)  # type: ignore[arg-type]
        pairs = [(f.name, str(getattr(query, f.name))) for f in fields(query)
                 if getattr(query, f.name) is not None and not (f.name == "page" and query.page == 1)]
        return path + ("?" + urlencode(pairs) if pairs else "")

    def active(self) -> list[tuple[str, str]]:
        """The filters set, as ``(name, value)`` pairs (the page says what it shows)."""
        return [(f.name, str(getattr(self, f.name))) for f in fields(self)
                if f.name != "page" and getattr(self, f.name) is not None]


def _time(name: str, value: str, now: float) -> str:
    """A store timestamp from ``2026-12-01``, ``2026-12-01T10:00[:00][Z]`` (UTC) or ``24h`` / ``7d`` (ago).
    What a value leaves out is its start for ``since`` and its end for ``until`` (``until=2026-12-01`` is the
    whole day: ``2026-12-01 23:59:59``; ``until=…T10:00`` the whole minute)."""
    rel = _RELATIVE.fullmatch(value)
    if rel:
        amount = int(rel.group(1)) * (3600 if rel.group(2) == "h" else 86400)
        return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(now - amount))
    match = _TIME.fullmatch(value)
    if not match:
        raise BadParameter(name, "expected a UTC date or time (2026-12-01, 2026-12-01T10:00:00Z) or an age "
                                 "(24h, 7d)")
    last = (23, 59, 59) if name == "until" else (0, 0, 0)
    given = match.groups()
    parts = [int(p) if p else (last[i - 3] if i >= 3 else 0) for i, p in enumerate(given)]
    if given[3] is not None and given[5] is None:
        parts[5] = last[2]  # a minute given: its seconds
    try:
        epoch = calendar.timegm((parts[0], parts[1], parts[2], parts[3], parts[4], parts[5], 0, 0, 0))
        check = time.gmtime(epoch)
    except (OverflowError, ValueError) as exc:
        raise BadParameter(name, "not a valid date") from exc
    if (check.tm_year, check.tm_mon, check.tm_mday, check.tm_hour, check.tm_min, check.tm_sec) != tuple(parts):
        raise BadParameter(name, "not a valid date or time")
    return time.strftime("%Y-%m-%d %H:%M:%S", check)


def parse_query(raw: str, allowed: tuple[str, ...], now: float | None = None) -> ListQuery:
    """The :class:`ListQuery` of a URL's query string, accepting only the names in ``allowed`` (and
    ``page``).

    Raises:
        BadParameter: an unknown or repeated name, or a value of the wrong form.
    """
    now = time.time() if now is None else now
    try:
        pairs = parse_qsl(raw, keep_blank_values=True, strict_parsing=bool(raw), max_num_fields=20)
    except ValueError as exc:
        raise BadParameter("(query string)", "malformed or too many fields") from exc
    seen: dict[str, str] = {}
    for name, value in pairs:
        if name not in allowed and name != "page":
            raise BadParameter(name[:40] or "(empty name)", f"unknown here; this page accepts {', '.join((*allowed, 'page'))}")
        if name in seen:
            raise BadParameter(name, "given more than once")
        seen[name] = value
    values: dict[str, object] = {}
    for name, value in seen.items():
        if value == "":
            continue  # an empty form field: no filter
        if name in ("since", "until"):
            values[name] = _time(name, value, now)
        elif name == "page":
            if not value.isdigit() or not 1 <= int(value) <= MAX_PAGE:
                raise BadParameter("page", f"expected a whole number from 1 to {MAX_PAGE}")
            values[name] = int(value)
        elif name == "outcome":
            if value not in OUTCOMES:
                raise BadParameter("outcome", f"expected one of {', '.join(OUTCOMES)}")
            values[name] = value
        elif name == "q":
            if len(value) > MAX_Q or any(ord(c) < 32 for c in value):
                raise BadParameter("q", f"at most {MAX_Q} printable characters")
            values[name] = value
        else:
            if not _NAME.fullmatch(value):
                raise BadParameter(name, "expected a name of at most 128 printable characters")
            values[name] = value
    query = ListQuery(**values)  # type: ignore[arg-type]
    if query.since and query.until and query.since > query.until:
        raise BadParameter("until", "is before since")
    return query


def time_range(query: ListQuery, column: str) -> tuple[list[str], list[Any]]:
    """The ``WHERE`` terms and parameters of ``query``'s ``since`` / ``until`` on ``column`` (both bounds
    inclusive: ``until`` up to its :attr:`~ListQuery.until_before`), for every paged list."""
    where: list[str] = []
    params: list[Any] = []
    if query.since:
        where.append(f"{column} >= ?")
        params.append(query.since)
    if query.until:
        where.append(f"{column} < ?")
        params.append(query.until_before)
    return where, params

