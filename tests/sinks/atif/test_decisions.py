"""Approvals and human input in ATIF and the observability store (issue #27 deliverable 6; OBS-43, OBS-44, SM-24).

Through the host API: an approval answered by a smart review inside a tool call lands on the call's
observation (``extra.hermes.approval`` with ``decided_by``); an approval outside any tool and a human-input
wait land on the turn's step (``extra.hermes.approvals`` / ``human_input``); the documents stay schema-valid.
"""

from __future__ import annotations

from typing import Any

from hermes_pipeline import Engine, Host
from hermes_pipeline.export.classify import approval_decider

from tests.sinks.atif._support import Pipeline, check_document


def test_decisions_in_atif(engine: Engine) -> None:
    pipeline = Pipeline(engine)
    host = Host(engine, model="m")
    with host.session("s-decide") as session:
        with session.turn("tidy up") as turn:
            def gate(**_: Any) -> bool:
                return turn.approval("rm -rf junk", surface="smart").resolve("once", decided_by="aux_llm")

            turn.call_tool("terminal", {"command": "rm -rf junk"}, lambda **_: "ok", tool_call_id="c1",
                           approve=lambda *a, **k: gate())
            turn.approval("shutdown now").resolve("deny")
            wait = turn.human_input("clarify", "Which folder?")
            wait.resolve("submitted")
            turn.complete("done")
        session.finalize()
    pipeline.shutdown()
    [doc] = pipeline.documents()
    check_document(doc)
    results = {r.get("source_call_id"): r["extra"]["hermes"] for s in doc["steps"]
               for r in (s.get("observation") or {}).get("results", [])}
    approval = next(r["approval"] for r in results.values() if "approval" in r)
    assert approval["decided_by"] == "smart_approval" and approval["outcome"] == "approved"
    assert approval["choice"] == "once" and approval["waited_ms"] >= 0
    extras = [s.get("extra", {}).get("hermes", {}) for s in doc["steps"]]
    loose = [a for e in extras for a in e.get("approvals", [])]
    assert [(a["choice"], a["outcome"], a["decided_by"]) for a in loose] == [("deny", "denied", "user")]
    inputs = [h for e in extras for h in e.get("human_input", [])]
    assert [(h["kind"], h["outcome"]) for h in inputs] == [("clarify", "submitted")]


def test_decider_vocabulary() -> None:
    assert approval_decider("aux_llm", "smart", "smart_approve") == "smart_approval"
    assert approval_decider(None, "smart", "deny") == "smart_approval"
    assert approval_decider("timeout", "cli", "timeout") == "timeout"
    assert approval_decider(None, "cli", "timeout") == "timeout"
    assert approval_decider(None, "cli", "cancelled") == "none"
    assert approval_decider(None, "cli", "once") == "user"
    assert approval_decider("policy_engine", "gateway", "deny") == "policy_engine"
    assert approval_decider("Bad Value!", "cli", "once") == "user"
