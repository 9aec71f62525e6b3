"""The quick OTel settings and sampling defaults (spec 06 BOOK-46, BOOK-50)."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline.profile import open_profile, release_all
from hermes_pipeline.config.observability_settings import ObservabilitySettings, default_sampling_rate
from hermes_pipeline.demo.otlp_receiver import OTLPReceiver
from hermes_pipeline.sinks.otel.quick_endpoint import pipeline_trace_urls, quick_otel_config, trace_url


@pytest.fixture(autouse=True)
def _release(monkeypatch: pytest.MonkeyPatch) -> Any:
    for name in [n for n in os.environ if n.startswith("OTEL_")]:
        monkeypatch.delenv(name)
    monkeypatch.delenv("HERMES_NEMO_RELAY_PLUGINS_TOML", raising=False)
    yield
    release_all()


def _profile(home: Path, body: str) -> Any:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text("observability:\n" + body, encoding="utf-8")
    return open_profile(home)


def _turns(profile: Any, count: int) -> None:
    host = profile.host(model="m1")
    with host.session() as session:
        for k in range(count):
            with session.turn(f"q{k}") as turn:
                turn.call_tool("read_file", {"path": "a"}, lambda path: "x")
                turn.complete("ok")


def test_book_46_environment_defaults() -> None:
    assert default_sampling_rate("development") == 1.0 and default_sampling_rate("production") == 0.1
    assert ObservabilitySettings(environment="production").sampling_rate == 0.1
    assert ObservabilitySettings(environment="production", trace_sampling_rate=0.5).sampling_rate == 0.5


def test_book_50_the_four_keys_make_one_gen_ai_endpoint() -> None:
    settings = ObservabilitySettings(otel_enabled=True, otel_endpoint="http://collector:4318/",
                                     otel_service_name="my-agent", trace_sampling_rate=0.25)
    assert quick_otel_config(settings) == {"enabled": True, "sampling_rate": 0.25, "endpoints": [
        {"type": "gen_ai", "endpoint": "http://collector:4318/v1/traces", "service_name": "my-agent"}]}
    assert "sampling_rate" not in quick_otel_config(ObservabilitySettings(otel_enabled=True))
    assert trace_url("http://h:1/v1/traces") == "http://h:1/v1/traces"


def test_book_50_shorthand_exports_the_profiles_turns(tmp_path: Path) -> None:
    with OTLPReceiver() as receiver:
        profile = _profile(tmp_path / "p", f"  otel_enabled: true\n  otel_endpoint: {receiver.endpoint}\n"
                                           "  otel_service_name: quick-test\n")
        handle = profile.consumers["quick_otel"]
        _turns(profile, 2)
        assert handle.flush(10)
        profile.close()
        turns = receiver.spans_named("invoke_agent")
        assert len(turns) >= 2
        assert {s.resource.get("service.name") for s in receiver.spans} == {"quick-test"}


def test_book_46_production_samples_about_a_tenth(tmp_path: Path) -> None:
    """Production without ``trace_sampling_rate`` samples 0.1 of the turns (deterministic per turn UUID)."""
    with OTLPReceiver() as receiver:
        profile = _profile(tmp_path / "p", f"  environment: production\n  otel_enabled: true\n"
                                           f"  otel_endpoint: {receiver.endpoint}\n")
        _turns(profile, 200)
        profile.consumers["quick_otel"].flush(20)
        profile.close()
        executes = receiver.spans_named("execute_tool")
        assert 5 <= len(executes) <= 40, len(executes)  # 200 turns at 0.1: 20 expected


def test_book_50_duplicate_of_a_pipeline_endpoint_is_skipped_with_a_warning(tmp_path: Path, caplog: Any,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    pipeline = tmp_path / "plugins.toml"
    pipeline.write_text('[[components]]\nkind = "observability"\nenabled = true\n[components.config]\nversion = 4\n'
                        '[components.config.opentelemetry]\nenabled = true\n'
                        '[[components.config.opentelemetry.endpoints]]\ntype = "gen_ai"\n'
                        'endpoint = "http://127.0.0.1:9/v1/traces"\n', encoding="utf-8")
    monkeypatch.setenv("HERMES_NEMO_RELAY_PLUGINS_TOML", str(pipeline))
    with caplog.at_level(logging.WARNING):
        profile = _profile(tmp_path / "p", "  otel_enabled: true\n  otel_endpoint: http://127.0.0.1:9\n")
    assert pipeline_trace_urls(profile.activation.selected) == {"http://127.0.0.1:9/v1/traces"}
    assert "quick_otel" not in profile.consumers
    assert "duplicates an opentelemetry endpoint" in caplog.text


def test_book_46_pipeline_trace_endpoints_default_by_the_profile_environment(tmp_path: Path) -> None:
    """A pipeline-file ``opentelemetry`` section without ``sampling_rate`` samples at the activating
    profile's environment default (0.1 in production); the file's own rate wins."""
    from hermes_pipeline.sinks.base import SinkContext
    from hermes_pipeline.sinks.otel.sink import OtelSink, profile_environment

    home = tmp_path / "p"
    home.mkdir()
    (home / "config.yaml").write_text("observability:\n  environment: production\n", encoding="utf-8")
    ctx = SinkContext(name="opentelemetry", base_dir=tmp_path, default_dir=home / "telemetry")
    assert profile_environment(ctx) == "production"
    assert profile_environment(SinkContext(name="opentelemetry", base_dir=tmp_path)) == "development"
    section = {"enabled": True, "endpoints": [{"type": "gen_ai", "endpoint": "http://127.0.0.1:9/v1/traces"}]}
    for config, rate in ((section, 0.1), ({**section, "sampling_rate": 0.5}, 0.5)):
        sink = OtelSink.from_config(config, ctx)
        try:
            assert sink.config.sampling_rate == rate  # type: ignore[attr-defined]
        finally:
            sink.shutdown(1.0)
