"""Hermes' ``skill_manage`` calls become ``on_skill_lifecycle`` events in the bridge (issue #27, BOOK-19).

Hermes has no skill lifecycle hook: every action of its ``skill_manage`` schema that succeeded is reported by
the normaliser, right before the call's ``post_tool_call``; a failed, refused or staged call is not. Arguments
arrive as a mapping or as JSON text. The memory tool's batch shape is a memory write (BOOK-9).
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from hermes_pipeline.export.classify import tool_span_kind
from hermes_pipeline.hermes.normalise import HermesNormaliser
from hermes_pipeline.hermes.skill_calls import ACTIONS, lifecycle_event

JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
                    max_leaves=10)


def _post(args: Any, result: Any, status: str = "ok") -> dict[str, Any]:
    return {"tool_name": "skill_manage", "args": args, "result": result, "status": status, "session_id": "s1",
            "turn_id": "t1", "tool_call_id": "c1", "task_id": "k", "api_request_id": "r", "duration_ms": 1,
            "error_type": None, "error_message": None, "middleware_trace": []}


@given(st.sampled_from(sorted(ACTIONS)), st.booleans())
def test_each_action_maps_from_a_mapping_or_json_text(action: str, as_text: bool) -> None:
    args = {"action": action, "name": "csv-report", "category": "data", "reason": "weekly"}
    result = json.dumps({"success": True, "message": "ok"})
    event = lifecycle_event(_post(json.dumps(args) if as_text else args, result))
    assert event is not None
    assert event["action"] == ACTIONS[action] and event["skill_name"] == "csv-report"
    assert event["session_id"] == "s1" and event["turn_id"] == "t1" and event["reason"] == "weekly"
    assert event["provenance"] == ("agent_created" if action == "create" else None)


@given(JSON | st.text(max_size=20), JSON | st.text(max_size=20), st.sampled_from(["ok", "error", "blocked", None]))
def test_any_payload_is_read_without_raising(args: Any, result: Any, status: str | None) -> None:
    event = lifecycle_event(_post(args, result, status))  # type: ignore[arg-type]
    assert event is None or event["action"] in ACTIONS.values()


def test_failed_staged_refused_and_unknown_calls_are_not_changes() -> None:
    args = {"action": "patch", "name": "x", "old_string": "a", "new_string": "b"}
    assert lifecycle_event(_post(args, '{"success": false, "error": "no match"}')) is None
    assert lifecycle_event(_post(args, '{"success": true, "staged": true, "pending_id": "p"}')) is None
    assert lifecycle_event(_post(args, '{"success": true}', status="blocked")) is None
    assert lifecycle_event(_post({"action": "view", "name": "x"}, '{"success": true}')) is None
    assert lifecycle_event(_post({"action": "patch", "name": "../x"}, '{"success": true}')) is None
    archived = lifecycle_event(_post({"action": "delete", "name": "x", "absorbed_into": "y"},
                                     '{"success": true, "_archived": true}'))
    assert archived is not None and archived["action"] == "archived" and archived["reason"] == "absorbed into y"


def test_the_normaliser_reports_the_change_before_the_post_tool_call() -> None:
    norm = HermesNormaliser()
    norm.adapt("on_session_start", {"session_id": "s1", "platform": "cli", "model": "m"})
    norm.adapt("pre_llm_call", {"session_id": "s1", "turn_id": "t1", "task_id": "k", "platform": "cli"})
    events = norm.adapt("post_tool_call", _post({"action": "write_file", "name": "etl",
                                                 "file_path": "references/a.md", "file_content": "x"},
                                                '{"success": true}'))
    assert [name for name, _ in events] == ["on_skill_lifecycle", "post_tool_call"]
    assert events[0][1]["action"] == "file_written" and events[0][1]["skill_name"] == "etl"
    other = norm.adapt("post_tool_call", dict(_post({}, "{}"), tool_name="read_file"))
    assert [name for name, _ in other] == ["post_tool_call"]


@given(st.lists(st.fixed_dictionaries({"action": st.sampled_from(["add", "replace", "remove"])}), min_size=1,
                max_size=3), st.booleans())
def test_the_memory_batch_shape_is_a_memory_write(ops: list[dict[str, Any]], as_text: bool) -> None:
    args = {"target": "user", "operations": ops}
    assert tool_span_kind("memory", json.dumps(args) if as_text else args, {}) == "memory.update"  # type: ignore[arg-type]
    assert tool_span_kind("memory", {"target": "user", "operations": []}, {}) == "memory.retrieve"
