"""The package's import structure, read from the code (the AST of every import, those inside functions
included): no import arrow goes up a layer, no import circle spans more than one package, no sink package
imports another, and nothing names one of the package's modules as a string to load it.

The layers are stated once, here, in the order of ``DESIGN.md``'s "One direction of dependencies". A module
may import its own layer and the layers below it; within a layer, the circle check keeps packages apart.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

import hermes_pipeline

PACKAGE = Path(hermes_pipeline.__file__).resolve().parent
ROOT = PACKAGE.name

LAYERS: tuple[frozenset[str], ...] = (
    frozenset({"contract", "_lazy", "_deprecated", "_stop_signal", "schemas"}),
    frozenset({"engine"}),
    frozenset({"runtime"}),
    frozenset({"host"}),
    frozenset({"config"}),
    frozenset({"export"}),
    frozenset({"sinks", "logs", "shared_metrics"}),
    frozenset({"components"}),
    frozenset({"profile"}),
    frozenset({"readers", "hermes", "alerts", "replay", "dashboard", "demo", "cli", "testing", "sink_testing",
               "__init__"}),
)
"""From the bottom up: each entry is the top-level modules and packages of one layer (``__init__`` is the
package root, the one place above every layer)."""

COMPATIBILITY: frozenset[tuple[str, str]] = frozenset()
"""Arrows up kept on purpose, as ``(importing module, imported package)``: none."""


def kept_on_purpose(module: str, target: str) -> bool:
    return any(module == importer and (target == package or target.startswith(package + "."))
               for importer, package in COMPATIBILITY)

SINK_PACKAGES: frozenset[str] = frozenset({"shared_metrics"})
"""Packages outside ``sinks/`` that are sinks too (besides every package under ``sinks/``)."""


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_of(module: str, paths: Mapping[str, Path]) -> str:
    """The package a module belongs to: itself for a package's ``__init__``, else its parent."""
    return module if paths[module].name == "__init__.py" else module.rpartition(".")[0]


def imports(path: Path, module: str, modules: Iterable[str]) -> list[tuple[str, int]]:
    """``(imported module, line)`` of every import of one of the package's modules in ``path``."""
    known = set(modules)
    found: list[tuple[str, int]] = []
    here = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[:len(here) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != ROOT:
                continue
            found.append((target, node.lineno))
            found.extend((f"{target}.{alias.name}", node.lineno) for alias in node.names
                         if f"{target}.{alias.name}" in known)
        elif isinstance(node, ast.Import):
            found.extend((alias.name, node.lineno) for alias in node.names if alias.name.split(".")[0] == ROOT)
    return [(target, line) for target, line in found if target in known]


def graph(package: Path = PACKAGE) -> tuple[dict[str, Path], dict[str, dict[str, int]]]:
    """The package's modules by name, and each one's imports of the others (``target → first line``)."""
    paths = {module_name(path): path for path in sorted(package.rglob("*.py"))}
    edges: dict[str, dict[str, int]] = {}
    for module, path in paths.items():
        for target, line in imports(path, module, paths):
            if target != module:
                edges.setdefault(module, {}).setdefault(target, line)
    return paths, edges


def layer_of(module: str) -> int:
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else "__init__"
    for index, members in enumerate(LAYERS):
        if top in members:
            return index
    raise AssertionError(f"{module}: its top-level name {top!r} is in no layer of LAYERS; place it there")


def arrows_up(edges: Mapping[str, Mapping[str, int]], paths: Mapping[str, Path]) -> list[str]:
    return [f"{paths[a].relative_to(PACKAGE.parent)}:{line} imports {b} (layer {layer_of(b)} above {layer_of(a)})"
            for a, targets in sorted(edges.items()) for b, line in sorted(targets.items())
            if layer_of(b) > layer_of(a) and not kept_on_purpose(a, b)]


def circles(edges: Mapping[str, Mapping[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, {}))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, {})))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def sink_package(module: str) -> str | None:
    """The sink package a module is part of (``sinks.<name>`` or one of :data:`SINK_PACKAGES`), else ``None``."""
    parts = module.split(".")
    if len(parts) >= 3 and parts[1] == "sinks" and (PACKAGE / "sinks" / parts[2]).is_dir():
        return ".".join(parts[:3])
    if len(parts) >= 2 and parts[1] in SINK_PACKAGES:
        return ".".join(parts[:2])
    return None


def sink_to_sink(edges: Mapping[str, Mapping[str, int]], paths: Mapping[str, Path]) -> list[str]:
    return [f"{paths[a].relative_to(PACKAGE.parent)}:{line} imports {b} (sink {sink_package(b)})"
            for a, targets in sorted(edges.items()) for b, line in sorted(targets.items())
            if sink_package(a) is not None and sink_package(b) is not None and sink_package(a) != sink_package(b)]


MODULE_STRING = re.compile(rf"^{ROOT}(\.[a-z_][a-z0-9_]*)+(:[A-Za-z_][A-Za-z0-9_.]*)?$")


def module_strings(paths: Mapping[str, Path]) -> list[str]:
    """String constants that name one of the package's modules (``hermes_pipeline.x.y`` or ``...:name``) in code
    that is not a docstring: a module loaded by name dodges the import arrows this file checks."""
    found = []
    for module, path in paths.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
                      and node.body and isinstance(node.body[0], ast.Expr)
                      and isinstance(node.body[0].value, ast.Constant)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings \
                    and MODULE_STRING.match(node.value) and node.value.partition(":")[0] in paths \
                    and ":" in node.value:
                found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} names {node.value!r}")
    return found


MODULE_STRINGS_KEPT: frozenset[str] = frozenset({
    "hermes_pipeline.components.observability:ObservabilityComponent",
    "hermes_pipeline.components.request_defaults:RequestDefaultsComponent",
    "hermes_pipeline.replay.agents:reference_agent",
})
"""Module names that stay strings on purpose: the built-in component kinds (CFG-79 resolves them before the
entry points of the same names) and the name a user writes for the reference replay agent. (A worker
process is told its sink class's name, derived from the class: ``export.worker.sections.entry_reference``.)"""


# ------------------------------------------------------------------------------------------------------- tests


def test_no_import_arrow_goes_up_a_layer() -> None:
    """DESIGN.md: a lower layer never imports a higher one (the one kept arrow: :data:`COMPATIBILITY`)."""
    paths, edges = graph()
    assert arrows_up(edges, paths) == []


def test_every_module_is_in_a_layer() -> None:
    paths, _ = graph()
    for module in paths:
        layer_of(module)


def test_no_import_circle_spans_two_packages() -> None:
    """Modules of one package may import each other in a loop; two packages never do."""
    paths, edges = graph()
    spanning = [component for component in circles(edges) if len({package_of(m, paths) for m in component}) > 1]
    assert spanning == []


def test_no_sink_imports_another_sink() -> None:
    """What two sinks share lives below them, in ``export/`` (issue #29 item 4)."""
    paths, edges = graph()
    assert sink_to_sink(edges, paths) == []


def test_no_module_is_named_as_a_string_to_be_loaded() -> None:
    """The profile finds its consumers as classes and entry points, and the runtime is handed its activation:
    no ``"hermes_pipeline.x:y"`` string outside :data:`MODULE_STRINGS_KEPT`."""
    paths, _ = graph()
    assert [line for line in module_strings(paths) if line.rpartition(" names ")[2].strip("'") not in
            MODULE_STRINGS_KEPT] == []


# ------------------------------------------------------------------ the checks themselves catch what they name


def _tree(tmp_path: Path, files: Mapping[str, str]) -> Path:
    root = tmp_path / ROOT
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_the_checks_catch_an_arrow_up_a_circle_and_a_sink_importing_a_sink(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A small tree with one violation of each kind: every check names it (so a check that silently finds
    nothing fails here)."""
    root = _tree(tmp_path, {
        "__init__.py": "", "engine/__init__.py": "", "export/__init__.py": "",
        "sinks/__init__.py": "", "sinks/a/__init__.py": "", "sinks/b/__init__.py": "",
        "engine/core.py": "def f():\n    from ..config import x\n",  # up, inside a function
        "config/x.py": "from ..engine import core\nfrom ..profile import p\n",  # up
        "config/__init__.py": "def __getattr__(name):\n    from ..profile import p\n",  # up, even lazily
        "profile/__init__.py": "", "profile/p.py": "",
        "export/one.py": "from ..sinks.a import s\n",  # up, and a circle with sinks/a
        "sinks/a/s.py": "from ...export import one\nfrom ..b import t\n",  # sink -> sink
        "sinks/b/t.py": "",
    })
    monkeypatch.setattr(f"{__name__}.PACKAGE", root)
    paths, edges = graph(root)
    up = arrows_up(edges, paths)
    assert any("engine/core.py:2 imports hermes_pipeline.config" in line for line in up), up
    assert any("export/one.py:1 imports hermes_pipeline.sinks.a" in line for line in up), up
    assert any("config/x.py:2 imports hermes_pipeline.profile" in line for line in up), up
    assert any(line.startswith("hermes_pipeline/config/__init__.py") for line in up), up  # no facade is exempt
    spanning = [c for c in circles(edges) if len({package_of(m, paths) for m in c}) > 1]
    assert spanning == [["hermes_pipeline.config.x", "hermes_pipeline.engine.core"],
                        ["hermes_pipeline.export.one", "hermes_pipeline.sinks.a.s"]], spanning
    assert sink_to_sink(edges, paths) == [
        "hermes_pipeline/sinks/a/s.py:2 imports hermes_pipeline.sinks.b (sink hermes_pipeline.sinks.b)",
        "hermes_pipeline/sinks/a/s.py:2 imports hermes_pipeline.sinks.b.t (sink hermes_pipeline.sinks.b)"]


# ------------------------------------------------------------------------------------------ one name, one thing


def class_definitions(paths: Mapping[str, Path]) -> dict[str, list[str]]:
    """Public top-level class name → the modules defining it."""
    found: dict[str, list[str]] = {}
    for module, path in paths.items():
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                found.setdefault(node.name, []).append(module)
    return found


ONE_SHAPE: dict[str, str] = {"Sink": "hermes_pipeline.export.sink", "BaseSink": "hermes_pipeline.export.sink",
                             "Recorder": "hermes_pipeline.testing", "Replay": "hermes_pipeline.replay.replay"}
"""Names issue #29 found defined twice (two ``Sink`` protocols, two ``Recorder``s, a second ``Replay``): each
is defined once, here."""

KNOWN_TWICE: frozenset[str] = frozenset({"Claim", "Event", "Resource", "Response", "StoreBusy", "StoreError",
                                         "StoreHandle"})
"""Public class names still defined in two modules (each inside its own package); none may join them."""


def test_one_sink_shape_one_recorder_one_replay() -> None:
    """Item 4 and 6 of issue #29: one ``Sink`` protocol and one base (``sinks.base`` names them as its own),
    one ``Recorder`` (the public test capture), one ``Replay`` (of recorded trajectories)."""
    from hermes_pipeline.export import sink
    from hermes_pipeline.sinks import base

    paths, _ = graph()
    defined = class_definitions(paths)
    assert {name: defined.get(name) for name in ONE_SHAPE} == {name: [home] for name, home in ONE_SHAPE.items()}
    assert base.Sink is sink.Sink and base.BaseSink is sink.BaseSink


def test_no_new_public_class_name_is_defined_twice() -> None:
    paths, _ = graph()
    twice = {name for name, modules in class_definitions(paths).items() if len(modules) > 1}
    assert twice <= KNOWN_TWICE, sorted(twice - KNOWN_TWICE)
