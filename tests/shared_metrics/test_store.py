"""The SQLite store: layout, permissions, schema, latches and concurrency (SM-34, SM-46..52, SM-68, SM-97)."""

from __future__ import annotations

import json
import multiprocessing
import os
import sqlite3
import stat
import threading
from datetime import timedelta
from pathlib import Path

import pytest

from hermes_pipeline.shared_metrics import MetricsStore, StoreError
from hermes_pipeline.shared_metrics import store as st
from hermes_pipeline.shared_metrics.clock import stamp

from .conftest import RESOURCE, T0, rows, totals


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_sm46_sm97_owner_only_permissions(home: Path) -> None:
    old = os.umask(0o022)
    try:
        store = MetricsStore(home)
        conn = store.connect()
        with st.transaction(conn):
            st.increment(conn, "2026-09-01", "hermes.task_run.started", "{}", 1, RESOURCE)
        second = store.connect()  # re-secures the -wal / -shm files SQLite created meanwhile
        try:
            for directory in (home / "telemetry", store.directory, store.outbox):
                assert _mode(directory) == 0o700, directory
            files = [p for p in store.directory.iterdir() if p.is_file()]
            assert {store.db_path.name, store.db_path.name + "-wal", store.db_path.name + "-shm"} <= {
                p.name for p in files}
            for path in files:
                assert _mode(path) == 0o600, path
        finally:
            second.close()
            conn.close()
    finally:
        os.umask(old)


def test_sm47_sm48_tables_and_fixed_width_timestamps(home: Path) -> None:
    """SM-47 / SM-48: Tables and fixed width timestamps."""
    conn = MetricsStore(home).connect()
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"telemetry_state", "counter_aggregates", "package_outbox", "send_consent_windows", "consent_marks",
            "local_latency_samples"} <= tables
    assert st.get_state(conn, "schema_version") == "2"
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()
    assert stamp(T0) == "2026-09-01T10:00:00.000000Z"
    assert stamp(T0 + timedelta(microseconds=7)) == "2026-09-01T10:00:00.000007Z"


def test_sm87_at_most_one_open_consent_window_is_enforced_by_the_schema(home: Path) -> None:
    conn = MetricsStore(home).connect()
    conn.execute("INSERT INTO send_consent_windows VALUES ('a', 'a', NULL)")
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute("INSERT INTO send_consent_windows VALUES ('b', 'b', NULL)")
    conn.execute("INSERT INTO send_consent_windows VALUES ('c', 'c', 'd')")
    conn.close()


def test_sm51_sm97_migration_1_to_2(home: Path) -> None:
    """SM-51 / SM-97: Migration 1 to 2."""
    store = MetricsStore(home)
    store.directory.mkdir(parents=True)
    raw = sqlite3.connect(store.db_path)
    raw.executescript("""
        CREATE TABLE telemetry_state (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        INSERT INTO telemetry_state VALUES ('schema_version', '1'), ('install_id', '11111111-2222-4333-8444-555555555555');
        CREATE TABLE counter_aggregates (period_start TEXT NOT NULL, metric_name TEXT NOT NULL,
            hermes_version TEXT NOT NULL, dimensions_json TEXT NOT NULL, value INTEGER NOT NULL,
            packaged_value INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (period_start, metric_name, hermes_version, dimensions_json));
        INSERT INTO counter_aggregates VALUES ('2026-08-30', 'hermes.task_run.started', '0.9.0',
            '{"entrypoint":"interactive","execution_surface":"cli"}', 4, 1);
        CREATE TABLE package_outbox (package_id TEXT PRIMARY KEY, period_start TEXT NOT NULL, period_end TEXT NOT NULL,
            payload_json TEXT NOT NULL, created_at TEXT NOT NULL, exported_at TEXT NULL);
        INSERT INTO package_outbox VALUES ('p1', '2026-08-29T00:00:00.000000Z', '2026-08-30T00:00:00.000000Z', '{}',
            '2026-08-30T01:00:00.000000Z', '2026-08-30T01:00:00.000000Z');
    """)
    raw.commit()
    raw.close()
    store.forget_schema_cache()
    (row,) = rows(store)
    assert (row["hermes_version"], row["os_family"], row["architecture"], row["install_method"],
            row["value"], row["packaged_value"]) == ("0.9.0", "unknown", "unknown", "unknown", 4, 1)
    conn = store.connect()
    assert st.get_state(conn, "schema_version") == "2"
    assert st.get_state(conn, "install_id") == "11111111-2222-4333-8444-555555555555"
    columns = {r[1] for r in conn.execute("PRAGMA table_info(package_outbox)")}
    assert {"send_state", "send_attempts", "sent_install_id", "claim_token", "next_attempt_at"} <= columns
    # SM-52: consent_marks created on a store with packages starts at the latest period_end
    assert conn.execute("SELECT stamp FROM consent_marks WHERE name = 'data'").fetchone() == (
        "2026-08-30T00:00:00.000000Z",)
    conn.close()


def test_sm52_newer_schema_versions_are_refused(home: Path) -> None:
    store = MetricsStore(home)
    conn = store.connect()
    conn.execute("UPDATE telemetry_state SET value = '3' WHERE key = 'schema_version'")
    conn.close()
    store.forget_schema_cache()
    with pytest.raises(StoreError, match="newer"):
        store.connect()


def test_sm49_counters_upsert_transactionally(home: Path) -> None:
    """SM-49: Counters upsert transactionally."""
    conn = MetricsStore(home).connect()
    with st.transaction(conn):
        st.apply_ops(conn, [("inc", "2026-09-01", "hermes.tool_call.count", "{}", 1)] * 3
                     + [("inc", "2026-09-02", "hermes.tool_call.count", "{}", 2)], RESOURCE)
    with pytest.raises(RuntimeError):
        with st.transaction(conn):
            st.increment(conn, "2026-09-01", "hermes.tool_call.count", "{}", 100, RESOURCE)
            raise RuntimeError("rolled back")
    values = dict(conn.execute("SELECT period_start, value FROM counter_aggregates").fetchall())
    assert values == {"2026-09-01": 3, "2026-09-02": 2}
    conn.close()


def test_sm34_sm97_latch_in_the_future_is_rebased_without_counting(home: Path) -> None:
    conn = MetricsStore(home).connect()
    with st.transaction(conn):
        st._set_state(conn, st.CLIENT_ACTIVE_KEY, stamp(T0 + timedelta(days=400)))
    with st.transaction(conn):
        assert not st.client_active(conn, T0, RESOURCE)
    assert st.get_state(conn, st.CLIENT_ACTIVE_KEY) == stamp(T0)
    for hours, counted in ((1, False), (23.99, False), (24, True), (30, False)):
        with st.transaction(conn):
            assert st.client_active(conn, T0 + timedelta(hours=hours), RESOURCE) is counted, hours
    conn.close()


def test_sm68_install_id_first_writer_wins(home: Path) -> None:
    store = MetricsStore(home)
    first, second = store.connect(), store.connect()
    with st.transaction(first):
        a = st.ensure_install_id(first)
    with st.transaction(second):
        b = st.ensure_install_id(second)
    assert a == b and len(a) == 36 and a[14] == "4"
    first.close()
    second.close()


def test_sm34_sm97_rolling_latch_across_threads(home: Path) -> None:
    store = MetricsStore(home)
    store.connect().close()
    barrier = threading.Barrier(8)
    results: list[bool] = []

    def attempt() -> None:
        conn = store.connect()
        barrier.wait()
        while True:
            try:
                with st.transaction(conn):
                    results.append(st.client_active(conn, T0, RESOURCE))
                break
            except st.StoreBusy:
                continue
        conn.close()

    threads = [threading.Thread(target=attempt) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [False] * 7 + [True]
    assert totals(store, "hermes.client.active") == 1


# --------------------------------------------------------------------------- across processes


def _run_turns(home: str, turns: int, barrier: object) -> None:
    """Child process: a real host on its own engine with shared metrics, ``turns`` turns, then close."""
    from hermes_pipeline import Engine, Host
    from hermes_pipeline.shared_metrics import attach_shared_metrics

    engine = Engine().child()
    metrics = attach_shared_metrics(engine, home, enabled=True, resource=RESOURCE)
    assert metrics is not None
    host = Host(engine, platform="cli", model="m", provider="p")
    barrier.wait()  # type: ignore[attr-defined]
    with host.session() as session:
        for _ in range(turns):
            with session.turn("q") as turn:
                turn.complete("ok")
    assert metrics.flush(30)
    metrics.close(30)
    assert metrics.subscriber.stats.dropped == 0, metrics.subscriber.stats


def _spawn(target: object, args_of: list[tuple[object, ...]]) -> None:
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=target, args=args) for args in args_of]  # type: ignore[arg-type]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0, p.exitcode


def test_sm34_sm97_processes_starting_at_once_count_client_active_once(home: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(5)
    _spawn(_run_turns, [(str(home), 1, barrier) for _ in range(5)])
    store = MetricsStore(home)
    assert totals(store, "hermes.client.active") == 1
    assert totals(store, "hermes.client.first_usable") == 1
    assert totals(store, "hermes.task_run.finished") == 5


def test_sm47_sm49_concurrent_increments_from_several_processes_are_exact(home: Path) -> None:
    """SM-47 / SM-49: Concurrent increments from several processes are exact."""
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(4)
    _spawn(_run_turns, [(str(home), 60, barrier) for _ in range(4)])
    store = MetricsStore(home)
    assert totals(store, "hermes.task_run.started") == 240
    assert totals(store, "hermes.task_run.finished") == 240
    conn = store.connect()
    assert conn.execute("SELECT COUNT(*) FROM local_latency_samples WHERE metric_name = 'task'").fetchone()[0] == 240
    conn.close()
    assert json.loads(rows(store, "hermes.task_run.started")[0]["dimensions_json"]) == {
        "entrypoint": "interactive", "execution_surface": "cli"}


class _LockedAtFirst:
    """A connection whose first ``busy`` journal-mode statements fail as SQLite's do while another process
    switches the same new file to WAL (no busy handler runs for it)."""

    def __init__(self, conn: sqlite3.Connection, busy: int, error: str = "database is locked") -> None:
        self.conn, self.busy, self.error, self.calls = conn, busy, error, 0

    def execute(self, sql: str, *args: object) -> object:
        if sql.startswith("PRAGMA journal_mode"):
            self.calls += 1
            if self.busy:
                self.busy -= 1
                raise sqlite3.OperationalError(self.error)
        return self.conn.execute(sql, *args)


def test_sm47_switching_to_wal_waits_out_another_process_switching_the_same_file(tmp_path: Path,
                                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """SM-47 (found flaky: five processes creating the store at once): "database is locked" from the WAL
    switch is retried within the schema busy timeout; another error, or a lock that outlasts it, is raised."""
    conn = sqlite3.connect(tmp_path / "a.sqlite3", isolation_level=None)
    locked = _LockedAtFirst(conn, busy=3)
    st._use_wal(locked)  # type: ignore[arg-type]
    assert locked.calls == 5  # three refusals, then the read and the switch
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    broken = _LockedAtFirst(sqlite3.connect(tmp_path / "b.sqlite3", isolation_level=None), busy=1, error="disk I/O error")
    with pytest.raises(sqlite3.OperationalError, match="disk I/O"):
        st._use_wal(broken)  # type: ignore[arg-type]
    assert broken.calls == 1
    monkeypatch.setattr(st, "SCHEMA_BUSY_MS", 300)  # a lock that outlasts the (shortened) timeout
    forever = _LockedAtFirst(sqlite3.connect(tmp_path / "c.sqlite3", isolation_level=None), busy=10**9)
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        st._use_wal(forever)  # type: ignore[arg-type]
    assert 3 < forever.calls < 100
