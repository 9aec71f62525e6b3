"""``on_skill_lifecycle`` as a hookspec with a host call, and its scope events (spec 04 FMT-24 rows 18-20,
spec 06 BOOK-4, BOOK-8, BOOK-9)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline import Engine, Host
from hermes_pipeline.contract import hookspecs
from hermes_pipeline.contract.hooks import OBSERVER_HOOKS
from hermes_pipeline.export.events import ScopeEvent
from hermes_pipeline.export.scope_hooks import ScopePlugin
from hermes_pipeline.testing import capture_export


def _run(session: Any, **plugin: Any) -> list[ScopeEvent]:
    events: list[ScopeEvent] = []
    engine = Engine()
    engine.add_plugin(ScopePlugin((events.append,), **plugin), name="scope_plugin")
    session(Host(engine, model="m"))
    return events


def test_hook_is_a_hookspec_in_the_catalogue() -> None:
    """The hook has a pluggy spec (its fields documented) and a catalogue entry."""
    assert hasattr(hookspecs, "on_skill_lifecycle")
    info = OBSERVER_HOOKS["on_skill_lifecycle"]
    assert {"action", "skill_name", "provenance", "reason", "session_id", "turn_id", "use_count", "reused",
            "reuse_after_patch"} <= set(info.fields)
    assert info.family == "extension" and not info.return_used


def test_host_call_fills_ids_from_the_turn() -> None:
    seen: list[dict[str, Any]] = []
    engine = Engine()
    engine.register_hook("on_skill_lifecycle", lambda **kw: seen.append(kw))
    host = Host(engine)
    with host.session() as session, session.turn("hi") as turn:
        host.skill_lifecycle("patched", "pdf-tools", reason="fix a typo")
        turn.complete("ok")
    assert seen[0]["session_id"] == session.session_id and seen[0]["turn_id"] == turn.turn_id
    assert seen[0]["reason"] == "fix a typo" and seen[0]["action"] == "patched" and seen[0]["success"] is True


@pytest.mark.parametrize("action, name", [("vanished", "x"), ("created", "../etc"), ("created", ""),
                                          ("created", "a/b")])
def test_host_call_refuses_bad_input(action: str, name: str) -> None:
    engine = Engine()
    engine.register_hook("on_skill_lifecycle", lambda **kw: None)
    with pytest.raises(ValueError):
        Host(engine).skill_lifecycle(action, name)


def test_no_listener_no_cost_and_no_error() -> None:
    Host(Engine()).skill_lifecycle("created", "x")  # nobody listens: nothing happens


def _skill_turn(outcome: str) -> Any:
    def session(host: Host) -> None:
        with host.session() as s:
            try:
                with s.turn("use the skill") as turn:
                    host.skill_lifecycle("created", "pdf", provenance="agent_created")
                    host.skill_lifecycle("loaded", "pdf", use_count=1, reused=False, reuse_after_patch=False)
                    turn.call_tool("read_file", {"path": "a"}, lambda path: "x", tool_call_id="c1")
                    if outcome == "success":
                        turn.complete("done")
                    elif outcome == "cancelled":
                        turn.interrupt()
                    else:
                        raise RuntimeError("boom")
            except RuntimeError:
                pass
    return session


@pytest.mark.parametrize("outcome", ["success", "cancelled", "failed"])
def test_rows_18_19_skill_run_is_detached_and_ends_with_the_turn(outcome: str) -> None:
    """Row 18: a load is a ``hermes.skill.load`` mark and a detached ``skill.run`` start under the turn;
    row 19: it ends when that turn ends with the turn's outcome (BOOK-8); FMT-21: later scopes keep the
    turn as parent."""
    events = _run(_skill_turn(outcome))
    turn = next(e for e in events if e.name == "agent.run" and e.is_start)
    load = next(e for e in events if e.name == "hermes.skill.load")
    assert load.data == {"skill_name": "pdf", "provenance": None, "use_count": 1, "reused": False,
                         "reuse_after_patch": False}
    start = next(e for e in events if e.name == "skill.run" and e.is_start)
    assert start.parent_uuid == turn.uuid and start.category == "function"
    assert start.metadata["hermes.span_kind"] == "skill.run" and start.metadata["hermes.skill.name"] == "pdf"
    tool = next(e for e in events if e.name == "read_file" and e.is_start)
    assert tool.parent_uuid == turn.uuid  # not under skill.run
    end = next(e for e in events if e.name == "skill.run" and e.is_end)
    assert end.data == {"outcome": outcome}
    names = [(e.name, e.phase) for e in events]
    assert names.index(("skill.run", "end")) < names.index(("agent.run", "end"))


def test_row_20_other_actions_are_lifecycle_marks() -> None:
    events = _run(_skill_turn("success"))
    mark = next(e for e in events if e.name == "hermes.skill.lifecycle")
    assert mark.kind == "mark" and mark.category is None
    assert mark.data == {"action": "created", "skill_name": "pdf", "provenance": "agent_created"}


def test_skill_run_closed_when_the_session_closes_under_it() -> None:
    def session(host: Host) -> None:
        s = host.session()
        turn = s.turn("x")
        host.skill_lifecycle("loaded", "pdf", session_id=s.session_id, turn_id=turn.turn_id)
        s.finalize("shutdown")  # the turn never ended

    events = _run(session)
    ends = [e for e in events if e.name == "skill.run" and e.is_end]
    assert len(ends) == 1 and ends[0].data == {"outcome": "failed"}


@pytest.mark.parametrize("tool, args, kind", [
    ("memory", {"action": "add", "content": "x"}, "memory.update"),
    ("memory", {"action": "replace", "old_text": "a", "content": "b"}, "memory.update"),
    ("memory", {"action": "remove", "old_text": "a"}, "memory.update"),
    ("memory", {"action": "read"}, "memory.retrieve"),
    ("session_search", {"query": "q"}, "memory.retrieve"),
    ("notes_save", {"text": "q"}, "memory.update"),
    ("read_file", {"path": "q"}, "tool.execute"),
])
def test_book_9_memory_tools_are_classified(tool: str, args: dict[str, Any], kind: str) -> None:
    """BOOK-9: the override map first, then the built-in ``memory`` action, then ``session_search``."""
    def session(host: Host) -> None:
        with host.session() as s, s.turn("x") as turn:
            turn.call_tool(tool, args, lambda **kw: "ok")
            turn.complete("ok")

    events = _run(session, memory_tools={"notes_save": "memory.update"})
    start = next(e for e in events if e.name == tool and e.is_start)
    assert start.metadata["hermes.span_kind"] == kind


def test_every_file_sink_shows_the_skill_events(tmp_path: Path) -> None:
    """The same events reach ATOF lines and ATIF trajectories without error (rows 18-20 for every sink)."""
    config = {"version": 4,
              "atof": {"enabled": True, "sinks": [{"type": "file", "filename": "e.jsonl", "mode": "overwrite"}]},
              "atif": {"enabled": True, "filename_template": "atif-{session_id}.json"}}
    run = capture_export(config, tmp_path, session=_skill_turn("success"))
    names = [line["name"] for line in run.jsonl("e.jsonl")]
    assert "hermes.skill.load" in names and "hermes.skill.lifecycle" in names and names.count("skill.run") == 2
    assert run.documents(), "ATIF wrote its trajectory"
    assert not any("dropped" in k and v for sink in run.stats.values() if isinstance(sink, dict)
                   for k, v in sink.items() if isinstance(v, int))
    json.dumps(run.documents())
