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

  It also puts an *in-flight mark* for the call in ``observability/inflight/`` (one small file per
  call, naming the process and the memory files) before the tool runs; the store writer removes
  it once the call's rows are committed. A rescan in any process leaves a file with a live mark
  alone (:func:`inflight_files`): while a tool is writing it, or its row has not reached the store,
  what the rescan sees is the agent's, even content no probe read (another process wrote again
  before this one's ``post_tool_call``). A mark of a dead process, or older than
  :data:`~.attribution.WINDOW`, is stale and removed.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Final

from ...contract.hookspecs import hookimpl
from ...export.classify import tool_span_kind
from .attribution import WINDOW
from ...export.memory_changes import parse_operations
from .skill_tree import Roots, SkillTree, find_skill, public_name

_MISSING: Final = "-"
MAX_PENDING: Final = 256
MAX_TEXT: Final = 1 << 20
INFLIGHT_DIR: Final = "inflight"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True


def inflight_files(directory: Path, now: float | None = None) -> set[str]:
    """The memory files (relative to the profile) some live tool call of any process is writing or has
    written without its row in the store yet; stale marks are removed (see the module docstring)."""
    now = time.time() if now is None else now
    out: set[str] = set()
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return out
    for entry in entries:
        if not entry.name.endswith(".json"):
            continue
        try:
            raw = json.loads(Path(entry.path).read_text(encoding="utf-8"))
            pid, at, files = int(raw["pid"]), float(raw["at"]), raw["files"]
        except (OSError, ValueError, KeyError, TypeError):
            continue  # being written, or not ours: ignored
        if not _alive(pid) or not now - WINDOW <= at <= now + WINDOW:
            try:
                os.unlink(entry.path)
            except OSError:
                pass
            continue
        out.update(str(f) for f in files if isinstance(f, str))
    return out


class SkillHashProbe:
    """``on_skill_lifecycle`` → the skill's tree right now (see the module docstring)."""

    def __init__(self, skills_root: Roots) -> None:
        self.root = skills_root
        self._trees: dict[str, deque[SkillTree | str]] = {}
        self._lock = threading.Lock()

    @hookimpl
    def on_skill_lifecycle(self, action: str, skill_name: str) -> None:
        if action == "loaded" or not isinstance(skill_name, str) or not skill_name or "/" in skill_name:
            return
        tree = find_skill(self.root, skill_name)
        with self._lock:  # kept by the public name, the one the change reaches the store writer with
            self._trees.setdefault(public_name(skill_name), deque()).append(tree or _MISSING)

    def take(self, skill_name: str) -> tuple[bool, SkillTree | None]:
        """``(known, tree)`` of the oldest change of the skill publicly named ``skill_name`` not taken yet (``tree``
        ``None``: gone)."""
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

    def __init__(self, home: Path, memory_dirs: list[str], memory_tools: Mapping[str, str] | None = None,
                 inflight: Path | None = None) -> None:
        self.home = home
        self.memory_dirs = list(memory_dirs)
        self.memory_tools = dict(memory_tools or {})
        self.inflight = inflight
        self._marks: dict[str, Path] = {}
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

    def _mark(self, tool_call_id: str, files: list[str]) -> None:
        if self.inflight is None:
            return
        name = f"{os.getpid()}-{hashlib.sha256(tool_call_id.encode('utf-8')).hexdigest()[:20]}.json"
        path = self.inflight / name
        try:
            self.inflight.mkdir(mode=0o700, parents=True, exist_ok=True)
            tmp = path.with_name(f".{name}.tmp")
            tmp.write_text(json.dumps({"pid": os.getpid(), "at": time.time(), "files": files}), encoding="utf-8")
            os.replace(tmp, path)
        except OSError:
            return  # no mark: the writer's row still takes over a rescan's (see .attribution)
        with self._lock:
            self._marks[tool_call_id] = path

    def end_mark(self, tool_call_id: str) -> None:
        """The call's rows are in the store (or it wrote nothing): its in-flight mark goes."""
        with self._lock:
            path = self._marks.pop(tool_call_id, None)
        if path is not None:
            try:
                os.unlink(path)
            except OSError:
                pass

    def end_all_marks(self) -> None:
        """Remove every mark of this probe (the store is closing)."""
        with self._lock:
            ids = list(self._marks)
        for call_id in ids:
            self.end_mark(call_id)

    @hookimpl
    def pre_tool_call(self, tool_name: str, args: Any, tool_call_id: str) -> None:
        files = self._files(tool_name, args)
        if files and tool_call_id:
            self._mark(tool_call_id, files)
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
