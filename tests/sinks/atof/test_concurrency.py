"""Concurrent sessions never mix scopes (FMT-21, FMT-47 prerequisites) and no I/O runs on the caller's thread (FMT-79)."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from hermes_pipeline import Engine, Host
from hermes_pipeline.export.files import JsonlFileDestination
from hermes_pipeline.host import run_in_context
from hermes_pipeline.sinks.atof import build_atof_plugin

from tests.sinks.atof._support import collect, memory_plugin, scopes, starts
from hermes_pipeline.testing import chat_response

TOOLS_PER_TURN = 3


def check_consistency(events: list[dict[str, Any]]) -> None:
    """Every scope is paired; every parent is a start of the same Hermes session (subagents: of the parent session)."""
    pairs = scopes(events)
    assert all(set(p) == {"start", "end"} for p in pairs.values())
    by_uuid = {e["uuid"]: e for e in starts(events)}
    for event in events:
        parent = event["parent_uuid"]
        if parent is None:
            assert event["name"] == "hermes.session"
            continue
        own = event["metadata"]["hermes.session_id"]
        start_meta = pairs[event["uuid"]]["start"]["metadata"] if event["kind"] == "scope" else event["metadata"]
        assert start_meta["hermes.session_id"] == own
        expected = start_meta.get("hermes.parent_session_id", own) if event["name"] == "hermes.session" else own
        assert by_uuid[parent]["metadata"]["hermes.session_id"] == expected, (event, by_uuid[parent])


def thread_session(host: Host, index: int, callers: set[int]) -> None:
    callers.add(threading.get_ident())
    with host.session(f"thread-{index}") as session:
        for t in range(2):
            with session.turn(f"turn {t}") as turn:
                turn.call_llm({"model": "m", "messages": [{"role": "user", "content": str(t)}]},
                              lambda r: chat_response(None, [{"id": f"c{i}", "type": "function", "function": {
                                  "name": "work", "arguments": "{}"}} for i in range(TOOLS_PER_TURN)]))
                barrier = threading.Barrier(TOOLS_PER_TURN)

                def work(i: int) -> str:
                    callers.add(threading.get_ident())
                    barrier.wait(10)  # all three tool calls are open at the same time
                    if i == 0:
                        with turn.subagent(role="helper", goal="help") as run:
                            with run.session.turn("sub") as child:
                                child.complete("ok")
                            run.finish("completed", summary="ok")
                    return f"done {i}"

                with ThreadPoolExecutor(TOOLS_PER_TURN) as pool:
                    futures = [pool.submit(run_in_context(turn.call_tool), "work", {"i": i}, work,
                                           tool_call_id=f"{session.session_id}-{t}-{i}")
                               for i in range(TOOLS_PER_TURN)]
                    assert [f.result() for f in futures] == [f"done {i}" for i in range(TOOLS_PER_TURN)]
                turn.complete("ok")


def test_fmt_21_threads_never_mix_sessions_and_concurrent_tools_are_parallel(engine: Engine) -> None:
    """FMT-21: concurrent tool scopes take the turn as parent and carry ``parallel``; sessions on threads stay apart."""
    plugin, (dest,) = memory_plugin(engine)
    host = Host(engine, model="m")
    callers: set[int] = set()
    threads = [threading.Thread(target=thread_session, args=(host, n, callers)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    events = collect(plugin, dest)
    check_consistency(events)
    assert len([s for s in starts(events, "hermes.session") if "hermes.scope_role" not in s["metadata"]]) == 6
    turns = {s["uuid"]: s for s in starts(events, "agent.run")}
    tools = [s for s in starts(events, "work")]
    assert len(tools) == 6 * 2 * TOOLS_PER_TURN
    for tool in tools:
        turn = turns[tool["parent_uuid"]]
        assert turn["metadata"]["hermes.turn_id"] == tool["metadata"]["hermes.turn_id"]
    per_turn: dict[str, list[list[str]]] = {}
    for tool in tools:
        per_turn.setdefault(tool["parent_uuid"], []).append(tool["attributes"])
    assert all(flags.count(["parallel"]) == TOOLS_PER_TURN for flags in per_turn.values())  # FMT-9: all of them
    subagents = [s for s in starts(events, "hermes.session") if "hermes.scope_role" in s["metadata"]]
    by_uuid = {e["uuid"]: e for e in starts(events)}
    assert len(subagents) == 12
    for child in subagents:  # note 5: the delegating tool call itself, among three concurrent ones
        parent = by_uuid[child["parent_uuid"]]
        assert parent["name"] == "work" and parent["category_profile"]["tool_call_id"].endswith("-0")
    assert not callers & set(dest.thread_ids)  # FMT-79: delivery never ran on a caller thread


async def async_session(host: Host, index: int) -> None:
    with host.session(f"task-{index}") as session:
        for t in range(2):
            with session.turn(f"turn {t}") as turn:
                barrier = asyncio.Barrier(TOOLS_PER_TURN)

                async def work(i: int) -> str:
                    await barrier.wait()
                    await asyncio.sleep(0)
                    return f"done {i}"

                results = await asyncio.gather(*(turn.acall_tool("work", {"i": i}, work, tool_call_id=f"{index}-{t}-{i}")
                                                 for i in range(TOOLS_PER_TURN)))
                assert results == [f"done {i}" for i in range(TOOLS_PER_TURN)]
                turn.complete("ok")


def test_fmt_21_asyncio_tasks_never_mix_sessions(engine: Engine) -> None:
    """FMT-21: sessions on interleaved asyncio tasks keep their own scope trees."""
    plugin, (dest,) = memory_plugin(engine)
    host = Host(engine, model="m")

    async def main() -> None:
        await asyncio.gather(*(async_session(host, n) for n in range(8)))

    asyncio.run(main())
    events = collect(plugin, dest)
    check_consistency(events)
    tools = starts(events, "work")
    assert len(tools) == 8 * 2 * TOOLS_PER_TURN
    assert sum(t["attributes"] == ["parallel"] for t in tools) == 8 * 2 * TOOLS_PER_TURN  # FMT-9: all of them
    by_uuid = {e["uuid"]: e for e in starts(events)}
    for tool in tools:
        session = tool["metadata"]["hermes.session_id"]
        assert tool["category_profile"]["tool_call_id"].startswith(session.removeprefix("task-") + "-")
        assert by_uuid[tool["parent_uuid"]]["name"] == "agent.run"


def test_two_profiles_in_one_process_stay_separate() -> None:
    """Two hosts (profiles) with their own engines and plugins: each stream holds only its own sessions."""
    streams = []
    for profile in ("work", "home"):
        engine = Engine()
        plugin, (dest,) = memory_plugin(engine)
        host = Host(engine, model=f"{profile}-model", platform=profile)
        with host.session(f"{profile}-session") as session, session.turn("hi") as turn:
            turn.complete("ok")
        streams.append((profile, collect(plugin, dest)))
    for profile, events in streams:
        assert {e["metadata"]["hermes.session_id"] for e in events} == {f"{profile}-session"}
        assert starts(events, "hermes.session")[0]["data"] == {"model": f"{profile}-model", "platform": profile}


class RecordingFile(JsonlFileDestination):
    """The real JSONL file destination, recording which threads did its file-system work."""

    threads: set[int]

    def open(self) -> None:
        self.threads.add(threading.get_ident())
        super().open()

    def write(self, batch: list[Any]) -> None:
        self.threads.add(threading.get_ident())
        super().write(batch)

    def close(self) -> None:
        self.threads.add(threading.get_ident())
        super().close()


def test_fmt_79_no_file_io_on_the_callers_thread(engine: Engine, tmp_path: Path) -> None:
    """FMT-79: with the real file destination, open/write/close all run on the writer thread."""
    dest = RecordingFile(tmp_path, "e.jsonl", mode="overwrite")
    dest.threads = set()
    plugin = build_atof_plugin({"enabled": True, "sinks": [{"type": "file"}]}, destinations={0: dest})
    engine.add_plugin(plugin, name="atof")
    host = Host(engine, model="m")
    with host.session() as session, session.turn("go") as turn:
        for i in range(20):
            turn.call_tool("read_file", {"path": str(i)}, lambda path: "x", tool_call_id=f"c{i}")
        turn.complete("ok")
    assert plugin.flush(5.0) and plugin.shutdown(5.0)
    assert len((tmp_path / "e.jsonl").read_text().splitlines()) == 44
    assert dest.threads and threading.get_ident() not in dest.threads
