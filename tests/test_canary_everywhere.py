"""No planted credential leaves the process or is stored raw, whatever field it was planted in (issue 25;
spec 04 FMT-33a, spec 06 BOOK-12, BOOK-15, BOOK-21, BOOK-45, BOOK-47, SM-44).

Canaries are generated (seeded, several credential shapes the scrubber recognises) and planted in every field
of every hook the host API reports, names included: the model, provider URL and agent version of the host; the
user message, the conversation and the model's answer; a tool's name (in the model's tool call too), its
argument values and paths, its result and its error message; an approval's command and description; a
human-input prompt; a subagent's role, goal, answer and summary; a skill's name (as a directory on disk too)
and reason; memory written by the memory tool and memory edited by hand (content and file name); the final
answer; a turn's exception; a plugin's exception and a plugin's log record. Hermes' own ``state.db`` holds
canaries too, as it does when Hermes' redaction is off.

Every output is then scanned for the raw secret: every file the run wrote (ATOF, ATIF, trajectory store, both
stores' databases, ``scan-state.json``, the JSON Lines log, shared-metrics packages), every row of both
stores read through ``sqlite3``, every OTLP request body (traces and metrics, decoded as the bytes they are),
every dashboard page, every alert webhook body, and stderr, for both content-gate settings. Only request
headers may carry a canary (none here: the receivers record bodies).
"""

from __future__ import annotations

import html
import http.server
import json
import logging
import os
import random
import re
import sqlite3
import string
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_pipeline.engine.scrub import safe_scrub
from hermes_pipeline.export import bounds
from hermes_pipeline.export.events import ScopeEvent
from hermes_pipeline.export.redaction import redact_event
from hermes_pipeline.sinks.otel import CAPTURE_ENV

from tests.sinks.atof._support import Receiver
from tests.sinks.otel._support import BodyReceiver
from hermes_pipeline.testing import chat_response
from tests._pipelines import write_pipeline

REDACTION = re.compile(r"<redacted(:[0-9a-f]{4,})?>")
ALNUM = string.ascii_letters + string.digits
UPPER = string.ascii_uppercase + string.digits


# ---------------------------------------------------------------------------------------------- canaries


@dataclass
class Canaries:
    """Generated credentials: ``planted`` is the text put in a field, ``secret`` the part that must never show."""

    rng: random.Random
    secrets: dict[str, str] = field(default_factory=dict)

    def _token(self, shape: str) -> str:
        r = self.rng
        if shape == "ghp":
            return "ghp_" + "".join(r.choice(ALNUM) for _ in range(36))
        if shape == "proj":
            return "sk-proj-" + "".join(r.choice(ALNUM) for _ in range(40))
        return "AKIA" + "".join(r.choice(UPPER) for _ in range(16))

    def name(self, where: str) -> str:
        """A credential that is a whole name (a tool, a skill, a model): one of the token shapes."""
        token = self._token(self.rng.choice(["ghp", "proj", "akia"]))
        self.secrets[where] = token
        return token

    def text(self, where: str) -> str:
        """A credential inside content: a token, or ``password=<secret>``."""
        shape = self.rng.choice(["ghp", "proj", "akia", "password"])
        if shape == "password":
            secret = "Zq" + "".join(self.rng.choice(ALNUM) for _ in range(22))
            self.secrets[where] = secret
            return f"password={secret}"
        token = self._token(shape)
        self.secrets[where] = token
        return token

    def hits(self, where: str, data: bytes | str) -> list[str]:
        """``"field @ where"`` for every secret found in ``data`` (exact, or lowercased as a package would)."""
        blob = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
        low = blob.lower()
        return [f"{name} @ {where}" for name, secret in self.secrets.items() if secret in blob or secret.lower() in low]


def test_the_generated_canaries_are_shapes_the_scrubber_recognises() -> None:
    """The canary generator is honest: every shape, planted alone or in a sentence, is redacted today."""
    canaries = Canaries(random.Random(7))
    for i in range(200):
        planted = canaries.text(f"t{i}") if i % 2 else canaries.name(f"n{i}")
        secret = canaries.secrets[f"t{i}" if i % 2 else f"n{i}"]
        for text in (planted, f"use {planted} now", json.dumps({"v": planted})):
            out = safe_scrub(text)
            assert secret not in out and REDACTION.search(out), (text, out)


# ---------------------------------------------------------------------------------------------- receivers


@contextmanager
def webhook_receiver() -> Iterator[tuple[str, list[bytes]]]:
    """A loopback HTTP server keeping every POST body; stops when the block ends."""
    bodies: list[bytes] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - stdlib naming
            bodies.append(self.rfile.read(int(self.headers["Content-Length"])))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/hook", bodies
    finally:
        server.shutdown()
        server.server_close()


# ---------------------------------------------------------------------------------------------- the run


def pipeline_document(root: Path, otlp: BodyReceiver, stream_url: str, *, gate_open: bool,
                      max_value_chars: int | None = None) -> dict[str, Any]:
    """Every exporter of the ``observability`` component on: ATOF file and stream, ATIF, three OTLP projections,
    metrics."""
    config: dict[str, Any] = {
        "version": 4, "enable_full_payloads": gate_open,
        "atof": {"enabled": True, "sinks": [{"type": "file", "output_directory": str(root / "telemetry"),
                                             "filename": "events.jsonl"},
                                            {"type": "stream", "url": stream_url, "transport": "http_post"}]},
        "atif": {"enabled": True, "output_directory": str(root / "atif")},
        "opentelemetry": {"enabled": True, "endpoints": [
            {"type": kind, "endpoint": f"{otlp.endpoint}/{kind}/v1/traces", "scheduled_delay_millis": 50}
            for kind in ("gen_ai", "full", "openinference")],
            "metrics": {"enabled": True, "include_skill_names": True, "export_interval_millis": 60_000,
                        "endpoints": [{"endpoint": f"{otlp.endpoint}/metrics/v1/metrics"}]}}}
    if max_value_chars is not None:
        config["max_value_chars"] = max_value_chars
    return {"version": 1, "components": [{"kind": "observability", "config": config}]}


def profile_yaml(otlp: BodyReceiver, max_value_chars: int | None = None) -> str:
    """Trajectory store, observability store, quick OTel endpoint, JSON Lines log and shared metrics on."""
    bound = f"  max_value_chars: {max_value_chars}\n" if max_value_chars is not None else ""
    return ("observability:\n  trajectories:\n    enabled: true\n  audit:\n    enabled: true\n"
            f"  otel_enabled: true\n  otel_endpoint: {otlp.endpoint}/quick\n"
            f"  memory_tools:\n    memory: memory.update\n{bound}"
            "telemetry:\n  shared_metrics:\n    enabled: true\n")


def hermes_state(home: Path, canaries: Canaries) -> str:
    """A Hermes ``state.db`` (written by Hermes' own ``SessionDB``) whose messages hold canaries; its session id."""
    from hermes_state import SessionDB

    session_id = "20261203_100000_cafe01"
    db = SessionDB(home / "state.db")
    try:
        db.create_session(session_id, "cli", model="m")
        db.append_message(session_id, "user", f"my key is {canaries.text('state.user')}")
        db.append_message(session_id, "assistant", None, tool_calls=[{
            "id": "call_9", "type": "function",
            "function": {"name": "read_file", "arguments": json.dumps({"path": canaries.text("state.args")})}}])
        db.append_message(session_id, "tool", f"found {canaries.text('state.tool')}", tool_name="read_file",
                          tool_call_id="call_9")
        db.append_message(session_id, "assistant", f"the key: {canaries.text('state.answer')}")
    finally:
        db.close()
    return session_id


def memory_tool(home: Path) -> Any:
    """A Hermes-like ``memory`` tool writing ``memories/MEMORY.md``."""
    def memory(action: str, content: str = "", target: str = "memory", **_: Any) -> str:
        path = home / "memories" / "MEMORY.md"
        path.write_text(path.read_text(encoding="utf-8") + content + "\n", encoding="utf-8")
        return '{"success": true}'
    return memory


CANARY_OBSERVERS = "canary-observers"
"""The plugin name of the test's own observers (removed from the process-wide engine when the run ends)."""


def planted_run(profile: Any, home: Path, canaries: Canaries) -> None:
    """One session through the host API with a canary in every field (see the module docstring)."""
    c = canaries
    engine = profile.engine

    exception_text, log_text, log_extra = c.text("plugin.exception"), c.text("plugin.log"), c.name("plugin.log.extra")

    def leaky_observer(**kwargs: Any) -> None:
        raise ValueError(f"observer cannot handle {exception_text}")

    def logging_observer(**kwargs: Any) -> None:
        logging.getLogger("hermes_pipeline.plugins.canary").warning("plugin saw %s", log_text,
                                                                    extra={"path": f"/tmp/{log_extra}/x"})

    engine.register_hook("post_tool_call", leaky_observer, plugin=CANARY_OBSERVERS)
    engine.register_hook("on_session_end", logging_observer, plugin=CANARY_OBSERVERS)
    tool = c.name("tool.name")
    host = profile.host(platform="cli", model=c.name("host.model"), provider="openai",
                        base_url=f"https://deploy:{c.name('host.base_url')}@api.example/v1",
                        agent_version=c.name("host.agent_version"), toolsets={tool: c.name("host.toolset")})
    context = host.context_snapshot(home, toolsets=[c.name("context.toolset")])
    skill = c.name("skill.name")
    tool_call = {"id": "call_1", "type": "function",
                 "function": {"name": tool, "arguments": json.dumps({"path": c.text("llm.tool_args")})}}
    with host.session(f"session-{c.name('session.id')}") as session:
        with session.turn(f"Deploy it. {c.text('turn.user_message')}", context=context,
                          sender_id=c.name("turn.sender_id"),
                          conversation_history=[{"role": "user", "content": c.text("turn.history")}]) as turn:
            history = [{"role": "system", "content": f"You are Hermes. {c.text('llm.system')}"},
                       {"role": "user", "content": f"Deploy it. {c.text('llm.user')}"}]
            turn.call_llm({"model": c.name("llm.request_model"), "messages": history},
                          lambda r: chat_response(f"I will use {c.text('llm.answer')}", [tool_call]))
            provider_error = c.text("llm.provider_error")

            def refusing(request: Any) -> Any:
                raise ConnectionError(f"upstream said {provider_error}")

            with pytest.raises(ConnectionError):
                turn.call_llm({"model": "m", "messages": history}, refusing)

            def deploy(path: str, password: str) -> str:
                with turn.approval(f"deploy --force {c.text('approval.command')}",
                                   description=f"pushes {c.text('approval.description')}") as approval:
                    approval.resolve("once")
                return f"deployed; the server said {c.text('tool.result')}"

            turn.call_tool(tool, {"path": f"/srv/{c.name('tool.path')}/app", "password": c.text("tool.args")},
                           deploy, tool_call_id=f"call_{c.name('tool.call_id')}")

            def failing() -> str:
                raise RuntimeError(f"upstream refused {c.text('tool.error')}")

            turn.call_tool(c.name("tool.name.failing"), {}, failing, tool_call_id="call_2")
            turn.call_tool("memory", {"action": "add", "content": f"remember {c.text('memory.tool_write')}"},
                           memory_tool(home), tool_call_id="call_3")
            with turn.human_input("sudo", f"Confirm with {c.text('human_input.prompt')}") as wait:
                wait.resolve("submitted")
            host.skill_lifecycle("created", skill, reason=f"because {c.text('skill.reason')}")
            host.skill_lifecycle("loaded", skill)
            with turn.subagent(role=c.name("subagent.role"), goal=f"verify {c.text('subagent.goal')}") as run:
                with run.session.turn(f"verify {c.text('subagent.turn')}") as child:
                    child.complete(f"verified {c.text('subagent.answer')}")
                run.finish("completed", summary=f"checked {c.text('subagent.summary')}")
            turn.complete(f"Done. {c.text('turn.final')}")
        with pytest.raises(RuntimeError):
            with session.turn("again"):
                raise RuntimeError(f"turn failed with {c.text('turn.exception')}")


def out_of_band_edits(home: Path, canaries: Canaries, skill_dir: str) -> None:
    """Edits a user makes by hand: memory files (content and name) and a skill's ``SKILL.md``."""
    (home / "memories" / "USER.md").write_text(f"user {canaries.text('memory.user_edit')}\n", encoding="utf-8")
    (home / "memories" / f"{canaries.name('memory.file_name')}.md").write_text("note\n", encoding="utf-8")
    with open(home / "memories" / "MEMORY.md", "a", encoding="utf-8") as fh:
        fh.write(f"pasted {canaries.text('memory.hand_edit')}\n")
    (home / "skills" / skill_dir / "SKILL.md").write_text("# changed by hand\n", encoding="utf-8")


@dataclass
class Outputs:
    """Everything one run produced, by where it was found."""

    found: dict[str, bytes] = field(default_factory=dict)

    def add(self, where: str, data: bytes | str) -> None:
        self.found[where] = self.found.get(where, b"") + (data.encode("utf-8", "surrogatepass")
                                                          if isinstance(data, str) else data)


def sqlite_rows(path: Path) -> str:
    """Every row of every table of a SQLite database, as text."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = [t for (t,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return "\n".join(repr(row) for table in tables for row in conn.execute(f'SELECT * FROM "{table}"'))
    finally:
        conn.close()


def dashboard_pages(home: Path, state_session: str) -> dict[str, str]:
    """Every dashboard page of the profile, rendered by the dashboard's own queries and views."""
    from hermes_pipeline.dashboard import load_sources, queries, views
    from hermes_pipeline.dashboard.views_runs import trajectory_view

    sources = load_sources(home)
    pages = {"/": views.overview_view(queries.overview(sources), str(home)),
             "/sessions": views.sessions_view(queries.sessions(sources), str(home)),
             "/skills": views.skills_view(queries.skills(sources), str(home)),
             "/memory": views.memory_view(queries.memory(sources), str(home))}
    session = queries.session(sources, state_session)
    assert session is not None
    pages[f"/sessions/{state_session}"] = views.session_view(session, str(home))
    for item in queries.trajectory_files(sources, 50) or []:
        data = queries.trajectory(sources, item["id"])
        if data is not None:
            pages[f"/runs/{item['id']}"] = trajectory_view(data, str(home))
    return pages


def alert_bodies(home: Path, canaries: Canaries) -> list[bytes]:
    """Webhook bodies of the alerts the store's rows raise (a skill failing five times in a row, under a
    canary name the rows hold raw, as a store written by another tool would)."""
    from hermes_pipeline.alerts.evaluator import run_once
    from hermes_pipeline.alerts.notifiers.webhook import webhook_notifier
    from hermes_pipeline.alerts.rules import sql_time
    from hermes_pipeline.config.alert_settings import AlertSettings
    from hermes_pipeline.sinks.observability_store.db import connect, store_path

    now = datetime.now(UTC)
    conn = connect(store_path(home))
    try:
        raw = canaries.name("alert.skill_name")
        with conn:
            for i in range(6):
                ended = sql_time(now - timedelta(minutes=10 - i))
                conn.execute("INSERT INTO skill_runs (skill_name, started_at, ended_at, outcome) VALUES (?, ?, ?, ?)",
                             (raw, ended, ended, "failed"))
        cfg = AlertSettings(enabled=True, notifiers=("webhook",))
        with webhook_receiver() as (url, bodies):
            notifier = webhook_notifier(cfg, {"HERMES_ALERTS_WEBHOOK_URL": url})
            # a medium alert is collected for medium_collect_minutes before it is sent: evaluate again after
            reports = [run_once(conn, at, cfg, [notifier], sleep=lambda s: None)
                       for at in (now, now + timedelta(minutes=cfg.medium_collect_minutes + 1))]
        sent = [entry for report in reports for entry in report.sent]
        assert any("A-M1" in alert for entry in sent for alert in entry["alerts"]), sent  # the skill alert went out
        return [*bodies, json.dumps(sent).encode()]
    finally:
        conn.close()


def run_everything(root: Path, canaries: Canaries, *, gate_open: bool, monkeypatch: pytest.MonkeyPatch,
                   max_value_chars: int | None = None, big: str | None = None) -> tuple[Outputs, Path]:
    """Activate every exporter and store, plant the canaries, close everything; collect every output."""
    from hermes_pipeline.profile import open_profile, release_all
    from hermes_pipeline.config.discovery import PipelineSettings
    from hermes_pipeline.runtime import get_engine
    from hermes_pipeline.sinks.observability_store.sink import SCAN_ALL

    if gate_open:
        monkeypatch.setenv(CAPTURE_ENV, "true")
    else:
        monkeypatch.delenv(CAPTURE_ENV, raising=False)
    outputs = Outputs()
    otlp = BodyReceiver()
    servers = ExitStack()
    stream = servers.enter_context(Receiver())
    try:
        (root / "pipeline.toml").write_text(tomli_w.dumps(pipeline_document(root, otlp, stream.url,
                                                                            gate_open=gate_open,
                                                                            max_value_chars=max_value_chars)))
        settings = PipelineSettings(plugins_toml=str(root / "pipeline.toml"), xdg_config_home=str(root / "xdg"),
                                    home=str(root), system_plugins_toml=str(root / "no-system.toml"))
        home = root / "home"
        (home / "memories").mkdir(parents=True)
        (home / "memories" / "MEMORY.md").write_text("Groceries on Saturdays.\n", encoding="utf-8")
        skill_dir = canaries.name("skill.dir_on_disk")
        (home / "skills" / skill_dir).mkdir(parents=True)
        (home / "skills" / skill_dir / "SKILL.md").write_text(
            f"---\nname: {canaries.name('skill.front_matter')}\ndescription: uses {canaries.text('skill.desc')}\n"
            "---\n# a skill\n", encoding="utf-8")
        (home / "config.yaml").write_text(profile_yaml(otlp, max_value_chars), encoding="utf-8")
        state_session = hermes_state(home, canaries)
        profile = open_profile(home, settings=settings)
        try:
            if big is None:
                planted_run(profile, home, canaries)
                out_of_band_edits(home, canaries, skill_dir)
                store = profile.consumers["observability_store"]
                store.sink.request_scan(SCAN_ALL)
                # a database busy past its timeout keeps the rows for the next commit (the store's documented
                # behaviour): a second barrier then writes them
                assert any(store.sink.flush(30.0) for _ in range(3)), json.dumps(dict(store.sink.stats()),
                                                                                default=str)
            else:
                huge_run(profile, big)
            shared = profile.consumers["shared_metrics"]
            assert shared.flush()
            shared.export_due(force=True)
            component = get_engine().plugins.get("component:observability")
            assert component is not None and component.instance.flush(15.0)
        finally:
            profile.engine.plugins.remove_all()
            profile.engine.plugins.remove(CANARY_OBSERVERS)  # the process-wide engine outlives this test
            release_all()
        for body_path, body in list(otlp.bodies):
            outputs.add(f"otlp:{body_path}", body)
        for _headers, body in list(stream.requests):  # request headers are not counted (issue 25)
            outputs.add("atof-stream", body)
    finally:
        otlp.close()
        servers.close()
    inputs = {home / "state.db", home / "config.yaml", root / "pipeline.toml"}
    for path in sorted(root.rglob("*")):
        if not path.is_file() or path in inputs or path.is_relative_to(home / "memories") \
                or path.is_relative_to(home / "skills") or path.name.startswith("state.db"):
            continue
        outputs.add(f"file:{path.relative_to(root)}", path.read_bytes())
        outputs.add("file names", f"{path.relative_to(root)}\n")
        if path.suffix in (".sqlite3", ".db", ".sqlite"):
            outputs.add(f"rows:{path.relative_to(root)}", sqlite_rows(path))
    if big is None:
        for url, page in dashboard_pages(home, state_session).items():
            outputs.add(f"dashboard:{url}", page)
        for i, body in enumerate(alert_bodies(home, canaries)):
            outputs.add(f"alert-webhook:{i}", body)
    return outputs, home


def huge_run(profile: Any, big: str) -> None:
    """One tool call whose result, argument and name-free content are huge (the value bound)."""
    host = profile.host(platform="cli", model="m", provider="openai")
    with host.session() as session, session.turn("read the big file") as turn:
        turn.call_tool("read_file", {"path": "big.log", "content": big}, lambda path, content: big,
                       tool_call_id="call_big")
        logging.getLogger("hermes_pipeline.plugins.big").warning("saw %s", big)
        turn.complete("done")


@pytest.mark.parametrize("gate_open", [False, True], ids=["gate-closed", "gate-open"])
def test_issue25_no_canary_in_any_output_of_any_field(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capfd: pytest.CaptureFixture[str], gate_open: bool) -> None:
    """FMT-33a / BOOK-12 / BOOK-15 / BOOK-21 / BOOK-45 / BOOK-47 / SM-44: 0 hits of any generated canary, planted in
    every field of every hook (names, paths, memory and Hermes' own messages included), in every output."""
    canaries = Canaries(random.Random(2500 + gate_open))
    outputs, home = run_everything(tmp_path, canaries, gate_open=gate_open, monkeypatch=monkeypatch)
    captured = capfd.readouterr()
    outputs.add("stderr", captured.err)
    outputs.add("stdout", captured.out)
    found = outputs.found
    # the run really exported everywhere, so a missing canary is not a missing output
    for expected in ("file:telemetry/events.jsonl", "atof-stream", "otlp:/gen_ai/v1/traces", "otlp:/full/v1/traces",
                     "otlp:/openinference/v1/traces", "otlp:/quick/v1/traces", "otlp:/metrics/v1/metrics",
                     "file:home/observability/scan-state.json", "file:home/logs/hermes-pipeline.jsonl",
                     "rows:home/observability/observability.sqlite3", "dashboard:/memory", "alert-webhook:0"):
        assert expected in found, sorted(found)
    assert any(k.startswith("file:atif/") for k in found) and any(k.startswith("file:home/trajectories/")
                                                                  for k in found), sorted(found)
    assert any("outbox" in k for k in found), sorted(found)  # a shared-metrics package was written
    rows = found["rows:home/observability/observability.sqlite3"].decode()
    assert "user-direct" in rows and "external_edit" in rows  # the hand edits became rows (scrubbed)
    assert REDACTION.search(html.unescape(found["dashboard:/memory"].decode()))  # the hand edit, scrubbed
    assert REDACTION.search(html.unescape(found["dashboard:/sessions/20261203_100000_cafe01"].decode()))
    hits = [hit for where, data in sorted(found.items()) for hit in canaries.hits(where, data)]
    assert hits == [], f"{len(hits)} canary hits: {hits[:20]}"


def test_issue25_scan_state_keeps_hashes_and_scrubbed_text_only(tmp_path: Path) -> None:
    """BOOK-21: a state written by an older version (raw memory text, raw skill names) is scrubbed when loaded, and
    the store's own state never holds raw memory text."""
    from hermes_pipeline.sinks.observability_store.scan import ScanState, state_key

    canaries = Canaries(random.Random(11))
    raw_text, raw_skill = f"key {canaries.text('old.text')}\n", canaries.name("old.skill")
    path = tmp_path / "scan-state.json"
    path.write_text(json.dumps({"version": 1, "skills": {raw_skill: "ab" * 32, "plain-skill": "cd" * 32},
                                "memory": {"memories/MEMORY.md": {"sha256": "ef" * 32, "text": raw_text}}}))
    state = ScanState.load(path)
    state.save(path)
    saved = path.read_text()
    assert canaries.hits("scan-state", saved) == []
    loaded = json.loads(saved)
    assert loaded["skills"]["plain-skill"] == "cd" * 32 and loaded["skills"][state_key(raw_skill)] == "ab" * 32
    assert state_key(raw_skill).startswith("sha256:")
    assert REDACTION.search(loaded["memory"]["memories/MEMORY.md"]["text"])


def test_issue25_thread_traceback_on_stderr_is_scrubbed(tmp_path: Path) -> None:
    """FMT-33a: an exception escaping a plugin's own thread reaches stderr scrubbed (the default hook chained)."""
    canaries = Canaries(random.Random(31))
    planted = canaries.text("thread.exception")
    script = tmp_path / "thread_raise.py"
    script.write_text(
        "import sys, threading\n"
        "from hermes_pipeline import Engine\n"
        "Engine()\n"
        "def work():\n"
        "    raise RuntimeError('plugin thread failed with ' + sys.argv[1])\n"
        "t = threading.Thread(target=work, name='plugin-worker')\n"
        "t.start(); t.join()\n"
        "print('finished')\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    done = subprocess.run([sys.executable, str(script), planted], capture_output=True, text=True, timeout=60,
                          env=env, cwd=tmp_path)
    assert done.returncode == 0 and "finished" in done.stdout, done.stderr
    assert "Exception in thread plugin-worker" in done.stderr and "RuntimeError" in done.stderr
    assert REDACTION.search(done.stderr), done.stderr
    assert canaries.hits("stderr", done.stderr) == []


def test_issue25_a_chained_thread_hook_sees_only_the_scrubbed_traceback() -> None:
    """A hook installed before ours (an application's) is still called, with the scrubbed text only."""
    from hermes_pipeline.engine import excepthook

    canaries = Canaries(random.Random(41))
    planted = canaries.text("thread.chained")
    seen: list[Any] = []
    old = threading.excepthook
    excepthook._installed.clear()
    threading.excepthook = seen.append
    try:
        excepthook.install_thread_excepthook()
        hook = threading.excepthook
        try:
            raise ValueError(f"boom {planted}")
        except ValueError as exc:
            hook(threading.ExceptHookArgs([type(exc), exc, exc.__traceback__, threading.current_thread()]))
    finally:
        threading.excepthook = old
        excepthook._installed.clear()
    (args,) = seen
    assert args.exc_type is excepthook.ScrubbedThreadException
    assert "ValueError" in str(args.exc_value) and canaries.hits("chained hook", str(args.exc_value)) == []


def test_issue25_distinct_secret_skill_names_stay_distinct_rows(tmp_path: Path) -> None:
    """Two skills whose names are different secrets stay two rows (the redaction marker keeps them apart)."""
    from hermes_pipeline import Engine, Host
    from hermes_pipeline.config.observability_settings import ObservabilitySettings
    from hermes_pipeline.sinks.observability_store import attach_store, store_path

    canaries = Canaries(random.Random(53))
    first, second = canaries.name("skill.a"), canaries.name("skill.b")
    assert safe_scrub(first) != safe_scrub(second)  # the keyed marker tells the two secrets apart
    engine = Engine()
    handle = attach_store(engine, tmp_path, ObservabilitySettings(audit_enabled=True))
    try:
        host = Host(engine, model="m", provider="openai")
        with host.session() as session, session.turn("make two skills") as turn:
            for name in (first, second):
                host.skill_lifecycle("created", name, reason="r")
            turn.complete("done")
    finally:
        handle.close()
    conn = sqlite3.connect(store_path(tmp_path))
    try:
        names = [n for (n,) in conn.execute("SELECT DISTINCT skill_name FROM skill_history")]
    finally:
        conn.close()
    assert len(names) == 2 and all(REDACTION.fullmatch(n) for n in names), names


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield str(k)
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def test_issue25_every_sink_bounds_one_value(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A huge tool result (and argument, and log message) is cut to ``max_value_chars`` in every output, with a
    marker saying how much was cut; the trajectory store says its run was cut (it cannot replay it byte for
    byte); no output line comes near the value's size."""
    cap = 5_000
    size = 3_000_000
    big = "".join(random.Random(3).choices(ALNUM + " \n", k=size))
    outputs, home = run_everything(tmp_path, Canaries(random.Random(5)), gate_open=True, monkeypatch=monkeypatch,
                                   max_value_chars=cap, big=big)
    marker = f"...[truncated {size - cap} chars]"
    limit = cap + len(marker) + 64
    atof = outputs.found["file:telemetry/events.jsonl"].decode()
    assert marker in atof
    for where, data in outputs.found.items():
        for line in data.split(b"\n"):
            assert len(line) < size // 10, f"{where}: a line of {len(line)} bytes"
        if where.startswith("file:") and where.endswith((".json", ".jsonl")):
            text = data.decode()
            docs = [json.loads(line) for line in text.splitlines() if line.strip()] if where.endswith("l") \
                else [json.loads(text)]
            for doc in docs:
                longest = max((len(s) for s in _strings(doc)), default=0)
                assert longest <= limit, f"{where}: a value of {longest} characters"
    runs = [json.loads(data) for where, data in outputs.found.items() if where.startswith("file:home/trajectories/")]
    assert runs and any(run["extra"]["hermes"].get("truncated_values") for run in runs)
    # and a replay of such a run says it is served the cut text
    from hermes_pipeline.replay.recording import Recording
    from hermes_pipeline.replay.runner import truncation_warnings

    cut_run = next(run for run in runs if run["extra"]["hermes"].get("truncated_values"))
    assert "max_value_chars" in truncation_warnings(Recording("store", cut_run))[0]
    rows = sqlite3.connect(home / "observability" / "observability.sqlite3")
    try:
        for table in ("task_runs", "llm_calls", "memory_changes"):
            for row in rows.execute(f"SELECT * FROM {table}"):
                assert all(len(v) <= limit for v in row if isinstance(v, str)), table
    finally:
        rows.close()


# ---------------------------------------------------------------------------------------------- the bound, unit by unit

@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet=ALNUM + " \n=:\"{}", max_size=6000), cap=st.integers(1000, 5000),
       seed=st.integers(0, 2**32 - 1), where=st.floats(0, 1))
def test_issue25_bounded_scrub_cuts_after_scrubbing_and_says_how_much(text: str, cap: int, seed: int,
                                                                       where: float) -> None:
    """A value over the bound ends with ``...[truncated N chars]`` (N counted in the original), is never longer than
    the bound plus the marker, and a credential anywhere (also across the cut) never shows, not even in part."""
    canaries = Canaries(random.Random(seed))
    planted = canaries.name("v")
    at = int(where * len(text))
    value = text[:at] + f" {planted} " + text[at:]
    out, cut = bounds.bounded_scrub(value, cap)
    secret = canaries.secrets["v"]
    assert secret[4:12] not in out  # no piece of the key (its random part) survives, even cut short
    if len(value) <= cap:
        assert not cut and out == safe_scrub(value)
    else:
        assert cut and out.endswith(f"...[truncated {len(value) - cap} chars]")
        assert len(out) == cap + len(f"...[truncated {len(value) - cap} chars]")


def test_issue25_the_bound_holds_with_redaction_off_and_marks_the_event() -> None:
    """``redact_credentials = false`` keeps credentials raw but not sizes: :func:`bounds.bound_event` cuts every
    string of the name, data, profile and metadata and counts the cuts in ``hermes.truncated_values``."""
    long = "x" * 5000
    event = ScopeEvent("scope", "end", 1, None, 1, long, "tool", (), {"p": [long]}, {"result": long, "n": 3},
                       {"hermes.session_id": "s"}, 1, 1)
    out = bounds.bound_event(event, 1000)
    assert out.name == "x" * 1000 + "...[truncated 4000 chars]"
    assert out.data == {"result": "x" * 1000 + "...[truncated 4000 chars]", "n": 3}
    assert out.metadata[bounds.TRUNCATED_VALUES_KEY] == 3 and event.data["result"] == long  # never mutated
    scrubbed = redact_event(event, 1000)
    assert scrubbed.metadata[bounds.TRUNCATED_VALUES_KEY] == 3 and len(scrubbed.data["result"]) < 1100
    small = ScopeEvent("scope", "end", 1, None, 1, "t", "tool", (), None, {"r": "ok"}, {}, 1, 1)
    assert bounds.bound_event(small, 1000) is small and redact_event(small, 1000) is small


@pytest.mark.parametrize(("value", "expected"), [(None, bounds.DEFAULT_MAX_VALUE_CHARS), (10, 1000), (5000, 5000)])
def test_issue25_max_value_chars_is_validated(value: Any, expected: int) -> None:
    assert bounds.max_value_chars(value) == expected


@pytest.mark.parametrize("value", [True, "1000", 1.5])
def test_issue25_max_value_chars_refuses_a_non_integer_naming_the_key(value: Any) -> None:
    with pytest.raises(TypeError, match="max_value_chars"):
        bounds.max_value_chars(value)


def test_issue25_max_value_chars_is_checked_by_config_validate(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """``config validate`` accepts exactly what activation accepts: an integer of at least 1000."""
    from hermes_pipeline.cli.main import main

    for value, valid in (("5000", True), ("10", False), ('"big"', False)):
        path = write_pipeline(tmp_path, "strict-observability", extra=f"max_value_chars = {value}\n",
                              filename="pipeline.toml")
        code = main(["config", "validate", "--no-discovery", str(path)])
        out, err = capsys.readouterr()
        assert (code == 0) is valid, (value, out, err)
        if not valid:
            assert "max_value_chars" in err


def test_issue25_dashboard_text_is_scrubbed_and_bounded() -> None:
    """What the dashboard reads and did not write (Hermes' messages) is scrubbed and cut to the export bound."""
    from hermes_pipeline.dashboard.scrubbed import scrub_all

    canaries = Canaries(random.Random(61))
    planted = canaries.text("dashboard")
    huge = planted + " " + "y" * (2 * bounds.DEFAULT_MAX_VALUE_CHARS)
    out = scrub_all({"messages": [{"content": huge, planted: (planted,)}]})
    (message,) = out["messages"]
    assert canaries.hits("page", json.dumps(out)) == []
    assert message["content"].endswith(f"...[truncated {len(huge) - bounds.DEFAULT_MAX_VALUE_CHARS} chars]")
