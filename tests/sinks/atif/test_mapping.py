"""ATIF v1.7 documents: the §6.2 worked example, the event → step mapping (FMT-46), metrics (§3.6) and the schema."""

from __future__ import annotations

import copy
from typing import Any

import pytest

import hermes_pipeline
from hermes_pipeline import Engine, Host
from hermes_pipeline.export import MemoryDestination, publication
from hermes_pipeline.export.ids import parse_timestamp_us, rfc3339_us, uuid_str
from hermes_pipeline.sinks.atif import build_atif_sink
from hermes_pipeline.sinks.atif.steps import final_metrics, step_metrics

from tests.sinks.atif._support import (ATIF_VALIDATOR, Pipeline, Stream, agent_steps, assistant, documents, memory_atif_plugin,
                            results)
from tests.sinks.atof._support import ends, starts
from tests._scripted import Overloaded
from hermes_pipeline.testing import scripted_provider as scripted
from hermes_pipeline.testing import chat_response
from tests.sinks.atof.test_lifecycle import CALL, FINAL, HISTORY, S, worked_example


def call(cid: str | None, name: str, arguments: str = "{}") -> dict[str, Any]:
    return {**({"id": cid} if cid else {}), "type": "function", "function": {"name": name, "arguments": arguments}}


T0 = 1_788_257_700.0  # 2026-09-01T10:15:00Z, the worked example's clock


@pytest.fixture
def example_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hook times of the worked example (the LLM hooks carry their own started_at / ended_at)."""
    offsets = [0.0, 0.010, 0.020, 2.230, 2.240, 2.255, 2.260, 3.120, 3.130, 3.140, 5.0]
    stamps = [int((T0 + offset) * 1_000_000) * 1000 for offset in offsets]
    real = publication.time_ns
    monkeypatch.setattr(publication, "time_ns", lambda: stamps.pop(0) if stamps else real())


def test_fmt_46_worked_example_6_2(engine: Engine, example_clock: None) -> None:
    """§6.2 / FMT-42 / FMT-46 / §3.6: the worked example's trajectory, exactly (UUIDs and times from the ATOF stream)."""
    pipeline = Pipeline(engine, atif={"include_llm_payloads": False}, toolsets={"read_file": "file"})
    worked_example(engine)
    pipeline.shutdown()
    events = pipeline.events()
    [doc] = pipeline.documents()
    [item] = pipeline.atif_dest.items
    session, turn, llm1, tool, llm2 = (events[i]["uuid"] for i in (0, 1, 2, 4, 6))
    # FMT-50 default template; the session's file takes its first run's id (one run, one id: issue #27)
    assert item.name == f"hermes-atif-{turn}.json" and not item.partial

    def ancestry(function_id: str) -> dict[str, str]:
        return {"function_id": function_id, "function_name": "llm.call", "parent_id": turn, "parent_name": "agent.run"}

    expected = {
        "schema_version": "ATIF-v1.7", "session_id": turn, "trajectory_id": turn,
        "agent": {"name": "hermes", "version": hermes_pipeline.__version__, "model_name": "gpt-4.1-mini"},
        "steps": [
            {"step_id": 1, "source": "user", "message": "Summarise notes.txt", "timestamp": events[1]["timestamp"],
             "extra": {"hermes": {"turn_id": "turn-1", "task_id": S, "trajectory_id": turn}}},
            {"step_id": 2, "source": "agent", "message": "", "timestamp": events[3]["timestamp"],
             "model_name": "gpt-4.1-mini-2025-04-14",
             "tool_calls": [{"tool_call_id": "call_7Yx2", "function_name": "read_file", "arguments": {"path": "notes.txt"},
                             "extra": {"tool_scope_uuid": tool, "toolset": "file"}}],
             "observation": {"results": [{"source_call_id": "call_7Yx2", "content": "Buy milk. Call Ana at 5pm.",
                                          "extra": {"hermes": {"status": "ok", "event_uuid": tool, "duration_ms": 15}}}]},
             "metrics": {"prompt_tokens": 812, "completion_tokens": 24, "cached_tokens": 0},
             "llm_call_count": 1,
             "extra": {"ancestry": ancestry(llm1),
                       "hermes": {"api_request_id": "req-01", "turn_id": "turn-1", "api_mode": "chat_completions",
                                  "finish_reason": "tool_calls"}}},
            {"step_id": 3, "source": "agent", "message": FINAL, "timestamp": events[7]["timestamp"],
             "model_name": "gpt-4.1-mini-2025-04-14",
             "metrics": {"prompt_tokens": 861, "completion_tokens": 19, "cached_tokens": 768},
             "llm_call_count": 1,
             "extra": {"ancestry": ancestry(llm2),
                       "hermes": {"api_request_id": "req-02", "turn_id": "turn-1", "api_mode": "chat_completions",
                                  "finish_reason": "stop"}}},
        ],
        "final_metrics": {"total_prompt_tokens": 1673, "total_completion_tokens": 43, "total_cached_tokens": 768,
                          "total_steps": 3},
        "extra": {"hermes": {"session_id": S, "platform": "cli", "trajectory_date": events[0]["timestamp"][:10],
                             "task_ids": [S], "content": "full", "llm_payloads": False, "final_output": FINAL}},
    }
    assert doc == expected
    assert list(doc) == list(expected) and [list(s) for s in doc["steps"]] == [list(s) for s in expected["steps"]]
    assert events[3]["timestamp"] == rfc3339_us(1_788_257_702_230_000)  # FMT-18: the llm.call end time, rendered
    assert events[1]["timestamp"] == "2026-09-01T10:15:00.010000Z"


def test_fmt_46_llm_payloads_carry_the_full_history(engine: Engine, example_clock: None) -> None:
    """FMT-46 / FMT-25: extra.hermes.llm_request is the full request even though the ATOF sink wrote a delta."""
    pipeline = Pipeline(engine)
    worked_example(engine)
    pipeline.shutdown()
    second_start = starts(pipeline.events(), "llm.call")[1]
    assert second_start["data"]["messages_offset"] == 2  # the ATOF line is a delta
    [doc] = pipeline.documents()
    first, second = agent_steps(doc)
    assert second["extra"]["hermes"]["llm_request"]["body"]["messages"] == [
        *HISTORY, {"role": "assistant", "content": "", "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "call_7Yx2", "content": "Buy milk. Call Ana at 5pm."}]
    assert first["extra"]["hermes"]["llm_response"]["assistant_message"]["tool_calls"] == [CALL]
    assert doc["extra"]["hermes"]["llm_payloads"] is True


def test_fmt_46_failed_attempts_attach_to_the_next_step_of_the_same_request(engine: Engine) -> None:
    """FMT-46: error ends make no step; they go to failed_attempts of the next agent step with the same request id."""
    plugin, dest = memory_atif_plugin(engine)
    host = Host(engine, model="m")
    with host.session() as session, session.turn("go") as turn:
        turn.call_llm({"model": "m", "messages": []},
                      scripted(Overloaded("busy"), Overloaded("busy"), chat_response("fine")), max_retries=2)
        turn.complete("fine")
    assert plugin.shutdown(10.0)
    [doc] = documents(dest)
    [user, step] = doc["steps"]
    assert user["source"] == "user" and step["message"] == "fine"
    request = step["extra"]["hermes"]["api_request_id"]
    assert step["extra"]["hermes"]["failed_attempts"] == [  # issue #31: why, and which request
        {"attempt": 1, "error_type": "upstream_error", "status_code": 503, "message": "busy", "api_request_id": request},
        {"attempt": 2, "error_type": "upstream_error", "status_code": 503, "message": "busy", "api_request_id": request}]
    assert doc["final_metrics"]["extra"] == {"failed_attempts": 2}
    assert doc["final_metrics"]["total_steps"] == 2


def test_fmt_46_failed_request_without_success_goes_to_the_turns_last_step(engine: Engine) -> None:
    """FMT-46: a request that never succeeds before the turn ends is recorded on the turn's last step."""
    plugin, dest = memory_atif_plugin(engine)
    host = Host(engine, model="m")
    with host.session() as session:
        with session.turn("first") as turn:
            turn.call_llm({"model": "m", "messages": []}, scripted(chat_response("ok")))
            with pytest.raises(Overloaded):
                turn.call_llm({"model": "m", "messages": []}, scripted(Overloaded("down")))
        with session.turn("second") as turn:
            with pytest.raises(Overloaded):
                turn.call_llm({"model": "m", "messages": []}, scripted(Overloaded("down")))
    assert plugin.shutdown(10.0)
    [doc] = documents(dest)
    user1, agent1, user2 = doc["steps"]
    assert "failed_attempts" not in user1.get("extra", {}).get("hermes", {})
    (failed,) = agent1["extra"]["hermes"]["failed_attempts"]
    assert failed.pop("api_request_id").endswith(":api:2")  # the request that never succeeded
    assert failed == {"attempt": 1, "error_type": "upstream_error", "status_code": 503, "message": "down"}
    assert user2["extra"]["hermes"]["failed_attempts"][0]["status_code"] == 503  # no agent step in that turn
    assert doc["final_metrics"]["extra"] == {"failed_attempts": 2}


def test_fmt_46_tool_end_without_matching_call_is_unmatched(engine: Engine) -> None:
    """FMT-46: a tool end whose id the model never issued goes to the turn's latest agent step, unmatched."""
    plugin, dest = memory_atif_plugin(engine)
    host = Host(engine, model="m")
    with host.session() as session, session.turn("go") as turn:
        turn.call_llm({"model": "m", "messages": []}, scripted(chat_response(None, [call("c1", "read")])))
        turn.call_tool("read", {}, lambda: "a", tool_call_id="c1")
        turn.call_tool("extra_tool", {"x": 1}, lambda x: "b", tool_call_id="zz")
        turn.complete("done")
    assert plugin.shutdown(10.0)
    [doc] = documents(dest)
    [step] = agent_steps(doc)
    matched, unmatched = results(step)
    assert matched["source_call_id"] == "c1" and "unmatched" not in matched["extra"]["hermes"]
    assert "source_call_id" not in unmatched and unmatched["extra"]["hermes"]["unmatched"] is True
    assert unmatched["content"] == "b" and [c["tool_call_id"] for c in step["tool_calls"]] == ["c1"]


def test_fmt_46_tools_without_an_llm_step_get_a_synthetic_agent_step(engine: Engine) -> None:
    """Documented choice: tool calls in a turn without any LLM step are listed on one agent step of their own."""
    plugin, dest = memory_atif_plugin(engine)
    host = Host(engine, model="m")
    with host.session() as session, session.turn("go") as turn:
        turn.call_tool("one", {"a": 1}, lambda a: "1", tool_call_id="t1")
        turn.call_tool("two", {}, lambda: "2")
        turn.complete("done")
    assert plugin.shutdown(10.0)
    [doc] = documents(dest)
    [user, step] = doc["steps"]
    assert step["extra"]["hermes"]["synthetic"] is True and "llm_call_count" not in step and "metrics" not in step
    first, second = step["tool_calls"]
    assert (first["tool_call_id"], first["function_name"], first["arguments"]) == ("t1", "one", {"a": 1})
    assert second["tool_call_id"].startswith("call_")  # the id the host gave the tool scope
    assert [r["source_call_id"] for r in results(step)] == ["t1", second["tool_call_id"]]
    assert "final_metrics" not in doc  # §3.1: only when some step has metrics


def test_fmt_46_system_step_idless_calls_and_raw_arguments(engine: Engine) -> None:
    """FMT-46 system step (include_system_prompt); §3.4 calls without ids and arguments that are not JSON."""
    plugin, dest = memory_atif_plugin(engine, include_system_prompt=True)
    host = Host(engine, model="m")
    request = {"model": "m", "reasoning_effort": "high",
               "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "go"}]}
    with host.session() as session, session.turn("go") as turn:
        turn.call_llm(request, scripted(chat_response(None, [call(None, "look", '{"q": 1}'), call("c2", "bad", "{oops")])))
        turn.call_tool("look", {"q": 1}, lambda q: "seen")
        turn.call_tool("bad", {}, lambda: "x", tool_call_id="c2")
        turn.complete("done")
    assert plugin.shutdown(10.0)
    [doc] = documents(dest)
    system, user, step = doc["steps"]
    assert (system["source"], system["message"]) == ("system", "Be brief.") and user["source"] == "user"
    look, bad = step["tool_calls"]
    assert look["tool_call_id"] == f"hermes-{look['extra']['tool_scope_uuid']}" and look["arguments"] == {"q": 1}
    assert bad["arguments"] == {} and bad["extra"]["raw_arguments"] == "{oops"
    assert [r["source_call_id"] for r in results(step)] == [look["tool_call_id"], "c2"]
    assert step["reasoning_effort"] == "high"


def test_fmt_46_events_are_mapped_in_timestamp_order_and_marks() -> None:
    """FMT-46 / FMT-15: delivery order is not timestamp order; the hermes.context mark becomes extra.hermes.context;
    include_observed_events copies the raw events; other marks make no step."""
    dest = MemoryDestination()
    sink = build_atif_sink({"enabled": True, "include_observed_events": True}, destinations={"local": dest})
    s = Stream(sink)
    t0 = 1_788_257_700_000_000
    session = s.start("hermes.session", "agent", None, t0, data={"model": "m", "platform": "cli"})
    turn = s.start("agent.run", "function", session.uuid, t0 + 10, data={"user_message": "hi"},
                   meta={"hermes.turn_id": "u1", "hermes.task_id": "k1"})
    s.mark("hermes.context", turn.uuid, t0 + 11, {"model": "m", "toolsets": ["file"]})
    s.mark("hermes.context", turn.uuid, t0 + 12, {"model": "other"})
    llm = s.start("llm.call", "llm", turn.uuid, t0 + 20, profile={"model_name": "m"},
                  meta={"hermes.api_request_id": "r1", "hermes.turn_id": "u1"})
    tool = s.start("read", "tool", turn.uuid, t0 + 40, profile={"tool_call_id": "c1"}, data={"arguments": {}})
    s.end(tool, t0 + 60, data={"result": {"lines": 2}}, meta={"hermes.tool.status": "ok", "hermes.duration_ms": 0})
    s.end(llm, t0 + 30, data=assistant(None, [("c1", "read", "{}")]), profile={"model_name": "m-1"},
          meta={"otel.status_code": "OK", "hermes.api_request_id": "r1"})  # delivered after the tool, stamped before
    s.mark("hermes.approval.request", turn.uuid, t0 + 61, {"surface": "cli"})
    s.end(turn, t0 + 70, meta={"otel.status_code": "OK"})
    s.end(session, t0 + 80, data={"reason": "shutdown"})
    assert sink.flush(10.0) and sink.shutdown(10.0)
    [doc] = documents(dest)
    user, step = doc["steps"]
    [result] = results(step)
    assert result["source_call_id"] == "c1" and result["content"] == '{"lines":2}'  # canonical JSON
    assert doc["extra"]["hermes"]["context"] == {"model": "m", "toolsets": ["file"]}
    observed = doc["extra"]["observed_events"]
    assert len(observed) == 11 and [e["timestamp"] for e in observed] == sorted(e["timestamp"] for e in observed)
    assert observed[0]["uuid"] == uuid_str(session.uuid) and observed[0]["name"] == "hermes.session"
    assert doc["trajectory_id"] == uuid_str(turn.uuid)  # the session file takes its first run's id (issue #27)


def test_fmt_3_6_metrics_and_final_metrics() -> None:
    """§3.6: prompt = input (incl. cached), cached = read + write, extra only when informative; sums over steps."""
    assert step_metrics({"input_tokens": 100, "output_tokens": 5, "cache_read_tokens": 60, "cache_write_tokens": 0,
                         "reasoning_tokens": 0}) == {"prompt_tokens": 100, "completion_tokens": 5, "cached_tokens": 60}
    assert step_metrics({"input_tokens": 100, "output_tokens": 5, "cache_read_tokens": 60, "cache_write_tokens": 7,
                         "reasoning_tokens": 3}) == {
        "prompt_tokens": 100, "completion_tokens": 5, "cached_tokens": 67,
        "extra": {"reasoning_tokens": 3, "cache_read_tokens": 60, "cache_write_tokens": 7}}
    assert step_metrics({"output_tokens": 1}) == {"completion_tokens": 1}  # missing counters are never guessed
    assert step_metrics(None) is None and step_metrics({}) is None
    steps = [{"metrics": {"prompt_tokens": 1, "completion_tokens": 2}}, {"source": "user"},
             {"metrics": {"prompt_tokens": 3, "cost_usd": 0.5}}]
    assert final_metrics(steps, 0) == {"total_prompt_tokens": 4, "total_completion_tokens": 2, "total_cost_usd": 0.5,
                                       "total_steps": 3}
    assert final_metrics([{"source": "user"}], 3) is None


def test_fmt_45_schema_rejects_what_hermes_must_not_write(engine: Engine, example_clock: None) -> None:
    """The ATIF schema is not vacuous: a v1.6-style ref, agent fields on a user step, llm_call_count 0, a wrong
    version or an integer timestamp are all rejected (FMT-45, §3.3, FMT-18)."""
    pipeline = Pipeline(engine)
    worked_example(engine)
    pipeline.shutdown()
    [doc] = pipeline.documents()
    ATIF_VALIDATOR.validate(doc)

    def broken(change: Any) -> dict[str, Any]:
        bad = copy.deepcopy(doc)
        change(bad)
        return bad

    cases = [
        lambda d: d["steps"][1]["observation"]["results"].append({"subagent_trajectory_ref": [{"session_id": "x"}]}),
        lambda d: d["steps"][0].update(tool_calls=[{"tool_call_id": "a", "function_name": "f", "arguments": {}}]),
        lambda d: d["steps"][1].update(llm_call_count=0),
        lambda d: d.update(schema_version="ATIF-v1.6"),
        lambda d: d["steps"][0].update(timestamp=1_788_257_700_000_000),
        lambda d: d.pop("trajectory_id"),
        lambda d: d["steps"][1]["tool_calls"][0].pop("tool_call_id"),
        lambda d: d.update(subagent_trajectories=[{"schema_version": "ATIF-v1.7"}]),
    ]
    for change in cases:
        assert list(ATIF_VALIDATOR.iter_errors(broken(change))), change


def test_fmt_18_timestamps_are_rendered_rfc3339(engine: Engine, example_clock: None) -> None:
    """FMT-18: integer microseconds become RFC 3339 strings; step times follow the ATOF event times."""
    pipeline = Pipeline(engine)
    worked_example(engine)
    pipeline.shutdown()
    events = pipeline.events()
    [doc] = pipeline.documents()
    llm_end = ends(events, "llm.call")[0]
    assert doc["steps"][1]["timestamp"] == llm_end["timestamp"]
    assert parse_timestamp_us(doc["steps"][1]["timestamp"]) == 1_788_257_702_230_000
