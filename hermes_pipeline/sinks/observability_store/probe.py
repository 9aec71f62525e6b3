"""Reading a skill or a memory file when the change happens, not when its row is written.

The rows are written later, on the store's writer thread; by then the agent (or the user, or
another process of the profile) may have changed the files again. So two small hook
implementations look at the files on the caller's thread, at the time of the event (skill and
memory writes are rare, and the files are small):

- :class:`SkillHashProbe`, on ``on_skill_lifecycle``: where the skill is now (any layout) and the
  hashes of its files (:class:`~.skill_tree.SkillTree`); the writer takes them back in the same
  order, per skill;
- :class:`MemoryProbe`, on ``pre_tool_call`` / ``post_tool_call`` of a memory-writing tool: the text
  of the file before the call (to quote the entry a ``replace`` or ``remove`` changed) and its
  SHA-256 and text right after it (the hash the tool's write produced: the rule that a store
  writer's row wins over a rescan compares it). Kept by ``tool_call_id`` until the writer takes
  them, at most :data:`MAX_PENDING` calls.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict, deque
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Final

from ...contract.hookspecs import hookimpl
from ...export.classify import tool_span_kind
from .memory_ops import parse_operations
from .skill_tree import SkillTree, find_skill

_MISSING: Final = "-"
MAX_PENDING: Final = 256
MAX_TEXT: Final = 1 << 20


class SkillHashProbe:
    """``on_skill_lifecycle`` → the skill's tree right now (see the module docstring)."""

    def __init__(self, skills_root: Path) -> None:
        self.root = skills_root
        self._trees: dict[str, deque[SkillTree | str]] = {}
        self._lock = threading.Lock()

    @hookimpl
    def on_skill_lifecycle(self, action: str, skill_name: str) -> None:
        if action == "loaded" or not isinstance(skill_name, str) or not skill_name or "/" in skill_name:
            return
        tree = find_skill(self.root, skill_name)
        with self._lock:
            self._trees.setdefault(skill_name, deque()).append(tree or _MISSING)

    def take(self, skill_name: str) -> tuple[bool, SkillTree | None]:
        """``(known, tree)`` of the oldest change of ``skill_name`` not taken yet (``tree`` ``None``: gone)."""
        with self._lock:
            queue = self._trees.get(skill_name)
            if not queue:
                return False, None
            tree = queue.popleft()
            if not queue:
                del self._trees[skill_name]
        return True, tree if isinstance(tree, SkillTree) else None


@dataclass(frozen=True, slots=True)
class FileSeen:
    """A memory file as the probe read it: path relative to the profile, hash and text (``None``: absent)."""

    rel: str
    sha256: str | None
    text: str | None


def read_file(home: Path, rel: str) -> FileSeen:
    """``rel`` under ``home`` as it is now (text ``None`` when too large; both ``None`` when absent)."""
    try:
        data = (home / rel).read_bytes()
    except OSError:
        return FileSeen(rel, None, None)
    text = data.decode("utf-8", errors="replace") if len(data) <= MAX_TEXT else None
    return FileSeen(rel, hashlib.sha256(data).hexdigest(), text)


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

    def __init__(self, home: Path, memory_dirs: list[str], memory_tools: Mapping[str, str] | None = None) -> None:
        self.home = home
        self.memory_dirs = list(memory_dirs)
        self.memory_tools = dict(memory_tools or {})
        self._before: OrderedDict[str, dict[str, FileSeen]] = OrderedDict()
        self._after: OrderedDict[str, dict[str, FileSeen]] = OrderedDict()
        self._lock = threading.Lock()

    def _files(self, tool_name: str, args: Any) -> list[str]:
        if not isinstance(tool_name, str):
            return []
        parsed = args if isinstance(args, Mapping) else None
        if tool_name != "memory" and tool_span_kind(tool_name, parsed, self.memory_tools) != "memory.update":
            return []
        rels = {memory_rel(self.home, self.memory_dirs, op.file_name, op.path_arg)
                for op in parse_operations(tool_name, args)}
        return sorted(r for r in rels if r is not None)

    def _keep(self, table: OrderedDict[str, dict[str, FileSeen]], key: str, seen: dict[str, FileSeen]) -> None:
        with self._lock:
            table[key] = seen
            while len(table) > MAX_PENDING:
                table.popitem(last=False)

    @hookimpl
    def pre_tool_call(self, tool_name: str, args: Any, tool_call_id: str) -> None:
        files = self._files(tool_name, args)
        if files and tool_call_id:
            self._keep(self._before, tool_call_id, {rel: read_file(self.home, rel) for rel in files})

    @hookimpl
    def post_tool_call(self, tool_name: str, args: Any, tool_call_id: str) -> None:
        files = self._files(tool_name, args)
        if files and tool_call_id:
            self._keep(self._after, tool_call_id, {rel: read_file(self.home, rel) for rel in files})

    def take(self, tool_call_id: str) -> tuple[dict[str, FileSeen], dict[str, FileSeen]]:
        """The files before and after the call ``tool_call_id`` (empty when not seen), forgotten then."""
        with self._lock:
            return self._before.pop(tool_call_id, {}), self._after.pop(tool_call_id, {})
