"""Test helpers for sink authors: capture the scope events and the encoded output of a scripted session.

Re-exported by :mod:`hermes_pipeline.testing`::

    from hermes_pipeline.testing import MemorySink, capture_export

    def test_my_sink(tmp_path):
        config = {"version": 4, "atof": {"enabled": True, "sinks": [{"type": "file", "filename": "e.jsonl"}]},
                  "my_sink": {"enabled": True, "path": str(tmp_path / "mine.txt")}}
        run = capture_export(config, tmp_path, builders={"my_sink": MySink})
        assert run.events[0].name == "hermes.session"          # what every sink received
        assert [e["uuid"] for e in run.jsonl("e.jsonl")][:1] == [run.uuid(run.events[0])]
        assert (tmp_path / "mine.txt").read_text() ...           # what MySink wrote

:func:`capture_export` builds the ``observability`` component's scope plugin and sinks from ``config``
exactly as activation does (sinks found through the ``hermes_pipeline.sinks`` entry points, or given
in ``builders`` when the sink is not installed), adds a :class:`MemorySink` beside them, runs a
scripted session (:func:`scripted_session`, or your own ``session(host)``), flushes and shuts
everything down, and returns an :class:`ExportCapture`: the events, in the order every sink received
them, and every file written under ``directory`` (the default output directory of file sinks).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .export.events import ScopeEvent
from .export.ids import uuid_str
from .sinks.base import BaseSink, SinkBuilder, SinkContext

if TYPE_CHECKING:
    from .host import Host

__all__ = ["ExportCapture", "MemorySink", "capture_export", "scripted_session"]


class MemorySink(BaseSink):
    """A sink that keeps every event it receives (the in-memory implementation of the sink contract).

    Use it as a builder too: ``MemorySink(config, ctx)`` ignores both.
    """

    def __init__(self, config: Mapping[str, Any] | None = None, ctx: SinkContext | None = None) -> None:
        self.events: list[ScopeEvent] = []
        self.flushes = 0
        self.closed = False

    def __call__(self, event: ScopeEvent) -> None:
        self.events.append(event)

    def flush(self, timeout: float) -> bool:
        self.flushes += 1
        return True

    def shutdown(self, deadline: float) -> bool:
        self.closed = True
        return True

    def stats(self) -> Mapping[str, Any]:
        return {"events": len(self.events)}


@dataclass
class ExportCapture:
    """What :func:`capture_export` saw: the events and the files written."""

    events: list[ScopeEvent]
    """Every scope event of the session, in the order each sink received it."""
    files: dict[str, bytes] = field(default_factory=dict)
    """Relative path (``/``-separated) → content, for every file under the capture's directory."""
    stats: dict[str, Any] = field(default_factory=dict)
    """The component's counters after shutdown (scope plugin and every sink)."""

    @staticmethod
    def uuid(event: ScopeEvent) -> str:
        """The event's UUID as the exporters write it."""
        return uuid_str(event.uuid)

    def jsonl(self, name: str) -> list[dict[str, Any]]:
        """The JSON lines of the file whose relative path ends with ``name``."""
        return [json.loads(line) for line in self._one(name).splitlines() if line.strip()]

    def json(self, name: str) -> Any:
        """The JSON document of the file whose relative path ends with ``name``."""
        return json.loads(self._one(name))

    def documents(self, suffix: str = ".json") -> list[Any]:
        """Every JSON document whose name ends with ``suffix`` (e.g. ATIF trajectories), by path."""
        return [json.loads(data) for path, data in sorted(self.files.items()) if path.endswith(suffix)]

    def _one(self, name: str) -> bytes:
        found = [data for path, data in self.files.items() if path == name or path.endswith("/" + name)]
        if len(found) != 1:
            raise KeyError(f"{len(found)} captured files are called {name!r}: {sorted(self.files)}")
        return found[0]


def scripted_session(host: Host, *, turns: int = 1, tools: Iterable[str] = ("read_file", "read_file")) -> None:
    """One session of ``turns`` turns; each makes one LLM call answering with one tool call per name in
    ``tools``, runs those tools (each returns ``"contents"``) and completes with ``"done"``."""
    names = list(tools)
    calls = [{"id": f"call_{k}", "type": "function", "function": {"name": name, "arguments": '{"path": "notes.txt"}'}}
             for k, name in enumerate(names)]
    response = {"id": "chatcmpl-test", "object": "chat.completion", "model": "test-model",
                "choices": [{"index": 0, "finish_reason": "tool_calls" if calls else "stop",
                             "message": {"role": "assistant", "content": "" if calls else "hi",
                                         "tool_calls": calls or None}}],
                "usage": {"prompt_tokens": 12, "completion_tokens": 8, "total_tokens": 20}}
    with host.session() as session:
        for _ in range(turns):
            with session.turn("What do my notes say?") as turn:
                turn.call_llm({"model": "test-model", "messages": [{"role": "user", "content": "What do my notes say?"}]},
                              lambda request: response)
                for k, name in enumerate(names):
                    turn.call_tool(name, {"path": "notes.txt"}, lambda path: "contents", tool_call_id=f"call_{k}")
                turn.complete("done")


def capture_export(config: Mapping[str, Any], directory: Path, *,
                   session: Callable[[Host], object] = scripted_session,
                   builders: Mapping[str, SinkBuilder] | None = None, timeout: float = 30.0) -> ExportCapture:
    """Run ``session`` through the ``observability`` scope plugin and the sinks of ``config``; see the module text.

    ``config`` is the component's config table (``version = 4`` and the sink sections); file sinks
    without a directory write under ``directory``, relative paths resolve against it. Every enabled
    section needs an installed sink or an entry in ``builders``.
    """
    from .components.observability_sinks import attach_sinks
    from .engine.core import Engine
    from .host import Host

    memory = MemorySink()
    sections = {**dict(config), "hermes.testing.memory": {"enabled": True}}
    engine = Engine()

    def register(plugin: object) -> None:
        engine.add_plugin(plugin)

    attached = attach_sinks(sections, base_dir=directory, register=register,
                            default_dir=directory,
                            builders={**(builders or {}), "hermes.testing.memory": lambda c, ctx: memory})
    assert attached is not None  # the memory section is always enabled
    host = Host(engine, platform="cli", model="test-model", provider="test", base_url="http://127.0.0.1/v1")
    try:
        session(host)
        attached.flush(timeout)
    finally:
        attached.shutdown(timeout)
    stats = attached.stats()
    stats.pop("hermes.testing.memory", None)
    files = {path.relative_to(directory).as_posix(): path.read_bytes()
             for path in sorted(directory.rglob("*")) if path.is_file()}
    return ExportCapture(memory.events, files, stats)
