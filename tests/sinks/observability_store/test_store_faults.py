"""Real faults under the store's writer: a full database, damaged pages, a lock held by another process
past the busy timeout, and ``kill -9`` of a writing process (spec 06 BOOK-16, BOOK-25; issue 26 "nothing
lost silently").

Each fault is real at the SQLite level: ``PRAGMA max_page_count`` makes SQLite answer ``SQLITE_FULL``
exactly as a full disk does, pages are damaged by overwriting their bytes in the file, the lock is held
by another process's ``BEGIN EXCLUSIVE``. The invariant checked every time: every row the engine
accepted is either in the store or counted as lost (by kind), the failure is logged once per kind,
and ``doctor``, the dashboard and the readers say so instead of an all-clear or a traceback.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline.cli.main import main
from hermes_pipeline.dashboard import queries, views
from hermes_pipeline.dashboard.sources import load_sources
from hermes_pipeline.sinks.observability_store import db, store_path

from ._support import rows, store

TURNS = 40


def _turns(host: Any, count: int) -> None:
    for i in range(count):
        with host.session() as session, session.turn(f"turn {i}") as turn:
            turn.complete("ok")


def _failure_logs(caplog: Any, kind: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if getattr(r, "event", None) == "observability_store_write_failed"
            and getattr(r, "kind", None) == kind]


def _doctor(home: Path, capsys: Any) -> tuple[int, dict[str, Any]]:
    capsys.readouterr()
    code = main(["doctor", "--json", "--home", str(home)])
    return code, json.loads(capsys.readouterr().out)


def _page_limit(monkeypatch: pytest.MonkeyPatch, limit: dict[str, int]) -> None:
    """Every connection the writer opens gets ``PRAGMA max_page_count`` (SQLITE_FULL past it) while set."""
    real = db.connect

    def connect(path: Path, **kw: Any) -> sqlite3.Connection:
        conn = real(path, **kw)
        if "pages" in limit:
            conn.execute(f"PRAGMA max_page_count = {limit['pages']}")
        return conn

    monkeypatch.setattr(db, "connect", connect)


def test_a_full_store_counts_every_row_it_cannot_write_and_logs_once(tmp_path: Path, caplog: Any, capsys: Any,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """SQLITE_FULL (what a full disk gives): rows in the store + rows counted lost == rows accepted; one
    log line for the kind; doctor says writes fail (exit 1), the dashboard says so on the overview."""
    limit: dict[str, int] = {}
    _page_limit(monkeypatch, limit)
    caplog.set_level(logging.WARNING, logger="hermes_pipeline.sinks.observability_store")
    with store(tmp_path) as (host, handle):
        handle.flush()
        conn = handle.sink.store_writer.connection()
        limit["pages"] = int(conn.execute("PRAGMA page_count").fetchone()[0])
        handle.sink.store_writer.close()  # reopened with the limit, as a disk that just filled up
        _turns(host, TURNS)
        handle.flush()
        stats = handle.sink.stats()
        assert stats["write_failures_by_kind"].get("full", 0) >= 1
        assert stats["failed"] and stats["failed"].startswith("full")
    stats = handle.sink.stats()
    written = rows(tmp_path, "SELECT COUNT(*) FROM task_runs")[0][0]
    assert written < TURNS, "the limit did not bite: the test proves nothing"
    assert written + stats["rows_lost_by_kind"]["full"] == TURNS
    assert len(_failure_logs(caplog, "full")) == 1  # once per kind and period, not once per batch
    code, report = _doctor(tmp_path, capsys)
    assert code == 1
    assert any("writes to the observability store fail" in p and "full" in p for p in report["problems"])
    assert report["store"]["write_failures"]["rows_lost"] == TURNS - written
    sources = load_sources(tmp_path)
    for page in (views.overview_view(queries.overview(sources)), views.sessions_view(queries.sessions(sources)),
                 views.skills_view(queries.skills(sources)), views.memory_view(queries.memory(sources))):
        assert "store writes failing" in page and f"{TURNS - written} row(s) lost" in page

    del limit["pages"]  # space freed: the next writer recovers, the past loss stays visible as a warning
    with store(tmp_path) as (host, handle):
        _turns(host, 1)
        assert handle.flush()
    code, report = _doctor(tmp_path, capsys)
    assert code == 0 and not report["problems"]
    assert any(f"{TURNS - written} row(s) could not be written" in w for w in report["warnings"])


def _damage_tables(home: Path) -> None:
    """Overwrite the root pages of every table and index with garbage (page 1, with the header and the
    schema, stays intact, so the file still opens)."""
    path = store_path(home)
    conn = sqlite3.connect(path)
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    roots = [r[0] for r in conn.execute("SELECT rootpage FROM sqlite_master WHERE rootpage > 1")]
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    with open(path, "r+b") as fh:
        for root in roots:
            fh.seek((root - 1) * page_size)
            fh.write(bytes([0xA5]) * page_size)


def test_damaged_pages_count_every_failed_write_and_no_reader_gives_an_all_clear(
        tmp_path: Path, caplog: Any, capsys: Any) -> None:
    """Damaged pages: each write fails and is counted (kind ``damaged``), logged once; doctor says damaged
    (exit 1); the dashboard (BOOK-40, BOOK-41) says "store unreadable", never "No anomaly"; audit (BOOK-20),
    alerts (BOOK-45) and prune (BOOK-48) give a typed one-line error, never a traceback."""
    with store(tmp_path) as (host, handle):
        _turns(host, 3)
    _damage_tables(tmp_path)
    caplog.set_level(logging.WARNING, logger="hermes_pipeline.sinks.observability_store")
    with store(tmp_path) as (host, handle):
        handle.flush()
        _turns(host, TURNS)
        handle.flush()
        assert handle.sink.stats()["write_failures_by_kind"].get("damaged", 0) >= 1
    stats = handle.sink.stats()
    assert stats["rows_lost_by_kind"]["damaged"] == TURNS
    assert len(_failure_logs(caplog, "damaged")) == 1
    code, report = _doctor(tmp_path, capsys)
    assert code == 1 and any("damaged" in p for p in report["problems"])

    sources = load_sources(tmp_path)
    overview = views.overview_view(queries.overview(sources))
    assert "store unreadable: database disk image is malformed" in overview
    assert "No anomaly" not in overview and "enable observability.audit.enabled" not in overview
    sessions = views.sessions_view(queries.sessions(sources))
    assert "store unreadable" in sessions and "exists in this profile" not in sessions

    (tmp_path / "config.yaml").write_text("observability:\n  alerts:\n    enabled: true\n", encoding="utf-8")
    for argv in (["audit", "skills", "recent"], ["audit", "memory", "top"], ["audit", "memory-conflicts"],
                 ["alerts", "run"], ["alerts", "status"], ["prune"]):
        capsys.readouterr()
        assert main([*argv, "--home", str(tmp_path)]) == 1, argv
        err = capsys.readouterr().err
        assert "Traceback" not in err and str(store_path(tmp_path)) in err, (argv, err)
        assert "damaged" in err or "malformed" in err, (argv, err)


@pytest.mark.parametrize("content", [b"not a database at all " * 300, b""], ids=["garbage", "empty"])
def test_a_file_that_is_not_a_store_is_unreadable_on_every_panel(tmp_path: Path, content: bytes) -> None:
    """A non-database file is "store unreadable: <reason>", never "enable observability.audit.enabled"."""
    path = store_path(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    (tmp_path / "config.yaml").write_text("observability:\n  audit:\n    enabled: true\n", encoding="utf-8")
    sources = load_sources(tmp_path)
    pages = [views.overview_view(queries.overview(sources)), views.sessions_view(queries.sessions(sources)),
             views.skills_view(queries.skills(sources)), views.memory_view(queries.memory(sources))]
    for page in pages:
        assert "store unreadable: " in page
        assert "enable observability.audit.enabled" not in page and "No anomaly" not in page


_LOCKER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
sys.stdin.readline()
conn.execute("ROLLBACK")
"""


def test_a_lock_held_past_the_wait_by_another_process_counts_every_row(tmp_path: Path, caplog: Any, capsys: Any,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Another process holds the write lock across the writer's close: the rows wait, then are counted lost
    (kind ``locked``) — none vanishes; doctor says so."""
    monkeypatch.setattr(db, "BUSY_MS", 100)
    caplog.set_level(logging.WARNING, logger="hermes_pipeline.sinks.observability_store")
    with store(tmp_path) as (host, handle):
        _turns(host, 2)
        assert handle.flush()
        handle.sink.store_writer.close()  # the next connection gets the short busy timeout
        locker = subprocess.Popen([sys.executable, "-c", _LOCKER, str(store_path(tmp_path))], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
        try:
            assert locker.stdout is not None and locker.stdout.readline().strip() == "locked"
            _turns(host, TURNS)
            assert not handle.flush()
            assert handle.sink.stats()["rows_pending"] == TURNS
            (tmp_path / "config.yaml").write_text("observability:\n  alerts:\n    enabled: true\n", encoding="utf-8")
            for argv in (["prune"], ["alerts", "run"]):  # writers among the readers: a typed "locked" error
                capsys.readouterr()
                assert main([*argv, "--home", str(tmp_path)]) == 1, argv
                err = capsys.readouterr().err
                assert "locked" in err and str(store_path(tmp_path)) in err and "Traceback" not in err, err
            handle.close()
        finally:
            assert locker.stdin is not None
            locker.stdin.write("\n")
            locker.stdin.close()
            locker.wait(timeout=30)
    stats = handle.sink.stats()
    assert stats["rows_lost_by_kind"] == {"locked": TURNS}
    assert rows(tmp_path, "SELECT COUNT(*) FROM task_runs") == [(2,)]
    assert len(_failure_logs(caplog, "locked")) == 1
    code, report = _doctor(tmp_path, capsys)
    assert code == 1 and any("locked" in p for p in report["problems"])


def test_a_lock_longer_than_the_close_deadline_is_counted_by_the_time_close_returns(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The busy timeout is longer than the close's deadline: close still returns with every pending row
    counted (kind ``locked``) and recorded for doctor — a process that exits right after loses nothing
    silently."""
    from hermes_pipeline.sinks.observability_store import consumer
    from hermes_pipeline.sinks.observability_store.failures import read_failures

    monkeypatch.setattr(db, "BUSY_MS", 2000)
    monkeypatch.setattr(consumer, "CLOSE_DEADLINE", 0.5)
    with store(tmp_path) as (host, handle):
        assert handle.flush()
        handle.sink.store_writer.close()  # the next connection gets the patched busy timeout
        locker = subprocess.Popen([sys.executable, "-c", _LOCKER, str(store_path(tmp_path))], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
        try:
            assert locker.stdout is not None and locker.stdout.readline().strip() == "locked"
            _turns(host, TURNS)
            assert not handle.flush(30.0)  # every event reached the writer; its rows wait for the lock
            assert handle.sink.stats()["rows_pending"] == TURNS
            handle.close()
            assert handle.sink.stats()["rows_lost_by_kind"].get("locked") == TURNS
            assert read_failures(store_path(tmp_path))["kinds"]["locked"]["rows_lost"] == TURNS
        finally:
            assert locker.stdin is not None
            locker.stdin.write("\n")
            locker.stdin.close()
            locker.wait(timeout=30)


_WRITER = """
import sys
from pathlib import Path
from hermes_pipeline import Engine, Host
from hermes_pipeline.config.observability_settings import ObservabilitySettings
from hermes_pipeline.sinks.observability_store import attach_store

handle = attach_store(Engine(), Path(sys.argv[1]), ObservabilitySettings(audit_enabled=True))
host = Host(handle.engine, model="m1", provider="openai")
done = 0
while True:
    with host.session() as session, session.turn("t") as turn:
        turn.complete("ok")
    done += 1
    if handle.flush(10.0):
        print(done, flush=True)
"""


def test_kill_9_of_a_writer_loses_no_acknowledged_row(tmp_path: Path) -> None:
    """Rows the writer reported written (its flush returned) survive ``kill -9`` mid-run, and the file is intact."""
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(tmp_path)], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    acknowledged = 0
    try:
        assert proc.stdout is not None
        while acknowledged < 25:
            line = proc.stdout.readline()
            assert line, "the writer died before writing"
            acknowledged = int(line)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    conn = sqlite3.connect(store_path(tmp_path))
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("SELECT COUNT(*) FROM task_runs").fetchone()[0] >= acknowledged
    finally:
        conn.close()


def test_a_long_failure_keeps_a_bounded_backlog_and_counts_what_it_drops(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """While the store stays unwritable the rows kept for a retry are bounded (``max_backlog``); the oldest
    beyond it are dropped and counted, and the rest are counted at close: the sum is still every row."""
    from hermes_pipeline.sinks.observability_store.sink import ObservabilityStoreSink

    limit: dict[str, int] = {"pages": 1}  # nothing fits: every write fails with SQLITE_FULL
    _page_limit(monkeypatch, limit)
    (tmp_path / "observability").mkdir()
    sqlite3.connect(store_path(tmp_path)).close()
    monkeypatch.setattr(db, "ensure_schema", lambda conn: None)
    from hermes_pipeline import Engine, Host
    from hermes_pipeline.export.scope_hooks import ScopePlugin

    sink = ObservabilityStoreSink({"home": str(tmp_path), "max_backlog": 5})
    engine = Engine()
    scope_plugin = ScopePlugin((sink,))
    engine.add_plugin(scope_plugin, name="test-store")
    _turns(Host(engine, model="m1", provider="openai"), TURNS)
    scope_plugin.flush(10.0)
    sink.flush(10.0)
    assert sink.stats()["rows_pending"] <= 5
    sink.shutdown(10.0)
    stats = sink.stats()
    assert sum(stats["rows_lost_by_kind"].values()) == TURNS


def test_the_failure_record_is_reserved_and_overwritten_in_place_when_no_block_is_free(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a full disk the record cannot be replaced by a new file: it is rewritten inside the space its
    first successful write reserved, so doctor still learns of the failure."""
    import errno

    from hermes_pipeline.sinks.observability_store import failures as failures_module
    from hermes_pipeline.sinks.observability_store.failures import RESERVED_BYTES, read_failures

    with store(tmp_path) as (host, handle):
        _turns(host, 1)
        assert handle.flush()
    record = failures_module.failures_path(store_path(tmp_path))
    assert record.stat().st_size >= RESERVED_BYTES  # reserved while the disk had room

    def no_space(*args: Any, **kw: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(failures_module.os, "replace", no_space)
    writer = failures_module.WriteFailures(store_path(tmp_path))
    writer.failed(sqlite3.OperationalError("database or disk is full"), waiting=3)
    writer.lost("full", 3)
    writer.save()
    seen = read_failures(store_path(tmp_path))
    assert seen["failing"].startswith("full") and seen["rows_lost"] == 3
    assert record.stat().st_size >= RESERVED_BYTES


def test_random_damage_anywhere_never_gives_a_traceback_or_an_all_clear(tmp_path: Path, capsys: Any) -> None:
    """Generated damage (any offset, header included, any length): every reader answers with a result or a
    typed one-line error, doctor exits 1 whenever SQLite itself finds the file damaged, and the writer
    then writes or counts every row (a file that is not a database any more is moved aside, kept)."""
    import itertools
    import shutil

    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    template = tmp_path / "template"
    with store(template) as (host, handle):
        _turns(host, 30)
    (template / "config.yaml").write_text("observability:\n  alerts:\n    enabled: true\n", encoding="utf-8")
    size = store_path(template).stat().st_size
    counter = itertools.count()

    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
    @given(offset=st.integers(0, size - 1), garbage=st.binary(min_size=1, max_size=4096))
    def check(offset: int, garbage: bytes) -> None:
        home = tmp_path / f"case{next(counter)}"
        shutil.copytree(template, home)
        with open(store_path(home), "r+b") as fh:
            fh.seek(offset)
            fh.write(garbage)
        try:
            conn = sqlite3.connect(f"file:{store_path(home)}?mode=ro", uri=True)  # never checkpoints a repair
            conn.text_factory = bytes
            damaged = conn.execute("PRAGMA quick_check").fetchone()[0] != b"ok"
            conn.close()
        except (sqlite3.DatabaseError, UnicodeDecodeError):
            damaged = True
        for argv in (["audit", "skills", "recent"], ["audit", "memory-conflicts"], ["alerts", "status"],
                     ["prune", "--dry-run"], ["doctor"]):
            capsys.readouterr()
            code = main([*argv, "--home", str(home)])
            err = capsys.readouterr().err
            assert code in (0, 1) and "Traceback" not in err, (argv, err)
            if argv == ["doctor"] and damaged:
                assert code == 1
        sources = load_sources(home)
        for page in (views.overview_view(queries.overview(sources)), views.sessions_view(queries.sessions(sources)),
                     views.skills_view(queries.skills(sources)), views.memory_view(queries.memory(sources))):
            assert page.startswith("<!DOCTYPE") or "<html" in page
        with store(home) as (host, handle):  # the writer on the damaged file: each row written or counted
            _turns(host, 5)
        stats = handle.sink.stats()
        assert stats["rows_written"] + stats["rows_lost"] == 5, stats
        shutil.rmtree(home)

    check()
