"""The built-in observability component and the shipped examples (spec 03 §7, §17; spec 04 key tables;
CFG-31, CFG-32, CFG-32a, CFG-85)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_pipeline import Engine
from hermes_pipeline.components.observability import ObservabilityComponent
from hermes_pipeline.export.config_checks import destination_key
from hermes_pipeline.config import ConfigError, load_pipeline
from hermes_pipeline.config.diagnostics import ComponentDiagnostics, Diagnostics
from hermes_pipeline.config.policy import Policy, ValidationContext, fixed_locator

from .conftest import OBS_MINIMAL, Env, write_manifest

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted([REPO / "plugins.toml.example", *(REPO / "pipelines").iterdir()])


def load(env: Env, config: str, **kw: object):
    text = OBS_MINIMAL + config
    return load_pipeline(env.settings(), selected=env.write("p.toml", text), discover=False)


def skipped(loaded) -> list[str | None]:
    return [d.field for d in loaded.diagnostics.items if d.code == "observability.endpoint_skipped"]


EXAMPLE_ENV = {name: "test" for name in ("EVENTS_AUTH_HEADER", "COLLECTOR_AUTH", "LANGFUSE_PUBLIC_KEY",
                                         "LANGFUSE_SECRET_KEY")}
"""The header variables the examples document as required (their values never reach a file)."""


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_examples_validate_without_warnings(env: Env, example: Path) -> None:
    """Every shipped example (plugins.toml.example, pipelines/*) validates cleanly, once the header
    variables it documents are set (validation checks them exactly as activation does, CFG-32a)."""
    for name, value in EXAMPLE_ENV.items():
        env.monkeypatch.setenv(name, value)
    loaded = load_pipeline(env.settings(), selected=example, discover=False)
    assert loaded.diagnostics.items == []
    assert all(c.resolved is not None for c in loaded.components)


def test_examples_cover_toml_and_yaml() -> None:
    names = {p.name for p in EXAMPLES}
    assert {"minimal.toml", "local-files.toml", "otlp-collector.toml", "middleware.toml"} <= names
    assert any(n.endswith((".yaml", ".yml")) for n in names)


SECTION_17 = """\
version = 1

[policy]
unknown_field = "error"

[[components]]
kind = "observability"

[components.config]
version = 4

[components.config.atof]
enabled = true

[[components.config.atof.sinks]]
type = "file"
output_directory = "telemetry"
filename = "events.jsonl"

[components.config.atif]
enabled = true
filename_template = "trajectory-{session_id}.json"

[components.config.opentelemetry]
enabled = true

[[components.config.opentelemetry.endpoints]]
type = "gen_ai"
endpoint = "http://localhost:4318"

[[plugins.dynamic]]
manifest = "plugins/audit/relay-plugin.toml"

[plugins.dynamic.config]
mode = "audit"
"""

SECTION_17_YAML = """\
version: 1
policy:
  unknown_field: "error"
components:
  - kind: "observability"
    config:
      version: 4
      atof:
        enabled: true
        sinks:
          - {type: "file", output_directory: "telemetry", filename: "events.jsonl"}
      atif:
        enabled: true
        filename_template: "trajectory-{session_id}.json"
      opentelemetry:
        enabled: true
        endpoints:
          - {type: "gen_ai", endpoint: "http://localhost:4318"}
plugins:
  dynamic:
    - manifest: "plugins/audit/relay-plugin.toml"
      config: {mode: "audit"}
"""


def test_section_17_example_toml_and_yaml_with_user_sink(env: Env) -> None:
    """§17: the example loads in both forms; the user file's sink follows the selected one, with
    one plugin.configuration_inherited naming the user file."""
    write_manifest(env.root / "plugins" / "audit", source="def register(ctx):\n    pass\n")
    env.write(env.user_file, OBS_MINIMAL + '[components.config.atof]\nenabled = true\n'
                                           '[[components.config.atof.sinks]]\ntype = "file"\nfilename = "u.jsonl"\n')
    results = []
    for name, text in (("pipeline.toml", SECTION_17), ("pipeline.yaml", SECTION_17_YAML)):
        loaded = load_pipeline(env.settings(), selected=env.write(name, text))
        sinks = loaded.components[0].config["atof"]["sinks"]
        assert [s["filename"] for s in sinks] == ["events.jsonl", "u.jsonl"]
        assert [d.code for d in loaded.diagnostics.items] == ["plugin.configuration_inherited"]
        assert loaded.diagnostics.items[0].source == str(env.user_file)
        assert [(p.id, p.kind, p.config) for p in loaded.dynamic] == [("audit", "python", {"mode": "audit"})]
        results.append(loaded.document)
    assert results[0] == results[1]


RELAY_SHAPED = """\
# A plugins.toml as written for NeMo Relay 0.8 (observability component, version 4).
version = 1

[[components]]
kind = "observability"
enabled = true

[components.config]
version = 4
enable_full_payloads = true

[components.config.atof]
enabled = true

[[components.config.atof.sinks]]
type = "stream"
name = "relay-events"
url = "wss://events.example.com/stream"
transport = "websocket"
field_name_policy = "replace_dots"
timeout_millis = 2000

[components.config.atof.sinks.header_env]
authorization = "RELAY_EVENTS_TOKEN"

[components.config.atif]
enabled = true
agent_name = "NeMo Relay"
output_directory = "/var/lib/relay/atif"
filename_template = "nemo-relay-atif-{session_id}.json"

[[components.config.atif.storage]]
type = "s3"
bucket = "trajectories"
key_prefix = "relay"
region = "us-east-1"

[components.config.opentelemetry]
enabled = true

[[components.config.opentelemetry.traces]]
type = "openinference"
endpoint = "http://phoenix:6006/v1/traces"
service_name = "unknown_service"
instrumentation_scope = "opentelemetry"
max_queue_size = 2048
mark_projection = "event"
mark_exclude_names = ["llm.chunk"]
attribute_mappings = [{key = "nemo_relay.scope", alias = "relay.scope"}]

[[components.config.opentelemetry.traces]]
type = "full"
endpoint = "collector:4317"
transport = "grpc"

[components.config.opentelemetry.logs]
enabled = true
minimum_severity = "warning"
"""


def test_existing_relay_plugins_toml_loads(env: Env) -> None:
    """A Relay-compatible plugins.toml (traces alias, stream/websocket, s3 storage) parses and validates
    key by key; what this build cannot run is skipped exactly as activation would skip it (CFG-32a): the
    gRPC endpoint without a scheme, the websocket sink, the s3 storage and the logs signal.

    Skipping the only ATOF sink leaves the enabled atof section with no destination, so the file is
    refused as a whole (hermes_pipeline decision: validation reports what activation would do, and an
    enabled exporter section with no destination is an error, never a silent no-op)."""
    diagnostics = Diagnostics(log=False)
    with pytest.raises(ConfigError, match="atof section has no usable destination"):
        load_pipeline(env.settings(), selected=env.write("plugins.toml", RELAY_SHAPED), discover=False,
                      diagnostics=diagnostics)
    assert [d.field for d in diagnostics.items if d.code == "observability.endpoint_skipped"] == [
        "opentelemetry.endpoints[1]", "atof.sinks[0]", "atif.storage[0]", "opentelemetry.logs"]
    env.monkeypatch.setenv("RELAY_EVENTS_TOKEN", "t")
    usable = RELAY_SHAPED.replace('url = "wss://events.example.com/stream"\ntransport = "websocket"',
                                  'url = "https://events.example.com/stream"')
    loaded = load_pipeline(env.settings(), selected=env.write("plugins.toml", usable), discover=False)
    config = loaded.components[0].config
    assert skipped(loaded) == ["opentelemetry.endpoints[1]", "atif.storage[0]", "opentelemetry.logs"]
    assert config["opentelemetry"]["endpoints"][0]["type"] == "openinference"
    assert config["atof"]["sinks"][0]["name"] == "relay-events" and config["atif"].get("storage") == []


def test_cfg_31_version_required_and_four(env: Env) -> None:
    """FMT-3: version is required and must be 4, whatever the policy."""
    with pytest.raises(ConfigError, match="required"):
        load_pipeline(env.settings(), selected=env.write(
            "p.toml", '[[components]]\nkind = "observability"\n[policy]\nunsupported_value = "ignore"\n'))
    assert load(env, "").components[0].config == {"version": 4}
    with pytest.raises(ConfigError, match="only 4"):
        load_pipeline(env.settings(), selected=env.write("p.toml", OBS_MINIMAL.replace("version = 4", "version = 3")))


def test_cfg_31_extension_keys_are_recognised(env: Env) -> None:
    """CFG-31: 04 extension keys are recognised keys, not unknown fields."""
    loaded = load(env, """content_summary = "digest"
[components.config.atof]
llm_history = "full"
[components.config.atif]
group_by = "turn"
include_system_prompt = true
include_observed_events = true
retention_days = 7
max_queue_size = 5
[components.config.opentelemetry]
sampling_rate = 0.5
always_sample_errors = true
file_sinks = [{type = "file", output_directory = "otlp", filename = "spans.jsonl", format = "json_lines"}]
[components.config.opentelemetry.metrics]
include_skill_names = true
""")
    assert loaded.diagnostics.items == []


def test_atof_removed_flat_keys_always_rejected(env: Env) -> None:
    """§7.2 / 04 §2.16: legacy flat atof keys fail with a message naming the sinks form."""
    with pytest.raises(ConfigError) as info:
        load(env, '[components.config.atof]\noutput_directory = "x"\n[policy]\nunsupported_value = "ignore"\n'
                  'unknown_field = "ignore"\n')
    assert "sinks" in info.value.message and info.value.key == "components[0].config.atof.output_directory"


def test_atof_enabled_needs_a_sink(env: Env) -> None:
    with pytest.raises(ConfigError, match="at least one sink"):
        load(env, "[components.config.atof]\nenabled = true\n")


@pytest.mark.parametrize("sink, field", [
    ('type = "stream"\nurl = "ftp://x"', "atof.sinks[0]"),
    ('type = "stream"\nurl = "http://x"\ntransport = "websocket"', "atof.sinks[0]"),
    ('type = "stream"', "atof.sinks[0]"),
    ('type = "pigeon"', "atof.sinks[0]"),
    ('type = "file"\nmax_queue_size = 0', "atof.sinks[0]"),
    ('type = "stream"\nurl = "http://x"\nheaders = {A = "1"}\nheader_env = {a = "ENV"}', "atof.sinks[0]"),
    ('type = "stream"\nurl = "http://x"\nname = " padded "', "atof.sinks[0]"),
])
def test_cfg_32a_invalid_sink_entry_is_skipped_whatever_the_policy(env: Env, sink: str, field: str) -> None:
    """CFG-32a: an invalid value inside one destination entry skips that entry only, even under error."""
    loaded = load(env, f"""[components.config.atof]
enabled = true
[[components.config.atof.sinks]]
{sink}
[[components.config.atof.sinks]]
type = "file"
filename = "ok.jsonl"
[policy]
unsupported_value = "error"
""")
    assert skipped(loaded) == [field]
    assert loaded.components[0].config["atof"]["sinks"] == [{"type": "file", "filename": "ok.jsonl"}]


def test_cfg_32a_duplicate_stream_names_skip_the_later(env: Env) -> None:
    loaded = load(env, """[components.config.atof]
enabled = true
[[components.config.atof.sinks]]
type = "stream"
name = "s"
url = "https://a"
[[components.config.atof.sinks]]
type = "stream"
name = "s"
url = "https://b"
""")
    assert skipped(loaded) == ["atof.sinks[1]"]


def test_cfg_32a_unknown_key_in_entry_follows_policy(env: Env) -> None:
    """CFG-32a: structural problems (unknown keys) still follow [policy]."""
    text = '[components.config.atof]\nenabled = true\n[[components.config.atof.sinks]]\ntype = "file"\ncolour = 1\n'
    assert [d.code for d in load(env, text).diagnostics.items] == ["observability.unknown_field"]
    with pytest.raises(ConfigError):
        load(env, text + '[policy]\nunknown_field = "error"\n')


def test_cfg_32_different_types_must_not_share_a_destination(env: Env) -> None:
    """CFG-32 / FMT-57: two trace endpoints of different types on one canonical destination fail."""
    with pytest.raises(ConfigError) as info:
        load(env, """[components.config.opentelemetry]
enabled = true
[[components.config.opentelemetry.endpoints]]
type = "gen_ai"
endpoint = "http://localhost:4318"
[[components.config.opentelemetry.endpoints]]
type = "full"
endpoint = "http://127.0.0.1:4318/v1/traces"
""")
    assert info.value.code == "observability.destination_conflict"
    same_type = load(env, """[[components.config.opentelemetry.endpoints]]
type = "gen_ai"
endpoint = "http://localhost:4318"
[[components.config.opentelemetry.endpoints]]
type = "gen_ai"
endpoint = "http://localhost:4318/v1/traces"
""")
    assert same_type.diagnostics.items == []


def test_fmt_57_destination_canonicalisation() -> None:
    assert destination_key("HTTP://LocalHost", "http_binary") == destination_key("http://127.0.0.1:80/v1/traces",
                                                                                  "http_binary")
    assert destination_key("https://a.example/x//y/", "http_binary") == destination_key("https://a.example:443/x/y",
                                                                                         "http_binary")
    assert destination_key("http://a/", "http_binary") != destination_key("http://a", "http_binary")
    assert destination_key("http://a?q=1", "grpc") != destination_key("http://a?q=2", "grpc")


@pytest.mark.parametrize("key", ["sampler", "header_file", "completed_span_context_ttl_millis",
                                 "promote_resource_metadata_prefixes"])
def test_cfg_32_later_native_keys_are_unknown_fields(env: Env, key: str) -> None:
    loaded = load(env, f'[components.config.opentelemetry]\n{key} = "x"\n')
    assert [d.code for d in loaded.diagnostics.items] == ["observability.unknown_field"]


def test_batch_size_above_queue_size_skips_entry(env: Env) -> None:
    """04 FMT-73: max_export_batch_size above max_queue_size (env included) skips the entry."""
    env.monkeypatch.setenv("OTEL_BSP_MAX_QUEUE_SIZE", "100")
    loaded = load(env, '[[components.config.opentelemetry.endpoints]]\ntype = "gen_ai"\n'
                       'endpoint = "http://a:4318"\nmax_export_batch_size = 200\n')
    assert skipped(loaded) == ["opentelemetry.endpoints[0]"]


def test_signal_endpoints_rules(env: Env) -> None:
    """§7.4: enabled logs derive from a bare authority; a non-derivable path needs explicit endpoints;
    an enabled signal with an explicit empty list fails."""
    derived = load(env, '[[components.config.opentelemetry.endpoints]]\ntype = "gen_ai"\nendpoint = "http://a:4318"\n'
                        '[components.config.opentelemetry.logs]\nenabled = true\n')
    assert derived.diagnostics.items == []
    with pytest.raises(ConfigError, match="cannot be derived"):
        load(env, '[[components.config.opentelemetry.endpoints]]\ntype = "gen_ai"\n'
                  'endpoint = "https://cloud.langfuse.com/api/public/otel/v1/traces"\n'
                  '[components.config.opentelemetry.metrics]\nenabled = true\n')
    with pytest.raises(ConfigError, match="empty endpoint list"):
        load(env, '[components.config.opentelemetry.logs]\nenabled = true\nendpoints = []\n')


def test_otel_enabled_needs_an_endpoint(env: Env) -> None:
    with pytest.raises(ConfigError, match="at least one trace endpoint"):
        load(env, "[components.config.opentelemetry]\nenabled = true\n")


def test_atif_rules(env: Env) -> None:
    """04 FMT-30 / FMT-50 / FMT-51: storage needs full payloads; the template needs {session_id} and
    safe path fragments."""
    with pytest.raises(ConfigError) as info:
        load(env, '[components.config.atif]\nstorage = [{type = "http", endpoint = "https://x"}]\n')
    assert info.value.code == "atif.storage_requires_full_payloads"
    with pytest.raises(ConfigError) as info:  # issue #27 item 9: the sidecar stays beside local files
        load(env, 'enable_full_payloads = true\n[components.config.atif]\nshared_definitions = true\n'
                  'storage = [{type = "http", endpoint = "https://x"}]\n')
    assert info.value.code == "atif.shared_definitions_with_storage"
    with pytest.raises(ConfigError, match="llm_history"):
        load(env, '[components.config.atif]\nllm_history = "half"\n')
    for template in ("hermes.json", "../{session_id}.json", "a b/{session_id}", "/abs/{session_id}", "{nope}/{session_id}"):
        with pytest.raises(ConfigError, match="filename_template"):
            load(env, f'[components.config.atif]\nfilename_template = "{template}"\n')
    ok = load(env, '[components.config.atif]\nfilename_template = "{date}/{metadata.hermes.platform:-cli}/'
                   '{session_id}.json"\n')
    assert ok.diagnostics.items == []


def test_cfg_85_builtin_component_through_the_public_api(env: Env) -> None:
    """CFG-85: the built-in kind is exercised exactly like a third-party component: validate_config
    with a vctx, then engine.plugins.add with a config and context, activate() with activation-time checks."""
    env.monkeypatch.chdir(env.root)
    engine = Engine()
    sink = Diagnostics(log=False)
    config = {"version": 4, "atof": {"enabled": True, "sinks": [
        {"type": "stream", "url": "https://a", "header_env": {"Authorization": "MISSING_TOKEN"}},
        {"type": "file", "filename": "e.jsonl"}]}}
    vctx = ValidationContext(component="observability", policy=Policy(), diagnostics=sink,
                             locate=fixed_locator(None))
    ObservabilityComponent.validate_config(config, vctx)
    assert vctx.drops == [] and sink.items == []
    name = engine.plugins.add(ObservabilityComponent, config=config,
                               context={"diagnostics": ComponentDiagnostics("observability", sink)})
    instance = engine.plugins.get(name).instance
    assert name == "component:observability" and isinstance(instance, ObservabilityComponent)
    assert instance.skipped == ["atof.sinks[0]"] and instance.destinations == ["atof.sinks[1]"]
    assert [d.code for d in sink.items] == ["observability.endpoint_skipped"]
    assert "MISSING_TOKEN" in sink.items[0].message and "https://a" not in sink.items[0].message
    assert engine.has_hook("post_tool_call")  # the surviving file sink is attached
    assert engine.remove_plugin(name) and not engine.hooks.mapping


def test_fmt_72_global_otlp_headers_warned_at_activation(env: Env) -> None:
    env.monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "authorization=secret")
    sink = Diagnostics(log=False)
    Engine().plugins.add(ObservabilityComponent, config={"version": 4, "opentelemetry": {"enabled": True}},
                          context={"diagnostics": ComponentDiagnostics("observability", sink)})
    assert [d.code for d in sink.items] == ["observability.otlp_headers_ignored"]
    assert "secret" not in sink.items[0].message


@pytest.mark.parametrize("section", ["atof", "atif", "opentelemetry"])
@pytest.mark.parametrize("value, ok", [('"thread"', True), ('"process"', True), ('"process:exporters"', True),
                                       ('"process:"', False), ('"process:a b"', False), ('"fork"', False)])
def test_worker_key_accepts_thread_process_and_named_shared_processes(env: Env, section: str, value: str,
                                                                        ok: bool) -> None:
    """FMT-73 (extension key): ``worker`` is ``thread``, ``process`` or ``process:NAME``; anything else is an
    error naming ``components[0].config.<section>.worker`` and the accepted forms."""
    text = f"[components.config.{section}]\nworker = {value}\n"
    if ok:
        assert load(env, text).diagnostics.items == []
        return
    with pytest.raises(ConfigError) as info:
        load(env, text)
    assert info.value.key == f"components[0].config.{section}.worker"
    assert "process:NAME" in info.value.message


@pytest.mark.parametrize("value", ['"256MB"', "1000", "true", "-1"])
def test_max_queue_bytes_bad_values_name_the_key(env: Env, value: str) -> None:
    """CFG-31 / FMT-80: ``max_queue_bytes`` (the queues' byte bound) is an integer of at least 1 MiB; anything
    else is a typed error naming the key."""
    with pytest.raises(ConfigError) as info:
        load(env, f"max_queue_bytes = {value}\n")
    assert info.value.key == "components[0].config.max_queue_bytes"
    assert "expected an integer >= 1048576" in info.value.message


def test_max_queue_bytes_is_a_recognised_key(env: Env) -> None:
    loaded = load(env, "max_queue_bytes = 33554432\n")
    assert loaded.diagnostics.items == [] and loaded.components[0].config["max_queue_bytes"] == 33554432
