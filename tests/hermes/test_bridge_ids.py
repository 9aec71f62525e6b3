"""The real Hermes Agent through the bridge: one run, one id (issue #27, deliverable 4).

``hermes chat -Q -q`` against the scripted model server, ATOF + ATIF + OTLP from the pipeline file and
the observability store and trajectory store on from the profile's ``observability.*`` keys. The
exported ATIF ``trajectory_id``, the trajectory store's file id, OTLP ``hermes.trajectory_id`` and
``task_runs.trajectory_id`` are the same id; ``trajectory show`` and the dashboard find the run by that
id and by a unique prefix of it (FMT-42, FMT-67, BOOK-27, BOOK-31).
"""

from __future__ import annotations

import sqlite3
import textwrap
from pathlib import Path

from hermes_pipeline.cli.main import main as cli
from hermes_pipeline.dashboard.server import Dashboard
from hermes_pipeline.dashboard.sources import load_sources
from hermes_pipeline.demo.otlp_receiver import OTLPReceiver
from hermes_pipeline.sinks.trajectory_store import STORE_NAME
from tests.hermes.test_bridge_e2e import (_config, _hermes, _pipeline, _scopes, _start_model_server, _stop,
                                          _wait_for_spans, pytestmark, receiver, workdir)

__all__ = ["pytestmark", "receiver", "workdir"]  # the fixtures and the skip mark of the bridge e2e tests

STORE_KEYS = textwrap.dedent("""\
    observability:
      audit:
        enabled: true
      trajectories:
        enabled: true
    """)


def test_exported_trajectory_store_otlp_and_dashboard_share_one_id(tmp_path: Path, workdir: Path,
                                                                   receiver: OTLPReceiver, capsys) -> None:  # type: ignore[no-untyped-def]
    script = tmp_path / "script.yaml"
    script.write_text(textwrap.dedent(f"""\
        steps:
          - tool_calls: [{{name: read_file, arguments: {{path: {workdir / 'notes.txt'}}}, id: call_read}}]
          - "Your notes say: buy milk."
        """), encoding="utf-8")
    server, port = _start_model_server(script)
    out = tmp_path / "out"
    home = tmp_path / "hermes"
    try:
        _config(home, port, enabled=["hermes_pipeline"])
        with (home / "config.yaml").open("a", encoding="utf-8") as fh:
            fh.write(STORE_KEYS)
        run = _hermes(tmp_path, home, _pipeline(tmp_path, receiver, out), "What do my notes say?", out)
    finally:
        _stop(server)
    assert run.returncode == 0, run.stderr[-2000:]

    (exported,) = run.trajectories()
    tid = exported["trajectory_id"]
    assert exported["session_id"] == tid and (out / f"hermes-atif-{tid}.json").is_file()
    (turn,) = _scopes(run.events(), "agent.run")
    assert turn["uuid"] == tid  # the run's scope
    (stored,) = [p for p in (home / "trajectories").iterdir() if STORE_NAME.fullmatch(p.name)]
    assert STORE_NAME.fullmatch(stored.name).group("id") == tid  # type: ignore[union-attr]
    with sqlite3.connect(home / "observability" / "observability.sqlite3") as db:
        assert [r[0] for r in db.execute("select trajectory_id from task_runs")] == [tid]
    _wait_for_spans(receiver, "execute_tool", 1)
    spans = receiver.spans_named("invoke_agent") + receiver.spans_named("chat") + receiver.spans_named("execute_tool")
    assert spans and {s.attributes.get("hermes.trajectory_id") for s in spans} == {tid}
    user = next(s for s in exported["steps"] if s["source"] == "user")
    assert user["extra"]["hermes"]["trajectory_id"] == tid

    # every command and page: the full id and a unique prefix of it
    for ref in (tid, tid[:8], tid[:6].upper()):
        assert cli(["trajectory", "show", ref, "--home", str(home), "--json"]) == 0, capsys.readouterr().err
        assert str(stored) in capsys.readouterr().out
        assert cli(["trace", "show", ref, "--home", str(home), "--json"]) == 0, capsys.readouterr().err
        capsys.readouterr()
        page = Dashboard(load_sources(home)).respond(f"/trajectories/{ref}")
        assert page.status == 200 and tid.encode() in page.body
    assert Dashboard(load_sources(home)).respond(f"/trajectories/{tid}/diff/{tid[:8]}").status == 200


def _chat(tmp_path: Path, home: Path, pipeline: Path, out: Path, *args: str) -> str:
    import os
    import re
    import shutil
    import subprocess

    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "OPENAI_", "OTEL_"))}
    env.update(HOME=str(tmp_path / "user"), HERMES_HOME=str(home), NO_COLOR="1", HERMES_ACCEPT_HOOKS="1",
               HERMES_NEMO_RELAY_PLUGINS_TOML=str(pipeline))
    proc = subprocess.run([shutil.which("hermes") or "hermes", "chat", "-Q", *args], cwd=tmp_path / "work", env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]
    match = re.search(r"session_id:\s*(\S+)", proc.stdout + proc.stderr)
    return match.group(1) if match else ""


def test_resumed_session_is_one_trajectory(tmp_path: Path, workdir: Path, receiver: OTLPReceiver) -> None:
    """Issue #27 (5): ``chat -q``, then ``--resume`` and ``-c``: one Hermes session, one exported ATIF file
    (rewritten atomically, its name and id kept) holding the three turns in order, each turn its own run id
    and its own trace; the ATOF stream's later session scopes say ``resumed`` (FMT-42, FMT-52, FMT-56a)."""
    import json

    script = tmp_path / "script.yaml"
    script.write_text(textwrap.dedent(f"""\
        steps:
          - tool_calls: [{{name: read_file, arguments: {{path: {workdir / 'notes.txt'}}}, id: call_read}}]
          - "Your notes say: buy milk."
          - "Second answer."
          - tool_calls: [{{name: terminal, arguments: {{command: "exit 2"}}, id: call_fail}}]
          - "Third answer."
        """), encoding="utf-8")
    server, port = _start_model_server(script)
    out = tmp_path / "out"
    home = tmp_path / "hermes"
    try:
        _config(home, port, enabled=["hermes_pipeline"])
        with (home / "config.yaml").open("a", encoding="utf-8") as fh:
            fh.write(STORE_KEYS)
        pipeline = _pipeline(tmp_path, receiver, out)
        sid = _chat(tmp_path, home, pipeline, out, "-q", "What do my notes say?")
        assert sid
        _chat(tmp_path, home, pipeline, out, "--resume", sid, "-q", "And then?")
        _chat(tmp_path, home, pipeline, out, "-c", "-q", "Run the check")
    finally:
        _stop(server)
    with sqlite3.connect(home / "state.db") as db:
        assert [r[0] for r in db.execute("select id from sessions")] == [sid]

    files = sorted(out.glob("hermes-atif-*.json"))
    assert len(files) == 1, [f.name for f in files]
    doc = json.loads(files[0].read_text(encoding="utf-8"))
    from tests.sinks.atif._support import check_document

    check_document(doc)
    assert doc["extra"]["hermes"]["session_id"] == sid and files[0].name == f"hermes-atif-{doc['trajectory_id']}.json"
    users = [s for s in doc["steps"] if s["source"] == "user"]
    assert [u["message"] for u in users] == ["What do my notes say?", "And then?", "Run the check"]
    assert [s["step_id"] for s in doc["steps"]] == list(range(1, len(doc["steps"]) + 1))
    assert doc["final_metrics"]["total_steps"] == len(doc["steps"])
    runs = [u["extra"]["hermes"]["trajectory_id"] for u in users]
    assert len(set(runs)) == 3 and runs[0] == doc["trajectory_id"]  # each turn its own run, the first names the file
    results = {r["source_call_id"]: r["extra"]["hermes"] for s in doc["steps"]
               for r in (s.get("observation") or {}).get("results", [])}
    assert results["call_fail"]["exit_code"] == 2
    assert not list(out.glob(".*.tmp")) and not list(out.glob("*.tmp"))  # written atomically, no leftovers

    events = [json.loads(line) for line in (out / "events.jsonl").read_text(encoding="utf-8").splitlines()]
    sessions = _scopes(events, "hermes.session")
    assert [s["metadata"]["hermes.session_id"] for s in sessions] == [sid] * 3
    assert [bool((s.get("data") or {}).get("resumed")) for s in sessions] == [False, True, True]
    turns = _scopes(events, "agent.run")
    assert [t["uuid"] for t in turns] == runs
    stored = sorted(p.name for p in (home / "trajectories").iterdir() if STORE_NAME.fullmatch(p.name))
    assert sorted(STORE_NAME.fullmatch(n).group("id") for n in stored) == sorted(runs)  # type: ignore[union-attr]
    _wait_for_spans(receiver, "invoke_agent", 3)
    agents = receiver.spans_named("invoke_agent")
    assert len({s.trace_id for s in agents}) == 3  # each turn its own trace
    assert {s.attributes.get("hermes.trajectory_id") for s in agents} == set(runs)
