"""Which skills and memory files have changes the store knows it did not record, as a rescan asks about them.

The failure record (:mod:`.failures`, ``write-failures.json``) names them under ``unrecorded``: those whose rows
were given up (``pid`` 0), and those whose rows wait for a retry in a process (its ``pid``; they count as lost
once that process is gone without writing them); the whole kind (:data:`~.failures.ANY_SKILL`,
:data:`~.failures.ANY_MEMORY`) when which ones is not known. A rescan that finds such a skill or file changed
records the change as not attributed, saying why (:class:`Unrecorded`), instead of blaming the user; the entries
go once a rescan has looked (:func:`forget_unrecorded`).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from .failures import ANY_MEMORY, ANY_SKILL, failures_path, read_failures_file, write_record

__all__ = ["Unrecorded", "forget_unrecorded"]


def _counts(entry: Any, own_pid: int) -> bool:
    """Whether an ``unrecorded`` entry stands for rows that will never be written: given up, or waiting in a
    process (not this one) that is gone."""
    from .inflight import process_alive

    if not isinstance(entry, Mapping):
        return False
    pid = entry.get("pid")
    if pid == 0:
        return True
    return isinstance(pid, int) and pid != own_pid and pid > 0 and not process_alive(pid)


class Unrecorded:
    """The skills and memory files whose changes the store knows it did not record, as a rescan asks about them
    (see the module docstring).

    Args:
        record: the failure record (:func:`read_failures_file`).
        own_pid: this process (its own waiting rows are not lost: they are being written).
    """

    def __init__(self, record: Mapping[str, Any], own_pid: int | None = None) -> None:
        own = os.getpid() if own_pid is None else own_pid
        listed = record.get("unrecorded")
        self.entries: dict[str, str] = {}
        if isinstance(listed, Mapping):
            self.entries = {str(k): str(v.get("at") or "") for k, v in listed.items() if _counts(v, own)}
            self.own = any(isinstance(v, Mapping) and v.get("pid") == own for v in listed.values())
        else:  # a record of an earlier version: rows lost while it failed, which ones is not known
            self.own = False
            if record.get("failing_since") and _rows_lost(record):
                self.entries = {ANY_SKILL: str(record["failing_since"]), ANY_MEMORY: str(record["failing_since"])}
        self.failure = str(record.get("last_reason") or "writes failed")[:80]
        self.used: set[str] = set()
        """Entries a rescan looked at (:meth:`why`, :meth:`looked`): they go once its results are committed."""

    def why(self, key: str) -> str | None:
        """Why a change of ``key`` (``skill:<name>``, ``memory:<path>``) found now cannot be attributed, ``None``
        when nothing of it was lost."""
        from .scan import state_key

        name = state_key(key)
        wild = ANY_MEMORY if key.startswith("memory:") else ANY_SKILL
        found = name if name in self.entries else wild if wild in self.entries else None
        if found is None:
            return None
        self.used.add(found)
        what = "memory file" if key.startswith("memory:") else "skill"
        return (f"not attributed: the store lost changes of this {what} it could not write (since "
                f"{self.entries[found] or 'unknown'}; {self.failure}); this change may be the agent's")

    def looked(self, kind: str, skip: Collection[str] = ()) -> None:
        """A full rescan of ``kind`` (``skill`` or ``memory``) is in: every lost entry of that kind is answered, but
        those of ``skip`` (keys it left for a later rescan)."""
        from .scan import state_key

        wild = ANY_MEMORY if kind == "memory" else ANY_SKILL
        left = {state_key(k) for k in skip}
        self.used.update(k for k in self.entries if k not in left and (k == wild or k.startswith((f"{kind}:",
                                                                                                   "sha256:"))))

    @property
    def pending(self) -> bool:
        """Whether the record needs rewriting once the rows are in (entries answered, or this process's own)."""
        return bool(self.used) or self.own


def _rows_lost(record: Mapping[str, Any]) -> bool:
    kinds = record.get("kinds")
    return isinstance(kinds, Mapping) and any(isinstance(v, Mapping) and int(v.get("rows_lost", 0) or 0) > 0
                                              for v in kinds.values())


def forget_unrecorded(store: Path, used: Collection[str], own_pid: int | None = None) -> None:
    """Drop from the record beside ``store`` the entries a committed rescan answered (``used``) and this process's
    own waiting ones (its rows are in). The caller holds the store's scan lock. Best effort."""
    own = os.getpid() if own_pid is None else own_pid
    path = failures_path(store)
    record = read_failures_file(path)
    listed = record.get("unrecorded")
    entries = dict(listed) if isinstance(listed, Mapping) else {}
    kept = {k: v for k, v in entries.items() if k not in used and not (isinstance(v, Mapping) and v.get("pid") == own)}
    if not record or (isinstance(listed, Mapping) and kept == entries):
        return
    record["unrecorded"] = kept
    with contextlib.suppress(OSError):
        write_record(path, record)
