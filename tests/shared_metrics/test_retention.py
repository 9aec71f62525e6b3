"""Local retention of exported history (SM-63, SM-64)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline.shared_metrics import MetricsStore
from hermes_pipeline.shared_metrics import packages as pk
from hermes_pipeline.shared_metrics import retention
from hermes_pipeline.shared_metrics import store as st
from hermes_pipeline.shared_metrics.clock import stamp

from .conftest import RESOURCE, T0, rows
from .test_packages import TOOL, add


def _package_rows(store: MetricsStore) -> dict[str, Any]:
    conn = store.connect()
    found = {r[0]: r[1:] for r in conn.execute("SELECT package_id, exported_at, send_state FROM package_outbox")}
    conn.close()
    return found


def test_sm63_sm64_prunes_only_exported_history(home: Path) -> None:
    store = MetricsStore(home)
    old_day, now = T0, T0 + timedelta(days=40)
    add(store, "2026-08-31")
    add(store, "2026-09-01")
    first = pk.package_and_export(store, old_day)  # exported 40 days before "now"
    assert len(first.exported) == 2
    conn = store.connect()
    with st.transaction(conn):
        conn.execute("UPDATE package_outbox SET send_state = 'rejected'")  # send state never extends retention
        # an old package that never made it to disk, and its counters
        st.increment(conn, "2026-08-20", "hermes.tool_call.count", TOOL, 2, RESOURCE)
        conn.execute("UPDATE counter_aggregates SET packaged_value = value WHERE period_start = '2026-08-20'")
        conn.execute("INSERT INTO package_outbox (package_id, period_start, period_end, payload_json, created_at) "
                     "VALUES ('unexported', '2026-08-20T00:00:00.000000Z', '2026-08-21T00:00:00.000000Z', '{}', ?)",
                     (stamp(old_day),))
        st.increment(conn, "2026-08-19", "hermes.tool_call.count", TOOL, 5, RESOURCE)  # pending delta, old period
        conn.executemany("INSERT INTO local_latency_samples VALUES ('task', ?, 5)",
                         [(stamp(old_day),), (stamp(now - timedelta(days=1)),)])
    conn.close()
    add(store, "2026-10-10")  # recent counter, pending
    removed = retention.prune(store, store.connect(), now)
    assert removed == {"packages": 2, "files": 2, "samples": 1, "counters": 2}
    assert set(_package_rows(store)) == {"unexported"}
    assert list(store.outbox.glob("*.json")) == []
    assert sorted((r["period_start"], r["value"] - r["packaged_value"]) for r in rows(store)) == [
        ("2026-08-19", 5), ("2026-08-20", 0), ("2026-10-10", 1)]


def test_sm63_recent_history_is_kept(home: Path) -> None:
    store = MetricsStore(home)
    add(store, "2026-09-01")
    (package_id,) = pk.package_and_export(store, T0).exported
    assert retention.prune(store, store.connect(), T0 + timedelta(days=29, hours=23))["packages"] == 0
    assert (store.outbox / f"{package_id}.json").exists()
    assert retention.prune(store, store.connect(), T0 + timedelta(days=30, seconds=1))["packages"] == 1
    assert not (store.outbox / f"{package_id}.json").exists()


def test_sm64_a_prune_failure_never_fails_the_export(home: Path, monkeypatch: pytest.MonkeyPatch,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    store = MetricsStore(home)
    add(store, "2026-09-01")

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise OSError("disk on fire")

    monkeypatch.setattr(retention, "transaction", broken)
    with caplog.at_level("WARNING", logger="hermes_pipeline.shared_metrics"):
        result = pk.package_and_export(store, T0)
    assert result.error is None and result.exported and result.pruned == {}
    assert any("retention prune failed" in r.message for r in caplog.records)
    assert all(exported for exported, _ in _package_rows(store).values())
