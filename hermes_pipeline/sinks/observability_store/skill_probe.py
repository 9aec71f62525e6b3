"""Reading a skill when an agent's ``skill_manage`` call changes it, not when its row is written.

The rows are written later, on the store's writer thread; by then the agent (or the user, or another process of
the profile) may have changed the files again. :class:`SkillHashProbe` looks at the files on the caller's thread,
at the time of the event (skill writes are rare, and the files are small): on ``pre_tool_call`` of Hermes'
``skill_manage`` (:data:`SKILL_TOOL`), the skill as it is just before the call (what a hand edit made meanwhile is
told apart by) and the files the call names (:func:`call_paths`: ``file_path``, else ``SKILL.md``; the whole skill
for ``create`` / ``delete``); on ``on_skill_lifecycle``, where the skill is now (any layout), the hashes of its
files (:class:`~.skill_tree.SkillTree`), the bytes of the files the call wrote (so their texts can be kept even
when the row is written after they changed again) and any skill the call made below this one (a ``write_file`` of
``sub/SKILL.md``). The writer takes each change back by skill and session (:meth:`SkillHashProbe.take`) and keeps
it with the row until that row is committed, so a write retried after a failed transaction still has the
event-time view. Each call puts an in-flight mark (:mod:`.inflight`) before the tool runs.

The agent may also change a skill with its other tools (:data:`FILE_TOOLS`: ``write_file`` / ``patch`` on a skill's
file, ``terminal`` / ``execute_code`` running ``sed -i`` or ``echo >>`` on it). A call of one of them whose arguments
name a skills directory (the word ``skill`` or a skills root's path) is watched: the skills are read before it and
after it (:meth:`SkillHashProbe.file_tool_changes`, which the host's adapter calls right after the tool ran), and each
skill it changed is reported as that call's change (``created``, ``edited``, ``file_written``, ``file_removed``,
``deleted``), in its session, run and turn, never left to a later rescan as a hand edit (BOOK-19). Another call may
run at the same time (a second subagent of a ``delegate_task`` batch, a concurrent tool call, another gateway
session): of the skills that changed while the call ran, it is given only those its arguments name
(:func:`own_changes`), so each writer's skill is its own version, once.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Final

from ...contract.hookspecs import hookimpl
from ...engine.scrub import safe_scrub
from ...export.memory_changes import json_mapping
from ...host.profile_files import read_regular_bytes
from .attribution import WINDOW
from .inflight import MAX_PENDING, drop_mark, expire_open, inflight_skills, put_mark
from .skill_tree import Roots, SkillRoots, SkillTree, all_skills, changed_files, find_skill, public_name

__all__ = ["FILE_TOOLS", "MAX_KEPT_BYTES", "PATH_TOOLS", "SKILL_TOOL", "SKILL_WRITES", "WHOLE", "SkillHashProbe",
           "SkillSeen", "arguments_text", "call_paths", "own_changes"]

MAX_TEXT: Final = 1 << 20
"""Files larger than this are not held for keeping their texts."""
SKILL_TOOL: Final = "skill_manage"
"""Hermes' tool that changes skills; its ``pre_tool_call`` names the files the call is about to write."""
SKILL_WRITES: Final = frozenset({"create", "patch", "edit", "delete", "write_file", "remove_file"})
WHOLE: Final = "*"
"""In the files a skill call names: the whole skill (``create``, ``delete``)."""
MAX_KEPT_BYTES: Final = 4 << 20
"""At most this many bytes of the files one skill call wrote are held for keeping their texts."""
FILE_TOOLS: Final = frozenset({"write_file", "patch", "terminal", "execute_code"})
"""Hermes' tools that can write a skill's files without ``skill_manage`` (see the module docstring)."""
PATH_TOOLS: Final = frozenset({"write_file", "patch"})
"""Of :data:`FILE_TOOLS`, those that write only files their arguments name (``path``; in ``patch`` mode, each file
its patch text names)."""


def arguments_text(args: Any) -> str | None:
    """A tool call's arguments as one text (JSON for a mapping), ``None`` when they cannot be encoded."""
    try:
        return args if isinstance(args, str) else json.dumps(args, default=str, ensure_ascii=False)
    except (TypeError, ValueError):
        return None


def own_changes(tool_name: str, text: str | None, changed: Mapping[str, str]) -> set[str]:
    """Of what a :data:`FILE_TOOLS` call saw changing while it ran (``changed``: key → the file or folder name a call
    writing it names), the keys that are the call's own: those its arguments ``text`` name as a whole path component
    (any case). Another call run at the same time (a second subagent, a concurrent tool call, another gateway
    session) changed the others. A :data:`PATH_TOOLS` call writes only what it names; a ``terminal`` or
    ``execute_code`` call that names none of them (a glob, a variable) is taken to have changed them all."""
    if text is None:
        return set(changed)
    own = {key for key, name in changed.items()
           if name and re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w.-])", text, re.IGNORECASE)}
    return own if own or tool_name in PATH_TOOLS else set(changed)


def call_paths(args: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The files (relative to the skill, public names) a ``skill_manage`` call with ``args`` writes or removes:
    ``file_path`` as Hermes resolves it, ``SKILL.md`` for ``edit`` and a ``patch`` without one, :data:`WHOLE` for
    ``create`` and ``delete``; ``None`` for a call that changes no skill file (a view, an unknown action)."""
    action = args.get("action")
    if action in ("create", "delete"):
        return (WHOLE,)
    file_path = args.get("file_path")
    if action == "edit" or (action == "patch" and not file_path):
        return ("SKILL.md",)
    if action not in ("patch", "write_file", "remove_file") or not isinstance(file_path, str):
        return None
    rel = PurePosixPath(file_path.strip()).as_posix()  # Hermes joins it to the skill's folder: "." parts go
    if not rel or rel == "." or rel.startswith("/") or ".." in PurePosixPath(rel).parts:
        return None
    return (safe_scrub(rel),)


def _read_bytes(path: Path | None, sha256: str) -> bytes | None:
    """The bytes of ``path`` when they still hash to ``sha256`` and are small enough to keep."""
    if path is None:
        return None
    try:
        data = read_regular_bytes(path, MAX_TEXT)  # never blocks on a FIFO: this runs on the agent's thread
    except OSError:
        return None  # gone, too large to keep, or not a regular file (its hash was taken, and warned, already)
    if len(data) > MAX_TEXT or hashlib.sha256(data).hexdigest() != sha256:
        return None
    return data


def _hold(texts: dict[str, bytes], tree: SkillTree | None, paths: Collection[str]) -> None:
    """Add to ``texts`` (by SHA-256) the bytes of the files ``paths`` of ``tree`` (all of them for :data:`WHOLE`)."""
    if tree is None:
        return
    names = tree.files if WHOLE in paths else [p for p in paths if p in tree.files]
    for rel in names:
        sha = tree.files[rel]
        if sha in texts or sum(len(b) for b in texts.values()) >= MAX_KEPT_BYTES:
            continue
        data = _read_bytes(tree.disk_path(rel), sha)
        if data is not None:
            texts[sha] = data


@dataclass
class SkillSeen:
    """One skill change as the probe saw it (see the module docstring)."""

    tree: SkillTree | None
    """The skill right after the change (``None``: gone)."""
    session_id: str = ""
    after_at: float = 0.0
    """When :attr:`tree` was read (epoch seconds, once read)."""
    before: SkillTree | None = None
    """The skill right before the call (``None``: there was none); meaningful when :attr:`before_known`."""
    before_known: bool = False
    before_at: float = 0.0
    """When :attr:`before` was read (epoch seconds)."""
    paths: tuple[str, ...] | None = None
    """The files the call names (:func:`call_paths`); ``None`` when unknown (a host reporting only the change)."""
    texts: dict[str, bytes] = field(default_factory=dict)
    """Bytes of the files the call wrote (and of those files before it), by SHA-256."""
    nested: dict[str, SkillTree | None] = field(default_factory=dict)
    """Skills (public name → tree; ``None``: removed) whose ``SKILL.md`` the call wrote or removed below this one,
    each the one Hermes resolves by that name."""
    call_id: str = ""
    """The tool call (its in-flight mark goes once the change's rows are committed)."""


@dataclass
class _Call:
    name: str
    session_id: str
    paths: tuple[str, ...]
    before: SkillTree | None
    at: float
    texts: dict[str, bytes]
    nested: dict[str, SkillTree]


class SkillHashProbe:
    """``skill_manage`` calls and ``on_skill_lifecycle`` → the skill before and after each change (see the module
    docstring)."""

    def __init__(self, skills_root: Roots, inflight: Path | None = None) -> None:
        self.root = skills_root
        self.inflight = inflight
        self._trees: dict[str, deque[SkillSeen]] = {}
        self._calls: OrderedDict[str, _Call] = OrderedDict()
        """``skill_manage`` calls under way (``pre_tool_call`` seen, no change reported yet), by call id."""
        self._open: dict[str, tuple[str, frozenset[str], float]] = {}
        """Calls whose rows are not committed yet: call id → (public skill name, files it names, since when)."""
        self._marks: dict[str, Path] = {}
        self._watched: OrderedDict[str, tuple[str, float, dict[str, SkillTree], str, str | None]] = OrderedDict()
        """:data:`FILE_TOOLS` calls under way that may write a skill: call id → (session, when, the skills before, the
        tool, its arguments' text)."""
        self._lock = threading.Lock()

    def _names_skills(self, text: str | None) -> bool:
        """Whether a :data:`FILE_TOOLS` call's arguments (:func:`arguments_text`) name a skills directory."""
        if text is None:
            return False
        text = text.lower()
        dirs = self.root.dirs() if isinstance(self.root, SkillRoots) else [self.root]
        return "skill" in text or any(str(d).lower() in text for d in dirs)

    def _watch(self, tool_name: str, args: Any, tool_call_id: str, session_id: str) -> None:
        text = arguments_text(args)
        if not self._names_skills(text):
            return
        at = time.time()
        before = all_skills(self.root)
        with self._lock:
            self._watched[tool_call_id] = (str(session_id or ""), at, before, tool_name, text)
            while len(self._watched) > MAX_PENDING:  # calls whose end never came
                self._watched.popitem(last=False)

    def file_tool_changes(self, tool_call_id: str) -> list[tuple[str, str]]:
        """``(lifecycle action, skill name on disk)`` of each skill the watched :data:`FILE_TOOLS` call
        ``tool_call_id`` changed (read now, right after the tool ran); each is then matched, like a ``skill_manage``
        call, by the ``on_skill_lifecycle`` the host reports for it. ``[]`` for a call not watched."""
        with self._lock:
            watched = self._watched.pop(tool_call_id, None)
        if watched is None:
            return []
        session, at, before, tool_name, text = watched
        after = all_skills(self.root)
        with self._lock:  # a skill_manage call run beside it (Hermes runs tool calls concurrently) reports its own
            others = {n for n, _, t in self._open.values() if t >= at}
            others |= {public_name(c.name) for c in self._calls.values()}
        changed: dict[str, Path] = {}
        for name in sorted(before.keys() | after.keys()):
            old, new = before.get(name), after.get(name)
            tree = new if new is not None else old
            if old != new and name not in others and tree is not None and tree.on_disk is not None:
                changed[name] = tree.on_disk
        own = own_changes(tool_name, text, {name: on_disk.name for name, on_disk in changed.items()})
        out: list[tuple[str, str]] = []
        for name, on_disk in changed.items():
            if name not in own:  # another writer's (a call run beside this one): its own call reports it
                continue
            old, new = before.get(name), after.get(name)
            files = changed_files(old, new)
            action = "created" if old is None else "deleted" if new is None else "edited" if "SKILL.md" in files \
                else "file_written" if any(f in new.files for f in files) else "file_removed"
            paths = (WHOLE,) if action in ("created", "deleted") else tuple(files)
            texts: dict[str, bytes] = {}
            key = f"{tool_call_id}:{name}"
            with self._lock:  # the rows are this call's: a rescan leaves the skill alone until they are in
                self._open[key] = (name, frozenset(paths), at)
                self._calls[key] = _Call(on_disk.name, session, paths, old, at, texts, {})
            out.append((action, on_disk.name))
        return out

    @hookimpl
    def pre_tool_call(self, tool_name: str, args: Any, tool_call_id: str, session_id: str) -> None:
        if tool_name in FILE_TOOLS and tool_call_id:
            self._watch(tool_name, args, tool_call_id, session_id)
            return
        if tool_name != SKILL_TOOL or not tool_call_id:
            return
        parsed = json_mapping(args)
        name = parsed.get("name") if parsed is not None else None
        if parsed is None or parsed.get("action") not in SKILL_WRITES or not isinstance(name, str):
            return
        name = name.strip()
        paths = call_paths(parsed)
        if not name or "/" in name or "\\" in name or paths is None:
            return
        public = public_name(name)
        mark = put_mark(self.inflight, tool_call_id, {"files": [], "skills": {public: list(paths)}})
        with self._lock:  # before the skill is read: a rescan from now on leaves these files alone
            expire_open(self._open, self._marks)
            self._open[tool_call_id] = (public, frozenset(paths), time.time())
            if mark is not None:
                self._marks[tool_call_id] = mark
        at = time.time()
        before = find_skill(self.root, name)
        texts: dict[str, bytes] = {}
        _hold(texts, before, [p for p in paths if p != WHOLE])  # what the call overwrites: a hand edit's text
        nested = self._nested(before, paths)
        stale: list[Path | None] = []
        with self._lock:
            self._calls[tool_call_id] = _Call(name, str(session_id or ""), paths, before, at, texts, nested)
            while len(self._calls) > MAX_PENDING:  # calls whose end never came
                dropped, _ = self._calls.popitem(last=False)
                stale.append(self._forget(dropped))
        for path in stale:
            drop_mark(path)

    def _match(self, skill_name: str, session_id: str) -> tuple[str, _Call] | None:
        """The call under way that this change of ``skill_name`` reports (the same session's first), taken."""
        with self._lock:
            found = [(cid, c) for cid, c in self._calls.items() if c.name == skill_name]
            same = [pair for pair in found if pair[1].session_id == session_id]
            pick = same[0] if same else (found[0] if len(found) == 1 else None)
            if pick is not None:
                del self._calls[pick[0]]
        return pick

    @hookimpl
    def on_skill_lifecycle(self, action: str, skill_name: str, session_id: str) -> None:
        if action == "loaded" or not isinstance(skill_name, str) or not skill_name or "/" in skill_name:
            return
        tree = find_skill(self.root, skill_name)
        seen = SkillSeen(tree, str(session_id or ""), time.time())
        pick = self._match(skill_name.strip(), seen.session_id)
        if pick is not None:
            call_id, call = pick
            seen.before, seen.before_known, seen.before_at = call.before, True, call.at
            seen.paths, seen.texts, seen.call_id = call.paths, call.texts, call_id
            _hold(seen.texts, tree, call.paths)
            after = self._nested(tree, call.paths)
            seen.nested = {**{name: None for name in call.nested if name not in after}, **after}
            for nested in after.values():
                _hold(seen.texts, nested, (WHOLE,))
        stale: Path | None = None
        with self._lock:  # kept by the public name, the one the change reaches the store writer with
            self._trees.setdefault(public_name(skill_name), deque()).append(seen)
            if sum(len(q) for q in self._trees.values()) > MAX_PENDING:  # changes nobody takes: the oldest go
                name = min(self._trees, key=lambda n: self._trees[n][0].after_at)
                stale = self._forget(self._trees[name].popleft().call_id)
                if not self._trees[name]:
                    del self._trees[name]
        drop_mark(stale)

    def _nested(self, tree: SkillTree | None, paths: Collection[str]) -> dict[str, SkillTree]:
        """Skills the call wrote a ``SKILL.md`` of below ``tree`` (not files of ``tree`` itself) that Hermes
        resolves by their names."""
        out: dict[str, SkillTree] = {}
        if tree is None or tree.on_disk is None:
            return out
        for rel in paths:
            parts = PurePosixPath(rel).parts
            if rel in tree.files or len(parts) < 2 or parts[-1] != "SKILL.md":
                continue
            folder = tree.on_disk.joinpath(*parts[:-1])
            found = find_skill(self.root, folder.name)
            if found is not None and found.on_disk == folder:
                out[public_name(folder.name)] = found
        return out

    @hookimpl
    def post_tool_call(self, tool_name: str, tool_call_id: str) -> None:
        if tool_name in FILE_TOOLS and tool_call_id:
            with self._lock:  # not asked for its changes (no host adapter): a rescan finds them
                self._watched.pop(tool_call_id, None)
            return
        if tool_name != SKILL_TOOL or not tool_call_id:
            return
        with self._lock:
            unmatched = self._calls.pop(tool_call_id, None)
        if unmatched is not None:  # no change was reported: the call changed nothing
            self.end(tool_call_id)

    def take(self, skill_name: str, session_id: str | None = None) -> SkillSeen | None:
        """The oldest change of the skill publicly named ``skill_name`` not taken yet (that session's first when
        it has one), ``None`` when the probe saw none."""
        with self._lock:
            queue = self._trees.get(skill_name)
            if not queue:
                return None
            index = next((i for i, s in enumerate(queue) if s.session_id == (session_id or "")), 0)
            seen = queue[index]
            del queue[index]
            if not queue:
                del self._trees[skill_name]
        return seen

    def busy(self, skill_name: str, own: str = "") -> set[str]:
        """Files of the skill publicly named ``skill_name`` that calls other than ``own`` (of any process) are
        writing or have written without their rows committed (:data:`WHOLE`: the whole skill)."""
        since = time.time() - WINDOW  # a call whose change never reached the writer holds nothing back for long
        with self._lock:
            out: set[str] = set()
            for call_id, (name, paths, at) in self._open.items():
                if name == skill_name and call_id != own and at >= since:
                    out.update(paths)
            own_mark = self._marks.get(own)
        if self.inflight is not None:
            exclude = {own_mark.name} if own_mark is not None else set()
            out.update(inflight_skills(self.inflight, exclude=exclude).get(skill_name, set()))
        return out

    def busy_skills(self) -> set[str]:
        """Skills (public names) some call of any process is changing without its rows committed."""
        since = time.time() - WINDOW
        with self._lock:
            out = {name for name, _, at in self._open.values() if at >= since}
        if self.inflight is not None:
            out.update(inflight_skills(self.inflight))
        return out

    def _forget(self, call_id: str) -> Path | None:
        self._open.pop(call_id, None)
        return self._marks.pop(call_id, None)

    def end(self, call_id: str) -> None:
        """The call's rows are in the store (or it changed nothing, or its rows were given up): its mark goes."""
        if not call_id:
            return
        with self._lock:
            path = self._forget(call_id)
        drop_mark(path)

    def end_all_marks(self) -> None:
        """Remove every mark of this probe (the store is closing)."""
        with self._lock:
            ids = list(self._open)
        for call_id in ids:
            self.end(call_id)
