"""A scripted session through the host API with ATOF and ATIF on ONE shared scope plugin: turns, retries, tool
calls (ok / error / blocked / cancelled), approvals, human input, nested subagents, compaction and segment rotation.
The trajectories must follow §3.8's mapping and the schema, and agree with the ATOF stream (spec 04 FMT-1, FMT-46)."""

from __future__ import annotations

from typing import Any

import pytest

from hermes_pipeline import Engine, Host
from hermes_pipeline.export.ids import parse_timestamp_us
from hermes_pipeline.host import SegmentPolicy

from tests.sinks.atif._support import Pipeline, agent_steps, results
from tests.sinks.atof._support import marks, scopes, starts
from tests._scripted import Overloaded
from hermes_pipeline.testing import chat_response


def calls(*specs: tuple[str, str]) -> dict[str, Any]:
    return chat_response(None, [{"id": cid, "type": "function", "function": {"name": name, "arguments": "{}"}}
                                for cid, name in specs])


def heavy(text: str) -> dict[str, Any]:
    response = chat_response(text)
    response["usage"] = {"prompt_tokens": 120, "completion_tokens": 9, "prompt_tokens_details": {"cached_tokens": 40}}
    return response


def delegate(turn: Any, role: str, depth: int) -> str:
    with turn.subagent(role=role, goal="dig") as run:
        with run.session.turn(f"{role}: dig") as child:
            child.call_llm({"model": "m", "messages": []}, lambda r: calls((f"{role}-t", "delegate")))
            inner = (lambda: delegate(child, f"{role}-inner", depth - 1)) if depth > 1 else (lambda: "leaf")
            child.call_tool("delegate", {}, inner, tool_call_id=f"{role}-t")
            child.call_llm({"model": "m", "messages": []}, lambda r: chat_response("found"))
            child.complete("found")
        run.finish("completed", summary="found")
    return f"{role} done"


def script(host: Host) -> None:
    """Five turns over three session segments (compaction, then max_turns)."""
    attempts = [Overloaded("busy"), calls(("c1", "read_file"), ("c2", "rm"), ("c3", "broken"), ("c4", "wait"),
                                          ("c5", "delegate"))]

    def flaky(request: dict[str, Any]) -> Any:
        answer = attempts.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer

    def read_file(path: str) -> str:
        with turn.approval("cat notes.txt", description="read a file") as approval:
            approval.resolve("once")
        return "notes"

    def wait() -> str:
        raise KeyboardInterrupt

    with host.session("main") as session:
        with session.turn("plan the work") as turn:
            turn.call_llm({"model": "m", "messages": [{"role": "user", "content": "plan"}]}, flaky, max_retries=2)
            assert turn.call_tool("read_file", {"path": "notes.txt"}, read_file, tool_call_id="c1") == "notes"
            assert "error" in turn.call_tool("rm", {"path": "/"}, lambda path: "gone", tool_call_id="c2",
                                             deny="rm is not allowed")
            assert "error" in turn.call_tool("broken", {}, lambda: 1 / 0, tool_call_id="c3")
            with pytest.raises(KeyboardInterrupt):
                turn.call_tool("wait", {}, wait, tool_call_id="c4")
            turn.call_tool("delegate", {}, lambda: delegate(turn, "helper", 2), tool_call_id="c5")
            with turn.human_input("sudo", "password for sudo?") as waiting:
                waiting.resolve("submitted")
            turn.call_llm({"model": "m", "messages": []}, lambda r: heavy("planned"))
            turn.complete("planned")
        with session.turn("second") as turn:
            turn.call_llm({"model": "m", "messages": []}, lambda r: chat_response("ok"))
            turn.complete("ok")
        session.report_compaction()
        with session.turn("after compaction") as turn:
            turn.call_llm({"model": "m", "messages": []}, lambda r: calls(("c6", "read_file")))
            turn.call_tool("read_file", {"path": "a"}, lambda path: "a", tool_call_id="c6")
            turn.complete("done")
        with pytest.raises(RuntimeError), session.turn("fails"):
            raise RuntimeError("boom")
        with session.turn("rotated by max_turns") as turn:
            turn.complete("ok")


class AtofTree:
    """The ATOF stream as scope pairs and children, for comparing with a trajectory."""

    def __init__(self, events: list[dict[str, Any]]) -> None:
        self.pairs = scopes(events)
        self.children: dict[str, list[dict[str, Any]]] = {}
        for pair in self.pairs.values():
            start = pair["start"]
            self.children.setdefault(start["parent_uuid"], []).append(start)

    def own(self, root: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Scope starts belonging to trajectory ``root`` (not to nested agents), and the nested agent starts."""
        own, nested, todo = [], [], [root]
        while todo:
            for child in self.children.get(todo.pop(), []):
                if child["category"] == "agent":
                    nested.append(child)
                else:
                    own.append(child)
                    todo.append(child["uuid"])
        key = lambda s: parse_timestamp_us(s["timestamp"])  # noqa: E731
        return sorted(own, key=key), sorted(nested, key=key)

    def end(self, start: dict[str, Any]) -> dict[str, Any]:
        return self.pairs[start["uuid"]]["end"]


def agree(tree: AtofTree, doc: dict[str, Any], root: str | None = None) -> int:
    """ATOF and ATIF agree on one trajectory (recursively): turns, LLM calls, failed attempts, tool calls and
    statuses, subagents, token sums. Returns the number of trajectories compared. ``root``: the root scope of
    a session trajectory (whose id is its first run's, issue #27)."""
    own, nested = tree.own(root or doc["trajectory_id"])
    turns = [s for s in own if s["name"] == "agent.run"]
    assert [s["message"] for s in doc["steps"] if s["source"] == "user"] == [t["data"]["user_message"] for t in turns]
    llm = [(s, tree.end(s)) for s in own if s["category"] == "llm"]
    ok = sorted((e for _, e in llm if e["metadata"]["otel.status_code"] == "OK"),
                key=lambda e: parse_timestamp_us(e["timestamp"]))
    steps = [s for s in agent_steps(doc) if s.get("llm_call_count") == 1]
    assert [s["extra"]["ancestry"]["function_id"] for s in steps] == [e["uuid"] for e in ok]
    assert [s["timestamp"] for s in steps] == [e["timestamp"] for e in ok]
    failed = [r for s in doc["steps"] for r in s.get("extra", {}).get("hermes", {}).get("failed_attempts", [])]
    assert len(failed) == len(llm) - len(ok) == doc.get("final_metrics", {}).get("extra", {}).get("failed_attempts", 0)
    tools = {(s["uuid"], s["category_profile"]["tool_call_id"], tree.end(s)["metadata"]["hermes.tool.status"])
             for s in own if s["category"] == "tool"}
    answered = {(r["extra"]["hermes"]["event_uuid"], r["source_call_id"], r["extra"]["hermes"]["status"])
                for s in agent_steps(doc) for r in results(s) if "extra" in r}
    assert answered == tools
    issued = [c["tool_call_id"] for s in steps for c in s.get("tool_calls", [])]
    assert sorted(issued) == sorted(t[1] for t in tools)
    usage = [e["data"]["usage"] for e in ok]
    if usage:
        assert doc["final_metrics"]["total_prompt_tokens"] == sum(u["input_tokens"] for u in usage)
        assert doc["final_metrics"]["total_completion_tokens"] == sum(u["output_tokens"] for u in usage)
        assert doc["final_metrics"].get("total_cached_tokens", 0) == sum(u.get("cache_read_tokens", 0) +
                                                                  u.get("cache_write_tokens", 0) for u in usage)
    children = doc.get("subagent_trajectories", [])
    assert [c["trajectory_id"] for c in children] == [n["uuid"] for n in nested]
    return 1 + sum(agree(tree, child) for child in children)


def test_fmt_1_46_scripted_session_atof_and_atif_agree(engine: Engine) -> None:
    """FMT-1 / FMT-46 / FMT-43 / FMT-48 / FMT-56: one shared ScopePlugin feeds both sinks; every segment's
    trajectory follows the mapping, validates, and agrees structurally and by UUID with the ATOF stream."""
    pipeline = Pipeline(engine)
    host = Host(engine, model="gpt-x", provider="p", segments=SegmentPolicy(on_compaction=True, max_turns=2))
    script(host)
    pipeline.shutdown()
    events = pipeline.events()
    docs = pipeline.documents()
    roots = [s for s in starts(events, "hermes.session") if s["parent_uuid"] is None]
    runs = starts(events, "agent.run")
    first_runs = [next(t["uuid"] for t in runs if t["parent_uuid"] == r["uuid"]) for r in roots]
    assert [d["trajectory_id"] for d in docs] == first_runs and len(docs) == 3  # one run, one id (issue #27)
    tree = AtofTree(events)
    assert sum(agree(tree, doc, r["uuid"]) for doc, r in zip(docs, roots, strict=True)) == 3 + 2
    first, second, third = docs
    # §3.8 details of the first segment
    user, retried, final, user2, ok = first["steps"]
    assert (user["message"], user2["message"]) == ("plan the work", "second")
    assert retried["extra"]["hermes"]["failed_attempts"] == [{"attempt": 1, "error_type": "upstream_error",
                                                              "status_code": 503, "message": "busy",
                                                              "api_request_id": retried["extra"]["hermes"]["api_request_id"]}]
    statuses = {r["source_call_id"]: r["extra"]["hermes"]["status"] for r in results(retried)}
    assert statuses == {"c1": "ok", "c2": "blocked", "c3": "error", "c4": "cancelled", "c5": "ok"}
    [helper] = first["subagent_trajectories"]
    by_call = {r["source_call_id"]: r for r in results(retried)}
    assert by_call["c5"]["subagent_trajectory_ref"] == [{"trajectory_id": helper["trajectory_id"],
                                                        "session_id": helper["trajectory_id"]}]
    assert helper["subagent_trajectories"][0]["extra"]["hermes"]["subagent"]["role"] == "helper-inner"
    # FMT-26: prompt tokens include cached input (the host's prompt_tokens = input + cache read + write)
    assert final["metrics"] == {"prompt_tokens": final["extra"]["hermes"]["llm_response"]["usage"]["prompt_tokens"],
                                "completion_tokens": 9, "cached_tokens": 40}
    assert final["metrics"]["prompt_tokens"] == final["extra"]["hermes"]["llm_response"]["usage"]["input_tokens"] + 40
    assert ok["message"] == "ok" and first["final_metrics"]["total_steps"] == 5
    # approvals and human input are marks: present in ATOF, no ATIF step
    assert marks(events, "hermes.approval.request") and marks(events, "hermes.human_input.resolved")
    # segments: compaction then max_turns, linked in both directions
    names = [item.name for item in pipeline.atif_dest.items]
    assert first["continued_trajectory_ref"] == names[1] and second["continued_trajectory_ref"] == names[2]
    assert [(d["extra"]["hermes"].get("segment"), d["extra"]["hermes"].get("segment_reason")) for d in docs] == [
        (None, None), (1, "compaction"), (2, "max_turns")]
    assert third["extra"]["hermes"]["previous_trajectory_id"] == second["trajectory_id"]
    assert [s["message"] for s in second["steps"] if s["source"] == "user"] == ["after compaction", "fails"]
    assert [s["message"] for s in third["steps"]] == ["rotated by max_turns"]
    assert not any(item.partial for item in pipeline.atif_dest.items)
    assert pipeline.atif.counters() == {"atif.events_dropped": 0, "atif.filename_unresolved": 0, "atif.file_errors": 0}
