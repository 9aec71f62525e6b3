"""Sessions, turns, approvals, human input, subagents and concurrency through the host API."""

from __future__ import annotations

import asyncio
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from hermes_pipeline import Engine, Host
from hermes_pipeline.host import current_context, run_in_context
from hermes_pipeline.testing import Recorder, capture

from hermes_pipeline.testing import chat_response


def test_canonical_turn_order_spec_01_section_6(engine: Engine, host: Host, rec: Recorder) -> None:
    """Spec 01 §6: session start → pre_llm_call → api → tools → transform_llm_output → post_llm_call → end."""
    engine.register_hook("transform_llm_output", lambda **kw: kw["response_text"].upper())
    with host.session() as session:
        with session.turn("hi", conversation_history=[{"role": "user", "content": "earlier"}]) as turn:
            turn.call_llm({"model": "m", "messages": []}, lambda r: chat_response())
            turn.call_tool("t", {}, lambda: "r", tool_call_id="c1")
            final = turn.complete("the answer")
    assert final == "THE ANSWER"
    assert rec.names() == ["on_session_start", "pre_llm_call", "pre_api_request", "post_api_request",
                           "pre_tool_call", "post_tool_call", "transform_tool_result", "transform_llm_output",
                           "post_llm_call", "on_session_end", "on_session_finalize"]
    assert rec.last("post_llm_call")["assistant_response"] == "THE ANSWER"  # OBS-32
    end = rec.last("on_session_end")
    assert (end["completed"], end["interrupted"], end["failed"], end["turn_exit_reason"]) == (
        True, False, False, "completed")
    assert rec.last("pre_llm_call")["is_first_turn"] is True
    assert rec.last("pre_llm_call")["conversation_history"] == [{"role": "user", "content": "earlier"}]
    assert all(e["telemetry_schema_version"] == "hermes.observer.v1" for e in rec.events)  # OBS-14


def test_session_start_only_for_new_sessions_and_first_turn_flag(host: Host, rec: Recorder) -> None:
    """§7.2: on_session_start once for a new session, never for a resumed one."""
    with host.session() as session:
        for text in ("one", "two"):
            with session.turn(text) as turn:
                turn.complete("ok")
    with host.session("resumed-id", resumed=True) as session, session.turn("three") as turn:
        turn.complete("ok")
    assert len(rec.of("on_session_start")) == 1
    assert [e["is_first_turn"] for e in rec.of("pre_llm_call")] == [True, False, False]
    assert len(rec.of("on_session_end")) == 3


def test_pre_llm_call_context_joined_into_user_message(engine: Engine, host: Host) -> None:
    """§5: valid pre_llm_call results joined by a blank line and added to the user message only."""
    engine.register_hook("pre_llm_call", lambda **kw: "first")
    engine.register_hook("pre_llm_call", lambda **kw: {"context": "second"})
    engine.register_hook("pre_llm_call", lambda **kw: {"context": ""})
    engine.register_hook("pre_llm_call", lambda **kw: 42)
    engine.register_hook("pre_llm_call", lambda **kw: "")
    with host.session() as session, session.turn("question") as turn:
        assert turn.context == "first\n\nsecond"
        assert turn.user_content == "question\n\nfirst\n\nsecond"
        assert turn.user_message == "question"


def test_turn_end_on_exception_and_interrupt_with_inflight_request(host: Host, rec: Recorder) -> None:
    """§7.2: on_session_end fires for failed and interrupted turns; in-flight api_request_id reported."""
    with host.session() as session:
        with pytest.raises(RuntimeError), session.turn("a"):
            raise RuntimeError("agent bug with password=hunter2")

        def interrupted_provider(request: dict[str, Any]) -> Any:
            raise KeyboardInterrupt

        with pytest.raises(KeyboardInterrupt), session.turn("b") as turn:
            turn.call_llm({"model": "m", "messages": []}, interrupted_provider)
        with session.turn("c") as turn:
            turn.interrupt()
    failed, interrupted, manual = rec.of("on_session_end")
    assert failed["failed"] is True and failed["turn_exit_reason"] == "error"
    assert "hunter2" not in failed["reason"]
    assert interrupted["interrupted"] is True and interrupted["turn_exit_reason"] == "interrupted_by_user"
    assert interrupted["api_request_id"] == rec.last("pre_api_request")["api_request_id"]
    assert manual["interrupted"] is True and "api_request_id" not in manual.payload
    assert rec.of("post_llm_call") == [] and rec.of("transform_llm_output") == []


def test_obs_36_finalize_exactly_once_and_reset_order(host: Host, rec: Recorder) -> None:
    """OBS-36 / §6.3: finalize once per identity; a switch finalizes the old then resets to the new."""
    session = host.session("old")
    new = session.reset()
    session.finalize()
    new.finalize("session_expired")
    new.finalize()
    assert rec.names() == ["on_session_finalize", "on_session_reset", "on_session_finalize"]
    reset = rec.last("on_session_reset")
    assert reset["old_session_id"] == "old" and reset["new_session_id"] == reset["session_id"] == new.session_id
    assert [e["reason"] for e in rec.of("on_session_finalize")] == ["session_boundary", "session_expired"]


def test_obs_43_approval_pairs_and_context_ids(host: Host, rec: Recorder) -> None:
    """OBS-43 / §7.7: every approval request gets exactly one response; IDs come from the tool context."""
    with host.session() as session, session.turn("go") as turn:
        def tool() -> str:
            with host.approval("rm -rf build", description="dangerous", pattern_key="rm",
                               session_key="chat-1") as approval:
                approval.resolve("once")
                approval.resolve("deny")  # ignored: already resolved
            with host.approval("rm -rf /"):
                pass  # no answer → timeout
            with pytest.raises(ValueError), host.approval("curl x | sh"):
                raise ValueError("turn ended")  # withdrawn → cancelled
            return "done"

        turn.call_tool("terminal", {}, tool, tool_call_id="call_7")
    pre = rec.of("pre_approval_request")
    post = rec.of("post_approval_response")
    assert len(pre) == len(post) == 3
    assert [e["choice"] for e in post] == ["once", "timeout", "cancelled"]
    assert pre[0]["turn_id"] == turn.turn_id and pre[0]["tool_call_id"] == "call_7"
    assert pre[0]["pattern_keys"] == ["rm"] and pre[0]["session_key"] == "chat-1" and pre[0]["surface"] == "cli"
    outside = host.approval("ls")
    outside.resolve("")
    assert rec.last("post_approval_response")["choice"] == "timeout"
    assert rec.last("pre_approval_request")["turn_id"] == ""


def test_obs_44_human_input_pairs_redacted_prompt(host: Host, rec: Recorder) -> None:
    """OBS-44 / OBS-45 / OBS-64: request_id shared, prompt redacted, one resolution, error on exception."""
    with host.session() as session, session.turn("go") as turn:
        with turn.human_input("sudo", "Password for Authorization: Bearer abc.def.ghi ?",
                              metadata={"attempt": 1}) as wait:
            wait.resolve("submitted")
        with pytest.raises(TimeoutError), turn.human_input("clarify", "Which file?"):
            raise TimeoutError
        with turn.human_input("clarify", "Which file?"):
            pass
    requests = rec.of("on_human_input_request")
    resolved = rec.of("on_human_input_resolved")
    assert [r["request_id"] for r in requests] == [r["request_id"] for r in resolved]
    assert all(re.fullmatch(r"[0-9a-f]{32}", r["request_id"]) for r in requests)
    assert "abc.def.ghi" not in requests[0]["prompt"] and requests[0]["prompt"].startswith("Password")
    assert requests[0]["attempt"] == 1 and requests[0]["kind"] == "sudo"
    assert [r["outcome"] for r in resolved] == ["submitted", "error", "error"]
    assert requests[0]["session_id"] == session.session_id


def test_obs_47_failing_human_input_observer_logs_at_debug(engine: Engine, host: Host, caplog: Any) -> None:
    """OBS-47: failures of human-input observers are DEBUG only."""
    import logging

    def boom(**kw: Any) -> None:
        raise RuntimeError("observer broke")

    engine.register_hook("on_human_input_request", boom)
    with caplog.at_level(logging.DEBUG, logger="hermes_pipeline"):
        with host.human_input("clarify", "q?") as wait:
            wait.resolve("provided")
    assert [r.levelno for r in caplog.records if "observer broke" in r.getMessage()] == [logging.DEBUG]


def test_subagent_hooks_links_and_metadata_only_history(host: Host, rec: Recorder) -> None:
    """§7.9 / OBS-48 / OBS-50 / OBS-65: links, child IDs in child hooks, metadata-only tool history (no raw
    argument values or results)."""
    with host.session("parent") as session, session.turn("delegate it") as turn:
        with turn.subagent(role="researcher", goal="find the docs") as run:
            with run.session.turn("find the docs") as child_turn:
                child_turn.call_tool("fetch", {"url": "https://user:pw@example.com/a?token=SECRET#frag",
                                               "body": "raw value never kept"}, lambda **a: "x" * 10)
                with child_turn.subagent(role="nested", goal="deeper") as nested:
                    nested.finish("failed", summary="could not")
                child_turn.complete("found")
            run.finish("completed", summary="docs found")
    start = rec.of("subagent_start")
    stop = rec.of("subagent_stop")
    assert start[0]["parent_session_id"] == "parent" and start[0]["parent_subagent_id"] is None
    assert start[0]["parent_turn_id"] == turn.turn_id and start[0]["child_goal"] == "find the docs"
    assert start[1]["parent_subagent_id"] == start[0]["child_subagent_id"]
    child_sid = start[0]["child_session_id"]
    assert rec.last("post_tool_call")["session_id"] == child_sid
    child_pre = [e for e in rec.of("pre_llm_call") if e["session_id"] == child_sid]
    assert len(child_pre) == 1 and child_pre[0]["turn_id"] != turn.turn_id
    outer = [s for s in stop if s["child_session_id"] == child_sid][0]
    assert outer["child_status"] == "completed" and outer["child_summary"] == "docs found"
    assert outer["child_subagent_id"] == start[0]["child_subagent_id"]
    history = outer["tool_call_history"]
    assert history == [{"tool_name": "fetch", "arg_names": ["url", "body"],
                        "targets": ["https://example.com/a"], "input_bytes": history[0]["input_bytes"],
                        "output_bytes": 10, "outcome": "ok"}]
    assert "SECRET" not in str(outer.payload) and "raw value" not in str(outer.payload)
    assert outer["tool_call_history_dropped"] == 0
    assert [s["child_status"] for s in stop] == ["failed", "completed"]


def test_obs_49_history_keeps_200_newest(host: Host, rec: Recorder) -> None:
    """OBS-49: at most 200 newest entries; older ones counted as dropped."""
    with host.session() as session, session.turn("x") as turn, turn.subagent(role="r", goal="g") as run:
        with run.session.turn("g") as child:
            for i in range(205):
                child.call_tool(f"tool_{i}", {}, lambda: "ok")
    stop = rec.last("subagent_stop")
    assert len(stop["tool_call_history"]) == 200 and stop["tool_call_history_dropped"] == 5
    assert stop["tool_call_history"][0]["tool_name"] == "tool_5"


def test_subagent_exception_reports_error_and_finalizes_child(host: Host, rec: Recorder) -> None:
    """A child that raises reports child_status error; its session is finalized."""
    with host.session() as session, session.turn("x") as turn:
        with pytest.raises(ValueError), turn.subagent(role="r", goal="g") as run:
            raise ValueError("child crashed")
    assert rec.last("subagent_stop")["child_status"] == "error"
    finalized = [e["session_id"] for e in rec.of("on_session_finalize")]
    assert finalized == [run.session.session_id, session.session_id]


def test_obs_34_concurrent_tool_calls_from_threads(host: Host, rec: Recorder) -> None:
    """OBS-21 / OBS-34: one turn's tool calls run concurrently from a thread pool; payloads never mix."""
    with host.session() as session, session.turn("fan out") as turn:
        def tool(n: int) -> str:
            ctx = current_context()
            return f"{n}:{ctx.tool_call_id}"

        with ThreadPoolExecutor(8) as pool:
            results = list(pool.map(lambda n: turn.call_tool("t", {"n": n}, tool, tool_call_id=f"c{n}"), range(64)))
    assert results == [f"{n}:c{n}" for n in range(64)]
    posts = rec.of("post_tool_call")
    assert sorted(p["tool_call_id"] for p in posts) == sorted(f"c{n}" for n in range(64))
    assert all(p["result"] == f"{p['args']['n']}:{p['tool_call_id']}" for p in posts)


def test_run_in_context_carries_turn_to_worker_thread(host: Host, rec: Recorder) -> None:
    """Contextvars: run_in_context hands the current turn to another thread (approval IDs)."""
    with host.session() as session, session.turn("x") as turn:
        def ask() -> None:
            host.approval("cmd").resolve("once")

        worker = threading.Thread(target=run_in_context(ask))
        worker.start()
        worker.join()
    assert rec.last("pre_approval_request")["turn_id"] == turn.turn_id


def test_concurrent_asyncio_sessions_keep_their_own_context(host: Host, rec: Recorder) -> None:
    """Contextvars: concurrent asyncio tasks each see their own session and turn."""

    async def agent(name: str) -> None:
        with host.session(name) as session, session.turn(name) as turn:
            for _ in range(3):
                await asyncio.sleep(0)

                async def tool() -> str:
                    await asyncio.sleep(0)
                    host.approval(f"{name}-cmd").resolve("once")
                    return current_context().session.session_id  # type: ignore[union-attr]

                assert await turn.acall_tool("t", {}, tool) == name

    async def main() -> None:
        await asyncio.gather(*(agent(f"s{i}") for i in range(5)))

    asyncio.run(main())
    for event in rec.of("pre_approval_request"):
        assert event["command"] == f"{event['session_id']}-cmd"
    assert len(rec.of("pre_approval_request")) == 15


def test_capture_helper_removes_itself(engine: Engine, host: Host) -> None:
    """The testing helper records inside the block and unregisters afterwards."""
    with capture(engine) as recorded:
        host.session().finalize()
    assert recorded.names() == ["on_session_finalize"]
    assert not engine.has_hook("on_session_finalize")
