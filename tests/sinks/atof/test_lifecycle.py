"""ATOF export details: the §6.1 worked example, segments, compaction, teardown, the content gate,
history delta modes and hook-level edge cases (spec 04 §2.8-§2.13, §5; spec 03 §14)."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from hermes_pipeline import Engine, Host
from hermes_pipeline.export import MemoryDestination, ScopeEvent, ScopePlugin
from hermes_pipeline.export.atof_object import atof_object
from hermes_pipeline.export.ids import parse_timestamp_us, uuid_str
from hermes_pipeline.export.header_keys import strip_header_keys
from hermes_pipeline.host import SegmentPolicy
from hermes_pipeline.sinks.atof import build_atof_plugin

from tests.sinks.atof._support import collect, ends, marks, memory_plugin, scopes, starts

S = "20260901_101500_a1b2c3"
TOOLS = [{"type": "function", "function": {"name": "read_file", "parameters": {
    "type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}}]
CALL = {"id": "call_7Yx2", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"notes.txt\"}"}}
HISTORY = [{"role": "system", "content": "You are Hermes, a helpful agent."}, {"role": "user", "content": "Summarise notes.txt"}]
FINAL = "notes.txt has two items: buy milk, and call Ana at 5pm."


def group_a(request_id: str, count: int) -> dict[str, Any]:
    return {"session_id": S, "task_id": S, "turn_id": "turn-1", "api_request_id": request_id, "platform": "cli",
            "model": "gpt-4.1-mini", "provider": "openai", "base_url": "https://api.openai.com/v1",
            "api_mode": "chat_completions", "api_call_count": count}


def worked_example(engine: Engine) -> None:
    """The hook sequence behind spec 04 §6.1."""
    t0 = 1_788_257_700.0
    engine.dispatch("on_session_start", {"session_id": S, "model": "gpt-4.1-mini", "platform": "cli"})
    engine.dispatch("pre_llm_call", {"session_id": S, "task_id": S, "turn_id": "turn-1",
                                     "user_message": "Summarise notes.txt", "conversation_history": [],
                                     "is_first_turn": True, "model": "gpt-4.1-mini", "platform": "cli"})
    for request_id, count, messages, answer, usage, duration in (
        ("req-01", 1, HISTORY, {"role": "assistant", "content": "", "tool_calls": [CALL]},
         {"input_tokens": 812, "output_tokens": 24, "cache_read_tokens": 0, "cache_write_tokens": 0,
          "reasoning_tokens": 0}, 1.23),
        ("req-02", 2, [*HISTORY, {"role": "assistant", "content": "", "tool_calls": [CALL]},
                       {"role": "tool", "tool_call_id": "call_7Yx2", "content": "Buy milk. Call Ana at 5pm."}],
         {"role": "assistant", "content": FINAL},
         {"input_tokens": 861, "output_tokens": 19, "cache_read_tokens": 768, "cache_write_tokens": 0,
          "reasoning_tokens": 0}, 1.12),
    ):
        finish = "tool_calls" if count == 1 else "stop"
        engine.dispatch("pre_api_request", {**group_a(request_id, count), "started_at": t0 + count,
                                            "middleware_trace": [], "retry_count": 0, "request": {
                                                "method": "POST", "body": {"model": "gpt-4.1-mini",
                                                                           "messages": messages, "tools": TOOLS}}})
        engine.dispatch("post_api_request", {**group_a(request_id, count), "api_duration": duration,
                                             "started_at": t0 + count, "ended_at": t0 + count + duration,
                                             "finish_reason": finish, "response_model": "gpt-4.1-mini-2025-04-14",
                                             "usage": {**usage, "request_count": 1, "total_tokens": 1},
                                             "response": {"model": "gpt-4.1-mini-2025-04-14", "finish_reason": finish,
                                                          "assistant_message": answer}})
        if count == 1:
            tool = {"tool_name": "read_file", "args": {"path": "notes.txt"}, "task_id": S, "session_id": S,
                    "tool_call_id": "call_7Yx2", "turn_id": "turn-1", "api_request_id": "req-01",
                    "middleware_trace": []}
            engine.dispatch("pre_tool_call", dict(tool))
            engine.dispatch("post_tool_call", {**tool, "result": "Buy milk. Call Ana at 5pm.", "duration_ms": 15,
                                               "status": "ok", "error_type": None, "error_message": None})
    engine.dispatch("post_llm_call", {"session_id": S, "task_id": S, "turn_id": "turn-1", "assistant_response": FINAL})
    engine.dispatch("on_session_end", {"session_id": S, "task_id": S, "turn_id": "turn-1", "completed": True,
                                       "interrupted": False, "model": "gpt-4.1-mini", "platform": "cli"})
    engine.dispatch("on_session_finalize", {"session_id": S, "platform": "cli", "reason": "shutdown"})


EXPECTED = [  # spec 04 §6.1 lines without uuid, parent_uuid, timestamp
    ("start", "hermes.session", "agent", None, {"model": "gpt-4.1-mini", "platform": "cli"},
     {"hermes.platform": "cli", "hermes.span_kind": "session"}),
    ("start", "agent.run", "function", None, {"user_message": "Summarise notes.txt", "is_first_turn": True},
     {"hermes.task_id": S, "hermes.turn_id": "turn-1", "hermes.span_kind": "agent.run"}),
    ("start", "llm.call", "llm", {"model_name": "gpt-4.1-mini"},
     {"request": {"method": "POST", "body": {"model": "gpt-4.1-mini", "messages": HISTORY, "tools": TOOLS}},
      "messages_offset": 0},
     {"hermes.task_id": S, "hermes.turn_id": "turn-1", "hermes.api_request_id": "req-01", "hermes.api_call_count": 1,
      "hermes.provider": "openai", "hermes.api_mode": "chat_completions",
      "hermes.base_url": "https://api.openai.com/v1", "hermes.span_kind": "llm.call"}),
    ("end", "llm.call", "llm", {"model_name": "gpt-4.1-mini-2025-04-14"},
     {"response": {"model": "gpt-4.1-mini-2025-04-14", "finish_reason": "tool_calls",
                   "assistant_message": {"role": "assistant", "content": "", "tool_calls": [CALL]}},
      "usage": {"input_tokens": 812, "output_tokens": 24, "cache_read_tokens": 0, "cache_write_tokens": 0,
                "reasoning_tokens": 0}, "finish_reason": "tool_calls"},
     {"hermes.api_request_id": "req-01", "hermes.duration_ms": 1230, "otel.status_code": "OK"}),
    ("start", "read_file", "tool", {"tool_call_id": "call_7Yx2"}, {"arguments": {"path": "notes.txt"}},
     {"hermes.task_id": S, "hermes.turn_id": "turn-1", "hermes.api_request_id": "req-01", "hermes.toolset": "file",
      "hermes.span_kind": "tool.execute"}),
    ("end", "read_file", "tool", {"tool_call_id": "call_7Yx2"}, {"result": "Buy milk. Call Ana at 5pm."},
     {"hermes.tool.status": "ok", "hermes.duration_ms": 15, "otel.status_code": "OK"}),
    ("start", "llm.call", "llm", {"model_name": "gpt-4.1-mini"},
     {"request": {"method": "POST", "body": {"model": "gpt-4.1-mini", "messages": [
         {"role": "assistant", "content": "", "tool_calls": [CALL]},
         {"role": "tool", "tool_call_id": "call_7Yx2", "content": "Buy milk. Call Ana at 5pm."}], "tools": TOOLS}},
      "messages_offset": 2},
     {"hermes.api_request_id": "req-02", "hermes.api_call_count": 2, "hermes.span_kind": "llm.call"}),
    ("end", "llm.call", "llm", {"model_name": "gpt-4.1-mini-2025-04-14"},
     {"response": {"model": "gpt-4.1-mini-2025-04-14", "finish_reason": "stop",
                   "assistant_message": {"role": "assistant", "content": FINAL}},
      "usage": {"input_tokens": 861, "output_tokens": 19, "cache_read_tokens": 768, "cache_write_tokens": 0,
                "reasoning_tokens": 0}, "finish_reason": "stop"},
     {"hermes.api_request_id": "req-02", "hermes.duration_ms": 1120, "otel.status_code": "OK"}),
    ("end", "agent.run", "function", None, {"final_response": FINAL, "completed": True, "interrupted": False},
     {"hermes.task_id": S, "hermes.turn_id": "turn-1", "otel.status_code": "OK"}),
    ("end", "hermes.session", "agent", None, {"reason": "shutdown"}, {"otel.status_code": "OK"}),
]


def test_fmt_24_worked_example_6_1(engine: Engine) -> None:
    """Spec 04 §6.1: the ten lines of the worked example (ids and times aside), in order, with the same parentage."""
    dest = MemoryDestination()
    plugin = build_atof_plugin({"enabled": True, "sinks": [{"type": "file"}]}, destinations={0: dest},
                               toolsets={"read_file": "file"})
    engine.add_plugin(plugin, name="atof")
    worked_example(engine)
    events = collect(plugin, dest)
    assert len(events) == 10
    for event, (phase, name, category, profile, data, meta) in zip(events, EXPECTED):
        assert (event["scope_category"], event["name"], event["category"], event["attributes"]) == (
            phase, name, category, [])
        assert event["category_profile"] == profile and event["data"] == data and event["data_schema"] is None
        assert event["metadata"]["hermes.telemetry_schema_version"] == "hermes.observer.v1"
        assert event["metadata"]["hermes.session_id"] == S
        assert event["metadata"].items() >= meta.items(), event["metadata"]
    session, turn, llm1 = events[0]["uuid"], events[1]["uuid"], events[2]["uuid"]
    assert [e["parent_uuid"] for e in events] == [None, session, turn, turn, turn, turn, turn, turn, session, None]
    assert events[3]["uuid"] == llm1 and events[-1]["uuid"] == session
    assert parse_timestamp_us(events[3]["timestamp"]) - parse_timestamp_us(events[2]["timestamp"]) == 1_230_000


def test_fmt_56_listener_gets_scope_events_with_derivable_otel_ids(engine: Engine) -> None:
    """The listener interface: ScopeEvent objects in order; span_id = low 8 bytes, trace_id = root (FMT-56)."""
    seen: list[ScopeEvent] = []
    plugin = ScopePlugin((seen.append,))
    engine.add_plugin(plugin, name="scopes")
    worked_example(engine)
    assert [(e.kind, e.phase, e.name) for e in seen][:2] == [("scope", "start", "hermes.session"),
                                                              ("scope", "start", "agent.run")]
    root = seen[0].uuid
    assert all(e.root_uuid == root for e in seen) and all(e.session_uuid == root for e in seen)
    tool = next(e for e in seen if e.name == "read_file")
    span_id = f"{tool.uuid & (2**64 - 1):016x}"
    assert uuid_str(tool.uuid).replace("-", "").endswith(span_id)
    assert atof_object(tool)["uuid"] == uuid_str(tool.uuid)


def test_fmt_79_deferred_scope_plugin_keeps_hook_time(engine: Engine) -> None:
    """FMT-79 / FMT-14: with the deferred scope plugin an event carries the time of its hook, not of its replay."""
    import threading
    import time

    gate = threading.Event()
    seen: list[ScopeEvent] = []
    plugin = ScopePlugin((lambda e: (seen.append(e), gate.wait(10)),), deferred=True)
    engine.add_plugin(plugin, name="scopes")
    before = time.time_ns() // 1000
    engine.dispatch("on_session_start", {"session_id": "s", "model": "m", "platform": "cli"})
    after = time.time_ns() // 1000
    threading.Event().wait(0.05)  # a clock gap between the hook and its replay (not synchronisation)
    gate.set()
    assert plugin.flush(5.0) and plugin.shutdown(5.0)
    assert before <= seen[0].timestamp_us <= after
    assert seen[-1].timestamp_us >= after + 50_000  # the shutdown end is stamped when it happens


def test_fmt_85_shutdown_closes_open_scopes(engine: Engine) -> None:
    """FMT-85 / FMT-7: shutdown synthesizes ends with close_reason = shutdown; session status unset."""
    plugin, (dest,) = memory_plugin(engine)
    turn = {"session_id": "open-session", "task_id": "k", "turn_id": "u"}
    engine.dispatch("on_session_start", {"session_id": "open-session", "model": "m", "platform": "cli"})
    engine.dispatch("pre_llm_call", {**turn, "user_message": "never ends", "is_first_turn": True})
    engine.dispatch("pre_tool_call", {**turn, "tool_name": "slow", "args": {}, "tool_call_id": "c9",
                                      "api_request_id": "", "middleware_trace": []})
    events = collect(plugin, dest)
    pairs = scopes(events)
    assert all(set(p) == {"start", "end"} for p in pairs.values())
    by_name = {p["end"]["name"]: p["end"] for p in pairs.values()}
    for name in ("slow", "agent.run"):
        meta = by_name[name]["metadata"]
        assert (meta["hermes.close_reason"], meta["otel.status_code"], meta["error.type"]) == (
            "shutdown", "ERROR", "cancelled")
    session_end = by_name["hermes.session"]
    assert session_end["data"] == {"reason": "shutdown"} and "otel.status_code" not in session_end["metadata"]
    assert session_end["metadata"]["hermes.close_reason"] == "shutdown"
    assert [e["name"] for e in ends(events)] == ["slow", "agent.run", "hermes.session"]  # LIFO
    assert plugin.shutdown() is True  # idempotent


def test_fmt_24_note_4_max_turns_rotation(engine: Engine) -> None:
    """Note 4 / CFG-72 / CFG-77: rotation closes the old session scope and opens segment N with the same id."""
    plugin, (dest,) = memory_plugin(engine)
    host = Host(engine, model="m", platform="gateway", segments=SegmentPolicy(max_turns=1))
    with host.session("long") as session:
        for i in range(3):
            with session.turn(f"t{i}") as turn:
                turn.complete("ok")
    events = collect(plugin, dest)
    sessions = [scopes(events)[s["uuid"]] for s in starts(events, "hermes.session")]
    assert len(sessions) == 3
    assert all(p["start"]["metadata"]["hermes.session_id"] == "long" for p in sessions)
    first, second, third = sessions
    assert "hermes.session.segment" not in first["start"]["metadata"]
    assert first["end"]["data"] == {"reason": "rotation", "hermes.session.segment_reason": "max_turns"}
    assert first["end"]["metadata"]["hermes.close_reason"] == "rotation"
    assert [(p["start"]["metadata"]["hermes.session.segment"], p["start"]["metadata"]["hermes.session.segment_reason"])
            for p in (second, third)] == [(1, "max_turns"), (2, "max_turns")]
    assert all(p["start"]["parent_uuid"] is None for p in sessions)
    turns = starts(events, "agent.run")
    assert [t["parent_uuid"] for t in turns] == [p["start"]["uuid"] for p in sessions]
    order = [e["uuid"] + e["scope_category"] for e in events if e["kind"] == "scope"]
    assert order.index(first["end"]["uuid"] + "end") < order.index(second["start"]["uuid"] + "start")
    assert third["end"]["data"] == {"reason": "completed"}  # the session block ended normally


def test_fmt_24_row_21_in_place_compaction_mark_and_rotation(engine: Engine) -> None:
    """Row 21 + note 4: an in-place compaction is a mark; with on_compaction the next turn rotates (reason compaction)."""
    plugin, (dest,) = memory_plugin(engine)
    host = Host(engine, model="m", segments=SegmentPolicy(on_compaction=True, max_turns=1))
    with host.session("s") as session:
        with session.turn("one") as turn:
            turn.complete("ok")
        session.report_compaction()
        with session.turn("two") as turn:
            turn.complete("ok")
    events = collect(plugin, dest)
    [mark] = marks(events, "hermes.compaction")
    first_session = starts(events, "hermes.session")[0]
    assert mark["data"] == {"rotated": False} and mark["parent_uuid"] == first_session["uuid"]
    assert "category" not in mark and mark["category_profile"] is None
    second = starts(events, "hermes.session")[1]
    assert second["metadata"]["hermes.session.segment_reason"] == "compaction"  # both triggers: compaction wins


def test_fmt_24_row_2_id_rotating_compaction_closes_the_old_session_after_its_turn(engine: Engine) -> None:
    """Row 2 / CFG-75: an ID-rotating compaction ends the old session scope after the live turn; a new root follows."""
    plugin, (dest,) = memory_plugin(engine)
    host = Host(engine, model="m")
    with host.session("old") as session:
        with session.turn("long turn") as turn:
            new = session.report_compaction("new-id")
            turn.complete("done")
        with new.turn("continued") as turn:
            turn.complete("ok")
        new.finalize()
    events = collect(plugin, dest)
    old = scopes(events)[starts(events, "hermes.session")[0]["uuid"]]
    assert old["end"]["data"] == {"reason": "compaction"}
    old_turn = ends(events, "agent.run")[0]
    assert old_turn["metadata"]["otel.status_code"] == "OK" and "hermes.close_reason" not in old_turn["metadata"]
    [mark] = marks(events, "hermes.compaction")
    assert mark["data"] == {"rotated": True}
    new_session = starts(events, "hermes.session")[1]
    assert new_session["metadata"]["hermes.session_id"] == "new-id" and new_session["parent_uuid"] is None
    assert new_session["data"] == {"model": "m", "platform": "cli"}


def test_fmt_24_row_2_session_reset(engine: Engine) -> None:
    """Row 2: on_session_finalize / on_session_reset close the old identity; the new one opens on its first hook."""
    plugin, (dest,) = memory_plugin(engine)
    host = Host(engine, model="m")
    session = host.session("first")
    with session.turn("a") as turn:
        turn.complete("ok")
    second = session.reset()
    with second.turn("b") as turn:
        turn.complete("ok")
    second.finalize()
    events = collect(plugin, dest)
    first_end = [e for e in ends(events, "hermes.session") if e["metadata"]["hermes.session_id"] == "first"]
    assert [e["data"] for e in first_end] == [{"reason": "session_boundary"}]
    assert {e["metadata"]["hermes.session_id"] for e in starts(events, "hermes.session")} == {"first",
                                                                                           second.session_id}


def test_fmt_31_content_gate_closed_summaries(engine: Engine) -> None:
    """FMT-30 / FMT-31 / FMT-32: content = "summary" replaces content fields by {preview, chars, sha256}."""
    plugin, dests = memory_plugin(engine, sinks=1, sink={"content": "summary"})
    worked_example(engine)
    engine.dispatch("pre_llm_call", {"session_id": "x", "task_id": "t", "turn_id": "u", "user_message": "é" * 300,
                                     "is_first_turn": True, "model": "m", "platform": "cli", "sender_id": "alice"})
    events = collect(plugin, dests[0])
    turn = starts(events, "agent.run")[0]
    assert turn["data"]["user_message"] == {"preview": "Summarise notes.txt", "chars": 19,
                                            "sha256": hashlib.sha256(b"Summarise notes.txt").hexdigest()}
    llm = starts(events, "llm.call")[0]
    flattened = "system: You are Hermes, a helpful agent.\n\nuser: Summarise notes.txt"
    assert llm["data"] == {"request": {"preview": flattened, "chars": len(flattened),
                                       "sha256": hashlib.sha256(flattened.encode()).hexdigest()}}
    tool = starts(events, "read_file")[0]
    assert tool["data"]["arguments"]["preview"] == '{"path":"notes.txt"}'
    response = ends(events, "llm.call")[0]["data"]
    assert response["response"]["preview"] == 'assistant: [tool_call read_file {"path":"notes.txt"}]'
    assert response["usage"]["input_tokens"] == 812  # not a content field
    long = [e for e in starts(events, "agent.run") if e["metadata"]["hermes.session_id"] == "x"][0]
    assert long["data"]["user_message"]["preview"] == "é" * 200 and long["data"]["user_message"]["chars"] == 300
    assert "hermes.sender_id" not in long["metadata"]


@pytest.mark.parametrize("mode", ["digest", "off"])
def test_fmt_31_content_summary_modes(engine: Engine, mode: str) -> None:
    """FMT-31: digest drops the preview; off removes the field."""
    dest = MemoryDestination()
    plugin = build_atof_plugin({"enabled": True, "sinks": [{"type": "file", "content": "summary"}]},
                               destinations={0: dest}, content_summary=mode)
    engine.add_plugin(plugin, name="atof")
    worked_example(engine)
    turn = starts(collect(plugin, dest), "agent.run")[0]
    if mode == "digest":
        assert set(turn["data"]["user_message"]) == {"chars", "sha256"}
    else:
        assert turn["data"] == {"is_first_turn": True}


def test_fmt_25_llm_history_full(engine: Engine) -> None:
    """FMT-25: llm_history = "full" writes the whole list with messages_offset 0 every time."""
    plugin, (dest,) = memory_plugin(engine, llm_history="full")
    worked_example(engine)
    llm = starts(collect(plugin, dest), "llm.call")
    assert [s["data"]["messages_offset"] for s in llm] == [0, 0]
    assert len(llm[1]["data"]["request"]["body"]["messages"]) == 4


def test_fmt_25_unknown_api_mode_writes_whole_request_without_offset(engine: Engine) -> None:
    """FMT-25: without a recognised history list the request is written whole and messages_offset omitted."""
    plugin, (dest,) = memory_plugin(engine)
    for n in (1, 2):
        engine.dispatch("pre_api_request", {**group_a(f"r{n}", n), "api_mode": "gemini_native", "started_at": 0,
                                            "middleware_trace": [],
                                            "request": {"method": "POST", "body": {"contents": [n]}}})
    llm = starts(collect(plugin, dest), "llm.call")
    assert [s["data"] for s in llm] == [{"request": {"method": "POST", "body": {"contents": [n]}}} for n in (1, 2)]


def test_fmt_9_27_28_flags_truncation_and_header_keys(engine: Engine) -> None:
    """FMT-9 streaming flag, FMT-27 truncated payload passthrough, FMT-28 credential header keys removed."""
    plugin, (dest,) = memory_plugin(engine)
    request = {"method": "POST", "body": {"model": "m", "stream": True, "messages": [],
                                          "metadata": {"Authorization": "x", "api-key": "y", "keep": 1}}}
    engine.dispatch("pre_api_request", {**group_a("r1", 1), "started_at": 0, "middleware_trace": [
        {"source": "plugin", "name": "tagger"}], "request": request})
    envelope = {"_truncated": True, "original_type": "dict", "preview": "{..."}
    engine.dispatch("pre_api_request", {**group_a("r2", 2), "started_at": 0, "middleware_trace": [],
                                        "request": envelope})
    first, second = starts(collect(plugin, dest), "llm.call")
    assert first["attributes"] == ["streaming"]
    assert first["data"]["request"]["body"]["metadata"] == {"keep": 1}
    assert request["body"]["metadata"]["Authorization"] == "x"  # the hook payload itself is not mutated
    assert first["metadata"]["hermes.middleware.changed"] is True
    assert first["metadata"]["hermes.middleware.sources"] == ["plugin"]
    assert second["data"]["request"] == envelope and second["metadata"]["hermes.truncated"] is True
    assert strip_header_keys({"a": [{"Cookie": 1, "b": 2}]}) == {"a": [{"b": 2}]}


def test_fmt_24_note_2_unmatched_attempt_end_gets_a_start(engine: Engine) -> None:
    """Note 2: post_api_request without an open scope produces a start at started_at and the end at ended_at."""
    plugin, (dest,) = memory_plugin(engine)
    engine.dispatch("api_request_error", {**group_a("r9", 1), "api_duration": 0.5, "started_at": 1_700_000_000.0,
                                          "ended_at": 1_700_000_000.5, "status_code": 429, "retry_count": 0,
                                          "max_retries": 0, "retryable": False, "reason": "rate_limit",
                                          "error": {"type": "RateLimitError", "message": "slow down"}})
    events = collect(plugin, dest)
    [pair] = [p for p in scopes(events).values() if p["start"]["name"] == "llm.call"]
    assert parse_timestamp_us(pair["start"]["timestamp"]) == 1_700_000_000_000_000
    assert parse_timestamp_us(pair["end"]["timestamp"]) == 1_700_000_000_500_000
    assert pair["end"]["metadata"]["error.type"] == "rate_limited"


def test_bk_9_memory_span_kinds_and_fmt_9_remote_flag(engine: Engine) -> None:
    """BOOK-9 span kinds for memory tools; FMT-9 remote flag and hermes.toolset from a toolset map."""
    dest = MemoryDestination()
    plugin = build_atof_plugin({"enabled": True, "sinks": [{"type": "file"}]}, destinations={0: dest},
                               toolsets={"mcp_github_search": "mcp-github"})
    engine.add_plugin(plugin, name="atof")
    host = Host(engine, model="m")
    with host.session() as session, session.turn("go") as turn:
        turn.call_tool("memory", {"action": "add", "content": "x"}, lambda action, content: "ok", tool_call_id="m1")
        turn.call_tool("memory", {"action": "read"}, lambda action: "ok", tool_call_id="m2")
        turn.call_tool("session_search", {"q": "x"}, lambda q: "ok", tool_call_id="m3")
        turn.call_tool("mcp_github_search", {"q": "x"}, lambda q: "ok", tool_call_id="m4")
        turn.complete("ok")
    tools = {s["category_profile"]["tool_call_id"]: s for s in starts(collect(plugin, dest)) if s["category"] == "tool"}
    assert [tools[k]["metadata"]["hermes.span_kind"] for k in ("m1", "m2", "m3", "m4")] == [
        "memory.update", "memory.retrieve", "memory.retrieve", "tool.execute"]
    assert tools["m4"]["attributes"] == ["remote"] and tools["m4"]["metadata"]["hermes.toolset"] == "mcp-github"


def test_fmt_24_failed_and_interrupted_turns(engine: Engine) -> None:
    """Row 6: a failed turn ends ERROR; an interrupted one ERROR with error.type cancelled."""
    plugin, (dest,) = memory_plugin(engine)
    host = Host(engine, model="m")
    with host.session() as session:
        with pytest.raises(RuntimeError), session.turn("boom"):
            raise RuntimeError("broken")
        with pytest.raises(KeyboardInterrupt), session.turn("stop"):
            raise KeyboardInterrupt
    runs = ends(collect(plugin, dest), "agent.run")
    assert [(e["data"]["completed"], e["data"]["interrupted"], e["metadata"]["otel.status_code"],
             e["metadata"].get("error.type")) for e in runs] == [(False, False, "ERROR", "_OTHER"),
                                                                  (False, True, "ERROR", "cancelled")]


@pytest.mark.parametrize("deferred", [False, True])
def test_fmt_86_listeners_may_call_scope_bookkeeping(engine: Engine, deferred: bool) -> None:
    """FMT-86: a listener that calls the tracker's bookkeeping APIs from inside its callback (here
    ``open_session_ids`` and ``stats``) neither deadlocks the agent nor the publication thread."""
    import threading

    scope_plugin = ScopePlugin(deferred=deferred)
    seen: list[tuple[list[str], int]] = []
    scope_plugin.add_listener(lambda event: seen.append((scope_plugin.open_session_ids(),
                                                         scope_plugin.stats()["open_sessions"])))
    engine.add_plugin(scope_plugin, name="scopes")
    host = Host(engine, platform="cli", model="m")

    def agent() -> None:
        with host.session("s-86") as session:
            with session.turn("hi") as turn:
                turn.complete("ok")

    worker = threading.Thread(target=agent, daemon=True)
    worker.start()
    worker.join(20.0)  # a deadlock fails here instead of hanging the suite
    assert not worker.is_alive()
    assert scope_plugin.flush(20.0)
    scope_plugin.shutdown()
    assert len(seen) == 4 and seen[1] == (["s-86"], 1)  # the turn start, inside the open session


def test_fmt_87_no_flush_per_turn_by_default(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """FMT-87: ending turns never flushes the exporters; only an explicit flush() or shutdown does."""
    from hermes_pipeline.export.writer import BoundedWriter

    flushes: list[str] = []
    real_flush = BoundedWriter.flush

    def counting_flush(self: BoundedWriter, deadline_seconds: float) -> bool:
        flushes.append(self.name)
        return real_flush(self, deadline_seconds)

    monkeypatch.setattr(BoundedWriter, "flush", counting_flush)
    plugin, dests = memory_plugin(engine)
    host = Host(engine, platform="cli", model="m")
    with host.session() as session:
        for _ in range(3):
            with session.turn("hi") as turn:
                turn.complete("ok")
    assert flushes == []
    events = collect(plugin, dests[0])
    assert flushes and len(events) == 2 + 3 * 2


def test_fmt_29_33_event_sanitizers_in_priority_order_fail_closed_before_summaries(engine: Engine) -> None:
    """FMT-29: sanitizers run in ascending priority (ties by name), may change only data,
    category_profile and metadata, and one that raises clears those fields of that event while
    publication goes on. FMT-33: summaries are made after them, so no preview shows a removed value."""
    plugin, dests = memory_plugin(engine, sinks=1, sink={"content": "summary"})
    order: list[str] = []

    def redact(event: ScopeEvent) -> dict[str, Any] | None:
        order.append("redact")
        if event.category == "tool" and event.phase == "start":
            return {"data": {"arguments": {"path": "<masked>"}}}
        return None

    def tag(event: ScopeEvent) -> dict[str, Any] | None:
        order.append("tag")
        return {"metadata": {**event.metadata, "site": "eu"}}

    def boom(event: ScopeEvent) -> dict[str, Any] | None:
        order.append("boom")
        if event.phase == "end" and event.category == "tool":
            raise RuntimeError("sanitizer bug")
        return None

    def forbidden(event: ScopeEvent) -> dict[str, Any] | None:
        return {"name": "renamed"} if event.name == "hermes.session" and event.phase == "end" else None

    plugin.add_sanitizer(tag, priority=5, name="b-tag")
    plugin.add_sanitizer(redact, priority=1)
    plugin.add_sanitizer(boom, priority=5, name="a-boom")
    plugin.add_sanitizer(forbidden, priority=9)
    host = Host(engine, platform="cli", model="m")
    with host.session("s-29") as session:
        with session.turn("hi") as turn:
            turn.call_tool("read_file", {"path": "/home/alice/secret-plan.txt"}, lambda path: "done",
                           tool_call_id="c1")
            turn.complete("ok")
    events = collect(plugin, dests[0])
    assert order[:3] == ["redact", "boom", "tag"]
    tool_start, tool_end = starts(events, "read_file")[0], ends(events, "read_file")[0]
    assert "secret-plan" not in str(events)
    assert tool_start["data"]["arguments"]["preview"] == '{"path":"<masked>"}'
    assert tool_start["metadata"]["site"] == "eu"
    assert tool_end["data"] is None and tool_end["category_profile"] is None and tool_end["metadata"] == {}
    session_end = ends(events, "hermes.session")[0]
    assert session_end["name"] == "hermes.session" and session_end["metadata"] == {}
    assert len(events) == 6  # every event still published, in pairs
    assert plugin.stats()["scopes"]["sanitizer_failures"] == 2  # the tool end (raised), the session end (bad key)
