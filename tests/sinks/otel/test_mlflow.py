"""Checked in a real backend (issue 30 items 5-6): a Hermes session exported to an MLflow tracking server over
OTLP/HTTP (``/v1/traces`` with the ``x-mlflow-experiment-id`` header, the ``gen_ai`` projection) and read back
through MLflow's own client: span types, chat messages with their tool calls, the Tools panel's definitions, token
usage, MLflow's sessions, the failed attempt with its error; and the shipped recipe (``pipelines/mlflow.toml``, the
content gate closed) showing the scrubbed previews as inputs and outputs.

Needs MLflow (the version the ``mlflow`` extra of pyproject.toml names) in an environment of its own, whose Python
is named by ``HERMES_PIPELINE_MLFLOW_PYTHON`` (what ``scripts/test`` does: MLflow's pins conflict with those of
``hermes-agent``), or importable here. Skipped when neither is there.
MLflow runs as a child process group on 127.0.0.1 with a free port, its SQLite store and artifacts under
``tmp_path``, its telemetry off; start-up is bounded by polling ``/health`` against a deadline and the whole group is
stopped by the fixture whatever happens (``_server_launch.py``, shared with the Phoenix test). What MLflow stored is read by ``_mlflow_read.py`` run in MLflow's Python.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline import Engine
from hermes_pipeline.config.templates import find_template
from hermes_pipeline.sinks.otel import build_otel_plugin

from ._agent_session import (
    ANSWER, CHILD_GOAL, CHILD_SUMMARY, FOLLOW_UP, LAST_ANSWER, MISSING, QUESTION, SKILL, TOOLS, USAGE,
    run_agent_session,
)
from ._server_launch import Server, clean_env, free_port, launched

MLFLOW_PYTHON = os.environ.get("HERMES_PIPELINE_MLFLOW_PYTHON", "")
"""A Python with MLflow installed, when MLflow lives in an environment of its own; else this interpreter."""

if MLFLOW_PYTHON:
    if not os.access(MLFLOW_PYTHON, os.X_OK):
        pytest.fail(f"HERMES_PIPELINE_MLFLOW_PYTHON={MLFLOW_PYTHON!r} is not an executable Python")
elif importlib.util.find_spec("mlflow") is None or importlib.util.find_spec("mlflow.server") is None:
    pytest.skip("MLflow is not installed (scripts/test installs it in an environment of its own and sets "
                "HERMES_PIPELINE_MLFLOW_PYTHON to its Python); the real-backend check is skipped",
                allow_module_level=True)

START_DEADLINE = 120.0
"""Seconds MLflow may take to answer /health (about 35 s on a loaded 2-vCPU machine: database migrations)."""
READ_DEADLINE = 60.0
READER = Path(__file__).with_name("_mlflow_read.py")
SESSION = "sess-mlflow"
CHAT_PARTS = ("text", "tool_call", "tool_call_response")


class MLflow(Server):
    """A running MLflow tracking server (``_server_launch.py``)."""

    def create_experiment(self, name: str) -> str:
        response = self.client.post("/api/2.0/mlflow/experiments/create", json={"name": name})
        response.raise_for_status()
        return str(response.json()["experiment_id"])

    def read(self, experiment: str, spans: int) -> dict[str, Any]:
        """The experiment as MLflow's client reads it, once MLflow holds ``spans`` spans (bounded by a deadline)."""
        deadline = time.monotonic() + READ_DEADLINE
        while True:  # the spans are stored as they arrive; polling is the only way to know all are there
            done = subprocess.run([MLFLOW_PYTHON or sys.executable, str(READER), self.base, experiment],
                                  capture_output=True, env=self.env, timeout=READ_DEADLINE, check=False)
            assert done.returncode == 0, done.stderr.decode(errors="replace")[-3000:]
            data: dict[str, Any] = json.loads(done.stdout)
            stored = sum(len(t["spans"]) for t in data["traces"])
            if stored >= spans or time.monotonic() > deadline:
                assert stored == spans, (stored, spans)
                return data
            time.sleep(0.5)


@pytest.fixture(scope="module")
def mlflow(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MLflow]:
    work = tmp_path_factory.mktemp("mlflow")
    port = free_port()
    env = clean_env("MLFLOW_", "OTEL_")
    env.update({"MLFLOW_DISABLE_TELEMETRY": "true", "DO_NOT_TRACK": "true", "HOME": str(work),
                "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"})  # no background job consumers: nothing here uses them
    command = [MLFLOW_PYTHON or sys.executable, "-m", "mlflow", "server", "--host", "127.0.0.1", "--port", str(port),
               "--workers", "1", "--backend-store-uri", f"sqlite:///{work / 'mlflow.db'}",
               "--default-artifact-root", str(work / "artifacts")]
    with launched(MLflow, "mlflow", command, work=work, env=env, port=port, health="/health",
                  deadline=START_DEADLINE, poll=0.5, timeout=30.0) as server:
        yield server


def _send(section: dict[str, Any], session_id: str, **kwargs: Any) -> int:
    """Run the session through an OTel plugin built from ``section``; returns how many spans were exported (all of them: none failed or was dropped)."""
    engine = Engine()
    plugin = build_otel_plugin(section, **kwargs)
    engine.add_plugin(plugin, name="otel")
    run_agent_session(engine, session_id)
    assert plugin.flush(30.0) and plugin.shutdown(30.0)
    stats = plugin.stats()
    assert stats["exported"] > 0 and stats["failed"] == 0, stats
    return int(stats["exported"])


@pytest.fixture(scope="module")
def stored(mlflow: MLflow) -> dict[str, Any]:
    """The session exported with the content gate open (gen_ai projection, one trace per turn), as MLflow's client
    reads it back."""
    experiment = mlflow.create_experiment("hermes-open")
    endpoint = {"type": "gen_ai", "endpoint": f"{mlflow.base}/v1/traces", "scheduled_delay_millis": 50,
                "timeout_millis": 30000, "headers": {"x-mlflow-experiment-id": experiment}}
    sent = _send({"enabled": True, "endpoints": [endpoint]}, SESSION, enable_full_payloads=True)
    return mlflow.read(experiment, sent)


def _turns(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The two traces (turns), in time order."""
    return sorted(data["traces"], key=lambda t: t["spans"][0]["start_ns"])


def _spans(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for t in _turns(data) for s in t["spans"]]


def _is_chat(messages: Any) -> bool:
    """Whether MLflow's trace view renders ``messages`` as chat: a list of GenAI messages, each with a role and
    non-empty parts that are all text, tool calls or tool-call responses (the rule of MLflow 3.18's UI for the
    GenAI semantic-convention format; any other part makes it show the raw JSON instead)."""
    return isinstance(messages, list) and bool(messages) and all(
        isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("parts"), list) and m["parts"]
        and all(isinstance(p, dict) and p.get("type") in CHAT_PARTS for p in m["parts"]) for m in messages)


def test_mlflow_listens_on_loopback_only(mlflow: MLflow, stored: dict[str, Any]) -> None:
    """The MLflow server and everything it started listen on 127.0.0.1 only."""
    import psutil

    leader = psutil.Process(mlflow.process.pid)
    listening = [c.laddr.ip for p in (leader, *leader.children(recursive=True))
                 for c in p.net_connections(kind="inet") if c.status == psutil.CONN_LISTEN]
    assert listening and all(ip == "127.0.0.1" for ip in listening), listening


def test_mlflow_span_types_one_agent_span_per_subagent_and_no_unknown(stored: dict[str, Any]) -> None:
    """Issue 30 item 5: every span has a type MLflow understands (never UNKNOWN): each turn is an AGENT root, model
    calls CHAT_MODEL, tool calls and the skill run TOOL; the subagent is one AGENT span (not two nested), under the
    delegating tool, with its model call directly beneath it."""
    first, second = _turns(stored)
    for trace in (first, second):
        [root] = [s for s in trace["spans"] if s["parent_id"] is None]
        assert (root["name"], root["type"]) == ("invoke_agent hermes", "AGENT")
    types = [(s["name"], s["type"]) for s in first["spans"]]
    assert sorted(types) == sorted([
        ("invoke_agent hermes", "AGENT"), ("chat gpt-4o-mini", "CHAT_MODEL"), ("chat gpt-4o-mini", "CHAT_MODEL"),
        (f"execute_tool {SKILL}", "TOOL"), ("execute_tool read_file", "TOOL"), ("execute_tool read_file", "TOOL"),
        ("execute_tool delegate_task", "TOOL"), ("invoke_agent reviewer", "AGENT"), ("chat gpt-4o-mini", "CHAT_MODEL"),
        ("chat gpt-4o-mini", "CHAT_MODEL")])
    assert sorted((s["name"], s["type"]) for s in second["spans"]) == [
        ("chat gpt-4o-mini", "CHAT_MODEL"), ("invoke_agent hermes", "AGENT")]
    by_id = {s["span_id"]: s for s in first["spans"]}
    [child] = [s for s in first["spans"] if s["name"] == "invoke_agent reviewer"]
    assert by_id[child["parent_id"]]["name"] == "execute_tool delegate_task"
    [child_call] = [s for s in first["spans"] if s["parent_id"] == child["span_id"]]
    assert child_call["type"] == "CHAT_MODEL" and child_call["outputs"][0]["parts"][0]["content"] == CHILD_SUMMARY
    assert child["inputs"][0]["parts"][0]["content"] == CHILD_GOAL
    [skill] = [s for s in first["spans"] if s["name"] == f"execute_tool {SKILL}"]
    assert skill["attributes"]["hermes.span_kind"] == "skill.run"


def test_mlflow_shows_chat_messages_with_tool_calls_and_results(stored: dict[str, Any]) -> None:
    """Issue 30 item 5 / FMT-64: MLflow's input and output of every agent and model span are GenAI chat messages
    (never flat text, which MLflow shows when OpenInference's input.value / output.value are present): the call that
    asked for the tools outputs the two tool calls with their ids and arguments, the next call's input holds both
    tool results, and each turn's root shows the question and the answer."""
    spans = _spans(stored)
    for span in spans:
        assert not [k for k in span["attributes"] if k.startswith(("input.", "output.", "llm.", "openinference."))]
        if span["type"] in ("AGENT", "CHAT_MODEL"):
            assert _is_chat(span["inputs"]), (span["name"], span["inputs"])
            if span["status"] != "ERROR":
                assert _is_chat(span["outputs"]), (span["name"], span["outputs"])
    chats = [s for s in _turns(stored)[0]["spans"] if s["type"] == "CHAT_MODEL" and s["status"] != "ERROR"
             and s["attributes"]["gen_ai.conversation.id"] == SESSION]
    asked, answered = sorted(chats, key=lambda s: s["start_ns"])
    [message] = asked["outputs"]
    assert message["finish_reason"] == "tool_call"
    assert [(p["type"], p["id"], p["name"], p["arguments"]) for p in message["parts"]] == [
        ("tool_call", "call_ok", "read_file", {"path": "notes.txt"}),
        ("tool_call", "call_bad", "read_file", {"path": "missing.txt"})]
    results = {p["id"]: p["response"] for m in answered["inputs"] for p in m["parts"] if p["type"] == "tool_call_response"}
    assert results == {"call_ok": "Buy milk.", "call_bad": f'{{"error": "FileNotFoundError: {MISSING}"}}'}
    assert answered["outputs"][0]["parts"] == [{"type": "text", "content": ANSWER}]
    for trace, question, answer in zip(_turns(stored), (QUESTION, FOLLOW_UP), (ANSWER, LAST_ANSWER), strict=True):
        assert json.loads(trace["request_preview"])[0]["parts"][0]["content"] == question
        assert json.loads(trace["response_preview"])[0]["parts"][0]["content"] == answer
    tools = {s["attributes"]["gen_ai.tool.call.id"]: s for s in spans if s["name"] == "execute_tool read_file"}
    assert (tools["call_ok"]["inputs"], tools["call_ok"]["outputs"]) == ({"path": "notes.txt"}, "Buy milk.")


def test_mlflow_tools_panel_has_the_tool_definitions(stored: dict[str, Any]) -> None:
    """Issue 30 item 6: MLflow's Tools panel data (mlflow.chat.tools) of each model call that offered tools is the
    tool definitions (name, description, parameter schema); tool spans carry the tool's description
    (gen_ai.tool.description)."""
    offered = [{"type": "function", "name": t["function"]["name"], "description": t["function"]["description"],
                "parameters": t["function"]["parameters"]} for t in TOOLS]
    main_calls = [s for s in _spans(stored) if s["type"] == "CHAT_MODEL"
                  and s["attributes"]["gen_ai.conversation.id"] == SESSION]
    assert len(main_calls) == 4
    for span in main_calls:
        tools = span["attributes"]["mlflow.chat.tools"]
        assert (json.loads(tools) if isinstance(tools, str) else tools) == offered
    for span in _spans(stored):
        if span["name"] == "execute_tool read_file":
            assert span["attributes"]["gen_ai.tool.description"] == "Read a file from the workspace"


def test_mlflow_token_usage_per_call_and_per_trace(stored: dict[str, Any]) -> None:
    """BOOK-6 / issue 30 item 6: each answered model call has its token usage, and each trace the sum of its calls
    (turn 1: the tool-call answer, the subagent's call and the final answer; the failed attempt used none)."""
    for span in _spans(stored):
        if span["type"] == "CHAT_MODEL" and span["status"] != "ERROR":
            usage = span["attributes"]["mlflow.chat.tokenUsage"]
            usage = json.loads(usage) if isinstance(usage, str) else usage
            assert (usage["input_tokens"], usage["output_tokens"]) == USAGE
    first, second = _turns(stored)
    assert first["token_usage"] == {"input_tokens": 3 * USAGE[0], "output_tokens": 3 * USAGE[1],
                                    "total_tokens": 3 * sum(USAGE)}
    assert second["token_usage"] == {"input_tokens": USAGE[0], "output_tokens": USAGE[1], "total_tokens": sum(USAGE)}


def test_mlflow_groups_the_turns_into_one_session(stored: dict[str, Any]) -> None:
    """FMT-56a: MLflow's session grouping (trace metadata mlflow.trace.session, its Sessions view and
    mlflow.search_sessions) puts both turns of the Hermes session, and only them, in one session named by the
    Hermes session id, although the subagent's spans carry their own conversation id."""
    assert [t["metadata"]["mlflow.trace.session"] for t in _turns(stored)] == [SESSION, SESSION]
    [session] = stored["sessions"]
    assert session["id"] == SESSION and session["traces"] == sorted(t["trace_id"] for t in stored["traces"])


def test_mlflow_shows_the_failed_attempt_with_its_error(stored: dict[str, Any]) -> None:
    """FMT-58 / FMT-66 / FMT-67: the provider's failed first attempt is an ERROR CHAT_MODEL span whose status and
    exception event give the error (type and, content open, the scrubbed message); the retry that succeeded is
    attempt 2 of the same request and the turn itself is OK."""
    first, _ = _turns(stored)
    attempts = sorted((s for s in first["spans"] if s["type"] == "CHAT_MODEL"
                       and s["attributes"]["gen_ai.conversation.id"] == SESSION), key=lambda s: s["start_ns"])[:2]
    failed, retried = attempts
    assert failed["status"] == "ERROR" and failed["description"] == "upstream_error: upstream overloaded"
    assert failed["attributes"]["error.type"] == "upstream_error"
    [event] = [e["attributes"] for e in failed["events"] if e["name"] == "exception"]
    assert event["exception.message"] == "upstream overloaded"
    assert (failed["attributes"]["hermes.llm.attempt"], retried["attributes"]["hermes.llm.attempt"]) == (1, 2)
    assert failed["attributes"]["hermes.api_request.id"] == retried["attributes"]["hermes.api_request.id"]
    assert retried["status"] != "ERROR" and first["state"] == "OK"
    [failed_tool] = [s for s in first["spans"] if s["attributes"].get("gen_ai.tool.call.id") == "call_bad"]
    assert failed_tool["status"] == "ERROR" and MISSING in failed_tool["description"]


def test_the_mlflow_recipe_as_shipped_shows_previews_and_no_content(mlflow: MLflow) -> None:
    """docs/backends.md: ``pipelines/mlflow.toml`` (``config init --template mlflow``), pointed at this MLflow and an
    experiment of its own through its x-mlflow-experiment-id header, lands there as typed spans; with its default
    content setting (gate closed, ``preview``) MLflow shows the scrubbed previews as each trace's request and
    response and as each span's input and output, and receives no full message, tool definition or error
    message."""
    document = tomllib.loads(find_template("mlflow").text())
    config = document["components"][0]["config"]
    assert config["enable_full_payloads"] is False and config["content_summary"] == "preview"
    section = dict(config["opentelemetry"])
    [endpoint] = section["endpoints"]
    assert endpoint["type"] == "gen_ai" and endpoint["endpoint"].endswith("/v1/traces")
    assert set(endpoint["headers"]) == {"x-mlflow-experiment-id"}
    experiment = mlflow.create_experiment("hermes-recipe")
    section["endpoints"] = [{**endpoint, "endpoint": f"{mlflow.base}/v1/traces", "scheduled_delay_millis": 50,
                             "headers": {"x-mlflow-experiment-id": experiment}}]
    sent = _send(section, "sess-recipe", enable_full_payloads=False,
                 content_summary=config["content_summary"])
    data = mlflow.read(experiment, sent)
    first, second = _turns(data)
    assert json.loads(first["request_preview"])[0]["parts"] == [{"type": "text", "content": QUESTION}]
    assert json.loads(second["response_preview"])[0]["parts"] == [{"type": "text", "content": LAST_ANSWER}]
    assert [s["id"] for s in data["sessions"]] == ["sess-recipe"]
    for span in _spans(data):
        a = span["attributes"]
        assert span["type"] in ("AGENT", "CHAT_MODEL", "TOOL"), span["name"]
        assert "gen_ai.tool.definitions" not in a and "mlflow.chat.tools" not in a
        assert "gen_ai.system_instructions" not in a and "upstream overloaded" not in json.dumps(span)
        if "hermes.input.preview" in a and span["type"] != "TOOL":
            assert span["inputs"] == [{"role": "user", "parts": [{"type": "text", "content": a["hermes.input.preview"]}]}]
        if a.get("gen_ai.tool.call.id") == "call_ok":
            assert (span["inputs"], span["outputs"]) == ({"path": "notes.txt"}, a["hermes.output.preview"])
    [failed] = [s for s in _spans(data) if s["type"] == "CHAT_MODEL" and s["status"] == "ERROR"]
    assert failed["description"] == "upstream_error"  # the type only: the message is content
