"""What the Hermes bridge loads in Hermes' process: only what the pipeline file and the profile enable.

Hermes calls the bridge's ``register(ctx)`` during its start-up, so every module imported there is paid
by every ``hermes chat`` session (``bench/bench_hermes_bridge.py`` measures the wall time). These checks
are about module presence, not timings: a child interpreter imports ``hermes_pipeline.hermes`` and
calls ``register`` with a stand-in ``ctx`` in a Hermes home under ``tmp_path``, then reports which
modules are loaded. Without an ``opentelemetry`` section the OpenTelemetry SDK and protobuf are not
imported; with shared metrics off neither jsonschema nor the shared-metrics collection machinery is;
a files-only pipeline loads neither ``requests`` nor the OTLP configuration modules; an ``opentelemetry``
section without a ``metrics`` table loads neither protobuf, the metrics SDK nor the SDK's trace module and ``psutil``
(spans are the sink's own records; the default exporter sends
the directly encoded bytes through the SDK's HTTP client); pydantic-settings is never imported; SQLite
is loaded only for a shared-metrics store that exists (a consent window to close) or collection switched
on; ruamel.yaml only for what needs it (a YAML pipeline file), not to read ``config.yaml``; pydantic not at
all (Hermes loads plugins before it imports pydantic itself, and the configuration records are
dataclasses: defining validation models cost about 60 ms of Hermes' start-up).
Each check has its counterpart (the section or setting switched on loads the module), so a check
cannot pass merely because a module name is wrong.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from tests._pipelines import write_pipeline

CHILD = textwrap.dedent("""\
    import importlib.metadata, json, os, sys

    scanned = []
    _entry_points = importlib.metadata.entry_points

    def counting(**kwargs):
        scanned.append(kwargs.get("group"))
        return _entry_points(**kwargs)

    importlib.metadata.entry_points = counting

    class Ctx:
        def __init__(self):
            self.hooks = []

        def register_hook(self, name, callback):
            self.hooks.append(name)

        def register_middleware(self, kind, callback):
            self.hooks.append("middleware:" + kind)

    import hermes_pipeline.hermes as bridge

    ctx = Ctx()
    bridge.register(ctx)
    watched = sys.argv[1:]
    print(json.dumps({"hooks": ctx.hooks, "loaded": [m for m in watched if m in sys.modules], "scanned": scanned}))
    sys.stdout.flush()
    os._exit(0)  # module presence only: no exit-time export to the endpoints of the pipeline file
    """)

WATCHED = ("opentelemetry.sdk", "google.protobuf", "jsonschema", "hermes_pipeline.shared_metrics.api",
           "hermes_pipeline.shared_metrics.scope_listener", "opentelemetry", "requests", "pydantic_settings",
           "hermes_pipeline.sinks.otel.config", "hermes_pipeline.sinks.otel.metrics_sink", "opentelemetry.sdk.metrics",
           "opentelemetry.exporter.otlp.proto.http.trace_exporter", "sqlite3", "ruamel.yaml", "pydantic",
           "opentelemetry.sdk.trace", "opentelemetry.sdk.resources", "psutil",
           "opentelemetry.exporter.otlp.common.http")


def _pipeline(root: Path, otlp: bool, metrics: bool = False) -> Path:
    out = root / "out"
    extra = "\n[components.config.opentelemetry.metrics]\nenabled = true\n" if metrics else ""
    if otlp:
        return write_pipeline(root, "atof-atif-otlp", extra=extra, atof_directory=out, atif_directory=out,
                              endpoint="http://127.0.0.1:9/v1/traces")
    return write_pipeline(root, "atof-atif-files", extra=extra, atof_directory=out, atif_directory=out)


def _register(root: Path, *, otlp: bool = False, shared_metrics: bool = False,
              metrics: bool = False, yaml_pipeline: bool = False, store: bool = False) -> dict[str, list[str]]:
    home = root / "home"
    home.mkdir()
    if store:  # a store left by an earlier run with collection on (its consent window is closed at start)
        from hermes_pipeline.shared_metrics.store import MetricsStore

        MetricsStore(home).connect().close()
    config = "plugins:\n  enabled:\n    - hermes_pipeline\n"
    if shared_metrics:
        config += "telemetry:\n  shared_metrics:\n    enabled: true\n"
    (home / "config.yaml").write_text(config, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "OTEL_"))}
    pipeline = _pipeline(root, otlp, metrics)
    if yaml_pipeline:
        import tomllib

        import yaml

        pipeline = pipeline.with_suffix(".yaml")
        pipeline.write_text(yaml.safe_dump(tomllib.loads(pipeline.with_suffix(".toml").read_text("utf-8"))), "utf-8")
    env.update(HERMES_HOME=str(home), HOME=str(root / "user"), XDG_CONFIG_HOME=str(root / "xdg"),
               HERMES_NEMO_RELAY_PLUGINS_TOML=str(pipeline),
               HERMES_PIPELINE_SYSTEM_PLUGINS_TOML=str(root / "no-system.toml"))
    proc = subprocess.run([sys.executable, "-c", CHILD, *WATCHED], cwd=root, env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result: dict[str, list[str]] = json.loads(proc.stdout.strip().splitlines()[-1])
    assert "pre_tool_call" in result["hooks"], proc.stderr[-2000:]  # the bridge is attached and exporting
    return result


def test_files_only_pipeline_loads_no_otel_sdk_no_protobuf_no_jsonschema(tmp_path: Path) -> None:
    """Nothing watched: no OpenTelemetry at all, no ``requests``, no OTLP configuration module, no
    pydantic-settings, no jsonschema."""
    result = _register(tmp_path)
    assert result["loaded"] == []
    # no check passes by a misspelt name (pydantic-settings is not a dependency: it may be absent)
    assert [n for n in WATCHED if n != "pydantic_settings" and importlib.util.find_spec(n) is None] == []
    assert "hermes_pipeline.sinks" not in result["scanned"]  # built-in sinks: no scan of every distribution


def test_an_opentelemetry_section_loads_the_otlp_http_client_but_not_the_sdk_trace_module(tmp_path: Path) -> None:
    """Spans are the sink's own records, sent through the SDK exporter's HTTP client: the SDK's trace
    module, its resources module and ``psutil`` (about 25 ms of Hermes' start-up) stay unloaded."""
    loaded = _register(tmp_path, otlp=True)["loaded"]
    assert "opentelemetry.exporter.otlp.common.http" in loaded
    assert not {"opentelemetry.sdk.trace", "opentelemetry.sdk.resources", "psutil"} & set(loaded)
    assert "jsonschema" not in loaded and "hermes_pipeline.shared_metrics.api" not in loaded


def test_traces_only_load_the_otlp_config_and_requests_but_no_protobuf_no_metrics_sdk(tmp_path: Path) -> None:
    """The counterpart of the files-only check for ``requests`` and the OTLP configuration; protobuf, the
    SDK's trace exporter module and the metrics SDK stay unloaded without a ``metrics`` table."""
    loaded = _register(tmp_path, otlp=True)["loaded"]
    assert {"opentelemetry", "requests", "hermes_pipeline.sinks.otel.config"} <= set(loaded)
    assert not {"google.protobuf", "opentelemetry.exporter.otlp.proto.http.trace_exporter",
                "hermes_pipeline.sinks.otel.metrics_sink", "opentelemetry.sdk.metrics", "pydantic_settings"} & set(loaded)


def test_a_metrics_table_loads_the_metrics_sdk(tmp_path: Path) -> None:
    """The counterpart: with ``[components.config.opentelemetry.metrics]`` enabled, the metrics sink, the
    metrics SDK and (for its exporter) protobuf are loaded."""
    loaded = _register(tmp_path, otlp=True, metrics=True)["loaded"]
    assert {"hermes_pipeline.sinks.otel.metrics_sink", "opentelemetry.sdk.metrics", "google.protobuf",
            "opentelemetry.sdk.resources", "psutil"} <= set(loaded)


EXPORT_CHILD = textwrap.dedent("""\
    import json, sys

    from hermes_pipeline.sinks.otel import record
    from hermes_pipeline.sinks.otel.config import parse_otel_config
    from hermes_pipeline.sinks.otel.exporter import ObservedSession, default_exporter

    endpoint = parse_otel_config({"enabled": True, "endpoints": [{"type": "gen_ai", "endpoint": sys.argv[1]}]})
    exporter = default_exporter(endpoint.endpoints[0], ObservedSession({}))
    plain = record.SpanRecord("plain", record.SpanContext(7, 9), None, record.SpanKind.INTERNAL, {}, [],
                              record.Status(), 1, 2, record.Resource({"service.name": "hermes"}),
                              record.InstrumentationScope("hermes_pipeline", None))
    results = [exporter.export([plain]), "google.protobuf" in sys.modules, "opentelemetry.sdk.trace" in sys.modules]

    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.trace import Link, SpanContext, TraceFlags

    context = SpanContext(7, 9, is_remote=False, trace_flags=TraceFlags(1))
    linked = ReadableSpan(name="linked", context=context, resource=Resource({"service.name": "hermes"}),
                          links=[Link(SpanContext(7, 10, is_remote=False, trace_flags=TraceFlags(1)))])
    results += [exporter.export([linked]), "google.protobuf" in sys.modules]
    exporter.shutdown()
    print(json.dumps(results))
    """)


def test_protobuf_is_imported_only_for_a_batch_the_direct_encoder_does_not_cover(tmp_path: Path) -> None:
    """A span record the direct encoder covers is sent without protobuf and without the SDK's trace module;
    a span with links takes the SDK's encoder, which imports protobuf; both arrive (the receiver runs in
    this process)."""
    from hermes_pipeline.demo.otlp_receiver import OTLPReceiver

    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    with OTLPReceiver() as receiver:
        proc = subprocess.run([sys.executable, "-c", EXPORT_CHILD, f"{receiver.endpoint}/v1/traces"], cwd=tmp_path,
                              env=env, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr[-2000:]
        names = [span.name for span in receiver.spans]
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == [True, False, False, True, True]
    assert names == ["plain", "linked"]


def test_shared_metrics_on_loads_its_stream_listener_and_still_no_jsonschema_until_a_package_is_built(
        tmp_path: Path) -> None:
    loaded = _register(tmp_path, shared_metrics=True)["loaded"]
    assert "hermes_pipeline.shared_metrics.scope_listener" in loaded and "sqlite3" in loaded
    assert "opentelemetry.sdk" not in loaded and "jsonschema" not in loaded


def test_an_existing_shared_metrics_store_is_reconciled_with_sqlite(tmp_path: Path) -> None:
    """Shared metrics off but a store on disk: its consent window is closed (SM-89), which needs SQLite; the
    counterpart of the files-only check, where no store exists and SQLite is not imported."""
    loaded = _register(tmp_path, store=True)["loaded"]
    assert "sqlite3" in loaded
    assert "hermes_pipeline.shared_metrics.scope_listener" not in loaded


def test_a_yaml_pipeline_file_loads_ruamel_yaml(tmp_path: Path) -> None:
    """The counterpart of the files-only check for ruamel.yaml: pipeline YAML files are read with it."""
    assert "ruamel.yaml" in _register(tmp_path, yaml_pipeline=True)["loaded"]


def test_package_validation_still_imports_jsonschema_when_needed() -> None:
    """The lazy import is only deferred: validating a package uses jsonschema as before."""
    pytest.importorskip("jsonschema")
    from hermes_pipeline.shared_metrics.schemas import package_errors

    assert package_errors({"schema_version": "hermes.shared_metrics.v2"})  # not a valid package
    assert "jsonschema" in sys.modules


def test_builtin_sinks_are_found_without_scanning_every_distribution(monkeypatch: pytest.MonkeyPatch) -> None:
    """A built-in section name is resolved from this package's own entry points (still the
    ``hermes_pipeline.sinks`` group); only a name it does not know scans every installed distribution,
    which is how a third-party sink is found (``tests/sinks/test_contract.py`` runs a real one)."""
    import importlib.metadata

    from hermes_pipeline.export.errors import ExportConfigError
    from hermes_pipeline.sinks import registry

    if "atof" not in registry._own_entry_points():
        pytest.skip("hermes_pipeline runs without installed metadata")
    scans: list[str] = []
    real = importlib.metadata.entry_points

    def counting(**kwargs: object) -> object:
        scans.append(str(kwargs.get("group")))
        return real(**kwargs)

    monkeypatch.setattr(importlib.metadata, "entry_points", counting)
    for name in ("atof", "atif", "opentelemetry"):
        assert registry.sink_installed(name) and callable(registry.load_sink(name))
    assert scans == []
    assert not registry.sink_installed("atofx")
    with pytest.raises(ExportConfigError, match="no installed sink is called 'atofx'"):
        registry.load_sink("atofx")
    assert scans and set(scans) == {registry.GROUP}


def test_component_kind_scan_finds_what_the_standard_scan_finds() -> None:
    """The group scan that parses only distributions naming the group returns the standard scan's entry points,
    in its order, with their distributions."""
    import importlib.metadata

    from hermes_pipeline.config.components import group_entry_points

    def shape(eps: object) -> list[tuple[str, str, str, str]]:
        return [(ep.name, ep.value, ep.group, str(getattr(ep.dist, "name", None)))  # type: ignore[attr-defined]
                for ep in eps]  # type: ignore[attr-defined]

    for group in ("hermes_pipeline.components", "hermes_pipeline.sinks", "console_scripts", "no.such.group"):
        assert shape(group_entry_points(group)) == shape(importlib.metadata.entry_points(group=group)), group


def test_pipeline_settings_read_the_environment_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without pydantic-settings: a keyword argument (the variable's name first, then the field's) wins over the
    environment (the variable first, then the field's name, case-sensitively); unknown keywords are ignored; a
    value is a string or ``None``."""
    from hermes_pipeline.config.discovery import SELECTOR_ENV, PipelineSettings

    for name in (SELECTOR_ENV, "plugins_toml", "HERMES_HOME", "hermes_home", "Hermes_Home"):
        monkeypatch.delenv(name, raising=False)
    assert PipelineSettings().plugins_toml is None
    monkeypatch.setenv("plugins_toml", "by-field-name.toml")
    assert PipelineSettings().plugins_toml == "by-field-name.toml"
    monkeypatch.setenv(SELECTOR_ENV, "")
    assert PipelineSettings().plugins_toml == "" and PipelineSettings().selector() is None
    monkeypatch.setenv(SELECTOR_ENV, "by-variable.toml")
    assert PipelineSettings().plugins_toml == "by-variable.toml"
    assert PipelineSettings(plugins_toml="kw.toml").plugins_toml == "kw.toml"
    assert PipelineSettings(plugins_toml=None).plugins_toml is None
    assert PipelineSettings(**{SELECTOR_ENV: "alias.toml", "plugins_toml": "field.toml"}).plugins_toml == "alias.toml"
    monkeypatch.setenv("Hermes_Home", "/wrong-case")
    assert PipelineSettings().hermes_home is None
    assert PipelineSettings(unknown="ignored") == PipelineSettings()
    with pytest.raises(ValueError):
        PipelineSettings(plugins_toml=1)  # type: ignore[arg-type]


def test_the_listed_scan_is_used_and_a_zip_on_the_path_falls_back_to_the_standard_scan(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fast listing covers plain directories (the usual ``sys.path``); with a zip archive on the path it
    steps aside, and the result is still the standard scan's."""
    import importlib.metadata
    import zipfile

    from hermes_pipeline.config.components import _listed, group_entry_points

    group = "hermes_pipeline.components"
    assert _listed(group) is not None  # this interpreter's path: the fast listing answers
    archive = tmp_path / "bundle.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("zipped_dist-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: zipped-dist\nVersion: 1.0\n")
        zf.writestr("zipped_dist-1.0.dist-info/entry_points.txt", f"[{group}]\nzipped = zipped_mod:Component\n")
    monkeypatch.syspath_prepend(str(archive))
    assert _listed(group) is None
    names = [(ep.name, ep.value) for ep in group_entry_points(group)]
    assert names == [(ep.name, ep.value) for ep in importlib.metadata.entry_points(group=group)]
    assert ("zipped", "zipped_mod:Component") in names


def test_an_inert_bridge_loads_neither_the_engine_nor_the_host_api(tmp_path: Path) -> None:
    """No pipeline file and nothing switched on in ``config.yaml``: ``register`` reads the profile and returns;
    the package's names load on first use, so the engine and the host API are not imported (counterpart: a
    pipeline file loads both)."""
    watched = ["hermes_pipeline.engine.core", "hermes_pipeline.host", "hermes_pipeline.profile.profiles"]
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text("plugins:\n  enabled:\n    - hermes_pipeline\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "OTEL_"))}
    env.update(HERMES_HOME=str(home), HOME=str(tmp_path / "user"), XDG_CONFIG_HOME=str(tmp_path / "xdg"))
    proc = subprocess.run([sys.executable, "-c", CHILD, *watched], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    inert = json.loads(proc.stdout.strip().splitlines()[-1])
    assert inert["hooks"] == [] and inert["loaded"] == []
    env["HERMES_NEMO_RELAY_PLUGINS_TOML"] = str(_pipeline(tmp_path, otlp=False))
    proc = subprocess.run([sys.executable, "-c", CHILD, *watched], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)
    assert json.loads(proc.stdout.strip().splitlines()[-1])["loaded"] == watched
