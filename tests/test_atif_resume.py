"""A Hermes session resumed in a later process extends its one ATIF file (issue #27; FMT-42, FMT-52)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hermes_pipeline.sinks.atif.resume import INDEX_DIR, SessionFiles, merge_session


def _doc(tid: str, session: str, messages: list[str], **hermes: Any) -> dict[str, Any]:
    steps = [{"step_id": i, "source": "user", "message": m, "timestamp": "2026-12-03T10:00:00Z",
              "metrics": {"prompt_tokens": 1}} for i, m in enumerate(messages, start=1)]
    return {"schema_version": "ATIF-v1.7", "session_id": tid, "trajectory_id": tid,
            "agent": {"name": "hermes", "version": "1", "model_name": "m"}, "steps": steps,
            "extra": {"hermes": {"session_id": session, "trajectory_date": hermes.pop("date", "2026-12-03"),
                                 "content": "full", "llm_payloads": True, **hermes}}}


def test_merge_keeps_identity_and_renumbers() -> None:
    base = _doc("a" * 8, "s1", ["one", "two"], task_ids=["t1"], context={"model": "m"})
    new = _doc("b" * 8, "s1", ["three"], task_ids=["t2"], date="2026-12-04", final_output="done")
    merged = merge_session(base, new)
    assert merged["trajectory_id"] == merged["session_id"] == "a" * 8
    assert [s["message"] for s in merged["steps"]] == ["one", "two", "three"]
    assert [s["step_id"] for s in merged["steps"]] == [1, 2, 3]
    hermes = merged["extra"]["hermes"]
    assert hermes["trajectory_date"] == "2026-12-03" and hermes["task_ids"] == ["t1", "t2"]
    assert hermes["final_output"] == "done" and hermes["context"] == {"model": "m"}
    assert merged["final_metrics"] == {"total_prompt_tokens": 3, "total_steps": 3}
    assert base["steps"][0]["step_id"] == 1 and len(base["steps"]) == 2  # inputs untouched


def test_session_files_merge_across_instances(tmp_path: Path) -> None:
    first = SessionFiles(tmp_path)
    name, content = first.prepare("hermes-atif-a.json", _doc("a", "s1", ["one"]), b"x")
    assert name == "hermes-atif-a.json" and content == b"x"
    (tmp_path / name).write_bytes(json.dumps(_doc("a", "s1", ["one"])).encode())
    later = SessionFiles(tmp_path)  # another process
    name, content = later.prepare("hermes-atif-b.json", _doc("b", "s1", ["two"]), b"y")
    assert name == "hermes-atif-a.json" and later.merged == 1
    assert [s["message"] for s in json.loads(content)["steps"]] == ["one", "two"]
    again = later.prepare("hermes-atif-b.json", _doc("b", "s1", ["two", "three"]), b"z")[1]  # a rewrite: no doubles
    assert [s["message"] for s in json.loads(again)["steps"]] == ["one", "two", "three"]
    other = later.prepare("hermes-atif-c.json", _doc("c", "s2", ["x"]), b"w")
    assert other == ("hermes-atif-c.json", b"w")
    assert len(list((tmp_path / INDEX_DIR).iterdir())) == 2


def test_segments_and_pruned_files_are_not_merged(tmp_path: Path) -> None:
    files = SessionFiles(tmp_path)
    files.prepare("a.json", _doc("a", "s1", ["one"]), b"x")
    segment = _doc("b", "s1", ["two"], segment=2, previous_trajectory_id="a")
    assert SessionFiles(tmp_path).prepare("b.json", segment, b"y") == ("b.json", b"y")
    # the indexed file was pruned: the later part starts the file anew, silently
    assert SessionFiles(tmp_path).prepare("c.json", _doc("c", "s1", ["three"]), b"z") == ("c.json", b"z")
