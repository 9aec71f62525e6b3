"""Delivery timing (spec 06 BOOK-42) and noise control (BOOK-44) of the evaluator, every simulated
minute over seeded store histories with a frozen, injected clock."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

from hypothesis import given, settings as hsettings, strategies as st

from hermes_pipeline.alerts import state
from hermes_pipeline.alerts.evaluator import run_once
from tests.alerts._support import T0, Recorder, llm, minutes, no_sleep, settings, skill_run, store, task


def _run(conn, now: datetime, rec: Recorder, **cfg) -> object:
    return run_once(conn, now, settings(**cfg), [rec], runner=lambda cmd: "", sleep=no_sleep, local=timezone.utc)


def _outage(conn, at: datetime) -> None:
    for i in range(10):
        llm(conn, at - timedelta(seconds=10 - i), status="error", error_type="http_503")


def test_book42_critical_goes_out_in_the_run_that_detects_it(tmp_path: Path) -> None:
    """BOOK-42: critical within 60 s of detection: the same one-minute evaluation sends it."""
    conn, rec = store(tmp_path), Recorder()
    _run(conn, T0, rec)
    assert rec.messages == []
    _outage(conn, T0 + timedelta(seconds=30))
    _run(conn, T0 + minutes(1), rec)
    assert rec.alerts() == [("alert", "A-C3", "llm")] and rec.messages[0].severity == "critical"


def test_book44_one_notification_while_firing_then_renotify_after_30_min_and_one_resolved(tmp_path: Path) -> None:
    """BOOK-44: one per (rule, key) while firing, again after 30 min (critical), one 'resolved' when it clears."""
    conn, rec = store(tmp_path), Recorder()
    _outage(conn, T0)
    for m in range(0, 45):
        _run(conn, T0 + minutes(m), rec)
    assert rec.alerts() == [("alert", "A-C3", "llm"), ("renotify", "A-C3", "llm")]
    llm(conn, T0 + minutes(45))  # a success: the outage is over
    for m in range(45, 60):
        _run(conn, T0 + minutes(m), rec)
    assert rec.alerts()[-1] == ("resolved", "A-C3", "llm") and len(rec.alerts()) == 3
    assert rec.messages[-1].title.startswith("Resolved:")


def test_book42_medium_alerts_are_batched_five_minutes_after_the_first(tmp_path: Path) -> None:
    """BOOK-42: medium collected for 5 min after the first firing and sent as one batch (<= 15 min)."""
    conn, rec = store(tmp_path), Recorder()
    for i in range(5):
        skill_run(conn, "pdf", T0 - minutes(5 - i * 0.5), "failed")
    sent_at: list[int] = []
    for m in range(0, 20):
        if m == 3:  # a second medium alert appears 3 minutes later
            for i in range(5):
                skill_run(conn, "web", T0 + minutes(2) + timedelta(seconds=i), "failed")
        before = len(rec.messages)
        _run(conn, T0 + minutes(m), rec)
        if len(rec.messages) > before:
            sent_at.append(m)
    assert sent_at == [5]
    assert rec.messages[0].kind == "batch" and rec.messages[0].severity == "medium"
    assert sorted(rec.alerts()) == [("alert", "A-M1", "pdf"), ("alert", "A-M1", "web")]
    assert 5 <= sent_at[0] <= 15


def test_book44_medium_renotify_after_four_hours(tmp_path: Path) -> None:
    """BOOK-44: a still-firing medium alert is sent again after 4 h, not before."""
    conn, rec = store(tmp_path), Recorder()
    for i in range(5):
        skill_run(conn, "pdf", T0 - minutes(1) + timedelta(seconds=i), "failed")
    for m in range(0, 5 + 240 + 2, 1):
        _run(conn, T0 + minutes(m), rec)
    assert rec.alerts() == [("alert", "A-M1", "pdf"), ("renotify", "A-M1", "pdf")]


def test_book44_state_survives_a_restart(tmp_path: Path) -> None:
    """BOOK-44: the state lives in alert_state: a new connection (restarted evaluator) sends nothing twice."""
    conn, rec = store(tmp_path), Recorder()
    _outage(conn, T0)
    _run(conn, T0, rec)
    conn.close()
    again = store(tmp_path)
    for m in range(1, 20):
        _run(again, T0 + minutes(m), rec)
    assert rec.alerts() == [("alert", "A-C3", "llm")]
    assert state.rows(again)[0].status == "firing"


def test_book45_failed_notifier_keeps_the_alert_pending_and_retries(tmp_path: Path) -> None:
    """BOOK-45: a failing notifier is retried with backoff, reported, never raises; the alert stays pending."""
    conn, rec = store(tmp_path), Recorder(down=True)
    _outage(conn, T0)
    report = _run(conn, T0, rec)
    assert rec.attempts == 3 and rec.messages == []
    assert report.failed and "receiver is down" in report.failed[0]["errors"][0]
    assert state.rows(conn)[0].status == "pending"
    assert state.sent_last_hour(conn, T0) == 0  # a failed send does not use up the hourly cap
    rec.down = False
    _run(conn, T0 + minutes(1), rec)
    assert rec.alerts() == [("alert", "A-C3", "llm")]


def test_book44_expired_claim_of_a_dead_evaluator_is_taken_back(tmp_path: Path) -> None:
    """BOOK-44: an evaluator that died between claim and send does not lose the alert."""
    conn, rec = store(tmp_path), Recorder()
    _outage(conn, T0)
    from hermes_pipeline.alerts.rules import evaluate
    from hermes_pipeline.sinks.observability_store.db import transaction

    with transaction(conn):
        state.reconcile(conn, evaluate(conn, T0, settings()), T0, settings())
        assert state.claim(conn, T0, settings())  # claimed, then the process "dies"
    _run(conn, T0 + minutes(5), rec)
    assert rec.messages == []  # the claim is still fresh: maybe still being sent
    _run(conn, T0 + minutes(11), rec)
    assert rec.alerts() == [("alert", "A-C3", "llm")]


def test_book44_hourly_cap_folds_the_excess_into_the_next_digest(tmp_path: Path) -> None:
    """BOOK-44: at most 10 notifications per hour; the excess appears in the next digest."""
    conn, rec = store(tmp_path), Recorder()
    for i in range(13):  # 13 task classes degrade at once: 13 medium alerts, one batch -> 1 notification
        for j in range(4):
            task(conn, f"c{i:02d}:x", T0 - minutes(1), "failed")
    cfg = {"max_per_hour": 2, "digest_time": "13:00"}
    _outage(conn, T0)  # critical 1
    _run(conn, T0, rec, **cfg)
    llm(conn, T0 + minutes(1))
    _run(conn, T0 + minutes(1), rec, **cfg)  # resolved message: notification 2
    _run(conn, T0 + minutes(6), rec, **cfg)  # the medium batch is due but the cap (2) is used up
    assert len(rec.messages) == 2
    folded = state.folded(conn)
    assert len(folded) == 13 and {r.rule for r in folded} == {"A-M2"}
    for m in range(7, 62):
        _run(conn, T0 + minutes(m), rec, **cfg)
    digest = [m for m in rec.messages if m.kind == "digest"]
    assert len(digest) == 1 and "13 alert(s) held back by the hourly cap" in digest[0].text
    assert len([m for m in rec.messages if m.kind != "digest"]) == 2
    assert state.folded(conn) == []


@hsettings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(min_value=0, max_value=179), st.sampled_from(["outage", "ok", "skill", "fix"])),
                max_size=25), st.integers(min_value=1, max_value=10), st.sets(st.integers(0, 179), max_size=40))
def test_book44_properties_never_more_than_one_per_key_per_cooldown_nor_the_hourly_cap(
        tmp_path_factory, events: list[tuple[int, str]], cap: int, outages: set[int]) -> None:
    """BOOK-44 properties over 3 simulated hours with random incidents and notifier outages: per (rule, key)
    at most one alert/renotify per cooldown; never more than the cap in any 60-minute window."""
    conn, rec = store(tmp_path_factory.mktemp("p")), Recorder()
    by_minute: dict[int, list[str]] = {}
    for minute, what in events:
        by_minute.setdefault(minute, []).append(what)
    log: list[tuple[int, str, str, str]] = []
    message_minutes: list[int] = []
    for m in range(180):
        now = T0 + minutes(m)
        for what in by_minute.get(m, []):
            if what == "outage":
                _outage(conn, now)
            elif what == "ok":
                llm(conn, now)
            elif what == "skill":
                for i in range(5):
                    skill_run(conn, "pdf", now - timedelta(seconds=5 - i), "failed")
            else:
                skill_run(conn, "pdf", now, "success")
        rec.down = m in outages
        before = len(rec.messages)
        _run(conn, now, rec, max_per_hour=cap)
        for message in rec.messages[before:]:
            if message.kind != "digest":
                message_minutes.append(m)
            for item in message.items:
                if "rule" in item:
                    log.append((m, str(item["kind"]), str(item["rule"]), str(item["key"])))
    for start in range(180):
        assert sum(1 for t in message_minutes if start <= t < start + 60) <= cap
    for rule, key in {(r, k) for _, _, r, k in log}:
        fires = [t for t, kind, r, k in log if (r, k) == (rule, key) and kind in ("alert", "renotify")]
        cooldown = 30 if rule.startswith("A-C") else 240
        for a, b in zip(fires, fires[1:]):
            between = [kind for t, kind, r, k in log if (r, k) == (rule, key) and a <= t <= b]
            if "resolved" not in between:  # a new incident after a "resolved" may come sooner
                assert b - a >= cooldown, (rule, key, fires)


def test_book45_partial_failure_retries_only_the_notifier_that_failed(tmp_path: Path) -> None:
    """BOOK-45: with two notifiers, one down: the healthy one is told once, the other when it is back."""
    conn, ok, flaky = store(tmp_path), Recorder(name="ok"), Recorder(name="flaky", down=True)
    _outage(conn, T0)
    cfg = settings()
    for m in range(0, 4):
        flaky.down = m < 3
        run_once(conn, T0 + minutes(m), cfg, [ok, flaky], runner=lambda cmd: "", sleep=no_sleep, local=timezone.utc)
    assert ok.alerts() == [("alert", "A-C3", "llm")]
    assert flaky.alerts() == [("alert", "A-C3", "llm")]
    assert state.rows(conn)[0].status == "firing"
    assert conn.execute("SELECT COUNT(*) FROM alert_state WHERE rule = '~partial'").fetchone()[0] == 0
