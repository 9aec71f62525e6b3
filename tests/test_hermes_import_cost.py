"""What the Hermes bridge loads in Hermes' process: only what the pipeline file and the profile enable.

Hermes calls the bridge's ``register(ctx)`` during its start-up, so every module imported there is paid
by every ``hermes chat`` session (``bench/bench_hermes_bridge.py`` measures the wall time). These checks
are about module presence, not timings: a child interpreter imports ``hermes_pipeline.hermes`` and
calls ``register`` with a stand-in ``ctx`` in a Hermes home under ``tmp_path``, then reports which
modules are loaded. Without an ``opentelemetry`` section the OpenTelemetry SDK and protobuf are not
imported; with shared metrics off neither jsonschema nor the shared-metrics collection machinery is.
Each check has its counterpart (the section or setting switched on loads the module), so a check
cannot pass merely because a module name is wrong.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

CHILD = textwrap.dedent("""\
    import importlib.metadata, json, sys

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
    """)

WATCHED = ("opentelemetry.sdk", "google.protobuf", "jsonschema", "hermes_pipeline.shared_metrics.api",
           "hermes_pipeline.shared_metrics.collector")


def _pipeline(root: Path, otlp: bool) -> Path:
    out = root / "out"
    text = textwrap.dedent(f"""\
        version = 1
        [[components]]
        kind = "observability"
        [components.config]
        version = 4
        [components.config.atof]
        enabled = true
        [[components.config.atof.sinks]]
        type = "file"
        output_directory = "{out}"
        filename = "events.jsonl"
        [components.config.atif]
        enabled = true
        output_directory = "{out}"
        """)
    if otlp:
        text += textwrap.dedent("""\
            [components.config.opentelemetry]
            enabled = true
            [[components.config.opentelemetry.endpoints]]
            type = "gen_ai"
            endpoint = "http://127.0.0.1:9/v1/traces"
            """)
    path = root / "plugins.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _register(root: Path, *, otlp: bool = False, shared_metrics: bool = False) -> dict[str, list[str]]:
    home = root / "home"
    home.mkdir()
    config = "plugins:\n  enabled:\n    - hermes_pipeline\n"
    if shared_metrics:
        config += "telemetry:\n  shared_metrics:\n    enabled: true\n"
    (home / "config.yaml").write_text(config, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "OTEL_"))}
    env.update(HERMES_HOME=str(home), HOME=str(root / "user"), XDG_CONFIG_HOME=str(root / "xdg"),
               HERMES_NEMO_RELAY_PLUGINS_TOML=str(_pipeline(root, otlp)),
               HERMES_PIPELINE_SYSTEM_PLUGINS_TOML=str(root / "no-system.toml"))
    proc = subprocess.run([sys.executable, "-c", CHILD, *WATCHED], cwd=root, env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result: dict[str, list[str]] = json.loads(proc.stdout.strip().splitlines()[-1])
    assert "pre_tool_call" in result["hooks"], proc.stderr[-2000:]  # the bridge is attached and exporting
    return result


def test_files_only_pipeline_loads_no_otel_sdk_no_protobuf_no_jsonschema(tmp_path: Path) -> None:
    result = _register(tmp_path)
    assert result["loaded"] == []
    assert "hermes_pipeline.sinks" not in result["scanned"]  # built-in sinks: no scan of every distribution


def test_an_opentelemetry_section_loads_the_otel_sdk(tmp_path: Path) -> None:
    loaded = _register(tmp_path, otlp=True)["loaded"]
    assert "opentelemetry.sdk" in loaded
    assert "jsonschema" not in loaded and "hermes_pipeline.shared_metrics.api" not in loaded


def test_shared_metrics_on_loads_the_collector_and_still_no_jsonschema_until_a_package_is_built(
        tmp_path: Path) -> None:
    loaded = _register(tmp_path, shared_metrics=True)["loaded"]
    assert "hermes_pipeline.shared_metrics.collector" in loaded
    assert "opentelemetry.sdk" not in loaded and "jsonschema" not in loaded


def test_package_validation_still_imports_jsonschema_when_needed() -> None:
    """The lazy import is only deferred: validating a package uses jsonschema as before."""
    pytest.importorskip("jsonschema")
    from hermes_pipeline.shared_metrics.schemas import package_errors

    assert package_errors({"schema_version": "hermes.shared_metrics.v2"})  # not a valid package
    assert "jsonschema" in sys.modules


def test_builtin_sinks_are_found_without_scanning_every_distribution(monkeypatch: pytest.MonkeyPatch) -> None:
    """A built-in section name is resolved from this package's own entry points (still the
    ``hermes_pipeline.sinks`` group); only a name it does not know scans every installed distribution,
    which is how a third-party sink is found (``tests/test_sink_contract.py`` runs a real one)."""
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
