"""The real Hermes Agent through the bridge: approvals with their choice and decider (issue #27, deliverable 6).

``hermes chat -Q -q`` against the scripted model server; a ``terminal`` command Hermes flags as dangerous
asks for an approval. In ``manual`` mode nobody answers and the prompt times out; in ``smart`` mode
Hermes' auxiliary review (served by the same scripted server) approves. ATIF puts the approval on the
call's observation (``extra.hermes.approval``: choice, outcome, ``decided_by``, ``waited_ms``), ATOF and
OTLP carry ``decided_by``, and the observability store keeps one ``approvals`` row (OBS-43, SM-24).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from hermes_pipeline.demo.otlp_receiver import OTLPReceiver
from tests.sinks.atif._support import check_document
from tests.hermes.test_bridge_e2e import (Run, _config, _hermes, _pipeline, _start_model_server, _stop,
                                          _wait_for_spans, pytestmark, receiver, workdir)

__all__ = ["pytestmark", "receiver", "workdir"]  # the fixtures and the skip mark of the bridge e2e tests


def _run(tmp_path: Path, workdir: Path, receiver: OTLPReceiver, mode: str, review: str) -> Run:
    script = tmp_path / "script.yaml"
    script.write_text("steps:\n"
                      f"  - tool_calls: [{{name: terminal, arguments: {{command: \"rm -rf {workdir / 'junk'}\"}}, "
                      f"id: call_rm}}]\n{review}  - \"Tidied up.\"\n", encoding="utf-8")
    server, port = _start_model_server(script)
    out = tmp_path / "out"
    home = tmp_path / "hermes"
    try:
        _config(home, port, enabled=["hermes_pipeline"], approval_timeout=2)
        text = (home / "config.yaml").read_text(encoding="utf-8").replace("mode: manual", f"mode: {mode}")
        (home / "config.yaml").write_text(text + "observability:\n  audit:\n    enabled: true\n", encoding="utf-8")
        run = _hermes(tmp_path, home, _pipeline(tmp_path, receiver, out), "Tidy up my junk folder.", out)
    finally:
        _stop(server)
    assert run.returncode == 0, run.stderr[-2000:]
    return run


def _approval(run: Run) -> dict[str, object]:
    (doc,) = run.trajectories()
    check_document(doc)
    results = {r["source_call_id"]: r["extra"]["hermes"] for s in doc["steps"]
               for r in (s.get("observation") or {}).get("results", [])}
    return results["call_rm"]


def _rows(run: Run) -> list[tuple[object, ...]]:
    with sqlite3.connect(run.home / "observability" / "observability.sqlite3") as db:
        return list(db.execute("select kind, tool_call_id, choice, outcome, decided_by, waited_ms, trajectory_id "
                               "from approvals"))


def test_timed_out_prompt_is_decided_by_the_timeout(tmp_path: Path, workdir: Path, receiver: OTLPReceiver) -> None:
    run = _run(tmp_path, workdir, receiver, "manual", "")
    record = _approval(run)
    approval = record["approval"]
    assert isinstance(approval, dict)
    assert approval["choice"] == "timeout" and approval["outcome"] == "timed_out"
    assert approval["decided_by"] == "timeout" and approval["surface"] == "cli"
    assert isinstance(approval["waited_ms"], int) and approval["waited_ms"] >= 1500
    assert record["status"] == "blocked"
    ((kind, call, choice, outcome, decided_by, waited, trajectory),) = _rows(run)
    assert (kind, call, choice, outcome, decided_by) == ("approval", "call_rm", "timeout", "timed_out", "timeout")
    assert isinstance(waited, int) and waited >= 1500
    events = run.events()
    (turn,) = [e for e in events if e["kind"] == "scope" and e["name"] == "agent.run" and e["scope_category"] == "start"]
    assert trajectory == turn["uuid"]
    (mark,) = [e for e in events if e["kind"] == "mark" and e["name"] == "hermes.approval.response"]
    assert mark["data"]["decided_by"] == "timeout"
    _wait_for_spans(receiver, "execute_tool", 1)
    (span,) = receiver.spans_named("execute_tool")
    responses = [attrs for name, attrs in span.events if name == "hermes.approval.response"]
    assert responses and responses[0].get("hermes.approval.decided_by") == "timeout"
    assert (workdir / "junk").is_dir()


def test_smart_review_is_decided_by_smart_approval(tmp_path: Path, workdir: Path, receiver: OTLPReceiver) -> None:
    run = _run(tmp_path, workdir, receiver, "smart", '  - "APPROVE"\n')
    approval = _approval(run).get("approval")
    if approval is None:
        pytest.fail(f"no approval recorded; stderr: {run.stderr[-1500:]}")
    assert isinstance(approval, dict)
    assert approval["decided_by"] == "smart_approval" and approval["outcome"] == "approved", approval
    rows = _rows(run)
    assert [(r[0], r[1], r[3], r[4]) for r in rows] == [("approval", "call_rm", "approved", "smart_approval")]
    assert not (workdir / "junk").exists()  # approved: the command ran
