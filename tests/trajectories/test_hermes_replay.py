"""Real Hermes Agent runs through the bridge, recorded by the trajectory store alone (no pipeline file), and
replayed offline by Hermes itself (spec 06 BOOK-28, BOOK-29, BOOK-31, BOOK-31a, BOOK-32, BOOK-33) or by the
reference agent on request. Skipped without ``hermes-agent`` (``pip install '.[hermes]'``).

Each recording runs ``hermes chat -Q -q`` in a Hermes home under ``tmp_path`` against the scripted model
server on 127.0.0.1; each replay runs Hermes again in the replay's own temporary home, inside a network
namespace without any network where the machine allows one (``unshare -rn``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline.cli.main import main
from hermes_pipeline.export.definitions import DEFINITIONS_KEY, resolve_request
from hermes_pipeline.replay.recording import load_trajectory

from ..replay._hermes import HERMES, SOUL_END, Recorded, record, replay, tree_digest
from ..replay._hermes import resumed_run  # noqa: F401 - a fixture (the tests name it)
from ._support import no_network

pytestmark = pytest.mark.skipif(HERMES is None, reason="hermes-agent is not installed")
OLD_CAP = 8_000
"""The sanitizer's string cap that used to cut Hermes' system prompt in recordings."""


@pytest.fixture(scope="module")
def tools_run(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A run with a read, a failed read (a missing file) and a write, then the answer."""
    base = tmp_path_factory.mktemp("tools")
    work = base / "work"
    recorded = record(base, [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": str(work / "notes.txt")}, "id": "call_read"}]},
        {"tool_calls": [{"name": "read_file", "arguments": {"path": str(work / "missing.txt")}, "id": "call_miss"}]},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": str(work / "out.txt"), "content": "milk"},
                         "id": "call_write"}]},
        "Your notes say: buy milk. I saved that to out.txt.",
    ], "What do my notes say? Save them to out.txt.")
    yield recorded
    recorded.server.close()


@pytest.fixture(scope="module")
def delegate_run(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A run whose first call delegates to a subagent (Hermes runs it in the background)."""
    recorded = record(tmp_path_factory.mktemp("delegate"), [
        {"tool_calls": [{"name": "delegate_task", "arguments": {"goal": "count the files"}, "id": "call_delegate"}]},
        "done", "done", "done"], "count my files with a helper")
    yield recorded
    recorded.server.close()




def _request(doc: dict[str, Any], step: dict[str, Any]) -> Any:
    """A step's recorded request as it was sent (tool lists and system prompts are stored once and referenced by
    hash: ``extra.hermes.definitions``, which :func:`load_trajectory` fills from the store's sidecar)."""
    definitions = ((doc.get("extra") or {}).get("hermes") or {}).get(DEFINITIONS_KEY)
    return resolve_request(step["extra"]["hermes"]["llm_request"], definitions)


def _agent_messages(doc: dict[str, Any]) -> list[Any]:
    return [s.get("message") for s in doc["steps"] if s.get("source") == "agent"]


def test_book_29_31a_the_recording_keeps_hermes_full_system_prompt(tools_run: Recorded) -> None:
    """BOOK-29 / BOOK-31a: every recorded request holds the whole system prompt Hermes sent (longer than the
    sanitizer's old 8,000-character cap, its end included), not a cut copy."""
    doc = load_trajectory(tools_run.path)
    requests = [_request(doc, s) for s in doc["steps"] if s.get("source") == "agent"]
    assert len(requests) == 4
    for request in requests:
        system = request["body"]["messages"][0]
        assert system["role"] == "system" and len(system["content"]) > OLD_CAP
        assert SOUL_END in system["content"] and "...[truncated" not in system["content"]


def test_book_31a_33_hermes_replays_its_run_identically_without_side_effects(tools_run: Recorded,
                                                                              tmp_path: Path) -> None:
    """BOOK-31a: ``--agent hermes`` runs Hermes' own loop on the recording; BOOK-31 / BOOK-32: an unchanged run
    (a read, a failed read, a write) is ``identical``, exit 0; BOOK-33: no network (a network namespace, and the
    recorded model server gets no request), no tool side effect (the written file is not written again), and the
    recorded profile is left exactly as it was."""
    (tools_run.work / "out.txt").unlink()  # written by the recorded run; a replay must not write it again
    before, requests = tree_digest(tools_run.home), len(tools_run.server.requests)
    output = tmp_path / "replayed.json"
    done = replay([str(tools_run.path), "--agent", "hermes", "--home", str(tools_run.home), "--output", str(output)],
                   tmp_path)
    assert done.returncode == 0 and done.stdout.splitlines()[-1] == "identical", done.stdout + done.stderr
    assert not (tools_run.work / "out.txt").exists()
    assert tree_digest(tools_run.home) == before and len(tools_run.server.requests) == requests
    new = json.loads(output.read_text(encoding="utf-8"))
    assert new["agent"]["name"] == "hermes" and new["extra"]["hermes"]["replay"]["agent"] == "hermes"
    assert new["extra"]["hermes"]["replay"]["diverged_at_step"] is None
    old = load_trajectory(tools_run.path)
    assert _agent_messages(new) == _agent_messages(old)
    # Hermes built its request again: the system prompt of the new run is as long as the recorded one
    system = _request(new, new["steps"][1])["body"]["messages"][0]["content"]
    assert SOUL_END in system and len(system) > OLD_CAP
    assert list(tmp_path.iterdir()) == [output]  # the replay's temporary home is gone


def test_book_31a_a_delegation_does_not_diverge(delegate_run: Recorded, tmp_path: Path) -> None:
    """BOOK-31a: a run recorded from Hermes is replayed by Hermes by default; its ``delegate_task`` call is
    served the recorded result (the subagent is not started again), so it does not diverge."""
    doc = load_trajectory(delegate_run.path)
    assert doc.get("subagent_trajectories"), "the recording has the subagent"
    before = tree_digest(delegate_run.home)
    done = replay([str(delegate_run.path), "--home", str(delegate_run.home), "--output", str(tmp_path / "n.json")],
                   tmp_path)
    assert done.returncode == 0 and done.stdout.splitlines()[-1] == "identical", done.stdout + done.stderr
    assert "not available" not in done.stdout + done.stderr
    assert tree_digest(delegate_run.home) == before
    new = json.loads((tmp_path / "n.json").read_text(encoding="utf-8"))
    assert not new.get("subagent_trajectories")  # served, not run again


def test_book_31_the_reference_agent_still_replays_a_hermes_recording(tools_run: Recorded, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """BOOK-31: ``--agent reference`` keeps replaying a Hermes recording with the reference agent, offline
    (every socket connection refused in this process)."""
    with no_network() as attempts:
        code = main(["replay", str(tools_run.path), "--agent", "reference", "--home", str(tools_run.home),
                     "--output", str(tmp_path / "replayed.json")])
    out = capsys.readouterr().out
    assert attempts == [] and code == 0 and out.splitlines()[-1] == "identical", out


def test_book_31a_without_hermes_the_error_says_how_to_install_it(tools_run: Recorded, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """BOOK-31a: when ``hermes-agent`` cannot be imported, replaying a Hermes run (by default or with
    ``--agent hermes``) is a one-line error with the install command, exit 2, and nothing is written."""
    monkeypatch.setitem(sys.modules, "hermes_cli.main", None)  # an import of it now fails
    for extra in ([], ["--agent", "hermes"]):
        code = main(["replay", str(tools_run.path), *extra, "--home", str(tools_run.home),
                     "--output", str(tmp_path / "never.json")])
        err = capsys.readouterr().err
        assert code == 2 and "hermes-agent" in err and "pip install" in err and "Traceback" not in err, err
    assert not (tmp_path / "never.json").exists()


def test_book_31_31a_a_later_turn_of_a_session_replays_with_its_history(resumed_run: Recorded,
                                                                       tmp_path: Path) -> None:
    """BOOK-31 step 3: the conversation before the turn (from the first recorded request) is given to Hermes as
    the session it resumes, so the second turn of a multi-turn session replays ``identical``."""
    doc = load_trajectory(resumed_run.path)
    history = _request(doc, doc["steps"][1])["body"]["messages"]
    assert [m["role"] for m in history] == ["system", "user", "assistant", "user"]
    before = tree_digest(resumed_run.home)
    done = replay([str(resumed_run.path), "--home", str(resumed_run.home), "--output", str(tmp_path / "n.json")],
                   tmp_path)
    assert done.returncode == 0 and done.stdout.splitlines()[-1] == "identical", done.stdout + done.stderr
    assert tree_digest(resumed_run.home) == before
