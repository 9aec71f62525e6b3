"""Writing rows: lifecycle changes with hashes and versions, memory writes, rescans (BOOK-19, BOOK-22).

:class:`Recorder` owns the database connection and the scan state of one profile's store. It is
used from one thread (the sink's writer); :meth:`commit` writes everything it was given since the
last commit in one transaction, under the inter-process scan lock, then saves the scan state.
When another process holds the database past the busy timeout, the rows and the new state stay
pending and the next commit writes them first (nothing recorded is lost).
"""

from __future__ import annotations

import logging
import os
import sqlite3
from collections.abc import Iterable
from pathlib import Path, PurePosixPath
from typing import Any, Final

from ...engine.scrub import safe_scrub
from ...shared_metrics.locks import file_lock
from . import db
from .rows import Item, MemoryWrite, SkillChange
from .scan import (STATE_NAME, ScanState, diff_memory, diff_skills, excerpt, memory_files, read_memory, sha256_file,
                   skill_files, state_key)
from .schema import sqlite_utc

logger: Final = logging.getLogger("hermes_pipeline.sinks.observability_store")

SCAN_SKILLS: Final = "scan_skills"
SCAN_MEMORY: Final = "scan_memory"
PRUNE: Final = "prune"
SCAN_FINAL: Final = "scan_final"


class Recorder:
    """The store of one profile (see the module docstring).

    Args:
        home: ``$HERMES_HOME``.
        memory_dirs: memory directories relative to ``home`` (``["memories"]``).
        skills_dir: the skills directory relative to ``home`` (``skills``).
        excerpt_chars: the longest excerpt, in code points (500).
        runs_days, history_days: the retention of run rows and of histories (BOOK-48; 0 keeps them).
    """

    def __init__(self, home: Path, *, memory_dirs: Iterable[str] = ("memories",), skills_dir: str = "skills",
                 excerpt_chars: int = 500, runs_days: int = 90, history_days: int = 365) -> None:
        self.home = Path(home)
        self.path = db.store_path(self.home)
        self.memory_dirs = list(memory_dirs)
        self.skills_dir = skills_dir
        self.excerpt_chars = excerpt_chars
        self.runs_days = runs_days
        self.history_days = history_days
        self.pruned = 0
        self._candidates: dict[str, str] = {}
        """Memory files a scan found changed, not yet confirmed → their hash then (see :meth:`_scan_memory`)."""
        self.state_path = self.path.with_name(STATE_NAME)
        self.lock_path = self.path.with_name(".scan.lock")
        self._conn: sqlite3.Connection | None = None
        self._items: list[Item] = []
        self._warned_dirs: set[str] = set()
        self.rows_written = 0
        self.busy_retries = 0
        self.busy_ms: int | None = None
        """The busy timeout of the connection when not the default (:meth:`wait_at_most`)."""
        self.busy_error: db.StoreBusy | None = None
        """Why the last :meth:`commit` returned ``False`` (the lock held past the busy timeout)."""
        self.probe: Any = None
        """A :class:`~.probe.SkillHashProbe` with the hashes taken at event time (else hashed when written)."""

    def connection(self) -> sqlite3.Connection:
        """The open connection (opened, and the schema ensured, on first use)."""
        if self._conn is None:
            self._conn = db.connect(self.path)
            if self.busy_ms is not None:
                self._conn.execute(f"PRAGMA busy_timeout = {int(self.busy_ms)}")
        return self._conn

    def wait_at_most(self, seconds: float) -> None:
        """Wait at most ``seconds`` for another process's write lock from now on (the last writes before
        a close must end by the close's deadline)."""
        self.busy_ms = max(0, int(seconds * 1000))
        if self._conn is not None:
            self._conn.execute(f"PRAGMA busy_timeout = {self.busy_ms}")

    def add(self, items: Iterable[Item]) -> None:
        """Queue items for the next :meth:`commit`."""
        self._items.extend(items)

    @property
    def pending(self) -> int:
        """Items not committed yet."""
        return len(self._items)

    @property
    def pending_rows(self) -> int:
        """Rows among the items not committed yet (scan requests are not rows)."""
        return sum(1 for item in self._items if not isinstance(item, str))

    def commit(self) -> bool:
        """Write the queued items in one transaction; ``False`` (items kept) when the database stayed busy."""
        if not self._items:
            return True
        conn = self.connection()
        with file_lock(self.lock_path):
            state = ScanState.load(self.state_path)
            try:
                with db.transaction(conn):
                    written = sum(self._apply(conn, state, item) for item in self._items)
            except db.StoreBusy as exc:
                self.busy_retries += 1
                self.busy_error = exc
                return False
            try:
                state.save(self.state_path)
            except OSError as exc:  # the rows are in; the next scan may report an edit twice at worst
                logger.warning("hermes_pipeline: observability store: cannot save %s: %s", self.state_path,
                               exc.strerror or exc, extra={"event": "observability_scan_state_unwritable"})
        self._items.clear()
        self.rows_written += written
        return True

    def discard(self, count: int | None = None) -> int:
        """Drop the ``count`` oldest queued items (all with ``None``); how many of them were rows (scan
        requests are not rows: the next scan finds what they would have)."""
        count = len(self._items) if count is None else max(0, min(count, len(self._items)))
        dropped, self._items = self._items[:count], self._items[count:]
        return sum(1 for item in dropped if not isinstance(item, str))

    def close(self) -> None:
        """Close the connection (queued items are kept for nobody: call :meth:`commit` first)."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    # ------------------------------------------------------------------ one item (inside the transaction)

    def _apply(self, conn: sqlite3.Connection, state: ScanState, item: Item) -> int:
        if isinstance(item, tuple):
            table, values = item
            columns = ", ".join(values)
            conn.execute(f"INSERT INTO {table} ({columns}) VALUES ({', '.join('?' * len(values))})",
                         tuple(values.values()))
            return 1
        if isinstance(item, SkillChange):
            return self._skill_change(conn, state, item)
        if isinstance(item, MemoryWrite):
            return self._memory_write(conn, state, item)
        if item in (SCAN_SKILLS, "scan_all"):
            count = self._scan_skills(conn, state)
            return count + (self._scan_memory(conn, state) if item == "scan_all" else 0)
        if item in (SCAN_MEMORY, "turn_ended"):
            return self._scan_memory(conn, state, defer=True)
        if item == SCAN_FINAL:  # every event is in: what is still unexplained is the user's
            return self._scan_memory(conn, state)
        if item == PRUNE:
            from .retention import delete_expired

            self.pruned += sum(delete_expired(conn, self.runs_days, self.history_days).values())
        return 0

    def _skill_row(self, conn: sqlite3.Connection, values: dict[str, Any]) -> None:
        version = conn.execute("SELECT COALESCE(MAX(version), 0) + 1 FROM skill_history WHERE skill_name = ?",
                               (values["skill_name"],)).fetchone()[0]
        values["version"] = version
        conn.execute(f"INSERT INTO skill_history ({', '.join(values)}) VALUES ({', '.join('?' * len(values))})",
                     tuple(values.values()))

    def _skill_change(self, conn: sqlite3.Connection, state: ScanState, change: SkillChange) -> int:
        known, after = self.probe.take(change.skill_name) if self.probe is not None else (False, None)
        if not known:
            after = sha256_file(self.home / self.skills_dir / change.skill_name / "SKILL.md")
        key = state_key(change.skill_name)
        before = None if change.change_type == "create" else state.skills.get(key)
        provenance = change.provenance
        if provenance is None:  # a patch does not repeat where the skill came from: the last row knows
            last = conn.execute("SELECT provenance FROM skill_history WHERE skill_name = ? ORDER BY version DESC "
                                "LIMIT 1", (change.skill_name,)).fetchone()
            provenance = last[0] if last else None
        if after is None:
            state.skills.pop(key, None)
        else:
            state.skills[key] = after
        self._skill_row(conn, {"skill_name": change.skill_name, "change_type": change.change_type,
                               "reason": change.reason, "trigger_session_id": change.session_id,
                               "before_hash": before, "after_hash": after, "changed_at": change.changed_at,
                               "hermes_action": change.action, "provenance": provenance})
        return 1

    def _scan_skills(self, conn: sqlite3.Connection, state: ScanState) -> int:
        current = skill_files(self.home, self.skills_dir)
        rows = 0
        if state.initialised:
            for raw_name, before, after in diff_skills(state, current):
                name = safe_scrub(raw_name)  # a directory name on disk: scrubbed where it enters the store
                last = conn.execute("SELECT provenance FROM skill_history WHERE skill_name = ? ORDER BY version DESC "
                                    "LIMIT 1", (name,)).fetchone()
                self._skill_row(conn, {"skill_name": name, "change_type": "refine", "reason": None,
                                       "trigger_session_id": None, "before_hash": before, "after_hash": after,
                                       "changed_at": sqlite_utc(), "hermes_action": "external_edit",
                                       "provenance": last[0] if last else "unknown"})
                rows += 1
        state.skills = {state_key(name): digest for name, digest in current.items()}
        return rows

    def _memory_rel(self, write: MemoryWrite) -> str | None:
        if write.file_name is not None:
            return (PurePosixPath(self.memory_dirs[0] if self.memory_dirs else "memories") / write.file_name).as_posix()
        raw = Path(os.path.expanduser(write.path_arg or ""))
        target = raw if raw.is_absolute() else self.home / raw
        try:
            rel = Path(os.path.normpath(target)).relative_to(os.path.normpath(self.home))
        except ValueError:
            return None  # outside the profile: never an absolute path in the table
        return rel.as_posix()

    def _memory_write(self, conn: sqlite3.Connection, state: ScanState, write: MemoryWrite) -> int:
        rel = self._memory_rel(write)
        if rel is None:
            return 0
        conn.execute("INSERT INTO memory_changes (file_path, change_type, actor, trigger_session_id, before_excerpt, "
                     "after_excerpt, reason, changed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                     (rel, write.change_type, write.actor, write.session_id,
                      excerpt(write.before, self.excerpt_chars) if write.change_type != "add" else None,
                      excerpt(write.after, self.excerpt_chars) if write.change_type != "delete" else None,
                      write.reason, write.changed_at))
        self._candidates.pop(rel, None)  # what a scan saw changing in this file was this write
        digest, text = read_memory(self.home / rel)  # the tool's write is explained: the next scan starts here
        if digest is None:
            state.memory.pop(state_key(rel), None)
        else:
            state.memory[state_key(rel)] = {"sha256": digest, "text": text}
        return 1

    def _scan_memory(self, conn: sqlite3.Connection, state: ScanState, *, defer: bool = False) -> int:
        """Rows for out-of-band memory changes. With ``defer`` (scans while the agent runs) a change is only
        a candidate until the next scan still finds it: the writer runs behind the agent, so a file a memory
        tool is writing right now looks changed before that tool's write reaches the store, and would
        otherwise be reported as the user's. A tool write to the file in between drops the candidate."""
        diffs, new_state = diff_memory(state, memory_files(self.home, self.memory_dirs, self._warned_dirs))
        now = sqlite_utc()
        written = 0
        for diff in diffs:
            current = new_state.get(diff.key, {}).get("sha256", "-")
            if defer and self._candidates.get(diff.file_path) != current:
                self._candidates[diff.file_path] = current  # seen once: confirmed (or dropped) later
                if diff.key in state.memory:
                    new_state[diff.key] = state.memory[diff.key]
                else:
                    new_state.pop(diff.key, None)
                continue
            self._candidates.pop(diff.file_path, None)
            conn.execute("INSERT INTO memory_changes (file_path, change_type, actor, trigger_session_id, "
                         "before_excerpt, after_excerpt, reason, changed_at) VALUES (?, ?, 'user-direct', NULL, ?, ?, "
                         "NULL, ?)",
                         (safe_scrub(diff.file_path), diff.change_type,
                          excerpt(diff.before, self.excerpt_chars) if diff.change_type != "add" else None,
                          excerpt(diff.after, self.excerpt_chars) if diff.change_type != "delete" else None, now))
            written += 1
        changed = {d.file_path for d in diffs}
        for rel in [r for r in self._candidates if r not in changed]:
            del self._candidates[rel]  # changed back, or explained since
        state.memory = new_state
        state.initialised = True
        return written
