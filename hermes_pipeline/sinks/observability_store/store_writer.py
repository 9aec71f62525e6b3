"""Writing rows: lifecycle changes with hashes and versions, memory writes, rescans (BOOK-19, BOOK-22).

Skill rows are :mod:`.skill_history`; a memory tool call is parsed and replayed on the file by
:mod:`~hermes_pipeline.export.memory_changes` (one row per operation that changed an entry), a rescan's
memory rows are one per entry changed too (:mod:`.scan`); who wins when a rescan and a tool write see
the same change, in any process, is :mod:`.attribution`.

:class:`StoreWriter` owns the database connection and the scan state of one profile's store. It is
used from one thread (the sink's writer); :meth:`commit` writes everything it was given since the
last commit in one transaction, under the inter-process scan lock, then saves the scan state.
When another process holds the database past the busy timeout, or the transaction fails (a full
disk, a read-only file, an I/O error), the rows and the new state stay pending and the next commit
writes them first (nothing recorded is lost). What the probes saw of each change at the time of the
event (:mod:`.skill_probe`, :mod:`.memory_probe`) is taken from them *before* the transaction and stays with the
pending item until its rows are committed, so a retried row has the hashes and entries of its own moment, never the files
as they are at the retry.

A memory tool call's rows start with what changed in the file before the call that no write explains
(a hand edit made while Hermes runs): ``user-direct`` rows, one per entry, as a rescan would write them,
then the call's own rows. A change the store knows it lost the rows of (:class:`~.unrecorded.Unrecorded`) is
no user's: its rows have no actor and say why in ``reason``.

Over 400 lines on purpose: one class holds the connection, the scan state and the pending items of one
transaction, and the memory rows are written inside that transaction with the state they update.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

from ...engine.scrub import safe_scrub
from ...export.locks import FileLockTimeout, file_lock
from . import attribution, db, skill_history, skill_tree, staged
from ...export.memory_changes import parse_operations, replay
from .failures import failures_path, read_failures_file
from .unrecorded import Unrecorded, forget_unrecorded
from .inflight import INFLIGHT_DIR, inflight_files, inflight_skills
from .memory_probe import FileSeen, ToolMemoryChange, memory_rel, read_file
from ...export.task_runs import Item, MemoryWrite, SkillChange
from .scan import STATE_NAME, ScanState, diff_memory, excerpt, file_diff, memory_files, memory_state
from .schema import sqlite_utc

logger: Final = logging.getLogger("hermes_pipeline.sinks.observability_store")

SCAN_SKILLS: Final = "scan_skills"
SCAN_MEMORY: Final = "scan_memory"
PRUNE: Final = "prune"
SCAN_FINAL: Final = "scan_final"
MAX_HELD_BYTES: Final = 64 << 20
"""At most this many bytes of skill files are held with pending changes for their kept texts (the hashes always
are): beyond, a version held through a long outage keeps no text of its own."""


class StoreWriter:
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
        self.skill_roots = skill_tree.SkillRoots(home, skills_dir)
        """The profile's skills directories, its ``skills.external_dirs`` included (Hermes' order)."""
        self.excerpt_chars = excerpt_chars
        self.runs_days = runs_days
        self.history_days = history_days
        self.pruned = 0
        self.blobs_swept = 0
        """Kept texts deleted by the sweeps after this writer's prunes (:mod:`.blob_sweep`)."""
        self._sweep_due = False
        self._candidates: dict[str, str] = {}
        """Memory files a scan found changed, not yet confirmed → their hash then (see :meth:`_scan_memory`)."""
        self.state_path = self.path.with_name(STATE_NAME)
        self.lock_path = self.path.with_name(".scan.lock")
        self._conn: sqlite3.Connection | None = None
        self._items: list[Item] = []
        self._ended: list[str] = []
        """Tool calls whose in-flight marks go once this commit is in (:mod:`.skill_probe`, :mod:`.memory_probe`)."""
        self._skills_ended: list[str] = []
        self._seen: dict[int, Any] = {}
        """``id(item)`` → what the probes saw of a pending item, kept until its rows are committed."""
        self._held_bytes = 0
        self._lost: set[str] = set()
        """Skills and memory files (scan state keys) of rows given up since :meth:`take_unrecorded`."""
        self.unrecorded = Unrecorded({})
        """The changes the store knows it lost (:mod:`.failures`), read at each commit."""
        self._warned_dirs: set[str] = set()
        self.rows_written = 0
        self.busy_retries = 0
        self.busy_ms: int | None = None
        """The busy timeout of the connection when not the default (:meth:`wait_at_most`)."""
        self.busy_error: db.StoreBusy | None = None
        """Why the last :meth:`commit` returned ``False`` (the lock held past the busy timeout)."""
        self.probe: Any = None
        """A :class:`~.skill_probe.SkillHashProbe` with the hashes taken at event time (else hashed when written)."""
        self.memory_probe: Any = None
        """A :class:`~.memory_probe.MemoryProbe` with the memory files as they were around each tool call."""

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

    def _prepare(self) -> None:
        """Take from the probes what they saw of each pending item not taken yet (outside the transaction: it stays
        with the item through failed attempts)."""
        for item in self._items:
            if id(item) in self._seen:
                continue
            if isinstance(item, SkillChange):
                seen = self.probe.take(item.skill_name, item.session_id) if self.probe is not None else None
                if seen is not None:  # bytes held for kept texts, within a bound while writes keep failing
                    size = sum(len(b) for b in seen.texts.values())
                    if self._held_bytes + size > MAX_HELD_BYTES:
                        seen.texts = {}
                    self._held_bytes += sum(len(b) for b in seen.texts.values())
                self._seen[id(item)] = seen
            elif isinstance(item, MemoryWrite):
                self._seen[id(item)] = self.memory_probe.take(item.tool_call_id) \
                    if self.memory_probe is not None and item.tool_call_id else ({}, {})

    def _keys(self, item: Item) -> set[str]:
        """The skills and memory files (``skill:<name>``, ``memory:<path>``) a pending item's rows are about."""
        if isinstance(item, SkillChange):
            seen = self._seen.get(id(item))
            return {f"skill:{item.skill_name}", *(f"skill:{n}" for n in getattr(seen, "nested", {}))}
        if isinstance(item, MemoryWrite) and item.succeeded:
            rels = {memory_rel(self.home, self.memory_dirs, op.file_name, op.path_arg)
                    for op in parse_operations(item.tool, item.arguments)}
            return {f"memory:{rel}" for rel in rels if rel is not None}
        if isinstance(item, ToolMemoryChange):
            return {f"memory:{rel}" for rel in item.after}
        return set()

    def pending_keys(self) -> set[str]:
        """The skills and memory files the pending items' rows are about (lost if this process ends first)."""
        out: set[str] = set()
        for item in list(self._items):
            out |= self._keys(item)
        return out

    def take_unrecorded(self) -> set[str]:
        """The skills and memory files of the rows given up (:meth:`discard`) since the last call."""
        lost, self._lost = self._lost, set()
        return lost

    def commit(self) -> bool:
        """Write the queued items in one transaction; ``False`` (items kept) when the database stayed busy."""
        if not self._items:
            return True
        self._prepare()
        conn = self.connection()
        try:
            held = file_lock(self.lock_path, timeout=(db.BUSY_MS if self.busy_ms is None else self.busy_ms) / 1000)
            held.__enter__()
        except FileLockTimeout as exc:  # a peer holds the scan lock (hung, or on a home that stopped answering)
            self.busy_retries += 1
            self.busy_error = db.StoreBusy(f"the store's scan lock stayed held by another process past {exc.waited:g} s"
                                           "; try again")
            return False
        with contextlib.ExitStack() as stack:
            stack.push(held)
            state = ScanState.load(self.state_path)
            state.rehydrate(skill_tree.all_skills(self.skill_roots),
                            memory_files(self.home, self.memory_dirs, self._warned_dirs))
            self.unrecorded = Unrecorded(read_failures_file(failures_path(self.path)))
            self._ended.clear()
            self._skills_ended.clear()
            try:
                with db.transaction(conn):
                    written = sum(self._apply(conn, state, item) for item in self._items)
            except db.StoreBusy as exc:
                self.busy_retries += 1
                self.busy_error = exc
                return False
            saved = True
            try:
                state.save(self.state_path)
            except OSError as exc:  # the rows are in; the next scan may report an edit twice at worst
                saved = False
                logger.warning("hermes_pipeline: observability store: cannot save %s: %s", self.state_path,
                               exc.strerror or exc, extra={"event": "observability_scan_state_unwritable"})
            if self.unrecorded.pending:  # the lost changes a rescan answered, and this process's own: in now
                forget_unrecorded(self.path, self.unrecorded.used if saved else (), os.getpid())
            if self.memory_probe is not None:  # the rows are in: what those calls wrote is explained now
                for call_id in self._ended:
                    self.memory_probe.end_mark(call_id)
            if self.probe is not None:
                for call_id in self._skills_ended:
                    self.probe.end(call_id)
        self._items.clear()
        self._seen.clear()
        self._held_bytes = 0
        self.rows_written += written
        if self._sweep_due:  # after the commit: the rows the prune deleted no longer keep their texts
            self._sweep_due = False
            from .blob_sweep import sweep_blobs

            swept = sweep_blobs(self.home, conn=conn)
            self.blobs_swept += swept.deleted
            if swept.skipped:
                logger.warning("hermes_pipeline: observability store: kept texts not swept: %s", swept.skipped,
                               extra={"event": "observability_blob_sweep_skipped"})
        return True

    def discard(self, count: int | None = None) -> int:
        """Drop the ``count`` oldest queued items (all with ``None``); how many of them were rows (scan
        requests are not rows: the next scan finds what they would have)."""
        count = len(self._items) if count is None else max(0, min(count, len(self._items)))
        self._prepare()  # what the probes hold of them goes too
        dropped, self._items = self._items[:count], self._items[count:]
        for item in dropped:  # never to be rows: their changes are the store's loss (:meth:`take_unrecorded`)
            self._lost |= self._keys(item)
            seen = self._seen.pop(id(item), None)
            if isinstance(item, SkillChange) and self.probe is not None and seen is not None:
                self.probe.end(seen.call_id)
            elif isinstance(item, MemoryWrite | ToolMemoryChange) and self.memory_probe is not None:
                self.memory_probe.end_mark(item.tool_call_id)
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
            if table == "task_runs" and values.get("trajectory_id") and values.get("turn_id"):
                # the run's row comes at its end: rows of its file-tool memory changes (queued earlier) name it now
                conn.execute("UPDATE memory_changes SET trajectory_id = ? WHERE trajectory_id IS NULL AND "
                             "trigger_session_id = ? AND turn_id = ?",
                             (values["trajectory_id"], values.get("session_id"), values["turn_id"]))
            return 1
        if isinstance(item, staged.StagedWrite):
            return staged.record(conn, item)
        if isinstance(item, SkillChange):
            seen = self._seen.get(id(item))
            if seen is not None:
                self._skills_ended.append(seen.call_id)
            change = staged.resolved(conn, item) if isinstance(item, staged.ApprovedSkillChange) else item
            return skill_history.record_change(conn, state, change, self.skill_roots, seen, self.home,
                                               busy=self.probe.busy if self.probe is not None else None,
                                               unrecorded=self.unrecorded)
        if isinstance(item, MemoryWrite):
            self._ended.append(item.tool_call_id)
            if item.succeeded:  # (what the probe read of a failed call is not needed)
                write = staged.resolved(conn, item) if isinstance(item, staged.ApprovedMemoryWrite) else item
                return self._memory_write(conn, state, write, self._seen.get(id(item)) or ({}, {}))
            return 0
        if isinstance(item, ToolMemoryChange):
            self._ended.append(item.tool_call_id)
            return self._tool_memory(conn, state, item)
        if item in (SCAN_SKILLS, "scan_all"):
            count = self._scan_skills(conn, state)
            return count + (self._scan_memory(conn, state) if item == "scan_all" else 0)
        if item in (SCAN_MEMORY, "turn_ended"):
            return self._scan_memory(conn, state, defer=True)
        if item == SCAN_FINAL:  # every event is in: what is still unexplained is the user's
            return self._scan_memory(conn, state)
        if item == PRUNE:
            from .retention import expire

            rows, self._sweep_due = expire(conn, self.runs_days, self.history_days, now=None, boot=True,
                                                    dry_run=False)
            self.pruned += sum(rows.values())
        return 0

    def _scan_skills(self, conn: sqlite3.Connection, state: ScanState) -> int:
        busy = set(inflight_skills(self.path.parent / INFLIGHT_DIR))
        if self.probe is not None:
            busy |= self.probe.busy_skills()
        rows = skill_history.scan(conn, state, self.skill_roots, self.home, busy=busy, unrecorded=self.unrecorded)
        self.unrecorded.looked("skill", skip={f"skill:{name}" for name in busy})
        return rows

    def _excerpt(self, text: str | None) -> str | None:
        """An excerpt as stored: scrubbed of credentials, then cut (memory text is read from the files)."""
        return excerpt(safe_scrub(text), self.excerpt_chars) if text else None

    def _memory_write(self, conn: sqlite3.Connection, state: ScanState, write: MemoryWrite,
                      seen_around: tuple[dict[str, FileSeen], dict[str, FileSeen]]) -> int:
        """The rows of one memory tool call: first what changed in its file before the call that no write explains
        (:meth:`_before_memory`), then one per operation that changed its file, quoting the entries it replaced or
        removed as they were before the call (:mod:`~hermes_pipeline.export.memory_changes`). ``seen_around``: the
        files as the probe read them before and after the call."""
        ops = parse_operations(write.tool, write.arguments)
        before_seen, after_seen = seen_around
        by_file: dict[str, list[Any]] = {}
        for op in ops:
            rel = memory_rel(self.home, self.memory_dirs, op.file_name, op.path_arg)
            if rel is not None:
                by_file.setdefault(rel, []).append(op)
        now = time.time()
        written = 0
        approval = (safe_scrub(write.approved_by or "") or None, write.pending_id) \
            if isinstance(write, staged.ApprovedMemoryWrite) else (None, None)  # a write the user approved
        for rel, file_ops in by_file.items():
            seen = before_seen.get(rel)
            if seen is not None:
                written += self._before_memory(conn, state, rel, seen, write.tool_call_id, now)
            before_text = None if seen is None or seen.unreadable else "" if seen.sha256 is None else seen.text
            # absent: empty; unreadable (a FIFO, too large): unknown, the operations are quoted as given
            changes = replay(before_text, file_ops,
                             entry_file=write.tool == "memory")
            after = after_seen.get(rel) or read_file(self.home, rel)
            # a call that left the file as the probe saw it before (a replace by the same text) explains no change:
            # a hand edit made before it stays the user's (no note, no claim taken, state and candidates kept)
            unchanged = seen is not None and rel in after_seen and seen.sha256 == after.sha256
            if not unchanged:
                attribution.note_agent(state, f"memory:{rel}", after.sha256, now)
            # a rescan saw this write first and blamed the user (a row per entry): the tool's rows replace them
            while not unchanged and (claimed := attribution.take_claim(state, "memory_changes", f"memory:{rel}",
                                                                       after.sha256, now)) is not None:
                conn.execute("DELETE FROM memory_changes WHERE id = ? AND (actor = 'user-direct' OR actor IS NULL)",
                             (claimed["id"],))
            for change in changes:
                kind = change.op.change_type
                conn.execute("INSERT INTO memory_changes (file_path, change_type, actor, trigger_session_id, "
                             "before_excerpt, after_excerpt, reason, changed_at, file_hash, trajectory_id, turn_id, "
                             "approved_by, pending_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                             (rel, kind, write.actor, write.session_id,
                              self._excerpt(change.before) if kind != "add" else None,
                              self._excerpt(change.after) if kind != "delete" else None,
                              change.op.reason, write.changed_at, after.sha256, write.trajectory_id, write.turn_id,
                              *approval))
                written += 1
            if unchanged:
                continue
            self._candidates.pop(rel, None)  # what a scan saw changing in this file was this write
            if after.unreadable:
                continue  # not read after the call: the state stays; the next scan that can read it compares
            if read_file(self.home, rel).sha256 != after.sha256:
                continue  # changed again since (another process, the user): the state must not go back in time
            if after.sha256 is None:  # the tool's write is explained: the next scan starts here
                state.memory.pop(rel, None)
            else:
                state.memory[rel] = _memory_entry(after)
        return written

    def _tool_memory(self, conn: sqlite3.Connection, state: ScanState, change: ToolMemoryChange) -> int:
        """The rows of memory files an agent's file tool (``write_file``, ``patch``, ``terminal``) changed: first what
        changed before the call that no write explains (:meth:`_before_memory`), then one ``agent-reflection`` row per
        entry the call changed, in its session, run and turn (the run once its ``task_runs`` row is in)."""
        now = time.time()
        written = 0
        found = conn.execute("SELECT trajectory_id FROM task_runs WHERE session_id = ? AND turn_id = ? "
                             "ORDER BY id DESC LIMIT 1", (change.session_id, change.turn_id)).fetchone()
        run = found[0] if found else None
        for rel in sorted(change.after):
            before, after = change.before[rel], change.after[rel]
            written += self._before_memory(conn, state, rel, before, change.tool_call_id, now)
            kind = "add" if before.sha256 is None and not before.unreadable else \
                "delete" if after.sha256 is None and not after.unreadable else "modify"
            old = "" if kind == "add" else safe_scrub(before.text) if before.text is not None else None
            new = "" if kind == "delete" else safe_scrub(after.text) if after.text is not None else None
            same = before.entries_sha256 == after.entries_sha256 \
                if before.entries_sha256 is not None and after.entries_sha256 is not None else None
            diff = file_diff(rel, kind, old, new, same_entries=same)
            attribution.note_agent(state, f"memory:{rel}", after.sha256, now)
            while (claimed := attribution.take_claim(state, "memory_changes", f"memory:{rel}", after.sha256,
                                                     now)) is not None:
                conn.execute("DELETE FROM memory_changes WHERE id = ? AND (actor = 'user-direct' OR actor IS NULL)",
                             (claimed["id"],))
            for entry in diff.changes if diff is not None else ():
                ctype = entry.change_type
                conn.execute("INSERT INTO memory_changes (file_path, change_type, actor, trigger_session_id, "
                             "before_excerpt, after_excerpt, reason, changed_at, file_hash, trajectory_id, turn_id) "
                             "VALUES (?, ?, 'agent-reflection', ?, ?, ?, NULL, ?, ?, ?, ?)",
                             (safe_scrub(rel), ctype, change.session_id,
                              self._excerpt(entry.before) if ctype != "add" else None,
                              self._excerpt(entry.after) if ctype != "delete" else None,
                              change.changed_at, after.sha256, run, change.turn_id))
                written += 1
            self._candidates.pop(rel, None)  # what a scan saw changing in this file was this call
            if after.unreadable or read_file(self.home, rel).sha256 != after.sha256:
                continue  # not read, or changed again since: the next scan compares
            if after.sha256 is None:
                state.memory.pop(rel, None)
            else:
                state.memory[rel] = _memory_entry(after)
        return written

    def _before_memory(self, conn: sqlite3.Connection, state: ScanState, rel: str, seen: FileSeen, call_id: str,
                       now: float) -> int:
        """Rows for what changed in ``rel`` between the scan state and the file just before a memory call
        (``seen``): one per entry, as a rescan writes them, unless a write explains it: the state is newer than that
        look, another call (any process) writes the file without its rows in yet, or an agent write left the file
        so. The state then starts from ``seen``."""
        if not state.initialised or seen.unreadable:
            return 0  # unreadable before the call: what it held is unknown, never taken for a deletion
        old = state.memory.get(rel)
        if (old.get("sha256") if old is not None else None) == seen.sha256:
            return 0
        at = old.get("at") if old is not None else None
        if isinstance(at, int | float) and at >= seen.at:
            return 0  # the state was set after that look: it may hold a later write, compared with nothing
        if self.memory_probe is not None and self.memory_probe.busy(rel, call_id):
            return 0
        if attribution.explained(state, f"memory:{rel}", seen.sha256, now):
            return 0
        kind = "add" if old is None else "delete" if seen.sha256 is None else "modify"
        after = "" if seen.sha256 is None else safe_scrub(seen.text) if seen.text is not None else None
        same: bool | None = None  # whether Hermes reads the same entries (as the rescan tells it, .scan)
        if old is not None and seen.sha256 is not None:
            known = old.get("entries_sha256")
            same = known == seen.entries_sha256 if isinstance(known, str) else \
                True if seen.lf_sha256 == old.get("sha256") else None
        diff = file_diff(rel, kind, "" if old is None else old.get("text"), after, same_entries=same)
        written = 0
        if diff is not None:
            written = self._user_rows(conn, state, rel, diff.changes, seen.sha256,
                                      sqlite_utc(int(seen.at * 1_000_000)), now)
        if seen.sha256 is None:
            state.memory.pop(rel, None)
        else:
            state.memory[rel] = _memory_entry(seen)
        return written

    def _user_rows(self, conn: sqlite3.Connection, state: ScanState, rel: str, changes: Iterable[Any],
                   digest: str | None, stamp: str, moment: float) -> int:
        """One row per entry changed out of band, each a claim an agent write of ``digest`` takes over; ``user-direct``
        unless the store lost changes of the file (then no actor, and the reason says why)."""
        why = self.unrecorded.why(f"memory:{rel}")
        written = 0
        for change in changes:
            kind = change.change_type
            cursor = conn.execute(
                "INSERT INTO memory_changes (file_path, change_type, actor, trigger_session_id, before_excerpt, "
                "after_excerpt, reason, changed_at, file_hash) VALUES (?, ?, ?, NULL, ?, ?, ?, ?, ?)",
                (safe_scrub(rel), kind, None if why else "user-direct",
                 self._excerpt(change.before) if kind != "add" else None,
                 self._excerpt(change.after) if kind != "delete" else None, why, stamp, digest))
            attribution.add_claim(state, "memory_changes", int(cursor.lastrowid or 0), f"memory:{rel}", digest,
                                  moment)
            written += 1
        return written

    def _scan_memory(self, conn: sqlite3.Connection, state: ScanState, *, defer: bool = False) -> int:
        """Rows for out-of-band memory changes, one per entry changed (:func:`~.scan.diff_memory`). With ``defer``
        (scans while the agent runs) a change is only a candidate until the next scan still finds it: the writer
        runs behind the agent, so a file a memory tool is writing right now looks changed before that tool's
        write reaches the store, and would otherwise be reported as the user's. A tool write to the file in
        between drops the candidate."""
        diffs, new_state = diff_memory(state, memory_files(self.home, self.memory_dirs, self._warned_dirs))
        now = sqlite_utc()
        written = 0
        moment = time.time()
        busy = inflight_files(self.path.parent / INFLIGHT_DIR, moment) if diffs else set()
        for diff in diffs:
            current = new_state.get(diff.file_path, {}).get("sha256", "-")
            if diff.file_path in busy:  # a tool call (any process) is writing it, its row not in yet: not now
                if diff.file_path in state.memory:
                    new_state[diff.file_path] = state.memory[diff.file_path]
                else:
                    new_state.pop(diff.file_path, None)
                continue
            digest = None if diff.change_type == "delete" else current
            if attribution.explained(state, f"memory:{diff.file_path}", digest, moment):
                self._candidates.pop(diff.file_path, None)  # an agent write (any process) made exactly this
                continue
            if defer and self._candidates.get(diff.file_path) != current:
                self._candidates[diff.file_path] = current  # seen once: confirmed (or dropped) later
                if diff.file_path in state.memory:
                    new_state[diff.file_path] = state.memory[diff.file_path]
                else:
                    new_state.pop(diff.file_path, None)
                continue
            self._candidates.pop(diff.file_path, None)
            written += self._user_rows(conn, state, diff.file_path, diff.changes, digest, now, moment)
        changed = {d.file_path for d in diffs}
        for rel in [r for r in self._candidates if r not in changed]:
            del self._candidates[rel]  # changed back, or explained since
        state.memory = new_state
        state.initialised = True
        if not defer:
            self.unrecorded.looked("memory", skip={f"memory:{rel}" for rel in busy})
        return written


def _memory_entry(seen: FileSeen) -> dict[str, Any]:
    """The scan state's entry of a memory file as a probe read it (:func:`~.scan.memory_state`: its hash, its text
    scrubbed, the hash of its entries), and when it was read (a write whose look at the file came before that cannot
    compare with it)."""
    entry = {**memory_state(str(seen.sha256), seen.text), "at": seen.at}
    if seen.entries_sha256 is not None:
        entry["entries_sha256"] = seen.entries_sha256
    return entry
