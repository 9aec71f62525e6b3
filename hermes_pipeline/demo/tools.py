"""Real tools for the reference agent, confined to one workspace directory."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable


class WorkspaceError(ValueError):
    """A tool argument points outside the workspace or at something that is not a file."""


@dataclass(frozen=True, slots=True)
class Tool:
    """A tool the model may call: its OpenAI function definition and the Python callable."""

    name: str
    description: str
    parameters: dict[str, Any]
    fn: Callable[..., Any]
    needs_approval: bool = False

    def definition(self) -> dict[str, Any]:
        """The ``tools`` entry sent to an OpenAI-compatible provider."""
        return {"type": "function",
                "function": {"name": self.name, "description": self.description, "parameters": self.parameters}}


class Workspace:
    """A directory the tools may read and write; paths are resolved inside it."""

    def __init__(self, root: Path, *, max_read_bytes: int = 64_000) -> None:
        self.root = root.resolve()
        self.max_read_bytes = max_read_bytes

    def resolve(self, path: str) -> Path:
        """``path`` inside the workspace; :class:`WorkspaceError` when it escapes."""
        target = (self.root / path).resolve()
        if target != self.root and self.root not in target.parents:
            raise WorkspaceError(f"path {path!r} is outside the workspace")
        return target

    def read_file(self, path: str) -> str:
        """Return the text of a workspace file (at most ``max_read_bytes``)."""
        target = self.resolve(path)
        if not target.is_file():
            raise WorkspaceError(f"no such file in the workspace: {path!r}")
        with target.open("rb") as fh:
            return fh.read(self.max_read_bytes).decode("utf-8", errors="replace")

    def list_files(self) -> list[str]:
        """Relative paths of the files in the workspace."""
        return sorted(str(p.relative_to(self.root)) for p in self.root.rglob("*") if p.is_file())

    def write_file(self, path: str, content: str) -> dict[str, Any]:
        """Write ``content`` to a workspace file; returns what was written."""
        target = self.resolve(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
        return {"written": path, "bytes": len(content.encode())}

    def tools(self) -> dict[str, Tool]:
        """The workspace tools by name."""
        path_param = {"type": "string", "description": "Path relative to the workspace"}
        return {
            "read_file": Tool("read_file", "Read a text file from the workspace",
                              {"type": "object", "properties": {"path": path_param}, "required": ["path"]},
                              self.read_file),
            "list_files": Tool("list_files", "List the files in the workspace",
                               {"type": "object", "properties": {}}, self.list_files),
            "write_file": Tool("write_file", "Write a text file in the workspace",
                               {"type": "object", "properties": {"path": path_param, "content": {"type": "string"}},
                                "required": ["path", "content"]},
                               self.write_file, needs_approval=True),
        }
