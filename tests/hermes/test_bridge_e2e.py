"""The real Hermes Agent through the bridge: ``hermes chat -Q -q`` against the scripted model server.

Each test runs the installed ``hermes`` command (``pip install '.[hermes]'``) in a subprocess, in a
Hermes profile under ``tmp_path`` (``HERMES_HOME`` and ``HOME`` both there; the model is the
project's streaming model server on 127.0.0.1, OTLP goes to the loopback receiver, nothing else
is contacted), with the bridge enabled in ``config.yaml`` and a pipeline file exporting ATOF, ATIF
and OTLP. The outputs are compared with what Hermes itself recorded in its ``state.db``.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline.demo.otlp_receiver import OTLPReceiver
from tests._pipelines import write_pipeline

try:
    HERMES_VERSION = importlib.metadata.version("hermes-agent")
except importlib.metadata.PackageNotFoundError:
    HERMES_VERSION = ""
HERMES = shutil.which("hermes")
pytestmark = pytest.mark.skipif(
    not HERMES_VERSION or HERMES is None,
    reason="hermes-agent is not installed: pip install '.[hermes]' to run the Hermes bridge end-to-end tests")

POLICY_PLUGIN = '''\
def register(ctx):
    ctx.register_hook("pre_tool_call", block_writes)


def block_writes(**kwargs):
    if kwargs.get("tool_name") == "write_file":
        return {"action": "block", "message": "policy: writes are disabled in this profile"}
    return None
'''


@dataclass
class Run:
    """One finished ``hermes chat`` run and where its outputs are."""

    returncode: int
    stdout: str
    stderr: str
    home: Path
    out: Path
    session_id: str

    def events(self) -> list[dict[str, Any]]:
        path = self.out / "events.jsonl"
        assert path.exists(), (f"no ATOF file (hermes exited {self.returncode})\n{self.stdout[-2000:]}\n"
                               f"{self.stderr[-4000:]}")
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]

    def trajectories(self) -> list[dict[str, Any]]:
        return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(self.out.glob("hermes-atif-*.json"))]

    def state(self, sql: str) -> list[tuple[Any, ...]]:
        with sqlite3.connect(self.home / "state.db") as db:
            return list(db.execute(sql))


def _start_model_server(script: Path) -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen([sys.executable, "-m", "hermes_pipeline.demo.model_server", "--script", str(script),
                             "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()  # the server prints its address first, flushed
    match = re.search(r"port (\d+)", line)
    if match is None:
        proc.kill()
        pytest.fail(f"model server did not start: {line!r} {proc.stderr.read() if proc.stderr else ''}")
    return proc, int(match.group(1))


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


def _pipeline(tmp: Path, receiver: OTLPReceiver, out: Path) -> Path:
    policy = tmp / "policy"
    policy.mkdir()
    artifact = policy / "hp_e2e_write_policy.py"
    artifact.write_text(POLICY_PLUGIN, encoding="utf-8")
    digest = hashlib.sha256(artifact.read_bytes()).hexdigest()
    (policy / "relay-plugin.toml").write_text(textwrap.dedent(f"""\
        manifest_version = 1
        [plugin]
        id = "write-policy"
        kind = "python"
        [compat]
        hermes_pipeline = ">=0.1,<1.0"
        [source]
        artifact = "{artifact.name}"
        [integrity]
        sha256 = "sha256:{digest}"
        [load]
        entrypoint = "hp_e2e_write_policy:register"
        """), encoding="utf-8")
    return write_pipeline(tmp, "atof-atif-otlp", filename="pipeline.toml",
                          extra='\n[[plugins.dynamic]]\nmanifest = "policy/relay-plugin.toml"\n',
                          atof_directory=out, atif_directory=out, endpoint=f"{receiver.endpoint}/v1/traces")


def _config(home: Path, port: int, *, enabled: list[str], approval_timeout: int = 2, metrics: bool = False) -> None:
    home.mkdir(parents=True, exist_ok=True)
    items = "\n".join(f"    - {name}" for name in enabled)
    (home / "config.yaml").write_text(textwrap.dedent(f"""\
        # written by the Hermes bridge end-to-end test
        model:
          provider: custom
          default: hermes-demo-1
          base_url: http://127.0.0.1:{port}/v1
          api_key: unused
        auxiliary:
          title_generation:
            enabled: false
        approvals:
          mode: manual
          timeout: {approval_timeout}
        telemetry:
          shared_metrics:
            enabled: {"true" if metrics else "false"}
        plugins:
          enabled:
        """) + items + "\n", encoding="utf-8")


def _hermes(tmp: Path, home: Path, pipeline: Path | None, prompt: str, out: Path) -> Run:
    work = tmp / "work"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "OPENAI_", "OTEL_"))}
    env.update(HOME=str(tmp / "user"), HERMES_HOME=str(home), NO_COLOR="1", HERMES_ACCEPT_HOOKS="1")
    if pipeline is not None:
        env["HERMES_NEMO_RELAY_PLUGINS_TOML"] = str(pipeline)
    proc = subprocess.run([HERMES or "hermes", "chat", "-Q", "-q", prompt], cwd=work, env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180)
    match = re.search(r"session_id:\s*(\S+)", proc.stdout + proc.stderr)
    return Run(proc.returncode, proc.stdout, proc.stderr, home, out, match.group(1) if match else "")


@pytest.fixture
def receiver() -> Iterator[OTLPReceiver]:
    with OTLPReceiver() as rec:
        yield rec


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("buy milk\n", encoding="utf-8")
    (work / "junk").mkdir()
    (tmp_path / "user").mkdir()
    return work


def _scopes(events: list[dict[str, Any]], name: str | None = None, category: str | None = None) -> list[dict[str, Any]]:
    """Start events joined with their ends (``end`` key), in start order."""
    ends = {e["uuid"]: e for e in events if e["kind"] == "scope" and e["scope_category"] == "end"}
    out = []
    for e in events:
        if e["kind"] == "scope" and e["scope_category"] == "start" and (name is None or e["name"] == name) \
                and (category is None or e["category"] == category):
            out.append(dict(e, end=ends.get(e["uuid"])))
    return out


def _seconds(stamp: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def _duration(scope: dict[str, Any]) -> float:
    return _seconds(scope["end"]["timestamp"]) - _seconds(scope["timestamp"])


def _wait_for_spans(receiver: OTLPReceiver, name: str, count: int, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout  # the receiver has no event to wait on: bounded polling
    while len(receiver.spans_named(name)) < count and time.monotonic() < deadline:
        time.sleep(0.05)


def test_hermes_session_through_the_bridge(tmp_path: Path, workdir: Path, receiver: OTLPReceiver) -> None:
    """One real session: a 503 then a retry, a read, a policy-blocked write, a terminal command that
    needs an approval (the prompt times out), a final answer. ATOF, ATIF and OTLP agree with Hermes."""
    script = tmp_path / "script.yaml"
    script.write_text(textwrap.dedent(f"""\
        steps:
          - {{error_status: 503, error_message: overloaded, retry_after: 0}}
          - tool_calls: [{{name: read_file, arguments: {{path: {workdir / 'notes.txt'}}}, id: call_read}}]
          - tool_calls: [{{name: write_file, arguments: {{path: {workdir / 'out.txt'}, content: hi}}, id: call_write}}]
          - tool_calls: [{{name: terminal, arguments: {{command: "rm -rf {workdir / 'junk'}"}}, id: call_rm}}]
          - "Your notes say: buy milk."
        """), encoding="utf-8")
    server, port = _start_model_server(script)
    out = tmp_path / "out"
    try:
        home = tmp_path / "hermes"
        _config(home, port, enabled=["hermes_pipeline"], metrics=True)
        run = _hermes(tmp_path, home, _pipeline(tmp_path, receiver, out), "What do my notes say? Then tidy up.", out)
    finally:
        _stop(server)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "buy milk" in run.stdout and run.session_id

    events = run.events()
    sessions = _scopes(events, "hermes.session")
    assert [s["metadata"]["hermes.session_id"] for s in sessions] == [run.session_id]
    assert sessions[0]["end"] is not None
    turns = _scopes(events, "agent.run")
    assert len(turns) == 1 and turns[0]["end"]["metadata"].get("otel.status_code") == "OK"

    llm = _scopes(events, "llm.call")
    assert len(llm) == 5 - 1 + 1  # four scripted replies plus the failed attempt
    first, retry = llm[0], llm[1]
    assert first["metadata"]["hermes.api_request_id"] == retry["metadata"]["hermes.api_request_id"]
    assert first["end"]["metadata"].get("otel.status_code") == "ERROR"
    assert first["end"]["data"]["error"]["status_code"] == 503
    assert first["end"]["data"]["error"]["retry_count"] == 0
    # each attempt has its own start: the retry starts after the failed attempt ended (Hermes gives both
    # the same started_at), and no attempt against the local server takes anywhere near the backoff
    assert _seconds(retry["timestamp"]) >= _seconds(first["end"]["timestamp"])
    assert all(_duration(s) < 2.0 for s in llm), [_duration(s) for s in llm]
    assert all(s["end"]["metadata"].get("otel.status_code") != "ERROR" for s in llm[1:])

    tools = {s["category_profile"]["tool_call_id"]: s for s in _scopes(events, category="tool")}
    assert set(tools) == {"call_read", "call_write", "call_rm"}
    assert tools["call_read"]["end"]["metadata"].get("otel.status_code") == "OK"
    assert tools["call_write"]["end"]["metadata"]["error.type"] == "blocked"
    assert "policy: writes are disabled" in tools["call_write"]["end"]["data"]["result"]
    assert (workdir / "out.txt").exists() is False
    rm = tools["call_rm"]
    assert 1.5 <= _duration(rm) < 30  # the approval prompt waited for its 2 s timeout
    # refused by its timed-out approval: blocked (spec 01 §7.5, FMT-66), though Hermes says "error"
    assert rm["end"]["metadata"]["hermes.tool.status"] == "blocked" and rm["end"]["metadata"]["error.type"] == "blocked"
    assert rm["end"]["metadata"]["hermes.tool.error_type"] == "approval_timeout"
    marks = [e for e in events if e["kind"] == "mark" and e["name"].startswith("hermes.approval")]
    assert [m["name"] for m in marks] == ["hermes.approval.request", "hermes.approval.response"]
    assert all(m["parent_uuid"] == rm["uuid"] for m in marks)  # under the tool call, not detached roots
    assert marks[1]["data"]["choice"] == "timeout" and marks[1]["data"]["outcome"] == "timed_out"
    assert (workdir / "junk").is_dir()  # denied by the timeout: nothing was deleted

    (trajectory,) = run.trajectories()
    assert trajectory["agent"]["version"] == HERMES_VERSION
    assert trajectory["session_id"] == turns[0]["uuid"]  # the session's file takes its first run's id
    observations = [r for step in trajectory["steps"] for r in (step.get("observation") or {}).get("results", [])]
    # Hermes' own record: the same session, and one tool message per tool call
    (db_session,) = run.state("select id, tool_call_count from sessions")
    assert db_session[0] == run.session_id
    tool_messages = run.state("select tool_name from messages where role = 'tool'")
    assert len(observations) == len(tool_messages) == len(tools)

    # shared metrics of the profile: Hermes' version, and tool categories from Hermes' tool registry
    from hermes_pipeline.cli.main import main as cli

    assert cli(["metrics", "export", "--now", "--home", str(home)]) == 0
    (package,) = [json.loads(p.read_text(encoding="utf-8"))
                  for p in (home / "telemetry" / "shared_metrics" / "outbox").glob("*.json")]
    assert package["resource"]["hermes_version"] == HERMES_VERSION
    categories = {m["dimensions"]["tool_category"] for m in package["metrics"] if m["name"] == "hermes.tool_call.count"}
    assert categories and "unknown" not in categories, categories

    _wait_for_spans(receiver, "execute_tool", 3)
    assert len(receiver.spans_named("chat")) == 5
    assert sorted(s.attributes.get("gen_ai.tool.call.id") for s in receiver.spans_named("execute_tool")) == \
        ["call_read", "call_rm", "call_write"]
    (rm_span,) = [s for s in receiver.spans_named("execute_tool")
                  if s.attributes.get("gen_ai.tool.call.id") == "call_rm"]
    assert rm_span.attributes.get("error.type") == "blocked"
    (agent,) = receiver.spans_named("invoke_agent")
    assert agent.attributes.get("gen_ai.conversation.id") == run.session_id


def test_failed_turn_is_closed_as_failed(tmp_path: Path, workdir: Path, receiver: OTLPReceiver) -> None:
    """Hermes returns without on_session_end when the provider fails for good (a 400 is not retried):
    the bridge closes the turn as failed, not cancelled, and the session still ends once."""
    script = tmp_path / "script.yaml"
    script.write_text("steps:\n  - {error_status: 400, error_message: bad request}\n", encoding="utf-8")
    server, port = _start_model_server(script)
    out = tmp_path / "out"
    try:
        home = tmp_path / "hermes"
        _config(home, port, enabled=["hermes_pipeline"])
        run = _hermes(tmp_path, home, _pipeline(tmp_path, receiver, out), "hello", out)
    finally:
        _stop(server)
    events = run.events()
    (turn,) = _scopes(events, "agent.run")
    assert turn["end"] is not None
    meta = turn["end"]["metadata"]
    assert meta.get("otel.status_code") == "ERROR" and meta.get("error.type") != "cancelled"
    assert "hermes.close_reason" not in meta  # a real end, not one synthesized at shutdown
    assert turn["end"]["data"]["completed"] is False and turn["end"]["data"]["interrupted"] is False
    (attempt,) = _scopes(events, "llm.call")
    assert attempt["end"]["data"]["error"]["status_code"] == 400
    assert len(_scopes(events, "hermes.session")) == 1


def test_bridge_refuses_to_export_beside_nemo_relay(tmp_path: Path, workdir: Path, receiver: OTLPReceiver) -> None:
    """With Hermes' NeMo Relay plugin enabled in the same profile and the same pipeline file, the bridge
    writes nothing (no interleaved producers) and logs an error naming both plugins and the fix."""
    script = tmp_path / "script.yaml"
    script.write_text('steps:\n  - "hi"\n', encoding="utf-8")
    server, port = _start_model_server(script)
    out = tmp_path / "out"
    try:
        home = tmp_path / "hermes"
        _config(home, port, enabled=["hermes_pipeline", "observability/nemo_relay"])
        run = _hermes(tmp_path, home, _pipeline(tmp_path, receiver, out), "hello", out)
    finally:
        _stop(server)
    assert run.returncode == 0 and "hi" in run.stdout
    # whatever NeMo Relay writes itself (when the nemo-relay wheel is installed), nothing comes from the
    # bridge: no event with this scope plugin's metadata, at most one trajectory for the session
    events = run.events() if (out / "events.jsonl").exists() else []
    assert not any("hermes.session_id" in (e.get("metadata") or {}) for e in events)
    assert len(list(out.glob("hermes-atif-*.json"))) <= 1
    logs = "".join(p.read_text(encoding="utf-8", errors="replace") for p in (home / "logs").glob("*.log")) \
        + run.stderr
    assert "observability/nemo_relay" in logs and "hermes plugins disable observability/nemo_relay" in logs


def test_background_subagent_is_nested_and_never_a_silent_orphan(tmp_path: Path, workdir: Path,
                                                                  receiver: OTLPReceiver) -> None:
    """Hermes runs a top-level delegate_task in the background: however the child's events interleave
    with the parent's, the trace has one root (FMT-20), the child sits under the delegating tool call
    (§2.11 note 5) and ends with a status saying what happened (never closed as an orphan). When the
    child outlives the parent turn or session (issues #12, #27, a loaded machine), its one session scope
    stays open and takes the rest of its run: never a second child session, every tool call id once in
    ATOF and ATIF; every interleaving is checked in tests/hermes/test_subagent_race.py."""
    script = tmp_path / "script.yaml"
    script.write_text(textwrap.dedent(f"""\
        steps:
          - tool_calls: [{{name: delegate_task, arguments: {{goal: "count the files"}}, id: call_delegate}}]
          - tool_calls: [{{name: read_file, arguments: {{path: {workdir / 'notes.txt'}}}, id: call_read}}]
          - "done"
          - "done"
          - "done"
          - "done"
        """), encoding="utf-8")
    server, port = _start_model_server(script)
    out = tmp_path / "out"
    try:
        home = tmp_path / "hermes"
        _config(home, port, enabled=["hermes_pipeline"])
        run = _hermes(tmp_path, home, _pipeline(tmp_path, receiver, out), "count my files with a helper", out)
    finally:
        _stop(server)
    assert run.returncode == 0, run.stderr[-2000:]
    events = run.events()
    sessions = _scopes(events, "hermes.session")
    roots = [s for s in sessions if s["parent_uuid"] is None]
    assert [r["metadata"]["hermes.session_id"] for r in roots] == [run.session_id]
    children = [s for s in sessions if s["metadata"].get("hermes.scope_role") == "subagent"]
    (tool,) = [s for s in _scopes(events, category="tool") if s["category_profile"]["tool_call_id"] == "call_delegate"]
    (child,) = children  # one child session, however its hooks interleaved with the parent's
    assert child["parent_uuid"] == tool["uuid"] and child["end"] is not None
    assert "hermes.close_reason" not in child["end"]["metadata"]  # ended by its own stop, not an orphan
    # how it really ended: done, or cut short when ``chat -q`` exited before it (Hermes' own interrupt)
    assert child["end"]["data"]["child_status"] in ("completed", "interrupted")
    orphans = [(e["name"], e["metadata"]) for e in events if (e.get("metadata") or {}).get("hermes.close_reason")
               == "orphan"]
    assert not orphans
    tool_ids = [s["category_profile"]["tool_call_id"] for s in _scopes(events, category="tool")]
    assert len(tool_ids) == len(set(tool_ids))
    (doc,) = run.trajectories()
    subs = doc.get("subagent_trajectories") or []
    assert [s["extra"]["hermes"]["session_id"] for s in subs] == [child["metadata"]["hermes.session_id"]]
    call_ids = [c["tool_call_id"] for d in (doc, *subs) for s in d["steps"] for c in s.get("tool_calls") or ()]
    assert len(call_ids) == len(set(call_ids))


def test_oneshot_mode_outputs_are_complete(tmp_path: Path, workdir: Path, receiver: OTLPReceiver) -> None:
    """``hermes -z`` leaves the process with ``os._exit`` right after its conversation, skipping ``atexit``
    (before the fix: no session end in ATOF, no ATIF file, no OTLP span). The outputs are what ``hermes
    chat -q`` writes: every scope paired (FMT-7), the trajectory written whole (not partial, FMT-49) and
    every span exported (FMT-85)."""
    script = tmp_path / "script.yaml"
    script.write_text(textwrap.dedent(f"""\
        steps:
          - tool_calls: [{{name: read_file, arguments: {{path: {workdir / 'notes.txt'}}}, id: call_read}}]
          - "Your notes say: buy milk."
        """), encoding="utf-8")
    server, port = _start_model_server(script)
    out = tmp_path / "out"
    try:
        home = tmp_path / "hermes"
        _config(home, port, enabled=["hermes_pipeline"])
        env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "OPENAI_", "OTEL_"))}
        env.update(HOME=str(tmp_path / "user"), HERMES_HOME=str(home), NO_COLOR="1", HERMES_ACCEPT_HOOKS="1",
                   HERMES_NEMO_RELAY_PLUGINS_TOML=str(_pipeline(tmp_path, receiver, out)))
        proc = subprocess.run([HERMES or "hermes", "-z", "What do my notes say?"], cwd=workdir, env=env,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180)
    finally:
        _stop(server)
    assert proc.returncode == 0 and "buy milk" in proc.stdout, proc.stderr[-2000:]
    run = Run(proc.returncode, proc.stdout, proc.stderr, home, out, "")
    ((session_id,),) = run.state("select id from sessions")

    events = run.events()
    starts = _scopes(events)
    assert [s["name"] for s in starts] == ["hermes.session", "agent.run", "llm.call", "read_file", "llm.call"]
    assert all(s["end"] is not None for s in starts), [s["name"] for s in starts if s["end"] is None]
    assert all("hermes.close_reason" not in s["end"]["metadata"] for s in starts)  # real ends, not teardown's
    assert starts[0]["metadata"]["hermes.session_id"] == session_id
    assert starts[1]["end"]["metadata"].get("otel.status_code") == "OK"

    (trajectory,) = run.trajectories()
    assert trajectory["session_id"] == starts[1]["uuid"] and not trajectory.get("notes")  # its run's id
    assert trajectory["final_metrics"]["total_steps"] == len(trajectory["steps"]) > 0

    _wait_for_spans(receiver, "invoke_agent", 1)
    assert len(receiver.spans_named("invoke_agent")) == 1
    assert len(receiver.spans_named("chat")) == 2 and len(receiver.spans_named("execute_tool")) == 1
    (agent,) = receiver.spans_named("invoke_agent")
    assert agent.attributes.get("gen_ai.conversation.id") == session_id
