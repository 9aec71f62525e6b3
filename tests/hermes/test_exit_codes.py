"""The bridge reads a command's exit code from Hermes' tool results; provider failures type a failed turn.

Issue #27 deliverable 3 (FMT-66): parsers take any text without raising, and the turn's ``error.type``
is the provider attempt's type when the provider failed it.
"""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from hermes_pipeline.export.classify import child_error_type, command_timed_out, exit_code_failed, turn_error_type
from hermes_pipeline.hermes.normalise import HermesNormaliser
from hermes_pipeline.hermes.payloads import exit_code


def test_terminal_result_shapes() -> None:
    assert exit_code(json.dumps({"output": "x", "exit_code": 3, "error": None})) == 3
    assert exit_code(json.dumps({"output": "", "exit_code": 0})) == 0
    assert exit_code(json.dumps({"output": "", "exit_code": -1, "error": "Failed to execute"})) == -1
    assert exit_code(json.dumps({"exit_code": "3"})) is None
    assert exit_code(json.dumps({"exit_code": True})) is None
    assert exit_code('[{"exit_code": 1}]') is None
    assert exit_code('the "exit_code" was 3') is None
    assert exit_code(None) is None


def test_a_command_stopped_at_its_time_limit() -> None:
    """Hermes' ``terminal`` ends a command at its limit with 124 and says so; ``execute_code`` kills the script
    (a signal's negative code) and says ``status: timeout``; any other failure or a success is no timeout."""
    terminal = json.dumps({"output": "partial\n[Command timed out after 1s]", "exit_code": 124, "error": None})
    assert command_timed_out(124, terminal) and command_timed_out(124, None)
    script = json.dumps({"status": "timeout", "output": "⏰ Script timed out after 5s and was killed.",
                         "exit_code": -9, "error": "Script timed out after 5s and was killed."})
    assert command_timed_out(-9, script)
    assert not command_timed_out(-9, json.dumps({"status": "error", "exit_code": -9}))
    assert not command_timed_out(1, json.dumps({"output": '"status": "timeout"', "exit_code": 1}))
    assert not command_timed_out(0, script) and not command_timed_out(None, terminal)
    assert not command_timed_out(2, "not json \"status\": \"timeout\"")


@given(st.one_of(st.none(), st.integers(min_value=-300, max_value=300)), st.text(max_size=60))
def test_any_result_is_judged_without_raising(code: int | None, text: str) -> None:
    assert command_timed_out(code, text) is (code == 124 or (code is not None and code != 0 and _says_timeout(text)))


def _says_timeout(text: str) -> bool:
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return isinstance(value, dict) and value.get("status") == "timeout"


@given(st.text())
def test_any_text_is_read_without_raising(text: str) -> None:
    code = exit_code(text)
    assert code is None or type(code) is int


@given(st.integers(min_value=-(2**31), max_value=2**31), st.text(max_size=40))
def test_the_integer_is_found_whatever_the_output(code: int, output: str) -> None:
    assert exit_code(json.dumps({"output": output, "exit_code": code, "error": None})) == code
    assert exit_code_failed(code) is (code != 0)


def test_normaliser_adds_exit_code_and_keeps_hermes_status() -> None:
    norm = HermesNormaliser()
    payload = {"session_id": "s", "tool_name": "terminal", "tool_call_id": "c", "status": "ok",
               "result": json.dumps({"output": "nope", "exit_code": 3, "error": None})}
    ((hook, event),) = norm.adapt("post_tool_call", payload)
    assert hook == "post_tool_call" and event["exit_code"] == 3 and event["status"] == "ok"
    ((_, other),) = norm.adapt("post_tool_call", {"session_id": "s", "tool_name": "read_file", "tool_call_id": "d",
                                                  "status": "ok", "result": "buy milk"})
    assert "exit_code" not in other


def test_turn_failed_by_the_provider_carries_its_type() -> None:
    assert turn_error_type(False, True, "api_error", None, "rate_limited") == "rate_limited"
    assert turn_error_type(False, True, "api_error", None, None) == "_OTHER"
    assert turn_error_type(True, True, "interrupted", None, "rate_limited") == "cancelled"
    assert turn_error_type(False, False, "completed", None, "rate_limited") is None
    assert child_error_type("failed", "upstream_error") == "upstream_error"
    assert child_error_type("completed", "upstream_error") is None
