"""Why a run failed, in the failure's own words (issue #31, deliverable 1): a failed provider attempt, a failed
tool call and a failed turn keep their scrubbed, bounded message beside their type — in the ATIF step
(``extra.hermes.failed_attempts[].message``, the tool result's ``error_message``, the user step's
``error_message``), in the store (``llm_calls``, ``tool_errors`` and ``task_runs.error_message``, schema 5) —
and the run page and ``/failures`` show them (spec 06 BOOK-25, BOOK-38; spec 04 FMT-66 for the types).

The run here is the reference agent on the host API against the scripted model server: HTTP 503 (retried),
a tool that raises, HTTP 429 (retried), then HTTP 400, which fails the turn. The real Hermes run is in
``test_dashboard_hermes_failures.py``.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hermes_pipeline.dashboard import Dashboard, load_sources
from hermes_pipeline.dashboard.html import error_text
from hermes_pipeline.export.classify import ERROR_MESSAGE_CHARS, failure_message

SECRET = "sk-proj-" + "Zq8Xv2Lw9Rt4Yp6Kd3Nm5Bc7Hj1Gf0Sa"
"""An OpenAI-shaped key planted in an error message: it must leave no trace anywhere."""
MARKER = re.compile(r"<redacted(:[0-9a-f]{4,})?>")


def _record_failing_run(home: Path) -> None:
    """The failing run, recorded by a profile with both stores on (one scope plugin feeds both, as in use)."""
    from hermes_pipeline import Engine, runtime
    from hermes_pipeline.profile import activation, open_profile, release_all
    from hermes_pipeline.demo.agent import ReferenceAgent
    from hermes_pipeline.demo.model_server import ScriptedModelServer, ScriptStep, ToolCallSpec
    from hermes_pipeline.demo.openai_client import ChatCompletionsClient
    from hermes_pipeline.demo.tools import Tool

    def deploy(target: str) -> str:
        raise RuntimeError(f"deploy to {target} refused: quota exhausted")

    tools = {"deploy": Tool("deploy", "deploys", {"type": "object", "properties": {"target": {"type": "string"}}},
                            deploy)}
    script = [ScriptStep.error(503, "the upstream is overloaded, try later", retry_after=0),
              ScriptStep(tool_calls=[ToolCallSpec("deploy", {"target": "prod"}, "call_deploy")]),
              ScriptStep.error(429, "slow down: 3 requests per minute", retry_after=0),
              ScriptStep.error(400, f"context length exceeded (key {SECRET} was in the prompt)")]
    (home / "config.yaml").write_text("observability:\n  audit:\n    enabled: true\n  trajectories:\n"
                                      "    enabled: true\n", encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        for name in ("HERMES_NEMO_RELAY_PLUGINS_TOML", "OTEL_EXPORTER_OTLP_ENDPOINT"):
            patch.delenv(name, raising=False)
        previous = runtime.set_engine(Engine())
        patch.setattr(activation, "PROCESS", activation.ProcessActivation())
        try:
            profile = open_profile(home)
            with ScriptedModelServer(script) as server:
                host = profile.host(platform="cli", model=server.model, provider="local-scripted",
                                    base_url=server.base_url, api_mode="chat_completions")
                agent = ReferenceAgent(host, ChatCompletionsClient(server.base_url, timeout=10.0), tools,
                                       max_retries=2)
                with host.session() as session, pytest.raises(Exception, match="context length exceeded"):
                    agent.run_turn(session, "deploy the site")
            profile.close()
        finally:
            release_all()
            runtime.set_engine(previous)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("failing-run") / "home"
    home.mkdir()
    _record_failing_run(home)
    return home


def _rows(home: Path, sql: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(home / "observability" / "observability.sqlite3") as db:
        return list(db.execute(sql))


def _trajectory(home: Path) -> dict[str, Any]:
    (path,) = (home / "trajectories").glob("*.json")
    doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return doc


def test_failed_attempts_tool_errors_and_the_turn_keep_their_message_in_atif(recorded: Path) -> None:
    """FMT-66: each failed provider attempt keeps type, HTTP status and message; the failed tool call its error;
    the user step of the failed turn its type and message."""
    doc = _trajectory(recorded)
    attempts = [a for s in doc["steps"] for a in ((s.get("extra") or {}).get("hermes") or {}).get("failed_attempts", [])]
    by_status = {a.get("status_code"): a for a in attempts}
    assert "the upstream is overloaded, try later" in by_status[503]["message"]
    assert "slow down: 3 requests per minute" in by_status[429]["message"]
    assert "context length exceeded" in by_status[400]["message"]
    results = [r for s in doc["steps"] for r in (s.get("observation") or {}).get("results", [])]
    (deploy,) = [r["extra"]["hermes"] for r in results if r.get("source_call_id") == "call_deploy"]
    assert deploy["status"] == "error" and "deploy to prod refused: quota exhausted" in deploy["error_message"]
    (user,) = [s for s in doc["steps"] if s["source"] == "user"]
    hermes = user["extra"]["hermes"]
    assert hermes["turn_status"] == "error" and "context length exceeded" in hermes["error_message"]
    text = json.dumps(doc)
    assert SECRET not in text and MARKER.search(hermes["error_message"])


def test_the_store_keeps_each_failures_message(recorded: Path) -> None:
    """BOOK-25 (schema 5): ``llm_calls``, ``tool_errors`` and ``task_runs`` say why, scrubbed."""
    llm = _rows(recorded, "SELECT error_type, error_message FROM llm_calls WHERE status = 'error' ORDER BY id")
    assert len(llm) == 3  # the 503, the 429, the 400
    assert "the upstream is overloaded" in llm[0][1] and "slow down" in llm[1][1] and "context length" in llm[2][1]
    ((tool, message),) = _rows(recorded, "SELECT tool_name, error_message FROM tool_errors")
    assert tool == "deploy" and "quota exhausted" in message
    ((outcome, run_message),) = _rows(recorded, "SELECT outcome, error_message FROM task_runs")
    assert outcome == "failed" and "context length exceeded" in run_message
    assert SECRET not in run_message + llm[2][1] and MARKER.search(run_message)


def test_the_run_page_and_failures_show_the_messages(recorded: Path) -> None:
    """BOOK-38: the run page (facts, the turn, each attempt, the tool) and ``/failures`` (runs, tools, provider
    attempts) show the type and the message; no secret on either page."""
    app = Dashboard(load_sources(recorded))
    tid = _trajectory(recorded)["extra"]["hermes"].get("trajectory_id") or \
        next((recorded / "trajectories").glob("*.json")).name[11:47]
    run = app.respond(f"/trajectories/{tid}").body.decode()
    assert re.search(r'<dt>error</dt><dd><b class="errtype">[a-z_]+</b>: <span class="errmsg">[^<]*context '
                     r"length exceeded", run)
    assert "the turn failed:" in run
    assert re.search(r"attempt 1: <b>upstream_error</b> \(HTTP 503\): [^<]*the upstream is overloaded, try later", run)
    assert re.search(r"<b>rate_limited</b> \(HTTP 429\): [^<]*slow down: 3 requests per minute", run)
    assert re.search(r'id="call-call_deploy" open><summary>tool <b>deploy</b>.*?<span class="errmsg">[^<]*quota '
                     r"exhausted", run)
    failures = app.respond("/failures").body.decode()
    for text in ("context length exceeded", "the upstream is overloaded", "slow down: 3 requests per minute",
                 "deploy to prod refused: quota exhausted"):
        assert text in failures, text
    assert SECRET not in run + failures


@given(st.text(max_size=3000), st.sampled_from(["error_message", "reason", "result"]))
def test_a_failure_message_is_bounded_and_only_from_its_fields(text: str, key: str) -> None:
    """A stored message is the end's own words, stripped and at most ``ERROR_MESSAGE_CHARS`` long; a tool's
    result is read only where asked (a command's output)."""
    data = {key: text}
    got = failure_message(data)
    if key == "result" or not text.strip():
        assert got is None
    else:
        assert got is not None and len(got) <= ERROR_MESSAGE_CHARS and text.strip().startswith(got.rstrip("…"))
    with_result = failure_message(data, result=True)
    assert (with_result is None) == (not text.strip())
    if key == "result" and with_result is not None:  # a command's output keeps its end
        assert len(with_result) <= ERROR_MESSAGE_CHARS and text.strip().endswith(with_result.lstrip("…"))


@given(st.text(max_size=400), st.text(max_size=40))
def test_error_text_escapes_everything(message: str, kind: str) -> None:
    """Every value escaped: no tag from a type or a message reaches the page as markup."""
    html = error_text(kind, message, limit=100)
    stripped = re.sub(r'</?(b class="errtype"|b|span class="errmsg"|span)>', "", html)
    assert "<" not in stripped and ">" not in stripped


def test_a_store_written_before_schema_5_still_answers(tmp_path: Path) -> None:
    """The dashboard reads, never upgrades: a version-4 store (no ``error_message`` columns) still gives every
    failure list, with the types and no "store unreadable"."""
    from hermes_pipeline.sinks.observability_store.schema import ADDED_COLUMNS, TABLES

    home = tmp_path / "home"
    (home / "observability").mkdir(parents=True)
    (home / "trajectories").mkdir()
    with sqlite3.connect(home / "observability" / "observability.sqlite3") as db:
        for table, ddl in TABLES.items():
            for column, decl in ADDED_COLUMNS.get(table, ()):
                if column == "error_message":
                    ddl = ddl.replace(f",\n        {column} {decl})", ")")
            db.execute(ddl)
        assert "error_message" not in {r[1] for r in db.execute("PRAGMA table_info(task_runs)")}
        db.execute("INSERT INTO task_runs (trajectory_id, session_id, ended_at, outcome, error_type) VALUES "
                   "('01a23bfc-0000-7000-8000-000000000001', 's1', datetime('now'), 'failed', 'rate_limited')")
        db.execute("INSERT INTO tool_errors (ended_at, tool_name, status, error_type, exit_code) VALUES "
                   "(datetime('now'), 'terminal', 'ok', 'command_failed', 3)")
        db.execute("INSERT INTO llm_calls (ended_at, status, error_type) VALUES (datetime('now'), 'error', 'timeout')")
        db.execute("PRAGMA user_version = 4")
    app = Dashboard(load_sources(home))
    for route in ("/failures", "/runs", "/sessions", "/sessions/s1"):
        response = app.respond(route)
        page = response.body.decode()
        assert response.status == 200 and "store unreadable" not in page, (route, page[-600:])
    page = app.respond("/failures").body.decode()
    assert "rate_limited" in page and "command_failed" in page and "timeout" in page
