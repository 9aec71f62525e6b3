"""No planted credential reaches any sink or the logs, whatever the content settings (spec 04 FMT-33a, spec 06 BOOK-12,
BOOK-13, BOOK-15, BOOK-36).

One session plants a credential of some BOOK-36 / FMT-33a class in every content field a host fills: the user
message and the conversation sent to the model, the model's answer and tool-call arguments, tool arguments (as
text and under sensitive keys), the tool result, an approval command and description, a human-input prompt, a
subagent's goal and summary, the final answer, and the message of a plugin's exception. Every exporter of the
``observability`` component is attached: a local ATOF file (``content = full`` or ``summary``), an ATOF
``http_post`` stream, ATIF trajectories, and OTLP ``gen_ai``, ``full``, ``openinference`` and Langfuse endpoints
received by the project's loopback receiver. The secret never appears in any byte they write or receive, nor in
any log record, under every ``content`` / ``content_summary`` / ``enable_full_payloads`` /
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` combination; ``redact_credentials = false`` is the one
way to keep raw credentials, and it is warned about at every start.
"""

from __future__ import annotations

import json
import logging
import os
import string
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_pipeline import Engine, Host
from hermes_pipeline.components.observability import ObservabilityComponent
from hermes_pipeline.sinks.otel import CAPTURE_ENV

from tests.sinks.atof._support import Receiver
from tests.sinks.otel._support import BodyReceiver
from hermes_pipeline.testing import chat_response
from tests._pipelines import write_pipeline

CREDENTIAL_FORMS = [
    "sk-proj-{s}", "sk-{s}", "sk-ant-api03-{s}", "ghp_{s}", "gho_{s}", "github_pat_{s}", "xoxb-{s}", "xoxp-{s}",
    "AKIA{s}", "AIza{s}", "pk-lf-{s}", "sk-lf-{s}", "eyJ{s}.eyJ{s}.{s}", "Bearer {s}", "Basic {s}",
    "-----BEGIN RSA PRIVATE KEY-----\n{s}\n-----END RSA PRIVATE KEY-----",
    "https://deploy:{s}@git.example.com/repo.git", "postgres://admin:{s}@db:5432/app",
    "password: {s}", "PASSWORD:{s}", "--password {s}", "mysql -u root -p{s} app", "pwd={s}", "pass={s}",
    "aws_secret_access_key={s}", "OPENAI_API_KEY={s}", 'passphrase: "{s}"', '{{"password": "{s}"}}',
]
secrets = st.text(alphabet=string.ascii_uppercase + string.digits, min_size=24, max_size=32).map(lambda s: "ZQ" + s)


@pytest.fixture(scope="module")
def otlp() -> Iterator[BodyReceiver]:
    receiver = BodyReceiver()
    try:
        yield receiver
    finally:
        receiver.close()


@pytest.fixture(scope="module")
def stream() -> Iterator[Receiver]:
    with Receiver() as receiver:
        yield receiver


class Records(logging.Handler):
    """Every log record of the process, formatted with its traceback."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []
        self.setFormatter(logging.Formatter("%(levelname)s %(name)s %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


def observability_config(out: Path, otlp: BodyReceiver, stream: Receiver, *, atof_content: str, summary: str,
                         full: bool, redact: bool | None = None, history: str = "delta",
                         atif_extra: dict[str, Any] | None = None) -> dict[str, Any]:
    endpoint = otlp.endpoint
    config: dict[str, Any] = {
        "version": 4, "enable_full_payloads": full, "content_summary": summary,
        "atof": {"enabled": True, "llm_history": history, "sinks": [
            {"type": "file", "output_directory": str(out), "filename": "events.jsonl", "content": atof_content},
            {"type": "stream", "url": stream.url, "transport": "http_post"}]},
        "atif": {"enabled": True, "output_directory": str(out), **(atif_extra or {})},
        "opentelemetry": {"enabled": True, "endpoints": [
            {"type": kind, "endpoint": f"{endpoint}/{kind}/v1/traces", "scheduled_delay_millis": 50}
            for kind in ("gen_ai", "full", "openinference")] + [
            {"type": "gen_ai", "endpoint": f"{endpoint}/api/public/otel/v1/traces", "scheduled_delay_millis": 50,
             "basic_auth_env": {"username": "REDACTION_TEST_LF_PK", "password": "REDACTION_TEST_LF_SK"}}]},
    }
    if redact is not None:
        config["redact_credentials"] = redact
    return config


def planted_session(engine: Engine, cred: str, secret: str) -> None:
    """One turn with the credential in every content field (see the module docstring)."""

    def leaky_observer(**kwargs: Any) -> None:
        raise ValueError(f"cannot handle {kwargs.get('args')!r}")

    engine.register_hook("post_tool_call", leaky_observer)
    host = Host(engine, platform="cli", model="m", provider="openai", base_url="https://api.example/v1",
                api_mode="chat_completions")
    call = {"id": "call_1", "type": "function",
            "function": {"name": "terminal", "arguments": json.dumps({"cmd": f"deploy {cred}", "password": secret})}}
    with host.session() as session:
        with session.turn(f"Deploy the service. My key is {cred}") as turn:
            history = [{"role": "system", "content": "You are Hermes."},
                       {"role": "user", "content": f"Deploy the service. My key is {cred}"}]
            turn.call_llm({"model": "m", "messages": history}, lambda r: chat_response(f"I will use {cred}", [call]))

            def terminal(cmd: str, password: str, passphrase: str, access_key: str) -> str:
                with turn.approval(f"deploy --force {cred}", description=f"pushes with {cred}") as approval:
                    approval.resolve("once")
                return f"deployed; the server answered {cred}"

            turn.call_tool("terminal", {"cmd": f"deploy {cred}", "password": secret, "passphrase": secret,
                                        "access_key": secret}, terminal, tool_call_id="call_1")
            with turn.human_input("sudo", f"Confirm with {cred}") as wait:
                wait.resolve("submitted")
            with turn.subagent(role="checker", goal=f"verify {cred}") as run:
                with run.session.turn(f"verify {cred}") as child:
                    child.complete(f"verified {cred}")
                run.finish("completed", summary=f"checked {cred}")
            follow_up = [*history, {"role": "assistant", "content": None, "tool_calls": [call]},
                         {"role": "tool", "tool_call_id": "call_1", "content": f"deployed; the server answered {cred}"}]
            turn.call_llm({"model": "m", "messages": follow_up}, lambda r: chat_response(f"Your token is {cred}"))
            turn.complete(f"Done. Your token is {cred}")


def run_pipeline(config: dict[str, Any], cred: str, secret: str, capture: bool) -> list[str]:
    """Activate the component, run the planted session, shut everything down; return the log lines."""
    records = Records()
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(records)
    root.setLevel(logging.DEBUG)
    old_env = os.environ.get(CAPTURE_ENV)
    if capture:
        os.environ[CAPTURE_ENV] = "true"
    else:
        os.environ.pop(CAPTURE_ENV, None)
    try:
        engine = Engine()
        name = engine.add_plugin(ObservabilityComponent, config=config)
        component = engine.plugins.get(name).instance  # type: ignore[union-attr]
        planted_session(engine, cred, secret)
        assert component.flush(15.0)
        engine.remove_plugin(name)
    finally:
        root.removeHandler(records)
        root.setLevel(old_level)
        if old_env is None:
            os.environ.pop(CAPTURE_ENV, None)
        else:
            os.environ[CAPTURE_ENV] = old_env
    return records.lines


def outputs(out: Path, otlp: BodyReceiver, stream: Receiver) -> dict[str, bytes]:
    """Every byte each destination got: local files by name, OTLP bodies by path, the ATOF stream bodies."""
    got: dict[str, bytes] = {}
    for path in sorted(out.rglob("*")):
        if path.is_file():
            got[f"file:{path.name}"] = path.read_bytes()
    for path, body in list(otlp.bodies):
        got[f"otlp:{path}"] = got.get(f"otlp:{path}", b"") + body
    got["atof-stream"] = b"".join(body for _, body in list(stream.requests))
    return got


def check_shape(got: dict[str, bytes], otlp: BodyReceiver) -> None:
    """The run really exported something everywhere (so a missing secret is not a missing export)."""
    assert any(k.startswith("file:hermes-atif-") for k in got), sorted(got)
    assert b"agent.run" in got["file:events.jsonl"] and b"agent.run" in got["atof-stream"]
    assert {"otlp:/api/public/otel/v1/traces", "otlp:/gen_ai/v1/traces", "otlp:/full/v1/traces",
            "otlp:/openinference/v1/traces"} <= set(got), sorted(got)
    assert any(s.name.startswith("execute_tool") for s in otlp.spans)


@pytest.fixture(scope="module")
def outdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("redaction")


@pytest.fixture(autouse=True)
def langfuse_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REDACTION_TEST_LF_PK", "pk-test")
    monkeypatch.setenv("REDACTION_TEST_LF_SK", "langfuse-test-key")


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(form=st.sampled_from(CREDENTIAL_FORMS), secret=secrets, atof_content=st.sampled_from(["full", "summary"]),
       summary=st.sampled_from(["preview", "digest", "off"]), full=st.booleans(), capture=st.booleans(),
       history=st.sampled_from(["delta", "full"]),
       atif_extra=st.fixed_dictionaries({"group_by": st.sampled_from(["agent", "turn"]),
                                         "include_system_prompt": st.booleans(),
                                         "include_observed_events": st.booleans()}))
def test_property_fmt33a_book12_planted_credential_never_in_any_sink_or_log(
        otlp: BodyReceiver, stream: Receiver, outdir: Path, form: str, secret: str, atof_content: str, summary: str,
        full: bool, capture: bool, history: str, atif_extra: dict[str, Any]) -> None:
    """FMT-33a / BOOK-12 / BOOK-13 / BOOK-15 / BOOK-36: a planted credential of any class is absent from the local
    ATOF and ATIF files, the ATOF http_post stream, every OTLP projection and the Langfuse endpoint, and from
    every log record (plugin-failure warnings included), whatever the content settings (and the ATOF history
    mode, the ATIF grouping, system prompt and observed events)."""
    out = Path(tempfile.mkdtemp(dir=outdir))
    otlp.reset()
    with stream._lock:
        stream.requests.clear()
    cred = form.format(s=secret)
    config = observability_config(out, otlp, stream, atof_content=atof_content, summary=summary, full=full,
                                  history=history, atif_extra=atif_extra)
    logs = run_pipeline(config, cred, secret, capture)
    got = outputs(out, otlp, stream)
    check_shape(got, otlp)
    for where, body in got.items():
        assert secret.encode() not in body, f"{where} carries the planted credential ({form})"
    for line in logs:
        assert secret not in line, f"log record carries the planted credential: {line[:300]}"
    assert any("cannot handle" in line for line in logs)  # the leaky plugin's warning was logged, scrubbed


def test_fmt33a_redact_credentials_false_keeps_raw_content_and_warns_at_start(
        otlp: BodyReceiver, stream: Receiver, tmp_path: Path) -> None:
    """FMT-33a: ``redact_credentials = false`` (the one named off-switch) writes the raw credential locally, and
    every activation logs a WARNING saying so."""
    otlp.reset()
    secret = "ZQ" + "7" * 24
    cred = f"sk-proj-{secret}"
    config = observability_config(tmp_path, otlp, stream, atof_content="full", summary="preview", full=True,
                                  redact=False)
    logs = run_pipeline(config, cred, secret, capture=False)
    events = (tmp_path / "events.jsonl").read_bytes()
    assert cred.encode() in events
    warnings = [line for line in logs if line.startswith("WARNING") and "redact_credentials" in line]
    assert len(warnings) == 1, logs
    # Log records stay scrubbed even then: only exported content is affected by the switch.
    assert not [line for line in logs if secret in line]


@pytest.mark.parametrize(("value", "valid"), [("false", True), ("true", True), ('"no"', False), ("0", False)])
def test_fmt33a_redact_credentials_accepted_by_config_validate(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                 value: str, valid: bool) -> None:
    """``hermes-pipeline config validate`` accepts the off-switch exactly as activation does: a boolean, and
    nothing else, under ``unsupported_value = "error"``."""
    from hermes_pipeline.cli.main import main

    path = write_pipeline(tmp_path, "strict-observability", extra=f"redact_credentials = {value}\n",
                          filename="pipeline.toml")
    code = main(["config", "validate", "--no-discovery", str(path)])
    out, err = capsys.readouterr()
    assert (code == 0) is valid, (out, err)
    if not valid:
        assert "redact_credentials" in err
