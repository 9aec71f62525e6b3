"""Validation policy levels (spec 03 §5; CFG-12, CFG-16, CFG-18..CFG-21)."""

from __future__ import annotations

import pytest

from hermes_pipeline.config import ConfigError, Policy, load_pipeline
from hermes_pipeline.config.policy import component_policy

from .conftest import OBS_MINIMAL, Env


def load(env: Env, text: str):
    return load_pipeline(env.settings(), selected=env.write("p.toml", text), discover=False)


def with_policy(key: str, level: str, body: str) -> str:
    return body + f'\n[policy]\n{key} = "{level}"\n'


UNKNOWN_COMPONENT = '[[components]]\nkind = "no_such_kind"\n'
UNKNOWN_FIELD = OBS_MINIMAL + "colour = \"blue\"\n"
UNSUPPORTED = OBS_MINIMAL + "enable_full_payloads = \"yes\"\n"


@pytest.mark.parametrize("key, body, code, check", [
    ("unknown_component", UNKNOWN_COMPONENT, "plugin.unknown_component",
     lambda loaded: loaded.components[0].resolved is None),
    ("unknown_field", UNKNOWN_FIELD, "observability.unknown_field",
     lambda loaded: "colour" not in loaded.components[0].config),
    ("unsupported_value", UNSUPPORTED, "observability.unsupported_value",
     lambda loaded: "enable_full_payloads" not in loaded.components[0].config),
])
def test_cfg_18_ignore_warn_error(env: Env, key: str, body: str, code: str, check) -> None:
    """CFG-18: ignore drops silently, warn drops with a WARNING, error fails the load with an ERROR."""
    ignored = load(env, with_policy(key, "ignore", body))
    assert check(ignored) and code not in ignored.diagnostics.codes()
    warned = load(env, with_policy(key, "warn", body))
    assert check(warned)
    diag = next(d for d in warned.diagnostics.items if d.code == code)
    assert diag.level == "warning" and diag.source == str(env.root / "p.toml") and diag.line is not None
    with pytest.raises(ConfigError) as info:
        load(env, with_policy(key, "error", body))
    assert info.value.code == code and info.value.path == str(env.root / "p.toml")


def test_cfg_18_defaults_warn_warn_error(env: Env) -> None:
    """§5 defaults: unknown_component and unknown_field warn; unsupported_value errors."""
    assert load(env, UNKNOWN_COMPONENT).diagnostics.codes() == ["plugin.unknown_component"]
    assert load(env, UNKNOWN_FIELD).diagnostics.codes() == ["observability.unknown_field"]
    with pytest.raises(ConfigError, match="expected a boolean"):
        load(env, UNSUPPORTED)


def test_cfg_12_unknown_top_level_key(env: Env) -> None:
    """CFG-12: unknown top-level keys use unknown_field with code plugin.unknown_field."""
    loaded = load(env, OBS_MINIMAL.replace("version = 1\n", "version = 1\nextra_key = 1\n"))
    assert loaded.diagnostics.codes() == ["plugin.unknown_field"] and "extra_key" not in loaded.merged.data
    with pytest.raises(ConfigError) as info:
        load(env, with_policy("unknown_field", "error", "extra_key = 1\n"))
    assert info.value.key == "extra_key" and info.value.line == 1


def test_cfg_16_unknown_component_entry_key(env: Env) -> None:
    """CFG-16: keys besides kind/enabled/config in a component entry fall under unknown_field."""
    loaded = load(env, OBS_MINIMAL.replace('kind = "observability"\n', 'kind = "observability"\nenable = true\n'))
    diag = loaded.diagnostics.items[0]
    assert (diag.code, diag.component, diag.field) == ("plugin.unknown_field", "observability", "enable")


def test_cfg_18_wrong_type_for_enabled_and_config(env: Env) -> None:
    """A non-boolean enabled is an unsupported value; with warn the default (true) applies."""
    text = with_policy("unsupported_value", "warn", '[[components]]\nkind = "observability"\nenabled = "no"\n'
                                                    'config = {version = 4}\n')
    loaded = load(env, text)
    assert loaded.components[0].enabled is True
    assert loaded.diagnostics.codes() == ["plugin.unsupported_value"]


def test_cfg_18_policy_table_values_are_checked(env: Env) -> None:
    """An invalid policy level is an unsupported value; with error (default) the load fails."""
    with pytest.raises(ConfigError) as info:
        load(env, 'version = 1\n[policy]\nunknown_field = "loud"\n')
    assert info.value.key == "policy.unknown_field" and "ignore" in info.value.message
    loaded = load(env, 'version = 1\n[policy]\nunsupported_value = "warn"\nunknown_field = "loud"\nfoo = 1\n')
    assert loaded.policy == Policy(unsupported_value="warn")
    assert loaded.diagnostics.codes() == ["plugin.unsupported_value", "plugin.unknown_field"]


def test_cfg_19_component_level_policy() -> None:
    """CFG-19: a global value differing from its default wins; else the component's own; else default."""
    assert component_policy(Policy(), {"unknown_field": "error"}).unknown_field == "error"
    assert component_policy(Policy(unknown_field="ignore"), {"unknown_field": "error"}).unknown_field == "ignore"
    assert component_policy(Policy(unknown_field="warn"), {"unknown_field": "error"}).unknown_field == "error"
    assert component_policy(Policy(), {"unsupported_value": "bogus"}).unsupported_value == "error"
    assert component_policy(Policy(unknown_component="error"), None).unknown_component == "error"


def test_cfg_19_component_policy_applies_in_documents(env: Env) -> None:
    text = OBS_MINIMAL + "colour = 1\n[components.config.policy]\nunknown_field = \"error\"\n"
    with pytest.raises(ConfigError) as info:
        load(env, text)
    assert info.value.code == "observability.unknown_field" and info.value.key == "components[0].config.colour"
    relaxed = load(env, text + '[policy]\nunknown_field = "ignore"\n')
    assert relaxed.diagnostics.codes() == []


def test_cfg_20_policy_merges_key_by_key(env: Env) -> None:
    """CFG-20: the policy table merges across layers like any table."""
    env.write(env.user_file, 'version = 1\n[policy]\nunsupported_value = "warn"\nunknown_field = "error"\n')
    loaded = load_pipeline(env.settings(), selected=env.write("sel.toml", 'version = 1\n[policy]\n'
                                                                          'unknown_field = "ignore"\n'))
    assert loaded.policy == Policy(unknown_field="ignore", unsupported_value="warn")


@pytest.mark.parametrize("body", [
    "version = 2\n",
    OBS_MINIMAL + '[[components]]\nkind = "observability"\n',
    'version = 1\n[[components]]\nenabled = true\n',
    'version = 1\n[[plugins.dynamic]]\nmanifest = "m.toml"\nextra = 1\n',
    'version = 1\ndynamic_plugins = []\n',
])
def test_cfg_21_structural_errors_ignore_policy(env: Env, body: str) -> None:
    """CFG-21: structural errors fail even when every policy says ignore."""
    relaxed = '\n[policy]\nunknown_component = "ignore"\nunknown_field = "ignore"\nunsupported_value = "ignore"\n'
    with pytest.raises(ConfigError):
        load(env, body + relaxed)


def test_cfg_86_messages_never_contain_values(env: Env) -> None:
    """CFG-86: diagnostics name files, keys and components, never destination or header values."""
    secret = "Bearer-s3cr3t-value"
    text = with_policy("unsupported_value", "warn", OBS_MINIMAL + f"""
[components.config.atof]
enabled = true
[[components.config.atof.sinks]]
type = "stream"
url = "{secret}"
[components.config.atof.sinks.headers]
Authorization = "{secret}"
[[components.config.atof.sinks]]
type = "file"
[components.config.opentelemetry]
enabled = "{secret}"
""")
    loaded = load(env, text)
    assert loaded.diagnostics.items, "expected findings"
    assert all(secret not in str(d) for d in loaded.diagnostics.items)
    with pytest.raises(ConfigError) as info:
        load(env, OBS_MINIMAL + f'content_summary = "{secret}"\n')
    assert secret not in str(info.value)
