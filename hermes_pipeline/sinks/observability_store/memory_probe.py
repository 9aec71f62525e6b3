"""Reading a memory file when an agent's tool writes it, not when its row is written.

The rows are written later, on the store's writer thread; by then the agent (or the user, or another process of
the profile) may have changed the file again. :class:`MemoryProbe`, on ``pre_tool_call`` / ``post_tool_call`` of
a memory-writing tool, reads on the caller's thread the text of the file before the call (to quote the entry a
``replace`` or ``remove`` changed, and to tell a hand edit made before the call from the call's own change) and
its SHA-256 and text right after it (the hash the tool's write produced: the rule that a store writer's row wins
over a rescan compares it). Kept by ``tool_call_id`` until the writer takes them, at most
:data:`~.inflight.MAX_PENDING` calls. A memory file's text is decoded as Hermes reads it (UTF-8, universal
newlines); its hash is that of its bytes. Each call puts an in-flight mark (:mod:`.inflight`) before the tool runs.

The agent may also change a memory file with its other tools (:data:`~.skill_probe.FILE_TOOLS`: ``write_file`` /
``patch`` of ``memories/MEMORY.md``, ``terminal`` running ``echo >>`` or ``sed -i`` on it). A call of one of them whose
arguments name a memory directory or file is watched: every memory file is read before and after it, and the files
it changed are queued to the store as a :class:`ToolMemoryChange`, the agent's change in the call's session, run and
turn (one row per entry changed, actor ``agent-reflection``, BOOK-22), never left to a rescan as ``user-direct``. Of
the files that changed while it ran, a call is given only those its arguments name
(:func:`~.skill_probe.own_changes`): another call run at the same time (a second subagent of a ``delegate_task``
batch, a concurrent tool call, another gateway session) reports its own file, so each change is one row, its writer's.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, TypeVar

from ...contract.hookspecs import hookimpl
from ...export.classify import tool_span_kind
from ...export.memory_changes import parse_operations
from .attribution import WINDOW
from .inflight import MAX_PENDING, drop_mark, expire_open, inflight_files, put_mark
from .scan import MemoryRead, memory_files, read_memory_seen
from .schema import sqlite_utc
from .skill_probe import FILE_TOOLS, arguments_text, own_changes

__all__ = ["FileSeen", "MemoryProbe", "ToolMemoryChange", "memory_rel", "read_file"]

_Kept = TypeVar("_Kept")


@dataclass(frozen=True, slots=True)
class FileSeen:
    """A memory file as the probe read it: path relative to the profile, hash of its bytes and text as Hermes reads
    it (``None``: absent), when it was read (epoch seconds), and the hashes of its entries and of its bytes with LF
    endings (:class:`~.scan.MemoryRead`: what tells a change Hermes sees from other line endings)."""

    rel: str
    sha256: str | None
    text: str | None
    at: float = 0.0
    entries_sha256: str | None = None
    lf_sha256: str | None = None
    unreadable: bool = False
    """The file is there but was not read (a FIFO, a device, too large: :func:`~.scan.read_memory_seen`); its hash
    and text are then unknown (``None``), never taken for an absent file."""


@dataclass(frozen=True)
class ToolMemoryChange:
    """Memory files a :data:`~.skill_probe.FILE_TOOLS` call changed, as read right before and after it (both keyed
    by the files it changed; an absent file has hash ``None``)."""

    tool: str
    session_id: str | None
    turn_id: str | None
    tool_call_id: str
    changed_at: str
    before: dict[str, FileSeen] = field(default_factory=dict)
    after: dict[str, FileSeen] = field(default_factory=dict)


def read_file(home: Path, rel: str) -> FileSeen:
    """``rel`` under ``home`` as it is now (text ``None`` when too large; both ``None`` when absent or unreadable),
    decoded as Hermes reads a memory file (:func:`~.scan.read_memory_seen`, the scan state's own reading, which
    never blocks on the caller's thread: a FIFO or a huge file is unreadable at once, with one warning)."""
    at = time.time()
    seen = read_memory_seen(home / rel)
    if not isinstance(seen, MemoryRead):
        return FileSeen(rel, None, None, at, unreadable=seen is not None)
    return FileSeen(rel, seen.sha256, seen.text, at, seen.entries_sha256, seen.lf_sha256)


def memory_rel(home: Path, memory_dirs: list[str], file_name: str | None, path_arg: str | None) -> str | None:
    """The memory file a write names, relative to ``home``; ``None`` when it is outside the profile."""
    if file_name is not None:
        return (PurePosixPath(memory_dirs[0] if memory_dirs else "memories") / file_name).as_posix()
    raw = Path(os.path.expanduser(path_arg or ""))
    target = raw if raw.is_absolute() else home / raw
    try:
        rel = Path(os.path.normpath(target)).relative_to(os.path.normpath(home))
    except ValueError:
        return None  # outside the profile: never an absolute path in the table
    return rel.as_posix()


class MemoryProbe:
    """``pre_tool_call`` / ``post_tool_call`` of memory writes → the file before and after (module docstring)."""

    def __init__(self, home: Path, memory_dirs: list[str], memory_tools: Mapping[str, str] | None = None,
                 inflight: Path | None = None) -> None:
        self.home = home
        self.memory_dirs = list(memory_dirs)
        self.memory_tools = dict(memory_tools or {})
        self.inflight = inflight
        self._marks: dict[str, Path] = {}
        self._open: dict[str, tuple[list[str], float]] = {}
        """Calls whose rows are not committed yet: call id → (the memory files they write, since when)."""
        self._before: OrderedDict[str, dict[str, FileSeen]] = OrderedDict()
        self._after: OrderedDict[str, dict[str, FileSeen]] = OrderedDict()
        self._watched: OrderedDict[str, tuple[str | None, dict[str, FileSeen]]] = OrderedDict()
        """:data:`~.skill_probe.FILE_TOOLS` calls under way that may write a memory file → (their arguments' text, the
        memory files before)."""
        self._warned: set[str] = set()
        self.submit: Callable[[object], bool] | None = None
        """Queues a :class:`ToolMemoryChange` on the store's writer (set by the store; ``None``: not watched)."""
        self._lock = threading.Lock()

    def _names_memory(self, text: str | None) -> bool:
        """Whether a :data:`~.skill_probe.FILE_TOOLS` call's arguments (their text) name a memory directory or file."""
        if text is None:
            return False
        text = text.lower()
        names = [d.lower() for d in self.memory_dirs if d] + ["memory.md", "user.md"]
        return any(name in text for name in names)

    def _all(self) -> dict[str, FileSeen]:
        return {rel: read_file(self.home, rel) for rel in memory_files(self.home, self.memory_dirs, self._warned)}

    def _watch_after(self, tool_name: str, tool_call_id: str, session_id: str, turn_id: str) -> None:
        with self._lock:
            watched = self._watched.pop(tool_call_id, None)
        if watched is None:
            return
        text, before = watched
        after = self._all()
        at = time.time()
        changed = sorted(rel for rel in before.keys() | after.keys()
                         if (before[rel].sha256 if rel in before else None) != (after[rel].sha256 if rel in after
                                                                                 else None)
                         or (rel in before and before[rel].unreadable) != (rel in after and after[rel].unreadable))
        own = own_changes(tool_name, text, {rel: PurePosixPath(rel).name for rel in changed})
        changed = [rel for rel in changed if rel in own]  # the others are another call's, reported by that call
        submit = self.submit
        if not changed or submit is None or not submit(ToolMemoryChange(
                tool_name, str(session_id or "") or None, str(turn_id or "") or None, tool_call_id, sqlite_utc(),
                {rel: before.get(rel) or FileSeen(rel, None, None, at) for rel in changed},
                {rel: after.get(rel) or FileSeen(rel, None, None, at) for rel in changed})):
            self.end_mark(tool_call_id)

    def _files(self, tool_name: str, args: Any) -> list[str]:
        if not isinstance(tool_name, str):
            return []
        parsed = args if isinstance(args, Mapping) else None
        if tool_name != "memory" and tool_span_kind(tool_name, parsed, self.memory_tools) != "memory.update":
            return []
        rels = {memory_rel(self.home, self.memory_dirs, op.file_name, op.path_arg)
                for op in parse_operations(tool_name, args)}
        return sorted(r for r in rels if r is not None)

    def _keep(self, table: OrderedDict[str, _Kept], key: str, seen: _Kept) -> None:
        with self._lock:
            table[key] = seen
            while len(table) > MAX_PENDING:
                table.popitem(last=False)

    def _mark(self, tool_call_id: str, files: list[str]) -> None:
        path = put_mark(self.inflight, tool_call_id, {"files": files})
        with self._lock:
            expire_open(self._open, self._marks)
            self._open[tool_call_id] = (list(files), time.time())
            if path is not None:  # no mark: the writer's row still takes over a rescan's (see .attribution)
                self._marks[tool_call_id] = path

    def end_mark(self, tool_call_id: str) -> None:
        """The call's rows are in the store (or it wrote nothing): its in-flight mark goes."""
        with self._lock:
            self._open.pop(tool_call_id, None)
            path = self._marks.pop(tool_call_id, None)
        drop_mark(path)

    def end_all_marks(self) -> None:
        """Remove every mark of this probe (the store is closing)."""
        with self._lock:
            ids = list(self._open)
        for call_id in ids:
            self.end_mark(call_id)

    def busy(self, rel: str, own: str = "") -> bool:
        """Whether a call other than ``own`` (of any process) is writing the memory file ``rel``, or has written it
        without its rows committed."""
        since = time.time() - WINDOW
        with self._lock:
            if any(rel in files for call_id, (files, at) in self._open.items() if call_id != own and at >= since):
                return True
            own_mark = self._marks.get(own)
        if self.inflight is None:
            return False
        return rel in inflight_files(self.inflight, exclude={own_mark.name} if own_mark is not None else ())

    @hookimpl
    def pre_tool_call(self, tool_name: str, args: Any, tool_call_id: str) -> None:
        text = arguments_text(args) if tool_name in FILE_TOOLS else None
        if tool_name in FILE_TOOLS and tool_call_id and self.submit is not None and self._names_memory(text) \
                and not self._files(tool_name, args):
            before = self._all()
            self._mark(tool_call_id, sorted(before))  # a rescan leaves these files alone until the rows are in
            self._keep(self._watched, tool_call_id, (text, before))
            return
        files = self._files(tool_name, args)
        if files and tool_call_id:
            self._mark(tool_call_id, files)
            self._keep(self._before, tool_call_id, {rel: read_file(self.home, rel) for rel in files})

    @hookimpl
    def post_tool_call(self, tool_name: str, args: Any, tool_call_id: str, session_id: str, turn_id: str) -> None:
        if tool_name in FILE_TOOLS and tool_call_id:
            self._watch_after(tool_name, tool_call_id, session_id, turn_id)
        files = self._files(tool_name, args)
        if files and tool_call_id:
            self._keep(self._after, tool_call_id, {rel: read_file(self.home, rel) for rel in files})

    def take(self, tool_call_id: str) -> tuple[dict[str, FileSeen], dict[str, FileSeen]]:
        """The files before and after the call ``tool_call_id`` (empty when not seen), forgotten then."""
        with self._lock:
            return self._before.pop(tool_call_id, {}), self._after.pop(tool_call_id, {})
