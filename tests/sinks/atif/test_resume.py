"""A Hermes session resumed in a later process extends its one ATIF file (issue #27; FMT-42, FMT-52)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hermes_pipeline.sinks.atif.filenames import FilenameTemplate
from hermes_pipeline.sinks.atif.resume import SessionFiles, merge_session


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


A, B, C, Z = (f"0{n}a23b56-15c8-75c9-81cb-8190ce3fa1f8" for n in range(4))


def _write(directory: Path, name: str, doc: dict[str, Any]) -> None:
    (directory / name).write_text(json.dumps(doc), encoding="utf-8")


def test_session_files_merge_across_instances(tmp_path: Path) -> None:
    template = FilenameTemplate.parse("hermes-atif-{session_id}.json")
    _write(tmp_path, f"hermes-atif-{A}.json", _doc(A, "s1", ["one"]))
    _write(tmp_path, f"hermes-atif-{Z}.json", _doc(Z, "s9", ["other"]))
    (tmp_path / "notes.json").write_text("{not json", encoding="utf-8")  # not the template's: never read
    later = SessionFiles(tmp_path, template)  # another process
    name, content = later.prepare(f"hermes-atif-{B}.json", _doc(B, "s1", ["two"], resumed=True), b"y")
    assert name == f"hermes-atif-{A}.json" and later.merged == 1 and later.unreadable == 0
    assert [s["message"] for s in json.loads(content)["steps"]] == ["one", "two"]
    again = later.prepare(f"hermes-atif-{B}.json", _doc(B, "s1", ["two", "three"], resumed=True), b"z")[1]
    assert [s["message"] for s in json.loads(again)["steps"]] == ["one", "two", "three"]  # a rewrite: no doubles
    fresh = later.prepare(f"hermes-atif-{C}.json", _doc(C, "s1", ["x"]), b"w")  # not resumed: never merged
    assert fresh == (f"hermes-atif-{C}.json", b"w")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([f"hermes-atif-{A}.json", f"hermes-atif-{Z}.json",
                                                                 "notes.json"])  # nothing else written


def test_segments_and_missing_bases_are_not_merged(tmp_path: Path) -> None:
    template = FilenameTemplate.parse("hermes-atif-{session_id}.json")
    _write(tmp_path, f"hermes-atif-{A}.json", _doc(A, "s1", ["one"]))
    segment = _doc(B, "s1", ["two"], segment=2, previous_trajectory_id=A, resumed=True)
    assert SessionFiles(tmp_path, template).prepare(f"hermes-atif-{B}.json", segment, b"y") == (f"hermes-atif-{B}.json", b"y")
    alone = _doc(C, "s2", ["three"], resumed=True)  # its earlier file was pruned: this part starts anew
    assert SessionFiles(tmp_path, template).prepare(f"hermes-atif-{C}.json", alone, b"z") == (f"hermes-atif-{C}.json", b"z")
