"""Checks of destination entries (``atof.sinks[]``, ``atif.storage[]``, ``opentelemetry.endpoints[]``...)
shared by the sinks' config statements: an invalid value inside one entry skips only that entry, with
a warning naming the key (the rule that one bad destination never disables the others)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..config.checks import check_keys
from ..config.keypath import KeyPath, format_path
from ..config.policy import ValidationContext
from ..config.suggest import suggestion_of

__all__ = ["check_entry", "table_entries"]


def table_entries(section: Mapping[str, Any], key: str, base: KeyPath,
                  vctx: ValidationContext) -> list[tuple[int, dict[str, Any]]]:
    """``(index, entry)`` of the tables in ``section[key]``; an item that is not a table is reported."""
    items = section.get(key)
    if not isinstance(items, list):
        return []
    out = []
    for index, item in enumerate(items):
        if isinstance(item, dict):
            out.append((index, item))
        else:
            vctx.unsupported_value((*base, key, index), "expected a table")
    return out


def _shown(vctx: ValidationContext, where: KeyPath) -> str:
    """``where`` as the user wrote it: with the section's name when ``vctx`` is a section's."""
    section = getattr(vctx, "section", None)
    return format_path((section, *where) if isinstance(section, str) else where)


def check_entry(vctx: ValidationContext, path: KeyPath, entry: dict[str, Any], spec: Mapping[str, Any],
                required: tuple[str, ...], extra: list[tuple[KeyPath, str]] | None = None) -> bool:
    """Check one destination entry against ``spec``; skip it (and return ``False``) on any invalid value."""
    problems = check_keys(vctx, path, entry, spec, invalid="collect") + list(extra or [])
    problems += [((*path, key), f"'{key}' is required") for key in required if key not in entry]
    headers = {k.lower() for k in entry.get("headers", {})} if isinstance(entry.get("headers"), dict) else set()
    env = {k.lower() for k in entry.get("header_env", {})} if isinstance(entry.get("header_env"), dict) else set()
    if headers & env:
        problems.append(((*path, "header_env"), "a header appears in both 'headers' and 'header_env'"))
    if problems:
        where, message = problems[0]
        vctx.skip_entry(path, f"{_shown(vctx, where)}: {message}", suggestion=suggestion_of(message), at=where)
        return False
    return True
