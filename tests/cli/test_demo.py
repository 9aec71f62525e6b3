"""The main job: ``hermes-pipeline demo`` end to end, and the CLI's help."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_pipeline.cli.main import main
from hermes_pipeline.demo.run import run_demo
from tests._repo import REPO


def test_demo_runs_end_to_end_and_reports_every_feature(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The demo drives the reference agent against the local model: retries, rewrites, blocks, approvals."""
    assert main(["demo", "--workspace", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "ERROR 503 overloaded (will retry)" in out
    assert "rewritten by llm_request: middleware-demo" in out and "rewritten by tool_request" in out
    assert "BLOCKED (plugin_block)" in out and "approval" in out and "-> once" in out
    assert "subagent reviewer" in out and "human input (approval)" in out
    assert (tmp_path / "files" / "summary.txt").read_text() == "Buy oats and apples; plumber Tuesday."
    assert "plugin failures: 0" in out


def test_demo_model_saw_real_tool_output_and_no_secret(tmp_path: Path) -> None:
    """The real read_file result reached the model; the blocked secrets file never did."""
    result = run_demo(tmp_path)
    assert result.answers[0].startswith("Your notes say: Groceries: oats, apples.")
    sent = json.dumps(result.model_requests)
    assert "sk-demo-0123456789abcdef0123" not in sent
    assert all(r["metadata"]["hermes_middleware_demo"] is True for r in result.model_requests)
    statuses = [e["status"] for e in result.recorder.of("post_tool_call")]
    assert statuses.count("blocked") == 1 and statuses.count("ok") == len(statuses) - 1
    assert not result.engine.plugins.names()  # the demo removes what it added


def test_console_script_help() -> None:
    """``hermes-pipeline --help`` names the commands."""
    proc = subprocess.run([sys.executable, "-m", "hermes_pipeline.cli.main", "--help"], capture_output=True,
                          text=True, check=True)
    assert "demo" in proc.stdout and "hooks" in proc.stdout
    assert main([]) == 2


def test_hooks_command_lists_the_catalogue(capsys: pytest.CaptureFixture[str]) -> None:
    """``hermes-pipeline hooks --fields`` prints every hook with its fields."""
    assert main(["hooks", "--fields"]) == 0
    out = capsys.readouterr().out
    assert "pre_tool_call" in out and "hang class C" in out and "tool_call_history" in out


def test_demo_exports_through_every_sink(tmp_path: Path) -> None:
    """Issue 4 item 7: the demo's pipeline enables ATOF, ATIF and OTLP; every output is produced and valid."""
    import jsonschema

    from hermes_pipeline.schemas import load_schema

    result = run_demo(tmp_path)
    assert result.activation.state.value == "ACTIVE"
    (atof_file,) = result.outputs["atof"]
    events = [json.loads(line) for line in atof_file.read_text().splitlines()]
    atof_schema = load_schema("atof-0.1")
    for event in events:
        jsonschema.validate(event, atof_schema)
    trajectories = [json.loads(p.read_text()) for p in result.outputs["atif"]]
    assert len(trajectories) == 1  # one top-level agent; the reviewer is embedded
    for trajectory in trajectories:
        jsonschema.validate(trajectory, load_schema("atif-1.7"))
    assert trajectories[0].get("subagent_trajectories")
    names = {s.name for s in result.spans}
    assert any(n.startswith("invoke_agent") for n in names) and any(n.startswith("execute_tool") for n in names)
    # one trace per turn (FMT-56a): each rooted at its turn; the subagent shares its delegating turn's trace
    roots = [s for s in result.spans if not s.parent_span_id]
    assert roots and all(s.attributes.get("hermes.span_kind") == "agent.run" for s in roots)
    assert {s.trace_id for s in result.spans} == {s.trace_id for s in roots}
    assert all(s.trace_id in {r.trace_id for r in roots} for s in result.spans
               if s.attributes.get("hermes.scope_role") == "subagent")
    blocked = [e for e in events if e.get("scope_category") == "end" and e["name"] == "read_file"
               and "credentials" in json.dumps(e)]
    assert blocked, "the blocked read shows in the ATOF stream"


def test_demo_pipeline_file_is_the_packaged_one() -> None:
    """pipelines/demo.toml is exactly what the demo runs by default, and it validates."""
    from hermes_pipeline.demo.run import default_pipeline

    repo = REPO
    assert (repo / "pipelines" / "demo.toml").read_text() == default_pipeline()


def test_fmt_one_session_same_structure_in_every_sink(tmp_path: Path) -> None:
    """Issue 4 item 8: the same session seen by ATOF, ATIF and OTLP has the same turns, model calls,
    tool calls and statuses (and they match what the hooks reported)."""
    result = run_demo(tmp_path)
    hooks = {e["tool_call_id"]: e["status"] for e in result.recorder.of("post_tool_call")}
    turns = {e["turn_id"] for e in result.recorder.of("pre_llm_call")}
    attempts = len(result.recorder.of("pre_api_request"))

    events = [json.loads(line) for line in result.outputs["atof"][0].read_text().splitlines()]
    ends = {e["uuid"]: e for e in events if e.get("scope_category") == "end"}
    atof_tools = {e["category_profile"]["tool_call_id"]: ends[e["uuid"]]["metadata"]["hermes.tool.status"]
                  for e in events if e.get("scope_category") == "start" and e.get("category") == "tool"}
    atof_turns = {e["metadata"]["hermes.turn_id"] for e in events
                  if e.get("scope_category") == "start" and e["name"] == "agent.run"}
    atof_llm = sum(1 for e in events if e.get("scope_category") == "start" and e["name"] == "llm.call")

    spans = result.spans
    otel_tools = {s.attributes["gen_ai.tool.call.id"]: s.attributes["hermes.tool.status"]
                  for s in spans if s.attributes.get("gen_ai.operation.name") == "execute_tool"
                  and s.attributes.get("hermes.span_kind") != "skill.run"}  # a skill run is execute_tool too
    otel_turns = {s.attributes["hermes.turn.id"] for s in spans if "hermes.turn.id" in s.attributes}
    # (the subagent's own turn is no span of its own in gen_ai: its calls carry its turn id)
    otel_llm = sum(1 for s in spans if s.attributes.get("gen_ai.operation.name") == "chat")

    def atif_tools(doc: dict) -> dict[str, str]:
        found: dict[str, str] = {}
        for step in doc.get("steps", []):
            for r in (step.get("observation") or {}).get("results", []):
                status = (r.get("extra") or {}).get("hermes", {}).get("status")
                if status is not None:
                    found[r["source_call_id"]] = status
        for child in doc.get("subagent_trajectories", []):
            found |= atif_tools(child)
        return found

    trajectory = json.loads(result.outputs["atif"][0].read_text())
    assert hooks == atof_tools == otel_tools == atif_tools(trajectory)
    assert set(hooks.values()) == {"ok", "blocked"}
    assert turns == atof_turns == otel_turns and len(turns) == 3
    assert attempts == atof_llm == otel_llm == 8
