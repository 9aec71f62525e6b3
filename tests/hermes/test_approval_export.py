"""A tool call refused by its approval ends ``blocked`` in every export (spec 01 §7.5, FMT-66, FMT-24 rows 11-13).

Hermes' terminal tool returns ``{"error": ..., "status": "blocked"}`` when the approval is denied,
smart-denied or times out, and Hermes derives ``post_tool_call.status = "error"`` from it
(``model_tools.py``). Fed through the bridge's normaliser, the deferred scope plugin and the ATOF,
ATIF and OTLP (``gen_ai``) sinks, the call ends ``blocked``; the approval marks say who decided.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline.demo.otlp_receiver import OTLPReceiver
from hermes_pipeline.hermes.bridge import Bridge
from hermes_pipeline.hermes.normalise import HermesNormaliser
from hermes_pipeline.testing import capture_export

SID = "20261201_221500_aa11bb"
TURN = f"{SID}:task:0c0c0c"
CALL = "call_rm"
REFUSAL = "Command denied: recursive delete."


class Clock:
    def __init__(self) -> None:
        self.now = 1_796_150_832.0

    def __call__(self) -> float:
        return self.now


def tool(**extra: Any) -> dict[str, Any]:
    return {"tool_name": "terminal", "args": {"command": "rm -rf junk"}, "task_id": "task", "session_id": SID,
            "tool_call_id": CALL, "turn_id": TURN, "api_request_id": f"{TURN}:api:1", "middleware_trace": [], **extra}


def approval(surface: str, **extra: Any) -> dict[str, Any]:
    """tools/approval.py: no session_id; turn_id and tool_call_id from the call context."""
    return {"command": "rm -rf junk", "description": "recursive delete", "pattern_key": "recursive delete",
            "pattern_keys": ["recursive delete"], "session_key": SID, "surface": surface, "turn_id": TURN,
            "tool_call_id": CALL, **extra}


def session(surface: str, choice: str, wait: float, extra: dict[str, Any]) -> Any:
    def run(host: Any) -> None:
        clock = Clock()
        bridge = Bridge(host.engine, HermesNormaliser(clock=clock, approval_timeout=60))
        bridge.forward("on_session_start", {"session_id": SID, "model": "m", "platform": "cli"})
        bridge.forward("pre_llm_call", {"session_id": SID, "task_id": "task", "turn_id": TURN, "user_message": "tidy",
                                        "conversation_history": [], "is_first_turn": True, "model": "m",
                                        "platform": "cli", "sender_id": None})
        bridge.forward("pre_tool_call", tool())
        bridge.forward("pre_approval_request", approval(surface))
        clock.now += wait
        bridge.forward("post_approval_response", approval(surface, choice=choice, **extra))
        result = '{"output": "", "exit_code": -1, "error": "' + REFUSAL + '", "status": "blocked"}'
        bridge.forward("post_tool_call", tool(result=result, duration_ms=int(wait * 1000), status="error",
                                              error_type="tool_error", error_message=REFUSAL))
        bridge.forward("on_session_end", {"session_id": SID, "task_id": "task", "turn_id": TURN, "completed": True,
                                          "interrupted": False, "model": "m", "platform": "cli"})
        bridge.forward("on_session_finalize", {"session_id": SID, "platform": "cli", "reason": "shutdown"})
        bridge.close()

    return run


@pytest.mark.parametrize(("surface", "choice", "wait", "extra", "reported", "outcome"), [
    ("cli", "deny", 2.0, {}, "deny", "denied"),
    ("smart", "smart_deny", 0.5, {"decided_by": "aux_llm"}, "smart_deny", "denied"),
    ("cli", "deny", 60.1, {}, "timeout", "timed_out"),  # the CLI prompt's timeout arrives as "deny"
])
def test_refused_tool_call_ends_blocked_in_atof_atif_and_otlp(tmp_path: Path, surface: str, choice: str, wait: float,
                                                             extra: dict[str, Any], reported: str,
                                                             outcome: str) -> None:
    with OTLPReceiver() as receiver:
        config = {"version": 4, "atof": {"enabled": True, "sinks": [{"type": "file", "filename": "events.jsonl"}]},
                  "atif": {"enabled": True},
                  "opentelemetry": {"enabled": True, "endpoints": [{"type": "gen_ai",
                                                                    "endpoint": f"{receiver.endpoint}/v1/traces"}]}}
        capture = capture_export(config, tmp_path, session=session(surface, choice, wait, extra))
        spans = receiver.spans_named("execute_tool")

    lines = capture.jsonl("events.jsonl")
    (end,) = [e for e in lines if e["name"] == "terminal" and e["scope_category"] == "end"]
    assert end["metadata"]["hermes.tool.status"] == "blocked" and end["metadata"]["error.type"] == "blocked"
    assert end["metadata"]["hermes.tool.error_type"] == ("approval_timeout" if outcome == "timed_out"
                                                         else "approval_denied")
    assert end["metadata"]["otel.status_code"] == "ERROR" and end["data"]["error_message"] == REFUSAL
    # refused before it ran: Hermes' exit code -1 says "not run"; no command ran, so none failed
    assert "process.exit.code" not in end["metadata"] and "hermes.tool.command_failed" not in end["metadata"]
    (response,) = [e for e in lines if e["name"] == "hermes.approval.response"]
    assert response["parent_uuid"] == end["uuid"]
    assert response["data"]["choice"] == reported and response["data"]["outcome"] == outcome

    (trajectory,) = capture.documents(".json")
    results = [r for step in trajectory["steps"] for r in (step.get("observation") or {}).get("results", [])]
    assert [r["extra"]["hermes"]["status"] for r in results] == ["blocked"]
    assert not {"exit_code", "command_failed"} & set(results[0]["extra"]["hermes"])

    (span,) = spans
    assert span.attributes.get("error.type") == "blocked" and span.attributes.get("gen_ai.tool.call.id") == CALL
    assert span.attributes.get("hermes.tool.command_failed") is None and span.attributes.get("process.exit.code") is None
