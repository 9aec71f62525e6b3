"""Regression and A/B over recorded Hermes runs (spec 06 BOOK-32; issue #28 item 4): ``replay --batch`` selects
runs of the store (all, ``--skill NAME``, ``--failed``, ids, a directory), replays them with Hermes on a pool of
workers and reports one line per run and a summary; ``--ab A B`` replays the selection under two settings and says
which runs changed outcome. Real ``hermes chat`` runs; skipped without ``hermes-agent``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from ._hermes import HERMES, SKILL_TEXT, record, record_more, replay, tree_digest

pytestmark = pytest.mark.skipif(HERMES is None, reason="hermes-agent is not installed")


@pytest.fixture(scope="module")
def store_runs(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Three runs in one profile's store: a read, a run that used the skill, a run with a failed read."""
    base = tmp_path_factory.mktemp("batch")
    work = base / "work"
    recorded = record(base, [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": str(work / "notes.txt")}, "id": "call_r"}]},
        "Your notes say: buy milk."], "What do my notes say?")
    skill = record_more(recorded, [
        {"tool_calls": [{"name": "skill_view", "arguments": {"name": "notes-helper"}, "id": "call_s"}]},
        "The notes helper reads notes.txt."], "What does the notes helper do?")
    failed = record_more(recorded, [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": str(work / "gone.txt")}, "id": "call_g"}]},
        "There is no such file."], "Read gone.txt")
    yield recorded, {"read": recorded.path, "skill": skill, "failed": failed}
    recorded.server.close()


def _ids(paths: list[Path]) -> set[str]:
    return {json.loads(p.read_text(encoding="utf-8"))["trajectory_id"] for p in paths}


def test_book_32_batch_replays_the_store_with_hermes_identically(store_runs: Any, tmp_path: Path) -> None:
    """BOOK-32: ``--batch`` with no ids replays every run of the store, with Hermes, on two workers: one line per
    run and the summary; all ``identical`` → exit 0; ``--diff json`` holds each run's verdict, answer change,
    token and cost deltas; the profile is untouched."""
    recorded, runs = store_runs
    before = tree_digest(recorded.home)
    done = replay(["--batch", "--home", str(recorded.home), "--output", str(tmp_path / "out"), "--workers", "2",
                   "--diff", "json"], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["total"] == 3 and report["identical"] == 3 and report["changed"] == 0
    assert {row["id"] for row in report["runs"]} == _ids(list(runs.values()))
    for row in report["runs"]:
        assert row["verdict"] == "identical" and row["answer_changed"] is False
        assert row["tokens_delta"] == {"prompt": 0, "completion": 0} and row["first_divergence"] is None
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(p.name for p in runs.values())
    assert tree_digest(recorded.home) == before


@pytest.mark.parametrize(("selector", "expected"), [(["--skill", "notes-helper"], "skill"), (["--failed"], "failed")])
def test_book_32_batch_selects_by_skill_and_by_failure(store_runs: Any, tmp_path: Path, selector: list[str],
                                                       expected: str) -> None:
    """BOOK-32: ``--skill NAME`` keeps the runs that used the skill, ``--failed`` those with a failed step."""
    recorded, runs = store_runs
    done = replay(["--batch", *selector, "--home", str(recorded.home), "--output", str(tmp_path / "out"),
                   "--json"], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert [row["id"] for row in json.loads(done.stdout)["runs"]] == list(_ids([runs[expected]]))


def test_book_32_a_changed_skill_shows_in_every_line_and_the_exit_code(store_runs: Any, tmp_path: Path) -> None:
    """BOOK-32: replaying a directory of runs with another version of the skill: every line says where the run
    diverged (the first LLM call's system message), the summary counts them, exit 1."""
    recorded, runs = store_runs
    directory = tmp_path / "picked"
    directory.mkdir()
    for name in ("read", "skill"):
        shutil.copy(runs[name], directory)
    changed = tmp_path / "SKILL.md"
    changed.write_text(SKILL_TEXT.replace("answer from it", "summarise it"), encoding="utf-8")
    done = replay(["--batch", str(directory), "--skill", f"notes-helper={changed}", "--home", str(recorded.home),
                   "--output", str(tmp_path / "out")], tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 4 and all(line.startswith("DIVERGED") for line in lines[:2]), done.stdout
    assert all("agent step 1" in line and "message 0 (system)" in line for line in lines[:2]), done.stdout
    assert lines[2].startswith("2 runs: 0 identical, 2 diverged, 0 errors")


def test_book_32_ab_shows_which_runs_changed_outcome_side_by_side(store_runs: Any, tmp_path: Path) -> None:
    """BOOK-32 (A/B): the same selection as recorded (A) and with another skill version (B): each run is a row
    with both outcomes, marked CHANGED, exit 1; A against itself changes nothing, exit 0."""
    recorded, runs = store_runs
    changed = tmp_path / "SKILL.md"
    changed.write_text(SKILL_TEXT.replace("answer from it", "summarise it"), encoding="utf-8")
    done = replay([str(runs["skill"]), "--ab", "recorded", f"skill:notes-helper={changed}", "--home",
                   str(recorded.home), "--output", str(tmp_path / "out")], tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "A = recorded" and lines[1].startswith("B = skill:notes-helper=")
    assert lines[2].startswith("CHANGED") and "A: identical" in lines[2] and "B: diverged" in lines[2]
    assert lines[-1] == "1 of 1 runs changed outcome between A and B"
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [f"{runs['skill'].stem}.A.json",
                                                                    f"{runs['skill'].stem}.B.json"]
    same = replay([str(runs["skill"]), "--ab", "recorded", "recorded", "--home", str(recorded.home), "--output",
                   str(tmp_path / "out2"), "--diff", "json"], tmp_path)
    assert same.returncode == 0 and json.loads(same.stdout)["changed"] == 0, same.stdout + same.stderr


@pytest.mark.parametrize(("args", "needle"), [
    (["--batch", "--since", "7x"], "--since"),
    (["--batch", "EMPTY"], "holds no recorded run"),
    (["--batch", "BROKEN"], "broken.json"),
    (["--batch", "--ab", "bogus:x", "recorded"], "--ab"),
    (["--batch", "--ab", "set:model=a", "set:model=b"], "--live-from"),
    (["--batch", "--live-from", "1", "--ab", "set:nope=a", "recorded"], "nope"),
    (["--batch", "--skill", "a", "--skill", "b"], "one --skill"),
])
def test_book_32_bad_batch_input_is_exit_2_and_nothing_is_written(store_runs: Any, tmp_path: Path,
                                                                  args: list[str], needle: str) -> None:
    """Bad selectors, an empty selection, a damaged file in the directory, a bad ``--ab`` setting: exit 2 with one
    line naming it, and nothing written."""
    recorded, runs = store_runs
    (tmp_path / "EMPTY").mkdir()
    (tmp_path / "BROKEN").mkdir()
    shutil.copy(runs["read"], tmp_path / "BROKEN")
    (tmp_path / "BROKEN" / "broken.json").write_text('{"schema_version": "ATIF-v1.4", "steps": [', encoding="utf-8")
    args = [str(tmp_path / a) if a in ("EMPTY", "BROKEN") else a for a in args]
    done = replay([*args, "--home", str(recorded.home), "--output", str(tmp_path / "out")], tmp_path)
    assert done.returncode == 2 and needle in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert not (tmp_path / "out").exists()
