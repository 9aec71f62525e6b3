"""Retention and hygiene (spec 06 BOOK-34, BOOK-48, BOOK-49): prune, automatic cleanup, .gitignore, doctor."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline.cli.main import main
from hermes_pipeline.logs import clock
from hermes_pipeline.sinks.observability_store import connect, sqlite_utc, store_path

from ._support import rows, store


def _age(days: float) -> str:
    return sqlite_utc(int((time.time() - days * 86400) * 1_000_000))


def _seed(home: Path) -> None:
    conn = connect(store_path(home))
    with conn:
        for days in (10, 100):
            conn.execute("INSERT INTO task_runs (ended_at, outcome) VALUES (?, 'success')", (_age(days),))
            conn.execute("INSERT INTO llm_calls (ended_at, status) VALUES (?, 'ok')", (_age(days),))
            conn.execute("INSERT INTO skill_runs (ended_at, outcome) VALUES (?, 'success')", (_age(days),))
        for days in (100, 400):
            conn.execute("INSERT INTO skill_history (skill_name, version, change_type, changed_at) "
                         "VALUES ('s', ?, 'refine', ?)", (days, _age(days)))
            conn.execute("INSERT INTO memory_changes (file_path, change_type, actor, changed_at) "
                         "VALUES ('memories/M.md', 'modify', 'user-direct', ?)", (_age(days),))
        conn.execute("INSERT INTO alert_state VALUES ('A-C3', 'k1', 'resolved', ?, ?)", (_age(200), _age(100)))
        conn.execute("INSERT INTO alert_state VALUES ('A-C3', 'k2', 'firing', ?, ?)", (_age(200), _age(100)))
    conn.close()


def _counts(home: Path) -> dict[str, int]:
    return {t: rows(home, f"SELECT COUNT(*) FROM {t}")[0][0]
            for t in ("task_runs", "llm_calls", "skill_runs", "skill_history", "memory_changes", "alert_state")}


def test_book_48_prune_dry_run_then_delete(tmp_path: Path, capsys: Any) -> None:
    """BOOK-48: run rows older than 90 days, histories older than 365 days, resolved alerts only."""
    _seed(tmp_path)
    assert main(["prune", "--dry-run", "--json", "--home", str(tmp_path)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["store_rows"] == {"task_runs": 1, "llm_calls": 1, "skill_runs": 1, "alert_state": 1,
                                    "skill_history": 1, "memory_changes": 1, "approvals": 0,
                                    "tool_errors": 0, "staged_writes": 0}
    assert _counts(tmp_path) == {"task_runs": 2, "llm_calls": 2, "skill_runs": 2, "skill_history": 2,
                                 "memory_changes": 2, "alert_state": 2}  # a dry run deletes nothing
    assert main(["prune", "--home", str(tmp_path)]) == 0
    assert "deleted 6 store row(s)" in capsys.readouterr().out
    assert _counts(tmp_path) == {"task_runs": 1, "llm_calls": 1, "skill_runs": 1, "skill_history": 1,
                                 "memory_changes": 1, "alert_state": 1}
    assert rows(tmp_path, "SELECT status FROM alert_state") == [("firing",)]


def test_book_48_prune_reads_the_profile_retention_and_zero_keeps(tmp_path: Path, capsys: Any) -> None:
    _seed(tmp_path)
    (tmp_path / "config.yaml").write_text("observability:\n  retention:\n    runs_days: 0\n    history_days: 50\n")
    assert main(["prune", "--home", str(tmp_path)]) == 0
    counts = _counts(tmp_path)
    assert counts["task_runs"] == 2 and counts["skill_history"] == 0 and counts["memory_changes"] == 0


def test_book_48_prune_also_prunes_the_trajectory_store(tmp_path: Path, capsys: Any) -> None:
    directory = tmp_path / "trajectories"
    directory.mkdir()
    old = directory / "2020-01-01-0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.json"
    old.write_text("{}")
    recent = directory / f"{time.strftime('%Y-%m-%d', time.gmtime())}-0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.json"
    recent.write_text("{}")  # a store in use: its newest run vouches for the clock
    assert main(["prune", "--json", "--home", str(tmp_path)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["trajectory_files"] == [str(old)] and not old.exists() and report["store_rows"] == {}
    assert recent.exists()


def test_book_48_cleanup_runs_when_the_store_starts(tmp_path: Path) -> None:
    _seed(tmp_path)
    with store(tmp_path) as (host, handle):
        assert handle.flush()
        assert handle.sink.stats()["rows_pruned"] == 6
    assert _counts(tmp_path)["task_runs"] == 1


def _git(path: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(path), *args], check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t", "HOME": str(path), "PATH": "/usr/bin:/bin"})


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_book_34_gitignore_and_doctor_report_tracked_store_files(tmp_path: Path, capsys: Any) -> None:
    home = tmp_path / "home"
    home.mkdir()
    _git(tmp_path, "init", "-q")
    with store(home) as (host, handle):
        handle.flush()
    assert "observability/" in (home / ".gitignore").read_text().splitlines()
    with store(home) as (host, handle):
        handle.flush()
    assert (home / ".gitignore").read_text().splitlines().count("observability/") == 1  # once
    assert main(["doctor", "--home", str(home)]) == 0
    capsys.readouterr()
    _git(tmp_path, "add", "-f", "home/observability/observability.sqlite3")
    assert main(["doctor", "--json", "--home", str(home)]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["tracked_files"] == ["home/observability/observability.sqlite3"]
    assert report["store"]["integrity"] == "ok" and report["store"]["rows"]["task_runs"] == 0


def test_doctor_reports_a_damaged_store(tmp_path: Path, capsys: Any) -> None:
    path = store_path(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"garbage" * 1000)
    assert main(["doctor", "--json", "--home", str(tmp_path)]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["problems"] and "damaged" in report["problems"][0]
    assert path.read_bytes().startswith(b"garbage")  # doctor never repairs or moves anything


@pytest.mark.parametrize("answer, expected", [("yes\n", True), ("no\n", False), ("", None)])
def test_book_49_clock_check(monkeypatch: pytest.MonkeyPatch, answer: str, expected: bool | None,
                             tmp_path: Path) -> None:
    fake = tmp_path / "timedatectl"
    fake.write_text(f"#!/bin/sh\nprintf '{answer}'\n")
    fake.chmod(0o755)
    monkeypatch.setattr(clock.shutil, "which", lambda name: str(fake))
    assert clock.clock_synchronized() is expected


def test_book_49_one_warning_with_its_event(monkeypatch: pytest.MonkeyPatch, caplog: Any) -> None:
    monkeypatch.setattr(clock, "clock_synchronized", lambda: False)
    monkeypatch.setattr(clock, "_warned", clock.threading.Event())
    assert clock.warn_if_unsynchronized() is True
    assert clock.warn_if_unsynchronized() is False  # once per process
    records = [r for r in caplog.records if getattr(r, "event", None) == "clock_not_synchronized"]
    assert len(records) == 1 and records[0].levelname == "WARNING"
