"""Dynamic plugins and relay-plugin.toml manifests (spec 03 §6; CFG-22..CFG-28a, CFG-30)."""

from __future__ import annotations

import sys
import zipfile

import pytest

from hermes_pipeline import Engine
from hermes_pipeline.config import ConfigError, NativeRuntimeRequired, load_pipeline
from hermes_pipeline.profile.activation import activate_loaded
from hermes_pipeline.config.diagnostics import Diagnostics
from hermes_pipeline.config.dynamic import version_in_range

from .conftest import Env, write_manifest

PLUGIN = """\
import pathlib
pathlib.Path({marker!r}).write_text("imported")
SEEN = []

def register(ctx):
    SEEN.append(dict(ctx.config))
    ctx.register_hook("on_session_start", lambda **kw: None)
"""


def record(manifest: str = "plugins/audit/relay-plugin.toml", config: str = 'mode = "audit"') -> str:
    return f'version = 1\n[[plugins.dynamic]]\nmanifest = "{manifest}"\n[plugins.dynamic.config]\n{config}\n'


def load(env: Env, text: str):
    return load_pipeline(env.settings(), selected=env.write("p.toml", text), discover=False)


@pytest.fixture
def unique(request: pytest.FixtureRequest) -> str:
    return "hp_test_dyn_" + request.node.name.replace("[", "_").replace("]", "_").replace("-", "_")[-40:]


def test_cfg_28a_python_plugin_verified_imported_and_configured(env: Env, unique: str) -> None:
    """CFG-28a: digest verified, entrypoint imported, register(ctx) wrapped and handed the record's config."""
    marker = env.root / "imported"
    write_manifest(env.root / "plugins" / "audit", artifact=f"{unique}.py", source=PLUGIN.format(marker=str(marker)))
    loaded = load(env, record())
    assert not marker.exists(), "loading (validation) must not import plugin code"
    engine = Engine()
    assert activate_loaded(engine, loaded, Diagnostics(log=False)) == ["component:audit"]
    assert marker.exists() and sys.modules[unique].SEEN == [{"mode": "audit"}]
    assert engine.has_hook("on_session_start")
    assert str(env.root / "plugins" / "audit") not in sys.path


def test_cfg_25_digest_mismatch_never_imports(env: Env, unique: str) -> None:
    """CFG-25: a mismatched SHA-256 fails before any plugin code runs (the marker file is not written)."""
    marker = env.root / "imported"
    write_manifest(env.root / "plugins" / "audit", artifact=f"{unique}.py", source=PLUGIN.format(marker=str(marker)),
                   digest="sha256:" + "0" * 64)
    with pytest.raises(ConfigError) as info:
        load(env, record())
    assert info.value.code == "pipeline.integrity_failed" and not marker.exists() and unique not in sys.modules


def test_cfg_25_artifact_changed_after_validation_is_not_imported(env: Env, unique: str) -> None:
    """The digest is re-checked at import time: a swapped artifact is refused."""
    marker = env.root / "imported"
    directory = env.root / "plugins" / "audit"
    write_manifest(directory, artifact=f"{unique}.py", source=PLUGIN.format(marker=str(marker)))
    loaded = load(env, record())
    (directory / f"{unique}.py").write_text(PLUGIN.format(marker=str(marker)) + "# tampered\n")
    with pytest.raises(ConfigError, match="integrity"):
        activate_loaded(Engine(), loaded, Diagnostics(log=False))
    assert not marker.exists()


def test_cfg_28a_component_class_and_version_range(env: Env, unique: str) -> None:
    source = ("class Audit:\n    kind = 'audit'\n    def __init__(self, ctx):\n        self.ctx = ctx\n"
              "    def activate(self):\n        self.ctx.register_middleware('tool_request', lambda **kw: None)\n")
    write_manifest(env.root / "plugins" / "audit", artifact=f"{unique}.py", source=source,
                   entrypoint=f"{unique}:Audit")
    engine = Engine()
    activate_loaded(engine, load(env, record()), Diagnostics(log=False))
    assert engine.has_middleware("tool_request")
    write_manifest(env.root / "plugins" / "audit", artifact=f"{unique}.py", source=source,
                   entrypoint=f"{unique}:Audit", compat='hermes_pipeline = ">=2.0"')
    with pytest.raises(ConfigError, match="does not support the installed hermes_pipeline"):
        load(env, record())


def test_cfg_28a_wheel_artifact(env: Env, unique: str) -> None:
    directory = env.root / "plugins" / "audit"
    directory.mkdir(parents=True)
    with zipfile.ZipFile(directory / "audit-1.0-py3-none-any.whl", "w") as wheel:
        wheel.writestr(f"{unique}/__init__.py", "SEEN = []\ndef register(ctx):\n    SEEN.append(dict(ctx.config))\n")
    write_manifest(directory, artifact="audit-1.0-py3-none-any.whl", entrypoint=f"{unique}:register")
    activate_loaded(Engine(), load(env, record()), Diagnostics(log=False))
    assert sys.modules[unique].SEEN == [{"mode": "audit"}]


@pytest.mark.parametrize("kind", ["rust_dynamic", "worker"])
def test_cfg_28_native_kinds_validated_then_refused(env: Env, kind: str) -> None:
    """CFG-28 / CFG-60: rust_dynamic and worker manifests are validated, then refused because the
    native runtime is needed; the message names the plugin id."""
    write_manifest(env.root / "plugins" / "audit", kind=kind, artifact="libaudit.so", source="binary")
    with pytest.raises(NativeRuntimeRequired) as info:
        load(env, record())
    message = str(info.value)
    assert "'audit'" in message and "native runtime unavailable" in message and "needs the NeMo Relay native" in message
    if kind == "worker":
        assert "nemo-relay plugins add" in message  # CFG-27 hint for Python workers


def test_cfg_28_native_manifest_still_validated_first(env: Env) -> None:
    write_manifest(env.root / "plugins" / "audit", kind="rust_dynamic", artifact="libaudit.so", source="x",
                   compat='relay = ">=0.8.0"\nnative_api = "2"')
    with pytest.raises(ConfigError, match="native_api") as info:
        load(env, record())
    assert not isinstance(info.value, NativeRuntimeRequired)


@pytest.mark.parametrize("extra, needle", [
    ("[capabilities]\nitems = [\"telepathy\"]\n", "capabilities"),
    ("[config_schema]\npath = \"schema.json\"\n", "config_schema"),
])
def test_cfg_25_manifest_structure(env: Env, extra: str, needle: str) -> None:
    write_manifest(env.root / "plugins" / "audit", source="def register(ctx): pass\n", extra=extra)
    with pytest.raises(ConfigError) as info:
        load(env, record())
    assert needle in str(info.value)


def test_cfg_25_bad_digest_format_and_manifest_version(env: Env) -> None:
    write_manifest(env.root / "plugins" / "audit", source="x = 1\n", digest="md5:abc")
    with pytest.raises(ConfigError, match="sha256"):
        load(env, record())
    manifest = write_manifest(env.root / "plugins" / "audit", source="x = 1\n")
    manifest.write_text(manifest.read_text().replace("manifest_version = 1", "manifest_version = 2"))
    with pytest.raises(ConfigError, match="manifest_version"):
        load(env, record())


def test_cfg_26_config_schema_applies_to_record_config(env: Env) -> None:
    """CFG-26: the record's config is validated against the manifest's JSON Schema."""
    directory = env.root / "plugins" / "audit"
    directory.mkdir(parents=True)
    (directory / "schema.json").write_text('{"type": "object", "properties": {"mode": {"enum": ["audit"]}}, '
                                           '"additionalProperties": false}')
    write_manifest(directory, source="def register(ctx): pass\n",
                   extra='[capabilities]\nitems = ["config_schema"]\n[config_schema]\npath = "schema.json"\n')
    assert load(env, record()).dynamic[0].config == {"mode": "audit"}
    with pytest.raises(ConfigError):
        load(env, record(config='mode = "other"'))


@pytest.mark.parametrize("text, needle", [
    ('version = 1\n[[plugins.dynamic]]\nmanifest = "m.toml"\nextra = 1\n', "only 'manifest' and 'config'"),
    ('version = 1\n[[plugins.dynamic]]\nconfig = {}\n', "'manifest' is required"),
    ('version = 1\n[[plugins.dynamic]]\nmanifest = "absent/relay-plugin.toml"\n', "manifest file not found"),
    ('version = 1\n[[plugins.dynamic]]\nmanifest = "m.toml"\nconfig = {a = 2024-01-01}\n', "JSON-compatible"),
])
def test_cfg_22_cfg_23_malformed_records(env: Env, text: str, needle: str) -> None:
    """CFG-22 / CFG-23 / CFG-14: exactly manifest + config; the manifest must exist; config is JSON."""
    env.write("m.toml", "")
    with pytest.raises(ConfigError) as info:
        load(env, text)
    assert needle in info.value.message and info.value.key.startswith("plugins.dynamic[0]")


def test_cfg_23_cfg_24_duplicate_ids_and_kind_clash(env: Env) -> None:
    """CFG-23 / CFG-24: Duplicate ids and kind clash."""
    write_manifest(env.root / "a", source="x = 1\n")
    write_manifest(env.root / "b", source="x = 1\n")
    twice = ('version = 1\n[[plugins.dynamic]]\nmanifest = "a/relay-plugin.toml"\n'
             '[[plugins.dynamic]]\nmanifest = "b/relay-plugin.toml"\n')
    with pytest.raises(ConfigError, match="declared by two records"):
        load(env, twice)
    clash = 'version = 1\n[[components]]\nkind = "audit"\n[[plugins.dynamic]]\nmanifest = "a/relay-plugin.toml"\n'
    with pytest.raises(ConfigError, match="also used as a"):
        load(env, clash)


def test_cfg_6_1_manifest_relative_to_selected_file_and_tilde(env: Env) -> None:
    """§6.1 / CFG-37: manifest paths are relative to the declaring (selected) file's directory; ~ expands."""
    write_manifest(env.root / "conf" / "plugins" / "audit", source="x = 1\n")
    loaded = load_pipeline(env.settings(), selected=env.write("conf/p.yaml", "version: 1\nplugins:\n  dynamic:\n"
                                                              "    - manifest: plugins/audit/relay-plugin.toml\n"))
    assert loaded.dynamic[0].manifest_path == env.root / "conf" / "plugins" / "audit" / "relay-plugin.toml"
    write_manifest(env.home / "m", source="x = 1\n")
    env.monkeypatch.setenv("HOME", str(env.home))
    assert load(env, record(manifest="~/m/relay-plugin.toml")).dynamic[0].id == "audit"


def test_cfg_30_trust_policy_tables_warn(env: Env) -> None:
    """CFG-30: [plugins.policy] is not enforced; a warning says so."""
    loaded = load(env, 'version = 1\n[plugins.policy.defaults]\nstartup = "strict"\n')
    assert [d.code for d in loaded.diagnostics.items] == ["pipeline.trust_policy_unsupported"]


def test_version_ranges() -> None:
    assert version_in_range("0.1.0", ">=0.1,<1.0") and not version_in_range("1.0.0", ">=0.1,<1.0")
    assert version_in_range("0.8.3", ">=0.8.3,<0.9") and version_in_range("0.1.0", "==0.1")
    with pytest.raises(ValueError):
        version_in_range("0.1.0", ">=x")
