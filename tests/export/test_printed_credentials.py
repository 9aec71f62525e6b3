"""A credential a tool call printed, told by the call's arguments (OBS-55, OBS-58, OBS-59; spec 04 FMT-33a).

Hermes' ``terminal`` tool returns only what the command printed (``{"output": "…", "exit_code": 0}``) and
``read_file`` only the file's lines (``{"content": "1|…"}``): when the command prints a credential (``cat
~/.vault-token``, ``echo $DB_PASSWORD``, ``op read …``) or the file is named for one (``api_key.txt``,
``initialAdminPassword``), the output alone is one token nothing in it names. The tool's scope end carries the result
with that token's span replaced by its marker in every output (ATOF here, ATIF), and nothing else of it changed; other
commands and files keep their output; ``redact_credentials = false`` keeps it raw. The next provider request, whose
history holds the result after the call (a chat-completions ``tool`` message, a Responses ``function_call_output``, an
Anthropic ``tool_result``), carries it hidden the same way."""

from __future__ import annotations

import json
import random
import string
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_pipeline import Engine, Host
from hermes_pipeline.components.observability import ObservabilityComponent
from hermes_pipeline.engine.scrub import hide_printed_in_request, redaction_marker
from hermes_pipeline.testing import chat_response

_CALLS = [
    ("terminal", {"command": "cat ~/.vault-token"}, lambda p: json.dumps({"output": p + "\n", "exit_code": 0})),
    ("terminal", {"command": "echo $DB_PASSWORD"}, lambda p: json.dumps({"output": p + "\n", "exit_code": 0,
                                                                           "error": None})),
    ("terminal", {"command": "op read op://vault/db/password"}, lambda p: json.dumps({"output": p, "exit_code": 0})),
    ("read_file", {"path": "/home/bob/.config/app/api_key.txt"},
     lambda p: json.dumps({"content": "1|" + p, "total_lines": 1, "file_size": len(p)})),
    ("read_file", {"path": "/var/jenkins_home/secrets/initialAdminPassword"},
     lambda p: json.dumps({"content": "1|" + p + "\n", "total_lines": 1})),
    ("terminal", {"command": "cat /run/secrets/db_password"}, lambda p: p + "\n"),
]


def _secret(seed: int) -> str:
    r = random.Random(seed)
    while True:
        value = "".join(r.choice(string.ascii_letters + string.digits) for _ in range(r.randint(14, 28)))
        if any(c.isdigit() for c in value) and any(c.isupper() for c in value) and any(c.islower() for c in value):
            return value


def _run(out: Path, tool: str, args: dict[str, Any], result: str, *, redact: bool = True) -> tuple[str, str]:
    """One session: the model calls the tool, then sees its result in the next request; the ATOF file's and the ATIF
    files' text."""
    config: dict[str, Any] = {
        "version": 4, "redact_credentials": redact,
        "atof": {"enabled": True, "sinks": [{"type": "file", "output_directory": str(out), "filename": "e.jsonl"}]},
        "atif": {"enabled": True, "output_directory": str(out / "atif")}}
    engine = Engine()
    name = engine.add_plugin(ObservabilityComponent, config=config)
    host = Host(engine, platform="cli", model="m", provider="openai", base_url="http://127.0.0.1/v1")
    with host.session() as session:
        with session.turn("show me the file") as turn:
            call = {"id": "call_1", "type": "function", "function": {"name": tool, "arguments": json.dumps(args)}}
            history: list[dict[str, Any]] = [{"role": "user", "content": "show me the file"}]
            turn.call_llm({"model": "m", "messages": history}, lambda r: chat_response("", [call]))
            turn.call_tool(tool, args, lambda **kwargs: result, tool_call_id="call_1")
            history += [{"role": "assistant", "content": None, "tool_calls": [call]},
                        {"role": "tool", "tool_call_id": "call_1", "content": result}]
            turn.call_llm({"model": "m", "messages": history}, lambda r: chat_response("It is there."))
            turn.complete("done")
    engine.remove_plugin(name)
    atif = "".join(path.read_text() for path in sorted((out / "atif").glob("*.json")))
    return (out / "e.jsonl").read_text(), atif


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32), call=st.sampled_from(range(len(_CALLS))))
def test_property_obs58_59_the_token_a_call_printed_goes_and_the_rest_of_its_result_stays(
        tmp_path_factory: pytest.TempPathFactory, seed: int, call: int) -> None:
    """OBS-58 / OBS-59: the result the tool scope's end carries is the tool's result with the token replaced by its
    marker (the JSON object's other members, the line number and the line break stay); in ATOF and ATIF alike."""
    tool, args, make = _CALLS[call]
    secret = _secret(seed)
    result = make(secret)
    atof, atif = _run(tmp_path_factory.mktemp("out"), tool, args, result)
    assert secret not in atof and secret not in atif
    ends = [json.loads(line) for line in atof.splitlines()]
    [end] = [e for e in ends if e["category"] == "tool" and e["scope_category"] == "end"]
    assert end["data"]["result"] == result.replace(secret, redaction_marker(secret))
    assert redaction_marker(secret) in atif


@pytest.mark.parametrize(("tool", "args"), [
    ("terminal", {"command": "cat README.md"}), ("terminal", {"command": "echo $HOME"}),
    ("terminal", {"command": "ls -la"}), ("read_file", {"path": "/home/bob/notes.txt"}),
])
def test_obs55_other_commands_and_files_keep_their_output(tmp_path: Path, tool: str, args: dict[str, Any]) -> None:
    """OBS-55: a command that prints no credential, a file not named for one: the output stays as it is."""
    result = json.dumps({"output": "Qv8Lm2Zt9wXk4Rp7\n", "exit_code": 0})
    atof, _ = _run(tmp_path, tool, args, result)
    [end] = [e for e in map(json.loads, atof.splitlines()) if e["category"] == "tool" and e["scope_category"] == "end"]
    assert end["data"]["result"] == result


def test_fmt33a_redact_credentials_false_keeps_a_printed_credential(tmp_path: Path) -> None:
    """FMT-33a: ``redact_credentials = false`` keeps the raw output here too (the one off-switch)."""
    secret = _secret(7)
    atof, _ = _run(tmp_path, "terminal", {"command": "cat ~/.vault-token"},
                   json.dumps({"output": secret, "exit_code": 0}), redact=False)
    assert secret in atof


def _responses(args: dict[str, Any], output: str) -> dict[str, Any]:
    return {"model": "m", "input": [
        {"role": "user", "content": "show it"},
        {"type": "function_call", "call_id": "fc_1", "name": "terminal", "arguments": json.dumps(args)},
        {"type": "function_call_output", "call_id": "fc_1", "output": output}]}


def _anthropic(args: dict[str, Any], output: str) -> dict[str, Any]:
    return {"model": "m", "max_tokens": 100, "messages": [
        {"role": "user", "content": "show it"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "tu_1", "name": "terminal", "input": args}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "tu_1", "content": output}]}]}


@pytest.mark.parametrize("shape", [_responses, _anthropic])
def test_obs58_59_a_printed_credential_in_a_responses_or_anthropic_history_is_hidden(shape: Any) -> None:
    """OBS-58 / OBS-59: the Responses API's ``function_call_output`` and Anthropic's ``tool_result`` are read with
    their call's arguments too; the other items are the same objects."""
    secret = _secret(3)
    output = json.dumps({"output": secret + "\n", "exit_code": 0})
    request = shape({"command": "cat ~/.vault-token"}, output)
    hidden = hide_printed_in_request(request)
    assert secret not in json.dumps(hidden)
    assert json.dumps(hidden) == json.dumps(request).replace(secret, redaction_marker(secret))
    other = shape({"command": "ls"}, output)
    assert hide_printed_in_request(other) is other

