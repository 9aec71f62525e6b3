"""The trajectory store (spec 06 §7, §9: BOOK-27, BOOK-28, BOOK-29, BOOK-34, BOOK-37)."""

from __future__ import annotations

import json
import re
import subprocess
from datetime import date, datetime, timezone
from pathlib import Path

import pytest

from hermes_pipeline.cli.main import main
from hermes_pipeline.config import load_profile_settings
from hermes_pipeline.profile import open_profile, release_all
from hermes_pipeline.replay.recording import load_trajectory
from hermes_pipeline.sinks.registry import load_sink
from hermes_pipeline.sinks.trajectory_store import (ensure_gitignore, parse_age, prune_store, store_files,
                                                    tracked_store_files, trajectory_date)
from hermes_pipeline.sink_testing import capture_export

from ._support import only_file, store_profile, text_response, tool_response


@pytest.fixture(autouse=True)
def _release() -> object:
    yield None
    release_all()


def run_once(profile, home: Path, *, complete: bool = True) -> None:
    host = profile.host(platform="cli", model="m1", provider="local", api_mode="chat_completions")
    (home / "skills" / "notes").mkdir(parents=True, exist_ok=True)
    (home / "skills" / "notes" / "SKILL.md").write_text("# notes skill\n")
    (home / "memories").mkdir(exist_ok=True)
    (home / "memories" / "MEMORY.md").write_text("likes tea\n")
    snapshot = host.context_snapshot(home, toolsets=["file"], config={"model": "m1", "temperature": 0})
    session = host.session()
    turn = session.turn("What do my notes say?", context=snapshot, task_id="task-42")
    messages = [{"role": "system", "content": "be brief"}, {"role": "user", "content": turn.user_content}]
    turn.call_llm({"model": "m1", "messages": messages}, lambda req: tool_response("c1", "read_file", {"path": "n"}))
    turn.call_tool("read_file", {"path": "n"}, lambda path: f"contents of {path}", tool_call_id="c1")
    turn.call_llm({"model": "m1", "messages": messages}, lambda req: text_response("They say hello."))
    if complete:
        turn.complete("They say hello.")
        turn.end()
        session.finalize()


def test_book_27_28_29_store_writes_one_replayable_file_per_run(tmp_path: Path) -> None:
    """BOOK-27 / BOOK-28 / BOOK-29: with ``observability.trajectories.enabled`` and no pipeline file, a run
    becomes ``trajectories/<YYYY-MM-DD>-<run uuid>.json`` (dir 0700, file 0600) carrying the LLM requests
    and responses with ``api_mode``, the tool result, the final output, the task ids and the context snapshot."""
    home = tmp_path / "home"
    profile = store_profile(home)
    assert "trajectory_store" in profile.consumers
    run_once(profile, home)
    profile.close()
    path = only_file(home / "trajectories")
    match = re.fullmatch(r"(\d{4}-\d{2}-\d{2})-([0-9a-f-]{36})\.json", path.name)
    assert match is not None
    assert (path.stat().st_mode & 0o777, (home / "trajectories").stat().st_mode & 0o777) == (0o600, 0o700)
    doc = json.loads(path.read_text())
    assert doc["schema_version"] == "ATIF-v1.7" and doc["trajectory_id"] == match.group(2)
    assert match.group(1) == doc["extra"]["hermes"]["trajectory_date"]
    raw = [s for s in doc["steps"] if s["source"] == "agent"]
    assert "messages_offset" not in raw[0]["extra"]["hermes"] and raw[1]["extra"]["hermes"]["messages_offset"] >= 1
    doc = load_trajectory(path)  # the second request is stored as what it adds to the first (issue #27 item 9)
    agents = [s for s in doc["steps"] if s["source"] == "agent"]
    assert len(agents) == 2
    for step in agents:
        hermes = step["extra"]["hermes"]
        assert hermes["api_mode"] == "chat_completions"
        assert hermes["llm_request"]["body"]["messages"][0] == {"role": "system", "content": "be brief"}
        assert "assistant_message" in hermes["llm_response"]
    assert agents[0]["observation"]["results"][0]["content"] == "contents of n"
    hermes = doc["extra"]["hermes"]
    assert hermes["final_output"] == "They say hello." and hermes["task_ids"] == ["task-42"]
    context = hermes["context"]
    assert context["model"] == "m1" and context["provider"] == "local" and context["toolsets"] == ["file"]
    assert re.fullmatch(r"[0-9a-f]{64}", context["config_sha256"])
    assert context["skills"][0]["name"] == "notes" and context["memory"][0]["path"] == "memories/MEMORY.md"
    assert "likes tea" not in json.dumps(context)  # hashes, never memory text


def test_book_28_store_is_off_by_default_and_adds_no_consumer(tmp_path: Path) -> None:
    """BOOK-28: without the key nothing listens and nothing is written."""
    home = tmp_path / "home"
    home.mkdir()
    profile = open_profile(home)
    assert "trajectory_store" not in profile.consumers
    run_once(profile, home)
    profile.close()
    assert not (home / "trajectories").exists()


def test_book_28_partial_trajectory_on_shutdown(tmp_path: Path) -> None:
    """BOOK-28 (FMT-49): a run still open when the profile closes is written as a partial trajectory."""
    home = tmp_path / "home"
    profile = store_profile(home)
    run_once(profile, home, complete=False)
    profile.close()
    doc = json.loads(only_file(home / "trajectories").read_text())
    assert "partial" in doc.get("notes", "").lower()


def test_book_28_the_store_is_an_ordinary_sink_of_the_entry_point_group(tmp_path: Path) -> None:
    """BOOK-28: the store is the ``trajectory_store`` sink of ``hermes_pipeline.sinks``; in a pipeline file
    it writes the same files as the profile's store."""
    assert load_sink("trajectory_store") is not None
    run = capture_export({"version": 4, "trajectory_store": {"enabled": True, "directory": "runs"}}, tmp_path)
    names = [name for name in run.files if name.startswith("runs/")]
    assert names and all(re.fullmatch(r"runs/\d{4}-\d{2}-\d{2}-[0-9a-f-]{36}\.json", n) for n in names)


def test_book_28_config_set_and_get_accept_the_store_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """BOOK-28 / BOOK-37: ``config set`` writes the keys, ``config get`` reads them and they take effect."""
    monkeypatch.setenv("HERMES_HOME", str(tmp_path))
    assert main(["config", "set", "observability.trajectories.enabled", "true"]) == 0
    assert main(["config", "set", "observability.trajectories.retention_days", "30"]) == 0
    capsys.readouterr()
    assert main(["config", "get", "observability.trajectories.retention_days"]) == 0
    assert capsys.readouterr().out.strip() == "30"
    assert main(["config", "set", "observability.trajectories.retention_days", "-1"]) != 0
    settings = load_profile_settings(tmp_path, log=False)
    assert settings.trajectories.enabled and settings.trajectories.retention_days == 30


def test_book_37_prune_touches_only_old_store_files(tmp_path: Path) -> None:
    """BOOK-37: age from the filename date; other files in the directory are never touched; dry run deletes nothing."""
    old = tmp_path / "2020-01-01-01234567-89ab-7def-8123-456789abcdef.json"
    new = tmp_path / "2026-11-30-01234567-89ab-7def-8123-456789abcdef.json"
    other = tmp_path / "2020-01-01-notes.json"
    for path in (old, new, other):
        path.write_text("{}")
    today = date(2026, 12, 1)
    assert prune_store(tmp_path, 90, dry_run=True, today=today) == [old] and old.exists()
    assert prune_store(tmp_path, 90, today=today) == [old]
    assert not old.exists() and new.exists() and other.exists()
    assert store_files(tmp_path) == [new]
    assert prune_store(tmp_path, 0, today=today) == []
    assert parse_age("90d") == 90 and parse_age("2w") == 14 and parse_age("7") == 7
    with pytest.raises(ValueError):
        parse_age("ninety")


def test_book_37_age_falls_back_to_trajectory_date(tmp_path: Path) -> None:
    """BOOK-37: a file whose name has no date takes ``extra.hermes.trajectory_date``."""
    path = tmp_path / "x.json"
    path.write_text(json.dumps({"extra": {"hermes": {"trajectory_date": "2021-05-06"}}}))
    assert trajectory_date(path) == date(2021, 5, 6)


def test_book_37_store_prunes_at_start(tmp_path: Path) -> None:
    """BOOK-37: opening a profile with the store on prunes files older than ``retention_days`` (a store in use:
    its newest run is recent, so the clock is trusted; a store whose every run is ancient is the clock-jump
    case of tests/trajectories/test_retention_clock.py)."""
    home = tmp_path / "home"
    (home / "trajectories").mkdir(parents=True)
    old = home / "trajectories" / "2001-01-01-01234567-89ab-7def-8123-456789abcdef.json"
    old.write_text("{}")
    recent = home / "trajectories" / f"{datetime.now(timezone.utc).date()}-01234567-89ab-7def-8123-456789abcdef.json"
    recent.write_text("{}")
    profile = store_profile(home, "    retention_days: 30\n")
    assert not old.exists() and recent.exists()
    profile.close()


def test_book_34_gitignore_inside_a_work_tree(tmp_path: Path) -> None:
    """BOOK-34: inside a git work tree ``$HERMES_HOME/.gitignore`` gains ``trajectories/`` once, other lines
    kept; tracked store files are found (doctor reports them)."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitignore").write_text("*.log")
    assert ensure_gitignore(home) is True
    assert ensure_gitignore(home) is False
    assert (home / ".gitignore").read_text() == "*.log\ntrajectories/\n"
    store = home / "trajectories"
    store.mkdir()
    (store / "2026-01-01-01234567-89ab-7def-8123-456789abcdef.json").write_text("{}")
    subprocess.run(["git", "-C", str(tmp_path), "add", "-f", str(store)], check=True)
    assert [Path(p).name for p in tracked_store_files(home, store)] == [
        "2026-01-01-01234567-89ab-7def-8123-456789abcdef.json"]


def test_book_34_no_gitignore_outside_a_work_tree(tmp_path: Path) -> None:
    """BOOK-34: outside a git work tree nothing is written."""
    assert ensure_gitignore(tmp_path) is False and not (tmp_path / ".gitignore").exists()


def test_book_34_doctor_reports_tracked_store_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """BOOK-34: ``hermes doctor`` fails with a check naming the store when git tracks a store file."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    home = tmp_path / "home"
    (home / "trajectories").mkdir(parents=True)
    (home / "config.yaml").write_text("observability:\n  trajectories:\n    enabled: true\n")
    tracked = home / "trajectories" / "2026-01-01-01234567-89ab-7def-8123-456789abcdef.json"
    tracked.write_text("{}")
    main(["hermes", "doctor", "--home", str(home), "--json"])
    checks = {c["name"]: c for c in json.loads(capsys.readouterr().out)["checks"]}
    assert checks["trajectory store"]["verdict"] == "ok"
    subprocess.run(["git", "-C", str(tmp_path), "add", "-f", str(tracked)], check=True)
    assert main(["hermes", "doctor", "--home", str(home), "--json"]) == 1
    checks = {c["name"]: c for c in json.loads(capsys.readouterr().out)["checks"]}
    assert checks["trajectory store"]["verdict"] == "fail" and "git tracks 1 file" in checks["trajectory store"]["detail"]
