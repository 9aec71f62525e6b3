"""Checked in a real backend (issue 18 item 5): the two-turn session exported to Arize Phoenix and read back through
Phoenix's own REST and GraphQL API, with each projection (``gen_ai`` and ``openinference``).

Needs Arize Phoenix: either importable here (``pip install '.[phoenix]'``) or installed in an environment of its own
whose Python is named by ``HERMES_PIPELINE_PHOENIX_PYTHON`` (what ``scripts/test`` does, because Phoenix's pins conflict
with those of ``hermes-agent``). Skipped when neither is there.
Phoenix runs as a child process on 127.0.0.1 with free ports, its working directory under ``tmp_path``, its
telemetry and every external resource switched off; its gRPC collector is bound to loopback by
``tests/sinks/otel/_phoenix_launch.py`` (Phoenix 20.26 has no setting for that host) and the test checks that nothing it
opened listens on another interface. Start-up is bounded by polling ``/healthz`` against a deadline; Phoenix's
process group is stopped by the fixture whatever happens (``_server_launch.py``, shared with the MLflow test).
"""

from __future__ import annotations

import importlib.util
import ipaddress
import os
import sys
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline import Engine
from hermes_pipeline.config.templates import find_template
from hermes_pipeline.sinks.otel import build_otel_plugin

from tests.sinks.otel._server_launch import Server, clean_env, free_port, launched
from tests.sinks.otel._support import ANSWER, LAST_ANSWER, MISSING, QUESTION, otel_plugin, run_two_turn_session

PHOENIX_PYTHON = os.environ.get("HERMES_PIPELINE_PHOENIX_PYTHON", "")
"""A Python with Phoenix installed, when Phoenix lives in an environment of its own; else this interpreter."""

if PHOENIX_PYTHON:
    if not os.access(PHOENIX_PYTHON, os.X_OK):
        pytest.fail(f"HERMES_PIPELINE_PHOENIX_PYTHON={PHOENIX_PYTHON!r} is not an executable Python")
elif importlib.util.find_spec("phoenix") is None or importlib.util.find_spec("phoenix.server") is None:
    pytest.skip("Arize Phoenix is not installed (scripts/test installs it in an environment of its own and sets "
                "HERMES_PIPELINE_PHOENIX_PYTHON to its Python); the real-backend check is skipped",
                allow_module_level=True)

START_DEADLINE = 90.0
"""Seconds Phoenix may take to answer /healthz (about 10 s on a 2-vCPU machine; database migrations included)."""
INGEST_DEADLINE = 30.0
PROJECTIONS = ("gen_ai", "openinference")


class Phoenix(Server):
    """A running Phoenix (``_server_launch.py``)."""

    def get(self, path: str, **params: Any) -> Any:
        response = self.client.get(path, params=params)
        response.raise_for_status()
        return response.json()

    def graphql(self, query: str, **variables: Any) -> Any:
        response = self.client.post("/graphql", json={"query": query, "variables": variables})
        response.raise_for_status()
        body = response.json()
        assert not body.get("errors"), body["errors"]
        return body["data"]


def _sockets(pid: int) -> tuple[list[tuple[str, int]], list[str]]:
    """``(ip, port)`` of every listening TCP socket of the process and its children, and the remote addresses of
    its other inet sockets."""
    import psutil

    process = psutil.Process(pid)
    listening, remote = [], []
    for member in (process, *process.children(recursive=True)):
        for conn in member.net_connections(kind="inet"):
            if conn.status == psutil.CONN_LISTEN:
                listening.append((conn.laddr.ip, conn.laddr.port))
            elif conn.raddr:
                remote.append(conn.raddr.ip)
    return listening, remote


def _is_loopback(ip: str) -> bool:
    address = ipaddress.ip_address(ip.split("%", 1)[0])
    mapped = getattr(address, "ipv4_mapped", None)
    return address.is_loopback or (mapped is not None and mapped.is_loopback)


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Phoenix]:
    work = tmp_path_factory.mktemp("phoenix")
    port, grpc_port = free_port(), free_port()
    env = clean_env("PHOENIX_", "OTEL_")
    env.update({
        "PHOENIX_HOST": "127.0.0.1", "PHOENIX_PORT": str(port), "PHOENIX_GRPC_PORT": str(grpc_port),
        "PHOENIX_WORKING_DIR": str(work / "home"),
        "PHOENIX_TELEMETRY_ENABLED": "false",  # no FullStory / Scarf.sh pixels
        "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false",  # no web fonts, telemetry or downloads of its own
        "PHOENIX_LOGGING_LEVEL": "warning", "PHOENIX_DB_LOGGING_LEVEL": "warning",
    })
    command = [PHOENIX_PYTHON or sys.executable, str(Path(__file__).with_name("_phoenix_launch.py"))]
    with launched(Phoenix, "phoenix", command, work=work, env=env, port=port, health="/healthz",
                  deadline=START_DEADLINE, poll=0.2) as server:
        yield server


@pytest.fixture(scope="module")
def exported(phoenix: Phoenix) -> dict[str, dict[str, Any]]:
    """The session exported once per projection (content gate open), each to a Phoenix project of its own and
    under a session id of its own; returns per projection the spans Phoenix stored (REST) and the session."""
    out: dict[str, dict[str, Any]] = {}
    for projection in PROJECTIONS:
        engine = Engine()
        project = f"hermes-{projection}"
        plugin = otel_plugin(engine, f"{phoenix.base}/v1/traces", projection=projection, enable_full_payloads=True,
                             endpoint_keys={"resource_attributes": {"openinference.project.name": project}})
        run_two_turn_session(engine, session_id=f"sess-{projection}")
        assert plugin.flush(15.0) and plugin.shutdown(15.0)
        sent = plugin.stats()["exported"]
        assert sent > 0 and plugin.stats()["failed"] == 0
        deadline = time.monotonic() + INGEST_DEADLINE
        spans: list[dict[str, Any]] = []
        while True:  # Phoenix inserts received spans in the background (the project exists after the first)
            response = phoenix.client.get(f"/v1/projects/{project}/spans", params={"limit": 1000})
            if response.status_code != 404:
                response.raise_for_status()
                spans = response.json()["data"]
            if len(spans) >= sent or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert len(spans) == sent
        out[projection] = {"spans": spans, "project": project}
    return out


SESSIONS = """query($id: ID!) { node(id: $id) { ... on Project { sessions(first: 10) { edges { node {
  sessionId numTraces firstInput { value } lastOutput { value } tokenUsage { prompt completion total } } } } } } }"""


def test_phoenix_listens_on_loopback_only_and_talks_to_nobody_else(
        phoenix: Phoenix, exported: dict[str, dict[str, Any]]) -> None:
    """Phoenix's HTTP server and its OTLP/gRPC collector listen on 127.0.0.1 only (never 0.0.0.0 or ::), and after
    the exports it holds no connection to anything but loopback (telemetry and external resources are off)."""
    listening, remote = _sockets(phoenix.process.pid)
    assert len(listening) >= 2, listening  # the HTTP server and the gRPC collector
    assert all(_is_loopback(ip) for ip, _ in listening), listening
    assert all(_is_loopback(ip) for ip in remote), remote


@pytest.mark.parametrize("projection", PROJECTIONS)
def test_fmt_56a_phoenix_shows_one_trace_per_turn_in_one_session_with_question_and_answer(
        phoenix: Phoenix, exported: dict[str, dict[str, Any]], projection: str) -> None:
    """FMT-56a: Phoenix groups the two turns (two traces, each with one root) into one session with the session's
    token totals; each root shows its question and answer. In openinference the session's first input is the
    user's question and its last output the final answer (Phoenix reads them from the roots' input.value /
    output.value). The gen_ai projection carries GenAI attributes only (issue #30): Phoenix 20.26 converts their
    messages into the roots' llm.input / output_messages but derives no input.value from them, so its sessions
    list shows no first input there (docs/backends.md: use openinference for Phoenix, as the recipe does)."""
    spans = exported[projection]["spans"]
    roots = [s for s in spans if s["parent_id"] is None]
    assert len(roots) == 2 and len({s["context"]["trace_id"] for s in spans}) == 2
    assert {r["span_kind"] for r in roots} == {"AGENT"}
    [project] = [p for p in phoenix.get("/v1/projects")["data"] if p["name"] == exported[projection]["project"]]
    edges = phoenix.graphql(SESSIONS, id=project["id"])["node"]["sessions"]["edges"]
    [session] = [e["node"] for e in edges]
    assert session["sessionId"] == f"sess-{projection}" and session["numTraces"] == 2
    if projection == "openinference":
        assert (session["firstInput"]["value"], session["lastOutput"]["value"]) == (QUESTION, LAST_ANSWER)
    else:
        assert not [k for s in spans for k in s["attributes"] if k in ("input.value", "input.mime_type")]
        first, last = sorted(roots, key=lambda s: s["start_time"])
        assert first["attributes"]["llm.input_messages.0.message.content"] == QUESTION
        assert last["attributes"]["llm.output_messages.0.message.content"] == LAST_ANSWER
    assert (session["tokenUsage"]["prompt"], session["tokenUsage"]["completion"]) == (3 * 42, 3 * 7)


@pytest.mark.parametrize("projection", PROJECTIONS)
def test_phoenix_llm_spans_show_model_tokens_and_the_tool_results_the_model_saw(
        exported: dict[str, dict[str, Any]], projection: str) -> None:
    """FMT-64 / FMT-70: Phoenix's LLM spans have the model and the token counts; the call after the tools shows
    both tool results (content and tool_call_id) in its input messages and the answer as its output messages (in
    openinference also as its output.value; gen_ai carries no OpenInference key, issue #30)."""
    llms = sorted((s for s in exported[projection]["spans"] if s["span_kind"] == "LLM"), key=lambda s: s["start_time"])
    assert len(llms) == 3
    for span in llms:
        a = span["attributes"]
        assert a["llm.model_name"].startswith("gpt-4o-mini")
        assert (a["llm.token_count.prompt"], a["llm.token_count.completion"]) == (42, 7)
    a = llms[1]["attributes"]
    tools = {a[f"llm.input_messages.{i}.message.tool_call_id"]: a[f"llm.input_messages.{i}.message.content"]
             for i in (3, 4) if a.get(f"llm.input_messages.{i}.message.role") == "tool"}
    assert tools == {"call_ok": "Buy milk.", "call_bad": f'{{"error": "FileNotFoundError: {MISSING}"}}'}
    assert a["llm.output_messages.0.message.content"] == ANSWER
    assert ANSWER in a["output.value"] if projection == "openinference" else ANSWER not in a.get("output.value", "")


@pytest.mark.parametrize("projection", PROJECTIONS)
def test_fmt_58_phoenix_shows_the_failed_tool_with_its_error_reason(
        exported: dict[str, dict[str, Any]], projection: str) -> None:
    """FMT-58: the failed tool is an ERROR span in Phoenix whose status message and exception event give the
    reason (content open: the error type and the scrubbed message); the successful one is not an error."""
    tools = [s for s in exported[projection]["spans"] if s["span_kind"] == "TOOL"]
    [failed] = [s for s in tools if s["status_code"] == "ERROR"]
    reason = f"FileNotFoundError: {MISSING}"
    assert failed["status_message"] == f"tool_error: {reason}"
    [event] = [e for e in failed["events"] if e["name"] == "exception"]
    assert event["attributes"]["exception.message"] == reason
    assert event["attributes"]["exception.type"] == "tool_error"
    assert len(tools) == 2 and all(s["status_code"] in ("OK", "UNSET") for s in tools if s is not failed)


def test_the_phoenix_recipe_as_shipped_sends_previews_but_no_content(phoenix: Phoenix) -> None:
    """docs/backends.md: ``pipelines/phoenix.toml`` (``config init --template phoenix``), pointed at this Phoenix,
    lands in its ``hermes`` project as OpenInference spans; with its default content setting (gate closed,
    ``preview``) Phoenix receives the scrubbed 200-character previews (a tool result's preview shows its error
    text) and no full message, argument or result, no error message in the status or exception event. The
    previews are also each span's input.value / output.value (issue #30), so Phoenix's input and output columns
    and the session's first input show them."""
    document = tomllib.loads(find_template("phoenix").text())
    config = document["components"][0]["config"]
    assert config["enable_full_payloads"] is False and config["content_summary"] == "preview"
    section = dict(config["opentelemetry"])
    section["endpoints"] = [{**section["endpoints"][0], "endpoint": f"{phoenix.base}/v1/traces",
                             "scheduled_delay_millis": 50}]
    engine = Engine()
    plugin = build_otel_plugin(section, enable_full_payloads=False, content_summary=config["content_summary"])
    engine.add_plugin(plugin, name="otel")
    run_two_turn_session(engine, session_id="sess-recipe")
    assert plugin.flush(15.0) and plugin.shutdown(15.0)
    sent = plugin.stats()["exported"]
    deadline = time.monotonic() + INGEST_DEADLINE
    spans: list[dict[str, Any]] = []
    while len(spans) < sent and time.monotonic() < deadline:  # Phoenix inserts in the background
        response = phoenix.client.get("/v1/projects/hermes/spans", params={"limit": 1000})
        if response.status_code != 404:
            response.raise_for_status()
            spans = response.json()["data"]
        time.sleep(0.2)
    assert len(spans) == sent > 0
    assert {s["span_kind"] for s in spans} == {"AGENT", "LLM", "TOOL"}
    [turn] = [s for s in spans if s["parent_id"] is None and QUESTION[:20] in str(s["attributes"])]
    assert turn["attributes"]["hermes.input.preview"] == QUESTION
    for span in spans:
        keys = span["attributes"]
        assert not [k for k in keys if k.endswith(".content")]
        for side in ("input", "output"):
            assert keys.get(f"{side}.value") == keys.get(f"hermes.{side}.preview")
    assert turn["attributes"]["input.value"] == QUESTION
    [failed] = [s for s in spans if s["status_code"] == "ERROR"]
    assert failed["status_message"] == "tool_error"  # the type only; the message is content
    [event] = [e["attributes"] for e in failed["events"] if e["name"] == "exception"]
    assert event["exception.type"] == "tool_error" and not event.get("exception.message")  # Phoenix shows "" 
    assert MISSING in failed["attributes"]["hermes.output.preview"]  # ... but previews are sent by default
