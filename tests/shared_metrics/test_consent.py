"""Consent windows: the reconciler and the read-only gate (SM-86..SM-91, SM-93).

Every test runs the real store and the real reconciler; packages are inserted as the package writer
does (a ``package_outbox`` row plus the ``data`` mark raised in the same transaction).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_pipeline.shared_metrics import MetricsStore
from hermes_pipeline.shared_metrics import packages as pk
from hermes_pipeline.shared_metrics.clock import parse_stamp, stamp
from hermes_pipeline.shared_metrics.consent import CAP, is_eligible, marks, reconcile, windows
from hermes_pipeline.shared_metrics.store import transaction

from .test_packages import add

T0 = datetime(2026, 8, 1, tzinfo=UTC)


def day(n: float, hours: float = 0) -> datetime:
    return T0 + timedelta(days=n, hours=hours)


@dataclass
class World:
    """One store; observations and packages as production makes them."""

    store: MetricsStore
    packages: list[tuple[str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.conn = self.store.connect()

    def observe(self, on: bool, when: datetime) -> None:
        reconcile(self.conn, on, when)

    def package(self, start: datetime, end: datetime) -> tuple[str, str]:
        period = (stamp(start), stamp(end))
        with transaction(self.conn):
            self.conn.execute("INSERT INTO package_outbox (package_id, period_start, period_end, payload_json, "
                              "created_at, exported_at) VALUES (?, ?, ?, '{}', ?, ?)",
                              (str(uuid.uuid4()), *period, period[1], period[1]))
            pk.raise_data_mark(self.conn, period[1])
        self.packages.append(period)
        return period

    def daily(self, n: int) -> tuple[str, str]:
        return self.package(day(n), day(n + 1))

    def eligible(self, period: tuple[str, str]) -> bool:
        return is_eligible(self.conn, *period)


@pytest.fixture
def world(home: Path) -> World:
    return World(MetricsStore(home))


def _world(tmp: Path) -> World:
    home = tmp / uuid.uuid4().hex
    home.mkdir()
    return World(MetricsStore(home))


# --------------------------------------------------------------------------- SM-91 P1..P13


def test_sm91_p1_on_off_on(world: World) -> None:
    world.observe(True, day(0))
    first = []
    for n in range(5):
        first.append(world.daily(n))
        world.observe(True, day(n + 1))
    world.observe(False, day(5))
    gap = [world.daily(n) for n in range(5, 10)]
    world.observe(True, day(10))
    last = []
    for n in range(10, 15):
        last.append(world.daily(n))
        world.observe(True, day(n + 1))
    assert all(world.eligible(p) for p in first + last)
    assert not any(world.eligible(p) for p in gap)


def test_sm91_p2_long_silence_then_off(world: World) -> None:
    world.observe(True, day(0))
    early = world.package(day(0, 1), day(0, 2))
    world.observe(True, day(0, 6))
    silent = [world.daily(n) for n in (1, 10, 20, 30, 40, 50, 60, 70, 89)]
    for when, on in ((day(90), False), (day(91), True), (day(92), True)):
        world.observe(on, when)
        assert world.eligible(early)
        assert not any(world.eligible(p) for p in silent)


def test_sm91_p3_glitched_future_observation_then_honest_off(world: World) -> None:
    world.observe(True, day(0))
    world.observe(True, datetime(2099, 1, 1, tzinfo=UTC))
    world.observe(False, day(1))
    later = [world.daily(n) for n in range(2, 10)]
    assert not any(world.eligible(p) for p in later)
    assert windows(world.conn)[0].closed_at == stamp(day(1))


def test_sm91_p4_forward_glitch_moves_obs_at_most_30_days(world: World) -> None:
    world.observe(True, day(0))
    world.observe(True, datetime(2099, 1, 1, tzinfo=UTC))
    assert marks(world.conn)["obs"] <= stamp(day(30))
    fresh = world.package(day(30, 1), day(30, 2))
    assert not world.eligible(fresh)
    world.observe(True, day(30, 3))
    assert world.eligible(fresh)


def test_sm91_p5_rolled_back_clock_cannot_open_under_existing_packages(world: World) -> None:
    world.observe(True, day(0))
    world.observe(True, day(5))
    world.observe(False, day(5))
    inside = [world.package(day(5, h), day(5, h + 1)) for h in (1, 2, 3)]
    for when in (day(-12), day(-11), day(20), day(21)):
        world.observe(True, when)
        assert not any(world.eligible(p) for p in inside)


def test_sm91_p6_reopened_window_covers_new_packages(world: World) -> None:
    for on, when in ((True, day(0)), (False, day(5)), (True, day(-12)), (True, day(20))):
        world.observe(on, when)
    fresh = world.package(day(21), day(21, 4))
    world.observe(True, day(22))
    assert world.eligible(fresh)


def test_sm91_p7_intra_day_refusal_holds_back_the_whole_day(world: World) -> None:
    for on, when in ((True, day(0)), (True, day(10, 9)), (False, day(10, 9)), (True, day(10, 18)),
                     (True, day(11, 2))):
        world.observe(on, when)
    assert not world.eligible(world.daily(10))


def test_sm91_p8_repeated_observations_make_exactly_two_windows(world: World) -> None:
    for on, when in [(True, day(0))] * 4 + [(False, day(2))] + [(False, day(3))] * 5 + [(True, day(4))] \
            + [(True, day(5))] * 3:
        world.observe(on, when)
    assert len(windows(world.conn)) == 2


def test_sm91_p9_obs_never_moves_backwards(world: World) -> None:
    world.observe(True, day(5))
    world.observe(True, day(0))
    assert marks(world.conn)["obs"] == stamp(day(5))


def test_sm91_p10_production_packaging_raises_the_data_mark(world: World) -> None:
    add(world.store, "2026-08-03")  # counters for "yesterday"
    pk.package_and_export(world.store, day(3, 10))
    assert marks(world.conn)["data"] >= stamp(day(3))


def test_sm91_p11_evaluating_the_gate_is_read_only(world: World) -> None:
    world.observe(True, day(0))
    period = world.package(day(0, 1), day(0, 2))
    world.observe(True, day(1))
    before = (windows(world.conn), marks(world.conn))
    assert [world.eligible(period) for _ in range(10)] == [True] * 10
    assert (windows(world.conn), marks(world.conn)) == before


def test_sm91_p12_sm93_no_window_means_not_eligible(world: World) -> None:
    assert not world.eligible(world.daily(0))


def test_sm91_p13_one_heartbeat_of_latency(world: World) -> None:
    world.observe(True, day(0))
    period = world.package(day(0, 1), day(0, 2))
    assert not world.eligible(period)
    world.observe(True, day(0, 3))
    assert world.eligible(period)


def test_sm90_head_and_tail_of_one_period_are_gated_together(world: World) -> None:
    """SM-90: Head and tail of one period are gated together."""
    world.observe(True, day(0))
    head = world.daily(1)  # created on day 1
    tail = world.daily(1)  # the tail of day 1, created on day 2
    assert world.eligible(head) == world.eligible(tail) is False
    world.observe(True, day(2, 1))
    assert world.eligible(head) == world.eligible(tail) is True


# --------------------------------------------------------------------------- properties

STEP = st.one_of(
    st.tuples(st.just("obs"), st.booleans(), st.integers(-40 * 24, 60 * 24)),  # observation, clock offset (h)
    st.tuples(st.just("pkg"), st.integers(-3, 1), st.integers(1, 24)),  # package: start day offset, hours long
    st.tuples(st.just("tick"), st.integers(0, 24 * 45), st.just(0)),  # honest time passing (hours)
)


@dataclass
class Model:
    """SM-87 written out directly, to check the SQL implementation against."""

    obs: datetime | None = None
    data: datetime | None = None
    wins: list[list[datetime | None]] = field(default_factory=list)

    def observe(self, on: bool, now: datetime) -> None:
        new = now if self.obs is None else min(now, self.obs + CAP)
        self.obs = new if self.obs is None else max(self.obs, new)
        open_ = self.wins[-1] if self.wins and self.wins[-1][2] is None else None
        if on and open_ is None:
            start = max(self.obs, self.data) if self.data is not None else self.obs
            self.wins.append([start, start, None])
        elif on and open_ is not None:
            open_[1] = max(open_[1], self.obs)  # type: ignore[type-var]
        elif open_ is not None:
            open_[2] = min(open_[1], now)  # type: ignore[type-var]

    def eligible(self, start: datetime, end: datetime) -> bool:
        return any(w[0] <= start and end <= (w[2] or w[1]) for w in self.wins)  # type: ignore[operator]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(STEP, min_size=1, max_size=40))
def test_sm87_sm88_property_reconciler_matches_the_algorithm_and_keeps_its_invariants(
        tmp_path: Path, steps: list[tuple[str, object, int]]) -> None:
    """Arbitrary on/off sequences, long silent gaps, forward clock jumps and rollbacks."""
    world, model = _world(tmp_path), Model()
    honest = day(0)
    prev_windows: list[tuple[str, str, str | None]] = []
    prev_obs: str | None = None
    for kind, a, b in steps:
        if kind == "tick":
            honest += timedelta(hours=int(a))  # type: ignore[arg-type]
            continue
        if kind == "pkg":
            start = honest.replace(hour=0, minute=0) + timedelta(days=int(a))  # type: ignore[arg-type]
            world.package(start, start + timedelta(hours=b))
            end = start + timedelta(hours=b)
            model.data = end if model.data is None else max(model.data, end)
            continue
        now = honest + timedelta(hours=b)  # the clock may be wrong in either direction
        world.observe(bool(a), now)
        model.observe(bool(a), now)
        got = [(w.opened_at, w.last_confirmed_at, w.closed_at) for w in windows(world.conn)]
        assert got == [(stamp(o), stamp(c), stamp(x) if x else None) for o, c, x in model.wins]  # type: ignore[arg-type]
        obs = marks(world.conn)["obs"]
        # the obs mark never moves backwards and at most 30 days per call (SM-87 steps 2-3)
        if prev_obs is not None:
            assert prev_obs <= obs <= stamp(parse_stamp(prev_obs) + CAP)
        prev_obs = obs
        # at most one open window; closed windows and opening stamps never change; confirmation only grows
        assert sum(w[2] is None for w in got) <= 1
        for old, new in zip(prev_windows, got, strict=False):
            assert new[0] == old[0] and new[1] >= old[1]
            if old[2] is not None:
                assert new == old
        # windows are ordered and never overlap: a new window opens after every earlier end
        for earlier, later in zip(got, got[1:], strict=False):
            assert later[0] >= (earlier[2] or earlier[1])
        if len(got) > len(prev_windows):
            assert got[-1][0] >= max((p[1] for p in world.packages), default="")  # never under existing packages
        prev_windows = got
    for period in world.packages:
        assert world.eligible(period) == model.eligible(parse_stamp(period[0]), parse_stamp(period[1]))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(STEP, min_size=1, max_size=30))
def test_sm89_property_reconciling_again_is_idempotent(tmp_path: Path, steps: list[tuple[str, object, int]]) -> None:
    """SM-89: Running the reconciler more often is safe: repeating an observation that the 30-day cap did not
    clamp changes neither the windows nor any package's eligibility."""
    world = _world(tmp_path)
    honest = day(0)
    for kind, a, b in steps:
        if kind == "tick":
            honest += timedelta(hours=int(a))  # type: ignore[arg-type]
        elif kind == "pkg":
            start = honest.replace(hour=0) + timedelta(days=int(a))  # type: ignore[arg-type]
            world.package(start, start + timedelta(hours=b))
        else:
            now = honest + timedelta(hours=b)
            obs = marks(world.conn).get("obs")
            world.observe(bool(a), now)
            if obs is not None and now > parse_stamp(obs) + CAP:
                continue
            before = (windows(world.conn), marks(world.conn), [world.eligible(p) for p in world.packages])
            world.observe(bool(a), now)
            assert (windows(world.conn), marks(world.conn), [world.eligible(p) for p in world.packages]) == before


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(st.one_of(STEP.filter(lambda s: s[0] != "obs"),
                                st.tuples(st.just("obs"), st.just(False), st.integers(-40 * 24, 60 * 24))),
                      max_size=30))
def test_sm88_property_fail_closed_without_an_on_observation(tmp_path: Path,
                                                             steps: list[tuple[str, object, int]]) -> None:
    world = _world(tmp_path)
    honest = day(0)
    for kind, a, b in steps:
        if kind == "tick":
            honest += timedelta(hours=int(a))  # type: ignore[arg-type]
        elif kind == "pkg":
            world.package(honest + timedelta(days=int(a)), honest + timedelta(days=int(a), hours=b))  # type: ignore[arg-type]
        else:
            world.observe(False, honest + timedelta(hours=b))
    assert windows(world.conn) == []
    assert not any(world.eligible(p) for p in world.packages)


DAYS = st.lists(st.tuples(st.sampled_from([True, True, True, True, False]), st.lists(st.integers(0, 23), max_size=2, unique=True)),
                min_size=2, max_size=40)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(days=DAYS, silent=st.lists(st.integers(0, 39), max_size=3), gap=st.integers(1, 45))
def test_sm90_property_honest_clock_days_with_send_off_are_never_sent(
        tmp_path: Path, days: list[tuple[bool, list[int]]], silent: list[int], gap: int) -> None:
    """SM-90: Day by day with an honest clock: ``send`` may change between days (also while no process runs);
    each process run observes consent at start, collects, packages if due (including today's partial
    period) and, when sending, runs a heartbeat. A package is eligible only if ``send`` was on for its
    day (safety); with observation gaps under 30 days, a day inside one unbroken run of "on"
    observations that started before it and was confirmed after it is eligible (liveness, one heartbeat)."""
    world = _world(tmp_path)
    calendar: list[tuple[int, bool, list[int]]] = []
    offset = 0
    for index, (on, hours) in enumerate(days):
        if index in silent:
            offset += gap  # a long stretch in which no process runs
        calendar.append((index + offset, on, sorted(hours) if index not in silent else []))
    observations: list[tuple[datetime, bool]] = []
    pending: set[int] = set()
    packaged_on: set[int] = set()
    package_day: dict[tuple[str, str], int] = {}
    state: dict[int, bool] = {}
    for number, on, hours in calendar:
        state[number] = on
        for hour in hours:
            now = day(number, hour)
            world.observe(on, now)
            observations.append((now, on))
            pending.add(number)  # this run collects counters for today
            if number not in packaged_on:  # the first run of the day packages (SM-53)
                packaged_on.add(number)
                for d in sorted(pending):
                    package_day[world.daily(d)] = d
                pending.clear()
            if on:  # the send pass heartbeat
                world.observe(True, now + timedelta(minutes=1))
                observations.append((now + timedelta(minutes=1), True))
    times = [t for t, _ in observations]
    small_gaps = all(b - a <= CAP for a, b in zip(times, times[1:], strict=False))
    for period, d in package_day.items():
        start, end = parse_stamp(period[0]), parse_stamp(period[1])
        if world.eligible(period):
            assert state[d], f"day {d} was sent although send was off"
            continue
        before = [i for i, (t, _) in enumerate(observations) if t < start]
        after = [i for i, (t, _) in enumerate(observations) if t >= end]
        if small_gaps and before and after:
            run = observations[before[-1]:after[0] + 1]
            assert not all(o for _, o in run), f"day {d} stayed ineligible although consent covered it"


def test_sm89_reconcile_consent_after_a_settings_change(home: Path) -> None:
    """SM-89: Reconcile consent after a settings change."""
    from hermes_pipeline.shared_metrics import reconcile_consent

    store = MetricsStore(home)
    assert not reconcile_consent(home, enabled=True, send=False, clock=_Fixed(day(0)))
    assert not store.exists()  # sending off and no store: nothing is created
    assert not reconcile_consent(home, enabled=True, send=True, endpoint="http://ingest.example/", clock=_Fixed(day(0)))
    assert not store.exists()  # an unusable endpoint resolves to "off"
    assert reconcile_consent(home, enabled=True, send=True, endpoint="https://ingest.example/", clock=_Fixed(day(0)))
    assert reconcile_consent(home, enabled=True, send=True, endpoint="https://ingest.example/", clock=_Fixed(day(2)))
    assert not reconcile_consent(home, enabled=False, send=True, endpoint="https://ingest.example/",
                                 clock=_Fixed(day(3)))
    (window,) = windows(store.connect())
    assert (window.opened_at, window.last_confirmed_at, window.closed_at) == (
        stamp(day(0)), stamp(day(2)), stamp(day(2)))


def test_sm93_packages_from_before_the_window_model_are_never_released(home: Path) -> None:
    """A store that already had packages when ``consent_marks`` appeared starts its data mark at the
    latest period_end, so the first window can only open after every legacy package (v1 included)."""
    import sqlite3

    store = MetricsStore(home)
    store.directory.mkdir(parents=True)
    raw = sqlite3.connect(store.db_path)
    raw.executescript("""
        CREATE TABLE telemetry_state (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        INSERT INTO telemetry_state VALUES ('schema_version', '2');
        CREATE TABLE package_outbox (package_id TEXT PRIMARY KEY, period_start TEXT NOT NULL,
            period_end TEXT NOT NULL, payload_json TEXT NOT NULL, created_at TEXT NOT NULL, exported_at TEXT NULL);
        INSERT INTO package_outbox VALUES ('legacy-v1', '2026-07-30T00:00:00.000000Z', '2026-07-31T00:00:00.000000Z',
            '{"schema_version": "hermes.shared_metrics.v1"}', '2026-07-31T01:00:00.000000Z',
            '2026-07-31T01:00:00.000000Z');
    """)
    raw.commit()
    raw.close()
    store.forget_schema_cache()
    world = World(store)
    world.observe(True, day(-10))  # a clock far behind the legacy data cannot open a window under it
    world.observe(True, day(5))
    assert not world.eligible(("2026-07-30T00:00:00.000000Z", "2026-07-31T00:00:00.000000Z"))


class _Fixed:
    def __init__(self, when: datetime) -> None:
        self.when = when

    def now(self) -> datetime:
        return self.when

    def monotonic(self) -> float:
        return 0.0
