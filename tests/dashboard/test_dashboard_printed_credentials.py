"""The session page shows a credential a tool call printed as its marker (OBS-55, OBS-59; spec 06 BOOK-39).

Hermes' ``state.db`` keeps each tool result as the tool printed it: ``cat ~/.vault-token``'s result is the token
alone. The page reads each ``tool`` message with its call's arguments (the assistant message holding the call, on the
page or an earlier one): the token becomes its marker, the rest of the message and every other message stay."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_pipeline.dashboard import queries
from hermes_pipeline.dashboard.sources import Sources
from hermes_pipeline.engine.scrub import redaction_marker

pytest.importorskip("hermes_state", reason="hermes-agent 0.19 is not installed (pip install '.[hermes]'): the "
                                           "fixture's state.db is written by Hermes' own SessionDB")

TOKEN = "Qv8Lm2Zt9wXk4Rp7Hs3N"
SESSION = "20261207_120000_abcdef"


def _state(home: Path, filler: int) -> None:
    from hermes_state import SessionDB

    db = SessionDB(home / "state.db")
    try:
        db.create_session(SESSION, "cli", model="m")
        db.append_message(SESSION, "user", "Show me my vault token")
        db.append_message(SESSION, "assistant", None, tool_calls=[{
            "id": "call_1", "type": "function",
            "function": {"name": "terminal", "arguments": json.dumps({"command": "cat ~/.vault-token"})}}])
        for k in range(filler):  # the tool result lands on a later page than its call
            db.append_message(SESSION, "assistant", f"thinking {k}")
        db.append_message(SESSION, "tool", json.dumps({"output": TOKEN + "\n", "exit_code": 0}),
                          tool_name="terminal", tool_call_id="call_1")
        db.append_message(SESSION, "tool", json.dumps({"output": "plain output", "exit_code": 0}),
                          tool_name="terminal", tool_call_id="call_9")
    finally:
        db.close()


@pytest.mark.parametrize("filler", [0, queries.MESSAGES_PER_PAGE])
def test_book39_a_printed_credential_is_its_marker_on_the_session_page(tmp_path: Path, filler: int) -> None:
    _state(tmp_path, filler)
    sources = Sources(home=tmp_path, state_db=tmp_path / "state.db", store_db=tmp_path / "none.sqlite3",
                      trajectories=tmp_path / "t", skills=tmp_path / "s", memory_dirs=())
    page = 1 if filler == 0 else 2
    found = queries.session(sources, SESSION, page)
    assert found is not None and found["messages"]
    text = json.dumps(found)
    assert TOKEN not in text and redaction_marker(TOKEN) in text
    tools = [m for m in found["messages"] if m["role"] == "tool"]
    assert json.loads(tools[0]["content"]) == {"output": redaction_marker(TOKEN) + "\n", "exit_code": 0}
    assert json.loads(tools[1]["content"]) == {"output": "plain output", "exit_code": 0}
