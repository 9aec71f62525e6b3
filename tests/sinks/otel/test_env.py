"""The standard OTEL_* environment variables on the OTLP trace path, through the real OTLP exporter to the
project's loopback receiver (spec 04 FMT-59, FMT-71, FMT-72, FMT-74; CFG-32). The pipeline file wins where
both say something; the endpoint of the environment is used only when the enabled section lists none.
Every receiver binds 127.0.0.1 and stops with its test."""

from __future__ import annotations

import logging
import string
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hermes_pipeline import Engine
from hermes_pipeline.components.observability import ObservabilityComponent
from hermes_pipeline.config.diagnostics import Diagnostics
from hermes_pipeline.config.policy import Policy, ValidationContext, fixed_locator
from hermes_pipeline.demo.otlp_receiver import OTLPReceiver, ReceivedSpan
from hermes_pipeline.export.errors import ExportConfigError
from hermes_pipeline.sinks.otel import config as otel_config, env as otel_env
from hermes_pipeline.sinks.otel import OtelPlugin, build_otel_plugin
from hermes_pipeline.sinks.otel.config import parse_otel_config
from hermes_pipeline.sinks.otel.env import EnvListError, parse_key_values, read_otlp_env

from tests.sinks.otel._support import PathReceiver, by_name, finish, otel_plugin
from tests.sinks.otel.test_delivery import simple_session

OTEL_VARS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_HEADERS",
             "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES",
             "OTEL_TRACES_SAMPLER", "OTEL_TRACES_SAMPLER_ARG", "OTEL_SDK_DISABLED", "OTEL_EXPORTER_OTLP_PROTOCOL",
             "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_TIMEOUT", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT")


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in OTEL_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(otel_env, "_warned", set())


def env_plugin(engine: Engine, **top: Any) -> OtelPlugin:
    """An enabled OTel section that lists no trace endpoint (the environment supplies it)."""
    plugin = build_otel_plugin({"enabled": True, **top})
    engine.add_plugin(plugin, name="otel")
    return plugin


def run(engine: Engine, plugin: OtelPlugin, receiver: OTLPReceiver, turns: int = 1) -> list[ReceivedSpan]:
    simple_session(engine, turns=turns, tools=1)
    return finish(plugin, receiver)


# --------------------------------------------------------------------------- endpoints


def test_otel_exporter_otlp_endpoint_is_a_base_url_with_v1_traces_appended(
        engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """FMT-71 / OTel spec: OTEL_EXPORTER_OTLP_ENDPOINT is a base URL; /v1/traces is appended to its path. It is
    used when the enabled section lists no trace endpoint, under the variable's name (never the URL)."""
    with PathReceiver() as receiver:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint + "/base")
        plugin = env_plugin(engine)
        assert plugin.sink.destinations()[0].startswith("OTEL_EXPORTER_OTLP_ENDPOINT: gen_ai")
        spans = run(engine, plugin, receiver)
    assert spans and set(receiver.paths) == {"/base/v1/traces"}
    assert by_name(spans, "invoke_agent hermes")


def test_otel_exporter_otlp_traces_endpoint_is_used_as_is_and_wins_over_the_generic_one(
        engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """OTel spec: the per-signal OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is used without any path appended and wins
    over OTEL_EXPORTER_OTLP_ENDPOINT."""
    with PathReceiver() as receiver:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint + "/generic")
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", receiver.endpoint + "/collector/v1/traces")
        spans = run(engine, env_plugin(engine), receiver)
    assert spans and set(receiver.paths) == {"/collector/v1/traces"}
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://127.0.0.1:4318")
    assert parse_otel_config({"enabled": True}).endpoints[0].url == "http://127.0.0.1:4318/"  # root, nothing added


def test_cfg_32_the_pipeline_files_endpoints_win_over_the_environment(
        engine: Engine, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """CFG-32 / FMT-72: a section that lists trace endpoints exports only to them; the env endpoint and the
    env header variables are not used, and the unused header variable is warned about."""
    monkeypatch.setattr(otel_config, "_warned_global_headers", False)
    with PathReceiver() as listed, PathReceiver() as from_env, \
            caplog.at_level(logging.WARNING, logger="hermes_pipeline.sinks.otel"):
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", from_env.endpoint)
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-from-env=1")
        spans = run(engine, otel_plugin(engine, listed.endpoint), listed)
    assert spans and from_env.requests == 0
    assert all("x-from-env" not in h for h in listed.headers)
    assert "OTEL_EXPORTER_OTLP_HEADERS set in the environment but never applied" in caplog.text


def test_fmt_72_env_headers_used_by_the_env_endpoint_are_not_warned_about(
        engine: Engine, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """FMT-72: the warning names only header variables that no endpoint uses."""
    monkeypatch.setattr(otel_config, "_warned_global_headers", False)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-from-env=1")
    with caplog.at_level(logging.WARNING, logger="hermes_pipeline.sinks.otel"):
        assert env_plugin(engine).shutdown(1.0)
    assert "never applied" not in caplog.text


def test_an_invalid_env_endpoint_is_a_typed_error_naming_the_variable(monkeypatch: pytest.MonkeyPatch,
                                                                     caplog: pytest.LogCaptureFixture) -> None:
    """FMT-73: an unusable endpoint from the environment is an entry problem named by the variable: an
    ExportConfigError when validating, a skipped entry with a warning at activation (never the value)."""
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "ftp://secret-host.example")
    with pytest.raises(ExportConfigError) as info:
        parse_otel_config({"enabled": True})
    assert info.value.path == "OTEL_EXPORTER_OTLP_ENDPOINT" and "secret-host" not in str(info.value)
    with caplog.at_level(logging.WARNING, logger="hermes_pipeline.sinks.otel"):
        parsed = parse_otel_config({"enabled": True}, on_invalid="skip")
    assert parsed.endpoints == () and parsed.skipped[0][0] == "OTEL_EXPORTER_OTLP_ENDPOINT"
    assert "OTEL_EXPORTER_OTLP_ENDPOINT" in caplog.text and "secret-host" not in caplog.text
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")  # issue #30: gRPC is exported (the URL as given)
    [endpoint] = parse_otel_config({"enabled": True}).endpoints
    assert (endpoint.transport, endpoint.url) == ("grpc", "http://127.0.0.1:4318")


def test_env_endpoint_needs_an_enabled_section(monkeypatch: pytest.MonkeyPatch) -> None:
    """The selector and the file decide whether anything is exported (CFG-2): the env endpoint alone never
    switches OpenTelemetry export on."""
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
    assert not parse_otel_config({}).enabled and not parse_otel_config({"enabled": False}).enabled


def test_config_validate_accepts_an_enabled_section_served_by_the_env_endpoint(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """CFG-32: without the variable an enabled section with no endpoint is an unsupported value; with it, the
    file is valid; with an unusable value, the problem names the variable."""
    def problems() -> list[str]:
        diagnostics = Diagnostics(log=False)
        vctx = ValidationContext(component="observability", policy=Policy(unsupported_value="warn"),
                                 diagnostics=diagnostics, locate=fixed_locator(None))
        ObservabilityComponent.validate_config({"version": 4, "opentelemetry": {"enabled": True}}, vctx)
        return [d.message for d in diagnostics.items]

    assert problems() and "OTEL_EXPORTER_OTLP_ENDPOINT" in problems()[0]
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
    assert problems() == []
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "not a url")
    assert len(problems()) == 1 and "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" in problems()[0]


# --------------------------------------------------------------------------- headers


def test_fmt_72_env_headers_apply_to_the_env_endpoint_percent_decoded(
        engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """FMT-72 scoped: OTEL_EXPORTER_OTLP_HEADERS (k=v,k2=v2, percent-decoded) reach the collector of the env
    endpoint; OTEL_EXPORTER_OTLP_TRACES_HEADERS replaces it when set."""
    with OTLPReceiver() as receiver:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint)
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", " x-tenant = acme%2C%20inc ,Authorization=Bearer%20tok")
        spans = run(engine, env_plugin(engine), receiver)
    assert spans and receiver.headers
    for headers in receiver.headers:
        assert headers["x-tenant"] == "acme, inc" and headers["authorization"] == "Bearer tok"
    with OTLPReceiver() as receiver:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint)
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "x-signal=traces")
        engine2 = Engine()
        spans = run(engine2, env_plugin(engine2), receiver)
    assert spans and all(h.get("x-signal") == "traces" and "x-tenant" not in h for h in receiver.headers)


def test_malformed_env_headers_are_ignored_with_a_warning_naming_the_variable(
        engine: Engine, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """OTel spec: an invalid value is warned about and ignored; the warning names the variable, never a value."""
    with OTLPReceiver() as receiver, caplog.at_level(logging.WARNING, logger="hermes_pipeline.sinks.otel"):
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint)
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "authorization=SECRET-42,broken")
        spans = run(engine, env_plugin(engine), receiver)
    assert spans and all("authorization" not in h for h in receiver.headers)
    assert "OTEL_EXPORTER_OTLP_HEADERS: member 2" in caplog.text and "SECRET-42" not in caplog.text


# --------------------------------------------------------------------------- resource


def test_fmt_59_service_name_and_resource_attributes_from_the_environment(
        engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """FMT-59 / OTel spec: OTEL_SERVICE_NAME sets service.name and wins over the service.name of
    OTEL_RESOURCE_ATTRIBUTES, whose other attributes (percent-decoded) join the resource."""
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "service.name=from-attrs,deployment.environment=prod%20eu,team=a")
    monkeypatch.setenv("OTEL_SERVICE_NAME", "billing-agent")
    with OTLPReceiver() as receiver:
        spans = run(engine, otel_plugin(engine, receiver.endpoint), receiver)
    assert spans and all(s.resource["service.name"] == "billing-agent" for s in spans)
    assert all(s.resource["deployment.environment"] == "prod eu" and s.resource["team"] == "a" for s in spans)
    monkeypatch.delenv("OTEL_SERVICE_NAME")
    assert parse_otel_config({"enabled": True, "endpoints": [
        {"type": "gen_ai", "endpoint": "http://127.0.0.1:4318"}]}).endpoints[0].service_name == "from-attrs"


def test_fmt_59_the_files_service_name_and_resource_attributes_win(
        engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """FMT-59: endpoints[].service_name wins over OTEL_SERVICE_NAME; resource_attributes win per attribute."""
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "team=a,region=eu")
    monkeypatch.setenv("OTEL_SERVICE_NAME", "from-env")
    with OTLPReceiver() as receiver:
        plugin = otel_plugin(engine, receiver.endpoint, endpoint_keys={
            "service_name": "from-file", "resource_attributes": {"team": "b"}})
        spans = run(engine, plugin, receiver)
    assert spans and all(s.resource["service.name"] == "from-file" for s in spans)
    assert all(s.resource["team"] == "b" and s.resource["region"] == "eu" for s in spans)


def test_a_malformed_otel_resource_attributes_is_discarded_as_a_whole(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """OTel resource spec: on a decoding error the entire variable is discarded and the error reported."""
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "team=a,region=%zz")
    with caplog.at_level(logging.WARNING, logger="hermes_pipeline.sinks.otel"):
        parsed = parse_otel_config({"enabled": True, "endpoints": [
            {"type": "gen_ai", "endpoint": "http://127.0.0.1:4318"}]})
    assert dict(parsed.endpoints[0].resource_attributes) == {}
    assert "OTEL_RESOURCE_ATTRIBUTES: member 2" in caplog.text


# --------------------------------------------------------------------------- sampling and the off switch


@pytest.mark.parametrize("sampler, arg, exported", [
    ("always_off", None, False), ("parentbased_always_off", None, False), ("traceidratio", "0", False),
    ("parentbased_traceidratio", "0.0", False), ("always_on", None, True), ("parentbased_always_on", None, True),
    ("traceidratio", "1", True), ("TraceIdRatio", None, True),
])
def test_fmt_74_otel_traces_sampler_and_arg_choose_the_turn_sampling_rate(
        engine: Engine, monkeypatch: pytest.MonkeyPatch, sampler: str, arg: str | None, exported: bool) -> None:
    """FMT-74 / BOOK-46: OTEL_TRACES_SAMPLER (+ _ARG) sets the turn sampling rate when the file does not;
    parentbased_X is X (the turn is every trace's root); names are case-insensitive; a ratio defaults to 1."""
    monkeypatch.setenv("OTEL_TRACES_SAMPLER", sampler)
    if arg is not None:
        monkeypatch.setenv("OTEL_TRACES_SAMPLER_ARG", arg)
    with OTLPReceiver() as receiver:
        spans = run(engine, otel_plugin(engine, receiver.endpoint), receiver, turns=3)
    assert len([s for s in spans if s.attributes.get("hermes.span_kind") == "agent.run"]) == (3 if exported else 0)


def test_fmt_74_the_files_sampling_rate_wins_and_bad_sampler_values_are_warned_and_ignored(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """FMT-74: sampling_rate in the file wins over OTEL_TRACES_SAMPLER; an unknown sampler name, a sampler this
    build lacks, or an argument outside [0, 1] is ignored with a warning naming the variable."""
    endpoint = {"type": "gen_ai", "endpoint": "http://127.0.0.1:4318"}
    monkeypatch.setenv("OTEL_TRACES_SAMPLER", "always_off")
    assert parse_otel_config({"enabled": True, "sampling_rate": 1.0, "endpoints": [endpoint]}).sampling_rate == 1.0
    assert parse_otel_config({"enabled": True, "endpoints": [endpoint]}, environment="production").sampling_rate == 0
    with caplog.at_level(logging.WARNING, logger="hermes_pipeline.sinks.otel"):
        for name, arg in (("sometimes", None), ("jaeger_remote", None), ("traceidratio", "1.5")):
            monkeypatch.setenv("OTEL_TRACES_SAMPLER", name)
            if arg:
                monkeypatch.setenv("OTEL_TRACES_SAMPLER_ARG", arg)
            assert parse_otel_config({"enabled": True, "endpoints": [endpoint]}).sampling_rate == 1.0
    assert caplog.text.count("OTEL_TRACES_SAMPLER: ") == 2 and "OTEL_TRACES_SAMPLER_ARG: " in caplog.text


@pytest.mark.parametrize("value", ["true", "TRUE", "True"])
def test_otel_sdk_disabled_true_exports_no_span(engine: Engine, monkeypatch: pytest.MonkeyPatch,
                                                 caplog: pytest.LogCaptureFixture, value: str) -> None:
    """OTel spec: OTEL_SDK_DISABLED=true (any case) disables span export, even for the file's endpoints."""
    monkeypatch.setenv("OTEL_SDK_DISABLED", value)
    with OTLPReceiver() as receiver, caplog.at_level(logging.WARNING, logger="hermes_pipeline.sinks.otel"):
        plugin = otel_plugin(engine, receiver.endpoint)
        simple_session(engine, tools=1)
        assert plugin.flush(5.0) and plugin.shutdown(5.0)
    assert plugin.enabled is False and receiver.requests == 0
    assert "OTEL_SDK_DISABLED=true" in caplog.text


def test_otel_sdk_disabled_other_values_are_false_with_a_warning(
        engine: Engine, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """OTel spec: only the string true is true; another value is false, with a warning naming the variable."""
    monkeypatch.setenv("OTEL_SDK_DISABLED", "1")
    with OTLPReceiver() as receiver, caplog.at_level(logging.WARNING, logger="hermes_pipeline.sinks.otel"):
        spans = run(engine, otel_plugin(engine, receiver.endpoint), receiver)
    assert spans and "OTEL_SDK_DISABLED: only 'true'" in caplog.text


def test_empty_values_are_the_same_as_unset() -> None:
    """OTel spec: an empty variable is interpreted as unset."""
    env = read_otlp_env({name: "  " for name in OTEL_VARS})
    assert env == read_otlp_env({})


# --------------------------------------------------------------------------- the k=v list parser

_KEY_CHARS = string.ascii_letters + string.digits + "!#$&'*+-.^_`|~"
keys = st.text(alphabet=_KEY_CHARS, min_size=1, max_size=12)
values = st.text(max_size=20)


def _encode(text: str) -> str:
    return quote(text, safe="")


@given(st.dictionaries(keys, values, max_size=6), st.sampled_from(["", " ", "\t", " \t "]))
def test_key_value_list_round_trips_percent_encoded_pairs(pairs: dict[str, str], ows: str) -> None:
    """The OTEL_* k=v list parser: any keys and values, percent-encoded and joined with commas (optional
    whitespace around members, keys and values), parse back to the same mapping."""
    text = ",".join(f"{ows}{_encode(k)}{ows}={ows}{_encode(v)}{ows}" for k, v in pairs.items())
    assert parse_key_values(text, "OTEL_RESOURCE_ATTRIBUTES") == pairs


_LIST_REASONS = frozenset({"has no '='", "has an empty key or a key with characters that are not allowed",
                           "has a value with characters that must be percent-encoded",
                           "has a broken percent-encoding"})


@given(st.text(max_size=40))
def test_key_value_list_parser_only_raises_its_typed_error_and_never_echoes_values(text: str) -> None:
    """Arbitrary input gives a mapping or an EnvListError naming the variable and a member position, whose
    message holds no part of the input."""
    try:
        parsed = parse_key_values(text, "OTEL_EXPORTER_OTLP_HEADERS")
    except EnvListError as exc:
        assert exc.variable == "OTEL_EXPORTER_OTLP_HEADERS" and 1 <= exc.position <= text.count(",") + 1
        # The message is built from the variable, the position and one of the parser's fixed reasons alone, so
        # no part of the input can be in it (a member that happens to spell a word of the template is no echo).
        assert exc.reason in _LIST_REASONS
        assert str(exc) == str(EnvListError("OTEL_EXPORTER_OTLP_HEADERS", exc.position, exc.reason))
    else:
        assert all(isinstance(k, str) and k for k in parsed)


@pytest.mark.parametrize("text, position", [("a=1,b", 2), ("=1", 1), ("a=b;c", 1), ('a="x"', 1), ("a=%4", 1),
                                            ("a=%ff", 1), ("a b=1", 1)])
def test_key_value_list_rejects_malformed_members(text: str, position: int) -> None:
    """Members without '=', with an empty key, with ';' properties, quotes, broken escapes or invalid UTF-8."""
    with pytest.raises(EnvListError) as info:
        parse_key_values(text, "OTEL_RESOURCE_ATTRIBUTES")
    assert info.value.position == position


def test_the_observability_component_exports_to_the_env_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    """CFG-32 through the component (what a pipeline file activates): an enabled opentelemetry section with no
    endpoint exports to OTEL_EXPORTER_OTLP_ENDPOINT, under OTEL_SERVICE_NAME, with the env headers."""
    from hermes_pipeline.config.diagnostics import ComponentDiagnostics

    engine = Engine()
    with PathReceiver() as receiver:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint)
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-tenant=acme")
        monkeypatch.setenv("OTEL_SERVICE_NAME", "from-env")
        sink = Diagnostics(log=False)
        name = engine.plugins.add(ObservabilityComponent, config={"version": 4, "opentelemetry": {"enabled": True}},
                                  context={"diagnostics": ComponentDiagnostics("observability", sink)})
        simple_session(engine, tools=1)
        instance = engine.plugins.get(name).instance
        assert instance.flush(10.0)
        assert engine.remove_plugin(name)
    assert receiver.spans and set(receiver.paths) == {"/v1/traces"}
    assert all(s.resource["service.name"] == "from-env" for s in receiver.spans)
    assert all(h["x-tenant"] == "acme" for h in receiver.headers)
    assert [d.code for d in sink.items] == []  # the header variable is used, so it is not warned about


def test_env_endpoint_timeout_and_protocol_variables(monkeypatch: pytest.MonkeyPatch,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    """OTel spec: OTEL_EXPORTER_OTLP_(TRACES_)TIMEOUT (milliseconds, per-signal first) sets the env endpoint's
    timeout; a value that is not a positive whole number is ignored with a warning; http/protobuf is accepted
    and an unknown protocol name is ignored with a warning naming the variable."""
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "2500")
    assert parse_otel_config({"enabled": True}).endpoints[0].timeout_millis == 2500
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "700")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "HTTP/PROTOBUF")
    assert parse_otel_config({"enabled": True}).endpoints[0].timeout_millis == 700
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "-5")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "carrier-pigeon")
    with caplog.at_level(logging.WARNING, logger="hermes_pipeline.sinks.otel"):
        parsed = parse_otel_config({"enabled": True})
    assert parsed.endpoints[0].timeout_millis == 10_000
    assert "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: expected a whole number" in caplog.text
    assert "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: unknown protocol" in caplog.text


def test_fmt_72_the_generic_header_variable_is_warned_about_when_the_per_signal_one_replaces_it(
        engine: Engine, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """FMT-72: with both header variables set, the env endpoint uses the per-signal one; the generic one is
    not applied anywhere and is named in the warning (the per-signal one is not)."""
    monkeypatch.setattr(otel_config, "_warned_global_headers", False)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-generic=1")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "x-traces=1")
    with caplog.at_level(logging.WARNING, logger="hermes_pipeline.sinks.otel"):
        assert env_plugin(engine).shutdown(1.0)
    [record] = [r for r in caplog.records if "never applied" in r.getMessage()]
    assert record.getMessage().startswith("hermes_pipeline: OTEL_EXPORTER_OTLP_HEADERS set")
    assert "OTEL_EXPORTER_OTLP_TRACES_HEADERS" not in record.getMessage().split(" set in")[0]
