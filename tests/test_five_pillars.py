"""The chapter's pillars on one real run (spec 06 BOOK-1, BOOK-5, BOOK-30).

One demo run (the reference agent against the scripted model server on 127.0.0.1, the pipeline's
ATOF + ATIF + OTLP to a loopback receiver, the profile's trajectory store and observability store
on) must leave all five pillars, none of them optional: logs (content: the trajectory files;
operations: the package's own JSON-lines log), metrics (the store's task and LLM-call tables),
traces (the OTLP spans), skill version history and memory change audit (BOOK-1). Only work that a
hook observes becomes a span (BOOK-5). The one trajectory file serves the learning loop, replay and
evaluation alike, as a plain schema-valid ATIF document (BOOK-30).
"""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from hermes_pipeline.profile import open_profile, release_all
from hermes_pipeline.demo.run import SKILL, DemoResult, run_demo
from hermes_pipeline.replay import Recording
from hermes_pipeline.replay.runner import run_replay
from hermes_pipeline.schemas import load_schema

from tests.trajectories._support import no_network


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> DemoResult:
    return run_demo(tmp_path_factory.mktemp("pillars"))


def _home(demo: DemoResult) -> Path:
    return demo.workspace / "hermes-home"


def _rows(demo: DemoResult, sql: str) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(_home(demo) / "observability" / "observability.sqlite3")
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def _steps(doc: dict[str, Any]) -> list[dict[str, Any]]:
    steps = list(doc.get("steps", []))
    for child in doc.get("subagent_trajectories") or []:
        steps.extend(_steps(child))
    return steps


def test_book_1_logs_content_every_llm_call_and_tool_call_is_in_the_trajectory_files(demo: DemoResult) -> None:
    docs = [json.loads(p.read_text("utf-8")) for p in demo.outputs["store"]]
    steps = [s for doc in docs for s in _steps(doc)]
    agent_steps = [s for s in steps if s.get("source") == "agent"]
    assert agent_steps and all(s.get("message") is not None or s.get("tool_calls") for s in agent_steps)
    calls = [c for s in steps for c in s.get("tool_calls") or []]
    results = [r for s in steps for r in (s.get("observation") or {}).get("results", [])]
    assert {c["function_name"] for c in calls} >= {"read_file", "write_file"}
    assert all("arguments" in c for c in calls) and len(results) >= len(calls) - 1 and results
    answered = _rows(demo, "SELECT COUNT(*) FROM llm_calls WHERE status = 'ok'")[0][0]
    assert answered == sum(1 for s in agent_steps if s.get("model_name"))  # one agent step per answered request


def test_book_1_logs_operations_the_package_log_is_json_lines_in_the_profile(demo: DemoResult) -> None:
    open_profile(_home(demo))
    try:
        logging.getLogger("hermes_pipeline.tests.pillars").warning("hermes_pipeline: pillar check %s", 1)
    finally:
        release_all()
    lines = [json.loads(x) for x in (_home(demo) / "logs" / "hermes-pipeline.jsonl").read_text("utf-8").splitlines()]
    mine = [x for x in lines if x["msg"] == "hermes_pipeline: pillar check 1"]
    assert mine and {"ts", "level", "logger", "event", "msg"} <= set(mine[0])


def test_book_1_metrics_task_runs_and_llm_calls_are_counted(demo: DemoResult) -> None:
    runs = _rows(demo, "SELECT outcome FROM task_runs")
    assert runs and {o for (o,) in runs} == {"success"}
    calls = _rows(demo, "SELECT model, status, input_tokens, output_tokens FROM llm_calls")
    assert len(calls) == len(demo.model_requests)  # every attempt, the demo's retried one included
    assert all(m and (i is not None and o is not None) == (status == "ok") for m, status, i, o in calls)
    assert {status for _, status, _, _ in calls} == {"ok", "error"}  # a failed attempt has no tokens (NULL)


def test_book_1_traces_llm_and_tool_spans_reach_the_receiver(demo: DemoResult) -> None:
    names = {s.name for s in demo.spans}
    assert any(n.startswith("chat ") for n in names) and "execute_tool read_file" in names
    assert any(n.startswith("invoke_agent ") for n in names)
    assert len({s.trace_id for s in demo.spans}) >= 1


def test_book_1_skill_version_history_and_memory_change_audit_are_recorded(demo: DemoResult) -> None:
    history = _rows(demo, f"SELECT version, change_type FROM skill_history WHERE skill_name = '{SKILL}' ORDER BY version")
    assert history == [(1, "create"), (2, "refine")]
    actors = {a for (a,) in _rows(demo, "SELECT actor FROM memory_changes")}
    assert actors == {"skill-execution", "user-direct"}  # written by a skill, and by hand outside the agent


def test_book_5_only_hook_observed_work_becomes_a_span(demo: DemoResult) -> None:
    """Every span is one of the hook-derived kinds: the session's agent, LLM calls, tool calls, skill runs
    and subagents; context building, skill matching and routing (no hooks) leave no span."""
    allowed = ("chat ", "execute_tool ", "invoke_agent ", "skill.run")
    assert demo.spans and all(s.name.startswith(allowed) for s in demo.spans), sorted({s.name for s in demo.spans})
    chats = [s for s in demo.spans if s.name.startswith("chat ")]
    assert len(chats) == len(demo.model_requests)  # one span per provider request the hooks saw, no more


def test_book_30_one_file_serves_learning_replay_and_evaluation(demo: DemoResult, tmp_path: Path) -> None:
    """The store's file is a plain ATIF document (any ATIF reader, e.g. an evaluation harness, reads it), it
    replays offline as it is, and it carries the outcome a learning loop or a benchmark scores."""
    schema = load_schema("atif-1.7")
    path = demo.outputs["store"][0]
    doc = json.loads(path.read_text("utf-8"))
    jsonschema.validate(doc, schema)
    final = [s for s in doc["steps"] if s.get("source") == "agent"][-1]
    assert final.get("message") and doc.get("final_metrics", {}).get("total_steps", len(doc["steps"])) >= 1
    with no_network() as attempts:
        result = run_replay(Recording.from_file(path), output=tmp_path / "replayed.json")
    assert attempts == [] and result.error is None and result.diff.identical
    replayed = json.loads((tmp_path / "replayed.json").read_text("utf-8"))
    jsonschema.validate(replayed, schema)  # the replay's own output is the same kind of file
    assert set(replayed) == set(doc)  # no replay-only shape: one extra.hermes.replay entry inside extra
