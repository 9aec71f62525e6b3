"""The local dashboard over plain HTTP (urllib / http.client): routes, sources, escaping, refusals
(spec 06 BOOK-38..41)."""

from __future__ import annotations

import hashlib
import http.client
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_pipeline.dashboard.server import CSP

from ._profile import HOSTILE_MEMORY, OTHER_SESSION, SESSION_ID, FixtureProfile, build_profile, serving

pytest.importorskip("hermes_state", reason="hermes-agent 0.19 is not installed (pip install '.[hermes]'): the "
                                           "fixture's state.db is written by Hermes' own SessionDB")


@pytest.fixture(scope="module")
def profile(tmp_path_factory: pytest.TempPathFactory) -> FixtureProfile:
    return build_profile(tmp_path_factory.mktemp("dash"))


@pytest.fixture(scope="module")
def base(profile: FixtureProfile) -> Iterator[str]:
    with serving(profile.home) as server:
        yield server.url.rstrip("/")


def get(url: str) -> tuple[int, str, dict[str, str]]:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.read().decode(), dict(r.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(), dict(exc.headers)


def raw(base: str, method: str, target: str, host: str | None = None) -> tuple[int, str, dict[str, str]]:
    """A request sent as given (no normalisation of the target, any Host header)."""
    hostport = base.split("//", 1)[1]
    conn = http.client.HTTPConnection(hostport, timeout=10)
    try:
        conn.putrequest(method, target, skip_host=True)
        conn.putheader("Host", host if host is not None else hostport)
        conn.endheaders()
        r = conn.getresponse()
        return r.status, r.read().decode(), dict(r.getheaders())
    finally:
        conn.close()


def routes(profile: FixtureProfile) -> list[str]:
    a, b = profile.trajectories
    return ["/", "/sessions", f"/sessions/{SESSION_ID}", "/skills", "/memory", f"/trajectories/{a}",
            f"/trajectories/{a}/diff/{b}"]


def test_every_route_renders_with_the_security_headers_and_no_script_inline_style_or_remote_load(
        profile: FixtureProfile, base: str) -> None:
    """BOOK-38, BOOK-40: every route answers 200 with the CSP; no page holds a script, a style
    attribute or a reference to another origin."""
    for route in routes(profile):
        status, body, headers = get(base + route)
        assert status == 200, route
        assert headers["Content-Security-Policy"] == CSP
        assert "script-src" not in CSP and "'unsafe-inline'" not in CSP and "default-src 'none'" in CSP
        assert headers["X-Content-Type-Options"] == "nosniff"
        assert "<script" not in body and " style=" not in body, route
        assert not re.findall(r"(?:src|href)=\"(?:https?:)?//", body), route
        assert '<link rel="stylesheet" href="/static/app.css">' in body


def test_planted_markup_in_messages_skills_files_and_changes_renders_as_text(profile: FixtureProfile,
                                                                              base: str) -> None:
    """BOOK-38: every value is HTML-escaped."""
    for route in routes(profile):
        _, body, _ = get(base + route)
        assert "<img src=x" not in body and "onerror=\"document" not in body, route
    _, session, _ = get(f"{base}/sessions/{SESSION_ID}")
    assert "&lt;script&gt;document.title=&#x27;pwned&#x27;&lt;/script&gt;" in session
    _, skills, _ = get(base + "/skills")
    assert "&lt;img src=x onerror=alert(1)&gt;" in skills
    _, memory, _ = get(base + "/memory")
    assert "&lt;script&gt;document.title=1&lt;script&gt;.md" in memory


def test_sessions_come_from_hermes_state_db_newest_id_first_with_its_columns(base: str) -> None:
    """BOOK-39, BOOK-40: /sessions lists state.db's sessions by id descending."""
    _, body, _ = get(base + "/sessions")
    assert "from state.db" in body
    assert body.index(OTHER_SESSION) < body.index(SESSION_ID)
    assert "telegram" in body and "hermes-demo-1" in body and "user_exit" in body


def test_one_session_shows_its_message_stream_in_stored_order_and_its_runs(profile: FixtureProfile,
                                                                            base: str) -> None:
    """BOOK-40: /sessions/<id> shows the messages in order, tool calls, and links to its trajectories."""
    _, body, _ = get(f"{base}/sessions/{SESSION_ID}")
    order = [body.index(t) for t in ("What do my notes say?", "read_file", "oats, apples", "Your notes say")]
    assert order == sorted(order)
    assert 'class="msg tool"' in body and "call_1" in body
    for tid in profile.trajectories:
        assert f'href="/trajectories/{tid}"' in body


def test_rewound_messages_are_shown_marked(base: str) -> None:
    """BOOK-40: the full stream as stored, messages Hermes soft-deleted by a rewind marked as such."""
    _, body, _ = get(f"{base}/sessions/{OTHER_SESSION}")
    assert body.index("hello") < body.index("a draft the user rewound")
    assert body.count('class="msg user inactive"') == 1 and body.count('class="msg assistant inactive"') == 1
    assert body.count("rewound (no longer in the conversation)") == 2 and 'class="msg user"' in body


@pytest.mark.parametrize("target", ["/sessions/20991231_000000_ffffff", "/sessions/bad%20id", "/sessions/..",
                                    "/trajectories/00000000-0000-0000-0000-000000000000", "/trajectories/nope",
                                    "/nowhere"])
def test_unknown_ids_and_pages_are_404(base: str, target: str) -> None:
    """BOOK-40: 404 for an unknown session id (and any other unknown page)."""
    assert raw(base, "GET", target)[0] == 404


def test_skill_health_is_sorted_worst_first_and_a_failing_skill_is_red(base: str) -> None:
    """BOOK-40: success rate ascending, skills without runs last, failure rate >= 50 % over >= 5 runs in red."""
    _, body, _ = get(base + "/skills")
    positions = [body.index(name) for name in ("flaky-skill", "good-skill", "empty-skill")]
    assert positions == sorted(positions)
    row = re.search(r"<tr class=\"red\"><td><a href=\"[^\"]*\">([^<]*)</a></td>", body)
    assert row is not None and row.group(1) == "flaky-skill"
    assert body.count('class="red"') == 1


def test_memory_lists_files_newest_first_and_the_latest_changes(profile: FixtureProfile, base: str) -> None:
    """BOOK-40: memory files by mtime descending with size; memory_changes newest first."""
    now = time.time()
    os.utime(profile.home / "memories" / "USER.md", (now, now))
    os.utime(profile.home / "memories" / "MEMORY.md", (now - 100, now - 100))
    os.utime(profile.home / "memories" / "notes" / HOSTILE_MEMORY, (now - 200, now - 200))
    _, body, _ = get(base + "/memory")
    assert body.index("memories/USER.md") < body.index("memories/MEMORY.md") < body.index("memories/notes/")
    assert body.index("fact 0") < body.index("fact 1") < body.index("fact 2")


def test_today_shows_tasks_charts_latest_trajectories_and_anomalies(profile: FixtureProfile, base: str) -> None:
    """BOOK-40, BOOK-41: the overview's numbers, the SVG charts, the trajectories and the anomaly panel
    (a failing skill, 3 consecutive failed tasks, a cost spike)."""
    _, body, _ = get(base + "/")
    assert body.count("<svg") == 3 and "Tokens per day" in body and "Success rate per hour" in body
    for tid in profile.trajectories:
        assert f'href="/trajectories/{tid}"' in body
    anomalies = body[body.index("Anomalies"):]
    assert "flaky-skill" in anomalies and "3 consecutive failed tasks" in anomalies
    assert "above 3 × the 14-day mean" in anomalies
    assert "good-skill" not in anomalies.split("Latest trajectories")[0]


def test_a_run_renders_as_a_tree_and_two_runs_side_by_side(profile: FixtureProfile, base: str) -> None:
    """The run tree with steps, tools, tokens and folded content; the step-aligned diff."""
    a, b = profile.trajectories
    _, tree, _ = get(f"{base}/trajectories/{a}")
    assert tree.count('<details class="step" id="step-') == 3 and "tool <b>read_file</b>" in tree
    assert "llm_request" in tree and "tokens" in tree and f'href="/sessions/{SESSION_ID}"' in tree
    _, diff, _ = get(f"{base}/trajectories/{a}/diff/{b}")
    assert "diverged at step 3" in diff and 'class="differs"' in diff


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS", "FOO"])
def test_there_is_no_write_path(base: str, method: str) -> None:
    """BOOK-38: read-only: only GET and HEAD."""
    status, _, headers = raw(base, method, "/")
    assert status == 405 and headers["Allow"] == "GET, HEAD"


def test_head_answers_headers_only(base: str) -> None:
    status, body, headers = raw(base, "HEAD", "/skills")
    assert status == 200 and body == "" and int(headers["Content-Length"]) > 0


@pytest.mark.parametrize("host", ["evil.example", "evil.example:{port}", "127.0.0.2:{port}", "127.0.0.1:1",
                                  "localhost.evil.example:{port}", ""])
def test_requests_for_another_host_are_refused(base: str, host: str) -> None:
    """DNS-rebinding protection: the Host header must name the bound address and port."""
    port = base.rsplit(":", 1)[1]
    assert raw(base, "GET", "/", host.format(port=port))[0] == 421


def test_the_bound_address_and_localhost_are_accepted(base: str) -> None:
    port = base.rsplit(":", 1)[1]
    assert raw(base, "GET", "/", f"127.0.0.1:{port}")[0] == 200
    assert raw(base, "GET", "/", f"localhost:{port}")[0] == 200


@pytest.mark.parametrize("target", ["/static/../sources.py", "/static/..%2fsources.py", "/static/%2e%2e/server.py",
                                    "/trajectories/..%2f..%2fsecret.txt", "/sessions/..%2fsecret.txt",
                                    "/../secret.txt", "//etc/passwd", "/static/app.css%00.txt",
                                    "/trajectories/%2e%2e%2fsecret.txt/diff/x"])
def test_paths_from_the_url_never_leave_the_profile(base: str, target: str) -> None:
    status, body, _ = raw(base, "GET", target)
    assert status == 404 and "outside the dashboard" not in body and "import" not in body


def test_browsing_writes_nothing_into_the_profile(tmp_path: Path) -> None:
    """BOOK-38, BOOK-39: read-only: state.db (opened mode=ro) and the store are unchanged, no file appears."""
    fixture = build_profile(tmp_path)

    def snapshot() -> dict[str, str]:
        return {p.relative_to(fixture.home).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
                for p in fixture.home.rglob("*") if p.is_file()}

    before = snapshot()
    with serving(fixture.home) as server:
        for route in routes(fixture):
            assert get(server.url.rstrip("/") + route)[0] == 200
    after = snapshot()
    # SQLite itself creates the empty -wal / -shm companions a reader of a WAL database needs when the
    # writer has removed them; the database files and everything else stay byte for byte the same.
    companions = {name: digest for name, digest in after.items() if name not in before}
    assert set(companions) <= {"state.db-wal", "state.db-shm", "observability/observability.sqlite3-wal",
                               "observability/observability.sqlite3-shm"}
    assert all(digest == hashlib.sha256(b"").hexdigest() for name, digest in companions.items() if name.endswith("-wal"))
    assert {name: after[name] for name in before} == before


def test_every_source_missing_gives_pages_that_say_so(tmp_path: Path) -> None:
    """BOOK-39: any missing source makes its panel say so, never a 500."""
    home = tmp_path / "empty"
    home.mkdir()
    with serving(home) as server:
        base = server.url.rstrip("/")
        for route in ("/", "/sessions", "/skills", "/memory"):
            status, body, _ = get(base + route)
            assert status == 200 and 'class="missing"' in body, route
        assert "neither state.db" in get(base + "/sessions")[1]
    assert sorted(p.name for p in home.iterdir()) == []


def test_without_state_db_sessions_come_from_the_store_and_the_trajectories(tmp_path: Path) -> None:
    """BOOK-39: a non-Hermes host: sessions from task_runs, messages from the recorded runs' steps."""
    fixture = build_profile(tmp_path, hermes=False)
    with serving(fixture.home) as server:
        base = server.url.rstrip("/")
        _, listing, _ = get(base + "/sessions")
        assert "from store" in listing and SESSION_ID in listing
        status, body, _ = get(f"{base}/sessions/{SESSION_ID}")
        assert status == 200 and "What do my notes say?" in body and "oats, apples" in body


def test_the_jaeger_url_key_adds_trace_links(tmp_path: Path) -> None:
    """BOOK-39: observability.dashboard.jaeger_url (set with config set) links runs to their trace."""
    fixture = build_profile(tmp_path)
    from hermes_pipeline.cli.main import main

    assert main(["config", "set", "--home", str(fixture.home), "observability.dashboard.jaeger_url",
                 "http://localhost:16686"]) == 0
    with serving(fixture.home) as server:
        tid = fixture.trajectories[0]
        _, body, _ = get(f"{server.url.rstrip('/')}/trajectories/{tid}")
        assert f'href="http://localhost:16686/trace/{tid.replace("-", "")}"' in body
        _, session, _ = get(f"{server.url.rstrip('/')}/sessions/{SESSION_ID}")
        assert f'href="http://localhost:16686/trace/{tid.replace("-", "")}"' in session
        assert ('href="http://localhost:16686/search?service=hermes-agent&amp;tags=%7B%22session.id%22%3A%22'
                f'{SESSION_ID}%22%7D"') in session


def test_the_columns_read_are_those_of_hermes_state_schema() -> None:
    """BOOK-39: the dashboard reads Hermes 0.19's real state.db columns."""
    import hermes_state

    from hermes_pipeline.dashboard.queries import MESSAGE_COLUMNS, SESSION_COLUMNS

    ddl = hermes_state.SCHEMA_SQL
    sessions = ddl[ddl.index("CREATE TABLE IF NOT EXISTS sessions"):ddl.index("CREATE TABLE IF NOT EXISTS messages")]
    messages = ddl[ddl.index("CREATE TABLE IF NOT EXISTS messages"):]
    messages = messages[:messages.index(");")]
    for column in SESSION_COLUMNS:
        assert re.search(rf"\n\s+{column} ", sessions), column
    for column in MESSAGE_COLUMNS:
        assert re.search(rf"\n\s+{column} ", messages), column


def test_the_command_refuses_a_remote_bind_without_allow_remote_and_stops_on_sigterm(tmp_path: Path) -> None:
    """BOOK-38: bound to loopback by default; a non-loopback address needs --allow-remote."""
    cmd = [sys.executable, "-m", "hermes_pipeline.cli.main", "dashboard", "--home", str(tmp_path)]
    refused = subprocess.run([*cmd, "--host", "0.0.0.0"], capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "--allow-remote" in refused.stderr
    proc = subprocess.Popen([*cmd, "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("dashboard: http://127.0.0.1:")
        url = line.split()[1]
        assert get(url + "skills")[0] == 200
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    helped = subprocess.run([*cmd[:-2], "--help"], capture_output=True, text=True, timeout=60)
    assert helped.returncode == 0 and "--allow-remote" in helped.stdout and "jaeger_url" in helped.stdout


def test_open_hands_the_url_to_the_browser(tmp_path: Path) -> None:
    """``--open`` opens the dashboard's own URL in the user's browser ($BROWSER here: a command that
    prints what it was given to the dashboard's stdout)."""
    browser = f"{sys.executable} -c \"import sys; print('opened', sys.argv[1], flush=True)\" %s"
    env = {**os.environ, "BROWSER": browser}
    proc = subprocess.Popen([sys.executable, "-m", "hermes_pipeline.cli.main", "dashboard", "--home", str(tmp_path),
                             "--port", "0", "--open"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().split()[1]
        assert proc.stdout.readline().strip() == f"opened {url}"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize("target, extra, status", [("/" + "a" * 70000, {}, 414),
                                                   ("/", {f"X-H{i}": "v" for i in range(120)}, 431),
                                                   ("bad request line", {}, 400)])
def test_the_standard_refusals_carry_the_security_headers(base: str, target: str, extra: dict[str, str],
                                                          status: int) -> None:
    """Issue #31: 400, 414 and 431 from the HTTP layer itself have the same headers as every page."""
    import socket

    host, port = base.split("//", 1)[1].rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        lines = [f"GET {target} HTTP/1.1" if target != "bad request line" else "GET / HTTP/1.1 extra",
                 f"Host: {host}:{port}"] + [f"{k}: {v}" for k, v in extra.items()]
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    head = data.split(b"\r\n\r\n", 1)[0].decode()
    assert head.startswith(f"HTTP/1.1 {status} ") or head.startswith(f"HTTP/1.0 {status} "), head
    assert f"Content-Security-Policy: {CSP}" in head and "X-Frame-Options: DENY" in head
