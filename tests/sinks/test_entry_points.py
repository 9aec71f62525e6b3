"""The sink class is the entry point (issue #29 item 4; spec 03 CFG-79, spec 04 FMT-73).

- Every built-in sink's entry point in this tree's ``pyproject.toml`` names its sink class, which builds
  itself with ``from_config(config, ctx)`` and carries its section's statement. (The values are read from
  ``pyproject.toml`` and loaded: the environment's installed metadata may be another tree's.)
- The registry, given a real distribution written under ``tmp_path`` (a ``dist-info`` with
  ``entry_points.txt`` and a module, put on ``sys.path``), loads a third-party sink class and a third-party
  builder function alike, and the ``observability`` component builds and feeds both; an entry point that
  names neither is a typed error naming the section, never a traceback.
"""

from __future__ import annotations

import importlib
import inspect
import json
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline.export.errors import ExportConfigError
from hermes_pipeline.export.sink import BaseSink, Sink, SinkContext, build_sink
from hermes_pipeline.sinks import registry
from hermes_pipeline.testing import capture_export

from tests._repo import REPO

BUILT_IN = {"atof": "AtofSink", "atif": "AtifSink", "opentelemetry": "OtelSink",
            "trajectory_store": "TrajectoryStoreSink"}


def _entry_points() -> dict[str, str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    return dict(project["project"]["entry-points"][registry.GROUP])


def _load(value: str) -> Any:
    module, _, attribute = value.partition(":")
    found: Any = importlib.import_module(module)
    for part in attribute.split("."):
        found = getattr(found, part)
    return found


def test_every_builtin_sinks_entry_point_is_its_sink_class() -> None:
    """Each value of the ``hermes_pipeline.sinks`` group names a class (not a builder function or object) with
    the ``from_config`` classmethod, whose name says which sink it is."""
    values = _entry_points()
    assert set(values) == set(BUILT_IN)
    for name, value in values.items():
        assert value.rpartition(":")[2] == BUILT_IN[name]  # the class itself, not an older name aliasing it
        entry = _load(value)
        assert inspect.isclass(entry), f"{name} = {value!r} is not a class"
        assert entry.__name__ == BUILT_IN[name]
        assert inspect.ismethod(entry.from_config) and entry.from_config.__self__ is entry


@pytest.mark.parametrize("name", ["atof", "atif", "opentelemetry"])
def test_the_builtin_classes_carry_their_sections_statement(name: str) -> None:
    """CFG-42: ``config validate`` and the layer merge read ``validate_config`` / ``list_paths`` off the entry."""
    entry = _load(_entry_points()[name])
    statement = importlib.import_module(f"{entry.__module__.rsplit('.', 1)[0]}.config")
    assert entry.validate_config is statement.validate_config
    assert entry.list_paths == statement.LIST_PATHS


@pytest.mark.parametrize("name", ["atof", "atif"])
def test_a_builtin_class_builds_itself_from_its_section(tmp_path: Path, name: str) -> None:
    """The class entry, given the section's table and a context, returns a started sink of that class
    (``worker = "thread"``); a bad key is the typed error naming its path."""
    entry = _load(_entry_points()[name])
    table = ({"enabled": True, "sinks": [{"type": "file", "output_directory": str(tmp_path)}]} if name == "atof"
             else {"enabled": True, "output_directory": str(tmp_path)})
    sink = build_sink(entry, table, SinkContext(name=name, base_dir=tmp_path))
    try:
        assert isinstance(sink, entry) and isinstance(sink, Sink) and sink.enabled  # type: ignore[attr-defined]
    finally:
        sink.shutdown(5.0)
    with pytest.raises(ExportConfigError) as info:
        build_sink(entry, {**table, "worker": "fork"}, SinkContext(name=name, base_dir=tmp_path))
    assert info.value.path == f"{name}.worker"


# --------------------------------------------------------------------------- third-party distributions

MODULE = '''
"""Third-party sinks: a class entry point and a builder function entry point."""
import json


class _Writer:
    def __init__(self, path, section, how):
        self.out = open(path, "w", encoding="utf-8")
        self.section, self.how, self.seen = section, how, 0

    def __call__(self, event):
        self.seen += 1
        self.out.write(json.dumps([self.how, event.phase, event.uuid, event.parent_uuid, event.name]) + "\\n")

    def flush(self, timeout):
        self.out.flush()
        return True

    def shutdown(self, deadline):
        self.out.close()
        return True

    def stats(self):
        return {"seen": self.seen}

    def destinations(self):
        return []


class ClassSink(_Writer):
    """A sink class whose constructor takes parsed settings: ``from_config`` reads the table."""

    built_by = []

    @classmethod
    def validate_config(cls, config, vctx):
        if not isinstance(config.get("path"), str):
            vctx.error("path", "'path' is required", code="class_sink.path")

    @classmethod
    def from_config(cls, config, ctx):
        cls.built_by.append(ctx.name)
        return cls(config["path"], ctx.name, "class")


def build(config, ctx):
    """A builder function, the older form of the contract."""
    return _Writer(config["path"], ctx.name, "builder")


NOT_A_SINK = "neither a class nor a builder"
'''


@pytest.fixture
def third_party(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A distribution ``third_party_sinks`` on ``sys.path``: entry points for a class, a builder and a string."""
    site = tmp_path / "site"
    info = site / "third_party_sinks-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: third_party_sinks\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(
        f"[{registry.GROUP}]\nclass_sink = third_party_sinks:ClassSink\nbuilder_sink = third_party_sinks:build\n"
        "not_a_sink = third_party_sinks:NOT_A_SINK\n", encoding="utf-8")
    (site / "third_party_sinks.py").write_text(MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(site))
    yield site
    sys.modules.pop("third_party_sinks", None)


def test_the_registry_loads_a_third_party_class_and_a_builder_function(third_party: Path) -> None:
    entry = registry.load_sink("class_sink")
    assert inspect.isclass(entry) and entry.__name__ == "ClassSink"
    builder = registry.load_sink("builder_sink")
    assert inspect.isfunction(builder) and builder.__name__ == "build"
    assert {"class_sink", "builder_sink", "not_a_sink"} <= set(registry.sink_names())


def test_an_entry_point_naming_neither_a_sink_class_nor_a_builder_is_a_typed_error(third_party: Path) -> None:
    """FMT-73: the error names the section and the entry point's value (and says what was expected)."""
    with pytest.raises(ExportConfigError) as info:
        registry.load_sink("not_a_sink")
    assert info.value.path == "not_a_sink"
    assert "third_party_sinks:NOT_A_SINK" in info.value.message and "neither a sink class" in info.value.message
    with pytest.raises(ExportConfigError) as built:  # the same rule where a sink is built from an entry given directly
        build_sink("not a sink", {}, SinkContext(name="my_section", base_dir=third_party))
    assert built.value.path == "my_section" and "neither a sink class" in built.value.message


def test_the_component_builds_and_feeds_a_third_party_class_and_builder(third_party: Path, tmp_path: Path) -> None:
    """Both forms, found by name through the entry points, are built once each (the class through its
    ``from_config``) and receive the same events, with the same scope UUIDs, as every other sink."""
    out = tmp_path / "out"
    out.mkdir()
    config = {"version": 4,
              "class_sink": {"enabled": True, "path": str(out / "class.jsonl")},
              "builder_sink": {"enabled": True, "path": str(out / "builder.jsonl")}}
    run = capture_export(config, out)
    module = sys.modules["third_party_sinks"]
    assert module.ClassSink.built_by == ["class_sink"]
    rows = {how: [json.loads(line) for line in (out / f"{how}.jsonl").read_text(encoding="utf-8").splitlines()]
            for how in ("class", "builder")}
    expected = [[event.phase, event.uuid, event.parent_uuid, event.name] for event in run.events]
    assert len(expected) >= 8
    assert [row[1:] for row in rows["class"]] == expected and {row[0] for row in rows["class"]} == {"class"}
    assert [row[1:] for row in rows["builder"]] == expected and {row[0] for row in rows["builder"]} == {"builder"}


def test_base_sink_builds_a_subclass_from_its_constructor(tmp_path: Path) -> None:
    """A ``BaseSink`` subclass taking ``(config, ctx)`` needs no ``from_config`` of its own."""
    class Counting(BaseSink):
        def __init__(self, config: Any, ctx: SinkContext) -> None:
            self.section, self.start = ctx.name, config["start"]

        def __call__(self, event: object) -> None:
            self.start += 1

    sink = build_sink(Counting, {"start": 3}, SinkContext(name="counting", base_dir=tmp_path))
    assert isinstance(sink, Counting) and sink.section == "counting" and sink.start == 3


def test_the_old_names_are_thin_aliases_of_the_class_entry_and_the_generic_wrapper(tmp_path: Path) -> None:
    """The former entry-point builders are the classes themselves, the per-sink plugin classes are the generic
    stand-alone wrapper, and ``build_atof_plugin`` builds through the class entry (so the forms cannot drift)."""
    from hermes_pipeline.export.standalone import SinkPlugin
    from hermes_pipeline.sinks import atif, atof, otel

    assert atof.atof_builder is atof.AtofSink and atif.atif_builder is atif.AtifSink
    assert otel.opentelemetry_builder is otel.OtelSink
    assert atof.AtofPlugin is atif.AtifPlugin is otel.OtelPlugin is SinkPlugin
    plugin = atof.build_atof_plugin({"enabled": True, "sinks": [{"type": "file", "output_directory": str(tmp_path)}]})
    try:
        assert type(plugin) is SinkPlugin and type(plugin.sink) is atof.AtofSink and plugin.enabled
    finally:
        plugin.shutdown(5.0)
