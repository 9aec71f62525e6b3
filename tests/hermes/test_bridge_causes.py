"""The real Hermes Agent through the bridge: failures keep their cause (issue #27, deliverable 3).

``hermes chat -Q -q`` runs against the scripted model server with ATOF + ATIF + OTLP from the pipeline
file and the observability store and trajectory store on from the profile's ``observability.*`` keys.
A turn that fails because the provider answers 503 / 429 / 401 carries the provider's error type
(FMT-66: ``upstream_error``, ``rate_limited``, ``authentication``) in ATOF, ATIF, OTLP and
``task_runs.error_type``, never ``_OTHER``; a ``terminal`` command that exits 3 has its exit code as
a field in every output and counts as a failed command, while Hermes' own status stays ``ok``.
"""

from __future__ import annotations

import json
import sqlite3
import textwrap
from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline.dashboard.views_runs import failed_commands
from hermes_pipeline.demo.otlp_receiver import OTLPReceiver
from tests.sinks.atif._support import check_document
from tests.hermes.test_bridge_e2e import (Run, _config, _hermes, _pipeline, _scopes, _start_model_server, _stop,
                                          _wait_for_spans, pytestmark, receiver, workdir)

__all__ = ["pytestmark", "receiver", "workdir"]  # the fixtures and the skip mark of the bridge e2e tests

STORE_KEYS = textwrap.dedent("""\
    agent:
      api_max_retries: 1
    observability:
      audit:
        enabled: true
      trajectories:
        enabled: true
    """)


def _profile(home: Path, port: int) -> None:
    _config(home, port, enabled=["hermes_pipeline"])
    with (home / "config.yaml").open("a", encoding="utf-8") as fh:
        fh.write(STORE_KEYS)


def _store(home: Path, sql: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(home / "observability" / "observability.sqlite3") as db:
        return list(db.execute(sql))


def _run(tmp_path: Path, receiver: OTLPReceiver, steps: str, prompt: str) -> Run:
    script = tmp_path / "script.yaml"
    script.write_text("steps:\n" + textwrap.indent(textwrap.dedent(steps), "  "), encoding="utf-8")
    server, port = _start_model_server(script)
    out = tmp_path / "out"
    try:
        home = tmp_path / "hermes"
        _profile(home, port)
        return _hermes(tmp_path, home, _pipeline(tmp_path, receiver, out), prompt, out)
    finally:
        _stop(server)


@pytest.mark.parametrize(("status", "expected"), [(503, "upstream_error"), (429, "rate_limited"),
                                                  (401, "authentication")])
def test_provider_failure_keeps_its_type_in_every_output(tmp_path: Path, workdir: Path, receiver: OTLPReceiver,
                                                         status: int, expected: str) -> None:
    """FMT-66, BOOK-25 (``task_runs.error_type``): the turn that the provider failed carries the provider's type."""
    steps = "".join(f"- {{error_status: {status}, error_message: scripted failure, retry_after: 0}}\n"
                    for _ in range(6))  # more than any retry loop takes: the turn fails
    run = _run(tmp_path, receiver, steps, "hello")
    events = run.events()
    (turn,) = _scopes(events, "agent.run")
    meta = turn["end"]["metadata"]
    assert meta.get("otel.status_code") == "ERROR" and meta.get("error.type") == expected, meta
    attempts = _scopes(events, "llm.call")
    assert attempts and all(a["end"]["metadata"]["error.type"] == expected for a in attempts)

    (trajectory,) = run.trajectories()
    check_document(trajectory)
    (user,) = [s for s in trajectory["steps"] if s["source"] == "user"]
    assert user["extra"]["hermes"]["turn_status"] == "error"
    assert user["extra"]["hermes"]["error_type"] == expected

    rows = _store(run.home, "select outcome, error_type, trajectory_id from task_runs")
    assert [(r[0], r[1]) for r in rows] == [("failed", expected)]
    stored = list((run.home / "trajectories").glob("*.json"))
    assert len(stored) == 1

    _wait_for_spans(receiver, "invoke_agent", 1)
    (agent,) = receiver.spans_named("invoke_agent")
    assert agent.attributes.get("error.type") == expected


def test_command_exit_code_is_a_field_everywhere(tmp_path: Path, workdir: Path, receiver: OTLPReceiver) -> None:
    """A ``terminal`` command exiting 3: ``process.exit.code`` (OTel semconv) in ATOF and OTLP, ``exit_code``
    in ATIF, a failed command for the dashboard; Hermes' own status (``ok``) is kept as it reported it."""
    steps = """\
        - tool_calls: [{name: terminal, arguments: {command: "echo nope; exit 3"}, id: call_fail}]
        - tool_calls: [{name: terminal, arguments: {command: "echo fine"}, id: call_ok}]
        - "done"
        """
    run = _run(tmp_path, receiver, steps, "run the checks")
    assert run.returncode == 0, run.stderr[-2000:]
    tools = {s["category_profile"]["tool_call_id"]: s for s in _scopes(run.events(), category="tool")}
    failed, fine = tools["call_fail"]["end"]["metadata"], tools["call_ok"]["end"]["metadata"]
    assert failed["process.exit.code"] == 3 and failed["hermes.tool.command_failed"] is True
    assert failed["hermes.tool.status"] == "ok"  # Hermes' status, as it reported it
    assert fine["process.exit.code"] == 0 and "hermes.tool.command_failed" not in fine

    (trajectory,) = run.trajectories()
    check_document(trajectory)
    results = {r["source_call_id"]: r["extra"]["hermes"] for step in trajectory["steps"]
               for r in (step.get("observation") or {}).get("results", [])}
    assert results["call_fail"]["exit_code"] == 3 and results["call_fail"]["command_failed"] is True
    assert results["call_fail"]["status"] == "ok"
    assert results["call_ok"]["exit_code"] == 0 and "command_failed" not in results["call_ok"]

    _wait_for_spans(receiver, "execute_tool", 2)
    spans = {s.attributes.get("gen_ai.tool.call.id"): s for s in receiver.spans_named("execute_tool")}
    assert spans["call_fail"].attributes.get("process.exit.code") == 3
    assert spans["call_fail"].attributes.get("hermes.tool.command_failed") is True
    assert spans["call_ok"].attributes.get("process.exit.code") == 0

    (stored,) = (run.home / "trajectories").glob("*.json")
    assert failed_commands(json.loads(stored.read_text(encoding="utf-8"))) == 1
    rows = _store(run.home, "select tool_call_id, tool_name, status, error_type, exit_code from tool_errors")
    assert rows == [("call_fail", "terminal", "ok", "command_failed", 3)]  # Hermes' status kept, the exit counted

    # the alert rules' daily digest counts it among the error patterns (A-L1: by error type and tool)
    from datetime import datetime, timedelta, timezone

    from hermes_pipeline.alerts.digest import daily_digest

    now = datetime.now(timezone.utc).replace(tzinfo=None)
    with sqlite3.connect(run.home / "observability" / "observability.sqlite3") as db:
        digest = daily_digest(db, now - timedelta(days=1), now + timedelta(days=1))
    assert {"pattern": "tool terminal: command_failed", "count": 1} in digest["top_errors"]


def test_an_unreachable_provider_is_a_connection_error_in_every_output(tmp_path: Path, workdir: Path,
                                                                      receiver: OTLPReceiver) -> None:
    """FMT-66, BOOK-25: a provider nobody listens for (a refused connection, which Hermes' own classifier calls a
    timeout) is a ``connection_error`` in ATOF, ATIF, OTLP and ``task_runs``, and the run failed, not timed out."""
    from hermes_pipeline.testing import closed_port

    out = tmp_path / "out"
    with closed_port() as port:
        home = tmp_path / "hermes"
        _profile(home, port)
        run = _hermes(tmp_path, home, _pipeline(tmp_path, receiver, out), "hello", out)
    events = run.events()
    (turn,) = _scopes(events, "agent.run")
    assert turn["end"]["metadata"].get("error.type") == "connection_error", turn["end"]["metadata"]
    attempts = _scopes(events, "llm.call")
    assert attempts and all(a["end"]["metadata"]["error.type"] == "connection_error" for a in attempts)
    (trajectory,) = run.trajectories()
    (user,) = [s for s in trajectory["steps"] if s["source"] == "user"]
    assert user["extra"]["hermes"]["error_type"] == "connection_error"
    assert _store(run.home, "select outcome, error_type from task_runs") == [("failed", "connection_error")]
    _wait_for_spans(receiver, "invoke_agent", 1)
    (agent,) = receiver.spans_named("invoke_agent")
    assert agent.attributes.get("error.type") == "connection_error"


def test_a_command_stopped_at_its_time_limit_is_a_command_timeout(tmp_path: Path, workdir: Path,
                                                                    receiver: OTLPReceiver) -> None:
    """A ``terminal`` command Hermes kills at its ``timeout`` (exit 124, ``[Command timed out after 1s]``) is a
    failed command whose cause is its time limit: ``hermes.tool.command_timed_out`` in ATOF and OTLP,
    ``command_timed_out`` in ATIF, a ``tool_errors`` row ``command_timeout``; a command failing fast is not."""
    steps = """\
        - tool_calls: [{name: terminal, arguments: {command: "sleep 30", timeout: 1}, id: call_slow}]
        - tool_calls: [{name: terminal, arguments: {command: "exit 2"}, id: call_fail}]
        - "done"
        """
    run = _run(tmp_path, receiver, steps, "run the slow one")
    assert run.returncode == 0, run.stderr[-2000:]
    tools = {s["category_profile"]["tool_call_id"]: s["end"]["metadata"] for s in _scopes(run.events(), category="tool")}
    assert tools["call_slow"]["process.exit.code"] == 124
    assert tools["call_slow"]["hermes.tool.command_timed_out"] is True
    assert "hermes.tool.command_timed_out" not in tools["call_fail"] and tools["call_fail"]["process.exit.code"] == 2

    (trajectory,) = run.trajectories()
    check_document(trajectory)
    results = {r["source_call_id"]: r["extra"]["hermes"] for step in trajectory["steps"]
               for r in (step.get("observation") or {}).get("results", [])}
    assert results["call_slow"]["command_timed_out"] is True and "command_timed_out" not in results["call_fail"]

    _wait_for_spans(receiver, "execute_tool", 2)
    spans = {s.attributes.get("gen_ai.tool.call.id"): s for s in receiver.spans_named("execute_tool")}
    assert spans["call_slow"].attributes.get("hermes.tool.command_timed_out") is True
    assert spans["call_fail"].attributes.get("hermes.tool.command_timed_out") is None

    rows = _store(run.home, "select tool_call_id, error_type, exit_code from tool_errors order by id")
    assert rows == [("call_slow", "command_timeout", 124), ("call_fail", "command_failed", 2)]
