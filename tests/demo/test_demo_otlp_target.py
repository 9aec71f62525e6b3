"""``hermes-pipeline demo`` sending to a real backend (issue 30 item 6): ``--pipeline FILE`` keeps the file's OTLP
endpoints, ``--otlp URL`` (with ``--otlp-header NAME=VALUE``) sends to the given one, and the default demo still
sends to its own receiver. A loopback OTLP receiver stands in for the backend (the MLflow test sends to the real
server)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
import tomli_w

from hermes_pipeline.cli.main import main
from hermes_pipeline.demo.otlp_receiver import OTLPReceiver
from hermes_pipeline.demo.run import default_pipeline, run_demo


def _exported_line(out: str) -> tuple[int, str, int, int]:
    [match] = re.findall(r"OTLP spans +(\d+) spans exported to (\S+) \(failed (\d+), dropped (\d+)\)", out)
    return int(match[0]), match[1], int(match[2]), int(match[3])


def test_demo_pipeline_keeps_the_files_otlp_endpoint(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``demo --pipeline FILE`` sends the spans to the endpoint (and with the headers) the file names, and its report
    says how many went there; nothing goes to the demo's own receiver."""
    with OTLPReceiver() as backend:
        document = tomllib.loads(default_pipeline())
        [endpoint] = document["components"][0]["config"]["opentelemetry"]["endpoints"]
        endpoint.update({"endpoint": f"{backend.endpoint}/v1/traces", "headers": {"x-mlflow-experiment-id": "7"}})
        pipeline = tmp_path / "backend.toml"
        pipeline.write_text(tomli_w.dumps(document), encoding="utf-8")
        assert main(["demo", "--workspace", str(tmp_path / "ws"), "--pipeline", str(pipeline)]) == 0
        out = capsys.readouterr().out
        received = list(backend.spans)
        headers = list(backend.headers)
    exported, url, failed, dropped = _exported_line(out)
    assert (url, failed, dropped) == (f"{backend.endpoint}/v1/traces", 0, 0)
    assert exported == len(received) > 10
    assert {s.name.split(" ")[0] for s in received} >= {"invoke_agent", "chat", "execute_tool"}
    assert all(h.get("x-mlflow-experiment-id") == "7" for h in headers)
    written = tomllib.loads((tmp_path / "ws" / "pipeline.toml").read_text(encoding="utf-8"))
    assert written["components"][0]["config"]["opentelemetry"]["endpoints"][0]["endpoint"] == url


def test_demo_otlp_sends_to_the_given_url_with_headers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``demo --otlp URL --otlp-header NAME=VALUE`` sends every trace endpoint of the (default) pipeline to URL with
    the header; the spans are those the default demo receives itself."""
    with OTLPReceiver() as backend:
        assert main(["demo", "--workspace", str(tmp_path), "--otlp", f"{backend.endpoint}/v1/traces",
                     "--otlp-header", "x-mlflow-experiment-id=3", "--otlp-header", "x-tenant=a=b"]) == 0
        out = capsys.readouterr().out
        received = list(backend.spans)
        headers = list(backend.headers)
    exported, url, failed, _ = _exported_line(out)
    assert (exported, url, failed) == (len(received), f"{backend.endpoint}/v1/traces", 0)
    assert all((h.get("x-mlflow-experiment-id"), h.get("x-tenant")) == ("3", "a=b") for h in headers) and headers
    local = run_demo(tmp_path / "local")  # the default demo: its own receiver, the same spans
    assert local.received_locally and sorted(s.name for s in local.spans) == sorted(s.name for s in received)


def test_default_demo_still_uses_its_own_receiver(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Without flags the demo points every OTLP endpoint at its own receiver on 127.0.0.1 and reports what it got."""
    assert main(["demo", "--workspace", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"OTLP spans +\d+ spans in \d+ trace\(s\) received on 127\.0\.0\.1", out)
    assert "spans exported to" not in out
    written = tomllib.loads((tmp_path / "pipeline.toml").read_text(encoding="utf-8"))
    assert written["components"][0]["config"]["opentelemetry"]["endpoints"][0]["endpoint"].startswith(
        "http://127.0.0.1:")


@pytest.mark.parametrize(("argv", "message"), [
    (["--otlp-header", "x=1"], "--otlp-header needs --otlp URL"),
    (["--otlp", "http://127.0.0.1:9/v1/traces", "--otlp-header", "novalue"], "expected NAME=VALUE"),
    (["--otlp", "127.0.0.1:4318"], "expected an http:// or https:// URL"),
])
def test_demo_otlp_options_refuse_bad_values(tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str],
                                             message: str) -> None:
    """Bad --otlp / --otlp-header values are a usage error (exit 2) naming the option, before anything runs."""
    assert main(["demo", "--workspace", str(tmp_path), *argv]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "pipeline.toml").exists()
