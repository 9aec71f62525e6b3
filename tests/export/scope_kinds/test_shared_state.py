"""What two scope kinds share, through the tracker or an explicit call (issue #29 item 2; FMT-24 rows 3-4,
16-20, FMT-7, FMT-20, BOOK-8): each path is driven through the hooks object and read from the events.

- a session closed with a turn open ends the turn's skill runs first (the skill kind's ``on_session_closing``);
- a late hook of an ended subagent session continues it in place (the subagent kind's ``on_session_closed`` and
  reopener), in the same trace and under the same parent, never as a new root;
- a turn's start ends the gateway dispatch that led to it (the turn kind calls the trigger kind).
"""

from __future__ import annotations

from typing import Any

from hermes_pipeline.export import ScopeEvent, ScopePlugin
from hermes_pipeline.export.events import END, START

TURN: dict[str, Any] = {"task_id": "t", "user_message": "hi", "model": "m", "platform": "cli", "sender_id": None,
                        "agent_version": None}


def _plugin() -> tuple[ScopePlugin, list[ScopeEvent]]:
    seen: list[ScopeEvent] = []
    return ScopePlugin((seen.append,)), seen


def _named(seen: list[ScopeEvent], name: str, phase: str | None) -> list[ScopeEvent]:
    return [e for e in seen if e.name == name and e.phase == phase]


def test_a_closing_session_ends_its_open_turns_skill_runs_before_the_turn() -> None:
    """BOOK-8 / FMT-7: the skill kind ends its ``skill.run`` when another kind closes the session."""
    plugin, seen = _plugin()
    plugin.pre_llm_call(session_id="s", turn_id="u", is_first_turn=True, **TURN)
    plugin.on_skill_lifecycle(action="loaded", skill_name="sk", provenance="user", reason=None, session_id="s",
                              turn_id="u", use_count=1, reused=False, reuse_after_patch=None)
    plugin.on_session_finalize(session_id="s", reason="exit")
    ends = [e for e in seen if e.phase == END]
    assert [e.name for e in ends] == ["skill.run", "agent.run", "hermes.session"]
    skill_end = ends[0]
    assert skill_end.data == {"outcome": "failed"}
    assert skill_end.metadata["hermes.close_reason"] == "session_closed"
    assert skill_end.start is not None and skill_end.start.name == "skill.run"


def test_a_late_hook_of_an_ended_subagent_continues_it_in_place() -> None:
    """FMT-20 / note 5: the continuation has the first segment's parent and root, and says ``continued``."""
    plugin, seen = _plugin()
    plugin.pre_llm_call(session_id="p", turn_id="u", is_first_turn=True, **TURN)
    plugin.subagent_start(parent_session_id="p", parent_turn_id="u", child_session_id="c", child_role="r",
                          child_goal="g")
    plugin.subagent_stop(parent_session_id="p", parent_turn_id="u", child_session_id="c", child_role="r",
                         child_status="running", child_summary=None, duration_ms=1)
    plugin.pre_llm_call(session_id="c", turn_id="cu", is_first_turn=False, **TURN)
    first, second = _named(seen, "hermes.session", START)[1:]
    assert second.data == {"child_role": "r", "continued": True}
    assert (second.parent_uuid, second.root_uuid) == (first.parent_uuid, first.root_uuid)
    assert second.uuid != first.uuid
    assert "resumed" not in (second.data or {})


def test_a_turn_start_ends_the_dispatch_that_led_to_it() -> None:
    """FMT-24 rows 3-4: the ``trigger.process`` scope ends, ``allow``, when its session's turn starts."""
    plugin, seen = _plugin()
    plugin.on_session_start(session_id="s", model="m", platform="telegram", agent_version=None)
    plugin.pre_gateway_dispatch(platform="telegram", event_type="message", session_key="k", session_id="s")
    plugin.post_gateway_dispatch(session_key="k", session_id="s", action="allow")
    assert _named(seen, "trigger.process", END) == []
    plugin.pre_llm_call(session_id="s", turn_id="u", is_first_turn=True, **TURN)
    (end,) = _named(seen, "trigger.process", END)
    assert end.data == {"action": "allow"}
    assert seen.index(end) < seen.index(_named(seen, "agent.run", START)[0])
