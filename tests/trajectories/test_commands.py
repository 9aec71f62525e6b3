"""The replay and trajectory commands (spec 06 BOOK-31, BOOK-32, BOOK-36, BOOK-37) and their bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from hermes_pipeline.cli.main import main
from hermes_pipeline.demo.model_server import ScriptedModelServer, ScriptStep, ToolCallSpec
from hermes_pipeline.schemas import load_schema

from ._support import no_network, record_reference_run

SCRIPT = [ScriptStep(tool_calls=[ToolCallSpec("read_file", {"path": "notes.txt"})]),
          ScriptStep(content="They say oats.")]


@pytest.fixture
def recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str]:
    """A profile whose store holds one reference-agent run; the model server is stopped."""
    path, _ = record_reference_run(tmp_path, SCRIPT)
    home = path.parent.parent
    (home / "config.yaml").write_text("observability:\n  trajectories:\n    enabled: true\n")
    monkeypatch.setenv("HERMES_HOME", str(home))
    return path, path.name[11:-5]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def listing(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


def test_book_31_32_replay_by_id_offline_is_identical_and_writes_a_new_trajectory(
        recorded: tuple[Path, str], capsys: pytest.CaptureFixture[str]) -> None:
    """BOOK-31 / BOOK-32 / BOOK-33: ``replay <id prefix>`` with networking disabled: verdict ``identical``,
    exit 0, a new store file with ``extra.hermes.replay``."""
    path, tid = recorded
    with no_network() as attempts:
        code, out, err = run(capsys, "replay", tid[:13])
    assert attempts == [] and code == 0 and out.strip().splitlines()[-1] == "identical"
    new = [p for p in path.parent.iterdir() if p != path and p.name != "definitions"]  # the store's sidecar
    assert len(new) == 1 and f"wrote {new[0]}" in err
    assert json.loads(new[0].read_text())["extra"]["hermes"]["replay"]["of"] == tid


def test_book_32_lenient_replay_with_another_system_prompt_reports_the_divergence(
        recorded: tuple[Path, str], capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """BOOK-31 item 5 / BOOK-32: ``--lenient --set system_prompt=...`` serves the recording, records the
    divergence (exit 1, verdict names agent step 1); ``--strict`` stops at the first LLM call, so the new run
    lacks the recorded agent step 2 (the step-aligned verdict); ``--diff json`` for scripts."""
    _, tid = recorded
    code, out, err = run(capsys, "replay", tid, "--lenient", "--set", "system_prompt=Be terse.",
                         "--output", str(tmp_path / "lenient.json"))
    assert code == 1 and "diverged at agent step 1" in out.splitlines()[-1] and "divergence at agent step 1" in err
    assert json.loads((tmp_path / "lenient.json").read_text())["extra"]["hermes"]["replay"] == {
        "of": tid, "live_from_step": None, "mode": "lenient", "diverged_at_step": 1}
    code, out, _ = run(capsys, "replay", tid, "--set", "system_prompt=Be terse.", "--diff", "json",
                       "--output", str(tmp_path / "strict.json"))
    data = json.loads(out)
    assert code == 1 and data["verdict"] == "diverged at step 2" and data["replay"]["mode"] == "strict"
    assert data["replay"]["diverged_at_step"] == 1


def test_book_31_live_from_against_another_model_gives_a_diff(recorded: tuple[Path, str], tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """BOOK-31 item 6 / BOOK-32: ``--live-from 2 --set model=... --set base_url=...`` calls the live model
    from the second LLM call; the diff shows the changed final answer and the verdict ``diverged at step 3``."""
    _, tid = recorded
    with ScriptedModelServer([ScriptStep(content="They say apples.")], model="other-model") as server:
        code, out, _ = run(capsys, "replay", tid, "--live-from", "2", "--set", "model=other-model",
                           "--set", f"base_url={server.base_url}", "--output", str(tmp_path / "live.json"))
        assert server.requests[0]["model"] == "other-model"
    assert code == 1 and out.splitlines()[-1] == "diverged at step 3"
    assert 'final answer: "They say oats." -> "They say apples."' in out and "-They say oats." in out
    assert json.loads((tmp_path / "live.json").read_text())["extra"]["hermes"]["replay"]["live_from_step"] == 2


def test_book_32_trajectory_diff_of_two_files(recorded: tuple[Path, str], tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """BOOK-32: ``trajectory diff A B``: identical files exit 0; a changed observation and answer exit 1
    with the step named."""
    path, _ = recorded
    copy = tmp_path / "b.json"
    doc = json.loads(path.read_text())
    copy.write_text(json.dumps(doc))
    assert run(capsys, "trajectory", "diff", str(path), str(copy))[:2] == (0, "identical\n")
    doc["steps"][1]["observation"]["results"][0]["content"] = "milk"
    doc["extra"]["hermes"]["final_output"] = "They say milk."
    copy.write_text(json.dumps(doc))
    code, out, _ = run(capsys, "trajectory", "diff", str(path), str(copy))
    assert code == 1 and "step 2: observations differ" in out and out.splitlines()[-1] == "diverged at step 2"


def test_book_32_batch_summarises_changed_final_answers(recorded: tuple[Path, str], tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """BOOK-32 ``--batch DIR``: every trajectory of DIR is replayed; the summary says how many final answers
    changed (none for a recorded replay)."""
    path, _ = recorded
    batch = tmp_path / "batch"
    batch.mkdir()
    shutil.copy(path, batch / "one.json")
    shutil.copy(path, batch / "two.json")
    code, out, _ = run(capsys, "replay", "--batch", str(batch), "--output", str(tmp_path / "batch-out"))
    assert code == 0 and out.splitlines()[-1] == "0 of 2 final answers changed"
    assert listing(tmp_path / "batch-out") == ["one.json", "two.json"]


@pytest.mark.parametrize("case", ["missing", "truncated", "not-atif", "summary", "unknown-id", "payload-truncated",
                                  "set-key", "no-payloads", "payload-redacted"])
def test_bad_input_is_a_clear_error_exit_2_and_nothing_written(recorded: tuple[Path, str], tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str], case: str) -> None:
    """BOOK-31 item 2 and the issue's bad-input list: each case names the file, step or key; exit 2;
    nothing is written anywhere."""
    path, tid = recorded
    bad = tmp_path / "bad.json"
    doc: dict[str, Any] = json.loads(path.read_text())
    argv = ["replay", str(bad)]
    expect = str(bad)
    if case == "missing":
        pass
    elif case == "truncated":
        bad.write_text(path.read_text()[:200])
        expect = "not valid JSON"
    elif case == "not-atif":
        bad.write_text(json.dumps({"hello": "world"}))
        expect = "not an ATIF trajectory"
    elif case == "summary":
        doc["extra"]["hermes"]["redaction"] = {"mode": "summary"}
        bad.write_text(json.dumps(doc))
        expect = "summary mode"
    elif case == "unknown-id":
        argv = ["replay", "ffffffff"]
        expect = "no trajectory with id 'ffffffff'"
    elif case == "payload-truncated":
        doc["steps"][2]["extra"]["hermes"]["llm_response"]["assistant_message"]["content"] = "abc...[truncated 9 chars]"
        bad.write_text(json.dumps(doc))
        expect = "step 3: the recorded LLM response was truncated"
    elif case == "set-key":
        argv = ["replay", tid, "--set", "modle=x"]
        expect = "'modle'"
    elif case == "payload-redacted":
        doc["steps"][2]["extra"]["hermes"]["llm_response"] = "<redacted>"
        bad.write_text(json.dumps(doc))
        expect = "step 3: the recorded llm_request / llm_response was redacted"
    elif case == "no-payloads":
        del doc["steps"][1]["extra"]["hermes"]["llm_request"]
        bad.write_text(json.dumps(doc))
        expect = "step 2"
    before = listing(path.parent), listing(tmp_path)
    code, out, err = run(capsys, *argv)
    assert code == 2 and expect in err and "Traceback" not in err
    assert (listing(path.parent), listing(tmp_path)) == before


PLANTED = {
    "credential": ["sk-proj-AbCdEf0123456789AbCdEf0123", "pk-lf-0123456789abcdef", "sk-lf-0123456789abcdef",
                   "ghp_0123456789abcdefghij0123456789abcdef", "xoxb-1234567890-abcdefghij",
                   "AKIAIOSFODNN7EXAMPLE", "Bearer abc123def456ghi789", "Basic dXNlcjpwYXNzd29yZA==",
                   "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
                   "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
                   "https://admin:hunter2secret@db.example.com/x"],
    "email": ["alice.smith@example.org"],
    "phone": ["+1 415 555 0100", "(020) 7946 0958"],
    "home_path": ["/home/alice/projects/x.txt", "/Users/bob/notes.md"],
    "pattern": ["ACME-4242-SECRET"],
}
SECRET_PARTS = ["AbCdEf0123456789", "0123456789abcdef", "ghp_0123", "xoxb-1234", "AKIAIOSFODNN7", "abc123def456",
                "dXNlcjpw", "eyJzdWIi", "MIIEowIB", "hunter2secret", "alice.smith", "415 555", "7946 0958",
                "/home/alice", "/Users/bob", "ACME-4242"]


def test_book_36_redact_masks_every_detector_class_and_stays_valid_atif(recorded: tuple[Path, str],
                                                                        tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """BOOK-36: planted secrets of every detector class, in a message, tool arguments, an observation and the
    LLM payloads, are replaced by ``[REDACTED:<detector>]`` (never echoing the match); the copy validates
    against the ATIF schema and records ``extra.hermes.redaction``; the original is unchanged."""
    path, _ = recorded
    doc = json.loads(path.read_text())
    text = " | ".join(v for values in PLANTED.values() for v in values)
    doc["steps"][0]["message"] = text
    doc["steps"][1]["tool_calls"][0]["arguments"] = {"path": text}
    doc["steps"][1]["observation"]["results"][0]["content"] = text
    doc["steps"][2]["extra"]["hermes"]["llm_request"]["body"]["messages"][-1]["content"] = text
    source = tmp_path / "planted.json"
    source.write_text(json.dumps(doc))
    code, out, _ = run(capsys, "trajectory", "redact", str(source), "--pattern", r"ACME-\d+-SECRET")
    assert code == 0
    target = tmp_path / "planted.redacted.json"
    redacted = json.loads(target.read_text())
    written = target.read_text()
    for part in SECRET_PARTS:
        assert part not in written, part
    for detector in PLANTED:
        assert f"[REDACTED:{detector}]" in redacted["steps"][0]["message"], detector
    jsonschema.Draft202012Validator(load_schema("atif-1.7")).validate(redacted)
    info = redacted["extra"]["hermes"]["redaction"]
    assert info["mode"] == "mask" and info["patterns"] == [r"ACME-\d+-SECRET"] and info["replacements"] >= 16
    assert json.loads(source.read_text()) == doc  # only --in-place changes the original
    assert "2026-" in redacted["steps"][0]["timestamp"]  # structure (timestamps, ids) untouched


def test_book_36_summary_mode_replaces_all_content_and_refuses_replay(recorded: tuple[Path, str], tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """BOOK-36: ``--mode summary`` replaces every content field by ``[SUMMARY chars=N sha256=...]``; the copy
    is valid ATIF and ``replay`` refuses it with exit 2; ``--in-place`` rewrites the original."""
    path, _ = recorded
    out_path = tmp_path / "s.json"
    assert run(capsys, "trajectory", "redact", str(path), "--mode", "summary", "-o", str(out_path))[0] == 0
    doc = json.loads(out_path.read_text())
    assert doc["steps"][0]["message"].startswith("[SUMMARY chars=21 sha256=")
    assert "oats" not in out_path.read_text()
    jsonschema.Draft202012Validator(load_schema("atif-1.7")).validate(doc)
    code, _, err = run(capsys, "replay", str(out_path))
    assert code == 2 and "summary mode" in err
    copy = tmp_path / "c.json"
    shutil.copy(path, copy)
    assert run(capsys, "trajectory", "redact", str(copy), "--in-place")[0] == 0
    assert "redaction" in json.loads(copy.read_text())["extra"]["hermes"]


def test_book_37_prune_command(recorded: tuple[Path, str], capsys: pytest.CaptureFixture[str]) -> None:
    """BOOK-37: ``trajectory prune --older-than`` deletes only old store files; ``--dry-run`` deletes none."""
    path, _ = recorded
    old = path.parent / "2001-02-03-01234567-89ab-7def-8123-456789abcdef.json"
    old.write_text("{}")
    keep = path.parent / "2001-02-03-notes.json"
    keep.write_text("{}")
    code, out, _ = run(capsys, "trajectory", "prune", "--older-than", "30d", "--dry-run")
    assert code == 0 and "would delete 1" in out and old.exists()
    code, out, _ = run(capsys, "trajectory", "prune", "--json")
    assert code == 0 and json.loads(out)["files"] == [str(old)] and not old.exists() and keep.exists() and path.exists()


def test_browsing_list_and_show(recorded: tuple[Path, str], capsys: pytest.CaptureFixture[str]) -> None:
    """Browsing: ``trajectory list --json`` lists the store; ``show --content`` prints the tree and every
    message and tool result."""
    path, tid = recorded
    code, out, _ = run(capsys, "trajectory", "list", "--json", "--since", "7d")
    rows = json.loads(out)["trajectories"]
    assert code == 0 and [r["id"] for r in rows] == [tid] and rows[0]["final_answer"] == "They say oats."
    code, out, _ = run(capsys, "trajectory", "show", tid, "--content")
    assert code == 0 and "tool read_file" in out and "<- call_0001: oats, apples" in out
    assert run(capsys, "trajectory", "show", "nope")[0] == 2


@pytest.mark.parametrize("where", ["step_error_message", "result_error_message", "new_field", "subagent_field"])
def test_book_36_redact_covers_fields_it_does_not_list(recorded: tuple[Path, str], tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str], where: str) -> None:
    """BOOK-36: a credential in a field the redactor names nowhere (a failure's ``error_message`` on a step or a
    tool result, a field a later recording adds) is masked too; its e-mail is masked where the field is a
    message; ids and timestamps stay as they were."""
    path, _ = recorded
    doc = json.loads(path.read_text())
    secret = "ghp_" + "Q7rT2vX9kL4mN8pB3sD6fG1hJ5wZ0yC2aE4uI"
    text = f"push failed with token {secret} for alice.smith@example.org"
    step, result = doc["steps"][1], doc["steps"][1]["observation"]["results"][0]
    if where == "step_error_message":
        step.setdefault("extra", {}).setdefault("hermes", {})["error_message"] = text
    elif where == "result_error_message":
        result.setdefault("extra", {}).setdefault("hermes", {})["error_message"] = text
    elif where == "new_field":
        step.setdefault("extra", {}).setdefault("hermes", {})["diagnostics"] = {"notes": [text]}
    else:
        doc.setdefault("extra", {}).setdefault("hermes", {})["operator_note"] = text
    source = tmp_path / "planted.json"
    source.write_text(json.dumps(doc))
    code, _, _ = run(capsys, "trajectory", "redact", str(source))
    assert code == 0
    written = (tmp_path / "planted.redacted.json").read_text()
    assert secret[4:20] not in written and "[REDACTED:credential]" in written
    if where.endswith("error_message"):
        assert "alice.smith" not in written
    redacted = json.loads(written)
    assert [s["step_id"] for s in redacted["steps"]] == [s["step_id"] for s in doc["steps"]]
    assert [s.get("timestamp") for s in redacted["steps"]] == [s.get("timestamp") for s in doc["steps"]]
