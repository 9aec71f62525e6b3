"""The Hermes normaliser with payloads shaped as Hermes Agent 0.19 sends them.

Field sets follow Hermes' call sites: ``agent/conversation_loop.py`` (``pre_api_request``,
``post_api_request``), ``run_agent.py`` (``api_request_error``), ``agent/turn_finalizer.py``
(``transform_llm_output``, ``on_session_end``), ``cli.py`` (the exit safety net),
``tools/approval.py`` (approvals, smart reviews) and ``tools/delegate_tool.py`` (subagents).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from hermes_pipeline.export.classify import approval_outcome
from hermes_pipeline.hermes.normalise import BRIDGE_TRACE_NAME, HermesNormaliser
from hermes_pipeline.hermes.payloads import gateway_fields

SID = "20261201_184707_283bf5"
TASK = "2c02fa82-6f0b-4793-98d0-be453be79aa7"
TURN = f"{SID}:{TASK}:2d8d5034"
RID = f"{TURN}:api:1"
T0 = 1_796_150_832.98


class Clock:
    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def group_a(**extra: Any) -> dict[str, Any]:
    """Hermes' API identity fields (conversation_loop.py / run_agent.py)."""
    return {"task_id": TASK, "turn_id": TURN, "api_request_id": RID, "session_id": SID, "platform": "cli",
            "model": "hermes-demo-1", "provider": "custom", "base_url": "http://127.0.0.1:1/v1",
            "api_mode": "chat_completions", "api_call_count": 1, **extra}


def pre_api(started_at: float) -> dict[str, Any]:
    return group_a(user_message="hi", conversation_history=[{"role": "user", "content": "hi"}],
                   request_messages=[{"role": "system", "content": "You are Hermes."},
                                     {"role": "user", "content": "hi"}],
                   message_count=2, tool_count=18, approx_input_tokens=1688, request_char_count=6752,
                   max_tokens=None, started_at=started_at, middleware_trace=[],
                   request={"method": "POST", "body": {"model": "hermes-demo-1"}})


def api_error(started_at: float, ended_at: float, retry_count: int, retryable: bool) -> dict[str, Any]:
    return group_a(api_duration=ended_at - started_at, started_at=started_at, ended_at=ended_at, status_code=503,
                   retry_count=retry_count, max_retries=3, retryable=retryable, reason="overloaded",
                   error={"type": "APIStatusError", "message": "overloaded"}, request={"method": "POST"})


def post_api(started_at: float, ended_at: float) -> dict[str, Any]:
    return group_a(api_duration=ended_at - started_at, started_at=started_at, ended_at=ended_at,
                   finish_reason="stop", message_count=2, response_model="hermes-demo-1", response={},
                   usage={"input_tokens": 10}, assistant_content_chars=2, assistant_tool_call_count=0,
                   assistant_message=SimpleNamespace(content="ok", tool_calls=None))


def start_turn(n: HermesNormaliser) -> None:
    n.adapt("on_session_start", {"session_id": SID, "model": "hermes-demo-1", "platform": "cli"})
    n.adapt("pre_llm_call", {"session_id": SID, "task_id": TASK, "turn_id": TURN, "user_message": "hi",
                             "conversation_history": [], "is_first_turn": True, "model": "hermes-demo-1",
                             "platform": "cli", "sender_id": ""})


def only(events: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    assert len(events) == 1, events
    return events[0][1]


def test_retried_attempts_get_their_own_start_and_retry_count() -> None:
    """Hermes reuses the first started_at for every attempt and sends no retry_count on pre_api_request
    (OBS-26: each attempt is its own pre/terminal pair): each attempt is timed from its own start."""
    clock = Clock(T0 + 0.004)
    n = HermesNormaliser(clock=clock)
    start_turn(n)
    first = only(n.adapt("pre_api_request", pre_api(T0)))
    assert first["started_at"] == T0 and first["retry_count"] == 0
    assert first["system_prompt"] == "You are Hermes."
    clock.now = T0 + 0.25
    err = only(n.adapt("api_request_error", api_error(T0, T0 + 0.25, retry_count=0, retryable=True)))
    assert err["started_at"] == T0 and err["api_duration"] == pytest.approx(0.25)
    clock.now = T0 + 3.1  # Hermes slept through its backoff; its payload still says started_at = T0
    second = only(n.adapt("pre_api_request", pre_api(T0)))
    assert second["started_at"] == T0 + 3.1 and second["retry_count"] == 1
    ok = only(n.adapt("post_api_request", post_api(T0, T0 + 3.3)))
    assert ok["started_at"] == T0 + 3.1 and ok["api_duration"] == pytest.approx(0.2)
    # Hermes' NormalizedResponse, readable as a mapping too
    assert ok["assistant_message"]["content"] == "ok" and ok["assistant_message"].content == "ok"


def test_failed_turn_is_closed_as_failed_when_the_session_is_finalized() -> None:
    """Hermes returns without on_session_end when the provider call fails for good: the turn is ended
    as failed (not interrupted) before on_session_finalize."""
    n = HermesNormaliser(clock=Clock())
    start_turn(n)
    n.adapt("pre_api_request", pre_api(T0))
    n.adapt("api_request_error", api_error(T0, T0 + 0.1, retry_count=0, retryable=False))
    events = n.adapt("on_session_finalize", {"session_id": SID, "platform": "cli", "reason": "shutdown"})
    assert [h for h, _ in events] == ["on_session_end", "on_session_finalize"]
    end = events[0][1]
    assert end["turn_id"] == TURN and end["task_id"] == TASK
    assert end["failed"] is True and end["completed"] is False and end["interrupted"] is False
    assert end["turn_exit_reason"] == "api_error" and end["api_request_id"] == RID


def test_turn_left_open_by_an_unfinished_call_closes_as_interrupted_with_its_reason() -> None:
    n = HermesNormaliser(clock=Clock())
    start_turn(n)
    (end,) = [p for h, p in n.close_all("shutdown") if h == "on_session_end"]
    assert end["interrupted"] is True and end["failed"] is False and end["reason"] == "shutdown"


def test_on_session_end_gets_failed_and_exit_reason_and_the_cli_safety_net_gets_the_turn() -> None:
    n = HermesNormaliser(clock=Clock())
    start_turn(n)
    # cli.py's exit safety net: no task_id, no turn_id
    end = only(n.adapt("on_session_end", {"session_id": SID, "completed": False, "interrupted": True,
                                          "model": "hermes-demo-1", "platform": "cli", "reason": "shutdown"}))
    assert end["turn_id"] == TURN and end["task_id"] == TASK
    assert end["failed"] is False and end["turn_exit_reason"] == "interrupted"
    assert n.close_all() == []  # nothing left open: the turn was ended once


def test_completed_turn_and_transform_llm_output_turn_id() -> None:
    n = HermesNormaliser(clock=Clock())
    start_turn(n)
    out = only(n.adapt("transform_llm_output", {"response_text": "done", "session_id": SID,
                                                "model": "hermes-demo-1", "platform": "cli"}))
    assert out["turn_id"] == TURN
    end = only(n.adapt("on_session_end", {"session_id": SID, "task_id": TASK, "turn_id": TURN, "completed": True,
                                          "interrupted": False, "model": "hermes-demo-1", "platform": "cli"}))
    assert end["failed"] is False and end["turn_exit_reason"] == "completed"


def test_next_turn_closes_a_turn_hermes_abandoned() -> None:
    n = HermesNormaliser(clock=Clock())
    start_turn(n)
    n.adapt("pre_api_request", pre_api(T0))
    n.adapt("api_request_error", api_error(T0, T0 + 0.1, retry_count=2, retryable=False))
    events = n.adapt("pre_llm_call", {"session_id": SID, "task_id": "t2", "turn_id": "turn-2", "user_message": "again",
                                      "conversation_history": [], "is_first_turn": False, "model": "m",
                                      "platform": "cli", "sender_id": ""})
    assert [h for h, _ in events] == ["on_session_end", "pre_llm_call"]
    assert events[0][1]["turn_id"] == TURN and events[0][1]["failed"] is True


def tool_payload(tool: str = "terminal", call_id: str = "call_3") -> dict[str, Any]:
    return {"tool_name": tool, "args": {"command": "rm -rf /tmp/x"}, "task_id": TASK, "session_id": SID,
            "tool_call_id": call_id, "turn_id": TURN, "api_request_id": RID, "middleware_trace": []}


def approval(surface: str, **extra: Any) -> dict[str, Any]:
    """tools/approval.py: no session_id; turn_id and tool_call_id come from the call context."""
    return {"command": "rm -rf /tmp/x", "description": "recursive delete", "pattern_key": "recursive delete",
            "pattern_keys": ["recursive delete"], "session_key": "default", "surface": surface,
            "turn_id": TURN, "tool_call_id": "call_3", **extra}


def test_approvals_are_attached_to_their_session_and_a_cli_timeout_is_a_timeout() -> None:
    """OBS-43 pairing, and SM-24's mapping fed the real outcome: Hermes' CLI prompt returns "deny" when it
    times out; a deny that arrives after approvals.timeout is reported as choice "timeout"."""
    clock = Clock()
    n = HermesNormaliser(clock=clock, approval_timeout=60)
    start_turn(n)
    n.adapt("pre_tool_call", tool_payload())
    req = only(n.adapt("pre_approval_request", approval("cli")))
    assert req["session_id"] == SID
    clock.now += 60.02
    resp = only(n.adapt("post_approval_response", approval("cli", choice="deny")))
    assert resp["session_id"] == SID and resp["choice"] == "timeout" and resp["hermes_choice"] == "deny"
    assert resp["decided_by"] == "timeout" and approval_outcome(resp["choice"]) == "timed_out"
    # an answer given in time stays what the user said
    n.adapt("pre_approval_request", approval("cli"))
    clock.now += 2
    resp = only(n.adapt("post_approval_response", approval("cli", choice="deny")))
    assert resp["choice"] == "deny" and resp["decided_by"] == "user" and "hermes_choice" not in resp


def test_approval_without_turn_context_uses_the_only_open_turn() -> None:
    n = HermesNormaliser(clock=Clock())
    start_turn(n)
    req = only(n.adapt("pre_approval_request", approval("cli", turn_id="", tool_call_id="")))
    assert req["session_id"] == SID


def test_smart_decisions_pass_through_with_decided_by() -> None:
    n = HermesNormaliser(clock=Clock())
    start_turn(n)
    n.adapt("pre_tool_call", tool_payload())
    n.adapt("pre_approval_request", approval("smart"))
    resp = only(n.adapt("post_approval_response", approval("smart", choice="smart_approve", decided_by="aux_llm")))
    assert resp["choice"] == "smart_approve" and resp["decided_by"] == "aux_llm" and resp["session_id"] == SID
    assert approval_outcome("smart_approve") == "approved" and approval_outcome("smart_deny") == "denied"


def test_escalated_smart_review_gets_its_response_before_the_human_prompt() -> None:
    """An 'escalate' verdict fires no post_approval_response in Hermes: every request still gets one."""
    n = HermesNormaliser(clock=Clock())
    start_turn(n)
    n.adapt("pre_tool_call", tool_payload())
    n.adapt("pre_approval_request", approval("smart"))
    events = n.adapt("pre_approval_request", approval("cli"))
    assert [h for h, _ in events] == ["post_approval_response", "pre_approval_request"]
    assert events[0][1]["surface"] == "smart" and events[0][1]["choice"] == "escalate"
    assert events[0][1]["session_id"] == SID


def refused_post(**extra: Any) -> dict[str, Any]:
    """model_tools.py: the terminal tool's refusal result, status derived from its "error" member."""
    result = '{"output": "", "exit_code": -1, "error": "Command denied: recursive delete.", "status": "blocked"}'
    return dict(tool_payload(), result=result, duration_ms=3, status="error", error_type="tool_error",
                error_message="Command denied: recursive delete.", **extra)


@pytest.mark.parametrize(("surface", "choice", "wait", "error_type"), [
    ("cli", "deny", 1.0, "approval_denied"),
    ("cli", "deny", 60.02, "approval_timeout"),  # Hermes' CLI reports its timeout as deny
    ("gateway", "timeout", 1.0, "approval_timeout"),
    ("smart", "smart_deny", 0.5, "approval_denied"),
])
def test_tool_call_refused_by_its_approval_ends_blocked(surface: str, choice: str, wait: float,
                                                        error_type: str) -> None:
    """Spec 01 §7.5: a denied approval gate is status "blocked" (FMT-66: error.type "blocked"); Hermes says
    "error" / "tool_error". Denied by the user, by smart_deny (decided_by aux_llm) or by the timeout."""
    clock = Clock()
    n = HermesNormaliser(clock=clock, approval_timeout=60)
    start_turn(n)
    n.adapt("pre_tool_call", tool_payload())
    n.adapt("pre_approval_request", approval(surface))
    clock.now += wait
    extra = {"decided_by": "aux_llm"} if surface == "smart" else {}
    n.adapt("post_approval_response", approval(surface, choice=choice, **extra))
    post = n.adapt("post_tool_call", refused_post())[-1][1]
    assert post["status"] == "blocked" and post["error_type"] == error_type
    assert post["hermes_status"] == "error" and post["hermes_error_type"] == "tool_error"
    assert post["error_message"] == "Command denied: recursive delete."


@pytest.mark.parametrize("choice", ["once", "session", "always", "cancelled"])
def test_tool_call_whose_approval_did_not_refuse_it_keeps_its_status(choice: str) -> None:
    """An approved (or withdrawn) request refuses nothing: Hermes' status stands."""
    n = HermesNormaliser(clock=Clock())
    start_turn(n)
    n.adapt("pre_tool_call", tool_payload())
    n.adapt("pre_approval_request", approval("cli"))
    n.adapt("post_approval_response", approval("cli", choice=choice))
    post = n.adapt("post_tool_call", refused_post())[-1][1]
    assert post["status"] == "error" and post["error_type"] == "tool_error" and "hermes_status" not in post


def test_the_last_decision_on_a_call_is_what_counts() -> None:
    n = HermesNormaliser(clock=Clock())
    start_turn(n)
    n.adapt("pre_tool_call", tool_payload())
    n.adapt("pre_approval_request", approval("smart"))
    n.adapt("post_approval_response", approval("smart", choice="smart_deny", decided_by="aux_llm"))
    n.adapt("pre_approval_request", approval("cli"))
    n.adapt("post_approval_response", approval("cli", choice="once"))
    ok = dict(tool_payload(), result='{"output": "", "exit_code": 0}', duration_ms=3, status="ok", error_type=None,
              error_message=None)
    assert n.adapt("post_tool_call", ok)[-1][1]["status"] == "ok"


def test_unanswered_approval_is_withdrawn_when_its_tool_call_ends() -> None:
    n = HermesNormaliser(clock=Clock())
    start_turn(n)
    n.adapt("pre_tool_call", tool_payload())
    n.adapt("pre_approval_request", approval("gateway"))
    post = dict(tool_payload(), result="{}", duration_ms=3, status="ok", error_type=None, error_message=None)
    events = n.adapt("post_tool_call", post)
    assert [h for h, _ in events] == ["post_approval_response", "post_tool_call"]
    assert events[0][1]["choice"] == "cancelled"


def test_subagent_stop_completed_from_its_start() -> None:
    clock = Clock()
    n = HermesNormaliser(clock=clock)
    start_turn(n)
    n.adapt("subagent_start", {"parent_session_id": SID, "parent_turn_id": TURN, "parent_subagent_id": None,
                               "child_session_id": "child-1", "child_subagent_id": "sa-1", "child_role": "leaf",
                               "child_goal": "count files"})
    # delegate_tool.py: no child_subagent_id, parent_turn_id read at stop time
    stop = only(n.adapt("subagent_stop", {"parent_session_id": SID, "parent_turn_id": "a-later-turn",
                                          "child_session_id": "child-1", "child_role": "leaf",
                                          "child_summary": "3 files", "child_status": "completed",
                                          "duration_ms": 1200}))
    assert stop["child_subagent_id"] == "sa-1" and stop["parent_turn_id"] == TURN
    assert stop["hermes_parent_turn_id"] == "a-later-turn" and stop["tool_call_history"] == []


def spawn(n: HermesNormaliser, child: str) -> None:
    n.adapt("subagent_start", {"parent_session_id": SID, "parent_turn_id": TURN, "parent_subagent_id": None,
                               "child_session_id": child, "child_subagent_id": "sa-2", "child_role": "leaf",
                               "child_goal": "long job"})
    n.adapt("pre_llm_call", {"session_id": child, "task_id": "ct", "turn_id": "child-turn", "user_message": "go",
                             "conversation_history": [], "is_first_turn": True, "model": "m", "platform": "cli",
                             "sender_id": None})


def test_background_subagent_outliving_its_parent_turn_goes_on_until_its_own_stop() -> None:
    """Hermes runs top-level delegations in the background: the parent turn can end while the child
    still runs. Nothing is stopped for it (issue #27: an early end made the child's late hooks open a
    second child session); its later hooks and its real stop come through as they are
    (tests/hermes/test_subagent_race.py)."""
    clock = Clock()
    n = HermesNormaliser(clock=clock)
    start_turn(n)
    spawn(n, "child-bg")
    clock.now += 1.5
    events = n.adapt("on_session_end", {"session_id": SID, "task_id": TASK, "turn_id": TURN, "completed": True,
                                        "interrupted": False, "model": "m", "platform": "cli"})
    assert [h for h, _ in events] == ["on_session_end"]
    finalize = n.adapt("on_session_finalize", {"session_id": SID, "platform": "cli", "reason": "shutdown"})
    assert [h for h, _ in finalize] == ["on_session_finalize"]  # the child outlives its parent session too
    late = n.adapt("post_api_request", dict(post_api(T0, T0 + 2), session_id="child-bg", turn_id="child-turn",
                                            api_request_id="child-turn:api:1"))
    assert [h for h, _ in late] == ["post_api_request"]  # no start inferred for a known child
    late = n.adapt("subagent_stop", {"parent_session_id": SID, "parent_turn_id": TURN, "child_session_id": "child-bg",
                                     "child_role": "leaf", "child_summary": "ok", "child_status": "completed",
                                     "duration_ms": 2500})
    assert [h for h, _ in late] == ["on_session_end", "subagent_stop"]  # its own open turn first
    assert late[1][1]["child_subagent_id"] == "sa-2" and late[1][1]["child_status"] == "completed"
    assert n.close_all() == []


def test_late_stop_of_a_detached_child_that_did_nothing_more_still_reports_how_it_ended() -> None:
    """Issue #12 "nothing lost": the real stop of a child detached at its parent turn's end is passed on,
    completed from its start (the scope plugin places it after the detachment, tests/hermes/test_subagent_race.py)."""
    n = HermesNormaliser(clock=Clock())
    start_turn(n)
    n.adapt("subagent_start", {"parent_session_id": SID, "parent_turn_id": TURN, "child_session_id": "c",
                               "child_subagent_id": "sa-3", "child_role": "leaf", "child_goal": "g"})
    n.adapt("on_session_end", {"session_id": SID, "task_id": TASK, "turn_id": TURN, "completed": True,
                               "interrupted": False, "model": "m", "platform": "cli"})
    stop = only(n.adapt("subagent_stop", {"parent_session_id": SID, "parent_turn_id": TURN, "child_session_id": "c",
                                          "child_status": "completed", "duration_ms": 10}))
    assert stop["child_status"] == "completed" and stop["child_subagent_id"] == "sa-3"
    assert stop["child_role"] == "leaf"
    assert n.adapt("subagent_stop", {"parent_session_id": SID, "parent_turn_id": TURN, "child_session_id": "c",
                                     "child_status": "completed", "duration_ms": 10})[0][1].get("child_subagent_id") \
        is None  # a second stop of the same child is not completed from a start any more


def test_child_hook_before_its_start_gets_an_inferred_start_and_the_real_start_is_folded_in() -> None:
    """A hook of a child (platform "subagent") before subagent_start, with a delegate_task call open:
    a start is inferred first; the real start then dispatches nothing and completes the child's stop."""
    n = HermesNormaliser(clock=Clock())
    start_turn(n)
    n.adapt("pre_tool_call", tool_payload("delegate_task", "call_d"))
    events = n.adapt("pre_llm_call", {"session_id": "kid", "task_id": "kt", "turn_id": "kid-turn",
                                      "user_message": "go", "conversation_history": [], "is_first_turn": True,
                                      "model": "m", "platform": "subagent", "sender_id": None})
    assert [h for h, _ in events] == ["subagent_start", "pre_llm_call"]
    assert events[0][1]["parent_session_id"] == SID and events[0][1]["parent_turn_id"] == TURN
    assert events[0][1]["child_session_id"] == "kid" and events[0][1]["hermes_inferred"] is True
    assert n.adapt("subagent_start", {"parent_session_id": SID, "parent_turn_id": TURN, "child_session_id": "kid",
                                      "child_subagent_id": "sa-9", "child_role": "leaf", "child_goal": "g"}) == []
    stop = n.adapt("subagent_stop", {"parent_session_id": SID, "parent_turn_id": TURN, "child_session_id": "kid",
                                     "child_status": "completed", "duration_ms": 5})[-1][1]
    assert stop["child_subagent_id"] == "sa-9" and stop["child_role"] == "leaf"


def test_subagent_still_running_when_the_bridge_stops_is_stopped_as_interrupted() -> None:
    """The one-shot case: the parent session ends (its turn never ended) with the child running; the
    child goes on past the finalize, and when the bridge stops its turn and the child end as
    interrupted, before its parent is closed."""
    clock = Clock()
    n = HermesNormaliser(clock=clock)
    start_turn(n)
    spawn(n, "child-bg")
    clock.now += 4.5
    events = n.adapt("on_session_finalize", {"session_id": SID, "platform": "cli", "reason": "shutdown"})
    assert [h for h, _ in events] == ["on_session_end", "on_session_finalize"]
    assert events[0][1]["session_id"] == SID and events[0][1]["interrupted"] is True
    events = n.close_all("shutdown")
    assert [h for h, _ in events] == ["on_session_end", "subagent_stop"]
    child_end, stop = events[0][1], events[1][1]
    assert child_end["session_id"] == "child-bg" and child_end["interrupted"] is True
    assert stop["child_status"] == "interrupted" and stop["child_outcome"] == "unfinished_at_shutdown"
    assert stop["duration_ms"] == 4500 and stop["child_subagent_id"] == "sa-2"
    assert n.close_all() == []


def test_engine_trace_entries_replace_the_bridge_entry() -> None:
    n = HermesNormaliser(clock=Clock())
    start_turn(n)
    ours = [{"source": "request_defaults", "reason": "filled temperature"}, {"source": "plugin"}]
    n.remember_llm_trace(RID, ours)
    payload = pre_api(T0)
    payload["middleware_trace"] = [{"source": "other-hermes-plugin"},
                                   {"source": "hermes_pipeline", "name": BRIDGE_TRACE_NAME, "reason": "x"}]
    out = only(n.adapt("pre_api_request", payload))
    assert out["middleware_trace"] == [{"source": "other-hermes-plugin"}, *ours]
    n.remember_tool_trace("call_3", [{"source": "policy", "reason": "normalized path"}])
    # tool_execution middleware gets no middleware_trace from Hermes at all
    assert n.tool_trace("call_3", None) == [{"source": "policy", "reason": "normalized path"}]
    pre = only(n.adapt("pre_tool_call", dict(tool_payload(), middleware_trace=[
        {"source": "hermes_pipeline", "name": BRIDGE_TRACE_NAME}])))
    assert pre["middleware_trace"] == [{"source": "policy", "reason": "normalized path"}]
    assert n.tool_context(SID) == {"platform": "cli", "model": "hermes-demo-1", "provider": "custom",
                                   "api_mode": "chat_completions"}


def test_agent_version_and_toolset_are_added() -> None:
    n = HermesNormaliser(clock=Clock(), agent_version="0.19.0", toolset_of={"terminal": "terminal"}.get)
    events = n.adapt("on_session_start", {"session_id": SID, "model": "m", "platform": "cli"})
    assert events[0][1]["agent_version"] == "0.19.0"
    assert only(n.adapt("pre_tool_call", tool_payload()))["toolset"] == "terminal"
    assert "toolset" not in only(n.adapt("pre_tool_call", tool_payload("mystery", "call_9")))


def test_gateway_fields_from_a_message_event() -> None:
    """gateway/platforms/base.py MessageEvent (source.platform and message_type are enums) and the
    session store's own key function; nothing is created in the store."""
    event = SimpleNamespace(text="hi", message_type=SimpleNamespace(value="text"),
                            source=SimpleNamespace(platform=SimpleNamespace(value="telegram"), chat_id="42"))

    class Store:
        def __init__(self) -> None:
            self._entries = {"agent:main:telegram:dm:42": SimpleNamespace(session_id="sess-42")}

        def _generate_session_key(self, source: object) -> str:
            return "agent:main:telegram:dm:42"

    assert gateway_fields(event, Store()) == {"platform": "telegram", "event_type": "text",
                                              "session_key": "agent:main:telegram:dm:42", "session_id": "sess-42"}
    assert gateway_fields(SimpleNamespace(), object())["session_id"] == ""
