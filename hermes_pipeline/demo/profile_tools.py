"""Profile tools of the reference agent: Hermes-shaped ``memory`` and ``skill_manage`` (spec 06 §4-§5).

They write the profile's own files the way Hermes' tools do, with the same arguments:

- ``memory`` keeps ``$HERMES_HOME/memories/MEMORY.md`` (``target = "user"``: ``USER.md``) as entries
  joined by ``"\\n§\\n"``: ``add`` appends an entry, ``replace`` / ``remove`` act on the first entry
  containing ``old_text``, and the batch shape ``operations`` applies several at once, all or nothing;
- ``skill_manage`` keeps skills in ``$HERMES_HOME/skills/<name>/`` or, with a ``category``, in
  ``skills/<category>/<name>/``: ``create``, ``patch`` (``old_string`` → ``new_string`` in ``SKILL.md``
  or a supporting ``file_path``), ``edit``, ``delete``, ``write_file``, ``remove_file``, and ``view``
  (a load). Each success is reported with :meth:`~hermes_pipeline.host.Host.skill_lifecycle`, with the
  call's ``reason``, so the observability store records the skill's history and runs, and the memory
  audit sees every write.

Files are replaced atomically (a temporary file renamed over the old one), as Hermes writes them.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path, PurePosixPath
from typing import Any

from ..host import Host
from ..host.skill_layout import skill_dirs
from .tools import Tool, WorkspaceError

_NAME = {"type": "string", "description": "The skill's directory name"}
DELIMITER = "\n§\n"
SUPPORT_DIRS = ("references", "templates", "scripts", "assets")


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _valid_name(name: str, what: str = "skill name") -> None:
    if not isinstance(name, str) or not name or "/" in name or "\\" in name or name in (".", "..") \
            or name.startswith("."):
        raise WorkspaceError(f"not a {what}: {name!r}")


class ProfileTools:
    """The ``memory`` and ``skill_manage`` tools over the profile at ``home``, reporting through ``host``."""

    def __init__(self, home: Path, host: Host) -> None:
        self.home = home
        self.host = host

    # ------------------------------------------------------------------ memory

    def _memory_file(self, target: str) -> Path:
        return self.home / "memories" / ("USER.md" if target == "user" else "MEMORY.md")

    @staticmethod
    def _apply(entries: list[str], op: dict[str, Any], name: str) -> None:
        action = op.get("action")
        content = str(op.get("content") or "").strip()
        old = str(op.get("old_text") or "").strip()
        if action == "add":
            if not content:
                raise WorkspaceError("add needs content")
            if content not in entries:
                entries.append(content)
            return
        if action not in ("replace", "remove"):
            raise WorkspaceError(f"unknown memory action {action!r}")
        matches = [i for i, e in enumerate(entries) if old and old in e]
        if not matches:
            raise WorkspaceError(f"{old!r} is not in {name}")
        if action == "replace":
            if not content:
                raise WorkspaceError("replace needs content")
            entries[matches[0]] = content
        else:
            entries.pop(matches[0])

    def memory(self, action: str = "", content: str = "", old_text: str = "", target: str | None = "memory",
               operations: list[dict[str, Any]] | None = None) -> str:
        """Hermes' built-in memory tool: ``add``, ``replace``, ``remove``, the batch ``operations``, or ``read``."""
        target = target or "memory"
        if target not in ("memory", "user"):
            raise WorkspaceError(f"unknown memory target {target!r}")
        path = self._memory_file(target)
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        if action == "read" and not operations:
            return text
        entries = list(dict.fromkeys(e.strip() for e in text.split(DELIMITER) if e.strip()))
        for op in operations or [{"action": action, "content": content, "old_text": old_text}]:
            self._apply(entries, op if isinstance(op, dict) else {}, path.name)
        _write(path, DELIMITER.join(entries))
        return json.dumps({"success": True, "target": target, "entry_count": len(entries)})

    # ------------------------------------------------------------------ skills

    def _find(self, name: str) -> Path | None:
        root = self.home / "skills"
        return next((p for p in skill_dirs(root) if p.name == name), None) if root.is_dir() else None

    def _support(self, skill: Path, file_path: str) -> Path:
        parts = PurePosixPath(file_path or "").parts
        if len(parts) < 2 or parts[0] not in SUPPORT_DIRS or ".." in parts:
            raise WorkspaceError(f"file_path must be under {', '.join(SUPPORT_DIRS)}: {file_path!r}")
        return skill.joinpath(*parts)

    def skill_manage(self, action: str, name: str, content: str = "", category: str | None = None,
                     file_path: str | None = None, file_content: str | None = None, old_string: str | None = None,
                     new_string: str | None = None, old_text: str | None = None, new_text: str | None = None,
                     absorbed_into: str | None = None, reason: str | None = None) -> str:
        """Hermes' ``skill_manage`` (see the module docstring); ``old_text`` / ``new_text`` are accepted for
        ``old_string`` / ``new_string``."""
        _valid_name(name)
        skill = self._find(name)
        if action == "create":
            if skill is not None:
                raise WorkspaceError(f"skill {name!r} already exists at {skill}")
            if category:
                _valid_name(category, "category")
            if not content:
                raise WorkspaceError("create needs content (the SKILL.md text)")
            target = self.home / "skills" / (category or "") / name
            _write(target / "SKILL.md", content)
            self.host.skill_lifecycle("created", name, provenance="agent_created", reason=reason)
            return json.dumps({"success": True, "created": name, "path": str(target.relative_to(self.home))})
        if skill is None:
            raise WorkspaceError(f"no skill named {name!r}")
        if action == "view":
            text = (skill / "SKILL.md").read_text(encoding="utf-8")
            self.host.skill_lifecycle("loaded", name)
            return text
        if action == "patch":
            old, new = old_string if old_string is not None else old_text, \
                new_string if new_string is not None else new_text
            path = self._support(skill, file_path) if file_path else skill / "SKILL.md"
            text = path.read_text(encoding="utf-8") if path.is_file() else ""
            if not old or old not in text or new is None:
                raise WorkspaceError(f"{old!r} is not in {path.name} of skill {name!r}")
            _write(path, text.replace(old, new, 1))
            self.host.skill_lifecycle("patched", name, reason=reason)
        elif action == "edit":
            if not content:
                raise WorkspaceError("edit needs content (the whole new SKILL.md)")
            _write(skill / "SKILL.md", content)
            self.host.skill_lifecycle("edited", name, reason=reason)
        elif action == "write_file":
            if file_content is None:
                raise WorkspaceError("write_file needs file_content")
            _write(self._support(skill, file_path or ""), file_content)
            self.host.skill_lifecycle("file_written", name, reason=reason)
        elif action == "remove_file":
            path = self._support(skill, file_path or "")
            if not path.is_file():
                raise WorkspaceError(f"{file_path!r} is not in skill {name!r}")
            path.unlink()
            self.host.skill_lifecycle("file_removed", name, reason=reason)
        elif action == "delete":
            shutil.rmtree(skill)
            parent = skill.parent
            if parent != self.home / "skills" and parent.is_dir() and not any(parent.iterdir()):
                parent.rmdir()
            why = reason or (f"absorbed into {absorbed_into}" if absorbed_into else None)
            self.host.skill_lifecycle("deleted", name, reason=why)
        else:
            raise WorkspaceError(f"unknown skill action {action!r}")
        return json.dumps({"success": True, action: name})

    def tools(self) -> dict[str, Tool]:
        """The two tools by name."""
        text = {"type": "string"}
        op = {"type": "object", "properties": {"action": {"enum": ["add", "replace", "remove"]}, "content": text,
                                               "old_text": text}, "required": ["action"]}
        return {
            "memory": Tool("memory", "Save durable facts to memory (add, replace, remove, or a batch of operations) "
                           "or read it",
                           {"type": "object", "properties": {"action": {"enum": ["add", "replace", "remove", "read"]},
                                                             "content": text, "old_text": text,
                                                             "target": {"enum": ["memory", "user"]},
                                                             "operations": {"type": "array", "items": op}}},
                           self.memory),
            "skill_manage": Tool("skill_manage", "Create, patch, edit, delete or view a skill (a reusable procedure), "
                                 "or write or remove one of its supporting files",
                                 {"type": "object", "properties": {
                                     "action": {"enum": ["create", "patch", "edit", "delete", "write_file",
                                                         "remove_file", "view"]},
                                     "name": _NAME, "content": text, "category": text, "file_path": text,
                                     "file_content": text, "old_string": text, "new_string": text,
                                     "old_text": text, "new_text": text, "absorbed_into": text, "reason": text},
                                  "required": ["action", "name"]}, self.skill_manage),
        }
