"""Helpers for the observability store tests: a host on an engine feeding a store in ``tmp_path``."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hermes_pipeline import Engine, Host
from hermes_pipeline.config.observability_settings import ObservabilitySettings
from hermes_pipeline.sinks.observability_store import StoreHandle, attach_store, store_path

RESPONSE: dict[str, Any] = {
    "id": "chatcmpl-1", "object": "chat.completion", "model": "m1",
    "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "hi"}}],
    "usage": {"prompt_tokens": 1200, "completion_tokens": 800}}


@contextmanager
def store(home: Path, **settings: Any) -> Iterator[tuple[Host, StoreHandle]]:
    """A host whose events feed the store of ``home``; closed (and everything written) on exit."""
    engine = Engine()
    handle = attach_store(engine, home, ObservabilitySettings(audit_enabled=True, **settings))
    try:
        yield Host(engine, model="m1", provider="openai"), handle
    finally:
        handle.close()


def rows(home: Path, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Rows of ``sql`` against the store of ``home``."""
    conn = sqlite3.connect(store_path(home))
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def write_skill(home: Path, name: str, text: str) -> None:
    (home / "skills" / name).mkdir(parents=True, exist_ok=True)
    (home / "skills" / name / "SKILL.md").write_text(text, encoding="utf-8")


def memory_tool(home: Path) -> Any:
    """A Hermes-like ``memory`` tool writing ``memories/MEMORY.md`` (add / replace / remove)."""
    def memory(action: str, content: str = "", old_text: str = "", target: str = "memory", **_: Any) -> str:
        path = home / "memories" / ("USER.md" if target == "user" else "MEMORY.md")
        path.parent.mkdir(parents=True, exist_ok=True)
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        if action == "add":
            text += content + "\n"
        elif action == "replace":
            text = text.replace(old_text, content)
        elif action == "remove":
            text = text.replace(old_text + "\n", "")
        path.write_text(text, encoding="utf-8")
        return '{"success": true}'
    return memory


def entry_memory_tool(home: Path) -> Any:
    """Hermes' own file format and locking: entries joined by ``\\n§\\n``, read-modify-write under an exclusive
    lock on ``<file>.lock``, the new file put in place by an atomic rename; ``operations`` is the batch shape."""
    import fcntl
    import json
    import os
    import tempfile

    def apply(entries: list[str], op: dict[str, Any]) -> None:
        action, content, old = op.get("action"), (op.get("content") or "").strip(), (op.get("old_text") or "").strip()
        if action == "add":
            if content not in entries:
                entries.append(content)
            return
        index = next(i for i, e in enumerate(entries) if old in e)
        if action == "replace":
            entries[index] = content
        else:
            entries.pop(index)

    def memory(target: str = "memory", operations: list[dict[str, Any]] | None = None, **single: Any) -> str:
        path = home / "memories" / ("USER.md" if target == "user" else "MEMORY.md")
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(str(path) + ".lock", "a+", encoding="utf-8") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            text = path.read_text(encoding="utf-8") if path.exists() else ""
            entries = [e.strip() for e in text.split("\n§\n") if e.strip()]
            for op in operations or [single]:
                apply(entries, op)
            fd, tmp = tempfile.mkstemp(dir=str(path.parent), prefix=".mem_", suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write("\n§\n".join(entries))
            os.replace(tmp, path)
        return json.dumps({"success": True, "done": True, "target": target})
    return memory
