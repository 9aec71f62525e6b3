"""Hermes hooks → ATOF events (spec 04 §2.11, FMT-24) for a scripted session through the host API.

Every produced event is validated against ``hermes_pipeline/schemas/atof-0.1.schema.json``.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from hermes_pipeline import Engine
from hermes_pipeline.export.ids import parse_timestamp_us

from tests.sinks.atof._support import collect, marks, memory_plugin, scopes, starts
from tests._scripted import SYSTEM, USER
from tests._scripted import run_scripted_session as scripted_session


def run_scripted_session(engine: Engine) -> dict[str, Any]:
    """The shared scripted session, with credentials in the base URL and headers in the first request
    (both must be stripped) and no MCP tool."""
    return scripted_session(engine, base_url="https://user:pw@api.example/v1?key=abc#frag",
                            request_extra={"extra_headers": {"Authorization": "Bearer sk-test", "X-Trace": "t-1"}},
                            mcp_tool=False, child_session_id="sess-child")


@pytest.fixture
def scripted(engine: Engine) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    plugin, (dest,) = memory_plugin(engine)
    ids = run_scripted_session(engine)
    return collect(plugin, dest), ids


def by_tool_call(events: list[dict[str, Any]], tool_call_id: str) -> dict[str, dict[str, Any]]:
    [start] = [e for e in starts(events) if (e["category_profile"] or {}).get("tool_call_id") == tool_call_id]
    return scopes(events)[start["uuid"]]


def test_fmt_4_5_6_7_17_every_scope_paired_with_stable_envelope(scripted: Any) -> None:
    """FMT-4 / FMT-5 / FMT-6 / FMT-7 / FMT-17 / FMT-14: pairs, identical fields, end strictly after start."""
    events, _ = scripted
    for event in events:
        assert set(event) >= {"kind", "atof_version", "uuid", "parent_uuid", "timestamp", "name", "data",
                              "data_schema", "metadata"}
        assert event["atof_version"] == "0.1"
        assert event["timestamp"].endswith("Z") and len(event["timestamp"].split(".")[1]) == 7
        assert event["metadata"]["hermes.telemetry_schema_version"] == "hermes.observer.v1"
        assert "hermes.session_id" in event["metadata"]
    pairs = scopes(events)
    for uuid, pair in pairs.items():
        assert set(pair) == {"start", "end"}, pair
        start, end = pair["start"], pair["end"]
        for key in ("name", "attributes", "category", "parent_uuid"):
            assert start[key] == end[key]
        assert parse_timestamp_us(end["timestamp"]) > parse_timestamp_us(start["timestamp"])
    assert len({e["uuid"] for e in events}) == len(pairs) + len(marks(events))


def test_fmt_19_20_21_parentage_reconstructs_the_call_graph(scripted: Any) -> None:
    """FMT-19 / FMT-20 / FMT-21: UUIDv7 ids, null root parent, session → turn → llm/tool."""
    events, _ = scripted
    by_uuid = {e["uuid"]: e for e in starts(events)}
    [root] = [e for e in starts(events, "hermes.session") if e["metadata"]["hermes.session_id"] == "sess-main"]
    assert root["parent_uuid"] is None and root["uuid"][14] == "7"
    turns = [e for e in starts(events, "agent.run") if e["metadata"]["hermes.session_id"] == "sess-main"]
    assert [t["parent_uuid"] for t in turns] == [root["uuid"]]
    for event in starts(events):
        if event["category"] in ("llm", "tool") and event["metadata"]["hermes.session_id"] == "sess-main":
            assert event["parent_uuid"] == turns[0]["uuid"]
    for event in events:  # every parent is a scope of the stream
        assert event["parent_uuid"] is None or event["parent_uuid"] in by_uuid
    assert [e["uuid"] for e in starts(events)] == sorted(e["uuid"] for e in starts(events))  # time-ordered


def test_fmt_24_rows_1_2_5_6_session_and_turn(scripted: Any) -> None:
    """FMT-24 rows 1, 2, 5, 6 and note 1: session scope from on_session_start to on_session_finalize."""
    events, ids = scripted
    pair = scopes(events)[[e for e in starts(events, "hermes.session")
                           if e["metadata"]["hermes.session_id"] == "sess-main"][0]["uuid"]]
    assert pair["start"]["category"] == "agent" and pair["start"]["category_profile"] is None
    assert pair["start"]["data"] == {"model": "test-model", "platform": "cli"}
    assert pair["start"]["metadata"]["hermes.span_kind"] == "session"
    assert pair["start"]["metadata"]["hermes.platform"] == "cli"
    # the host's session block ended normally: finalized as "completed" (not "shutdown", OBS-36)
    assert pair["end"]["data"] == {"reason": "completed"} and pair["end"]["metadata"]["otel.status_code"] == "OK"
    assert events[-1] == pair["end"]  # the session closes last
    [turn] = [e for e in starts(events, "agent.run") if e["metadata"]["hermes.turn_id"] == ids["turn_id"]]
    assert turn["category"] == "function"
    assert turn["data"] == {"user_message": "Summarise notes.txt", "is_first_turn": True}
    meta = turn["metadata"]
    assert (meta["hermes.sender_id"], meta["hermes.span_kind"], meta["hermes.platform"]) == ("user-7", "agent.run", "cli")
    assert meta["hermes.task_id"].startswith("task_")
    end = scopes(events)[turn["uuid"]]["end"]
    assert end["data"] == {"final_response": "All done", "completed": True, "interrupted": False}
    assert end["metadata"]["otel.status_code"] == "OK" and end["metadata"]["hermes.turn_id"] == ids["turn_id"]


def test_fmt_24_rows_7_8_9_retries_share_the_request_id(scripted: Any) -> None:
    """FMT-24 rows 7-9 and note 2, FMT-26: one llm.call scope per attempt; retries share api_request_id."""
    events, _ = scripted
    llm = [scopes(events)[s["uuid"]] for s in starts(events, "llm.call")
           if s["metadata"]["hermes.session_id"] == "sess-main"]
    assert len(llm) == 3
    first, retry, last = llm
    request_ids = [p["start"]["metadata"]["hermes.api_request_id"] for p in llm]
    assert request_ids[0] == request_ids[1] != request_ids[2]
    assert [p["start"]["metadata"]["hermes.api_call_count"] for p in llm] == [1, 1, 2]
    start_meta = first["start"]["metadata"]
    assert start_meta["hermes.base_url"] == "https://api.example/v1"  # no userinfo, query, fragment
    assert (start_meta["hermes.provider"], start_meta["hermes.api_mode"]) == ("openai", "chat_completions")
    assert first["start"]["category_profile"] == {"model_name": "test-model"}
    assert first["end"]["data"]["error"] == {"type": "Overloaded", "status_code": 503, "retryable": True,
                                             "retry_count": 0, "max_retries": 2}
    assert first["end"]["data"]["error_message"] == "busy"
    assert first["end"]["metadata"]["otel.status_code"] == "ERROR"
    assert first["end"]["metadata"]["error.type"] == "upstream_error"
    ok = retry["end"]
    assert ok["category_profile"] == {"model_name": "test-model-2025"}
    assert ok["data"]["finish_reason"] == "tool_calls"
    usage = ok["data"]["usage"]  # FMT-26: the five normalised counters only
    assert set(usage) <= {"input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
                          "reasoning_tokens"}
    assert (usage["input_tokens"], usage["output_tokens"]) == (10, 5)
    assert ok["data"]["response"]["assistant_message"]["tool_calls"]
    assert ok["metadata"]["otel.status_code"] == "OK" and isinstance(ok["metadata"]["hermes.duration_ms"], int)
    assert last["end"]["data"]["response"]["assistant_message"]["content"] == "All done"


def test_fmt_25_history_delta_and_fmt_28_no_credentials(scripted: Any) -> None:
    """FMT-25: later starts carry only new messages + messages_offset; FMT-28: credential headers removed."""
    events, _ = scripted
    llm = [s for s in starts(events, "llm.call") if s["metadata"]["hermes.session_id"] == "sess-main"]
    bodies = [s["data"]["request"]["body"] for s in llm]
    assert [s["data"]["messages_offset"] for s in llm] == [0, 2, 2]
    assert bodies[0]["messages"] == [SYSTEM, USER] and bodies[1]["messages"] == []
    assert [m["role"] for m in bodies[2]["messages"]] == ["assistant", "tool"]
    rebuilt = bodies[0]["messages"] + bodies[1]["messages"] + bodies[2]["messages"]
    assert [m["role"] for m in rebuilt] == ["system", "user", "assistant", "tool"]
    assert all("sk-test" not in json.dumps(s) for s in llm)  # redacted upstream, never undone (FMT-28)


def test_fmt_24_rows_10_11_tool_outcomes(scripted: Any) -> None:
    """FMT-24 rows 10-11 and note 3: ok, error, blocked (allowlist and plugin) and cancelled tools."""
    events, _ = scripted
    ok = by_tool_call(events, "call_ok")
    assert ok["start"]["name"] == "read_file" and ok["start"]["category"] == "tool"
    assert ok["start"]["data"] == {"arguments": {"path": "notes.txt"}}
    assert ok["start"]["metadata"]["hermes.span_kind"] == "tool.execute"
    assert ok["end"]["data"] == {"result": "Buy milk."}
    assert ok["end"]["metadata"]["hermes.tool.status"] == "ok" and ok["end"]["metadata"]["otel.status_code"] == "OK"
    outcomes = {}
    for call_id in ("call_err", "call_deny", "call_block", "call_cancel"):
        end = by_tool_call(events, call_id)["end"]
        meta = end["metadata"]
        outcomes[call_id] = (meta["hermes.tool.status"], meta.get("hermes.tool.error_type"), meta["error.type"],
                             meta["otel.status_code"], "error_message" in end["data"])
    assert outcomes == {
        "call_err": ("error", "tool_error", "tool_error", "ERROR", True),
        "call_deny": ("blocked", "tool_scope_block", "blocked", "ERROR", True),
        "call_block": ("blocked", "plugin_block", "blocked", "ERROR", True),
        "call_cancel": ("cancelled", "keyboard_interrupt", "cancelled", "ERROR", True),
    }
    denied = by_tool_call(events, "call_deny")  # note 3: no pre_tool_call, start synthesized
    assert parse_timestamp_us(denied["start"]["timestamp"]) < parse_timestamp_us(denied["end"]["timestamp"])
    assert denied["start"]["data"] == {"arguments": {"path": "/"}}


def test_fmt_24_rows_12_13_approval_marks_attach_to_the_tool(scripted: Any) -> None:
    """FMT-24 rows 12-13, FMT-8: approval marks inside a tool take that tool scope as parent."""
    events, ids = scripted
    tool = by_tool_call(events, "call_appr")["start"]
    request, response = marks(events, "hermes.approval.request"), marks(events, "hermes.approval.response")
    assert len(request) == len(response) == 1
    for mark in (request[0], response[0]):
        assert mark["parent_uuid"] == tool["uuid"]
        assert mark["category"] == "tool" and mark["category_profile"] == {"tool_call_id": "call_appr"}
        assert mark["metadata"]["hermes.turn_id"] == ids["turn_id"]
        assert "scope_category" not in mark and "attributes" not in mark
    assert request[0]["data"] == {"surface": "cli", "pattern_keys": ["ls"], "command": "ls", "description": "lists files"}
    # decided_by: who decided (issue #27; the host API says "user" for a person's choice)
    assert response[0]["data"] == {"surface": "cli", "choice": "once", "outcome": "approved", "decided_by": "user"}


def test_fmt_24_rows_14_15_human_input_marks(scripted: Any) -> None:
    """FMT-24 rows 14-15: human-input marks without category, parented to the current turn."""
    events, ids = scripted
    [turn] = [e for e in starts(events, "agent.run") if e["metadata"]["hermes.turn_id"] == ids["turn_id"]]
    [request] = marks(events, "hermes.human_input.request")
    [resolved] = marks(events, "hermes.human_input.resolved")
    for mark in (request, resolved):
        assert mark["parent_uuid"] == turn["uuid"] and "category" not in mark and mark["category_profile"] is None
    assert request["data"]["kind"] == "clarify" and request["data"]["prompt"] == "Which file?"
    assert resolved["data"] == {"kind": "clarify", "request_id": request["data"]["request_id"], "outcome": "provided"}


def test_fmt_24_rows_16_17_subagent_session_under_the_delegating_tool(scripted: Any) -> None:
    """FMT-24 rows 16-17 and note 5: the child session scope's parent is the open delegation tool scope."""
    events, ids = scripted
    tool = by_tool_call(events, "call_sub")["start"]
    [child] = [e for e in starts(events, "hermes.session") if e["metadata"]["hermes.session_id"] == "sess-child"]
    assert child["parent_uuid"] == tool["uuid"] and child["category"] == "agent"
    assert child["data"] == {"child_role": "researcher", "child_goal": "find the notes"}
    assert child["metadata"]["hermes.scope_role"] == "subagent"
    assert child["metadata"]["hermes.parent_session_id"] == "sess-main"
    end = scopes(events)[child["uuid"]]["end"]
    assert end["data"]["child_status"] == "completed" and end["data"]["child_summary"] == "found it"
    assert isinstance(end["data"]["duration_ms"], int) and end["metadata"]["otel.status_code"] == "OK"
    child_scopes = [e for e in starts(events) if e["metadata"]["hermes.session_id"] == "sess-child"]
    assert Counter(e["name"] for e in child_scopes) == {"hermes.session": 1, "agent.run": 1, "llm.call": 1}
    [child_turn] = [e for e in child_scopes if e["name"] == "agent.run"]
    assert child_turn["parent_uuid"] == child["uuid"]
    # LIFO: the child session ends before the delegation tool does
    order = [e["uuid"] + e.get("scope_category", "") for e in events]
    assert order.index(child["uuid"] + "end") < order.index(tool["uuid"] + "end")


def test_fmt_13_metadata_values_are_scalars_or_scalar_arrays(scripted: Any) -> None:
    """FMT-13: metadata holds only JSON scalars or arrays of scalars (projectable onto span attributes)."""
    events, _ = scripted
    for event in events:
        for value in event["metadata"].values():
            items = value if isinstance(value, list) else [value]
            assert all(isinstance(v, str | int | float | bool) or v is None for v in items)


def test_fmt_12_start_data_is_the_input_end_data_the_output_marks_the_checkpoint(scripted: Any) -> None:
    """FMT-12: a scope's start carries its input and its end its output (tool arguments → result, turn user
    message → final response); a mark's data is its checkpoint payload (here: the approval's)."""
    events, _ = scripted
    tool = by_tool_call(events, "call_ok")
    assert tool["start"]["data"] == {"arguments": {"path": "notes.txt"}}
    assert tool["end"]["data"] == {"result": "Buy milk."}
    [turn] = [e for e in starts(events, "agent.run") if e["metadata"]["hermes.session_id"] == "sess-main"]
    assert "user_message" in turn["data"] and "final_response" not in turn["data"]
    end = scopes(events)[turn["uuid"]]["end"]["data"]
    assert end["final_response"] == "All done" and "user_message" not in end
    [request] = marks(events, "hermes.approval.request")
    assert (request["data"]["command"], request["data"]["description"]) == ("ls", "lists files")
    [response] = marks(events, "hermes.approval.response")
    assert response["data"]["choice"] == "once"


def test_fmt_16_tool_durations_come_from_the_monotonic_clock_not_wall_stamps(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """FMT-16: the wall clock jumps an hour forward while a tool runs; ``hermes.duration_ms`` is the host's
    monotonic figure (well under a second), not the difference of the two wall-clock stamps."""
    from hermes_pipeline import Host
    from hermes_pipeline.export import publication

    jump = {"ns": 0}
    real = publication.time_ns
    monkeypatch.setattr(publication, "time_ns", lambda: real() + jump["ns"])
    engine = Engine()
    plugin, [dest] = memory_plugin(engine)
    host = Host(engine, platform="cli", model="m", provider="openai")

    def tool(path: str) -> str:
        jump["ns"] = 3_600 * 10**9  # the wall clock is stepped by an hour
        return "ok"

    with host.session("s") as session:
        with session.turn("hi") as turn:
            turn.call_tool("read_file", {"path": "x"}, tool, tool_call_id="c1")
            turn.complete("done")
    events = collect(plugin, dest)
    pair = by_tool_call(events, "c1")
    wall_ms = (parse_timestamp_us(pair["end"]["timestamp"]) - parse_timestamp_us(pair["start"]["timestamp"])) // 1000
    assert wall_ms >= 3_600_000  # the stamps did see the step ...
    assert 0 <= pair["end"]["metadata"]["hermes.duration_ms"] < 1_000  # ... the duration did not
