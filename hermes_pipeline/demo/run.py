"""``hermes-pipeline demo``: a scripted session end to end against the local model server."""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from ..engine.core import Engine
from ..host import Host
from ..testing import Recorder
from . import plugins as demo_plugins
from .agent import ReferenceAgent
from .model_server import ScriptedModelServer, ScriptStep, ToolCallSpec
from .openai_client import ChatCompletionsClient
from .tools import Workspace
from .tree import render

NOTES = "Groceries: oats, apples.\nCall the plumber on Tuesday.\n"
SECRETS = "API_KEY=sk-demo-0123456789abcdef0123\n"


def _last_tool_text(body: dict[str, Any]) -> str:
    for message in reversed(body.get("messages", [])):
        if message.get("role") == "tool":
            return str(message.get("content", ""))
    return ""


def demo_script() -> list[Any]:
    """The model's scripted replies, in the order the agent will ask for them."""
    return [
        # turn 1: a transient provider failure, then two reads (one blocked by policy), then an answer
        ScriptStep.error(503, "upstream overloaded, try again"),
        ScriptStep(tool_calls=[ToolCallSpec("read_file", {"path": "./notes.txt"}),
                               ToolCallSpec("read_file", {"path": "secrets.env"})]),
        lambda body: ScriptStep(content="Your notes say: " + " ".join(
            m.get("content", "") for m in body["messages"] if m.get("role") == "tool"
            and "error" not in str(m.get("content", ""))[:10]).strip()),
        # turn 2: write (needs approval), delegate to a reviewer (child reads the file), answer
        ScriptStep(tool_calls=[ToolCallSpec("write_file", {"path": "summary.txt",
                                                           "content": "Buy oats and apples; plumber Tuesday."})]),
        ScriptStep(tool_calls=[ToolCallSpec("delegate", {"goal": "Check that summary.txt is accurate",
                                                         "role": "reviewer"})]),
        ScriptStep(tool_calls=[ToolCallSpec("read_file", {"path": "summary.txt"})]),
        lambda body: ScriptStep(content=f"Checked: {_last_tool_text(body)!r} matches the notes."),
        lambda body: ScriptStep(content=f"Saved summary.txt. Reviewer: {_last_tool_text(body)}"),
    ]


@dataclass
class DemoResult:
    """What the demo produced, for the CLI and the tests."""

    answers: list[str]
    recorder: Recorder
    model_requests: list[dict[str, Any]]
    workspace: Path
    engine: Engine


def run_demo(workspace: Path | None = None, *, engine: Engine | None = None) -> DemoResult:
    """Run the scripted two-turn session and return what happened."""
    engine = engine if engine is not None else Engine()
    root = Path(workspace) if workspace is not None else Path(tempfile.mkdtemp(prefix="hermes-demo-"))
    root.mkdir(parents=True, exist_ok=True)
    (root / "notes.txt").write_text(NOTES, encoding="utf-8")
    (root / "secrets.env").write_text(SECRETS, encoding="utf-8")
    recorder = Recorder()
    engine.add_plugin(recorder, name="demo-recorder")
    engine.add_plugin(demo_plugins, name="demo-plugins")
    answers: list[str] = []
    try:
        with ScriptedModelServer(demo_script()) as server:
            host = Host(engine, platform="cli", model=server.model, provider="local-scripted",
                        base_url=server.base_url, api_mode="chat_completions")
            agent = ReferenceAgent(host, ChatCompletionsClient(server.base_url, timeout=10.0),
                                   Workspace(root).tools(), responder=lambda tool, command: "once")
            with host.session() as session:
                answers.append(agent.run_turn(session, "What do my notes say?"))
                answers.append(agent.run_turn(session, "Save a short summary and have a reviewer check it."))
            requests = server.requests
    finally:
        engine.remove_plugin("demo-plugins")
        engine.remove_plugin("demo-recorder")
    return DemoResult(answers, recorder, requests, root, engine)


def print_report(result: DemoResult, out: TextIO) -> None:
    """Print the tree and a short summary."""
    out.write("hermes_pipeline demo: a scripted session against a local OpenAI-compatible model\n\n")
    out.write(render(result.recorder.events) + "\n\n")
    tagged = sum(1 for r in result.model_requests if r.get("metadata", {}).get("hermes_middleware_demo"))
    out.write(f"events dispatched: {len(result.recorder.events)}; provider requests: "
              f"{len(result.model_requests)} ({tagged} carried the llm_request middleware tag)\n")
    stats = result.engine.failure_stats()
    out.write(f"plugin failures: {sum(stats.by_plugin.values())}; timeouts: {sum(stats.timeouts.values())}\n")
    out.write(f"workspace: {result.workspace}\n")
    for i, answer in enumerate(result.answers, 1):
        out.write(f"answer {i}: {json.dumps(answer, ensure_ascii=False)}\n")
