"""A bad or unsupported OTEL_* value disables only the OTLP destination it configures (warned, naming the
variable); the other sinks of the same pipeline load and write (spec 03 CFG-32, spec 04 FMT-73)."""

from __future__ import annotations

import json
import logging

import pytest

from hermes_pipeline import Engine, Host
from hermes_pipeline.profile import open_profile
from hermes_pipeline.profile.activation import ActivationState

from .conftest import Env
from tests._pipelines import pipeline_text

OTEL_ON = "\n[components.config.opentelemetry]\nenabled = true\n"
"""Added to the shared ATOF-file pipeline: OpenTelemetry on, its endpoints from the environment only."""

BAD = [
    {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
    {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"},
    {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:9", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"},
    {"OTEL_EXPORTER_OTLP_ENDPOINT": "ftp://collector.example"},
    {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "not a url"},
    {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://user:pw@127.0.0.1:9"},
]


@pytest.mark.parametrize("variables", BAD, ids=lambda v: ",".join(f"{k}={v[k]}" for k in v))
def test_cfg_32_bad_otel_env_disables_only_the_otlp_destination(
        env: Env, process: Engine, variables: dict[str, str], caplog: pytest.LogCaptureFixture) -> None:
    """CFG-32 / FMT-73: the pipeline activates, the ATOF file sink writes every event, the OTLP destination
    from the environment is disabled with one warning naming the variable."""
    out = env.root / "out"
    for name, value in variables.items():
        env.monkeypatch.setenv(name, value)
    env.select(env.write("sel.toml", pipeline_text("atof-file", OTEL_ON, atof_directory=out)))
    with caplog.at_level(logging.WARNING):
        prof = open_profile(env.root / "profile")
    assert prof.activation.state is ActivationState.ACTIVE, prof.activation.to_dict()
    session = Host(process, model="m", provider="p").session("s1")
    with session.turn("hi") as turn:
        turn.call_tool("read_file", {"path": "a"}, lambda path: "x")
        turn.complete("done")
    session.finalize()
    for name in process.plugins.names():
        process.remove_plugin(name)
    lines = [json.loads(line) for line in (out / "events.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(lines) >= 4
    named = [n for n in variables if n.endswith(("ENDPOINT", "PROTOCOL")) and n in caplog.text]
    assert named, caplog.text
    assert "pw@" not in caplog.text
