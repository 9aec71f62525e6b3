"""The dashboard's anomaly rules and windows on hand-made rows, and its profile keys (spec 06 BOOK-39,
BOOK-41, §0)."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from hermes_pipeline.cli.main import main
from hermes_pipeline.config.profile_config import load_profile_settings
from hermes_pipeline.dashboard.stats import anomalies_from, daily_series, local_day_bounds, utc_text

NOW = 1_780_000_000.0


def _day(back: int) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(NOW - back * 86400))


def test_a_cost_spike_is_a_day_above_three_times_the_mean_of_the_14_days_before() -> None:
    """BOOK-41: cost > 3 × the mean daily cost of the preceding 14 days (inactive days count as 0)."""
    days = [{"day": _day(b), "cost": 1.0, "tasks": 1} for b in range(1, 28)] + [{"day": _day(0), "cost": 3.5,
                                                                                  "tasks": 1}]
    spikes = [a for a in anomalies_from(days, [], [], NOW) if a["kind"] == "cost"]
    assert [s["day"] for s in spikes] == [_day(0)] and spikes[0]["mean"] == pytest.approx(1.0)
    days[-1]["cost"] = 2.9
    assert [a for a in anomalies_from(days, [], [], NOW) if a["kind"] == "cost"] == []


def test_a_cost_spike_needs_three_active_days_before_it() -> None:
    """BOOK-41: judged only with >= 3 active days in the preceding window."""
    days = [{"day": _day(3), "cost": 0.1, "tasks": 1}, {"day": _day(2), "cost": 0.1, "tasks": 1},
            {"day": _day(0), "cost": 50.0, "tasks": 1}]
    assert [a for a in anomalies_from(days, [], [], NOW) if a["kind"] == "cost"] == []
    days.insert(0, {"day": _day(4), "cost": 0.1, "tasks": 1})
    assert [a["day"] for a in anomalies_from(days, [], [], NOW) if a["kind"] == "cost"] == [_day(0)]


def test_three_or_more_consecutive_failed_tasks_are_an_anomaly() -> None:
    """BOOK-41: 3 or more consecutive failed tasks (newest first; the latest streak is marked)."""
    outcomes = [{"outcome": o} for o in ("failed", "failed", "failed", "success", "failed", "failed", "success",
                                         "timed_out", "failed", "failed", "failed")]
    streaks = [a for a in anomalies_from([], outcomes, [], NOW) if a["kind"] == "tasks"]
    assert streaks == [{"kind": "tasks", "count": 3, "current": True}, {"kind": "tasks", "count": 4, "current": False}]


def test_a_skill_is_flagged_for_five_latest_failures_or_half_of_five_runs_in_a_week() -> None:
    """BOOK-41: the 5 most recent runs failed, or failure rate >= 50 % over >= 5 runs in 7 days."""
    recent, old = utc_text(NOW - 3600), utc_text(NOW - 20 * 86400)
    rows = [{"skill_name": "a", "outcome": "failed", "ended_at": old, "rn": i} for i in range(1, 6)]
    rows += [{"skill_name": "b", "outcome": o, "ended_at": recent, "rn": None}
             for o in ("failed", "failed", "failed", "success", "success", "success")]
    rows += [{"skill_name": "c", "outcome": o, "ended_at": recent, "rn": None}
             for o in ("failed", "failed", "success", "success")]
    rows += [{"skill_name": "d", "outcome": o, "ended_at": old, "rn": i + 1}
             for i, o in enumerate(("failed", "failed", "failed", "failed", "success"))]
    flagged = {a["skill"]: a["why"] for a in anomalies_from([], [], rows, NOW) if a["kind"] == "skill"}
    assert flagged == {"a": "its 5 most recent runs failed", "b": "3 of 6 runs failed in 7 days"}


def test_the_daily_series_has_fourteen_days_with_unknown_cost_as_none() -> None:
    """BOOK-26: a period without any known cost shows n/a, not zero."""
    series = daily_series([{"day": _day(0), "input": 5, "output": 2, "cost": None, "costed": 0, "tasks": 1},
                           {"day": _day(1), "input": 1, "output": 1, "cost": 0.5, "costed": 1, "tasks": 1}], NOW, 14)
    assert len(series) == 14 and series[-1]["day"] == _day(0) and series[-1]["cost"] is None
    assert series[-2]["cost"] == 0.5 and series[0]["tasks"] == 0


def test_today_is_the_local_calendar_day_in_store_timestamps() -> None:
    """BOOK-40: the overview covers the dashboard host's local calendar day; bounds in the store's UTC form."""
    start, end = local_day_bounds(NOW)
    assert start <= utc_text(NOW) < end and len(start) == 19 and start[10] == " "
    local = time.localtime(NOW)
    midnight = time.mktime((local.tm_year, local.tm_mon, local.tm_mday, 0, 0, 0, 0, 0, -1))
    assert start == utc_text(midnight)


def test_the_dashboard_keys_are_profile_keys(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """BOOK-39, §0: observability.dashboard.{host,port,jaeger_url} work with config set/get and are read."""
    home = ["--home", str(tmp_path)]
    assert main(["config", "set", *home, "observability.dashboard.jaeger_url", "http://jaeger:16686"]) == 0
    assert main(["config", "set", *home, "observability.dashboard.port", "3005"]) == 0
    capsys.readouterr()
    assert main(["config", "get", *home, "observability.dashboard.jaeger_url"]) == 0
    assert capsys.readouterr().out == "http://jaeger:16686\n"
    assert main(["config", "set", *home, "observability.dashboard.jaeger_url", "javascript:alert(1)"]) == 1
    assert main(["config", "set", *home, "observability.dashboard.port", "70000"]) == 1
    settings = load_profile_settings(tmp_path, log=False)
    assert (settings.dashboard.host, settings.dashboard.port, settings.dashboard.jaeger_url) == (
        "127.0.0.1", 3005, "http://jaeger:16686")
    assert settings.diagnostics == ()


@pytest.mark.parametrize("header, bound, allowed", [
    ("127.0.0.1:3001", "127.0.0.1", True), ("localhost:3001", "127.0.0.1", True),
    ("LOCALHOST:3001", "127.0.0.1", True), ("127.0.0.1", "127.0.0.1", False), ("127.0.0.1:3002", "127.0.0.1", False),
    ("attacker.example:3001", "127.0.0.1", False), ("[::1]:3001", "::1", True), ("localhost:3001", "::1", True),
    ("[::1]:3001", "127.0.0.1", False), ("192.168.1.5:3001", "0.0.0.0", True),
    ("attacker.example:3001", "0.0.0.0", False), ("localhost:3001", "192.168.1.5", False),
    ("myhost.lan:3001", "myhost.lan", True), ("", "127.0.0.1", False), ("127.0.0.1:x", "127.0.0.1", False),
])
def test_the_host_header_must_name_the_bound_address(header: str, bound: str, allowed: bool) -> None:
    """DNS-rebinding protection: the port and the bound address (an IP literal of the machine when bound
    to all addresses, localhost on loopback); any other DNS name is refused."""
    from hermes_pipeline.dashboard.server import host_allowed

    assert host_allowed(header, bound, 3001) is allowed


def test_an_ipv6_loopback_bind_serves_and_checks_its_host(tmp_path: Path) -> None:
    """The server binds ::1 as well as 127.0.0.1."""
    import http.client
    import threading

    from hermes_pipeline.dashboard import load_sources, make_server

    try:
        server = make_server(load_sources(tmp_path), "::1", 0)
    except OSError as exc:
        pytest.skip(f"no IPv6 loopback here: {exc}")
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        assert server.url == f"http://[::1]:{server.port}/"
        conn = http.client.HTTPConnection("::1", server.port, timeout=10)
        conn.request("GET", "/skills")
        assert conn.getresponse().status == 200
        conn.close()
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def test_the_directories_come_from_the_profile_config(tmp_path: Path) -> None:
    """BOOK-39: the memory directories, the skills directory and the trajectory store directory are the
    ones the profile's config.yaml names."""
    from hermes_pipeline.dashboard import load_sources
    from hermes_pipeline.dashboard.queries import memory, skills, trajectory_files

    (tmp_path / "config.yaml").write_text("observability:\n  audit:\n    memory_dirs: [memories, notes]\n"
                                          "    skills_dir: my-skills\n  trajectories:\n    dir: runs\n")
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.md").write_text("x")
    (tmp_path / "my-skills" / "s1").mkdir(parents=True)
    (tmp_path / "my-skills" / "s1" / "SKILL.md").write_text("---\nname: s1\n---\n")
    (tmp_path / "runs").mkdir()
    tid = "01a23339-de3e-7882-9a94-cedfe07bab93"
    (tmp_path / "runs" / f"2026-12-01-{tid}.json").write_text("{}")
    (tmp_path / "runs" / "notes.json").write_text("{}")  # not a store file name: never listed
    sources = load_sources(tmp_path)
    assert [f["path"] for f in memory(sources)["files"]] == ["notes/a.md"]
    assert [r["name"] for r in skills(sources)["rows"]] == ["s1"]
    assert [f["id"] for f in trajectory_files(sources) or []] == [tid]


def test_skills_in_category_folders_are_listed_with_their_changes(tmp_path: Path) -> None:
    """Issue #27: ``/skills`` lists the skills Hermes keeps in category folders (``skills/<category>/<name>/``,
    deeper too) beside the uncategorised ones, each with its ``skill_history`` change count; a skill's own
    ``references/`` folder is not a skill."""
    import http.client

    import threading

    from hermes_pipeline.dashboard import load_sources, make_server
    from hermes_pipeline.dashboard.queries import skills
    from hermes_pipeline.sinks.observability_store import connect, sqlite_utc, store_path

    for rel in ("plain", "data/csv-report", "ops/cloud/deploy"):
        (tmp_path / "skills" / rel).mkdir(parents=True)
        (tmp_path / "skills" / rel / "SKILL.md").write_text(f"---\nname: {rel.rsplit('/', 1)[-1]}\n---\nbody\n")
    (tmp_path / "skills" / "data" / "csv-report" / "references" / "x").mkdir(parents=True)
    (tmp_path / "skills" / "data" / "csv-report" / "references" / "x" / "SKILL.md").write_text("not a skill")
    conn = connect(store_path(tmp_path))
    conn.execute("INSERT INTO skill_history (skill_name, version, change_type, changed_at) VALUES "
                 "('csv-report', 1, 'create', ?), ('csv-report', 2, 'refine', ?)", (sqlite_utc(), sqlite_utc()))
    conn.close()
    rows = {r["dir"]: r for r in skills(load_sources(tmp_path))["rows"]}
    assert set(rows) == {"plain", "data/csv-report", "ops/cloud/deploy"}
    assert rows["data/csv-report"]["changes"] == 2 and rows["data/csv-report"]["category"] == "data"
    assert rows["ops/cloud/deploy"]["category"] == "ops/cloud" and rows["plain"]["category"] is None
    server = make_server(load_sources(tmp_path), "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        client = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        client.request("GET", "/skills")
        body = client.getresponse().read().decode("utf-8")
        client.close()
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
    assert "csv-report" in body and "deploy" in body and "ops/cloud" in body


def test_a_skills_latest_runs_are_not_counted_twice_in_its_window() -> None:
    """BOOK-41 (issue #31): the 5 latest runs, also inside the 7-day window, are counted once: 19 of 32, not
    22 of 37; and a skill at exactly 50 % over its window is flagged."""
    recent = utc_text(NOW - 3600)
    outcomes = ["failed"] * 19 + ["success"] * 13
    window = [{"skill_name": "s", "outcome": o, "ended_at": recent, "rn": None} for o in outcomes]
    latest = [{"skill_name": "s", "outcome": o, "ended_at": recent, "rn": i + 1}
              for i, o in enumerate(["success", "failed", "failed", "success", "failed"])]
    flagged = {a["skill"]: a["why"] for a in anomalies_from([], [], window + latest, NOW) if a["kind"] == "skill"}
    assert flagged == {"s": "19 of 32 runs failed in 7 days"}
    half = [{"skill_name": "h", "outcome": o, "ended_at": recent, "rn": None} for o in ["failed", "success"] * 5]
    half += [{"skill_name": "h", "outcome": o, "ended_at": recent, "rn": i + 1}
             for i, o in enumerate(["success", "failed", "success", "failed", "success"])]
    assert [a["why"] for a in anomalies_from([], [], half, NOW) if a["kind"] == "skill"] == \
        ["5 of 10 runs failed in 7 days"]


def test_days_before_the_profiles_first_record_do_not_lower_the_cost_mean() -> None:
    """BOOK-41 (issue #31): a profile 5 days old at $1 a day has a mean of $1, not 5/14: $2 is no spike."""
    days = [{"day": _day(b), "cost": 1.0, "tasks": 1} for b in range(1, 6)] + [{"day": _day(0), "cost": 2.0,
                                                                              "tasks": 1}]
    assert [a for a in anomalies_from(days, [], [], NOW, _day(5)) if a["kind"] == "cost"] == []
    days[-1]["cost"] = 3.5
    spikes = [a for a in anomalies_from(days, [], [], NOW, _day(5)) if a["kind"] == "cost"]
    assert [s["day"] for s in spikes] == [_day(0)] and spikes[0]["mean"] == pytest.approx(1.0)


def test_skills_page_and_today_judge_skill_health_over_one_window(tmp_path: Path) -> None:
    """Issue #31: /skills and the Today alarm count the same 7 days with the same rule, and the page says so."""
    from hermes_pipeline.dashboard import queries
    from hermes_pipeline.dashboard.sources import Sources
    from hermes_pipeline.dashboard.stats import SKILL_WINDOW_DAYS
    from hermes_pipeline.sinks.observability_store.schema import INDEXES, TABLES

    store = tmp_path / "observability" / "observability.sqlite3"
    store.parent.mkdir()
    (tmp_path / "skills" / "s").mkdir(parents=True)
    (tmp_path / "skills" / "s" / "SKILL.md").write_text("---\nname: s\n---\n")
    conn = sqlite3.connect(store)
    for ddl in (*TABLES.values(), *INDEXES):
        conn.execute(ddl)
    rows = [("failed", NOW - 86400 * d) for d in (1, 2, 3)] + [("success", NOW - 86400 * d) for d in (4, 5)]
    rows += [("success", NOW - 86400 * d) for d in range(10, 28)]  # older than the window: not counted
    for outcome, when in rows:
        conn.execute("INSERT INTO skill_runs (skill_name, ended_at, outcome) VALUES ('s', ?, ?)", (utc_text(when), outcome))
    conn.commit()
    conn.close()
    sources = Sources(home=tmp_path, state_db=tmp_path / "state.db", store_db=store, trajectories=tmp_path / "t",
                      skills=tmp_path / "skills", memory_dirs=())
    row = queries.skills(sources, now=NOW)["rows"][0]
    alarms = [a for a in queries.overview(sources, now=NOW)["anomalies"] if a["kind"] == "skill"]
    assert SKILL_WINDOW_DAYS == 7 and row["runs"] == 5 and row["red"] and alarms[0]["skill"] == "s"
    assert row["why"] == alarms[0]["why"] == "3 of 5 runs failed in 7 days"


@pytest.mark.parametrize("value, shown", [(0, "$0.00"), (0.4, "$0.40"), (0.0125, "$0.0125"), (1234.5678, "$1,234.57"),
                                          (0.00001, "<$0.0001"), (None, "n/a"), (True, "n/a")])
def test_costs_show_cents_and_fractions_only_where_they_exist(value: object, shown: str) -> None:
    """Issue #31: no four decimals on every amount; a tiny real cost is never shown as zero."""
    from hermes_pipeline.dashboard.html import cost

    assert cost(value) == shown


def test_a_chart_has_labelled_gridlines() -> None:
    """Issue #31: more than one tick: four gridlines, each with its value, under the bars."""
    import re

    from hermes_pipeline.dashboard.charts import bar_chart

    svg = bar_chart("Cost per day", ["a", "b"], [("cost", [1.0, 4.0])], unit=" USD")
    assert svg.count('<line class="grid"') == 4
    assert re.findall(r'<text class="tick" x="2" y="[0-9.]+">([^<]+)</text>', svg) == ["1", "2", "3", "4"]
    assert svg.index('class="grid"') < svg.index('<rect class="s0"')
