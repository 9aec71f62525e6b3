"""Component kinds: resolution, lazy entry-point loading and config validation (spec 03 §15).

Resolution order (CFG-78): built-in kinds → an entry point named like the kind in the group
``hermes_pipeline.components`` → unknown (``unknown_component`` policy). Only entry points whose
names appear in the document are imported (CFG-80); listing kinds reads package metadata only.
"""

from __future__ import annotations

import copy
import importlib.metadata
import inspect
import math
import os
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib.machinery import PathFinder
from pathlib import Path
from typing import Any, Final, Literal

from ..contract.versions import COMPONENT_ENTRY_POINT_GROUP
from ..engine.plugins import ComponentContext, import_object, is_component_class
from .diagnostics import Diagnostics
from .errors import ConfigError
from .keypath import KeyPath, format_path
from .policy import ValidationContext

BUILTIN_KINDS: Final[Mapping[str, str]] = {
    "observability": "hermes_pipeline.components.observability:ObservabilityComponent",
    "request_defaults": "hermes_pipeline.components.request_defaults:RequestDefaultsComponent",
}
"""Kinds shipped (and published as entry points) by hermes_pipeline's own distribution (CFG-79)."""

OWN_DISTRIBUTION: Final = "hermes-pipeline"

INT64: Final = (-(2**63), 2**63 - 1)


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True, slots=True)
class ResolvedKind:
    """Where a kind's implementation comes from, and the loaded object."""

    kind: str
    origin: Literal["builtin", "entry_point", "dynamic"]
    target: str
    """``module:object`` reference (or the manifest path of a dynamic plugin)."""
    obj: Any
    distribution: str | None = None


def _entry_points(name: str | None = None) -> list[importlib.metadata.EntryPoint]:
    return [ep for ep in group_entry_points(COMPONENT_ENTRY_POINT_GROUP) if name is None or ep.name == name]


def group_entry_points(group: str) -> list[importlib.metadata.EntryPoint]:
    """``importlib.metadata.entry_points(group=group)``, parsing only the distributions that mention ``group``.

    The same distributions in the same order (the first of each name on ``sys.path``), but a
    distribution's ``entry_points.txt`` is parsed only when its text contains the group's name: with
    the couple of hundred distributions of a Hermes installation, parsing them all is most of the
    cost of a scan, paid during Hermes' start-up (CFG-79 needs the scan even for built-in kinds).
    The metadata directories are listed and read directly (:func:`_listed`); where ``sys.path`` holds
    something that reading does not cover, it walks ``importlib.metadata.distributions()``.
    """
    listed = _listed(group)
    if listed is not None:
        return listed
    found: list[importlib.metadata.EntryPoint] = []
    seen: set[object] = set()
    for dist in importlib.metadata.distributions():
        try:
            key = dist._normalized_name  # type: ignore[attr-defined]  # what entry_points() de-duplicates by
        except AttributeError:
            return list(importlib.metadata.entry_points(group=group))
        if key in seen:
            continue
        seen.add(key)
        text = dist.read_text("entry_points.txt")
        if text and group in text:
            found.extend(dist.entry_points.select(group=group))
    return found


def _listed(group: str) -> list[importlib.metadata.EntryPoint] | None:
    """:func:`group_entry_points` from the ``*.dist-info`` / ``*.egg-info`` directories of ``sys.path``, as the
    standard path finder lists them (same order, same de-duplication by normalised name), without making a
    distribution object per directory: about 4 times faster. ``None`` when another finder provides
    distributions, or ``sys.path`` holds a file (a zip) or an ``.egg`` directory."""
    if any(getattr(finder, "find_distributions", None) is not None and finder is not PathFinder
           for finder in sys.meta_path):
        return None
    found: list[importlib.metadata.EntryPoint] = []
    seen: set[str] = set()
    for entry in sys.path:
        root = entry or "."
        if root.lower().endswith(".egg"):
            return None
        try:
            children = os.listdir(root)
        except NotADirectoryError:
            return None
        except OSError:
            continue
        for child in children:
            low = child.lower()
            if not low.endswith((".dist-info", ".egg-info")):
                continue
            key = _NAME_SEPARATORS.sub("-", low.rpartition(".")[0].partition("-")[0]).replace("-", "_")
            if key in seen:
                continue
            seen.add(key)
            path = os.path.join(root, child)
            try:
                with open(os.path.join(path, "entry_points.txt"), encoding="utf-8") as handle:
                    text = handle.read()
            except OSError:
                continue
            if group in text:
                found.extend(importlib.metadata.PathDistribution(Path(path)).entry_points.select(group=group))
    return found


_NAME_SEPARATORS: Final = re.compile(r"[-_.]+")
"""PEP 503 name normalisation (with dashes as underscores), as ``importlib.metadata`` keys distributions."""


def _dist_name(ep: importlib.metadata.EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    return str(getattr(dist, "name", None) or "<unknown distribution>")


def available_kinds() -> dict[str, list[str]]:
    """Kind → publishing distributions, read from metadata without importing anything (CFG-80)."""
    kinds: dict[str, list[str]] = {kind: ["hermes_pipeline (built-in)"] for kind in BUILTIN_KINDS}
    for ep in _entry_points():
        if ep.name in BUILTIN_KINDS:
            continue
        kinds.setdefault(ep.name, []).append(_dist_name(ep))
    return dict(sorted(kinds.items()))


def resolve_kind(kind: str, diagnostics: Diagnostics, *, where: tuple[str | None, int | None] = (None, None),
                 key: str | None = None) -> ResolvedKind | None:
    """Resolve and load ``kind``; ``None`` when it is unknown.

    Raises :class:`ConfigError` when two distributions publish the name (CFG-81) or the
    implementation fails to import, whatever ``unknown_component`` says.
    """
    source, line = where
    matches = _entry_points(kind)
    if kind in BUILTIN_KINDS:
        for ep in matches:
            if _normalise(_dist_name(ep)) != OWN_DISTRIBUTION:
                diagnostics.warning("pipeline.kind_shadowed",
                                    f"entry point {kind!r} of distribution {_dist_name(ep)!r} uses the name of a "
                                    "built-in kind and is ignored", component=kind, source=source, line=line)
        target = BUILTIN_KINDS[kind]
        return ResolvedKind(kind, "builtin", target, _load(kind, target, source, line, key), "hermes_pipeline")
    if not matches:
        return None
    dists = sorted({_dist_name(ep) for ep in matches})
    if len(dists) > 1:
        raise ConfigError(f"kind {kind!r} is published by more than one distribution: {' and '.join(dists)}; "
                          "uninstall one of them", path=source, line=line, key=key, code="pipeline.kind_ambiguous")
    ep = matches[0]
    try:
        obj = ep.load()
    except Exception as exc:
        raise ConfigError(f"entry point {kind!r} ({ep.value}) of distribution {dists[0]!r} failed to load: "
                          f"{type(exc).__name__}: {exc}", path=source, line=line, key=key,
                          code="pipeline.component_load_failed") from None
    _check_object(kind, obj, source, line, key)
    return ResolvedKind(kind, "entry_point", ep.value, obj, dists[0])


def _load(kind: str, target: str, source: str | None, line: int | None, key: str | None) -> Any:
    try:
        obj = import_object(target)
    except Exception as exc:
        raise ConfigError(f"built-in kind {kind!r} failed to load: {exc}", path=source, line=line, key=key,
                          code="pipeline.component_load_failed") from None
    _check_object(kind, obj, source, line, key)
    return obj


def _check_object(kind: str, obj: Any, source: str | None, line: int | None, key: str | None) -> None:
    if inspect.isclass(obj):
        if not is_component_class(obj):
            raise ConfigError(f"component class for kind {kind!r} has no activate() method", path=source,
                              line=line, key=key, code="pipeline.component_invalid")
        if getattr(obj, "kind", None) != kind:
            raise ConfigError(f"component class for kind {kind!r} declares kind "
                              f"{getattr(obj, 'kind', None)!r}; the class attribute must equal the entry-point "
                              "name", path=source, line=line, key=key, code="pipeline.component_invalid")


def register_component(kind: str, register: Callable[..., Any]) -> type:
    """Wrap a ``register(ctx)`` function as a component class whose ``activate()`` calls it."""

    class RegisterComponent:
        """A ``register(ctx)`` plugin wrapped as a component (spec 03 CFG-28a)."""

        def __init__(self, ctx: ComponentContext) -> None:
            self.ctx = ctx

        def activate(self) -> None:
            register(self.ctx)

    RegisterComponent.kind = kind  # type: ignore[attr-defined]
    RegisterComponent.__qualname__ = f"RegisterComponent[{kind}]"
    return RegisterComponent


# --------------------------------------------------------------------------- config validation


def json_problems(value: Any, path: KeyPath = ()) -> list[tuple[KeyPath, str]]:
    """Values that are not JSON-compatible (CFG-14): null, dates, binary, non-finite floats, ..."""
    problems: list[tuple[KeyPath, str]] = []
    stack: list[tuple[Any, KeyPath]] = [(value, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, dict):
            stack.extend((v, (*where, k)) for k, v in reversed(list(item.items())))
        elif isinstance(item, list):
            stack.extend((v, (*where, i)) for i, v in reversed(list(enumerate(item))))
        elif item is None:
            problems.append((where, "null is not a supported value"))
        elif isinstance(item, bool) or isinstance(item, str):
            continue
        elif isinstance(item, int):
            if not INT64[0] <= item <= INT64[1]:
                problems.append((where, "integer out of the signed 64-bit range"))
        elif isinstance(item, float):
            if not math.isfinite(item):
                problems.append((where, "non-finite numbers are not supported"))
        else:
            problems.append((where, f"values of type {type(item).__name__} are not supported; "
                                    "use a string, number, boolean, array or table"))
    return problems


def apply_drops(config: dict[str, Any], drops: list[KeyPath]) -> list[tuple[KeyPath, int]]:
    """Remove ``drops`` from ``config`` (deepest, highest index first); returns removed list items."""
    removed: list[tuple[KeyPath, int]] = []
    unique = {p for p in drops if p}
    for path in sorted(unique, key=lambda p: tuple((0, s) if isinstance(s, int) else (1, s) for s in p),
                       reverse=True):
        if any(path[:n] in unique for n in range(1, len(path))):
            continue
        parent: Any = config
        for seg in path[:-1]:
            try:
                parent = parent[seg]
            except (KeyError, IndexError, TypeError):
                parent = None
                break
        last = path[-1]
        if isinstance(parent, dict) and isinstance(last, str) and last in parent:
            del parent[last]
        elif isinstance(parent, list) and isinstance(last, int) and 0 <= last < len(parent):
            del parent[last]
            removed.append((path[:-1], last))
    return removed


def validate_config(obj: Any, config: dict[str, Any],
                    vctx: ValidationContext) -> tuple[dict[str, Any], list[tuple[KeyPath, int]]]:
    """Validate one component's ``config``; return the cleaned copy the component receives and
    the list items removed from it (in removal order).

    Applies CFG-14 (JSON-compatible values), then ``config_schema`` (if the class has one and
    jsonschema is installed) and ``validate_config(config, vctx)``; dropped keys are removed.
    """
    cleaned = copy.deepcopy(config)
    for path, message in json_problems(cleaned):
        vctx.unsupported_value(path, message)
    removed = apply_drops(cleaned, vctx.drops)
    vctx.drops.clear()
    schema = getattr(obj, "config_schema", None) if inspect.isclass(obj) else None
    if isinstance(schema, Mapping):
        check_schema(schema, cleaned, vctx)
    hook = getattr(obj, "validate_config", None) if inspect.isclass(obj) else None
    if callable(hook):
        try:
            hook(copy.deepcopy(cleaned), vctx)
        except Exception as exc:
            vctx.error((), f"validate_config() raised {type(exc).__name__}: {exc}", code="pipeline.component_invalid")
    removed += apply_drops(cleaned, vctx.drops)
    return cleaned, removed


def check_schema(schema: Mapping[str, Any], config: Any, vctx: ValidationContext) -> None:
    """Report JSON Schema violations: ``additionalProperties`` → unknown field, else unsupported value."""
    try:
        import jsonschema  # type: ignore[import-untyped,unused-ignore]
    except ImportError:  # pragma: no cover - jsonschema ships with the test environment
        vctx.warning((), "config_schema is declared but jsonschema is not installed; schema not checked",
                     code="pipeline.schema_unchecked")
        return
    try:
        validator_cls = jsonschema.validators.validator_for(schema)
        validator = validator_cls(schema)
        errors = list(validator.iter_errors(config))
    except Exception as exc:
        vctx.error((), f"config_schema is not a valid JSON Schema ({type(exc).__name__})",
                   code="pipeline.component_invalid")
        return
    for error in errors:
        path: KeyPath = tuple(error.absolute_path)
        if error.validator == "additionalProperties" and isinstance(error.instance, dict):
            allowed = set(error.schema.get("properties", {}))
            for key in error.instance:
                if key not in allowed:
                    vctx.unknown_field((*path, key))
        else:
            vctx.unsupported_value(path, f"does not satisfy the schema keyword {error.validator!r}"
                                         + (f" at {format_path(path)}" if path else ""))
