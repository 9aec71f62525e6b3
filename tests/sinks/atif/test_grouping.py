"""ATIF grouping: one trajectory per top-level agent scope, embedded subagents, rotated segments, group_by = "turn",
and concurrent sessions that never mix steps (spec 04 §3.7, §3.9, FMT-43..FMT-48)."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from hermes_pipeline import Engine, Host
from hermes_pipeline.host import SegmentPolicy, run_in_context

from tests.sinks.atif._support import Pipeline, agent_steps, documents, memory_atif_plugin, results, walk
from tests.sinks.atof._support import starts
from hermes_pipeline.testing import chat_response


def delegate(turn: Any, role: str, depth: int) -> str:
    """A tool body that runs a subagent, which itself delegates through a tool while ``depth`` > 1."""
    with turn.subagent(role=role, goal=f"help at depth {depth}") as run:
        with run.session.turn(f"{role} works") as child:
            child.call_llm({"model": "m", "messages": []}, lambda r: chat_response(None, [{
                "id": f"{role}-call", "type": "function", "function": {"name": "delegate", "arguments": "{}"}}]))
            if depth > 1:
                child.call_tool("delegate", {}, lambda: delegate(child, f"{role}-inner", depth - 1),
                                tool_call_id=f"{role}-call")
            else:
                child.call_tool("delegate", {}, lambda: "leaf", tool_call_id=f"{role}-call")
            child.complete("ok")
        run.finish("completed", summary=f"{role} done")
    return f"{role} delegated"


def test_fmt_43_44_nested_subagents_are_embedded_and_referenced(engine: Engine) -> None:
    """FMT-43: nested agent scopes become embedded trajectories (recursively), never files of their own;
    FMT-44: the delegating tool's result references the child by trajectory_id; without a tool scope the ref goes
    on a result without source_call_id in the turn's latest agent step."""
    pipeline = Pipeline(engine)
    host = Host(engine, model="m")
    with host.session("parent") as session, session.turn("go") as turn:
        turn.call_llm({"model": "m", "messages": []}, lambda r: chat_response(None, [{
            "id": "top", "type": "function", "function": {"name": "delegate", "arguments": "{}"}}]))
        turn.call_tool("delegate", {}, lambda: delegate(turn, "helper", 2), tool_call_id="top")
        with turn.subagent(role="direct", goal="no tool") as run:  # not under a tool scope
            run.finish("failed", summary="gave up")
        turn.complete("done")
    pipeline.shutdown()
    events = pipeline.events()
    [doc] = pipeline.documents()  # one file for the whole tree
    assert len(pipeline.atif_dest.items) == 1
    sessions = {s["metadata"]["hermes.session_id"]: s for s in starts(events, "hermes.session")}
    [step] = agent_steps(doc)
    by_call = {r.get("source_call_id"): r for r in results(step)}
    helper_uuid = next(s["uuid"] for s in sessions.values() if s["data"] and s["data"].get("child_role") == "helper")
    direct_uuid = next(s["uuid"] for s in sessions.values() if s["data"] and s["data"].get("child_role") == "direct")
    assert by_call["top"]["subagent_trajectory_ref"] == [{"trajectory_id": helper_uuid, "session_id": helper_uuid}]
    assert by_call[None] == {"subagent_trajectory_ref": [{"trajectory_id": direct_uuid, "session_id": direct_uuid}]}
    helper, direct = doc["subagent_trajectories"]
    assert (helper["trajectory_id"], direct["trajectory_id"]) == (helper_uuid, direct_uuid)
    assert direct["extra"]["hermes"]["subagent"] == {"role": "direct", "status": "failed"} and direct["steps"] == []
    [inner] = helper["subagent_trajectories"]  # recursive embedding
    inner_uuid = next(s["uuid"] for s in sessions.values() if s["data"] and s["data"].get("child_role") == "helper-inner")
    assert inner["trajectory_id"] == inner_uuid and "subagent_trajectories" not in inner
    [helper_step] = agent_steps(helper)
    assert results(helper_step)[0]["subagent_trajectory_ref"][0]["trajectory_id"] == inner_uuid
    assert helper["extra"]["hermes"]["session_id"] != doc["extra"]["hermes"]["session_id"]  # the child's Hermes id
    assert [s["message"] for s in inner["steps"] if s["source"] == "user"] == ["helper-inner works"]
    ids = [t["trajectory_id"] for t in walk(doc)]
    assert len(ids) == len(set(ids)) == 4


def test_fmt_48_rotated_segments_are_separate_linked_files(engine: Engine) -> None:
    """FMT-48 / note 4: each rotated segment is its own file; continued_trajectory_ref names the next file and
    previous_trajectory_id the earlier root; segment numbers and reasons come from the session scope."""
    plugin, dest = memory_atif_plugin(engine)
    host = Host(engine, model="m", segments=SegmentPolicy(max_turns=1, on_compaction=True))
    with host.session("long") as session:
        for index in range(3):
            with session.turn(f"turn {index}") as turn:
                turn.complete("ok")
            if index == 1:
                session.report_compaction()
    assert plugin.shutdown(10.0)
    docs = documents(dest)
    names = [item.name for item in dest.items]
    assert len(docs) == 3 and len(set(names)) == 3
    first, second, third = docs
    assert [[s["message"] for s in d["steps"]] for d in docs] == [["turn 0"], ["turn 1"], ["turn 2"]]
    assert first["continued_trajectory_ref"] == names[1] and second["continued_trajectory_ref"] == names[2]
    assert "continued_trajectory_ref" not in third
    assert "previous_trajectory_id" not in first["extra"]["hermes"]
    assert second["extra"]["hermes"]["previous_trajectory_id"] == first["trajectory_id"]
    assert third["extra"]["hermes"]["previous_trajectory_id"] == second["trajectory_id"]
    assert [(d["extra"]["hermes"].get("segment"), d["extra"]["hermes"].get("segment_reason")) for d in docs] == [
        (None, None), (1, "max_turns"), (2, "compaction")]
    assert {d["extra"]["hermes"]["session_id"] for d in docs} == {"long"}


def test_fmt_47_group_by_turn(engine: Engine) -> None:
    """FMT-47 / FMT-48: group_by = "turn" writes one trajectory per agent.run, session values from the session
    scope, subagents still embedded; the BOOK-27 template {date}-{session_id}.json."""
    pipeline = Pipeline(engine, atif={"group_by": "turn", "filename_template": "{date}-{session_id}.json"})
    host = Host(engine, model="gpt-x", platform="telegram")
    with host.session("chat") as session:
        for index in range(2):
            with session.turn(f"q{index}") as turn:
                turn.call_tool("delegate", {}, lambda: delegate(turn, "helper", 1), tool_call_id=f"d{index}")
                turn.complete("ok")
    pipeline.shutdown()
    events = pipeline.events()
    docs = pipeline.documents()
    runs = [s for s in starts(events, "agent.run") if s["metadata"]["hermes.session_id"] == "chat"]
    assert [d["trajectory_id"] for d in docs] == [r["uuid"] for r in runs]
    for doc, run, item in zip(docs, runs, pipeline.atif_dest.items):
        assert item.name == f"{run['timestamp'][:10]}-{run['uuid']}.json"
        assert doc["agent"]["model_name"] == "gpt-x"
        assert (doc["extra"]["hermes"]["session_id"], doc["extra"]["hermes"]["platform"]) == ("chat", "telegram")
        assert [s["source"] for s in doc["steps"]][0] == "user"
        [child] = doc["subagent_trajectories"]
        [step] = agent_steps(doc)
        assert results(step)[0]["subagent_trajectory_ref"][0]["trajectory_id"] == child["trajectory_id"]


def thread_session(host: Host, index: int) -> None:
    with host.session(f"thread-{index}") as session:
        for t in range(2):
            with session.turn(f"user {index}.{t}") as turn:
                turn.call_llm({"model": "m", "messages": []}, lambda r: chat_response(None, [
                    {"id": f"{index}-{t}-{i}", "type": "function", "function": {"name": "work", "arguments": "{}"}}
                    for i in range(3)]))
                barrier = threading.Barrier(3)

                def work(i: int) -> str:
                    barrier.wait(10)  # all three calls of the turn are open together
                    if i == 0:
                        return delegate(turn, f"sub-{index}-{t}", 1)
                    return f"result {index}.{t}.{i}"

                with ThreadPoolExecutor(3) as pool:
                    futures = [pool.submit(run_in_context(turn.call_tool), "work", {"i": i}, work,
                                           tool_call_id=f"{index}-{t}-{i}") for i in range(3)]
                    for future in futures:
                        future.result()
                turn.complete("ok")


def check_own_steps(doc: dict[str, Any], index: int) -> None:
    """Every step of session ``index``'s trajectory belongs to that session (FMT-47)."""
    assert doc["extra"]["hermes"]["session_id"] == f"thread-{index}"
    users = [s["message"] for s in doc["steps"] if s["source"] == "user"]
    assert users == [f"user {index}.0", f"user {index}.1"]
    calls = [c["tool_call_id"] for s in agent_steps(doc) for c in s.get("tool_calls", [])]
    assert sorted(calls) == sorted(f"{index}-{t}-{i}" for t in range(2) for i in range(3))
    answered = [r["source_call_id"] for s in agent_steps(doc) for r in results(s) if "source_call_id" in r]
    assert sorted(answered) == sorted(calls)
    contents = [r["content"] for s in agent_steps(doc) for r in results(s) if "content" in r]
    assert all(str(index) in c for c in contents)
    assert [c["extra"]["hermes"]["subagent"]["role"] for c in doc["subagent_trajectories"]] == [
        f"sub-{index}-0", f"sub-{index}-1"]


def test_fmt_47_concurrent_thread_sessions_never_mix_steps(engine: Engine) -> None:
    """FMT-47: six sessions on threads, with parallel tool calls and subagents, give six clean trajectories."""
    pipeline = Pipeline(engine)
    host = Host(engine, model="m")
    threads = [threading.Thread(target=thread_session, args=(host, n)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    pipeline.shutdown()
    docs = {d["extra"]["hermes"]["session_id"]: d for d in pipeline.documents()}
    assert sorted(docs) == [f"thread-{n}" for n in range(6)]
    for n in range(6):
        check_own_steps(docs[f"thread-{n}"], n)
    assert not any(item.partial for item in pipeline.atif_dest.items)


async def async_session(host: Host, index: int) -> None:
    with host.session(f"task-{index}") as session:
        for t in range(2):
            with session.turn(f"user {index}.{t}") as turn:
                await turn.acall_llm({"model": "m", "messages": []}, _answer(index, t))
                barrier = asyncio.Barrier(3)

                async def work(i: int) -> str:
                    await barrier.wait()
                    return f"result {index}.{t}.{i}"

                await asyncio.gather(*(turn.acall_tool("work", {"i": i}, work, tool_call_id=f"{index}-{t}-{i}")
                                       for i in range(3)))
                turn.complete("ok")


def _answer(index: int, t: int) -> Any:
    async def provider(request: dict[str, Any]) -> Any:
        await asyncio.sleep(0)  # yield to the other sessions' tasks
        return chat_response(None, [{"id": f"{index}-{t}-{i}", "type": "function",
                                     "function": {"name": "work", "arguments": "{}"}} for i in range(3)])
    return provider


def test_fmt_47_asyncio_sessions_never_mix_steps(engine: Engine) -> None:
    """FMT-47: interleaved asyncio sessions each get a trajectory with only their own steps."""
    pipeline = Pipeline(engine)
    host = Host(engine, model="m")

    async def main() -> None:
        await asyncio.gather(*(async_session(host, n) for n in range(8)))

    asyncio.run(main())
    pipeline.shutdown()
    docs = {d["extra"]["hermes"]["session_id"]: d for d in pipeline.documents()}
    assert sorted(docs) == sorted(f"task-{n}" for n in range(8))
    for n in range(8):
        doc = docs[f"task-{n}"]
        assert [s["message"] for s in doc["steps"] if s["source"] == "user"] == [f"user {n}.0", f"user {n}.1"]
        answered = sorted(r["source_call_id"] for s in agent_steps(doc) for r in results(s))
        assert answered == sorted(f"{n}-{t}-{i}" for t in range(2) for i in range(3))
        assert all(r["content"].startswith(f"result {n}.") for s in agent_steps(doc) for r in results(s))


def test_fmt_47_two_profiles_in_one_process_stay_separate() -> None:
    """FMT-47: two hosts (profiles) with their own engines and ATIF plugins write only their own sessions."""
    outputs = []
    for profile in ("work", "home"):
        engine = Engine()
        plugin, dest = memory_atif_plugin(engine)
        host = Host(engine, model=f"{profile}-model", platform=profile)
        with host.session(f"{profile}-session") as session, session.turn(f"hi from {profile}") as turn:
            turn.complete("ok")
        assert plugin.shutdown(10.0)
        outputs.append((profile, documents(dest)))
    for profile, docs in outputs:
        [doc] = docs
        assert doc["extra"]["hermes"]["session_id"] == f"{profile}-session"
        assert doc["agent"]["model_name"] == f"{profile}-model" and doc["extra"]["hermes"]["platform"] == profile
        assert [s["message"] for s in doc["steps"]] == [f"hi from {profile}"]


def test_fmt_24_id_rotating_compaction_starts_a_new_trajectory(engine: Engine) -> None:
    """Row 2 / CFG-75: an ID-rotating compaction closes the old root (written as complete), the new id is a new root."""
    plugin, dest = memory_atif_plugin(engine)
    host = Host(engine, model="m")
    with host.session("old") as session:
        with session.turn("before") as turn:
            new = session.report_compaction("new")
            turn.complete("done")
        with new.turn("after") as turn:
            turn.complete("ok")
        new.finalize()
    assert plugin.shutdown(10.0)
    docs = documents(dest)
    assert [(d["extra"]["hermes"]["session_id"], [s["message"] for s in d["steps"]]) for d in docs] == [
        ("old", ["before"]), ("new", ["after"])]
    assert all("notes" not in d and "continued_trajectory_ref" not in d for d in docs)
