"""The chapter's queries, shipped verbatim in ``queries.sql`` (BOOK-20, BOOK-23, BOOK-24).

:func:`query` returns the text of one query by its id (``Q-S1`` ... ``Q-M2``, and ``Q-C1`` / ``Q-C2``
for the memory conflicts), exactly as the file holds it, so the CLI runs the same statements a
reader types into the ``sqlite3`` shell; :func:`run` executes one with named parameters.
"""

from __future__ import annotations

import functools
import re
import sqlite3
from importlib import resources
from typing import Any, Final

QUERY_IDS: Final = ("Q-S1", "Q-S2", "Q-S3", "Q-S4", "Q-M1", "Q-M2", "Q-C1", "Q-C2")
_HEADER: Final = re.compile(r"^-- (Q-[A-Z]\d+):")


def sql_text() -> str:
    """The whole ``queries.sql``."""
    return resources.files(__package__).joinpath("queries.sql").read_text(encoding="utf-8")


@functools.cache
def queries() -> dict[str, str]:
    """``query id → statement`` (the header comment included, as in the file)."""
    out: dict[str, list[str]] = {}
    current: str | None = None
    for line in sql_text().splitlines():
        match = _HEADER.match(line)
        if match:
            current = match.group(1)
            out[current] = [line]
        elif current is not None:
            if not line.strip():
                current = None
                continue
            out[current].append(line)
    return {name: "\n".join(lines) + "\n" for name, lines in out.items()}


def query(name: str) -> str:
    """The statement ``name``; ``KeyError`` for an unknown id."""
    return queries()[name]


def run(conn: sqlite3.Connection, name: str, **params: Any) -> list[dict[str, Any]]:
    """Rows of query ``name`` as dicts (column name → value)."""
    cursor = conn.execute(query(name), params)
    columns = [d[0] for d in cursor.description or ()]
    return [dict(zip(columns, row)) for row in cursor.fetchall()]
