"""Retention and a wrong clock (issue 26 item 2; spec 06 BOOK-37, BOOK-48): history survives the clock.

Every clock here is injected (``now`` in epoch seconds, the boot clock as ``(boot id, seconds)``): nothing
changes or reads the real clock. Properties: with the clock far ahead of or behind a store retention has
seen, nothing is deleted (a warning, ``doctor`` reports the skew); a record written under a wrong clock
survives the next correct prune and is deleted only once a trusted clock has known it for the window;
normal retention still deletes what is old, on both stores.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_pipeline.cli.main import main
from hermes_pipeline.export.clock_trust import CONFIRM_S, LEDGER_NAME, MARGIN_S, TOLERANCE_S, judge_clock
from hermes_pipeline.sinks.observability_store import connect, sqlite_utc, store_path
from hermes_pipeline.sinks.observability_store.retention import prune_store as prune_rows
from hermes_pipeline.sinks.trajectory_store import prune_store, store_files

DAY = 86400.0
T = datetime(2026, 12, 3, 12, tzinfo=timezone.utc).timestamp()
"""The true time of these scenarios (noon UTC)."""
WINDOW = 90
BOOT = "3f0c5b8e-boot"


def day_name(at: float) -> str:
    """A store file name for a run started at ``at``."""
    return f"{datetime.fromtimestamp(at, tz=timezone.utc).date()}-{uuid.uuid4()}.json"


def write_runs(directory: Path, *ages_days: float, at: float = T) -> list[Path]:
    """Trajectory files of runs started ``ages_days`` before ``at`` (the clock they were written under)."""
    directory.mkdir(parents=True, exist_ok=True)
    out = []
    for age in ages_days:
        path = directory / day_name(at - age * DAY)
        path.write_text("{}")
        out.append(path)
    return out


def used_store(directory: Path) -> list[Path]:
    """A store in daily use up to ``T`` (30 runs over 60 days), last pruned at ``T`` on a true clock."""
    files = write_runs(directory, *(2 * k for k in range(30)))
    assert prune_store(directory, WINDOW, now=T, boot=(BOOT, 1000.0)) == []
    return files


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(jump_days=st.one_of(st.floats(min_value=WINDOW + MARGIN_S / DAY + 0.01, max_value=5000),
                           st.floats(min_value=-5000, max_value=-(TOLERANCE_S / DAY) - 0.01)))
def test_a_clock_far_ahead_or_behind_deletes_nothing(tmp_path_factory: pytest.TempPathFactory,
                                                     jump_days: float) -> None:
    """BOOK-37: one start with the clock far ahead (past the window and margin) or behind the last retention run
    deletes no trajectory, and the ledger keeps the skew for doctor."""
    directory = tmp_path_factory.mktemp("store")
    files = used_store(directory)
    assert prune_store(directory, WINDOW, now=T + jump_days * DAY, boot=None) == []
    assert store_files(directory) == sorted(files)
    skew = json.loads((directory / LEDGER_NAME).read_text())["skew"]
    assert skew["trusted"] is False and skew["store"] == "trajectory store"


def test_the_200_days_ahead_start_then_the_synced_clock(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """BOOK-37: the issue's VM: a start 200 days ahead deletes nothing (warning); what it wrote is dated in
    the future and vouches for nothing; the daily prune still ahead deletes nothing; after NTP sync the store
    prunes normally again and the future-dated runs are kept."""
    directory = tmp_path / "trajectories"
    files = used_store(directory)
    ahead = T + 200 * DAY
    with caplog.at_level(logging.WARNING):
        assert prune_store(directory, WINDOW, now=ahead, boot=(BOOT, 5000.0)) == []
    assert "retention skipped, nothing deleted" in caplog.text and "200.0 day(s) past" in caplog.text
    future = write_runs(directory, 0, 0, at=ahead)  # the session run under the wrong clock
    assert prune_store(directory, WINDOW, now=ahead + 3600, boot=(BOOT, 8600.0)) == []
    assert prune_store(directory, WINDOW, now=T + 2 * DAY, boot=(BOOT, 2 * DAY)) == []  # synced: trusted, young
    assert set(store_files(directory)) == set(files + future)
    gone = prune_store(directory, WINDOW, now=T + 40 * DAY, boot=(BOOT, 40 * DAY))
    assert {p.name for p in gone} == {p.name for p in files if p.name < day_name(T - 50 * DAY)[:10]}
    assert all(p.exists() for p in future)


def test_runs_written_400_days_behind_survive_the_next_correct_start(tmp_path: Path) -> None:
    """A record is never deleted for having been written under a wrong clock: runs dated 400 days back by a
    clock that was behind survive the next correct prune, and go only once a trusted clock has known them for
    the whole window."""
    directory = tmp_path / "trajectories"
    used_store(directory)
    behind = T + DAY - 400 * DAY
    assert prune_store(directory, WINDOW, now=behind, boot=None) == []  # the behind start: untrusted
    written = write_runs(directory, 0, 0, 0, at=behind)
    assert prune_store(directory, WINDOW, now=T + 2 * DAY, boot=None) == []  # the next correct start
    assert all(p.exists() for p in written)
    for day in range(10, 90, 10):  # daily use: trusted prunes, the runs stay within the window of first sight
        prune_store(directory, WINDOW, now=T + day * DAY, boot=None)
        assert all(p.exists() for p in written), day
    prune_store(directory, WINDOW, now=T + 93 * DAY, boot=None)
    assert not any(p.exists() for p in written)


def test_normal_retention_still_deletes_what_is_old(tmp_path: Path) -> None:
    """BOOK-37: with a true clock, runs older than the window go and the others stay, on a store older than the
    ledger (judged by date at once) and on one the ledger has known (judged by date and first sight)."""
    directory = tmp_path / "trajectories"
    old, mid, new = write_runs(directory, 200, 89, 1)
    assert prune_store(directory, WINDOW, now=T, boot=None) == [old]
    assert mid.exists() and new.exists()
    assert prune_store(directory, WINDOW, now=T + 2 * DAY, boot=None) == [mid]
    assert new.exists()


def test_a_far_ahead_clock_is_trusted_after_running_steadily_on_one_boot(tmp_path: Path) -> None:
    """Rule 3: after a long idle period the clock is far past the last prune; it is trusted once the wall clock
    has advanced like the boot clock for CONFIRM_S on the same boot, not across a reboot or a jump."""
    directory = tmp_path / "trajectories"
    used_store(directory)
    later = T + 300 * DAY
    assert prune_store(directory, WINDOW, now=later, boot=("b2", 100.0)) == []
    assert prune_store(directory, WINDOW, now=later + CONFIRM_S / 2, boot=("b2", 100.0 + CONFIRM_S / 2)) == []
    assert prune_store(directory, WINDOW, now=later + CONFIRM_S + 5, boot=("b3", 50.0)) == []  # rebooted: again
    assert prune_store(directory, WINDOW, now=later + CONFIRM_S + 10, boot=("b3", 60.0 + 3 * DAY)) == []  # jumped
    assert store_files(directory)
    start = later + 2 * CONFIRM_S
    assert prune_store(directory, WINDOW, now=start, boot=("b3", 1.0)) == []
    gone = prune_store(directory, WINDOW, now=start + CONFIRM_S + 60, boot=("b3", 1.0 + CONFIRM_S + 60))
    assert len(gone) == 30 and store_files(directory) == []


def test_the_rule_itself() -> None:
    """judge_clock: before the last run or the newest record: untrusted; far past both: untrusted (ahead)."""
    assert judge_clock(T, last_trusted=T - DAY, newest_vouched=T - DAY, window_s=WINDOW * DAY).trusted
    assert not judge_clock(T, last_trusted=T + DAY, newest_vouched=None, window_s=WINDOW * DAY).trusted
    assert not judge_clock(T, last_trusted=None, newest_vouched=T + DAY, window_s=WINDOW * DAY).trusted
    far = judge_clock(T, last_trusted=T - 100 * DAY, newest_vouched=T - 98 * DAY, window_s=WINDOW * DAY)
    assert not far.trusted and far.ahead and "98.0 day(s) past" in far.reason
    assert judge_clock(T, last_trusted=None, newest_vouched=None, window_s=WINDOW * DAY).trusted


# ---------------------------------------------------------------------------------------------- the row store


def seed_rows(home: Path, *ages_days: float, at: float = T) -> None:
    conn = connect(store_path(home))
    with conn:
        for age in ages_days:
            stamp = sqlite_utc(int((at - age * DAY) * 1_000_000))
            conn.execute("INSERT INTO task_runs (ended_at, outcome) VALUES (?, 'success')", (stamp,))
            conn.execute("INSERT INTO memory_changes (file_path, change_type, actor, changed_at) "
                         "VALUES ('memories/M.md', 'modify', 'user-direct', ?)", (stamp,))
    conn.close()


def row_count(home: Path) -> int:
    conn = sqlite3.connect(store_path(home))
    try:
        return int(conn.execute("SELECT (SELECT COUNT(*) FROM task_runs) + (SELECT COUNT(*) FROM memory_changes)")
                   .fetchone()[0])
    finally:
        conn.close()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(jump_days=st.one_of(st.floats(min_value=WINDOW + MARGIN_S / DAY + 0.01, max_value=5000),
                           st.floats(min_value=-5000, max_value=-(TOLERANCE_S / DAY) - 0.01)))
def test_store_rows_survive_a_clock_far_ahead_or_behind(tmp_path_factory: pytest.TempPathFactory,
                                                        jump_days: float) -> None:
    """BOOK-48: the observability store's prune on a clock far ahead or behind deletes no row."""
    home = tmp_path_factory.mktemp("home")
    seed_rows(home, *(2 * k for k in range(30)))
    prune_rows(home, now=T, boot=None)
    before = row_count(home)
    assert sum(prune_rows(home, now=T + jump_days * DAY, boot=None).values()) == 0
    assert row_count(home) == before


def test_store_rows_written_behind_survive_and_old_rows_still_go(tmp_path: Path) -> None:
    """BOOK-48: rows older than the window go on a true clock; rows a clock 400 days behind wrote survive the
    next correct prune and go once a trusted clock has known them for the window."""
    home = tmp_path
    seed_rows(home, 200, 1)  # task_runs: 200-day row expires (90); memory_changes: kept (365)
    assert prune_rows(home, now=T, boot=None)["task_runs"] == 1
    behind = T - 400 * DAY
    assert sum(prune_rows(home, now=behind, boot=None).values()) == 0
    seed_rows(home, 0, at=behind)  # one run and one memory change stamped 400 days back
    assert prune_rows(home, now=T + DAY, boot=None)["task_runs"] == 0
    for day in range(10, 91, 10):
        prune_rows(home, now=T + day * DAY, boot=None)
        assert behind_runs(home, behind) == 1, day
    prune_rows(home, now=T + 96 * DAY, boot=None)
    assert behind_runs(home, behind) == 0


def behind_runs(home: Path, behind: float) -> int:
    conn = sqlite3.connect(store_path(home))
    try:
        return int(conn.execute("SELECT COUNT(*) FROM task_runs WHERE ended_at <= ?",
                                (sqlite_utc(int((behind + DAY) * 1_000_000)),)).fetchone()[0])
    finally:
        conn.close()


def test_doctor_reports_the_skew(tmp_path: Path, capsys: Any) -> None:
    """doctor (text and --json) names the store whose retention was skipped and why."""
    directory = tmp_path / "trajectories"
    used_store(directory)
    prune_store(directory, WINDOW, now=T + 200 * DAY, boot=None)
    capsys.readouterr()
    main(["doctor", "--home", str(tmp_path), "--json"])
    report = json.loads(capsys.readouterr().out)
    [skew] = report["clock_skew"]
    assert skew["store"] == "trajectory store" and skew["skew_days"] == pytest.approx(200.0, abs=0.6)
    assert any("retention skipped" in w and "trajectory store" in w for w in report["warnings"])
    main(["doctor", "--home", str(tmp_path)])
    out = capsys.readouterr().out
    assert "WARNING: trajectory store: retention skipped" in out and "day(s) past" in out


def test_trajectory_prune_command_says_it_skipped(tmp_path: Path, capsys: Any) -> None:
    """``trajectory prune`` on a clock it cannot trust deletes nothing and says why (stderr, and ``clock`` in
    ``--json``). The real clock is far past this store's last trusted prune (year 2001)."""
    directory = tmp_path / "trajectories"
    files = write_runs(directory, 10, 1, at=T - 9000 * DAY)
    prune_store(directory, WINDOW, now=T - 9000 * DAY, boot=None)
    capsys.readouterr()
    assert main(["trajectory", "prune", "--home", str(tmp_path), "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["clock"]["trusted"] is False and json.loads(captured.out)["files"] == []
    assert "retention skipped, nothing deleted" in captured.err
    assert all(p.exists() for p in files)


def test_a_damaged_ledger_keeps_every_record_a_full_window(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A ledger that cannot be read is started again without trusting what it knew: old runs present then are
    kept for a window from that prune (a warning says so), and go after it."""
    directory = tmp_path / "trajectories"
    old, recent = write_runs(directory, 200, 1)
    (directory / LEDGER_NAME).write_text("{not json")
    with caplog.at_level(logging.WARNING):
        assert prune_store(directory, WINDOW, now=T, boot=None) == []
    assert "unreadable" in caplog.text and old.exists()
    assert prune_store(directory, WINDOW, now=T + 89 * DAY, boot=None) == []
    assert prune_store(directory, WINDOW, now=T + 91 * DAY, boot=None) == sorted([old, recent])
