"""The alert rules of spec 06 BOOK-43 over seeded store histories with a frozen clock."""

from __future__ import annotations

from datetime import timedelta, timezone
from pathlib import Path

from hypothesis import given, settings as hsettings, strategies as st

from hermes_pipeline.alerts import rules
from hermes_pipeline.alerts.digest import daily_digest
from tests.alerts._support import T0, llm, memory_write, minutes, settings, skill_change, skill_run, store, task


def _baseline(conn, days: int, daily_cost: float) -> None:
    today = T0.replace(hour=0, minute=0)
    for d in range(1, days + 1):
        llm(conn, today - timedelta(days=d) + timedelta(hours=10), cost=daily_cost)


def test_book43_a_c1_fires_above_three_times_the_daily_average(tmp_path: Path) -> None:
    """BOOK-43 A-C1: last-hour cost > 3 x mean daily cost of the 14 days before today (idle days are 0)."""
    conn = store(tmp_path)
    _baseline(conn, 7, 2.0)  # 14 USD over 14 days: mean 1.0
    llm(conn, T0 - minutes(30), cost=3.0)
    assert rules.cost_spike(conn, T0, settings()) == []  # 3.0 is not more than 3 x 1.0
    llm(conn, T0 - minutes(10), cost=0.01)
    found = rules.cost_spike(conn, T0, settings())
    assert [(f.rule, f.key, f.severity) for f in found] == [("A-C1", "cost", "critical")]
    assert found[0].details["daily_average_usd"] == 1.0
    assert rules.cost_spike(conn, T0 + minutes(60), settings()) == []  # the spend left the 60-minute window


def test_book43_a_c1_inactive_until_three_active_days(tmp_path: Path) -> None:
    """BOOK-43 A-C1: inactive until at least 3 baseline days had activity and the mean is above 0."""
    conn = store(tmp_path)
    _baseline(conn, 2, 5.0)
    llm(conn, T0 - minutes(5), cost=100.0)
    assert rules.cost_spike(conn, T0, settings()) == []
    _baseline(conn, 3, 0.0)  # a third active day, but costs nothing: with days 1-2 the mean is still > 0
    assert len(rules.cost_spike(conn, T0, settings())) == 1
    other = store(tmp_path / "b")
    _baseline(other, 5, 0.0)
    llm(other, T0 - minutes(5), cost=100.0)
    assert rules.cost_spike(other, T0, settings()) == []  # mean 0: inactive


def test_book43_a_c1_today_and_older_days_are_not_baseline(tmp_path: Path) -> None:
    """BOOK-43 A-C1: only the 14 complete days before today form the average."""
    conn = store(tmp_path)
    _baseline(conn, 3, 1.0)
    llm(conn, T0 - timedelta(days=20), cost=1000.0)  # outside the 14 days
    llm(conn, T0.replace(hour=1), cost=1000.0)  # today, outside the 60-minute window
    llm(conn, T0 - minutes(1), cost=0.7)  # mean 3/14: 0.7 > 3 x 0.214 = 0.643
    assert len(rules.cost_spike(conn, T0, settings())) == 1


@hsettings(max_examples=60, deadline=None)
@given(st.integers(min_value=1, max_value=40), st.floats(min_value=0.0, max_value=10.0))
def test_book43_a_c1_threshold_property(tmp_path_factory, factor_tenths: int, recent: float) -> None:
    """BOOK-43 A-C1: fires exactly when recent cost > factor x mean (mean 1.0 here)."""
    conn = store(tmp_path_factory.mktemp("c1"))
    _baseline(conn, 14, 1.0)
    llm(conn, T0 - minutes(59), cost=recent)
    factor = factor_tenths / 10
    fired = bool(rules.cost_spike(conn, T0, settings(cost_spike_factor=factor)))
    assert fired == (recent > factor * 1.0)


def test_book43_a_c3_ten_consecutive_failures(tmp_path: Path) -> None:
    """BOOK-43 A-C3: the 10 most recent LLM calls (by end time) all failed."""
    conn = store(tmp_path)
    llm(conn, T0 - minutes(20))
    for i in range(9):
        llm(conn, T0 - minutes(10 - i), status="error", error_type="http_503")
    assert rules.llm_outage(conn, T0, settings()) == []
    llm(conn, T0 - minutes(0.5), status="error", error_type="auth")
    found = rules.llm_outage(conn, T0, settings())
    assert [(f.rule, f.key) for f in found] == [("A-C3", "llm")]
    assert found[0].details["error_types"] == ["auth", "http_503"]
    llm(conn, T0)  # one success clears it
    assert rules.llm_outage(conn, T0, settings()) == []


def test_book43_a_m1_skill_failing_five_in_a_row(tmp_path: Path) -> None:
    """BOOK-43 A-M1: the 5 most recent runs of one skill all failed; one key per skill."""
    conn = store(tmp_path)
    for i in range(5):
        skill_run(conn, "pdf", T0 - minutes(10 - i), "failed")
        skill_run(conn, "web", T0 - minutes(10 - i), "failed" if i != 2 else "success")
    assert [(f.rule, f.key) for f in rules.skill_failing(conn, T0, settings())] == [("A-M1", "pdf")]
    skill_run(conn, "pdf", T0, "success")
    assert rules.skill_failing(conn, T0, settings()) == []


def test_book43_a_m2_task_class_degraded(tmp_path: Path) -> None:
    """BOOK-43 A-M2: success rate < 50% in the last 60 min with at least 4 runs."""
    conn = store(tmp_path)
    for i, outcome in enumerate(["failed", "failed", "success"]):
        task(conn, "cli:chat", T0 - minutes(30 + i), outcome)
    assert rules.task_class_degraded(conn, T0, settings()) == []  # 3 runs: too few
    task(conn, "cli:chat", T0 - minutes(5), "timed_out")
    task(conn, "cron:job", T0 - minutes(5), "success")
    found = rules.task_class_degraded(conn, T0, settings())
    assert [(f.rule, f.key) for f in found] == [("A-M2", "cli:chat")]
    task(conn, "cli:chat", T0 - minutes(1), "success")  # 2 of 5: still below 50%
    assert len(rules.task_class_degraded(conn, T0, settings())) == 1
    task(conn, "cli:chat", T0 - minutes(1), "success")  # 3 of 6: 50% is not below 50%
    assert rules.task_class_degraded(conn, T0, settings()) == []


@hsettings(max_examples=60, deadline=None)
@given(st.lists(st.booleans(), min_size=0, max_size=12), st.integers(min_value=1, max_value=90))
def test_book43_a_m2_window_property(tmp_path_factory, outcomes: list[bool], age_minutes: int) -> None:
    """BOOK-43 A-M2: only runs ended inside the window count; fires iff >= 4 runs and rate < 0.5."""
    conn = store(tmp_path_factory.mktemp("m2"))
    for ok in outcomes:
        task(conn, "gw:msg", T0 - minutes(age_minutes), "success" if ok else "failed")
    fired = bool(rules.task_class_degraded(conn, T0, settings()))
    inside = age_minutes < 60
    expected = inside and len(outcomes) >= 4 and sum(outcomes) / len(outcomes) < 0.5
    assert fired == expected


def test_book43_a_m3_write_storm_any_ten_minute_window(tmp_path: Path) -> None:
    """BOOK-43 A-M3: >= 100 memory + skill writes within any 10-minute window."""
    conn = store(tmp_path)
    for i in range(60):
        memory_write(conn, T0 - minutes(15) + timedelta(seconds=5 * i))
    for i in range(39):
        skill_change(conn, "s", i + 1, "refine", T0 - minutes(12) + timedelta(seconds=5 * i))
    assert rules.write_storm(conn, T0, settings()) == []  # 99
    skill_change(conn, "s", 40, "refine", T0 - minutes(9))
    found = rules.write_storm(conn, T0, settings())
    assert [(f.rule, f.key, f.details["writes"]) for f in found] == [("A-M3", "writes", 100)]
    spread = store(tmp_path / "spread")
    for i in range(150):  # 150 writes spread over 30 minutes: never 100 in 10 minutes
        memory_write(spread, T0 - minutes(30) + timedelta(seconds=12 * i))
    assert rules.write_storm(spread, T0, settings()) == []


def test_book43_a_c2_unit_failed_or_restarting(tmp_path: Path) -> None:
    """BOOK-43 A-C2: the configured unit is failed, or restarted >= 3 times in 10 min (injected systemctl)."""
    calls: list[list[str]] = []

    def runner(cmd):
        calls.append(list(cmd))
        return "ActiveState=failed\nSubState=failed\nNRestarts=7\n"

    status = rules.unit_status("hermes.service", runner)
    assert calls == [["systemctl", "show", "hermes.service", "-p", "ActiveState,SubState,NRestarts"]]
    cfg = settings(systemd_unit="hermes.service")
    assert [f.key for f in rules.agent_crashed(status, 0, "hermes.service", cfg)] == ["hermes.service"]
    active = {"ActiveState": "active", "SubState": "running", "NRestarts": "9"}
    assert rules.agent_crashed(active, 2, "hermes.service", cfg) == []
    assert len(rules.agent_crashed(active, 3, "hermes.service", cfg)) == 1
    conn = store(tmp_path)
    assert all(f.rule != "A-C2" for f in rules.evaluate(conn, T0, settings(), 5, status))  # no unit: disabled


def test_book43_a_l1_digest_of_the_previous_day(tmp_path: Path) -> None:
    """BOOK-43 A-L1: tasks, success rate, cost, skill changes and top 5 error patterns of the day."""
    conn = store(tmp_path)
    day = T0.replace(hour=0) - timedelta(days=1)
    for i in range(3):
        task(conn, "cli:chat", day + timedelta(hours=i + 1), "success")
    task(conn, "cli:chat", day + timedelta(hours=5), "failed", "tool_error")
    task(conn, "cli:chat", T0, "failed", "not_yesterday")
    llm(conn, day + timedelta(hours=2), cost=1.5)
    llm(conn, day + timedelta(hours=3), status="error", error_type="http_429", cost=0.5)
    skill_change(conn, "a", 1, "create", day + timedelta(hours=4))
    skill_change(conn, "a", 2, "refine", day + timedelta(hours=6))
    skill_change(conn, "b", 1, "deprecate", day + timedelta(hours=7))
    skill_run(conn, "a", day + timedelta(hours=8), "failed")
    d = daily_digest(conn, day, day + timedelta(days=1))
    assert (d["tasks"], d["success_rate"], d["cost_usd"]) == (4, 0.75, 2.0)
    assert d["skills"] == {"create": 1, "refine": 1, "deprecate": 1, "restore": 0}
    assert {e["pattern"] for e in d["top_errors"]} == {"task cli:chat: tool_error", "llm openai: http_429",
                                                       "skill a: failed"}
    assert d["day_start"] == "2026-03-15 00:00:00" and day.tzinfo is timezone.utc


@hsettings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=1800), max_size=60), st.integers(min_value=1, max_value=20))
def test_book43_a_m3_any_window_property(tmp_path_factory, ages_s: list[int], threshold: int) -> None:
    """BOOK-43 A-M3: fires iff some 10-minute window (within the last 20 minutes) holds >= threshold writes,
    checked against a brute-force count over every window start."""
    conn = store(tmp_path_factory.mktemp("m3"))
    for age in ages_s:
        memory_write(conn, T0 - timedelta(seconds=age))
    recent = sorted(age for age in ages_s if age < 1200)  # the rule looks back two windows
    best = max((sum(1 for b in recent if a - 600 < b <= a) for a in recent), default=0)
    fired = bool(rules.write_storm(conn, T0, settings(write_storm_count=threshold)))
    assert fired == (best >= threshold)
