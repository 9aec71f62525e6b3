"""The scope plugin's shape, read from the code (issue #29 item 2): one scope tracker passed in, one small
module per scope kind, no inheritance tower.

- no class of :mod:`hermes_pipeline.export.scope_kinds` subclasses the tracker or another scope kind, and the
  hooks object (:class:`~hermes_pipeline.export.scope_hooks.ScopePlugin`) is no tracker either;
- no module of the scope plugin reads or writes state through ``getattr(self, ...)`` / ``hasattr(self, ...)``
  (what two kinds share goes through the tracker or an explicit call);
- each scope kind has its module, none over 250 lines, and each kind's class is made with the tracker.

The last test feeds the checks a small tree with each violation, so a check that silently finds nothing fails.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

from hermes_pipeline.export import scope_hooks, scope_kinds, scopes
from hermes_pipeline.export.scope_hooks import ScopePlugin
from hermes_pipeline.export.scopes import ScopeTracker

KINDS_DIR = Path(scope_kinds.__file__).resolve().parent
KIND_MODULES = ("session", "turn", "llm_call", "tool_call", "skill", "approval", "subagent", "trigger")
"""The scope kinds of issue #29 item 2 (approvals and human input share ``approval``; gateway dispatch is ``trigger``)."""
MAX_LINES = 250
SELF_REFLECTION = frozenset({"getattr", "hasattr", "setattr", "delattr"})


def scope_plugin_sources() -> dict[str, str]:
    """The scope plugin's modules (the kinds, the hooks object, the tracker) by file name."""
    paths = [*sorted(KINDS_DIR.glob("*.py")), Path(scope_hooks.__file__), Path(scopes.__file__)]
    return {path.name if path.parent != KINDS_DIR else f"scope_kinds/{path.name}": path.read_text(encoding="utf-8")
            for path in paths}


def reflection_on_self(source: str, name: str) -> list[str]:
    """``name:line`` of every ``getattr(self, ...)`` and the like in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in SELF_REFLECTION \
                and node.args and isinstance(node.args[0], ast.Name) and node.args[0].id == "self":
            found.append(f"{name}:{node.lineno} {node.func.id}(self, ...)")
    return found


def kind_classes(modules: list[object]) -> list[type]:
    """The classes defined (not imported) in ``modules``."""
    return [cls for module in modules for _, cls in inspect.getmembers(module, inspect.isclass)
            if cls.__module__ == getattr(module, "__name__", None)]


def tower(classes: list[type]) -> list[str]:
    """``Class(Base)`` for every class that has the tracker or another of ``classes`` among its bases (at any depth)."""
    forbidden = {ScopeTracker, *classes}
    return [f"{cls.__module__}.{cls.__qualname__}({base.__qualname__})" for cls in classes
            for base in cls.__mro__[1:] if base in forbidden]


def kind_modules() -> list[object]:
    return [importlib.import_module(f"{scope_kinds.__name__}.{path.stem}") for path in sorted(KINDS_DIR.glob("*.py"))
            if path.stem != "__init__"]


def test_no_scope_kind_inherits_from_the_tracker_or_another_kind() -> None:
    assert tower(kind_classes(kind_modules())) == []
    assert ScopeTracker not in ScopePlugin.__mro__, "the hooks object composes the tracker, it is not one"


def test_no_scope_plugin_module_reads_state_through_getattr_on_self() -> None:
    found = [line for name, source in scope_plugin_sources().items() for line in reflection_on_self(source, name)]
    assert found == []


def test_one_small_module_per_scope_kind_each_made_with_the_tracker() -> None:
    present = {path.stem for path in KINDS_DIR.glob("*.py")}
    assert set(KIND_MODULES) <= present
    too_long = {path.name: n for path in KINDS_DIR.glob("*.py")
                if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert too_long == {}
    for name in KIND_MODULES:
        module = importlib.import_module(f"{scope_kinds.__name__}.{name}")
        public = [cls for cls in kind_classes([module]) if not cls.__name__.startswith("_")]
        assert len(public) == 1, f"{name}: one scope kind class per module, found {public}"
        parameters = list(inspect.signature(public[0]).parameters)
        assert parameters[:1] == ["tracker"], f"{name}.{public[0].__name__} is not made with the tracker"


def test_the_plugin_hands_every_kind_the_one_tracker() -> None:
    plugin = ScopePlugin()
    kinds = [plugin.sessions, plugin.triggers, plugin.turns, plugin.llm_calls, plugin.tool_calls, plugin.skills,
             plugin.approvals, plugin.subagents]
    assert all(kind.tracker is plugin.tracker for kind in kinds)


def test_the_checks_catch_a_tower_and_getattr_on_self() -> None:
    """The checks themselves: a kind subclassing the tracker, one subclassing another kind, and a getattr on self
    are each named."""

    class Tower(ScopeTracker):
        pass

    class Kind:
        def __init__(self, tracker: ScopeTracker) -> None:
            self.tracker = tracker

    class Derived(Kind):
        pass

    Tower.__module__ = Kind.__module__ = Derived.__module__ = "fake"
    assert tower([Tower, Kind, Derived]) == ["fake." + Tower.__qualname__ + "(ScopeTracker)",
                                             "fake." + Derived.__qualname__ + f"({Kind.__qualname__})"]
    source = "class K:\n    def f(self):\n        return getattr(self, '_runs', None) or hasattr(self, 'x')\n"
    assert reflection_on_self(source, "k.py") == ["k.py:3 getattr(self, ...)", "k.py:3 hasattr(self, ...)"]
