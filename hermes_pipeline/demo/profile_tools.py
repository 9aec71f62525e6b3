"""Profile tools of the reference agent: Hermes-like ``memory`` and ``skill_manage`` (spec 06 §4-§5).

They write the profile's own files, as Hermes' tools do: ``memory`` appends to, replaces in or
removes from ``$HERMES_HOME/memories/MEMORY.md`` (``target = "user"``: ``USER.md``); ``skill_manage``
creates, patches or views (loads) ``$HERMES_HOME/skills/<name>/SKILL.md`` and reports each success
with :meth:`~hermes_pipeline.host.Host.skill_lifecycle`, so the observability store records the
skill's history and runs and the memory audit sees every write.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..host import Host
from .tools import Tool, WorkspaceError

_NAME = {"type": "string", "description": "The skill's directory name"}


class ProfileTools:
    """The ``memory`` and ``skill_manage`` tools over the profile at ``home``, reporting through ``host``."""

    def __init__(self, home: Path, host: Host) -> None:
        self.home = home
        self.host = host

    def _memory_file(self, target: str) -> Path:
        return self.home / "memories" / ("USER.md" if target == "user" else "MEMORY.md")

    def memory(self, action: str, content: str = "", old_text: str = "", target: str = "memory") -> str:
        """Hermes' built-in memory tool: ``add``, ``replace``, ``remove`` or ``read``."""
        path = self._memory_file(target)
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        if action == "read":
            return text
        if action == "add":
            text += content.rstrip("\n") + "\n"
        elif action in ("replace", "remove"):
            if not old_text or old_text not in text:
                raise WorkspaceError(f"{old_text!r} is not in {path.name}")
            text = text.replace(old_text, content if action == "replace" else "", 1)
        else:
            raise WorkspaceError(f"unknown memory action {action!r}")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return json.dumps({"success": True, "target": target, "chars": len(text)})

    def skill_manage(self, action: str, name: str, content: str = "", old_text: str = "", new_text: str = "",
                     reason: str | None = None) -> str:
        """``create`` a skill, ``patch`` it (replace ``old_text`` by ``new_text``) or ``view`` it (a load)."""
        path = self.home / "skills" / name / "SKILL.md"
        if "/" in name or name in ("", ".", ".."):
            raise WorkspaceError(f"not a skill name: {name!r}")
        if action == "create":
            if path.exists():
                raise WorkspaceError(f"skill {name!r} already exists")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content, encoding="utf-8")
            self.host.skill_lifecycle("created", name, provenance="agent_created", reason=reason)
            return json.dumps({"success": True, "created": name})
        if not path.is_file():
            raise WorkspaceError(f"no skill named {name!r}")
        if action == "patch":
            text = path.read_text(encoding="utf-8")
            if old_text not in text:
                raise WorkspaceError(f"{old_text!r} is not in skill {name!r}")
            path.write_text(text.replace(old_text, new_text, 1), encoding="utf-8")
            self.host.skill_lifecycle("patched", name, reason=reason)
            return json.dumps({"success": True, "patched": name})
        if action == "view":
            text = path.read_text(encoding="utf-8")
            self.host.skill_lifecycle("loaded", name)
            return text
        raise WorkspaceError(f"unknown skill action {action!r}")

    def tools(self) -> dict[str, Tool]:
        """The two tools by name."""
        text = {"type": "string"}
        return {
            "memory": Tool("memory", "Save durable facts to memory (add, replace, remove) or read it",
                           {"type": "object", "properties": {"action": {"enum": ["add", "replace", "remove", "read"]},
                                                             "content": text, "old_text": text,
                                                             "target": {"enum": ["memory", "user"]}},
                            "required": ["action"]}, self.memory),
            "skill_manage": Tool("skill_manage", "Create, patch or view a skill (a reusable procedure)",
                                 {"type": "object", "properties": {"action": {"enum": ["create", "patch", "view"]},
                                                                   "name": _NAME, "content": text, "old_text": text,
                                                                   "new_text": text, "reason": text},
                                  "required": ["action", "name"]}, self.skill_manage),
        }
