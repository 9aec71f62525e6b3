"""The paged, filtered lists and the pages per skill and per memory file, on the generated profile of
issue #31 (2,000 sessions, 4,000 runs): every row reachable, every filter exact, every bad parameter a 400
naming it, every failure with its type, exit code and step (spec 06 BOOK-38..41)."""

from __future__ import annotations

import calendar
import re
import shutil
import sqlite3
import time
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_pipeline.dashboard import Dashboard, load_sources
from hermes_pipeline.dashboard.params import BadParameter, ListQuery, parse_query

from ._issue_profile import build_issue_profile

pytest.importorskip("hermes_state", reason="hermes-agent 0.19 is not installed: the profile's state.db uses its DDL")

RUN_LINK = re.compile(r'href="/trajectories/([0-9a-f-]{36})(?:#[^"]*)?"')
SESSION_LINK = re.compile(r'<td><a href="/sessions/([^"]+)">')


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return build_issue_profile(tmp_path_factory.mktemp("issue31"))


@pytest.fixture(scope="module")
def app(made: dict[str, Any]) -> Dashboard:
    return Dashboard(load_sources(made["home"]))


def body(app: Dashboard, target: str, status: int = 200) -> str:
    response = app.respond(target)
    assert response.status == status, (target, response.status, response.body[-400:])
    return response.body.decode()


def walk(app: Dashboard, first: str) -> list[str]:
    """Every page of a list, following its "older →" link from ``first``."""
    pages, target = [], first
    while target:
        page = body(app, target)
        pages.append(page)
        nxt = re.search(r'<a href="([^"]+)">older', page)
        target = nxt.group(1).replace("&amp;", "&") if nxt else ""
        assert len(pages) < 200
    return pages


def run_ids(pages: list[str]) -> list[str]:
    return [m for p in pages for m in RUN_LINK.findall(p.split("<tbody>", 1)[-1])]


def test_every_run_and_every_session_is_reachable_by_paging(app: Dashboard, made: dict[str, Any]) -> None:
    """BOOK-40: /runs and /sessions page through all rows (not the latest 20 / 50), newest first, with the total."""
    pages = walk(app, "/runs")
    ids = run_ids(pages)
    assert len(ids) == len(set(ids)) == len(made["runs"]) == 4000
    assert f"of {len(made['runs']):,}" in pages[0] and ids[0] == made["runs"][-1]["trajectory_id"]
    sessions = [s for p in walk(app, "/sessions") for s in SESSION_LINK.findall(p)]
    assert sessions == list(reversed(made["sessions"]))


def test_runs_filters_are_exact(app: Dashboard, made: dict[str, Any]) -> None:
    """Filters by outcome, error type, skill, model, tool, time range and task text select exactly the
    matching runs."""
    runs = made["runs"]
    cases = {"/runs?outcome=failed": {r["trajectory_id"] for r in runs if r["error_type"]},
             "/runs?error=rate_limited": {r["trajectory_id"] for r in runs if r["error_type"] == "rate_limited"},
             "/runs?error=command_failed": {r["trajectory_id"] for r in runs if r["error_type"] == "command_failed"},
             "/runs?skill=skill-7": {r["trajectory_id"] for r in runs if r["skill"] == "skill-7"},
             "/runs?model=model-b": {r["trajectory_id"] for r in runs if r["model"] == "model-b"},
             "/runs?tool=no-such-tool": set()}
    since, until = runs[1000]["ended"], runs[1400]["ended"]
    cases[f"/runs?since={quote(since.replace(' ', 'T'))}&until={quote(until.replace(' ', 'T'))}"] = {
        r["trajectory_id"] for r in runs if since <= r["ended"] <= until}
    target = runs[1234]
    cases["/runs?q=" + quote_plus(target["task"].split(", ")[1])] = {
        r["trajectory_id"] for r in runs if r["session_id"] == target["session_id"]}
    for url, expected in cases.items():
        assert set(run_ids(walk(app, url))) == expected, url
        assert expected or "no run matches" in body(app, url)


def _end_of(bound: str) -> float:
    """The epoch just after what ``bound`` names (a UTC date, minute or second), computed here."""
    form = {10: "%Y-%m-%d", 16: "%Y-%m-%dT%H:%M", 19: "%Y-%m-%dT%H:%M:%S"}[len(bound)]
    step = {10: 86400, 16: 60, 19: 1}[len(bound)]
    return calendar.timegm(time.strptime(bound, form)) + step


def test_until_covers_the_whole_day_minute_or_second_it_names(app: Dashboard, made: dict[str, Any]) -> None:
    """BOOK-40: ``until`` is inclusive to the end of what it names: a date its whole day, a minute its 60 seconds,
    a second all of it (Hermes stamps a session to a fraction of a second: one started at ``23:59:59.7`` is in
    ``until=…T23:59:59``), on the state.db path (sessions) and the store's path (runs)."""
    with sqlite3.connect(made["home"] / "state.db") as state:
        started = dict(state.execute("SELECT id, started_at FROM sessions"))
    for sid in (made["sessions"][1000], made["sessions"][1500]):
        at = started[sid]
        assert at % 1, "the generator stamps sessions to a fraction of a second"
        second = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(at))
        since = calendar.timegm(time.strptime(second[:10], "%Y-%m-%d"))
        for until in (second[:10], second[:16], second):
            url = f"/sessions?since={second[:10]}&until={quote(until)}"
            shown = {s for p in walk(app, url) for s in SESSION_LINK.findall(p)}
            assert sid in shown and shown == {s for s, t in started.items() if since <= t < _end_of(until)}, url
    day = made["runs"][2000]["ended"][:10]
    runs = set(run_ids(walk(app, f"/runs?since={day}&until={day}")))
    assert runs and runs == {r["trajectory_id"] for r in made["runs"] if r["ended"][:10] == day}
    assert parse_query("until=2026-12-01", ("until",)).until == "2026-12-01 23:59:59"
    assert parse_query("until=2026-12-01T10:00Z", ("until",)).until == "2026-12-01 10:00:59"
    assert parse_query("since=2026-12-01T10:00", ("since",)).since == "2026-12-01 10:00:00"
    assert parse_query("until=2026-12-31T23:59:59", ("until",)).until_before == "2027-01-01 00:00:00"


def test_sessions_filters_and_columns(app: Dashboard, made: dict[str, Any]) -> None:
    """/sessions filters by outcome, model and title search, and shows outcome, runs, cost, tokens and duration."""
    failed = {r["session_id"] for r in made["runs"] if r["error_type"]}
    assert [s for p in walk(app, "/sessions?outcome=failed") for s in SESSION_LINK.findall(p)] == \
        [s for s in reversed(made["sessions"]) if s in failed]
    page = body(app, "/sessions?q=" + quote_plus("plan the trip #1234"))
    assert SESSION_LINK.findall(page) == [made["sessions"][1234]]
    for column in ("outcome", "runs", "cost", "input", "output", "duration", "model", "title"):
        assert f"<th>{column}</th>" in page
    assert '<span class="st ' in page and "$0.0" in page


def test_the_store_fallback_fills_model_end_and_title(made: dict[str, Any], tmp_path: Path) -> None:
    """Without Hermes' state.db, the sessions page still shows model, end, outcome and a title: the first user
    message of the session's first run (its file), else the run's task class; "end" says how the last run ended."""
    home = tmp_path / "home"
    shutil.copytree(made["home"] / "observability", home / "observability")
    page = body(Dashboard(load_sources(home)), "/sessions")
    assert "from store" in page
    row = page.split("<tbody>")[1].split("</tr>")[0]
    cells = re.findall(r"<td>(.*?)</td>", row)
    assert cells[1] == "cli:chat" and cells[4] and cells[5] in ("model-a", "model-b") and "st " in cells[6]
    assert cells[-1].startswith("last run ")
    shutil.copytree(made["home"] / "trajectories", home / "trajectories")
    page = body(Dashboard(load_sources(home)), "/sessions")
    first = {}
    for run in made["runs"]:
        first.setdefault(run["session_id"], run["task"])
    for row in page.split("<tbody>")[1].split("</tr>")[:-1]:
        cells = re.findall(r"<td>(.*?)</td>", row)
        session = re.search(r">([^<]+)</a>", cells[0])
        assert session is not None and cells[1] == first[session.group(1)], row


@pytest.mark.parametrize("target, name", [
    ("/runs?page=0", "page"), ("/runs?page=x", "page"), ("/runs?since=yesterday", "since"),
    ("/runs?since=2026-02-30", "since"), ("/runs?until=2026-12-01&since=2026-12-02", "until"),
    ("/runs?outcome=broken", "outcome"), ("/runs?colour=red", "colour"), ("/runs?q=a&q=b", "q"),
    ("/sessions?model=a%0Ab", "model"), ("/runs?skill=" + "s" * 129, "skill"), ("/memory?error=x", "error"),
    ("/failures?q=x", "q"),
    ("/skills/skill-7?a=one", "a"), ("/memory/memories/MEMORY.md?page=-1", "page")])
def test_a_bad_query_parameter_is_a_400_naming_it(app: Dashboard, target: str, name: str) -> None:
    """Strict parameters: a bad value is a 400 page naming the parameter, never an ignored filter."""
    page = body(app, target, 400)
    assert f"Bad query parameter {name}:" in page


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=80))
def test_any_query_string_is_accepted_or_a_bad_parameter(raw: str) -> None:
    """The parser never fails otherwise; what it accepts round-trips through the bookmarkable URL."""
    allowed = ("since", "until", "outcome", "model", "skill", "tool", "error", "q")
    try:
        query = parse_query(raw, allowed, now=1_800_000_000)
    except BadParameter as exc:
        assert exc.name
        return
    url = query.url("/runs")
    again = parse_query(url.partition("?")[2], allowed, now=1_800_000_000)
    assert again == query


@given(st.builds(ListQuery, since=st.none() | st.just("2026-12-01 10:00:00"), outcome=st.sampled_from(
    (None, "failed", "success")), skill=st.none() | st.from_regex(r"[a-z][a-z0-9-]{0,20}", fullmatch=True),
    q=st.none() | st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=0x2FFF), min_size=1, max_size=40),
    page=st.integers(1, 500)))
def test_every_list_url_is_a_stable_bookmark(query: ListQuery) -> None:
    """A list's URL parses back to the same filters and page."""
    url = query.url("/runs")
    assert parse_query(url.partition("?")[2], ("since", "until", "outcome", "skill", "q")) == query
    assert query.url("/runs") == url


def test_failures_are_grouped_by_type_and_linked_to_their_step(app: Dashboard, made: dict[str, Any]) -> None:
    """/failures: failed runs, tool calls (with exit codes) and provider attempts over a range, by error type,
    each linked to the step of its run; the step shows the type, the exit code and the message."""
    page = body(app, "/failures?since=30d")
    counts = Counter(r["error_type"] for r in made["runs"] if r["error_type"])
    for kind, n in counts.items():
        assert f">{kind}</a> × {n:,}</li>" in page
    failed_cmd = next(r for r in reversed(made["runs"]) if r["error_type"] == "command_failed")
    assert f'href="/trajectories/{failed_cmd["trajectory_id"]}#call-{failed_cmd["call"]}"' in page
    provider = next(r for r in reversed(made["runs"]) if r["error_type"] == "rate_limited")
    assert f'href="/trajectories/{provider["trajectory_id"]}#req-{provider["request"]}-0"' in page or \
        f'#req-{provider["request"]}' in page
    run = body(app, f"/trajectories/{failed_cmd['trajectory_id']}")
    assert f'id="call-{failed_cmd["call"]}" open' in run and "exit 2 failed" in run
    assert '<b class="errtype">command_failed</b>' in run and "make: *** [all] Error 2" in run
    run = body(app, f"/trajectories/{provider['trajectory_id']}")
    assert "attempt 1: <b>rate_limited</b> (HTTP 429)" in run and f'id="req-{provider["request"]}"' in run
    assert '<dt>error</dt><dd><b class="errtype">rate_limited</b>' in run
    only = body(app, "/failures?since=30d&error=authentication")
    assert f"× {counts['authentication']:,}" in only and "rate_limited" not in only.split("<h2>Failed runs")[0]


def test_a_run_links_to_the_skills_it_loaded(app: Dashboard, made: dict[str, Any]) -> None:
    run = made["runs"][77]
    assert f'<a href="/skills/{run["skill"]}">{run["skill"]}</a>' in body(app, f"/trajectories/{run['trajectory_id']}")
    assert f'<a href="/skills/{run["skill"]}">' in body(app, "/runs?q=" + quote_plus(run["task"]))


def test_a_skill_page_has_versions_runs_per_version_trend_and_a_comparison(app: Dashboard,
                                                                           made: dict[str, Any]) -> None:
    """/skills/<name>: every version with reason, actor and date; the runs of each version with outcomes
    (together all the skill's runs); a success and cost per version; two versions compared."""
    page = body(app, "/skills/skill-7")
    versions = re.findall(r'<a id="v(\d+)"></a>', page)
    assert versions == [str(v) for v in range(8, 0, -1)]
    assert all(f"v{v}: handle case {v} of skill-7" in page for v in range(1, 9)) and "<td>agent</td>" in page
    shown = [int(n) for n in re.findall(r"<h3>v\d+: \d+% of (\d+)</h3>", page)]
    assert sum(shown) == sum(r["skill"] == "skill-7" for r in made["runs"])
    assert "Success rate per version" in page and "Mean cost per run, per version" in page
    assert "<h2>v7 compared with v8</h2>" in page
    assert "<h2>v2 compared with v5</h2>" in body(app, "/skills/skill-7?a=2&b=5")
    body(app, "/skills/no-such-skill", 404)


def test_a_memory_file_page_has_every_change_with_actor_reason_run_and_diff(app: Dashboard,
                                                                            made: dict[str, Any]) -> None:
    """/memory/<file>: every change (paged), with actor, reason, run and the before/after line diff."""
    pages = walk(app, "/memory/memories/MEMORY.md")
    changes = [c for p in pages for c in p.split('<article class="change">')[1:]]
    assert len(changes) == 63 and len(pages) == 2
    assert all("<dt>actor</dt><dd>agent-reflection</dd>" in c or "<dt>actor</dt><dd>user-direct</dd>" in c
               for c in changes)
    assert sum("the user corrected fact" in c for c in changes) == len([m for m in range(0, 150, 4)])
    assert all(RUN_LINK.search(c) for c in changes)
    assert all('<div class="dr">- - fact' in c and '<div class="da">+ - fact' in c for c in changes)
    listing = [p for p in walk(app, "/memory")]
    assert sum(p.split("<h2>Recorded changes")[1].count("<tr>") - 1 for p in listing) == 252
    assert '<a href="/memory/memories/MEMORY.md">memories/MEMORY.md</a>' in listing[0]
    body(app, "/memory/memories/nothing.md", 404)


def test_an_unreadable_store_is_said_on_every_new_page(made: dict[str, Any], tmp_path: Path) -> None:
    """A store that cannot be read says "store unreadable: <reason>" instead of an empty all-clear."""
    home = tmp_path / "home"
    shutil.copytree(made["home"], home, ignore=shutil.ignore_patterns("trajectories"))
    (home / "trajectories").mkdir()
    run = made["runs"][-1]
    for path in (made["home"] / "trajectories").glob(f"*-{run['trajectory_id']}.json"):
        shutil.copy(path, home / "trajectories" / path.name)
    (home / "observability" / "observability.sqlite3").write_bytes(b"not a database" * 100)
    app = Dashboard(load_sources(home))
    for target in ("/", "/runs", "/failures", "/skills", "/skills/skill-7", "/memory", "/memory/memories/USER.md",
                   "/sessions", f"/sessions/{run['session_id']}", f"/trajectories/{run['trajectory_id']}"):
        page = body(app, target)
        assert "store unreadable: " in page, target  # every page with a panel the store fills


def test_a_run_compares_with_its_original_the_previous_run_and_any_run(app: Dashboard, made: dict[str, Any]) -> None:
    """Compare with…: a replay links to its original (and the diff), a run to the previous run of its
    session, and a GET form compares with any run by id or prefix (checked strictly)."""
    import json

    first, second = made["runs"][10], made["runs"][11]
    assert first["session_id"] == second["session_id"]
    page = body(app, f"/trajectories/{second['trajectory_id']}")
    assert f'href="/trajectories/{first["trajectory_id"]}/diff/{second["trajectory_id"]}"' in page
    assert 'action="/compare"' in page
    assert "Diff of two runs" in body(app, f"/compare?a={second['trajectory_id']}&b={first['trajectory_id'][:8]}")
    assert "Bad query parameter b:" in body(app, f"/compare?a={second['trajectory_id']}&b=x'", 400)
    home = made["home"] / "trajectories"
    source = next(home.glob(f"*-{first['trajectory_id']}.json"))
    doc = json.loads(source.read_text())
    replay_id = "0000aaaa-0000-4000-8000-000000000001"
    doc["trajectory_id"] = replay_id
    doc["extra"]["hermes"]["replay"] = {"of": first["trajectory_id"], "mode": "recorded"}
    (home / f"{source.name[:10]}-{replay_id}.json").write_text(json.dumps(doc))
    page = body(app, f"/trajectories/{replay_id}")
    assert f'this run replays <a href="/trajectories/{first["trajectory_id"]}">' in page
    assert f'href="/trajectories/{first["trajectory_id"]}/diff/{replay_id}"' in page


def test_today_shows_cost_by_model_skill_and_session(app: Dashboard, made: dict[str, Any]) -> None:
    """Today: the day's cost by model, by skill and by session, each linked to its runs, skill or session."""
    import time

    from hermes_pipeline.dashboard.stats import local_day_bounds

    page = body(app, "/")
    section = page.split("Cost today by model, skill and session")[1].split("</section>")[0]
    # the day the page judged (not a second reading of the clock: midnight may pass between the two)
    judged = re.search(r'aria-label="today (\d{4}-\d{2}-\d{2})"', page)
    assert judged is not None
    day = judged.group(1)
    start, end = local_day_bounds(time.mktime(time.strptime(day + " 12:00", "%Y-%m-%d %H:%M")))
    today = [r for r in made["runs"] if start <= r["ended"] < end]
    conn = sqlite3.connect(made["home"] / "observability" / "observability.sqlite3")
    try:
        by_session = dict(conn.execute("SELECT session_id, SUM(cost_usd) FROM task_runs WHERE ended_at >= ? AND "
                                       "ended_at < ? GROUP BY session_id", (start, end)).fetchall())
    finally:
        conn.close()
    if not today:  # minutes after local midnight the generated runs all ended yesterday: the empty day is shown
        assert not by_session
        assert all(text in section for text in ("no LLM call today", "no skill run today", "no run today"))
        return
    assert f'href="/runs?model={today[-1]["model"]}&amp;since={day}"' in section
    shown = re.findall(r'href="/sessions/([^"]+)">[^<]*</a></td><td>\$([0-9.]+)</td>', section)
    assert shown and len(shown) == min(10, len(by_session))
    assert [float(c) for _, c in shown] == sorted((round(by_session[s], 4) for s, _ in shown), reverse=True)
    assert min(float(c) for _, c in shown) >= max(round(v, 4) for k, v in by_session.items()
                                                 if k not in dict(shown)) if len(by_session) > len(shown) else True
    skills = re.findall(r'href="/skills/([^"]+)"', section)
    assert skills and set(skills) <= {r["skill"] for r in today}


def test_every_error_type_link_of_failures_opens(app: Dashboard) -> None:
    """Each error type /failures links to (even "(not recorded)") opens that type's failures; a quote in a
    filter is only a value (bound, never SQL)."""
    page = body(app, "/failures?since=30d")
    links = re.findall(r'<li>[a-z]+: <a href="([^"]+)">', page)
    assert links
    for href in links:
        body(app, href.replace("&amp;", "&"))
    assert "no run matches" in body(app, "/runs?model=%27%20OR%201%3D1%20--")


def test_a_sessions_page_shows_the_error_type_of_its_failed_runs(app: Dashboard, made: dict[str, Any]) -> None:
    run = next(r for r in made["runs"] if r["error_type"] == "authentication")
    assert '<b class="errtype">authentication</b>' in body(app, f"/sessions/{run['session_id']}")


def test_today_says_why_its_latest_runs_failed(app: Dashboard, made: dict[str, Any]) -> None:
    """Today's latest runs show the error type and the recorded message beside the outcome (issue #31 item 1)."""
    page = body(app, "/").split("Latest trajectories")[1]
    failed = [r for r in made["runs"][-20:] if r["error_type"]]
    assert failed  # the generated profile's seed gives some
    for run in failed:
        row = page.split(f'href="/trajectories/{run["trajectory_id"]}"')[1].split("</tr>")[0]
        assert f'<b class="errtype">{run["error_type"]}</b>: <span class="errmsg">' in row, row


def test_a_long_session_is_paged_not_capped(tmp_path: Path) -> None:
    """A session of 2,500 messages: three pages of at most 1,000, each linked to the next and the previous, the
    last message reachable (BOOK-40: the stream in stored order)."""
    from hermes_state import SessionDB

    home = tmp_path / "home"
    home.mkdir()
    db = SessionDB(home / "state.db")
    try:
        db.create_session("long_session", "telegram", model="m")
        for i in range(2500):
            db.append_message("long_session", "user" if i % 2 == 0 else "assistant", f"message number {i}")
    finally:
        db.close()
    app = Dashboard(load_sources(home))
    first, last = body(app, "/sessions/long_session"), body(app, "/sessions/long_session?page=3")
    assert first.count('<article class="msg') == 1000 and "message number 999<" in first
    assert "message number 1000<" not in first and 'href="/sessions/long_session?page=2">later →' in first
    assert last.count('<article class="msg') == 500 and "message number 2499<" in last
    assert 'href="/sessions/long_session?page=2">← earlier' in last and "later →" not in last
    assert "messages 2,001–2,500" in last
    body(app, "/sessions/long_session?page=x", 400)
