"""Validation of the ``opentelemetry`` table and of Langfuse destinations (spec 04 §4.7-§4.9, FMT-57, FMT-71..FMT-77)."""

from __future__ import annotations

import base64
import logging
from typing import Any

import pytest

from hermes_pipeline.export.errors import ExportConfigError
from hermes_pipeline.sinks.otel import config as otel_config
from hermes_pipeline.sinks.otel.langfuse import build_langfuse_sink, langfuse_endpoint, langfuse_traces_url
from hermes_pipeline.sinks.otel import build_otel_plugin, build_otel_sink
from hermes_pipeline.sinks.otel.config import parse_otel_config

URL = "http://127.0.0.1:4318"
LF = "https://cloud.langfuse.com/api/public/otel/v1/traces"


def one(entry: dict[str, Any], **top: Any) -> Any:
    return parse_otel_config({"enabled": True, "endpoints": [{"type": "gen_ai", "endpoint": URL, **entry}], **top})


def error(config: dict[str, Any], **kwargs: Any) -> ExportConfigError:
    with pytest.raises(ExportConfigError) as info:
        parse_otel_config(config, **kwargs)
    return info.value


def entry_error(entry: dict[str, Any]) -> ExportConfigError:
    return error({"enabled": True, "endpoints": [{"type": "gen_ai", "endpoint": URL, **entry}]})


@pytest.mark.parametrize(("given", "expected"), [
    ("http://collector:4318", "http://collector:4318/v1/traces"),
    ("https://collector", "https://collector/v1/traces"),
    ("http://collector:4318/", "http://collector:4318/"),
    ("http://collector:4318/custom/path", "http://collector:4318/custom/path"),
    ("http://collector:4318/v1/traces", "http://collector:4318/v1/traces"),
])
def test_fmt_71_trace_path_rules(given: str, expected: str) -> None:
    """FMT-71: a bare authority gains /v1/traces; '/' alone is the root path; other explicit paths stay."""
    assert one({"endpoint": given}).endpoints[0].url == expected


def test_fmt_59_73_defaults_of_an_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    """§4.7 defaults: service name, scope, agent name, timeout, batch settings, mark settings."""
    for name, _ in otel_config.BSP_ENV.values():
        monkeypatch.delenv(name, raising=False)
    [endpoint] = one({}).endpoints
    assert (endpoint.transport, endpoint.service_name, endpoint.instrumentation_scope, endpoint.agent_name) == \
        ("http_binary", "hermes-agent", "hermes_pipeline", "hermes")
    assert (endpoint.timeout_millis, endpoint.max_queue_size, endpoint.max_export_batch_size,
            endpoint.scheduled_delay_millis) == (10_000, 10_000, 512, 5000)  # issue #30: the spec default
    assert (endpoint.mark_projection, endpoint.mark_exclude_names, endpoint.derive_signals) == \
        ("event", ("llm.chunk",), True)
    assert endpoint.label == "opentelemetry.endpoints[0]"


def test_fmt_73_batch_settings_precedence(monkeypatch: pytest.MonkeyPatch) -> None:
    """FMT-73: endpoint key, then OTEL_BSP_* (read at activation), then the default; malformed values fall back."""
    monkeypatch.setenv("OTEL_BSP_MAX_QUEUE_SIZE", "2048")
    monkeypatch.setenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "not-a-number")
    monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "250")
    [endpoint] = one({"max_queue_size": 600, "scheduled_delay_millis": 10}).endpoints
    assert (endpoint.max_queue_size, endpoint.max_export_batch_size, endpoint.scheduled_delay_millis) == (600, 512, 10)
    [endpoint] = one({}).endpoints
    assert (endpoint.max_queue_size, endpoint.max_export_batch_size, endpoint.scheduled_delay_millis) == (2048, 512, 250)


def test_fmt_73_batch_above_queue_is_refused_or_skipped(caplog: pytest.LogCaptureFixture) -> None:
    """FMT-73: max_export_batch_size above max_queue_size is an entry error; with on_invalid='skip' only that entry
    is skipped (observability.endpoint_skipped) and the others activate."""
    bad = {"type": "gen_ai", "endpoint": URL, "max_queue_size": 10, "max_export_batch_size": 20}
    good = {"type": "gen_ai", "endpoint": "http://127.0.0.1:4319"}
    exc = error({"enabled": True, "endpoints": [bad, good]})
    assert exc.path == "opentelemetry.endpoints[0].max_export_batch_size"
    with caplog.at_level(logging.WARNING):
        parsed = parse_otel_config({"enabled": True, "endpoints": [bad, good]}, on_invalid="skip")
    assert [e.index for e in parsed.endpoints] == [1]
    assert parsed.skipped[0][0] == "opentelemetry.endpoints[0].max_export_batch_size"
    assert "observability.endpoint_skipped" in caplog.text


@pytest.mark.parametrize(("entry", "path", "fragment"), [
    ({"type": "zipkin"}, "type", "gen_ai"),
    ({"endpoint": " "}, "endpoint", "required"),
    ({"endpoint": "ftp://host/x"}, "endpoint", "http"),
    ({"endpoint": "http://user:pw@host:4318"}, "endpoint", "credentials"),
    ({"transport": "carrier-pigeon"}, "transport", "expected"),
    ({"timeout_millis": 0}, "timeout_millis", ">= 1"),
    ({"headers": {"x": 1}}, "headers", "strings"),
    ({"mark_projection": "span"}, "mark_projection", "inherit"),
    ({"attribute_mappings": [{"key": "a"}]}, "attribute_mappings", "alias"),
    ({"promote_metadata_prefixes": "app."}, "promote_metadata_prefixes", "array"),
])
def test_fmt_73_invalid_entry_values_name_the_key(entry: dict[str, Any], path: str, fragment: str) -> None:
    """FMT-73 / §4.7: each invalid value names its key path and says what is expected."""
    exc = entry_error(entry)
    assert exc.path == f"opentelemetry.endpoints[0].{path}" and fragment in exc.message


def test_fmt_41_header_env_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    """FMT-41: header_env variables must be set and non-blank; a header may not be in both tables; values resolve."""
    monkeypatch.setenv("OTLP_TOKEN", "tok-SECRET-123")
    [endpoint] = one({"headers": {"x-static": "1"}, "header_env": {"x-token": "OTLP_TOKEN"}}).endpoints
    assert dict(endpoint.headers) == {"x-static": "1", "x-token": "tok-SECRET-123"}
    assert "SECRET" not in repr(endpoint) and "SECRET" not in endpoint.describe()
    monkeypatch.setenv("BLANK", "  ")
    exc = entry_error({"header_env": {"x-token": "BLANK"}})
    assert exc.path.endswith("header_env") and "BLANK" in exc.message
    exc = entry_error({"headers": {"X-Token": "a"}, "header_env": {"x-token": "OTLP_TOKEN"}})
    assert "both" in exc.message and "SECRET" not in str(exc)


def test_basic_auth_env_builds_the_authorization_header(monkeypatch: pytest.MonkeyPatch) -> None:
    """§4.7 basic_auth_env: Authorization: Basic base64(user:pass), from the environment only."""
    monkeypatch.setenv("U_VAR", "alice")
    monkeypatch.setenv("P_VAR", "s3cr3t-pass")
    [endpoint] = one({"basic_auth_env": {"username": "U_VAR", "password": "P_VAR"}}).endpoints
    assert endpoint.headers["Authorization"] == "Basic " + base64.b64encode(b"alice:s3cr3t-pass").decode()
    monkeypatch.delenv("P_VAR")
    exc = entry_error({"basic_auth_env": {"username": "U_VAR", "password": "P_VAR"}})
    assert exc.path == "opentelemetry.endpoints[0].basic_auth_env.password" and "P_VAR" in exc.message
    exc = entry_error({"basic_auth_env": {"username": "U_VAR"}})
    assert exc.path.endswith("basic_auth_env")
    monkeypatch.setenv("P_VAR", "x")
    exc = entry_error({"basic_auth_env": {"username": "U_VAR", "password": "P_VAR"},
                       "headers": {"authorization": "Bearer y"}})
    assert "Authorization" in exc.message


def test_fmt_57_different_types_may_not_share_a_destination() -> None:
    """FMT-57: after canonicalisation (loopback forms, default port, bare authority = /v1/traces) two endpoints of
    different type on one destination are rejected; the same type may share; query strings are significant."""
    exc = error({"enabled": True, "endpoints": [{"type": "gen_ai", "endpoint": "http://localhost:4318"},
                                                {"type": "full", "endpoint": "http://127.0.0.1:4318/v1/traces/"}]})
    assert exc.path == "opentelemetry.endpoints[1]" and "endpoints[0]" in exc.message
    exc = error({"enabled": True, "endpoints": [{"type": "gen_ai", "endpoint": "HTTP://Example.com"},
                                                {"type": "full", "endpoint": "http://example.com:80//v1/traces"}]})
    assert "collide" in exc.message
    same = parse_otel_config({"enabled": True, "endpoints": [{"type": "gen_ai", "endpoint": "http://localhost:4318"},
                                                             {"type": "gen_ai", "endpoint": "http://[::1]:4318"}]})
    assert len(same.endpoints) == 2
    query = parse_otel_config({"enabled": True, "endpoints": [{"type": "gen_ai", "endpoint": "http://h/v1/traces?a=1"},
                                                              {"type": "full", "endpoint": "http://h/v1/traces?a=2"}]})
    assert len(query.endpoints) == 2


def test_section_level_rules(caplog: pytest.LogCaptureFixture) -> None:
    """§4.7: enabled needs an endpoint; unknown keys name themselves; traces is an alias; sampling rate range."""
    assert error({"enabled": True}).path == "opentelemetry.endpoints"
    with caplog.at_level(logging.WARNING):  # FMT-73: every entry skipped upstream is never a load failure
        assert parse_otel_config({"enabled": True, "endpoints": []}, on_invalid="skip").endpoints == ()
    assert "exports nothing" in caplog.text
    assert error({"enabled": True, "endpoints": [], "colour": 1}).path == "opentelemetry.colour"
    assert error({"endpoints": [{"type": "gen_ai", "endpoint": URL, "colour": 1}]}).path == \
        "opentelemetry.endpoints[0].colour"
    parsed = parse_otel_config({"endpoints": [{"type": "gen_ai", "endpoint": URL, "colour": 1}], "colour": 2},
                               ignore_unknown_keys=True)
    assert len(parsed.endpoints) == 1 and parsed.enabled is False
    assert len(parse_otel_config({"enabled": True, "traces": [{"type": "full", "endpoint": URL}]}).endpoints) == 1
    assert error({"traces": [], "endpoints": []}).path == "opentelemetry.traces"
    assert error({"sampling_rate": 1.5}).path == "opentelemetry.sampling_rate"
    assert error({"always_sample_errors": "yes"}).path == "opentelemetry.always_sample_errors"
    assert error({"endpoints": {"type": "gen_ai"}}).path == "opentelemetry.endpoints"


def test_book_46_sampling_rate_defaults_by_environment() -> None:
    """BOOK-46: unset sampling_rate is 1.0 in development and 0.1 in production; an explicit value wins."""
    assert parse_otel_config({}).sampling_rate == 1.0
    assert parse_otel_config({}, environment="production").sampling_rate == 0.1
    assert parse_otel_config({"sampling_rate": 0.5}, environment="production").sampling_rate == 0.5


@pytest.mark.parametrize("signal", ["logs"])
def test_unsupported_signals_are_refused_clearly(signal: str) -> None:
    """§4.7 logs: validated, and refused with a clear error when enabled (metrics are exported: test_otel_metrics)."""
    base = {"enabled": True, "endpoints": [{"type": "gen_ai", "endpoint": URL}]}
    exc = error({**base, signal: {"enabled": True}})
    assert exc.path == f"opentelemetry.{signal}" and "not implemented" in exc.message
    assert len(parse_otel_config({**base, signal: {"enabled": False}}).endpoints) == 1
    assert error({**base, signal: {"enabled": False, "bogus": 1}}).path == f"opentelemetry.{signal}.bogus"
    skipped = parse_otel_config({**base, signal: {"enabled": True}}, on_invalid="skip")
    assert len(skipped.endpoints) == 1 and skipped.skipped[0][0] == f"opentelemetry.{signal}"


def test_file_sinks_are_refused_clearly() -> None:
    """§4.7 file_sinks (MAY): refused with an error naming the key."""
    exc = error({"enabled": True, "endpoints": [{"type": "gen_ai", "endpoint": URL}],
                 "file_sinks": [{"type": "file"}]})
    assert exc.path == "opentelemetry.file_sinks" and "not implemented" in exc.message


def test_fmt_75_76_77_langfuse_endpoint_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    """FMT-75..77: full path required; credentials only from the environment; ingestion-version header added unless
    set; derive_signals defaults to false; only the gen_ai projection."""
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", "pk-lf-1")
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", "sk-lf-2")
    auth = {"basic_auth_env": {"username": "LANGFUSE_PUBLIC_KEY", "password": "LANGFUSE_SECRET_KEY"}}
    [endpoint] = one({"endpoint": LF, **auth}).endpoints
    assert endpoint.langfuse and endpoint.derive_signals is False
    assert endpoint.headers["x-langfuse-ingestion-version"] == "4"
    assert endpoint.headers["Authorization"] == "Basic " + base64.b64encode(b"pk-lf-1:sk-lf-2").decode()
    [endpoint] = one({"endpoint": LF, **auth, "headers": {"X-Langfuse-Ingestion-Version": "3"}}).endpoints
    assert dict(endpoint.headers)["X-Langfuse-Ingestion-Version"] == "3" and \
        "x-langfuse-ingestion-version" not in endpoint.headers
    exc = entry_error({"endpoint": "https://cloud.langfuse.com/api/public/otel", **auth})
    assert exc.path.endswith("endpoint") and "/api/public/otel/v1/traces" in exc.message
    exc = entry_error({"endpoint": LF, "headers": {"Authorization": "Basic abc"}})
    assert exc.path.endswith("headers") and "environment" in exc.message
    assert entry_error({"endpoint": LF}).path.endswith("basic_auth_env")
    assert entry_error({"endpoint": LF, "type": "full", **auth}).path.endswith("type")
    monkeypatch.setenv("LF_AUTH", "Basic Zm9vOmJhcg==")
    [endpoint] = one({"endpoint": LF, "header_env": {"Authorization": "LF_AUTH"}}).endpoints
    assert endpoint.headers["Authorization"] == "Basic Zm9vOmJhcg=="


def test_fmt_75_langfuse_helpers(monkeypatch: pytest.MonkeyPatch) -> None:
    """FMT-75: helpers build the full ingestion path from a host; the builder names langfuse.<key> in errors."""
    assert langfuse_traces_url("https://cloud.langfuse.com") == LF
    assert langfuse_traces_url("https://lf.example.com/sub/") == "https://lf.example.com/sub/api/public/otel/v1/traces"
    assert langfuse_traces_url("https://lf.example.com/api/public/otel") == \
        "https://lf.example.com/api/public/otel/v1/traces"
    assert langfuse_traces_url(LF) == LF
    with pytest.raises(ValueError):
        langfuse_traces_url("https://pk:sk@cloud.langfuse.com")
    table = langfuse_endpoint("https://us.cloud.langfuse.com", service_name="svc")
    assert table == {"type": "gen_ai", "endpoint": "https://us.cloud.langfuse.com/api/public/otel/v1/traces",
                     "basic_auth_env": {"username": "LANGFUSE_PUBLIC_KEY", "password": "LANGFUSE_SECRET_KEY"},
                     "service_name": "svc"}
    monkeypatch.delenv("LANGFUSE_PUBLIC_KEY", raising=False)
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", "sk-lf-2")
    with pytest.raises(ExportConfigError) as info:
        build_langfuse_sink({})
    assert info.value.path == "langfuse.public_key_env" and "LANGFUSE_PUBLIC_KEY" in info.value.message
    with pytest.raises(ExportConfigError) as info:
        build_langfuse_sink({"public_key_env": "pk-lf-abcdef"})
    assert info.value.path == "langfuse.public_key_env" and "pk-lf-abcdef" not in info.value.message
    with pytest.raises(ExportConfigError) as info:
        build_langfuse_sink({"hots": "x"})
    assert info.value.path == "langfuse.hots"
    with pytest.raises(ExportConfigError) as info:
        build_langfuse_sink({"host": "not a url"})
    assert info.value.path == "langfuse.host"
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", "pk-lf-1")
    with pytest.raises(ExportConfigError) as info:
        build_langfuse_sink({"max_queue_size": 5, "max_export_batch_size": 6})
    assert info.value.path == "langfuse.max_export_batch_size"
    assert build_langfuse_sink({"enabled": False}).enabled is False


def test_fmt_72_global_header_variables_warn_once(monkeypatch: pytest.MonkeyPatch,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    """FMT-72: OTEL_EXPORTER_OTLP_*HEADERS set → one warning naming headers / header_env (values never shown)."""
    monkeypatch.setattr(otel_config, "_warned_global_headers", False)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "x-leak=VALUE-NOT-SHOWN")
    config = {"enabled": True, "endpoints": [{"type": "gen_ai", "endpoint": URL}]}
    with caplog.at_level(logging.WARNING, logger="hermes_pipeline.sinks.otel"):
        for _ in range(2):
            plugin = build_otel_plugin(config)
            assert plugin.shutdown(1.0)
    records = [r for r in caplog.records if "OTEL_EXPORTER_OTLP_TRACES_HEADERS" in r.getMessage()]
    assert len(records) == 1 and "header_env" in records[0].getMessage()
    assert "VALUE-NOT-SHOWN" not in caplog.text


def test_build_rejects_a_bad_content_summary_and_disabled_sections_export_nothing() -> None:
    """FMT-3: content_summary is preview / digest / off; a disabled section builds an inactive sink."""
    with pytest.raises(ExportConfigError) as info:
        build_otel_sink({}, content_summary="full")
    assert info.value.path == "content_summary"
    sink = build_otel_sink({"enabled": False, "endpoints": [{"type": "gen_ai", "endpoint": URL}]})
    assert sink.enabled is False and sink.destinations() == []
    assert sink.flush(0.1) and sink.shutdown(0.1)


def test_fmt_76_langfuse_credentials_come_only_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """FMT-76: a Langfuse endpoint takes its credentials from ``basic_auth_env`` (or ``header_env``) variables;
    a literal Authorization header, a missing credential and a literal key in the ``langfuse`` table are refused
    with errors that name the key and never echo a value."""
    literal = "Basic cGstbGYtMTpzay1sZi0y"
    exc = error({"enabled": True, "endpoints": [{"type": "gen_ai", "endpoint": LF, "headers": {"Authorization": literal}}]})
    assert exc.path == "opentelemetry.endpoints[0].headers" and "environment" in exc.message
    assert literal not in str(exc)
    exc = error({"enabled": True, "endpoints": [{"type": "gen_ai", "endpoint": LF}]})
    assert exc.path == "opentelemetry.endpoints[0].basic_auth_env" and "credentials" in exc.message
    monkeypatch.setenv("LF_PUBLIC", "pk-lf-1")
    monkeypatch.setenv("LF_SECRET", "sk-lf-2")
    [endpoint] = parse_otel_config({"enabled": True, "endpoints": [
        {"type": "gen_ai", "endpoint": LF, "basic_auth_env": {"username": "LF_PUBLIC", "password": "LF_SECRET"}}]}).endpoints
    assert endpoint.headers["Authorization"] == "Basic " + base64.b64encode(b"pk-lf-1:sk-lf-2").decode()
    monkeypatch.setenv("LF_AUTH", literal)
    [endpoint] = parse_otel_config({"enabled": True, "endpoints": [
        {"type": "gen_ai", "endpoint": LF, "header_env": {"Authorization": "LF_AUTH"}}]}).endpoints
    assert endpoint.headers["Authorization"] == literal
    with pytest.raises(ExportConfigError) as info:
        build_langfuse_sink({"public_key": "pk-lf-1"})
    assert info.value.path == "langfuse.public_key" and "pk-lf-1" not in str(info.value)


def test_grpc_transport_without_the_extra_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """transport = "grpc" needs the grpc extra (opentelemetry-exporter-otlp-proto-grpc); without it the entry is
    refused with a message naming the key and the install command."""
    from hermes_pipeline.sinks.otel import config as otel_config

    monkeypatch.setattr(otel_config, "grpc_available", lambda: False)
    with pytest.raises(ExportConfigError) as info:
        parse_otel_config({"enabled": True, "endpoints": [{"type": "gen_ai", "endpoint": "http://h:4317",
                                                            "transport": "grpc"}]})
    assert info.value.path.endswith("transport") and "hermes_pipeline[grpc]" in info.value.message
