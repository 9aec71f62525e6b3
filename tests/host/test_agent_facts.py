"""Issue #12 item 2 (host API): the host agent's version and its toolset registry.

``Host(agent_version=...)`` reaches ATIF ``agent.version`` (spec 04 §3.2: ``atif.agent_version``,
else the host version when known, else this package's), OTel ``gen_ai.agent.version`` and the
shared-metrics ``resource.hermes_version`` (SM-45); ``Host(toolsets=...)`` gives shared metrics the
declaring toolset of each tool, from which ``tool_category`` is derived (SM-25).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline import Engine, Host, __version__
from hermes_pipeline.shared_metrics import ManualClock, attach_shared_metrics
from hermes_pipeline.testing import Recorder

from tests.sinks.atif._support import Pipeline
from hermes_pipeline.testing import chat_response
from tests.shared_metrics.conftest import T0, rows


def one_turn(host: Host, *, resumed: bool = False, tools: tuple[str, ...] = ("read_file",)) -> None:
    with host.session(resumed=resumed) as session, session.turn("read it") as turn:
        turn.call_llm({"model": "m", "messages": [{"role": "user", "content": "read it"}]},
                      lambda req: chat_response("ok"))
        for i, name in enumerate(tools):
            turn.call_tool(name, {"path": "a"}, lambda path: "text", tool_call_id=f"c{i}")
        turn.complete("done")


@pytest.mark.parametrize("resumed", [False, True])
def test_atif_agent_version_is_the_host_agents_version(resumed: bool) -> None:
    """#12.2 / spec 04 §3.2: no ``atif.agent_version`` → the host's declared version (also for a resumed
    session, which has no ``on_session_start``); subagent trajectories carry it too."""
    engine = Engine()
    pipeline = Pipeline(engine, atif={"group_by": "agent"})
    host = Host(engine, model="m", agent_version="0.19.0")
    with host.session(resumed=resumed) as session, session.turn("delegate") as turn:
        with turn.subagent(role="researcher", goal="look") as run:
            with run.session.turn("look") as child:
                child.complete("found")
            run.finish("completed", summary="found")
        turn.complete("done")
    pipeline.shutdown()
    documents = pipeline.documents()
    assert documents and {d["agent"]["version"] for d in documents} == {"0.19.0"}
    sessions = [e for e in pipeline.events() if e.get("name") == "hermes.session" and e["scope_category"] == "start"]
    assert sessions and all(e["metadata"]["hermes.agent.version"] == "0.19.0" for e in sessions)


def test_atif_configured_agent_version_wins_and_default_is_this_package() -> None:
    """#12.2 / spec 04 §3.2: ``atif.agent_version`` beats the host version; without either, this package's."""
    for atif, declared, expected in (({"agent_version": "9.9"}, "0.19.0", "9.9"), ({}, None, __version__)):
        engine = Engine()
        pipeline = Pipeline(engine, atif=atif)
        one_turn(Host(engine, model="m", agent_version=declared), tools=())
        pipeline.shutdown()
        assert [d["agent"]["version"] for d in pipeline.documents()] == [expected]
        start = next(e for e in pipeline.events() if e.get("name") == "hermes.session")
        assert ("hermes.agent.version" in start["metadata"]) is (declared is not None)


def test_agent_version_rides_on_session_start_and_turns_and_forwarded_payloads() -> None:
    """#12.2: the payloads carry ``agent_version``; a payload an adapter forwards through ``host.emit``
    gains it unless it has its own; other hooks are left alone."""
    engine = Engine()
    rec = Recorder()
    engine.add_plugin(rec, name="rec")
    host = Host(engine, model="m", agent_version=" 0.19.0 ")
    one_turn(host, tools=())
    assert host.agent_version == "0.19.0"
    assert rec.last("on_session_start")["agent_version"] == rec.last("pre_llm_call")["agent_version"] == "0.19.0"
    assert "agent_version" not in rec.last("post_llm_call").payload
    forwarded = {"session_id": "s-x", "model": "m", "platform": "cli"}
    host.emit("on_session_start", forwarded)
    assert rec.last("on_session_start")["agent_version"] == "0.19.0" and "agent_version" not in forwarded
    host.emit("on_session_start", {**forwarded, "agent_version": "1.2.3"})
    assert rec.last("on_session_start")["agent_version"] == "1.2.3"
    plain = Recorder()
    engine2 = Engine()
    engine2.add_plugin(plain, name="rec")
    one_turn(Host(engine2, model="m"), tools=())
    assert plain.last("on_session_start").payload.get("agent_version") is None


def test_tool_hooks_carry_the_toolset_of_the_hosts_registry() -> None:
    """#12.2: ``pre_tool_call`` / ``post_tool_call`` carry ``toolset`` from a mapping or a function;
    an unknown tool or a failing registry gives ``None`` and the tool still runs."""
    def registry(name: str) -> str | None:
        if name == "broken":
            raise RuntimeError("registry down")
        return {"web_search": "web"}.get(name)

    for toolsets in ({"read_file": "file", "web_search": "web"}, registry):
        engine = Engine()
        rec = Recorder()
        engine.add_plugin(rec, name="rec")
        one_turn(Host(engine, model="m", toolsets=toolsets), tools=("read_file", "web_search", "unlisted", "broken"))
        expected = ["file" if isinstance(toolsets, dict) else None, "web", None, None]
        assert [e["toolset"] for e in rec.of("pre_tool_call")] == expected
        assert [e["toolset"] for e in rec.of("post_tool_call")] == expected
        assert [e["status"] for e in rec.of("post_tool_call")] == ["ok"] * 4


def test_host_refuses_mistyped_agent_facts() -> None:
    with pytest.raises(TypeError, match="agent_version"):
        Host(Engine(), agent_version=19)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="toolsets"):
        Host(Engine(), toolsets=["read_file"])  # type: ignore[arg-type]


def test_shared_metrics_tool_category_and_hermes_version_from_the_host(tmp_path: Path) -> None:
    """#12.2 / SM-25 / SM-45: categories from the host's toolsets (``file``, prefix rules, ``other`` for a
    custom toolset, ``unknown`` for a tool it does not list) and the package resource's ``hermes_version``."""
    engine = Engine().child()
    handle = attach_shared_metrics(engine, tmp_path, enabled=True, clock=ManualClock(T0))
    assert handle is not None
    try:
        assert handle.resource.hermes_version == __version__  # nothing declared yet
        toolsets = {"read_file": "file", "browser_click": "browser-tools", "deploy": "acme_ops",
                    "mcp_github_search": "mcp-github", "todo": "todo"}
        host = Host(engine, model="m", agent_version="0.19.0", toolsets=toolsets)
        one_turn(host, tools=("read_file", "browser_click", "deploy", "mcp_github_search", "todo", "unlisted"))
        assert handle.flush(10)
        tool_rows = rows(handle.store, "hermes.tool_call.count")
    finally:
        handle.close()
    categories: dict[str, int] = {}
    for row in tool_rows:
        category = row["dimensions"]["tool_category"]
        categories[category] = categories.get(category, 0) + row["value"]
    assert categories == {"file": 1, "browser": 1, "other": 1, "mcp": 1, "planning": 1, "unknown": 1}
    assert {row["hermes_version"] for row in rows(handle.store)} == {"0.19.0"}
    assert handle.resource.hermes_version == "0.19.0"


def test_shared_metrics_explicit_resource_is_kept_and_bad_versions_ignored(tmp_path: Path) -> None:
    """SM-45: an explicitly passed resource is not overridden; a version that is not a version string
    (a path, too long) never reaches the store."""
    from hermes_pipeline.shared_metrics.resource import Resource

    fixed = Resource("7.0.0", "linux", "x86_64", "pip")
    for resource, declared, expected in ((fixed, "0.19.0", "7.0.0"), (None, "/home/me/hermes", __version__),
                                         (None, "v" * 80, __version__)):
        engine = Engine().child()
        home = tmp_path / f"h{len(str(declared))}{resource is None}"
        handle = attach_shared_metrics(engine, home, enabled=True, clock=ManualClock(T0), resource=resource)
        assert handle is not None
        try:
            one_turn(Host(engine, model="m", agent_version=declared))
            assert handle.flush(10)
            versions: set[Any] = {row["hermes_version"] for row in rows(handle.store)}
        finally:
            handle.close()
        assert versions == {expected}


def test_exporters_carry_the_hosts_toolset_on_tool_scopes() -> None:
    """#12.2 / spec 04 (``hermes.toolset`` on tool starts, from the Hermes registry): the toolset the host
    declared reaches the ATOF tool start (with ``remote`` for an MCP toolset) and the ATIF tool call."""
    engine = Engine()
    pipeline = Pipeline(engine)
    host = Host(engine, model="m", toolsets={"read_file": "file", "gh_search": "mcp-github"})
    names = ("read_file", "gh_search", "unlisted")
    calls = [{"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": "{}"}}
             for i, name in enumerate(names)]
    request = {"model": "m", "messages": [{"role": "user", "content": "go"}]}
    with host.session() as session, session.turn("go") as turn:
        turn.call_llm(request, lambda req: chat_response(None, calls))
        for i, name in enumerate(names):
            turn.call_tool(name, {}, lambda: "ok", tool_call_id=f"c{i}")
        turn.call_llm(request, lambda req: chat_response("done"))
        turn.complete("done")
    pipeline.shutdown()
    starts = {e["name"]: e for e in pipeline.events() if e.get("category") == "tool" and e["scope_category"] == "start"}
    file_start, mcp_start = starts["read_file"], starts["gh_search"]
    assert file_start["metadata"]["hermes.toolset"] == "file" and "remote" not in file_start["attributes"]
    assert mcp_start["metadata"]["hermes.toolset"] == "mcp-github" and "remote" in mcp_start["attributes"]
    assert "hermes.toolset" not in starts["unlisted"]["metadata"]
    atif_calls = [c for d in pipeline.documents() for step in d["steps"] for c in step.get("tool_calls", [])]
    assert {c["function_name"]: c.get("extra", {}).get("toolset") for c in atif_calls} == {
        "read_file": "file", "gh_search": "mcp-github", "unlisted": None}
