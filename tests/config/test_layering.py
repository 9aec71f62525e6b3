"""Discovery, layering, merge rules and provenance (spec 03 §3, §9; CFG-4..CFG-6, CFG-17, CFG-38..CFG-46)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hermes_pipeline.config import ConfigError, load_pipeline
from hermes_pipeline.config.discovery import PipelineSettings, plan_layers

from .conftest import OBS_MINIMAL, Env

SINK = """
[[components.config.atof.sinks]]
type = "file"
filename = "{name}.jsonl"
"""


def obs(*sinks: str, extra: str = "") -> str:
    text = OBS_MINIMAL + extra + "\n[components.config.atof]\nenabled = true\n"
    return text + "".join(SINK.format(name=s) for s in sinks)


def test_cfg_4_cfg_38_user_system_selected_precedence(env: Env) -> None:
    """CFG-4 / CFG-38: user < system < selected; each layered file is reported in order."""
    env.write(env.user_file, 'version = 1\n[policy]\nunknown_field = "ignore"\nunknown_component = "ignore"\n')
    env.write(env.system_file, 'version = 1\n[policy]\nunknown_field = "error"\n')
    selected = env.write("sel.toml", OBS_MINIMAL)
    loaded = load_pipeline(env.settings(), selected=selected)
    assert loaded.sources == [str(env.user_file), str(env.system_file), str(selected)]
    assert loaded.policy.unknown_field == "error" and loaded.policy.unknown_component == "ignore"
    prov = loaded.provenance()
    assert prov["policy.unknown_field"] == str(env.system_file)
    assert prov["policy.unknown_component"] == str(env.user_file)
    assert prov["components[0].config.version"] == str(selected)


def test_cfg_2_selector_strip_tilde_and_relative(env: Env) -> None:
    """CFG-2: whitespace stripped, blank = unset, ~ expanded, relative against the working directory."""
    assert PipelineSettings(plugins_toml="   ").selected_path() is None
    assert PipelineSettings(plugins_toml=" ~/p.toml ").selected_path() == env.home / "p.toml"
    assert PipelineSettings(plugins_toml="rel/p.yaml").selected_path(env.root) == env.root / "rel" / "p.yaml"
    env.select("  sel.toml ")
    assert PipelineSettings().selected_path() == env.root / "sel.toml"


def test_cfg_9_1_user_path_falls_back_to_home(env: Env) -> None:
    """§9.1: XDG_CONFIG_HOME when set and non-empty, else $HOME/.config."""
    env.monkeypatch.setenv("XDG_CONFIG_HOME", "")
    assert PipelineSettings().user_path()[0] == env.home / ".config" / "nemo-relay" / "plugins.toml"
    env.monkeypatch.delenv("HERMES_PIPELINE_SYSTEM_PLUGINS_TOML")
    assert PipelineSettings().system_path()[0] == Path("/etc/nemo-relay/plugins.toml")


def test_cfg_5_repository_local_file_is_never_discovered(env: Env) -> None:
    """CFG-5: .nemo-relay/plugins.toml in the working directory or an ancestor is never read."""
    env.write(".nemo-relay/plugins.toml", "this is not toml at all [[[")
    nested = env.root / "a" / "b"
    nested.mkdir(parents=True)
    env.monkeypatch.chdir(nested)
    loaded = load_pipeline(env.settings(), selected=env.write("sel.toml", OBS_MINIMAL))
    assert loaded.sources == [str(env.root / "sel.toml")]


def test_cfg_5_repository_local_file_loads_when_selected(env: Env) -> None:
    local = env.write(".nemo-relay/plugins.toml", OBS_MINIMAL)
    assert load_pipeline(env.settings(), selected=local).sources == [str(local)]


def test_cfg_6_plugins_table_of_discovered_file_dropped(env: Env) -> None:
    """CFG-6: [[plugins.dynamic]] in a discovered file is dropped with pipeline.dynamic_ignored."""
    env.write(env.user_file, 'version = 1\n[[plugins.dynamic]]\nmanifest = "does/not/exist.toml"\n')
    loaded = load_pipeline(env.settings(), selected=env.write("sel.toml", OBS_MINIMAL))
    assert loaded.dynamic == [] and "plugins" not in loaded.merged.data
    diag = next(d for d in loaded.diagnostics.items if d.code == "pipeline.dynamic_ignored")
    assert diag.level == "warning" and diag.source == str(env.user_file)


def test_cfg_39_discovered_file_that_fails_to_parse_fails_the_load(env: Env) -> None:
    """CFG-39: a discovered file that exists but cannot be parsed is a load failure."""
    env.write(env.system_file, "version = = 1\n")
    with pytest.raises(ConfigError) as info:
        load_pipeline(env.settings(), selected=env.write("sel.toml", OBS_MINIMAL))
    assert info.value.path == str(env.system_file)


def test_cfg_37_discovery_reads_only_toml(env: Env) -> None:
    """CFG-37: YAML exists only for the selected file; discovery reads plugins.toml as TOML."""
    env.write(env.user_file, "version: 1\n")
    with pytest.raises(ConfigError, match="TOML parse error"):
        load_pipeline(env.settings(), selected=env.write("sel.yaml", "version: 1\n"))


def test_cfg_40_physical_deduplication_includes_the_selected_file(env: Env) -> None:
    """CFG-40: selecting the user file (through a symlink) layers it once, at selected precedence."""
    env.write(env.user_file, obs("only"))
    link = env.root / "link.toml"
    os.symlink(env.user_file, link)
    loaded = load_pipeline(env.settings(), selected=link)
    assert loaded.sources == [str(link)]
    assert [s["filename"] for s in loaded.components[0].config["atof"]["sinks"]] == ["only.jsonl"]
    statuses = {c.role: c.status for c in plan_layers(env.settings(), link)}
    assert statuses == {"user": "duplicate", "system": "missing", "selected": "layered"}


def test_cfg_41_inherited_warning_per_contributing_file(env: Env) -> None:
    """CFG-41: one plugin.configuration_inherited per discovered layer, naming only its path."""
    env.write(env.user_file, obs("user"))
    env.write(env.system_file, "version = 1\n")
    loaded = load_pipeline(env.settings(), selected=env.write("sel.toml", obs("sel")))
    inherited = [d for d in loaded.diagnostics.items if d.code == "plugin.configuration_inherited"]
    assert [d.source for d in inherited] == [str(env.user_file), str(env.system_file)]
    assert all(d.level == "warning" and "user.jsonl" not in d.message for d in inherited)


def test_cfg_42_destination_lists_concatenate_higher_first(env: Env) -> None:
    """CFG-42 / §17: the selected file's sink comes first, then the system's, then the user's."""
    env.write(env.user_file, obs("user"))
    env.write(env.system_file, obs("system"))
    loaded = load_pipeline(env.settings(), selected=env.write("sel.toml", obs("sel")))
    sinks = loaded.components[0].config["atof"]["sinks"]
    assert [s["filename"] for s in sinks] == ["sel.jsonl", "system.jsonl", "user.jsonl"]
    prov = loaded.provenance()
    assert prov["components[0].config.atof.sinks[0].filename"] == str(env.root / "sel.toml")
    assert prov["components[0].config.atof.sinks[2].filename"] == str(env.user_file)


OTEL = """
[components.config.opentelemetry]
enabled = true
mark_names = 1
[[components.config.opentelemetry.endpoints]]
type = "gen_ai"
endpoint = "http://{host}:4318"
mark_exclude_names = {names}
[components.config.opentelemetry.logs]
enabled = true
"""


def test_cfg_42_other_lists_replace_and_empty_signal_list_clears(env: Env) -> None:
    """CFG-42: lists other than destinations are replaced; an explicit empty logs.endpoints clears."""
    lower = OBS_MINIMAL + """
[components.config.atif]
tool_definitions = [{name = "a"}, {name = "b"}]
[components.config.opentelemetry.logs]
endpoints = [{endpoint = "http://logs.example:4318/v1/logs"}]
"""
    env.write(env.user_file, lower)
    upper = OBS_MINIMAL + """
[components.config.atif]
tool_definitions = [{name = "c"}]
[components.config.opentelemetry.logs]
endpoints = []
"""
    loaded = load_pipeline(env.settings(), selected=env.write("sel.toml", upper))
    config = loaded.components[0].config
    assert config["atif"]["tool_definitions"] == [{"name": "c"}]
    assert config["opentelemetry"]["logs"]["endpoints"] == []


def test_cfg_42_non_empty_signal_list_concatenates(env: Env) -> None:
    lower = OBS_MINIMAL + '[[components.config.opentelemetry.metrics.endpoints]]\nendpoint = "http://a:4318/m"\n'
    upper = OBS_MINIMAL + '[[components.config.opentelemetry.metrics.endpoints]]\nendpoint = "http://b:4318/m"\n'
    env.write(env.system_file, lower)
    loaded = load_pipeline(env.settings(), selected=env.write("sel.toml", upper))
    endpoints = loaded.components[0].config["opentelemetry"]["metrics"]["endpoints"]
    assert [e["endpoint"] for e in endpoints] == ["http://b:4318/m", "http://a:4318/m"]


def test_cfg_42_traces_alias_merges_with_endpoints(env: Env) -> None:
    """§7.4: opentelemetry.traces is an alias of endpoints, also across layers."""
    env.write(env.user_file, OBS_MINIMAL + '[[components.config.opentelemetry.traces]]\ntype = "full"\n'
                                           'endpoint = "http://u:4318"\n')
    upper = OBS_MINIMAL + '[[components.config.opentelemetry.endpoints]]\ntype = "gen_ai"\nendpoint = "http://s:4318"\n'
    loaded = load_pipeline(env.settings(), selected=env.write("sel.toml", upper))
    otel = loaded.components[0].config["opentelemetry"]
    assert [e["endpoint"] for e in otel["endpoints"]] == ["http://s:4318", "http://u:4318"] and "traces" not in otel


def test_cfg_42_top_level_config_lists_concatenate_for_any_kind(env: Env) -> None:
    """CFG-42: lists directly inside a component's config concatenate (any kind); deeper ones replace."""
    env.write(env.user_file, 'version = 1\n[policy]\nunknown_component = "ignore"\n'
                             '[[components]]\nkind = "acme"\n[components.config]\nitems = [1, 2]\n'
                             'nested = {list = [1]}\n')
    loaded = load_pipeline(env.settings(), selected=env.write(
        "sel.toml", '[[components]]\nkind = "acme"\n[components.config]\nitems = [3]\nnested = {list = [2]}\n'))
    assert loaded.components[0].config == {"items": [3, 1, 2], "nested": {"list": [2]}}


def test_cfg_17_order_lowest_layer_first_then_new_kinds(env: Env) -> None:
    """CFG-17: merged order keeps first appearance from the lowest layer; new kinds are appended."""
    env.write(env.user_file, 'version = 1\n[policy]\nunknown_component = "ignore"\n'
                             '[[components]]\nkind = "a"\n[[components]]\nkind = "b"\n')
    selected = env.write("sel.toml", '[[components]]\nkind = "c"\n[[components]]\nkind = "a"\nenabled = false\n')
    loaded = load_pipeline(env.settings(), selected=selected)
    assert [(c.kind, c.enabled) for c in loaded.components] == [("a", False), ("b", True), ("c", True)]


def test_cfg_43_selected_enabled_false_disables_inherited_component(env: Env) -> None:
    """CFG-43: enabled = false in the selected file disables the inherited component (still validated)."""
    env.write(env.user_file, obs("user"))
    selected = env.write("sel.toml", '[[components]]\nkind = "observability"\nenabled = false\n')
    loaded = load_pipeline(env.settings(), selected=selected)
    comp = loaded.components[0]
    assert not comp.enabled and comp.resolved is not None and comp.config["atof"]["sinks"]


def test_cfg_43_disabled_component_is_still_validated(env: Env) -> None:
    with pytest.raises(ConfigError, match="only 4 is supported"):
        load_pipeline(env.settings(), selected=env.write(
            "sel.toml", '[[components]]\nkind = "observability"\nenabled = false\nconfig = {version = 3}\n'))


def test_cfg_9_2_discovered_enabled_false_is_removed(env: Env) -> None:
    """§9.2: a discovered file cannot disable a component that a lower layer declares."""
    env.write(env.user_file, obs("user"))
    env.write(env.system_file, 'version = 1\n[[components]]\nkind = "observability"\nenabled = false\n')
    loaded = load_pipeline(env.settings(), selected=env.write("sel.toml", "version = 1\n"))
    assert loaded.components[0].enabled is True


def test_cfg_45_component_reenabled_warning_names_file(env: Env) -> None:
    """CFG-45: enabling a component that a discovered file disabled warns, naming component and file."""
    env.write(env.system_file, 'version = 1\n[[components]]\nkind = "observability"\nenabled = false\n'
                               'config = {version = 4}\n')
    loaded = load_pipeline(env.settings(), selected=env.write("sel.toml", OBS_MINIMAL))
    diag = next(d for d in loaded.diagnostics.items if d.code == "plugin.component_reenabled")
    assert diag.component == "observability" and str(env.system_file) in diag.message


def test_cfg_44_omitted_keys_inherit_version_policy_enabled(env: Env) -> None:
    """CFG-44: the selected file behaves like a file layer; omitted keys inherit."""
    env.write(env.user_file, 'version = 1\n[policy]\nunknown_field = "ignore"\n' + obs("u")[len("version = 1\n"):])
    loaded = load_pipeline(env.settings(), selected=env.write("sel.toml", OBS_MINIMAL.replace("version = 1\n", "")
                                                              + "typo = 1\n"))
    assert loaded.policy.unknown_field == "ignore" and loaded.diagnostics.codes() == \
        ["plugin.configuration_inherited"]


def test_cfg_15_duplicate_kind_across_files_is_fine(env: Env) -> None:
    """CFG-15: only the same kind twice in one file is an error; across layers it merges."""
    env.write(env.user_file, obs("u"))
    loaded = load_pipeline(env.settings(), selected=env.write("sel.toml", obs("s")))
    assert len(loaded.components) == 1


def test_cfg_46_provenance_tracks_skipped_entries(env: Env) -> None:
    """Provenance stays correct when an invalid destination entry is skipped (CFG-32a)."""
    env.write(env.user_file, obs("user"))
    selected = env.write("sel.toml", OBS_MINIMAL + '[components.config.atof]\nenabled = true\n'
                                                   '[[components.config.atof.sinks]]\ntype = "file"\nmode = "bad"\n')
    loaded = load_pipeline(env.settings(), selected=selected)
    assert [s["filename"] for s in loaded.components[0].config["atof"]["sinks"]] == ["user.jsonl"]
    assert loaded.provenance()["components[0].config.atof.sinks[0].filename"] == str(env.user_file)
    assert loaded.merged.origin(("components", 0, "config", "atof", "sinks", 0, "filename")).line == 14
