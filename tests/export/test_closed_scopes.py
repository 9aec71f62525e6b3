"""Each scope is paired once, by the tracker: an end reaches every listener as a closed scope (FMT-6, FMT-7, FMT-85).

``event.start`` on an end is the very start object the listeners received (after sanitizers and the credential
scrubber), so a sink reads the start from the end and keeps no table of open scopes; starts and marks carry
``None``. Holds for ends the tracker synthesizes at shutdown, for held (overlapping) tool starts, and for
events that crossed a worker process's pipe.
"""

from __future__ import annotations

from typing import Any

from hermes_pipeline.export.events import END, START, ScopeEvent
from hermes_pipeline.export.scope_hooks import ScopePlugin

SECRET = "sk-proj-" + "Q" * 40


def _drive(plugin: ScopePlugin, *, finish: bool) -> None:
    plugin.on_session_start(session_id="s1", model="m", platform="cli", agent_version=None)
    plugin.pre_llm_call(session_id="s1", task_id="t1", turn_id="u1", user_message=f"use {SECRET}",
                        is_first_turn=True, model="m", platform="cli", sender_id=None, agent_version=None)
    for call in ("c1", "c2"):  # overlapping calls: their starts are held, then published together
        plugin.pre_tool_call(tool_name="read_file", args={"path": f"/tmp/{call}", "key": SECRET}, task_id="t1",
                             session_id="s1", tool_call_id=call, turn_id="u1", api_request_id="",
                             middleware_trace=[], toolset=None)
    for call in ("c1", "c2"):
        plugin.post_tool_call(tool_name="read_file", args={"path": f"/tmp/{call}"}, task_id="t1", session_id="s1",
                              tool_call_id=call, turn_id="u1", api_request_id="", result="ok", duration_ms=3,
                              status="ok", error_type=None, error_message=None)
    if finish:
        plugin.on_session_end(session_id="s1", task_id="t1", turn_id="u1", completed=True, interrupted=False,
                              failed=None, turn_exit_reason=None, reason=None)
        plugin.on_session_finalize(session_id="s1", reason="exit")


def _events(deferred: bool, finish: bool) -> list[ScopeEvent]:
    seen: list[ScopeEvent] = []
    plugin = ScopePlugin((seen.append,), deferred=deferred)
    _drive(plugin, finish=finish)
    plugin.flush(5.0)
    plugin.shutdown(5.0)
    return seen


def _check_closed(events: list[ScopeEvent]) -> None:
    starts: dict[int, ScopeEvent] = {}
    ends = 0
    for event in events:
        if event.phase == START:
            assert event.start is None
            starts[event.uuid] = event
        elif event.phase == END:
            ends += 1
            assert event.start is starts.pop(event.uuid), event  # the very object the listener was given
            assert event.start.name == event.name and event.start.timestamp_us < event.timestamp_us
        else:
            assert event.start is None
    assert not starts and ends >= 4  # session, turn, two tools: every start came back closed


def test_every_end_carries_its_published_start() -> None:
    """FMT-6/FMT-7: ends of a finished session, inline and deferred, each carry their start."""
    for deferred in (False, True):
        events = _events(deferred, finish=True)
        _check_closed(events)
        tool_starts = [e for e in events if e.phase == START and e.category == "tool"]
        assert tool_starts and all(SECRET not in repr(e.data) for e in tool_starts)  # the scrubbed start


def test_ends_synthesized_at_shutdown_are_closed_scopes() -> None:
    """FMT-85: the ends the tracker synthesizes for open scopes at shutdown carry their starts too."""
    events = _events(True, finish=False)
    _check_closed(events)
    assert any((e.metadata or {}).get("hermes.close_reason") == "shutdown" for e in events if e.phase == END)


def test_starts_are_not_kept_after_their_end() -> None:
    """The tracker's pairing table empties with the scopes (no growth over a long process)."""
    plugin = ScopePlugin()
    _drive(plugin, finish=True)
    plugin.shutdown(5.0)
    table: dict[int, Any] = plugin.tracker._published_starts  # noqa: SLF001 - the tracker's own pairing table
    assert table == {}
