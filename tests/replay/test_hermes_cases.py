"""Harder Hermes runs replayed by Hermes itself (spec 06 BOOK-29, BOOK-31, BOOK-31a, BOOK-32, BOOK-33): large tool
results holding credentials, a memory write, a skill the agent rewrote during the run, the second part of a session
resumed over two processes, and bad input (an id or a step that does not exist, a recording whose kept texts are
gone, a live model the server does not know) with ``--json``. Real ``hermes chat`` runs against the scripted model
server; skipped without ``hermes-agent``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline.demo.model_script import parse_script
from hermes_pipeline.demo.model_server import ScriptedModelServer
from hermes_pipeline.replay import load_trajectory

from ._hermes import HERMES, SKILL_TEXT, Recorded, record, replay, tree_digest
from ._hermes import resumed_run  # noqa: F401 - a fixture (the tests name it)

pytestmark = pytest.mark.skipif(HERMES is None, reason="hermes-agent is not installed")

SECRET = "sk-live-9f8e7d6c5b4a39281706f5e4d3c2b1a0"
NEW_LINE = "Read notes.txt with read_file, then answer in one line."


def _identical(run: Recorded, tmp_path: Path, *extra: str) -> tuple[Any, dict[str, Any]]:
    before, requests = tree_digest(run.home), len(run.server.requests)
    output = tmp_path / "replayed.json"
    done = replay([str(run.path), "--home", str(run.home), "--output", str(output), *extra], tmp_path)
    assert done.returncode == 0 and done.stdout.splitlines()[-1] == "identical", done.stdout + done.stderr
    assert tree_digest(run.home) == before and len(run.server.requests) == requests
    return done, load_trajectory(output)


@pytest.fixture(scope="module")
def secret_run(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A run reading a 40 KB file holding an API key, then passing the key to a command, then answering."""
    base = tmp_path_factory.mktemp("secret")
    (base / "data").mkdir()
    lines = [f"line {i:04d}: " + "lorem ipsum dolor sit amet " * 6 for i in range(240)]
    lines.insert(120, f"OPENAI_API_KEY={SECRET}")
    big = base / "data" / "big.txt"
    big.write_text("\n".join(lines) + "\n", encoding="utf-8")
    recorded = record(base / "r", [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": str(big), "limit": 2000}, "id": "call_big"}]},
        {"tool_calls": [{"name": "terminal", "arguments": {"command": f"echo 'key {SECRET}' | wc -c"},
                         "id": "call_echo"}]},
        "The file holds 240 lines and a key."], "Summarise big.txt")
    yield recorded
    recorded.server.close()


def test_book_29_33_a_large_tool_result_with_a_credential_replays_identical_and_nothing_raw_leaks(
        secret_run: Recorded, tmp_path: Path) -> None:
    """BOOK-29 / BOOK-33: a 40 KB tool result holding an API key, and a command argument holding it, are recorded
    scrubbed (never cut); the replay serves the scrubbed texts where Hermes expects the values and is
    ``identical``; the key appears in none of the replay's outputs."""
    raw = secret_run.path.read_text(encoding="utf-8")
    assert SECRET not in raw
    done, new = _identical(secret_run, tmp_path)
    results = [r.get("content") for s in new["steps"] for r in (s.get("observation") or {}).get("results", [])]
    assert any(isinstance(c, str) and len(c) > 40_000 for c in results), [len(str(c)) for c in results]
    for text in (done.stdout, done.stderr, (tmp_path / "replayed.json").read_text(encoding="utf-8")):
        assert SECRET not in text


@pytest.fixture(scope="module")
def memory_run(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A run writing to the memory, then answering."""
    base = tmp_path_factory.mktemp("memory")
    recorded = record(base, [
        {"tool_calls": [{"name": "memory", "arguments": {"action": "add", "target": "memory",
                                                         "content": "The user drinks tea."}, "id": "call_mem"}]},
        "Noted: you drink tea."], "Remember that I drink tea.")
    yield recorded
    recorded.server.close()


def test_book_31a_33_a_memory_write_is_served_and_replays_identical(memory_run: Recorded, tmp_path: Path) -> None:
    """BOOK-31a / BOOK-33: the memory write is served its recorded result (the profile's memory is not written
    again) and the run replays ``identical``."""
    memory = (memory_run.home / "memories" / "MEMORY.md").read_text(encoding="utf-8")
    assert "tea" in memory
    _identical(memory_run, tmp_path)
    assert (memory_run.home / "memories" / "MEMORY.md").read_text(encoding="utf-8") == memory


@pytest.fixture(scope="module")
def skill_run(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A run that rewrites its skill (LLM call 1), reads it back (call 2), then answers (call 3)."""
    base = tmp_path_factory.mktemp("skill")
    recorded = record(base, [
        {"tool_calls": [{"name": "skill_manage", "arguments": {
            "action": "patch", "name": "notes-helper", "old_string": "Read notes.txt with read_file.",
            "new_string": NEW_LINE}, "id": "call_patch"}]},
        {"tool_calls": [{"name": "skill_view", "arguments": {"name": "notes-helper"}, "id": "call_view"}]},
        "The skill now says to answer in one line."], "Make the notes helper answer in one line.")
    yield recorded
    recorded.server.close()


def test_book_31a_a_skill_rewritten_during_the_run_replays_identical(skill_run: Recorded, tmp_path: Path) -> None:
    """BOOK-31a: the recorded run patched its skill and viewed it; offline, both are served and the replay is
    ``identical``; the profile's skill (patched by the recorded run) is not touched."""
    assert NEW_LINE in (skill_run.home / "skills/notes-helper/SKILL.md").read_text(encoding="utf-8")
    _identical(skill_run, tmp_path)


def _live(steps: list[Any], model: str = "live-model") -> ScriptedModelServer:
    return ScriptedModelServer(parse_script({"steps": steps})[0], model=model)


def test_book_31a_live_from_after_a_skill_rewrite_sees_the_rewritten_skill(skill_run: Recorded,
                                                                           tmp_path: Path) -> None:
    """BOOK-31a: the skill was rewritten at LLM call 1; going live from call 2 with live tools, Hermes' own
    ``skill_view`` reads the skill as the run had made it (the rewritten text), not as it started."""
    with _live([{"tool_calls": [{"name": "skill_view", "arguments": {"name": "notes-helper"}, "id": "live_v"}]},
                "It answers in one line."]) as server:
        done = replay([str(skill_run.path), "--home", str(skill_run.home), "--output", str(tmp_path / "n.json"),
                       "--live-from", "2", "--set", f"base_url={server.base_url}", "--json"], tmp_path,
                      network=True)
        requests = server.requests
    assert "Traceback" not in done.stderr, done.stderr
    json.loads(done.stdout)
    viewed = [m["content"] for m in requests[-1]["messages"] if m["role"] == "tool"][-1]
    assert NEW_LINE in viewed, viewed




def test_book_31a_the_second_part_of_a_resumed_session_goes_live_from_step_2(resumed_run: Recorded,
                                                                              tmp_path: Path) -> None:
    """BOOK-31 step 6 / BOOK-31a: the second process's turn, live from its LLM call 2: call 1 is served, call 2
    reaches the live model with the whole session (the first turn, the read and its result) as its history."""
    with _live(["Milk."]) as server:
        done = replay([str(resumed_run.path), "--home", str(resumed_run.home), "--output", str(tmp_path / "n.json"),
                       "--live-from", "2", "--set", f"base_url={server.base_url}", "--json"], tmp_path,
                      network=True)
        requests = server.requests
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stdout + done.stderr
    diff = json.loads(done.stdout)
    assert len(requests) == 1
    roles = [m["role"] for m in requests[0]["messages"]]
    assert roles == ["system", "user", "assistant", "user", "assistant", "tool"], roles
    assert diff["final_answer"]["new"] == "Milk." and diff["replay"]["live_from_step"] == 2


@pytest.mark.parametrize(("args", "needle"), [
    (["01ffffff-dead"], "01ffffff-dead"),
    (["--live-from", "9", "--set", "base_url=http://127.0.0.1:9/v1"], "--live-from 9"),
])
def test_book_31_bad_input_is_a_one_line_error_and_json_stays_json(resumed_run: Recorded, tmp_path: Path,
                                                                    args: list[str], needle: str) -> None:
    """BOOK-31 / BOOK-32: an id that does not exist, a step past the recording: exit 2, a line naming it, and
    with ``--json`` a JSON object on stdout saying the error; nothing written."""
    target = [] if args[0].startswith("01") else [str(resumed_run.path)]
    done = replay([*target, *args, "--home", str(resumed_run.home), "--output", str(tmp_path / "n.json"),
                   "--json"], tmp_path)
    assert done.returncode == 2 and needle in done.stderr and "Traceback" not in done.stderr, done.stderr
    data = json.loads(done.stdout)
    assert needle in data["error"]
    assert not (tmp_path / "n.json").exists()


def test_book_31a_a_live_model_the_server_does_not_know_is_named(resumed_run: Recorded, tmp_path: Path) -> None:
    """BOOK-31a / BOOK-32: going live with a model the endpoint does not know (it answers 404): the replay says
    the live step failed and names the provider's error, exit 1, and ``--json`` is one valid JSON document."""
    with _live([{"error_status": 404, "error_message": "The model 'nope' does not exist"}] * 4) as server:
        done = replay([str(resumed_run.path), "--home", str(resumed_run.home), "--output", str(tmp_path / "n.json"),
                       "--live-from", "1", "--set", f"base_url={server.base_url}", "--set", "model=nope",
                       "--json"], tmp_path, network=True)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stdout + done.stderr
    data = json.loads(done.stdout)
    assert "model_unavailable" in done.stderr and "The model 'nope' does not exist" in done.stderr, done.stderr
    assert data["identical"] is False and "The model 'nope' does not exist" in data["error"]
