"""What-if with Hermes (spec 06 BOOK-31a, BOOK-32, BOOK-33): ``--live-from N`` serves the LLM calls before N and
lets Hermes call a live model from N on (the scripted model server here), with ``--set model / system_prompt /
temperature``; the live steps' tools run in the replay's workspace (``--tools live``) or are served the recorded
result (``--tools recorded``); the diff names the step, the tool calls and arguments, the final answer and the
tokens. Real ``hermes chat`` runs; skipped without ``hermes-agent``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline.demo.model_script import parse_script
from hermes_pipeline.demo.model_server import ScriptedModelServer

from ._hermes import HERMES, Recorded, record, replay, tree_digest

pytestmark = pytest.mark.skipif(HERMES is None, reason="hermes-agent is not installed")
RECORDED_ANSWER = "Your notes say: buy milk."


@pytest.fixture(scope="module")
def notes_run(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A run reading the notes (LLM call 1), then answering (LLM call 2)."""
    base = tmp_path_factory.mktemp("whatif")
    recorded = record(base, [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": str(base / "work" / "notes.txt")},
                         "id": "call_read"}]},
        RECORDED_ANSWER], "What do my notes say?")
    yield recorded
    recorded.server.close()


def _live(steps: list[Any]) -> ScriptedModelServer:
    return ScriptedModelServer(parse_script({"steps": steps})[0], model="live-model-2")


def _whatif(run: Recorded, tmp_path: Path, server: ScriptedModelServer, *args: str) -> tuple[Any, dict[str, Any]]:
    done = replay([str(run.path), "--home", str(run.home), "--output", str(tmp_path / "n.json"),
                   "--set", f"base_url={server.base_url}", "--diff", "json", *args], tmp_path, network=True)
    assert "Traceback" not in done.stderr, done.stderr
    return done, json.loads(done.stdout)


def test_book_31a_32_live_from_2_calls_the_new_model_with_the_new_settings_and_the_diff_names_the_change(
        notes_run: Recorded, tmp_path: Path) -> None:
    """BOOK-31a: with ``--live-from 2`` the first call is served and the second goes to the live model, with the
    recorded history, the ``--set`` model, temperature and system prompt; BOOK-32: the diff says the agent's
    message of that step and the final answer changed (exit 1); the recorded model server gets nothing."""
    recorded_requests = len(notes_run.server.requests)
    with _live(["Milk, and also eggs."]) as server:
        done, diff = _whatif(notes_run, tmp_path, server, "--live-from", "2", "--set", "model=live-model-2",
                             "--set", "temperature=0.25", "--set", "system_prompt=You answer in French.")
        requests = server.requests
    assert done.returncode == 1, done.stdout + done.stderr
    assert len(requests) == 1 and len(notes_run.server.requests) == recorded_requests
    live = requests[0]
    assert live["model"] == "live-model-2" and live["temperature"] == 0.25
    assert live["messages"][0] == {"role": "system", "content": "You answer in French."}
    assert [m["role"] for m in live["messages"]] == ["system", "user", "assistant", "tool"]
    assert "buy milk" in live["messages"][-1]["content"]  # the served tool result of step 1 is in the history
    assert diff["final_answer"] == {"old": RECORDED_ANSWER, "new": "Milk, and also eggs.", "changed": True}
    (step,) = diff["steps"]
    assert step["fields"] == ["message"] and step["new"]["message"] == "Milk, and also eggs."
    assert diff["replay"]["live_from_step"] == 2 and diff["replay"]["agent"] == "hermes"
    assert diff["replay"]["settings"] == ["base_url", "model", "system_prompt", "temperature"]


def test_book_31a_33_live_tools_run_only_in_the_replay_workspace(notes_run: Recorded, tmp_path: Path) -> None:
    """BOOK-31a / BOOK-33: ``--tools live`` (the default) runs a live step's tool for real, in the replay's
    temporary workspace (a relative path is written there and goes with it); a path outside the workspace is
    refused, never written; the diff names the new tool calls and their arguments."""
    outside = tmp_path / "outside.txt"
    before = tree_digest(notes_run.work)
    with _live([{"tool_calls": [{"name": "write_file", "arguments": {"path": "draft.txt", "content": "eggs"},
                                 "id": "call_w1"}]},
                {"tool_calls": [{"name": "write_file", "arguments": {"path": str(outside), "content": "x"},
                                 "id": "call_w2"}]},
                "Saved a draft."]) as server:
        done, diff = _whatif(notes_run, tmp_path, server, "--live-from", "1")
        requests = server.requests
    assert done.returncode == 1, done.stdout + done.stderr
    assert not outside.exists() and tree_digest(notes_run.work) == before
    results = [m["content"] for m in requests[-1]["messages"] if m["role"] == "tool"]
    assert '"bytes_written"' in results[0] or "success" in results[0].lower(), results  # it ran for real
    assert "only inside the replay's workspace" in results[1], results
    first = diff["steps"][0] if diff["steps"][0]["fields"] != ["message"] else diff["steps"][1]
    assert "tool_calls" in first["fields"]
    assert first["new"]["tool_calls"][0][0] == "write_file" and "draft.txt" in first["new"]["tool_calls"][0][1]
    assert diff["final_answer"]["new"].startswith("Saved a draft.")  # Hermes notes the refused write after it


def test_book_31a_recorded_tools_serve_the_same_call_so_only_the_model_changes(notes_run: Recorded,
                                                                                 tmp_path: Path) -> None:
    """BOOK-31a: ``--tools recorded`` serves a live step's tool call the recorded result of the same call (by
    name and arguments: the live model's call ids are new), without running the tool (the notes file is gone,
    and the model still gets the recorded text); a call the recording never made gets an error result."""
    notes = notes_run.work / "notes.txt"
    kept = notes.read_text(encoding="utf-8")
    notes.unlink()
    try:
        with _live([{"tool_calls": [{"name": "read_file", "arguments": {"path": str(notes)}, "id": "live_1"}]},
                    {"tool_calls": [{"name": "read_file", "arguments": {"path": "other.txt"}, "id": "live_2"}]},
                    RECORDED_ANSWER]) as server:
            done, diff = _whatif(notes_run, tmp_path, server, "--live-from", "1", "--tools", "recorded")
            requests = server.requests
    finally:
        notes.write_text(kept, encoding="utf-8")
    results = [m["content"] for m in requests[-1]["messages"] if m["role"] == "tool"]
    assert "buy milk" in results[0] and "no recorded result" in results[1], results
    assert diff["final_answer"]["changed"] is False
    assert done.returncode == 1  # one more tool step than recorded
