"""Scrub once, where a string enters, and never by a guess (issue #29 item 5; spec 04 FMT-33a, spec 01 OBS-19,
OBS-53, OBS-58, spec 06 BOOK-12, BOOK-15).

The publication thread keeps without a walk what is clean by construction: the ids the engine made
(``made_clean``), the sanitized ``response`` the host made (by identity), an end's name and profile that are its
published start's own objects, and the fields a scope kind built only of constants and strings the scrubber
already left unchanged (``ScopeEvent.clean``). Here:

- a fresh credential planted in every raw-by-contract field (the user message, a tool's arguments and result, the
  final answer, an approval's command, a subagent's goal) and in every host-supplied id and name (the tool's name
  and call id, the session id, the turn id, the model's name, the agent version and the toolset in the metadata)
  reaches no output raw, and each one's redaction marker is in the ATOF lines, the ATIF documents and the
  observability store's rows that carry that field;
- a host-supplied id shaped like an engine id (``turn_`` / ``task_`` / ``call_`` and a credential), and a host
  turn id under which the engine builds its ``api_request_id``, are scanned and redacted: membership is by the
  exact text the engine made, never by a shape.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
from pathlib import Path

import pytest

from hermes_pipeline.components.observability import ObservabilityComponent
from hermes_pipeline.config.observability_settings import ObservabilitySettings
from hermes_pipeline.engine import ids
from hermes_pipeline.engine.core import Engine
from hermes_pipeline.engine.scrub import redaction_marker
from hermes_pipeline.engine.scrub_once import made_clean
from hermes_pipeline.host import Host
from hermes_pipeline.sinks.observability_store import attach_store
from hermes_pipeline.testing import chat_response

FIELDS = ("user_message", "arguments", "result", "final_answer", "approval_command", "subagent_goal", "tool_name",
          "tool_call_id", "session_id", "turn_id", "model", "agent_version", "toolset")


def fresh() -> str:
    """A new OpenAI-style key: a text no earlier test scanned."""
    return f"sk-proj-{secrets.token_hex(20)}"


def sqlite_rows(path: Path) -> str:
    """Every row of every table of a SQLite database, as text."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = [t for (t,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return "\n".join(repr(row) for table in tables for row in conn.execute(f'SELECT * FROM "{table}"'))
    finally:
        conn.close()


def run(tmp_path: Path, planted: dict[str, str], turn_shape: str = "turn_{s}") -> dict[str, str]:
    """One session through ATOF + ATIF and the observability store on the exporters' projection; every output
    as text, by kind (``atof``, ``atif``, ``store``), plus ``raw``: every byte the run wrote."""
    out = tmp_path / "out"
    engine = Engine()
    config = {"version": 4,
              "atof": {"enabled": True, "sinks": [{"type": "file", "output_directory": str(out),
                                                   "filename": "events.jsonl", "mode": "overwrite"}]},
              "atif": {"enabled": True, "output_directory": str(out / "atif"),
                       "filename_template": "atif-{session_id}.json"}}
    name = engine.add_plugin(ObservabilityComponent, config=config)
    record = engine.plugins.get(name)
    assert record is not None and isinstance(record.instance, ObservabilityComponent)
    component = record.instance
    assert component.exporters is not None
    store = attach_store(engine, tmp_path / "home", ObservabilitySettings(audit_enabled=True),
                         stream=component.exporters.scope_plugin)
    tool = f"read_{planted['tool_name']}"
    host = Host(engine, platform="cli", model=f"model {planted['model']}", provider="test",
                base_url="http://127.0.0.1/v1", agent_version=f"1.0 {planted['agent_version']}",
                toolsets={tool: f"files {planted['toolset']}"})
    call_id = f"call_{planted['tool_call_id']}"
    response = chat_response("", [{"id": call_id, "type": "function",
                                   "function": {"name": tool, "arguments": json.dumps({"path": "notes.txt"})}}])
    with host.session(f"sess {planted['session_id']}") as session:
        with session.turn(f"read my notes, key {planted['user_message']}",
                          turn_id=turn_shape.format(s=planted["turn_id"])) as turn:
            turn.call_llm({"model": "m", "messages": [{"role": "user", "content": "read"}]}, lambda request: response)
            turn.call_tool(tool, {"path": "notes.txt", "key": planted["arguments"]},
                           lambda **kw: f"OPENAI_API_KEY={planted['result']}", tool_call_id=call_id)
            with turn.approval(f"deploy --token {planted['approval_command']}") as approval:
                approval.resolve("once")
            with turn.subagent(role="helper", goal=f"check {planted['subagent_goal']}") as child:
                child.finish(summary="checked")
            turn.complete(f"done; the key is {planted['final_answer']}")
    component.flush(30.0)
    store.flush(30.0)
    store.close()
    engine.remove_plugin(name)
    texts = {"atof": (out / "events.jsonl").read_text(encoding="utf-8"),
             "atif": "\n".join(path.read_text(encoding="utf-8") for path in sorted((out / "atif").glob("*.json"))),
             "store": "\n".join(sqlite_rows(path) for path in sorted((tmp_path / "home").rglob("*.sqlite3"))),
             "raw": b"\n".join(path.read_bytes() for path in sorted(tmp_path.rglob("*"))
                               if path.is_file()).decode("utf-8", "replace")}
    assert texts["store"], "the observability store wrote no database"
    return texts


# Which output renders which field: ATOF every one; an ATIF document the conversation, the tool steps (their
# arguments are the model's tool call, not the hook's) and the session's agent and model; the store's rows the
# session and turn ids (no message text, no approval text).
EXPECTED = {
    "atof": set(FIELDS),
    "atif": {"user_message", "result", "final_answer", "tool_name", "tool_call_id", "session_id", "turn_id", "model",
             "agent_version", "toolset"},
    "store": {"session_id", "turn_id"},
}


def test_a_credential_in_every_field_is_redacted_in_every_output(tmp_path: Path) -> None:
    """FMT-33a, BOOK-12, BOOK-15: each raw-by-contract field and each host-supplied id or name is scrubbed once on
    the way out, whichever shortcut the publication thread takes for what is known clean: no output holds a raw
    credential, and each credential's marker is where its field is rendered."""
    planted = {field: fresh() for field in FIELDS}
    texts = run(tmp_path, planted)
    leaked = [field for field, secret in planted.items() if secret in texts["raw"]]
    assert not leaked, f"raw credentials of {leaked} reached an output"
    for output, fields in EXPECTED.items():
        missing = [field for field in fields if redaction_marker(planted[field]) not in texts[output]]
        assert not missing, f"{output}: no redaction marker for {missing}"


@pytest.mark.parametrize("shape", ["turn_{s}", "task_{s}", "call_{s}", "{s}", "turn_0123456789abcdef:{s}"])
def test_a_host_id_shaped_like_an_engine_id_is_scanned(tmp_path: Path, shape: str) -> None:
    """OBS-58: a host's turn id that looks like one the engine makes (``turn_`` and a credential) is not in the
    engine's table of the ids it made, so the walk scans it, in every event that carries it; and the
    ``api_request_id`` the engine builds on it is not recorded either (it carries the foreign text), while one
    built on a turn id the engine made is. Membership is by the exact text made, never by a shape."""
    secret = fresh()
    host_id = shape.format(s=secret)
    made = ids.new_turn_id()
    assert made in made_clean and ids.api_request_id(made, 1) in made_clean
    assert host_id not in made_clean and ids.api_request_id(host_id, 1) not in made_clean
    planted = {field: fresh() for field in FIELDS}
    planted["turn_id"] = secret
    texts = run(tmp_path, planted, shape)
    assert secret not in texts["raw"], "a host id shaped like an engine id reached an output raw"
    redacted = shape.format(s=redaction_marker(secret))
    lines = [json.loads(line) for line in texts["atof"].splitlines()]
    carriers = [line for line in lines if line.get("metadata", {}).get("hermes.turn_id") == redacted]
    assert len(carriers) >= 6  # the turn, the LLM call and the tool call starts, each end that repeats it
    assert f"{redacted}:api:1" in texts["atof"]
