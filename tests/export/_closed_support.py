"""A recorded session for the closed-scope tests of the sinks: the events every sink received, and the same
stream with the starts of its leaf scopes (LLM calls, tool calls) filtered out.

A sink that reads each end as a closed scope (``end.start``, paired once by the tracker) gives the same
output for both; a sink that pairs starts and ends in a table of its own loses every leaf scope of the
second stream (their ends find no start).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hermes_pipeline.export.events import END, START, ScopeEvent
from hermes_pipeline.testing import capture_export

_CALLS = [{"id": "c_read", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "a.txt"}'}},
          {"id": "c_mem", "type": "function",
           "function": {"name": "memory", "arguments": '{"action": "add", "target": "memory", "content": "x"}'}},
          {"id": "c_bad", "type": "function", "function": {"name": "terminal", "arguments": '{"command": "ls"}'}}]
_RESPONSE = {"id": "chatcmpl-1", "object": "chat.completion", "model": "test-model",
             "choices": [{"index": 0, "finish_reason": "tool_calls",
                          "message": {"role": "assistant", "content": "", "tool_calls": _CALLS}}],
             "usage": {"prompt_tokens": 12, "completion_tokens": 8, "total_tokens": 20}}


def _broken(command: str) -> str:
    raise RuntimeError(f"cannot run {command}")


def _session(host: Any) -> None:
    """Two turns: an LLM call asking for three tools, a read, a memory write and a tool that fails."""
    with host.session() as session:
        for n in range(2):
            with session.turn(f"question {n}") as turn:
                turn.call_llm({"model": "test-model", "messages": [{"role": "user", "content": f"question {n}"}]},
                              lambda request: _RESPONSE)
                turn.call_tool("read_file", {"path": "a.txt"}, lambda path: "contents", tool_call_id="c_read")
                turn.call_tool("memory", {"action": "add", "target": "memory", "content": f"fact {n}"},
                               lambda **kw: '{"success": true}', tool_call_id="c_mem")
                turn.call_tool("terminal", {"command": "ls"}, _broken, tool_call_id="c_bad")
                turn.complete("done")


def recorded_events(directory: Path) -> list[ScopeEvent]:
    """The events of :func:`_session` as every sink received them (each end a closed scope)."""
    return capture_export({"version": 4}, directory, session=_session).events


def leaf_starts_dropped(events: list[ScopeEvent]) -> list[ScopeEvent]:
    """``events`` without the starts of LLM calls and tool calls (a filter that lets their ends through)."""
    return [e for e in events if not (e.phase == START and e.category in ("llm", "tool"))]


def close_scopes(events: list[ScopeEvent]) -> list[ScopeEvent]:
    """``events`` (built by hand) with each end given its start (``end.start``), as the tracker hands them."""
    starts: dict[int, ScopeEvent] = {}
    for event in events:
        if event.phase == START:
            starts[event.uuid] = event
        elif event.phase == END:
            event.start = starts.pop(event.uuid, event.start)
    return events
