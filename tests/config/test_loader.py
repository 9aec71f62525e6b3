"""Parsing pipeline files: TOML and YAML forms, structural errors, typed errors with file/line/key
(spec 03 §4, §8, CFG-11, CFG-13..CFG-15, CFG-21, CFG-33..CFG-37, CFG-81)."""

from __future__ import annotations

from pathlib import Path

import pytest
import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_pipeline import HermesPipelineError
from hermes_pipeline.config import ConfigError, PipelineDocument, load_pipeline
from hermes_pipeline.config.keypath import format_path, parse_path
from hermes_pipeline.config.loader import parse_file, parse_toml, toml_lines

from .conftest import OBS_MINIMAL, Env


def load(env: Env, name: str, text: str, **kw: object):
    path = env.write(name, text)
    return load_pipeline(env.settings(), selected=path, discover=False, **kw)  # type: ignore[arg-type]


def error_of(env: Env, name: str, text: str) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        load(env, name, text)
    return info.value


def test_cfg_21_config_error_is_typed_and_names_file_line_key(env: Env) -> None:
    """CFG-21 / CFG-7 cause: a ConfigError subclasses HermesPipelineError and carries path, line, key, message."""
    err = error_of(env, "p.toml", "# comment\nversion = 2\n")
    assert isinstance(err, HermesPipelineError)
    assert err.path == str(env.root / "p.toml") and err.line == 2 and err.key == "version"
    assert "only version = 1" in err.message
    assert str(err).startswith(f"{env.root / 'p.toml'}:2: version: ")


def test_cfg_21_toml_parse_error_has_line(env: Env) -> None:
    err = error_of(env, "p.toml", "version = 1\n[[components]]\nkind = \n")
    assert err.line == 3 and "TOML parse error" in err.message


def test_cfg_11_dynamic_plugins_key_always_error(env: Env) -> None:
    """CFG-11: top-level dynamic_plugins is an error that points to [[plugins.dynamic]]."""
    err = error_of(env, "p.toml", "version = 1\n[policy]\nunknown_field = \"ignore\"\n[[dynamic_plugins]]\nx = 1\n")
    assert err.key == "dynamic_plugins" and "[[plugins.dynamic]]" in err.message


def test_cfg_15_duplicate_kind_in_one_file_names_file_and_kinds(env: Env) -> None:
    """CFG-15: the same kind twice in one file is an error naming the file and the kinds."""
    err = error_of(env, "p.toml", OBS_MINIMAL + '\n[[components]]\nkind = "observability"\n')
    assert "observability" in err.message and err.path == str(env.root / "p.toml")


@pytest.mark.parametrize("entry, needle", [
    ("enabled = true", "no 'kind'"),
    ("kind = 3", "must be a string"),
    ('kind = "Bad-Kind"', "invalid kind name"),
    ('kind = "a..b"', "invalid kind name"),
])
def test_cfg_21_cfg_81_missing_or_invalid_kind(env: Env, entry: str, needle: str) -> None:
    """CFG-21 / CFG-81: a missing, non-string or malformed kind is an error regardless of policy."""
    err = error_of(env, "p.toml", f'version = 1\n[policy]\nunsupported_value = "ignore"\n[[components]]\n{entry}\n')
    assert needle in err.message and err.line in (4, 5)


def test_cfg_81_dotted_kind_names_are_valid(env: Env) -> None:
    """CFG-81: lowercase segments separated by '.' are valid (the kind is then unknown: a warning)."""
    loaded = load(env, "p.toml", 'version = 1\n[[components]]\nkind = "acme.audit_v2"\n')
    assert loaded.diagnostics.codes() == ["plugin.unknown_component"]


def test_cfg_33_yaml_by_suffix_toml_otherwise(env: Env) -> None:
    """CFG-33: .yaml/.yml are YAML; any other name, including none, is TOML."""
    yaml_text = "version: 1\ncomponents:\n  - kind: observability\n    config: {version: 4}\n"
    for name in ("p.yaml", "p.YML"):
        assert load(env, name, yaml_text).components[0].kind == "observability"
    assert load(env, "pipeline", OBS_MINIMAL).components[0].kind == "observability"
    with pytest.raises(ConfigError, match="TOML parse error"):
        load(env, "p.conf", yaml_text)


def test_cfg_34_toml_and_yaml_give_the_same_document() -> None:
    """CFG-34: the shipped local-files example in TOML and YAML produce identical documents."""
    root = Path(__file__).resolve().parents[2] / "pipelines"
    toml_doc = load_pipeline(selected=root / "local-files.toml", discover=False).document
    yaml_doc = load_pipeline(selected=root / "local-files.yaml", discover=False).document
    assert isinstance(toml_doc, PipelineDocument) and toml_doc == yaml_doc


@pytest.mark.parametrize("text, needle", [
    ("version: 1\n---\nversion: 1\n", "document"),
    ("version: 1\nx: !!python/object:os.system ls\n", "tags are not allowed"),
    ("version: 1\n1: a\n", "mapping keys must be strings"),
    ("- a\n- b\n", "mapping at the top level"),
    ("version: 1\nversion: 1\n", "duplicate"),
])
def test_cfg_35_yaml_rules(env: Env, text: str, needle: str) -> None:
    """CFG-35: one document, safe loading, string keys, a mapping at the top."""
    err = error_of(env, "p.yaml", text)
    assert needle in err.message.lower() or needle in str(err).lower()


def test_cfg_35_aliases_are_expanded(env: Env) -> None:
    text = ("version: 1\nsink: &s {type: file, filename: a.jsonl}\ncomponents:\n  - kind: observability\n"
            "    config: {version: 4, atof: {enabled: true, sinks: [*s]}}\n")
    loaded = load(env, "p.yaml", text)
    assert loaded.components[0].config["atof"]["sinks"] == [{"type": "file", "filename": "a.jsonl"}]


def test_cfg_35_self_referencing_alias_is_a_config_error(env: Env) -> None:
    with pytest.raises(ConfigError):
        load(env, "p.yaml", "version: 1\na: &x [*x]\n")


@pytest.mark.parametrize("value", ["null", "2024-01-01", "!!binary aGVsbG8=", ".inf"])
def test_cfg_14_cfg_35_unsupported_yaml_values(env: Env, value: str) -> None:
    """CFG-14: null, timestamps, binary and non-finite numbers are unsupported values (error by default)."""
    text = f"version: 1\ncomponents:\n  - kind: observability\n    config:\n      version: 4\n      x: {value}\n"
    err = error_of(env, "p.yaml", text)
    assert err.code == "observability.unsupported_value" and err.line == 6
    assert err.key == "components[0].config.x"


def test_cfg_14_toml_datetime_is_unsupported(env: Env) -> None:
    err = error_of(env, "p.toml", OBS_MINIMAL + "when = 2024-01-01T00:00:00Z\n")
    assert err.code == "observability.unsupported_value" and err.line == 8


def test_cfg_36_yaml_boolean_reaching_an_enum_is_unsupported(env: Env) -> None:
    """CFG-36: a boolean where an enum string is expected is an unsupported value."""
    text = ("version: 1\npolicy: {unsupported_value: warn}\ncomponents:\n  - kind: observability\n"
            "    config: {version: 4, content_summary: true}\n")
    loaded = load(env, "p.yaml", text)
    assert "content_summary" not in loaded.components[0].config
    assert loaded.diagnostics.codes() == ["observability.unsupported_value"]


def test_cfg_13_line_map_for_toml_tables_and_arrays() -> None:
    text = ('version = 1\n[[components]]\nkind = "a"\n[components.config]\nx.y = 1\n'
            '[[components]]\nkind = "b"\n[[components.config.items]]\nz = "s"\n')
    lines = toml_lines(text)
    assert lines[("components", 1, "kind")] == 7
    assert lines[("components", 0, "config", "x", "y")] == 5
    assert lines[("components", 1, "config", "items", 0, "z")] == 9


def test_yaml_line_numbers(env: Env) -> None:
    path = env.write("p.yaml", "version: 1\ncomponents:\n  - kind: observability\n    config:\n      version: 3\n")
    parsed = parse_file(path)
    assert parsed.line_for(("components", 0, "config", "version")) == 5


def test_missing_and_unreadable_files_are_config_errors(env: Env) -> None:
    with pytest.raises(ConfigError, match="file not found"):
        parse_file(env.root / "absent.toml")
    (env.root / "dir.toml").mkdir()
    with pytest.raises(ConfigError, match="directory"):
        parse_file(env.root / "dir.toml")
    (env.root / "bin.toml").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ConfigError, match="UTF-8"):
        parse_file(env.root / "bin.toml")


# --------------------------------------------------------------------------- property tests

_keys = st.one_of(st.sampled_from(["version", "components", "policy", "plugins", "kind", "enabled", "config",
                                   "atof", "atif", "opentelemetry", "sinks", "endpoints", "type", "dynamic",
                                   "manifest", "unknown_field", "dynamic_plugins"]),
                  st.text(min_size=1, max_size=8))
_scalars = st.one_of(st.booleans(), st.integers(min_value=-(2**63), max_value=2**63 - 1),
                     st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=10),
                     st.sampled_from([1, 4, "observability", "file", "stream", "error", "warn", "ignore"]))
_values = st.recursive(_scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                         st.dictionaries(_keys, inner, max_size=4)), max_leaves=20)
_documents = st.dictionaries(_keys, _values, max_size=5)

_PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@_PROPERTY
@given(doc=_documents, components=st.lists(st.dictionaries(_keys, _values, max_size=4), max_size=3))
def test_property_generated_toml_never_raises_anything_but_config_error(env: Env, doc: dict, components: list) -> None:
    """CFG-7: whatever the TOML document, loading either succeeds or raises ConfigError."""
    doc = dict(doc)
    if components:
        doc["components"] = components
    path = env.root / "gen.toml"
    try:
        path.write_text(tomli_w.dumps(doc), encoding="utf-8")
    except (TypeError, ValueError):
        return
    try:
        load_pipeline(env.settings(), selected=path, discover=False)
    except ConfigError:
        pass


@_PROPERTY
@given(doc=_documents)
def test_property_generated_yaml_never_raises_anything_but_config_error(env: Env, doc: dict) -> None:
    from ruamel.yaml import YAML

    path = env.root / "gen.yaml"
    with path.open("w", encoding="utf-8") as handle:
        YAML(typ="safe", pure=True).dump(doc, handle)
    try:
        load_pipeline(env.settings(), selected=path, discover=False)
    except ConfigError:
        pass


@_PROPERTY
@given(text=st.text(max_size=200), yaml=st.booleans())
def test_property_arbitrary_text_never_raises_anything_but_config_error(env: Env, text: str, yaml: bool) -> None:
    path = env.root / ("raw.yaml" if yaml else "raw.toml")
    path.write_text(text, encoding="utf-8")
    try:
        load_pipeline(env.settings(), selected=path, discover=False)
    except ConfigError:
        pass


_BASE = {"version": 1, "components": [{"kind": "observability", "config": {
    "version": 4, "atof": {"enabled": True, "sinks": [{"type": "file", "filename": "e.jsonl"}]},
    "opentelemetry": {"enabled": True, "endpoints": [{"type": "gen_ai", "endpoint": "http://localhost:4318"}]}}}]}


def _insert(doc: dict, path: list, value: object) -> None:
    node = doc
    for key in path[:-1]:
        child = node.get(key) if isinstance(node, dict) else None
        if not isinstance(child, dict):
            child = {}
            node[key] = child
        node = child
    node[path[-1]] = value


@_PROPERTY
@given(path=st.lists(_keys, min_size=1, max_size=4), value=_values, inside=st.sampled_from(["top", "config", "otel"]),
       yaml=st.booleans())
def test_property_random_key_paths_into_a_valid_document(env: Env, path: list, value: object, inside: str,
                                                         yaml: bool) -> None:
    """Random values at random key paths of a valid document: success or ConfigError, nothing else."""
    import copy

    from ruamel.yaml import YAML

    doc = copy.deepcopy(_BASE)
    target = {"top": doc, "config": doc["components"][0]["config"],
              "otel": doc["components"][0]["config"]["opentelemetry"]["endpoints"][0]}[inside]
    _insert(target, path, value)
    file = env.root / ("rnd.yaml" if yaml else "rnd.toml")
    if yaml:
        with file.open("w", encoding="utf-8") as handle:
            YAML(typ="safe", pure=True).dump(doc, handle)
    else:
        file.write_text(tomli_w.dumps(doc), encoding="utf-8")
    try:
        loaded = load_pipeline(env.settings(), selected=file, discover=False)
    except ConfigError as exc:
        assert exc.message and "Traceback" not in str(exc)
    else:
        assert loaded.document.version == 1


@settings(max_examples=200, deadline=None)
@given(path=st.lists(st.one_of(st.text(min_size=1, max_size=6), st.integers(0, 99)), min_size=1, max_size=5)
       .filter(lambda p: isinstance(p[0], str)))
def test_property_key_paths_round_trip(path: list) -> None:
    """Dotted key paths used in diagnostics and provenance parse back to the same path."""
    assert parse_path(format_path(tuple(path))) == tuple(path)


def test_toml_parse_of_valid_text_keeps_values() -> None:
    parsed = parse_toml(OBS_MINIMAL, Path("x.toml"))
    assert parsed.data["components"][0]["config"]["version"] == 4
