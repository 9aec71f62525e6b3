"""Kind resolution, entry points and the component API (spec 03 §15; CFG-78..CFG-85)."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest

from hermes_pipeline import Engine, Host
from hermes_pipeline.config import BUILTIN_KINDS, ConfigError, available_kinds, load_pipeline
from hermes_pipeline.profile.activation import activate_loaded
from hermes_pipeline.config.diagnostics import Diagnostics

from .conftest import COMPONENT_SOURCE, OBS_MINIMAL, Env, Site

MARKER_SOURCE = """\
import pathlib
pathlib.Path({marker!r}).write_text("imported")

class Component:
    kind = {kind!r}
    def __init__(self, ctx):
        self.ctx = ctx
    def activate(self):
        pass
"""


def doc(*kinds: str, extra: str = "") -> str:
    return "version = 1\n" + extra + "".join(f'[[components]]\nkind = "{k}"\n' for k in kinds)


def load(env: Env, text: str):
    return load_pipeline(env.settings(), selected=env.write("p.toml", text), discover=False)


def test_cfg_79_pyproject_publishes_the_builtin_kinds() -> None:
    """CFG-79: hermes_pipeline's own distribution publishes every built-in kind in the group."""
    pyproject = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
    published = pyproject["project"]["entry-points"]["hermes_pipeline.components"]
    assert published == dict(BUILTIN_KINDS)


def test_cfg_78_entry_point_kind_resolves_and_receives_config(env: Env, site: Site) -> None:
    """CFG-78: a kind that is not built in resolves through an entry point; its class gets the config."""
    module = site.module(COMPONENT_SOURCE.format(kind="acme"))
    site.dist("acme-plugins", {"acme": f"{module}:Component"})
    loaded = load(env, doc("acme") + '[components.config]\nlevel = 3\n')
    comp = loaded.components[0]
    assert comp.resolved.origin == "entry_point" and comp.resolved.distribution == "acme-plugins"
    engine = Engine()
    names = activate_loaded(engine, loaded, Diagnostics(log=False))
    assert names == ["component:acme"] and engine.has_middleware("llm_request")
    assert sys.modules[module].EVENTS == [("activate", "acme", {"level": 3})]


def test_cfg_80_lazy_only_named_entry_points_are_imported(env: Env, site: Site) -> None:
    """CFG-80: only entry points named in the document are imported; listing reads metadata only."""
    used = site.module(COMPONENT_SOURCE.format(kind="used"))
    marker = env.root / "unused-imported"
    unused = site.module(MARKER_SOURCE.format(marker=str(marker), kind="unused"))
    site.dist("lazy-dist", {"used": f"{used}:Component", "unused": f"{unused}:Component"})
    kinds = available_kinds()
    assert kinds["unused"] == ["lazy-dist"] and "observability" in kinds
    load(env, doc("used"))
    assert not marker.exists() and unused not in sys.modules


def test_cfg_80_disabled_components_are_still_imported_and_validated(env: Env, site: Site) -> None:
    marker = env.root / "imported"
    module = site.module(MARKER_SOURCE.format(marker=str(marker), kind="off"))
    site.dist("off-dist", {"off": f"{module}:Component"})
    loaded = load(env, 'version = 1\n[[components]]\nkind = "off"\nenabled = false\n')
    assert marker.exists() and loaded.components[0].enabled is False


def test_cfg_81_duplicate_distributions_named(env: Env, site: Site) -> None:
    """CFG-81: two distributions publishing a referenced name is an error naming both."""
    module = site.module(COMPONENT_SOURCE.format(kind="twin"))
    site.dist("dist-one", {"twin": f"{module}:Component"})
    site.dist("dist-two", {"twin": f"{module}:Component"})
    with pytest.raises(ConfigError) as info:
        load(env, doc("twin"))
    assert "dist-one" in info.value.message and "dist-two" in info.value.message
    assert load(env, doc()).components == []  # not referenced: no error


def test_cfg_81_import_failure_is_an_error_whatever_the_policy(env: Env, site: Site) -> None:
    module = site.module("raise ImportError('broken dependency')\n")
    site.dist("broken-dist", {"broken": f"{module}:Component"})
    with pytest.raises(ConfigError) as info:
        load(env, doc("broken", extra='[policy]\nunknown_component = "ignore"\n'))
    assert "broken-dist" in info.value.message and info.value.code == "pipeline.component_load_failed"


def test_cfg_79_third_party_shadowing_a_builtin_is_ignored(env: Env, site: Site) -> None:
    """CFG-79: a third-party entry point named like a built-in kind is ignored with pipeline.kind_shadowed."""
    marker = env.root / "shadow-imported"
    module = site.module(MARKER_SOURCE.format(marker=str(marker), kind="observability"))
    site.dist("shadow-dist", {"observability": f"{module}:Component"})
    loaded = load(env, OBS_MINIMAL)
    assert loaded.components[0].resolved.origin == "builtin"
    diag = next(d for d in loaded.diagnostics.items if d.code == "pipeline.kind_shadowed")
    assert diag.level == "warning" and "shadow-dist" in diag.message
    assert not marker.exists()


def test_cfg_81_class_kind_must_match_entry_point_name(env: Env, site: Site) -> None:
    """§15.2: the component class's kind must equal the entry-point name."""
    module = site.module(COMPONENT_SOURCE.format(kind="other"))
    site.dist("mismatch-dist", {"named": f"{module}:Component"})
    with pytest.raises(ConfigError, match="must equal the entry-point name"):
        load(env, doc("named"))


def test_cfg_78_register_function_entry_point_is_wrapped(env: Env, site: Site) -> None:
    """A pluggy-style register(ctx) plugin published as a kind receives its config."""
    module = site.module("SEEN = []\ndef register(ctx):\n    SEEN.append(dict(ctx.config))\n"
                         "    ctx.register_hook('on_session_start', lambda **kw: None)\n")
    site.dist("fn-dist", {"fn_kind": f"{module}:register"})
    loaded = load(env, doc("fn_kind") + "[components.config]\nx = 1\n")
    engine = Engine()
    activate_loaded(engine, loaded, Diagnostics(log=False))
    assert sys.modules[module].SEEN == [{"x": 1}] and engine.has_hook("on_session_start")


def test_cfg_78_hookimpl_module_entry_point(env: Env, site: Site) -> None:
    """A module of @hookimpl functions is a valid component implementation."""
    module = site.module("from hermes_pipeline import hookimpl\nCALLS = []\n"
                         "@hookimpl\ndef on_session_start(session_id, **kw):\n    CALLS.append(session_id)\n")
    site.dist("impl-dist", {"impl_kind": module})
    loaded = load(env, doc("impl_kind"))
    engine = Engine()
    activate_loaded(engine, loaded, Diagnostics(log=False))
    with Host(engine).session("s-1") as session, session.turn("hi"):
        pass
    assert sys.modules[module].CALLS == ["s-1"]


def test_cfg_19_config_schema_detects_unknown_and_unsupported(env: Env, site: Site) -> None:
    """§15.2: config_schema (JSON Schema) drives unknown_field / unsupported_value under policy."""
    module = site.module(COMPONENT_SOURCE.format(kind="schema") + """
Component.config_schema = {
    "type": "object",
    "properties": {"level": {"type": "integer", "minimum": 0}},
    "additionalProperties": False,
}
""")
    site.dist("schema-dist", {"schema": f"{module}:Component"})
    loaded = load(env, doc("schema", extra='[policy]\nunsupported_value = "warn"\n')
                  + "[components.config]\nlevel = -1\nother = 2\n")
    assert sorted(d.code for d in loaded.diagnostics.items) == ["schema.unknown_field", "schema.unsupported_value"]
    assert loaded.components[0].config == {}


def test_request_defaults_middleware_example(env: Env) -> None:
    """The shipped middleware example registers llm_request / tool_request middleware that fill defaults."""
    loaded = load_pipeline(env.settings(), selected=Path(__file__).resolve().parents[2] / "pipelines" /
                           "middleware.toml", discover=False)
    engine = Engine()
    activate_loaded(engine, loaded, Diagnostics(log=False))
    assert engine.has_middleware("llm_request") and engine.has_middleware("tool_request")
    seen: dict = {}
    with Host(engine).session() as session, session.turn("hi") as turn:
        turn.call_llm({"model": "m", "messages": [], "temperature": 0.9},
                      lambda request: seen.setdefault("request", request) and {"choices": []})
        turn.call_tool("read_file", {"path": "a"}, lambda **args: seen.setdefault("args", args) and "ok")
    assert seen["request"]["temperature"] == 0.9 and seen["request"]["max_tokens"] == 2048
    assert seen["args"] == {"path": "a", "encoding": "utf-8"}
