"""Background subagents through the bridge, whatever the order their hooks arrive in (issue #12).

Hermes runs a top-level ``delegate_task`` in the background: the child agent fires its hooks on
another thread, with none of the parent's context, and can go on after the parent turn and even the
parent session ended. The racy orders are fed here directly, through the real normaliser, the
deferred scope plugin and the ATOF and ATIF sinks (:func:`hermes_pipeline.testing.capture_export`).
Payloads are shaped as Hermes Agent 0.19 sends them (``tools/delegate_tool.py``: the child runs with
``platform = "subagent"``; ``subagent_stop`` has no ``child_subagent_id``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_pipeline.export.events import END, START, ScopeEvent
from hermes_pipeline.hermes.bridge import Bridge
from hermes_pipeline.hermes.normalise import HermesNormaliser
from hermes_pipeline.testing import ExportCapture, capture_export

PARENT = "20261201_213617_006c31"
CHILD = "20261201_213626_c2b6f8"
TURN = f"{PARENT}:task:1dd32d"
CHILD_TURN = f"{CHILD}:ctask:95e143"
CONFIG = {"version": 4, "atof": {"enabled": True, "sinks": [{"type": "file", "filename": "events.jsonl"}]},
          "atif": {"enabled": True}}

Step = tuple[str, dict[str, Any]]


def turn_start(sid: str, turn: str, platform: str) -> Step:
    return ("pre_llm_call", {"session_id": sid, "task_id": turn.split(":")[1], "turn_id": turn, "user_message": "go",
                             "conversation_history": [], "is_first_turn": True, "model": "hermes-demo-1",
                             "platform": platform, "sender_id": None})


def attempt(hook: str, sid: str, turn: str, platform: str, n: int = 1) -> Step:
    fields: dict[str, Any] = {"session_id": sid, "task_id": turn.split(":")[1], "turn_id": turn,
                              "api_request_id": f"{turn}:api:{n}", "platform": platform, "model": "hermes-demo-1",
                              "provider": "custom", "base_url": "http://127.0.0.1:1/v1", "api_mode": "chat_completions",
                              "api_call_count": n, "middleware_trace": [], "request": {"method": "POST"}}
    if hook == "post_api_request":
        fields.update(api_duration=0.1, finish_reason="stop", response_model="hermes-demo-1", response={},
                      usage={"input_tokens": 10})
    return (hook, fields)


def turn_end(sid: str, turn: str, platform: str) -> Step:
    return ("on_session_end", {"session_id": sid, "task_id": turn.split(":")[1], "turn_id": turn, "completed": True,
                               "interrupted": False, "model": "hermes-demo-1", "platform": platform})


def delegate(hook: str) -> Step:
    fields: dict[str, Any] = {"tool_name": "delegate_task", "args": {"goal": "count the files"}, "task_id": "task",
                              "session_id": PARENT, "tool_call_id": "call_delegate", "turn_id": TURN,
                              "api_request_id": f"{TURN}:api:1", "middleware_trace": []}
    if hook == "post_tool_call":
        fields.update(result='{"status": "dispatched"}', duration_ms=30, status="ok", error_type=None,
                      error_message=None)
    return (hook, fields)


SUBAGENT_START: Step = ("subagent_start", {"parent_session_id": PARENT, "parent_turn_id": TURN,
                                           "parent_subagent_id": None, "child_session_id": CHILD,
                                           "child_subagent_id": "sa-1", "child_role": "leaf",
                                           "child_goal": "count the files"})
SUBAGENT_STOP: Step = ("subagent_stop", {"parent_session_id": PARENT, "parent_turn_id": TURN,
                                         "child_session_id": CHILD, "child_role": "leaf", "child_summary": "3 files",
                                         "child_status": "completed", "duration_ms": 900})
PARENT_OPEN: list[Step] = [("on_session_start", {"session_id": PARENT, "model": "hermes-demo-1", "platform": "cli"}),
                           turn_start(PARENT, TURN, "cli"), attempt("pre_api_request", PARENT, TURN, "cli"),
                           attempt("post_api_request", PARENT, TURN, "cli"), delegate("pre_tool_call")]
PARENT_CLOSE: list[Step] = [turn_end(PARENT, TURN, "cli"),
                            ("on_session_finalize", {"session_id": PARENT, "platform": "cli", "reason": "shutdown"})]
CHILD_BEGIN: list[Step] = [turn_start(CHILD, CHILD_TURN, "subagent"), attempt("pre_api_request", CHILD, CHILD_TURN,
                                                                              "subagent")]
CHILD_FINISH: list[Step] = [attempt("post_api_request", CHILD, CHILD_TURN, "subagent"),
                            turn_end(CHILD, CHILD_TURN, "subagent")]


def on_thread(steps: list[Step]) -> Callable[[Bridge], None]:
    """The child agent's hooks, fired on a thread of their own (no context of the parent's)."""

    def run(bridge: Bridge) -> None:
        worker = threading.Thread(target=lambda: [bridge.forward(h, dict(p)) for h, p in steps],
                                  name="async-delegate_0")
        worker.start()
        worker.join()

    return run


def run(tmp_path: Path, *parts: list[Step] | Callable[[Bridge], None]) -> ExportCapture:
    def session(host: Any) -> None:
        bridge = Bridge(host.engine, HermesNormaliser())
        for part in parts:
            if callable(part):
                part(bridge)
            else:
                for hook, payload in part:
                    bridge.forward(hook, dict(payload))
        bridge.close("shutdown")

    return capture_export(CONFIG, tmp_path, session=session)


def starts(capture: ExportCapture, name: str | None = None, category: str | None = None) -> list[ScopeEvent]:
    return [e for e in capture.events if e.phase == START and (name is None or e.name == name)
            and (category is None or e.category == category)]


def data(event: ScopeEvent) -> dict[str, Any]:
    assert isinstance(event.data, dict)
    return event.data


def end_of(capture: ExportCapture, start: ScopeEvent) -> ScopeEvent:
    (end,) = [e for e in capture.events if e.phase == END and e.uuid == start.uuid]
    return end


def check_one_root_and_child_nested(capture: ExportCapture,
                                    parent_uuid: Callable[[ExportCapture], int]) -> list[ScopeEvent]:
    """FMT-20 one root (the parent session); note 5 every child session scope under the delegating call;
    FMT-7 every start paired; nothing of the child closed as an orphan. Returns the child's session scopes."""
    sessions = starts(capture, "hermes.session")
    roots = [s for s in sessions if s.parent_uuid is None]
    assert [r.metadata["hermes.session_id"] for r in roots] == [PARENT]
    children = [s for s in sessions if s.metadata["hermes.session_id"] == CHILD]
    assert children and all(c.metadata.get("hermes.scope_role") == "subagent" for c in children)
    assert all(c.parent_uuid == parent_uuid(capture) for c in children)
    assert all(e.root_uuid == roots[0].uuid for e in capture.events), "one trace: every event under the parent's root"
    ended = {e.uuid for e in capture.events if e.phase == END}
    assert all(s.uuid in ended for s in starts(capture))
    child_ends = [e for e in capture.events if e.phase == END and e.metadata.get("hermes.session_id") == CHILD]
    assert all(e.metadata.get("hermes.close_reason") != "orphan" for e in child_ends)
    # the ATOF file says the same: one root line
    lines = capture.jsonl("events.jsonl")
    root_lines = [e for e in lines if e["name"] == "hermes.session" and e["scope_category"] == "start"
                  and e["parent_uuid"] is None]
    assert [e["metadata"]["hermes.session_id"] for e in root_lines] == [PARENT]
    return children


def delegating_call(capture: ExportCapture) -> int:
    (tool,) = starts(capture, "delegate_task", "tool")
    return tool.uuid


def test_child_outliving_its_parent_turn_and_session_stays_under_the_delegating_call(tmp_path: Path) -> None:
    """The order measured on a loaded machine (issues #12, #27): the child's first attempt starts while the
    parent turn runs; the parent turn ends and the parent session is finalized; then, on the child's
    thread, its attempt ends, its turn ends and its stop arrives. The child keeps its one session scope
    under the delegating call, its late attempt end lands in it, and it ends with the real status
    (FMT-20, note 5, FMT-7) - never a second child session (before #12: a second root; before #27: a
    ``continued`` second child scope)."""
    capture = run(tmp_path, PARENT_OPEN, [SUBAGENT_START], on_thread(CHILD_BEGIN),
                  [delegate("post_tool_call"), attempt("pre_api_request", PARENT, TURN, "cli", 2),
                   attempt("post_api_request", PARENT, TURN, "cli", 2)],
                  PARENT_CLOSE, on_thread(CHILD_FINISH + [SUBAGENT_STOP]))
    (child,) = check_one_root_and_child_nested(capture, delegating_call)
    final = end_of(capture, child)
    assert data(final)["child_status"] == "completed" and data(final)["child_summary"] == "3 files"
    (root,) = [s for s in starts(capture, "hermes.session") if s.parent_uuid is None]
    assert final.timestamp_us > end_of(capture, root).timestamp_us  # it really outlived its parent
    (llm,) = [s for s in starts(capture, "llm.call") if s.metadata["hermes.session_id"] == CHILD]
    assert end_of(capture, llm).phase == END and "hermes.close_reason" not in end_of(capture, llm).metadata
    (trajectory,) = [d for d in capture.documents(".json") if d["extra"]["hermes"].get("session_id") == PARENT]
    (sub,) = trajectory["subagent_trajectories"]
    assert sub["session_id"] == capture.uuid(child)  # FMT-43: the parent's file, rewritten with the whole child
    assert sub["extra"]["hermes"].get("child_status", "completed") == "completed"


def test_late_stop_of_a_child_that_did_nothing_more_ends_its_one_session(tmp_path: Path) -> None:
    """The child fires nothing after its parent turn ended but its stop: the stop ends the child's one
    session scope with how it really ended, under the delegating call, without reopening anything (FMT-20)."""
    capture = run(tmp_path, PARENT_OPEN, [SUBAGENT_START], on_thread(CHILD_BEGIN + CHILD_FINISH),
                  [delegate("post_tool_call")], PARENT_CLOSE, on_thread([SUBAGENT_STOP]))
    (child,) = check_one_root_and_child_nested(capture, delegating_call)
    assert data(end_of(capture, child))["child_status"] == "completed"
    assert len(starts(capture, "hermes.session")) == 2


def test_child_hooks_before_subagent_start_nest_under_the_open_delegation(tmp_path: Path) -> None:
    """The child's first hooks reach the bridge, from the child's thread, before ``subagent_start``: the
    child is still one session scope, under the delegating call, ended by its stop (FMT-20, note 5)."""
    capture = run(tmp_path, PARENT_OPEN, on_thread(CHILD_BEGIN), [SUBAGENT_START],
                  on_thread(CHILD_FINISH + [SUBAGENT_STOP]), [delegate("post_tool_call")], PARENT_CLOSE)
    (child,) = check_one_root_and_child_nested(capture, delegating_call)
    end = end_of(capture, child)
    assert data(end)["child_status"] == "completed" and "hermes.close_reason" not in end.metadata
    (llm,) = [s for s in starts(capture, "llm.call") if s.metadata["hermes.session_id"] == CHILD]
    (child_turn,) = [s for s in starts(capture, "agent.run") if s.metadata["hermes.session_id"] == CHILD]
    assert llm.parent_uuid == child_turn.uuid and child_turn.parent_uuid == child.uuid


def test_child_hooks_before_subagent_start_after_the_delegation_returned_nest_under_the_turn(
        tmp_path: Path) -> None:
    """Same, when the delegating call has already returned: the child sits under the parent turn (note 5)."""
    def parent_turn(capture: ExportCapture) -> int:
        (turn,) = [s for s in starts(capture, "agent.run") if s.metadata["hermes.session_id"] == PARENT]
        return turn.uuid

    capture = run(tmp_path, PARENT_OPEN, [delegate("post_tool_call")], on_thread(CHILD_BEGIN), [SUBAGENT_START],
                  on_thread(CHILD_FINISH + [SUBAGENT_STOP]), PARENT_CLOSE)
    (child,) = check_one_root_and_child_nested(capture, parent_turn)
    assert data(end_of(capture, child))["child_status"] == "completed"


def test_child_hooks_with_no_delegation_open_are_not_guessed_into_a_parent(tmp_path: Path) -> None:
    """No delegation is open: nothing is inferred, the session is reported as it came (its own root)."""
    capture = run(tmp_path, [("on_session_start", {"session_id": PARENT, "model": "m", "platform": "cli"}),
                             turn_start(PARENT, TURN, "cli")], on_thread(CHILD_BEGIN + CHILD_FINISH),
                  PARENT_CLOSE)
    roots = [s for s in starts(capture, "hermes.session") if s.parent_uuid is None]
    assert sorted(r.metadata["hermes.session_id"] for r in roots) == sorted([PARENT, CHILD])


# ---------------------------------------------------------------------------------------- every interleaving


def child_tool(hook: str) -> Step:
    """The child's ``read_file`` call (the call of issue #27 that showed twice in the ATIF)."""
    fields: dict[str, Any] = {"tool_name": "read_file", "args": {"path": "notes.txt"}, "task_id": "ctask",
                              "session_id": CHILD, "tool_call_id": "call_5_0", "turn_id": CHILD_TURN,
                              "api_request_id": f"{CHILD_TURN}:api:1", "middleware_trace": []}
    if hook == "post_tool_call":
        fields.update(result='{"content": "3 files"}', duration_ms=20, status="ok", error_type=None,
                      error_message=None)
    return (hook, fields)


PARENT_REST: list[Step] = [SUBAGENT_START, delegate("post_tool_call"), attempt("pre_api_request", PARENT, TURN, "cli", 2),
                           attempt("post_api_request", PARENT, TURN, "cli", 2), *PARENT_CLOSE]
def announcing(step: Step) -> Step:
    """``step`` (a ``post_api_request``) whose response asks for the child's ``read_file`` call."""
    hook, fields = step
    message = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_5_0", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "notes.txt"}'}}]}
    return (hook, {**fields, "finish_reason": "tool_calls", "response": {"assistant_message": message}})


CHILD_RUN: list[Step] = [*CHILD_BEGIN, announcing(attempt("post_api_request", CHILD, CHILD_TURN, "subagent")),
                         child_tool("pre_tool_call"), child_tool("post_tool_call"),
                         attempt("pre_api_request", CHILD, CHILD_TURN, "subagent", 2),
                         attempt("post_api_request", CHILD, CHILD_TURN, "subagent", 2),
                         turn_end(CHILD, CHILD_TURN, "subagent"), SUBAGENT_STOP]


def interleave(parent: list[Step], child: list[Step], picks: list[bool]) -> list[list[Step] | Callable[[Bridge], None]]:
    """``parent`` on the caller's thread and ``child`` on threads of its own, merged in the order ``picks``
    says (``True``: the next parent hook), each side keeping its own order."""
    p, c = list(parent), list(child)
    parts: list[list[Step] | Callable[[Bridge], None]] = []
    for pick in picks:
        if (pick and p) or not c:
            parts.append([p.pop(0)])
        else:
            parts.append(on_thread([c.pop(0)]))
        if not p and not c:
            break
    parts.extend([[step] for step in p])
    parts.extend(on_thread([step]) for step in c)
    return parts


_example = iter(range(10**9))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(picks=st.lists(st.booleans(), min_size=len(PARENT_REST) + len(CHILD_RUN),
                      max_size=len(PARENT_REST) + len(CHILD_RUN)))
def test_any_interleaving_of_a_background_child_gives_one_child_session_and_each_call_once(
        tmp_path: Path, picks: list[bool]) -> None:
    """Issue #27: whatever order the parent's hooks and its background child's hooks reach the bridge in
    (each side in its own order; the child's after the delegating call started), the child is one session
    scope under the delegating call that ends with its real stop (never a second child session, never an
    orphan, FMT-7, FMT-20, note 5), every tool call id is one tool scope in ATOF and one call in the ATIF,
    and one trajectory file holds the parent with the child embedded (FMT-43)."""
    out = tmp_path / f"example-{next(_example)}"
    out.mkdir()
    capture = run(out, PARENT_OPEN, *interleave(PARENT_REST, CHILD_RUN, picks))
    (child,) = check_one_root_and_child_nested(capture, delegating_call)
    end = end_of(capture, child)
    assert data(end)["child_status"] == "completed" and "hermes.close_reason" not in end.metadata
    lines = capture.jsonl("events.jsonl")
    tool_ids = [e["category_profile"]["tool_call_id"] for e in lines
                if e["scope_category"] == "start" and e["category"] == "tool"]
    assert sorted(tool_ids) == ["call_5_0", "call_delegate"]
    assert not [e for e in lines if (e.get("metadata") or {}).get("hermes.close_reason") == "orphan"]
    (doc,) = capture.documents(".json")
    (sub,) = doc["subagent_trajectories"]
    call_ids = [c["tool_call_id"] for d in (doc, sub) for s in d["steps"] for c in s.get("tool_calls") or ()]
    assert len(call_ids) == len(set(call_ids)) and "call_5_0" in call_ids
    results = [r for s in sub["steps"] for r in (s.get("observation") or {}).get("results") or ()]
    assert [r.get("source_call_id") for r in results] == ["call_5_0"]  # its one result, matched to its call
    assert capture.stats["atif"]["trajectories"]["unrouted_events"] == 0


def test_child_interrupted_inside_a_tool_call_ends_it_as_interrupted_not_as_an_orphan(tmp_path: Path) -> None:
    """The order seen with ``chat -q`` (issue #27): the process exits while the background child runs a
    ``read_file``; Hermes interrupts the child, whose turn ends (``interrupted``) before that call's
    ``post_tool_call`` could fire. The call ends ``cancelled`` with ``close_reason = "interrupted"``
    (what happened), not as an orphan, in the child's one session (FMT-7)."""
    interrupted = (turn_end(CHILD, CHILD_TURN, "subagent")[0],
                   {**turn_end(CHILD, CHILD_TURN, "subagent")[1], "completed": False, "interrupted": True})
    stop = (SUBAGENT_STOP[0], {**SUBAGENT_STOP[1], "child_status": "interrupted", "child_summary": None})
    capture = run(tmp_path, PARENT_OPEN, [SUBAGENT_START, delegate("post_tool_call")],
                  on_thread([*CHILD_BEGIN, announcing(attempt("post_api_request", CHILD, CHILD_TURN, "subagent")),
                             child_tool("pre_tool_call")]),
                  PARENT_CLOSE, on_thread([interrupted, stop]))
    (child,) = check_one_root_and_child_nested(capture, delegating_call)
    assert data(end_of(capture, child))["child_status"] == "interrupted"
    (tool,) = starts(capture, "read_file")
    end = end_of(capture, tool)
    assert end.metadata["hermes.close_reason"] == "interrupted" and end.metadata["error.type"] == "cancelled"
